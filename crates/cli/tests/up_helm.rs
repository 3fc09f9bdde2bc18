//! `tidegate up` on a repository in the shape of flux2-kustomize-helm-example: infrastructure
//! controllers (ingress-nginx from an HTTP HelmRepository, cert-manager from an OCI
//! HelmRepository with its CRDs), configs that need those CRDs, and podinfo with staging
//! values patched in by kustomize. The HelmRepository and HelmRelease objects are written as
//! the example writes them, only the URLs point at loopback (a chart server indexed by `helm
//! repo index`, Debian's `docker-registry` with charts pushed by the real helm). Every
//! Kustomization and HelmRelease becomes Ready; the real helm reads the releases; a values
//! change in Git upgrades podinfo.

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

/// Writes and packages chart `name`-`version` with `templates` (and `crds`) into `out`.
fn chart(
    out: &Path,
    name: &str,
    version: &str,
    templates: &[(&str, &str)],
    crds: &[(&str, &str)],
) -> PathBuf {
    let src = tempfile::tempdir().unwrap();
    let dir = src.path().join(name);
    std::fs::create_dir_all(dir.join("templates")).unwrap();
    std::fs::write(
        dir.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"v{version}\"\n"),
    )
    .unwrap();
    std::fs::write(dir.join("values.yaml"), "replicaCount: 1\n").unwrap();
    for (file, text) in templates {
        std::fs::write(dir.join("templates").join(file), text).unwrap();
    }
    if !crds.is_empty() {
        std::fs::create_dir_all(dir.join("crds")).unwrap();
        for (file, text) in crds {
            std::fs::write(dir.join("crds").join(file), text).unwrap();
        }
    }
    run(Command::new(helm())
        .args(["package", dir.to_str().unwrap(), "-d"])
        .arg(out));
    out.join(format!("{name}-{version}.tgz"))
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    app.kubernetes.io/name: {{ .Chart.Name }}\nspec:\n  replicas: {{ .Values.replicaCount }}\n  selector:\n    matchLabels:\n      app: {{ .Release.Name }}\n  template:\n    metadata:\n      labels:\n        app: {{ .Release.Name }}\n    spec:\n      containers:\n      - name: main\n        image: \"example/{{ .Chart.Name }}:{{ .Chart.AppVersion }}\"\n";

const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  selector:\n    app: {{ .Release.Name }}\n  ports:\n  - port: 80\n";

const CLUSTER_ISSUER_CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: clusterissuers.cert-manager.io\nspec:\n  group: cert-manager.io\n  names:\n    kind: ClusterIssuer\n    listKind: ClusterIssuerList\n    plural: clusterissuers\n    singular: clusterissuer\n  scope: Cluster\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n";

fn is_ready(o: &Value) -> bool {
    ready(o).is_some_and(|(s, _)| s == "True")
}

fn helm_cli(kc: &Path, args: &[&str]) -> Value {
    let out = run(Command::new(helm())
        .args(args)
        .args(["-o", "json", "--kubeconfig"])
        .arg(kc));
    serde_json::from_str(&out).unwrap()
}

#[test]
fn up_reconciles_a_kustomize_helm_fleet_with_its_helmreleases() {
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().unwrap();
    // ingress-nginx from a static chart repository.
    let repo_dir = work.path().join("ingress-nginx");
    std::fs::create_dir_all(&repo_dir).unwrap();
    chart(
        &repo_dir,
        "ingress-nginx",
        "4.11.3",
        &[("deployment.yaml", DEPLOYMENT), ("service.yaml", SERVICE)],
        &[],
    );
    run(Command::new(helm()).args(["repo", "index", repo_dir.to_str().unwrap()]));
    let ingress_url = serve(repo_dir);
    // cert-manager (with its CRDs) and podinfo in the registry, pushed by helm.
    let packages = work.path().join("packages");
    let cert_manager = chart(
        &packages,
        "cert-manager",
        "1.16.1",
        &[("deployment.yaml", DEPLOYMENT)],
        &[("clusterissuers.yaml", CLUSTER_ISSUER_CRD)],
    );
    let podinfo = chart(
        &packages,
        "podinfo",
        "6.7.1",
        &[
            ("deployment.yaml", DEPLOYMENT),
            ("service.yaml", SERVICE),
            (
                "configmap.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-ui\ndata:\n  message: {{ .Values.ui.message | default \"none\" | quote }}\n  host: {{ .Values.ingress.host | default \"\" | quote }}\n",
            ),
        ],
        &[],
    );
    for file in [&cert_manager, &podinfo] {
        run(Command::new(helm())
            .arg("push")
            .arg(file)
            .args([&reg.url("charts"), "--plain-http"]));
    }
    let charts_oci = reg.url("charts");

    let repo = git_support::Repo::new();
    repo.write(
        "clusters/staging/infrastructure.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: infra-controllers\n  namespace: flux-system\nspec:\n  interval: 1h\n  retryInterval: 1m\n  timeout: 5m\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  path: ./infrastructure/controllers\n  prune: true\n  wait: true\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: infra-configs\n  namespace: flux-system\nspec:\n  dependsOn:\n    - name: infra-controllers\n  interval: 1h\n  retryInterval: 1m\n  timeout: 5m\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  path: ./infrastructure/configs\n  prune: true\n",
    );
    repo.write(
        "clusters/staging/apps.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 10m0s\n  dependsOn:\n    - name: infra-configs\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  path: ./apps/staging\n  prune: true\n  wait: true\n  timeout: 5m0s\n",
    );
    repo.write(
        "infrastructure/controllers/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ingress-nginx.yaml\n  - cert-manager.yaml\n",
    );
    repo.write(
        "infrastructure/controllers/ingress-nginx.yaml",
        &format!("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ingress-nginx\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: ingress-nginx\n  namespace: ingress-nginx\nspec:\n  interval: 24h\n  url: {ingress_url}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: ingress-nginx\n  namespace: ingress-nginx\nspec:\n  interval: 30m\n  chart:\n    spec:\n      chart: ingress-nginx\n      version: \"*\"\n      sourceRef:\n        kind: HelmRepository\n        name: ingress-nginx\n        namespace: ingress-nginx\n      interval: 12h\n  values:\n    controller:\n      service:\n        type: \"NodePort\"\n"),
    );
    repo.write(
        "infrastructure/controllers/cert-manager.yaml",
        &format!("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: cert-manager\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: cert-manager\n  namespace: cert-manager\nspec:\n  type: oci\n  interval: 24h\n  url: {charts_oci}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: cert-manager\n  namespace: cert-manager\nspec:\n  interval: 30m\n  chart:\n    spec:\n      chart: cert-manager\n      version: \"1.x\"\n      sourceRef:\n        kind: HelmRepository\n        name: cert-manager\n        namespace: cert-manager\n      interval: 12h\n  install:\n    crds: Create\n  upgrade:\n    crds: CreateReplace\n  values:\n    installCRDs: true\n"),
    );
    repo.write(
        "infrastructure/configs/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cluster-issuers.yaml\n",
    );
    repo.write(
        "infrastructure/configs/cluster-issuers.yaml",
        "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: letsencrypt\nspec:\n  acme:\n    email: fluxcdbot@users.noreply.github.com\n    server: https://acme-staging-v02.api.letsencrypt.org/directory\n",
    );
    repo.write(
        "apps/base/podinfo/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: podinfo\nresources:\n  - namespace.yaml\n  - repository.yaml\n  - release.yaml\n",
    );
    repo.write(
        "apps/base/podinfo/namespace.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: podinfo\n",
    );
    repo.write(
        "apps/base/podinfo/repository.yaml",
        &format!("apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: podinfo\n  namespace: podinfo\nspec:\n  type: oci\n  interval: 5m0s\n  url: {charts_oci}\n"),
    );
    repo.write(
        "apps/base/podinfo/release.yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\n  namespace: podinfo\nspec:\n  releaseName: podinfo\n  chart:\n    spec:\n      chart: podinfo\n      sourceRef:\n        kind: HelmRepository\n        name: podinfo\n  interval: 50m\n  install:\n    remediation:\n      retries: 3\n  values:\n    ingress:\n      enabled: true\n      className: nginx\n",
    );
    repo.write(
        "apps/staging/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../base/podinfo\npatches:\n  - path: podinfo-values.yaml\n    target:\n      kind: HelmRelease\n",
    );
    repo.write(
        "apps/staging/podinfo-values.yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\n  namespace: podinfo\nspec:\n  chart:\n    spec:\n      version: \">=6.0.0\"\n  values:\n    ingress:\n      host: podinfo.staging\n    ui:\n      message: staging\n",
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
            "clusters/staging",
        ],
        false,
    );
    let kc = up.kubeconfig.clone();
    wait_until("every Kustomization to be ready", || {
        let list = json(&kc, &["get", "kustomizations", "-A"]);
        let items = list["items"].as_array().cloned().unwrap_or_default();
        items.len() == 4 && items.iter().all(is_ready)
    });
    let list = json(&kc, &["get", "helmreleases", "-A"]);
    let items = list["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 3, "{list}");
    for hr in &items {
        assert!(is_ready(hr), "{}", hr["status"]);
        let reason = ready(hr).unwrap().1;
        assert!(
            reason.starts_with("Helm install succeeded for release "),
            "{reason}"
        );
    }
    // The chart's CRD came before the configs that use it.
    json(&kc, &["get", "clusterissuer/letsencrypt"]);
    // The staging values reached the chart.
    let cm = json(&kc, &["-n", "podinfo", "get", "configmap/podinfo-ui"]);
    assert_eq!(cm["data"]["message"], "staging");
    assert_eq!(cm["data"]["host"], "podinfo.staging");
    // The real helm sees three deployed releases.
    let releases = helm_cli(&kc, &["list", "-A"]);
    let mut names: Vec<(String, String, String)> = releases
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["chart"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            (
                "cert-manager".into(),
                "cert-manager-1.16.1".into(),
                "deployed".into()
            ),
            (
                "ingress-nginx".into(),
                "ingress-nginx-4.11.3".into(),
                "deployed".into()
            ),
            ("podinfo".into(), "podinfo-6.7.1".into(), "deployed".into()),
        ]
    );
    let (code, table, stderr) = tidegate(&kc, &["get", "helmreleases", "-A"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        table.contains("podinfo  \t6.7.1") || table.contains("6.7.1"),
        "{table}"
    );

    // tree: the HelmRelease expanded into the objects of its release; --compact keeps the
    // toolkit's objects only.
    let (code, tree, stderr) =
        tidegate(&kc, &["tree", "kustomization", "apps", "-n", "flux-system"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        tree.starts_with("Kustomization/flux-system/apps\n"),
        "{tree}"
    );
    let after_hr = tree
        .split_once("── HelmRelease/podinfo/podinfo\n")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("{tree}"));
    for object in [
        "── ConfigMap/podinfo/podinfo-ui\n",
        "── Service/podinfo/podinfo\n",
        "── Deployment/podinfo/podinfo\n",
    ] {
        assert!(
            after_hr.contains(object),
            "{object} under the release: {tree}"
        );
    }
    let (code, compact, _) = tidegate(
        &kc,
        &[
            "tree",
            "kustomization",
            "apps",
            "-n",
            "flux-system",
            "--compact",
        ],
    );
    assert_eq!(code, 0);
    assert!(compact.contains("HelmRelease/podinfo/podinfo"), "{compact}");
    assert!(
        compact.contains("HelmRepository/podinfo/podinfo"),
        "{compact}"
    );
    assert!(!compact.contains("ConfigMap"), "{compact}");

    // trace: from an object of the release to the HelmRelease, its HelmChart and repository.
    let (code, trace, stderr) = tidegate(&kc, &["trace", "deployment", "podinfo", "-n", "podinfo"]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = trace.lines().collect();
    assert_eq!(lines[0], "Object:         Deployment/podinfo", "{trace}");
    assert_eq!(lines[1], "Namespace:      podinfo", "{trace}");
    assert_eq!(lines[2], "Status:         Managed by Flux", "{trace}");
    assert_eq!(lines[4], "HelmRelease:    podinfo", "{trace}");
    for line in [
        "Revision:       6.7.1\n",
        "Message:        Helm install succeeded for release podinfo/podinfo.v1 with chart podinfo@6.7.1\n",
        "HelmChart:      podinfo-podinfo\n",
        "Chart:          podinfo\n",
        "Version:        >=6.0.0\n",
        "HelmRepository: podinfo\n",
    ] {
        assert!(trace.contains(line), "{line}: {trace}");
    }

    // debug helmrelease: the values podinfo is released with (staging's patch merged), its status.
    let (code, values, stderr) = tidegate(
        &kc,
        &[
            "debug",
            "helmrelease",
            "podinfo",
            "-n",
            "podinfo",
            "--show-values",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        values,
        "ingress:\n  className: nginx\n  enabled: true\n  host: podinfo.staging\nui:\n  message: staging\n"
    );
    let (code, status, stderr) = tidegate(
        &kc,
        &["debug", "hr", "podinfo", "-n", "podinfo", "--show-status"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        status.contains("lastAttemptedRevision: 6.7.1\n"),
        "{status}"
    );
    let (code, _, stderr) = tidegate(&kc, &["debug", "hr", "podinfo", "-n", "podinfo"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("either --show-status or --show-values must be set"),
        "{stderr}"
    );

    // A values change in Git upgrades podinfo.
    repo.write(
        "apps/staging/podinfo-values.yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\n  namespace: podinfo\nspec:\n  chart:\n    spec:\n      version: \">=6.0.0\"\n  values:\n    ingress:\n      host: podinfo.staging\n    ui:\n      message: upgraded\n",
    );
    repo.commit("new message");
    let (code, _, stderr) = tidegate(
        &kc,
        &[
            "reconcile",
            "kustomization",
            "apps",
            "-n",
            "flux-system",
            "--with-source",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    wait_until("podinfo to be upgraded", || {
        json(&kc, &["-n", "podinfo", "get", "configmap/podinfo-ui"])["data"]["message"]
            == "upgraded"
    });
    let (code, _, stderr) = tidegate(
        &kc,
        &["reconcile", "helmrelease", "podinfo", "-n", "podinfo"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("applied revision 6.7.1"), "{stderr}");
    let history = helm_cli(&kc, &["history", "podinfo", "-n", "podinfo"]);
    assert_eq!(history.as_array().unwrap().len(), 2, "{history}");
    interrupt(&mut up);
}
