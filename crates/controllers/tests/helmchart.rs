//! The HelmChart controller building charts from an OCI registry (Debian's `docker-registry`,
//! charts pushed by the real helm v4.1.4) and from a GitRepository (a real git daemon), with
//! values files, version metadata and dependencies, checked by loading the stored artifacts
//! back with the real helm.

mod chart_support;
#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;
mod source_support;

use std::path::Path;
use std::process::Command;

use chart_support::*;
use registry_support::{Mode, Registry};
use source_support::git_support::{GitDaemon, Repo};
use source_support::*;

/// Writes a chart directory `dir/<name>` with a values file, a second values file
/// (`values-prod.yaml`) and a ConfigMap template showing both.
fn write_chart(dir: &Path, name: &str, version: &str, extra_chart_yaml: &str) {
    let chart = dir.join(name);
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: {version}\ndescription: test chart\n{extra_chart_yaml}"),
    )
    .unwrap();
    std::fs::write(
        chart.join("values.yaml"),
        "# defaults\nreplicas: 1\nimage:\n  tag: stable\n  pullPolicy: IfNotPresent\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("values-prod.yaml"),
        "replicas: 3\nimage:\n  tag: v2\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-{{{{ .Release.Name }}}}\ndata:\n  replicas: {{{{ .Values.replicas | quote }}}}\n  tag: {{{{ .Values.image.tag }}}}\n  policy: {{{{ .Values.image.pullPolicy }}}}\n"
        ),
    )
    .unwrap();
}

/// Writes chart `name`-`version` (see [`write_chart`]) and packages it into `out` with the
/// real helm; returns the package.
fn package_chart(out: &Path, name: &str, version: &str) -> std::path::PathBuf {
    let src = tempfile::tempdir().unwrap();
    write_chart(src.path(), name, version, "");
    run_helm(&[
        "package",
        src.path().join(name).to_str().unwrap(),
        "-d",
        out.to_str().unwrap(),
    ]);
    out.join(format!("{name}-{version}.tgz"))
}

fn helm_out(args: &[&str]) -> String {
    let out = Command::new(helm()).args(args).output().expect("helm runs");
    assert!(
        out.status.success(),
        "helm {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Downloads the artifact of `o` into `dir` and returns its path.
async fn artifact_file(o: &serde_json::Value, dir: &Path) -> std::path::PathBuf {
    let url = o["status"]["artifact"]["url"].as_str().unwrap();
    let (code, body) = http_get(url).await;
    assert_eq!(code, 200, "{url}");
    let path = dir.join(url.rsplit('/').next().unwrap());
    std::fs::write(&path, body).unwrap();
    path
}

fn apply(env: &Env, yaml: &str) {
    env.server.ok_stdin(&["apply", "-f", "-"], yaml);
}

fn message(o: &serde_json::Value) -> String {
    condition(o, "Ready").unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string()
}

fn stalled(o: &serde_json::Value) -> bool {
    condition(o, "Stalled").is_some_and(|c| c["status"] == "True")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charts_from_an_oci_registry() {
    let env = start().await;
    let reg = Registry::start(Mode::Htpasswd("fleet", "pa55word"));
    let work = tempfile::tempdir().unwrap();
    let helm_config = work.path().join("registry.json");
    let with_config = |args: &[&str]| {
        let out = Command::new(helm())
            .args(args)
            .env("HELM_REGISTRY_CONFIG", &helm_config)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "helm {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    with_config(&[
        "registry",
        "login",
        &reg.host,
        "--username",
        "fleet",
        "--password",
        "pa55word",
        "--plain-http",
    ]);
    let packages = work.path().join("packages");
    for version in ["1.0.0", "1.1.0", "2.0.0-rc.1", "1.2.0+build.7"] {
        let package = package_chart(&packages, "app", version);
        with_config(&[
            "push",
            package.to_str().unwrap(),
            &reg.url("charts"),
            "--plain-http",
        ]);
    }
    apply(
        &env,
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: default\nstringData:\n  username: fleet\n  password: pa55word\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: wrong\n  namespace: default\nstringData:\n  username: fleet\n  password: nope\n",
    );
    apply(
        &env,
        &helm_repository(
            "oci-charts",
            &reg.url("charts/"),
            "  type: oci\n  secretRef:\n    name: creds\n",
        ),
    );
    // Tags are chart versions (`_` read as `+`); Flux's selection over them.
    for (name, version, want) in [
        ("latest", "*", "1.2.0+build.7"),
        ("minor", "1.1.x", "1.1.0"),
        ("exact", "1.0.0", "1.0.0"),
        ("pre", ">=2.0.0-0", "2.0.0-rc.1"),
    ] {
        apply(&env, &helm_chart(name, "app", "oci-charts", version));
        let o = wait_for(&env, &format!("helmchart/{name}"), "Ready", ready).await;
        let c = condition(&o, "Ready").unwrap();
        assert_eq!(c["reason"], "ChartPullSucceeded", "{name}: {c}");
        assert_eq!(
            c["message"],
            format!("pulled 'app' chart with version '{want}'")
        );
        assert_eq!(o["status"]["artifact"]["revision"], want);
        let file = artifact_file(&o, work.path()).await;
        assert!(file.ends_with(format!("app-{want}.tgz")), "{file:?}");
        assert_eq!(
            std::fs::read(&file).unwrap(),
            std::fs::read(packages.join(format!("app-{want}.tgz"))).unwrap(),
            "{name}: stored as pushed"
        );
    }

    // Values files inside the chart: merged, packaged, the generation as version metadata.
    apply(
        &env,
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n  name: prod\n  namespace: default\nspec:\n  interval: 10m\n  chart: app\n  version: 1.1.0\n  sourceRef:\n    kind: HelmRepository\n    name: oci-charts\n  valuesFiles:\n  - values.yaml\n  - values-prod.yaml\n",
    );
    let o = wait_for(&env, "helmchart/prod", "Ready", ready).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "ChartPackageSucceeded", "{c}");
    assert_eq!(
        c["message"],
        "packaged 'app' chart with version '1.1.0+1' and merged values files [values.yaml values-prod.yaml]"
    );
    let file = artifact_file(&o, work.path()).await;
    let values = helm_out(&["show", "values", file.to_str().unwrap()]);
    assert_eq!(
        values, "image:\n  pullPolicy: IfNotPresent\n  tag: v2\nreplicas: 3\n\n",
        "helm reads the merged values (and prints a blank line after them)"
    );
    let chart = helm_out(&["show", "chart", file.to_str().unwrap()]);
    assert!(chart.contains("version: 1.1.0+1\n"), "{chart}");
    let rendered = helm_out(&["template", "r", file.to_str().unwrap()]);
    assert!(rendered.contains("replicas: \"3\""), "{rendered}");
    assert!(o["status"]["observedValuesFiles"].is_null(), "{o}");

    // Missing values files: ignored when asked (and recorded), else a stalling build error.
    apply(
        &env,
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n  name: lenient\n  namespace: default\nspec:\n  interval: 10m\n  chart: app\n  version: 1.1.0\n  sourceRef:\n    kind: HelmRepository\n    name: oci-charts\n  valuesFiles:\n  - values-prod.yaml\n  - values-missing.yaml\n  ignoreMissingValuesFiles: true\n",
    );
    let o = wait_for(&env, "helmchart/lenient", "Ready", ready).await;
    assert_eq!(
        o["status"]["observedValuesFiles"],
        serde_json::json!(["values-prod.yaml"])
    );
    apply(
        &env,
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n  name: strict\n  namespace: default\nspec:\n  interval: 10m\n  chart: app\n  version: 1.1.0\n  sourceRef:\n    kind: HelmRepository\n    name: oci-charts\n  valuesFiles:\n  - values-missing.yaml\n",
    );
    let o = wait_for(&env, "helmchart/strict", "Stalled", stalled).await;
    assert_eq!(
        condition(&o, "BuildFailed").unwrap()["reason"],
        "ValuesFilesError"
    );
    assert_eq!(
        message(&o),
        "values files merge error: failed to merge chart values: no values file found at path 'values-missing.yaml'"
    );
    assert!(o["status"]["artifact"].is_null(), "nothing stored: {o}");

    // Versions that are not there.
    apply(&env, &helm_chart("none", "app", "oci-charts", "9.x"));
    let o = wait_for(&env, "helmchart/none", "Ready=False", ready_false).await;
    assert_eq!(condition(&o, "Ready").unwrap()["reason"], "ChartPullError");
    assert_eq!(
        message(&o),
        "chart pull error: failed to get chart version for remote reference: could not locate a version matching provided version string 9.x"
    );
    apply(&env, &helm_chart("gone", "app", "oci-charts", "9.9.9"));
    let o = wait_for(&env, "helmchart/gone", "Ready=False", ready_false).await;
    let m = message(&o);
    assert!(
        m.starts_with(&format!(
            "chart pull error: failed to download chart for remote reference: failed to get '{}/app:9.9.9': ",
            reg.url("charts")
        )),
        "{m}"
    );
    assert!(!m.contains("pa55word"), "{m}");

    // Not a chart: a Flux artifact in the same registry.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cm.yaml"), "kind: ConfigMap\n").unwrap();
    let ignore = tidegate_source::ignore::SourceIgnore::from_patterns(
        &tidegate_source::ignore::exclude_oci(),
    );
    let (layer, _) = tidegate_source::oci::layer::build(dir.path(), &ignore, Vec::new()).unwrap();
    let (repository, _) =
        tidegate_source::oci::parse_artifact_url(&reg.url("charts/manifests")).unwrap();
    let registry = tidegate_source::oci::Registry::connect(
        &repository,
        &tidegate_source::oci::Options {
            credentials: tidegate_source::oci::Credentials::Basic {
                username: "fleet".into(),
                password: "pa55word".into(),
            },
            ..Default::default()
        },
    )
    .await
    .unwrap();
    registry
        .push_artifact(
            "1.0.0",
            layer.into(),
            tidegate_source::oci::registry::FLUX_CONTENT,
            &Default::default(),
        )
        .await
        .unwrap();
    apply(
        &env,
        &helm_chart("flux-artifact", "manifests", "oci-charts", "1.0.0"),
    );
    let o = wait_for(&env, "helmchart/flux-artifact", "Ready=False", ready_false).await;
    assert!(
        message(&o).ends_with(
            "could not load config with mediatype application/vnd.cncf.helm.config.v1+json"
        ),
        "{o}"
    );

    // Wrong credentials.
    apply(
        &env,
        &helm_repository(
            "oci-wrong",
            &reg.url("charts"),
            "  type: oci\n  secretRef:\n    name: wrong\n",
        ),
    );
    apply(&env, &helm_chart("denied", "app", "oci-wrong", "1.x"));
    let o = wait_for(&env, "helmchart/denied", "Ready=False", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "AuthenticationFailed", "{c}");
    assert!(
        message(&o).starts_with("failed to authenticate with the Helm repository: "),
        "{o}"
    );
    assert!(!message(&o).contains("nope"), "{o}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charts_from_a_git_repository() {
    let env = start().await;
    // A chart repository (basic auth) for a remote dependency, declared as a HelmRepository.
    let charts = tempfile::tempdir().unwrap();
    let server = serve(charts.path().to_path_buf(), Some(("fleet", "pa55word"))).await;
    package(&server.dir, "podinfo", "6.5.0");
    package(&server.dir, "podinfo", "6.5.3");
    run_helm(&["repo", "index", server.dir.to_str().unwrap()]);
    apply(
        &env,
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: default\nstringData:\n  username: fleet\n  password: pa55word\n",
    );
    apply(
        &env,
        &helm_repository("podinfo", &server.url, "  secretRef:\n    name: creds\n"),
    );

    let repo = Repo::new();
    let work = repo.work();
    write_chart(
        &work.join("charts"),
        "app",
        "0.1.0",
        &format!(
            "dependencies:\n- name: lib\n  version: ~0.2.0\n  repository: file://../lib\n- name: podinfo\n  version: 6.5.x\n  repository: {}\n",
            server.url
        ),
    );
    write_chart(&work.join("charts"), "lib", "0.2.1", "");
    write_chart(
        &work.join("charts"),
        "aliased",
        "1.0.0",
        "dependencies:\n- name: lib\n  version: 0.2.x\n  repository: file://../lib\n  alias: shared\n",
    );
    repo.write("values/prod.yaml", "replicas: 5\n");
    repo.write("charts/broken/values.yaml", "a: 1\n");
    let first = repo.commit("charts");
    let daemon = GitDaemon::start(&repo.base);
    apply(
        &env,
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: fleet\n  namespace: default\nspec:\n  interval: 10m\n  url: {}\n  ref:\n    branch: main\n",
            daemon.url("repo.git")
        ),
    );
    let git_chart = |name: &str, chart: &str, extra: &str| {
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 10m\n  chart: {chart}\n  sourceRef:\n    kind: GitRepository\n    name: fleet\n{extra}"
        )
    };

    // A chart directory is packaged, its dependencies fetched (file:// and repository).
    apply(&env, &git_chart("plain", "./charts/app", ""));
    let o = wait_for(&env, "helmchart/plain", "Ready", ready).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "ChartPackageSucceeded", "{c}");
    assert_eq!(c["message"], "packaged 'app' chart with version '0.1.0'");
    assert_eq!(
        o["status"]["observedSourceArtifactRevision"],
        format!("main@sha1:{first}")
    );
    let dir = tempfile::tempdir().unwrap();
    let file = artifact_file(&o, dir.path()).await;
    let rendered = helm_out(&["template", "r", file.to_str().unwrap()]);
    for want in [
        "# Source: app/templates/cm.yaml",
        "# Source: app/charts/lib/templates/cm.yaml",
        "# Source: app/charts/podinfo/templates/cm.yaml",
    ] {
        assert!(rendered.contains(want), "{want} in:\n{rendered}");
    }
    // An aliased dependency is packaged under its alias, as Flux packages it.
    apply(&env, &git_chart("aliased", "charts/aliased", ""));
    let o = wait_for(&env, "helmchart/aliased", "Ready", ready).await;
    let file = artifact_file(&o, dir.path()).await;
    let chart = tidegate_helm::chart::load_archive(&std::fs::read(&file).unwrap()).unwrap();
    let names: Vec<&str> = chart.dependencies.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["shared"]);

    // Revision strategy and values files: version metadata `<sha12>.<generation>`.
    apply(
        &env,
        &git_chart(
            "revision",
            "charts/app",
            "  reconcileStrategy: Revision\n  valuesFiles:\n  - charts/app/values.yaml\n  - values/prod.yaml\n",
        ),
    );
    let o = wait_for(&env, "helmchart/revision", "Ready", ready).await;
    let want = format!("0.1.0+{}.1", &first[..12]);
    assert_eq!(
        message(&o),
        format!(
            "packaged 'app' chart with version '{want}' and merged values files [charts/app/values.yaml values/prod.yaml]"
        )
    );
    assert_eq!(o["status"]["artifact"]["revision"], want);
    let file = artifact_file(&o, dir.path()).await;
    let rendered = helm_out(&["template", "r", file.to_str().unwrap()]);
    assert!(rendered.contains("replicas: \"5\""), "{rendered}");

    // A new commit moves the revision chart (the GitRepository's new artifact wakes it); the
    // ChartVersion chart keeps its artifact.
    repo.write("values/prod.yaml", "replicas: 7\n");
    let second = repo.commit("more replicas");
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "gitrepository/fleet",
        "reconcile.fluxcd.io/requestedAt=now",
    ]);
    let want2 = format!("0.1.0+{}.1", &second[..12]);
    let o = wait_for(&env, "helmchart/revision", "new revision", |o| {
        o["status"]["artifact"]["revision"] == want2.as_str()
    })
    .await;
    let file = artifact_file(&o, dir.path()).await;
    assert!(
        helm_out(&["template", "r", file.to_str().unwrap()]).contains("replicas: \"7\""),
        "rebuilt from the new commit"
    );
    let plain = wait_for(&env, "helmchart/plain", "new source revision seen", |o| {
        o["status"]["observedSourceArtifactRevision"] == format!("main@sha1:{second}").as_str()
    })
    .await;
    assert_eq!(plain["status"]["artifact"]["revision"], "0.1.0");

    // Bad input stalls with the path named; nothing is stored.
    apply(&env, &git_chart("broken", "charts/broken", ""));
    let o = wait_for(&env, "helmchart/broken", "Stalled", stalled).await;
    assert_eq!(
        condition(&o, "FetchFailed").unwrap()["reason"],
        "InvalidChartReference"
    );
    assert_eq!(
        message(&o),
        "invalid chart reference: open charts/broken/Chart.yaml: no such file or directory"
    );
    assert!(o["status"]["artifact"].is_null());
    apply(
        &env,
        &git_chart(
            "no-values",
            "charts/app",
            "  valuesFiles:\n  - values/missing.yaml\n",
        ),
    );
    let o = wait_for(&env, "helmchart/no-values", "Stalled", stalled).await;
    assert_eq!(
        message(&o),
        "values files merge error: no values file found at path '/values/missing.yaml' (reference 'values/missing.yaml')"
    );
    assert!(o["status"]["artifact"].is_null());
    apply(&env, &git_chart("nowhere", "charts/nothing", ""));
    let o = wait_for(&env, "helmchart/nowhere", "Stalled", stalled).await;
    assert_eq!(
        message(&o),
        "invalid chart reference: stat charts/nothing: no such file or directory"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charts_from_a_registry_behind_tls() {
    let env = start().await;
    let reg = Registry::start(Mode::Tls);
    let work = tempfile::tempdir().unwrap();
    let ca_file = reg.cert_dir.as_ref().unwrap().join("ca.crt");
    let package = package_chart(work.path(), "app", "2.3.4");
    run_helm(&[
        "push",
        package.to_str().unwrap(),
        &reg.url("charts"),
        "--ca-file",
        ca_file.to_str().unwrap(),
    ]);
    let ca = reg.ca_pem.as_ref().unwrap();
    let indented: String = ca.lines().map(|l| format!("    {l}\n")).collect();
    apply(
        &env,
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ca\n  namespace: default\nstringData:\n  ca.crt: |\n{indented}"
        ),
    );
    apply(
        &env,
        &helm_repository(
            "trusted",
            &reg.url("charts"),
            "  type: oci\n  certSecretRef:\n    name: ca\n",
        ),
    );
    apply(&env, &helm_chart("trusted", "app", "trusted", "2.x"));
    let o = wait_for(&env, "helmchart/trusted", "Ready", ready).await;
    assert_eq!(message(&o), "pulled 'app' chart with version '2.3.4'");
    let file = artifact_file(&o, work.path()).await;
    assert_eq!(
        std::fs::read(file).unwrap(),
        std::fs::read(&package).unwrap()
    );
    // Without the CA the registry's certificate is not trusted: an authentication failure.
    apply(
        &env,
        &helm_repository("untrusted", &reg.url("charts"), "  type: oci\n"),
    );
    apply(&env, &helm_chart("untrusted", "app", "untrusted", "2.3.4"));
    let o = wait_for(&env, "helmchart/untrusted", "Ready=False", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "AuthenticationFailed", "{c}");
    assert!(
        message(&o).starts_with("failed to authenticate with the Helm repository: "),
        "{o}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charts_from_a_registry_requiring_client_certificates() {
    let env = start().await;
    let reg = Registry::start(Mode::MutualTls);
    let work = tempfile::tempdir().unwrap();
    let certs = reg.cert_dir.as_ref().unwrap();
    let (cert, key) = reg.client.clone().unwrap();
    std::fs::write(work.path().join("client.crt"), &cert).unwrap();
    std::fs::write(work.path().join("client.key"), &key).unwrap();
    let package = package_chart(work.path(), "app", "3.1.0");
    // The real helm pushes with the same client certificate.
    run_helm(&[
        "push",
        package.to_str().unwrap(),
        &reg.url("charts"),
        "--ca-file",
        certs.join("ca.crt").to_str().unwrap(),
        "--cert-file",
        work.path().join("client.crt").to_str().unwrap(),
        "--key-file",
        work.path().join("client.key").to_str().unwrap(),
    ]);
    apply(
        &env,
        &pem_secret(
            "mtls",
            &[
                ("ca.crt", reg.ca_pem.as_ref().unwrap()),
                ("tls.crt", &cert),
                ("tls.key", &key),
            ],
        ),
    );
    apply(
        &env,
        &helm_repository(
            "mtls",
            &reg.url("charts"),
            "  type: oci\n  certSecretRef:\n    name: mtls\n",
        ),
    );
    apply(&env, &helm_chart("mtls", "app", "mtls", "3.x"));
    let o = wait_for(&env, "helmchart/mtls", "Ready", ready).await;
    assert_eq!(message(&o), "pulled 'app' chart with version '3.1.0'");
    let file = artifact_file(&o, work.path()).await;
    assert_eq!(
        std::fs::read(file).unwrap(),
        std::fs::read(&package).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oci_chart_signatures_are_verified_with_public_keys() {
    let env = start().await;
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().unwrap();
    for version in ["1.0.0", "1.1.0"] {
        let src = tempfile::tempdir().unwrap();
        write_chart(src.path(), "app", version, "");
        run_helm(&[
            "package",
            src.path().join("app").to_str().unwrap(),
            "-d",
            work.path().to_str().unwrap(),
        ]);
        run_helm(&[
            "push",
            work.path()
                .join(format!("app-{version}.tgz"))
                .to_str()
                .unwrap(),
            &reg.url("charts"),
            "--plain-http",
        ]);
    }
    let chart_url = reg.url("charts/app");
    let (repository, _) = tidegate_source::oci::parse_artifact_url(&chart_url).unwrap();
    let registry = tidegate_source::oci::Registry::connect(&repository, &Default::default())
        .await
        .unwrap();
    let digest = registry.digest(&repository.tag("1.0.0")).await.unwrap();
    let key = p256::ecdsa::SigningKey::from_slice(&[21u8; 32]).unwrap();
    cosign_sign(&chart_url, &digest, &key).await;
    let indented: String = public_pem(&key)
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect();
    apply(
        &env,
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cosign-pub\n  namespace: default\nstringData:\n  cosign.pub: |\n{indented}"
        ),
    );
    apply(
        &env,
        &helm_repository("oci", &reg.url("charts"), "  type: oci\n"),
    );
    let signed = |name: &str, version: &str| {
        format!(
            "{}  verify:\n    provider: cosign\n    secretRef:\n      name: cosign-pub\n",
            helm_chart(name, "app", "oci", version)
        )
    };
    apply(&env, &signed("signed", "1.0.0"));
    let o = wait_for(&env, "helmchart/signed", "Ready", ready).await;
    let c = condition(&o, "SourceVerified").unwrap();
    assert_eq!(c["status"], "True", "{c}");
    assert_eq!(c["message"], "verified signature of version 1.0.0");
    // 1.1.0 is not signed.
    apply(&env, &signed("unsigned", "1.1.0"));
    let o = wait_for(&env, "helmchart/unsigned", "Ready=False", ready_false).await;
    let c = condition(&o, "SourceVerified").unwrap();
    assert_eq!(c["status"], "False", "{c}");
    assert_eq!(c["reason"], "VerificationError");
    let want = format!(
        "chart verification error: no matching signatures were found for '{}/charts/app:1.1.0'",
        reg.host
    );
    assert_eq!(c["message"], want.as_str());
    assert_eq!(
        condition(&o, "BuildFailed").unwrap()["reason"],
        "ChartVerificationError"
    );
    assert_eq!(condition(&o, "Ready").unwrap()["message"], want.as_str());
    assert!(o["status"]["artifact"].is_null(), "nothing stored: {o}");
}
