//! The CRD manifests accept Flux's documented manifests unchanged (checked by the embedded API
//! server through real kubectl), and the Rust types read them without losing a field.

#[path = "../../apiserver/tests/common/mod.rs"]
mod common;

/// Kustomizations from Flux's docs/spec/v1/kustomizations.md that are complete manifests.
const FLUX_KUSTOMIZATIONS: &str = r#"apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: podinfo, namespace: default}
spec:
  interval: 10m
  targetNamespace: default
  sourceRef: {kind: GitRepository, name: podinfo}
  path: "./kustomize"
  prune: true
  timeout: 1m
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: backend, namespace: default}
spec:
  interval: 5m
  prune: true
  sourceRef: {kind: GitRepository, name: webapp}
  healthChecks:
    - {apiVersion: apps/v1, kind: Deployment, name: backend, namespace: dev}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: webapp, namespace: default}
spec:
  interval: 15m
  path: "./releases/"
  prune: true
  sourceRef: {kind: GitRepository, name: webapp}
  healthChecks:
    - {apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, name: frontend, namespace: dev}
    - {apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, name: backend, namespace: dev}
  timeout: 5m
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: sealed-secrets, namespace: flux-system}
spec:
  interval: 5m
  path: ./path/to/sealed/secrets
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  timeout: 1m
  wait: true
  healthCheckExprs:
    - apiVersion: bitnami.com/v1alpha1
      kind: SealedSecret
      failed: status.conditions.filter(e, e.type == 'Synced').all(e, e.status == 'False')
      current: status.conditions.filter(e, e.type == 'Synced').all(e, e.status == 'True')
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cert-manager, namespace: flux-system}
spec:
  interval: 5m
  path: "./cert-manager/controller"
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  healthChecks:
    - {apiVersion: apps/v1, kind: Deployment, name: cert-manager, namespace: cert-manager}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: certs, namespace: flux-system}
spec:
  dependsOn:
    - name: cert-manager
  interval: 5m
  path: "./cert-manager/certs"
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: webapp, namespace: apps}
spec:
  interval: 60m0s
  wait: true
  timeout: 3m0s
  retryInterval: 2m0s
  prune: true
  force: false
  targetNamespace: apps
  sourceRef: {kind: GitRepository, name: webapp, namespace: apps}
  path: "./deploy/production"
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: backend, namespace: webapp}
spec:
  serviceAccountName: flux
  dependsOn:
    - name: rbac
  interval: 5m
  path: "./webapp/backend/"
  prune: true
  sourceRef: {kind: GitRepository, name: webapp}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster-addons, namespace: capi-stage}
spec:
  interval: 5m
  path: "./config/addons/"
  prune: true
  sourceRef: {kind: GitRepository, name: cluster-addons}
  kubeConfig:
    secretRef: {name: stage-kubeconfig}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn flux_documented_kustomizations_are_accepted_unchanged() {
    let server = common::start().await;
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/kustomizations.kustomize.toolkit.fluxcd.io",
    ]);
    for ns in ["flux-system", "apps", "webapp", "capi-stage"] {
        server.ok(&["create", "namespace", ns]);
    }
    let out = server.ok_stdin(
        &["apply", "--dry-run=server", "-f", "-"],
        FLUX_KUSTOMIZATIONS,
    );
    assert_eq!(out.matches("(server dry run)").count(), 9, "{out}");
    // Created for real, the API server fills in the CRD's defaults.
    server.ok_stdin(
        &["apply", "-f", "-"],
        FLUX_KUSTOMIZATIONS.split("---\n").next().unwrap(),
    );
    let stored = server.ok(&["get", "ks", "podinfo", "-o", "json"]);
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["spec"]["force"], false);
    assert_eq!(stored["status"]["observedGeneration"], -1);
    // What Flux's schema rejects is rejected: `prune` is required (two of Flux's doc snippets
    // leave it out), kinds are enumerated, and kubeConfig wants exactly one reference.
    let no_prune = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: webapp, namespace: apps}\nspec:\n  interval: 5m\n  path: ./deploy\n  sourceRef: {kind: GitRepository, name: webapp, namespace: shared}\n";
    let err = server.fails_stdin(&["apply", "-f", "-"], no_prune);
    assert!(err.contains("spec.prune: Required value"), "{err}");
    let bad_kind = no_prune
        .replace("  path: ./deploy\n", "  prune: true\n")
        .replace("kind: GitRepository", "kind: HelmChart");
    let err = server.fails_stdin(&["apply", "-f", "-"], &bad_kind);
    assert!(err.contains("spec.sourceRef.kind"), "{err}");
}

#[test]
fn the_types_read_every_field_of_the_documented_manifests() {
    for doc in tidegate_core::yaml::parse_stream(FLUX_KUSTOMIZATIONS).unwrap() {
        let typed: tidegate_api::Kustomization = serde_json::from_value(doc.clone()).unwrap();
        let back = serde_json::to_value(&typed.spec).unwrap();
        assert_eq!(
            back, doc["spec"],
            "spec of {} round-trips",
            doc["metadata"]["name"]
        );
    }
}
