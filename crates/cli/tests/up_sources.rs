//! `tidegate up` on a repository in the shape of flux2-monitoring-example and
//! flux2-multi-tenancy: their OCIRepository and HelmRepository objects (v1 and v1beta2, as
//! those repositories write them) with URLs pointing at a loopback registry (Debian's
//! `docker-registry`, charts pushed by the real helm) and a loopback chart server (index by
//! `helm repo index`), a registry behind basic auth whose Secret `tidegate create secret oci
//! --export` made, a Kustomization from an OCIRepository that follows new tags, and the
//! monitoring example's HelmReleases (one from the OCIRepository by `chartRef`, one from a
//! HelmRepository by its chart template).

#[path = "../../controllers/tests/chart_support/mod.rs"]
mod chart_support;
#[path = "../../source/tests/support/mod.rs"]
mod git_support;
#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;
mod up_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use chart_support::helm;
use registry_support::{Mode, Registry};
use serde_json::Value;
use up_support::*;

/// Packages a small chart `name`-`version` into `out` with the real helm; returns the file.
fn package(out: &Path, name: &str, version: &str) -> PathBuf {
    let src = tempfile::tempdir().unwrap();
    let chart = src.path().join(name);
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: {version}\n"),
    )
    .unwrap();
    std::fs::write(chart.join("values.yaml"), "enabled: true\n").unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
    )
    .unwrap();
    run(Command::new(helm())
        .args(["package", chart.to_str().unwrap(), "-d"])
        .arg(out));
    out.join(format!("{name}-{version}.tgz"))
}

fn push_manifests(reg: &Registry, tag: &str, message: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("podinfo.yaml"),
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: podinfo\n  namespace: apps\ndata:\n  message: {message}\n"
        ),
    )
    .unwrap();
    run(Command::new(env!("CARGO_BIN_EXE_tidegate")).args([
        "push",
        "artifact",
        &reg.url(&format!("apps/podinfo:{tag}")),
        "--path",
        dir.path().to_str().unwrap(),
        "--source",
        "https://github.com/example/apps",
        "--revision",
        &format!("{tag}@sha1:0123456789abcdef0123456789abcdef01234567"),
    ]));
}

/// A plain HTTP/1.0 GET of `url`; the body of a 200 answer.
fn http_get(url: &str) -> Vec<u8> {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(stream, "GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("headers end");
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    assert!(
        head.starts_with("HTTP/1.1 200") || head.starts_with("HTTP/1.0 200"),
        "{head}"
    );
    answer[split + 4..].to_vec()
}

fn is_ready(o: &Value) -> bool {
    ready(o).is_some_and(|(s, _)| s == "True")
}

fn get(kc: &Path, what: &str, ns: &str) -> Value {
    json(kc, &["-n", ns, "get", what])
}

#[test]
fn up_gets_oci_and_helm_sources_ready_and_follows_oci_tags() {
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().unwrap();
    // Charts in the registry, pushed by helm (kube-prometheus-stack as flux2-monitoring-example
    // reaches it, kyverno through an OCI HelmRepository).
    let packages = work.path().join("packages");
    for version in ["66.2.1", "66.3.0"] {
        let file = package(&packages, "kube-prometheus-stack", version);
        run(Command::new(helm())
            .arg("push")
            .arg(&file)
            .args([&reg.url("prometheus-community/charts"), "--plain-http"]));
    }
    // kyverno's registry wants credentials: helm logs in to push; the cluster gets them from a
    // Secret made by `tidegate create secret oci --export`, committed to the repository.
    let private = Registry::start(Mode::Htpasswd("fleet", "pa55word"));
    let helm_config = work.path().join("registry.json");
    run(Command::new(helm())
        .args(["registry", "login", &private.host, "--username", "fleet"])
        .args(["--password", "pa55word", "--plain-http"])
        .env("HELM_REGISTRY_CONFIG", &helm_config));
    let kyverno = package(&packages, "kyverno", "3.2.6");
    run(Command::new(helm())
        .arg("push")
        .arg(&kyverno)
        .args([&private.url("kyverno/charts"), "--plain-http"])
        .env("HELM_REGISTRY_CONFIG", &helm_config));
    let kyverno_auth = run(Command::new(env!("CARGO_BIN_EXE_tidegate")).args([
        "create",
        "secret",
        "oci",
        "kyverno-auth",
        "-n",
        "kyverno",
        "--url",
        &private.host,
        "--username",
        "fleet",
        "--password",
        "pa55word",
        "--export",
    ]));
    // A static chart repository for loki-stack.
    let repo_dir = work.path().join("grafana");
    std::fs::create_dir_all(&repo_dir).unwrap();
    package(&repo_dir, "loki-stack", "2.10.2");
    package(&repo_dir, "loki-stack", "2.9.11");
    run(Command::new(helm()).args(["repo", "index", repo_dir.to_str().unwrap()]));
    let charts_url = serve(repo_dir);
    push_manifests(&reg, "1.0.0", "hello");

    let repo = git_support::Repo::new();
    repo.write(
        "clusters/test/infrastructure.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: infra-controllers\n  namespace: flux-system\nspec:\n  interval: 1h\n  path: ./infrastructure/controllers\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
    );
    repo.write(
        "clusters/test/apps.yaml",
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: OCIRepository\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: {}\n  ref:\n    semver: \">=1.0.0\"\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 1h\n  path: ./\n  prune: true\n  sourceRef:\n    kind: OCIRepository\n    name: apps\n",
            reg.url("apps/podinfo")
        ),
    );
    repo.write(
        "infrastructure/controllers/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- kube-prometheus-stack.yaml\n- loki-stack.yaml\n- kyverno.yaml\n- kyverno-auth.yaml\n",
    );
    repo.write(
        "infrastructure/controllers/kyverno-auth.yaml",
        &kyverno_auth,
    );
    repo.write(
        "infrastructure/controllers/kube-prometheus-stack.yaml",
        &format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: monitoring\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: kube-prometheus-stack\n  namespace: monitoring\nspec:\n  interval: 24h\n  url: {}\n  layerSelector:\n    mediaType: \"application/vnd.cncf.helm.chart.content.v1.tar+gzip\"\n    operation: copy\n  ref:\n    semver: \">=66.0.0\"\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: kube-prometheus-stack\n  namespace: monitoring\nspec:\n  interval: 1h\n  chartRef:\n    kind: OCIRepository\n    name: kube-prometheus-stack\n  install:\n    crds: Create\n  upgrade:\n    crds: CreateReplace\n  driftDetection:\n    mode: disabled\n  values:\n    enabled: true\n",
            reg.url("prometheus-community/charts/kube-prometheus-stack")
        ),
    );
    repo.write(
        "infrastructure/controllers/loki-stack.yaml",
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: grafana-charts\n  namespace: monitoring\nspec:\n  interval: 2h\n  url: {charts_url}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: loki-stack\n  namespace: monitoring\nspec:\n  interval: 1h\n  chart:\n    spec:\n      version: \"2.x\"\n      chart: loki-stack\n      sourceRef:\n        kind: HelmRepository\n        name: grafana-charts\n      interval: 1h\n  values:\n    grafana:\n      enabled: false\n"
        ),
    );
    repo.write(
        "infrastructure/controllers/kyverno.yaml",
        &format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kyverno\n---\napiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: HelmRepository\nmetadata:\n  name: kyverno\n  namespace: kyverno\nspec:\n  interval: 24h\n  type: oci\n  insecure: true\n  secretRef:\n    name: kyverno-auth\n  url: {}\n---\napiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: HelmChart\nmetadata:\n  name: kyverno-kyverno\n  namespace: kyverno\nspec:\n  interval: 1h\n  chart: kyverno\n  version: \"3.x\"\n  sourceRef:\n    kind: HelmRepository\n    name: kyverno\n",
            private.url("kyverno/charts")
        ),
    );
    repo.commit("fleet");

    let data = work.path().join("data");
    let mut up = up(
        &data,
        git_support::free_port(),
        &[
            "--git",
            repo.bare().to_str().unwrap(),
            "--path",
            "clusters/test",
        ],
        false,
    );
    let kc = up.kubeconfig.clone();
    wait_until("every Kustomization to be ready", || {
        let list = json(&kc, &["get", "kustomizations", "-A"]);
        let items = list["items"].as_array().cloned().unwrap_or_default();
        items.len() == 3 && items.iter().all(is_ready)
    });
    wait_until("every source to be ready", || {
        let list = json(&kc, &["get", "ocirepositories,helmcharts", "-A"]);
        let items = list["items"].as_array().cloned().unwrap_or_default();
        items.len() == 4 && items.iter().all(is_ready)
    });

    // The chart as an OCIRepository artifact (layer copied): the package as pushed.
    let kps = get(&kc, "ocirepository/kube-prometheus-stack", "monitoring");
    let artifact = &kps["status"]["artifact"];
    assert!(
        artifact["revision"]
            .as_str()
            .unwrap()
            .starts_with("66.3.0@sha256:"),
        "{artifact}"
    );
    assert_eq!(
        http_get(artifact["url"].as_str().unwrap()),
        std::fs::read(packages.join("kube-prometheus-stack-66.3.0.tgz")).unwrap()
    );
    // The HelmReleases as the monitoring example writes them: kube-prometheus-stack from the
    // OCIRepository (`chartRef`; the chart version carries the digest, as Flux's), loki-stack
    // from a HelmChart its template made.
    wait_until("both HelmReleases to be ready", || {
        let list = json(&kc, &["get", "helmreleases", "-A"]);
        let items = list["items"].as_array().cloned().unwrap_or_default();
        items.len() == 2 && items.iter().all(is_ready)
    });
    let kps_hr = get(&kc, "helmrelease/kube-prometheus-stack", "monitoring");
    let digest = artifact["revision"]
        .as_str()
        .unwrap()
        .split('@')
        .nth(1)
        .unwrap()
        .to_string();
    assert_eq!(
        kps_hr["status"]["lastAttemptedRevisionDigest"],
        digest.as_str()
    );
    let hex = digest.trim_start_matches("sha256:");
    assert_eq!(
        kps_hr["status"]["history"][0]["chartVersion"],
        format!("66.3.0+{}", &hex[..12])
    );
    assert_eq!(kps_hr["status"]["history"][0]["ociDigest"], digest.as_str());
    let out = run(Command::new(helm())
        .args(["list", "-n", "monitoring", "-o", "json", "--kubeconfig"])
        .arg(&kc));
    let releases: Value = serde_json::from_str(&out).unwrap();
    let mut charts: Vec<String> = releases
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["name"].as_str().unwrap(),
                r["chart"].as_str().unwrap()
            )
        })
        .collect();
    charts.sort();
    assert_eq!(
        charts,
        [
            format!(
                "kube-prometheus-stack kube-prometheus-stack-66.3.0+{}",
                &hex[..12]
            ),
            "loki-stack loki-stack-2.10.2".to_string(),
        ]
    );
    get(&kc, "configmap/kube-prometheus-stack", "monitoring");
    get(&kc, "configmap/loki-stack", "monitoring");
    let loki = get(&kc, "helmchart/monitoring-loki-stack", "monitoring");
    assert_eq!(
        loki["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"],
        "loki-stack"
    );
    assert_eq!(
        ready(&loki).unwrap().1,
        "pulled 'loki-stack' chart with version '2.10.2'"
    );
    let grafana = get(&kc, "helmrepository/grafana-charts", "monitoring");
    assert!(is_ready(&grafana), "{grafana}");
    let ky = get(&kc, "helmchart/kyverno-kyverno", "kyverno");
    assert_eq!(
        ready(&ky).unwrap().1,
        "pulled 'kyverno' chart with version '3.2.6'"
    );
    // An OCI HelmRepository is static, as in Flux: no artifact, no conditions.
    let oci_repo = get(&kc, "helmrepository/kyverno", "kyverno");
    assert!(oci_repo["status"]["conditions"].is_null(), "{oci_repo}");

    // The Kustomization from the OCIRepository applied the artifact.
    let cm = get(&kc, "configmap/podinfo", "apps");
    assert_eq!(cm["data"]["message"], "hello");
    let (code, table, stderr) = tidegate(&kc, &["get", "sources", "all", "-A"]);
    assert_eq!(code, 0, "{stderr}");
    for name in [
        "ocirepository/apps",
        "ocirepository/kube-prometheus-stack",
        "helmrepository/grafana-charts",
        "helmchart/monitoring-loki-stack",
        "helmchart/kyverno-kyverno",
    ] {
        assert!(table.contains(name), "{name} in:\n{table}");
    }

    // A new tag in the range moves the revision and re-applies.
    push_manifests(&reg, "1.1.0", "updated");
    let (code, _, stderr) = tidegate(
        &kc,
        &["reconcile", "source", "oci", "apps", "-n", "flux-system"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("fetched revision 1.1.0@sha256:"),
        "{stderr}"
    );
    wait_until("the new tag to be applied", || {
        get(&kc, "configmap/podinfo", "apps")["data"]["message"] == "updated"
    });
    let ks = get(&kc, "kustomization/apps", "flux-system");
    assert!(
        ks["status"]["lastAppliedRevision"]
            .as_str()
            .unwrap()
            .starts_with("1.1.0@sha256:"),
        "{}",
        ks["status"]
    );
    interrupt(&mut up);
}
