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

/// OCIRepositories as Flux's docs/spec/v1/ocirepositories.md and the public example
/// repositories write them (v1 and the older v1beta2).
const FLUX_OCI_REPOSITORIES: &str = r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: podinfo, namespace: default}
spec:
  interval: 5m0s
  url: oci://ghcr.io/stefanprodan/manifests/podinfo
  ref:
    tag: latest
---
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata: {name: kube-prometheus-stack, namespace: flux-system}
spec:
  interval: 10m
  url: oci://ghcr.io/prometheus-community/charts/kube-prometheus-stack
  ref:
    semver: ">=66.0.0"
  layerSelector:
    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip
    operation: copy
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: podinfo-signed, namespace: default}
spec:
  interval: 5m
  url: oci://ghcr.io/stefanprodan/manifests/podinfo
  ref:
    semver: "6.x"
    semverFilter: ".*-rc.*"
  verify:
    provider: cosign
    matchOIDCIdentity:
      - issuer: "^https://token.actions.githubusercontent.com$"
        subject: "^https://github.com/stefanprodan/podinfo.*$"
  ignore: |
    # exclude all
    /*
    # include deploy dir
    !/deploy
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: private, namespace: default}
spec:
  interval: 1h
  timeout: 2m
  url: oci://registry.example.com:5000/team/app
  ref:
    digest: "sha256:ff2d9b7fd58bdbc8e0a8ae0b2d3b5d6d9e0b0f0f5b8d7d2a7c53e8b8c9d0e1f2"
  secretRef: {name: regcred}
  certSecretRef: {name: registry-ca}
  proxySecretRef: {name: proxy}
  serviceAccountName: puller
  insecure: true
  provider: generic
  suspend: true
"#;

#[tokio::test(flavor = "multi_thread")]
async fn flux_documented_oci_repositories_are_accepted_unchanged() {
    let server = common::start().await;
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/ocirepositories.source.toolkit.fluxcd.io",
    ]);
    server.ok(&["create", "namespace", "flux-system"]);
    let out = server.ok_stdin(&["apply", "-f", "-"], FLUX_OCI_REPOSITORIES);
    assert_eq!(out.matches(" created").count(), 4, "{out}");
    // Stored as v1 with Flux's defaults; readable as v1beta2 and by short name.
    let stored = server.ok(&["get", "ocirepo", "podinfo", "-o", "json"]);
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["apiVersion"], "source.toolkit.fluxcd.io/v1");
    assert_eq!(stored["spec"]["timeout"], "60s");
    assert_eq!(stored["spec"]["provider"], "generic");
    assert_eq!(stored["status"]["observedGeneration"], -1);
    let beta = server.ok(&[
        "get",
        "ocirepositories.v1beta2.source.toolkit.fluxcd.io",
        "-n",
        "flux-system",
        "kube-prometheus-stack",
        "-o",
        "jsonpath={.apiVersion} {.spec.layerSelector.operation}",
    ]);
    assert_eq!(beta, "source.toolkit.fluxcd.io/v1beta2 copy");
    // Written as v1beta2, patched as v1 (kubectl and controllers speak the preferred version).
    server.ok(&[
        "annotate",
        "-n",
        "flux-system",
        "ocirepository",
        "kube-prometheus-stack",
        "reconcile.fluxcd.io/requestedAt=now",
    ]);
    let table = server.ok(&["get", "ocirepositories"]);
    assert!(table.starts_with("NAME"), "{table}");
    for column in ["URL", "READY", "STATUS", "AGE"] {
        assert!(table.lines().next().unwrap().contains(column), "{table}");
    }
    // What the schema rejects: a URL that is not oci://, an unknown layer operation.
    let bad = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: bad, namespace: default}\nspec:\n  interval: 5m\n  url: https://ghcr.io/app\n";
    let err = server.fails_stdin(&["apply", "-f", "-"], bad);
    assert!(err.contains("spec.url"), "{err}");
    let bad = bad.replace("https://", "oci://").replace(
        "  interval: 5m\n",
        "  interval: 5m\n  layerSelector: {operation: move}\n",
    );
    let err = server.fails_stdin(&["apply", "-f", "-"], &bad);
    assert!(err.contains("spec.layerSelector.operation"), "{err}");
}

#[test]
fn the_oci_repository_type_reads_every_documented_field() {
    for doc in tidegate_core::yaml::parse_stream(FLUX_OCI_REPOSITORIES).unwrap() {
        let typed: tidegate_api::OCIRepository = serde_json::from_value(doc.clone()).unwrap();
        let back = serde_json::to_value(&typed.spec).unwrap();
        assert_eq!(
            back, doc["spec"],
            "spec of {} round-trips",
            doc["metadata"]["name"]
        );
    }
}

/// HelmRepositories as Flux's docs/spec/v1/helmrepositories.md and the example repositories
/// write them.
const FLUX_HELM_REPOSITORIES: &str = r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: podinfo, namespace: default}
spec:
  interval: 5m0s
  url: https://stefanprodan.github.io/podinfo
---
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: HelmRepository
metadata: {name: podinfo-oci, namespace: default}
spec:
  type: oci
  interval: 5m0s
  url: oci://ghcr.io/stefanprodan/charts
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: private, namespace: default}
spec:
  interval: 1h
  timeout: 3m
  url: https://charts.example.com
  secretRef: {name: basic-auth}
  certSecretRef: {name: tls}
  passCredentials: true
  provider: generic
  suspend: true
"#;

#[tokio::test(flavor = "multi_thread")]
async fn flux_documented_helm_repositories_are_accepted_unchanged() {
    let server = common::start().await;
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/helmrepositories.source.toolkit.fluxcd.io",
    ]);
    let out = server.ok_stdin(&["apply", "-f", "-"], FLUX_HELM_REPOSITORIES);
    assert_eq!(out.matches(" created").count(), 3, "{out}");
    let stored = server.ok(&["get", "helmrepo", "podinfo-oci", "-o", "json"]);
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["spec"]["type"], "oci");
    assert_eq!(stored["spec"]["provider"], "generic");
    for doc in tidegate_core::yaml::parse_stream(FLUX_HELM_REPOSITORIES).unwrap() {
        let typed: tidegate_api::HelmRepository = serde_json::from_value(doc.clone()).unwrap();
        assert_eq!(serde_json::to_value(&typed.spec).unwrap(), doc["spec"]);
    }
    let bad = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: bad, namespace: default}\nspec:\n  url: ftp://charts.example.com\n";
    let err = server.fails_stdin(&["apply", "-f", "-"], bad);
    assert!(err.contains("spec.url"), "{err}");
}

/// Buckets as Flux's docs/spec/v1/buckets.md writes them.
const FLUX_BUCKETS: &str = r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: Bucket
metadata: {name: minio-bucket, namespace: default}
spec:
  interval: 5m0s
  endpoint: minio.example.com
  insecure: true
  secretRef:
    name: minio-bucket-secret
  bucketName: example
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: Bucket
metadata: {name: generic-insecure, namespace: default}
spec:
  provider: generic
  interval: 5m0s
  bucketName: podinfo
  endpoint: minio.minio.svc.cluster.local:9000
  timeout: 60s
  insecure: true
  secretRef:
    name: minio-credentials
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: Bucket
metadata: {name: aws, namespace: default}
spec:
  interval: 5m0s
  provider: aws
  bucketName: podinfo
  endpoint: s3.amazonaws.com
  region: us-east-1
  timeout: 30s
---
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: Bucket
metadata: {name: ldap, namespace: default}
spec:
  interval: 5m0s
  provider: generic
  bucketName: podinfo
  endpoint: minio.example.com
  prefix: apps/
  ignore: "*.md"
  sts:
    provider: ldap
    endpoint: https://minio.example.com
    secretRef: {name: ldap-credentials}
    certSecretRef: {name: ldap-tls}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn flux_documented_buckets_are_accepted_and_the_cel_rules_hold() {
    let server = common::start().await;
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/buckets.source.toolkit.fluxcd.io",
        "crd/externalartifacts.source.toolkit.fluxcd.io",
    ]);
    let out = server.ok_stdin(&["apply", "-f", "-"], FLUX_BUCKETS);
    assert_eq!(out.matches(" created").count(), 4, "{out}");
    let stored = server.ok(&["get", "buckets", "minio-bucket", "-o", "json"]);
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["apiVersion"], "source.toolkit.fluxcd.io/v1");
    assert_eq!(stored["spec"]["provider"], "generic");
    assert_eq!(stored["spec"]["timeout"], "60s");
    assert_eq!(stored["status"]["observedGeneration"], -1);
    let table = server.ok(&["get", "buckets"]);
    let header = table.lines().next().unwrap();
    for column in ["ENDPOINT", "AGE", "READY", "STATUS"] {
        assert!(header.contains(column), "{table}");
    }
    for doc in tidegate_core::yaml::parse_stream(FLUX_BUCKETS).unwrap() {
        let typed: tidegate_api::Bucket = serde_json::from_value(doc.clone()).unwrap();
        assert_eq!(serde_json::to_value(&typed.spec).unwrap(), doc["spec"]);
    }
    // Flux's CEL rules, with Flux's messages.
    let base = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: Bucket\nmetadata: {name: bad, namespace: default}\nspec:\n  interval: 5m\n  bucketName: b\n  endpoint: e\n";
    for (extra, message) in [
        (
            "  serviceAccountName: sa\n",
            "ServiceAccountName is not supported for the 'generic' Bucket provider",
        ),
        (
            "  provider: aws\n  secretRef: {name: s}\n  serviceAccountName: sa\n",
            "cannot set both .spec.secretRef and .spec.serviceAccountName",
        ),
        (
            "  provider: gcp\n  sts: {provider: aws, endpoint: https://sts.example.com}\n",
            "STS configuration is only supported for the 'aws' and 'generic' Bucket providers",
        ),
        (
            "  sts: {provider: aws, endpoint: https://sts.example.com}\n",
            "'ldap' is the only supported STS provider for the 'generic' Bucket provider",
        ),
        (
            "  provider: aws\n  sts: {provider: aws, endpoint: https://sts.example.com, secretRef: {name: s}}\n",
            "spec.sts.secretRef is not required for the 'aws' STS provider",
        ),
    ] {
        let err = server.fails_stdin(&["apply", "-f", "-"], &format!("{base}{extra}"));
        assert!(err.contains(message), "{extra}: {err}");
    }
    let err = server.fails_stdin(
        &["apply", "-f", "-"],
        &base.replace("  bucketName: b\n", ""),
    );
    assert!(err.contains("spec.bucketName: Required value"), "{err}");

    // ExternalArtifacts: written by their producer, status included.
    let ea = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: ExternalArtifact\nmetadata: {name: podinfo, namespace: default}\nspec:\n  sourceRef: {apiVersion: source.extensions.fluxcd.io/v1beta1, kind: ArtifactGenerator, name: podinfo}\n";
    server.ok_stdin(&["apply", "-f", "-"], ea);
    let table = server.ok(&["get", "ea"]);
    let header = table.lines().next().unwrap();
    for column in ["AGE", "READY", "STATUS", "SOURCE"] {
        assert!(header.contains(column), "{table}");
    }
    assert!(table.contains("podinfo"), "{table}");
}

/// Cluster API's documented ClusterResourceSet (the book's cloud-provider example and the e2e
/// crs.yaml shape), a Cluster and a binding.
const CLUSTER_API_OBJECTS: &str = r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: capi-quickstart, namespace: default, labels: {cloud: openstack, cni: capi-quickstart-crs-0}}
spec:
  clusterNetwork:
    pods: {cidrBlocks: [192.168.0.0/16]}
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: capi-quickstart-control-plane}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerCluster, name: capi-quickstart}
---
apiVersion: addons.cluster.x-k8s.io/v1beta2
kind: ClusterResourceSet
metadata: {name: cloud-provider-openstack, namespace: default}
spec:
  strategy: Reconcile
  clusterSelector:
    matchLabels:
      cloud: openstack
  resources:
    - name: cloud-provider-openstack
      kind: ConfigMap
    - name: cloud-config
      kind: Secret
---
apiVersion: addons.cluster.x-k8s.io/v1beta1
kind: ClusterResourceSet
metadata: {name: capi-quickstart-crs-0, namespace: default}
spec:
  clusterSelector:
    matchLabels:
      cni: capi-quickstart-crs-0
  resources:
    - name: cni-capi-quickstart-crs-0
      kind: ConfigMap
---
apiVersion: addons.cluster.x-k8s.io/v1beta2
kind: ClusterResourceSetBinding
metadata: {name: capi-quickstart, namespace: default}
spec:
  clusterName: capi-quickstart
  bindings:
  - clusterResourceSetName: capi-quickstart-crs-0
    resources:
    - {name: cni-capi-quickstart-crs-0, kind: ConfigMap, applied: true, hash: "sha256:0f", lastAppliedTime: "2026-01-01T00:00:00Z"}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn cluster_api_manifests_are_accepted_and_the_webhook_rules_hold() {
    let server = common::start().await;
    let crds: Vec<&str> = tidegate_api::crds::cluster_api();
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &crds.join("\n---\n"),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/clusters.cluster.x-k8s.io",
        "crd/clusterresourcesets.addons.cluster.x-k8s.io",
        "crd/clusterresourcesetbindings.addons.cluster.x-k8s.io",
    ]);
    let out = server.ok_stdin(&["apply", "-f", "-"], CLUSTER_API_OBJECTS);
    assert_eq!(out.matches(" created").count(), 4, "{out}");
    // Written as v1beta1 without a strategy: stored as v1beta2, ApplyOnce (the webhook's default).
    let stored = server.ok(&[
        "get",
        "clusterresourceset",
        "capi-quickstart-crs-0",
        "-o",
        "json",
    ]);
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["apiVersion"], "addons.cluster.x-k8s.io/v1beta2");
    assert_eq!(stored["spec"]["strategy"], "ApplyOnce");
    let typed: tidegate_api::ClusterResourceSet = serde_json::from_value(stored).unwrap();
    assert_eq!(typed.spec.resources.len(), 1);
    let table = server.ok(&["get", "clusterresourcesets"]);
    let header = table.lines().next().unwrap();
    assert!(
        header.contains("APPLIED") && header.contains("AGE"),
        "{table}"
    );
    assert!(
        !header.contains("PAUSED"),
        "Paused is a wide column: {table}"
    );
    let table = server.ok(&["get", "clusterresourcesetbindings"]);
    assert!(table.lines().next().unwrap().contains("CLUSTER"), "{table}");
    let table = server.ok(&["get", "cl"]);
    assert!(table.contains("capi-quickstart"), "{table}");
    let binding = server.ok(&[
        "get",
        "clusterresourcesetbinding",
        "capi-quickstart",
        "-o",
        "json",
    ]);
    let binding: tidegate_api::ClusterResourceSetBinding = serde_json::from_str(&binding).unwrap();
    assert_eq!(binding.spec.bindings[0].resources[0].applied, Some(true));

    // The validating webhook's rules: an empty selector, and strategy and selector immutable.
    let empty = "apiVersion: addons.cluster.x-k8s.io/v1beta2\nkind: ClusterResourceSet\nmetadata: {name: empty, namespace: default}\nspec:\n  clusterSelector: {}\n  resources: [{name: a, kind: ConfigMap}]\n";
    let err = server.fails_stdin(&["apply", "-f", "-"], empty);
    assert!(
        err.contains("spec.clusterSelector") && err.contains("selector must not be empty"),
        "{err}"
    );
    let err = server.fails(&[
        "patch",
        "clusterresourceset",
        "cloud-provider-openstack",
        "--type=merge",
        "-p",
        r#"{"spec":{"strategy":"ApplyOnce"}}"#,
    ]);
    assert!(
        err.contains("spec.strategy") && err.contains("field is immutable"),
        "{err}"
    );
    let err = server.fails(&[
        "patch",
        "clusterresourceset",
        "cloud-provider-openstack",
        "--type=merge",
        "-p",
        r#"{"spec":{"clusterSelector":{"matchLabels":{"cloud":"aws"}}}}"#,
    ]);
    assert!(
        err.contains("spec.clusterSelector") && err.contains("field is immutable"),
        "{err}"
    );
    // Resources may change.
    server.ok(&[
        "patch",
        "clusterresourceset",
        "cloud-provider-openstack",
        "--type=merge",
        "-p",
        r#"{"spec":{"resources":[{"name":"cloud-config","kind":"Secret"}]}}"#,
    ]);
    let err = server.fails(&[
        "patch",
        "clusterresourceset",
        "cloud-provider-openstack",
        "--type=merge",
        "-p",
        r#"{"spec":{"resources":[{"name":"x","kind":"Deployment"}]}}"#,
    ]);
    assert!(err.contains("spec.resources[0].kind"), "{err}");
}

/// Flux's documented notification objects (docs/spec/v1beta3 providers and alerts, v1
/// receivers), and the same as v1beta2.
const FLUX_NOTIFICATIONS: &str = r#"apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {name: slack-bot, namespace: flux-system}
spec:
  type: slack
  channel: general
  address: https://slack.com/api/chat.postMessage
  secretRef: {name: slack-token}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: on-call-webapp, namespace: flux-system}
spec:
  summary: "production cluster"
  providerRef: {name: slack-bot}
  eventSeverity: error
  eventSources:
    - {kind: GitRepository, name: '*'}
    - {kind: Kustomization, name: '*'}
  eventMetadata: {env: production}
---
apiVersion: notification.toolkit.fluxcd.io/v1
kind: Receiver
metadata: {name: github-receiver, namespace: flux-system}
spec:
  type: github
  events: ["ping", "push"]
  secretRef: {name: receiver-token}
  resources:
    - {apiVersion: source.toolkit.fluxcd.io/v1, kind: GitRepository, name: flux-system}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta2
kind: Receiver
metadata: {name: old-receiver, namespace: flux-system}
spec:
  type: generic
  secretRef: {name: receiver-token}
  resources:
    - {kind: GitRepository, name: flux-system}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn flux_documented_notification_objects_are_accepted() {
    let server = common::start().await;
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/providers.notification.toolkit.fluxcd.io",
        "crd/alerts.notification.toolkit.fluxcd.io",
        "crd/receivers.notification.toolkit.fluxcd.io",
    ]);
    server.ok(&["create", "namespace", "flux-system"]);
    let out = server.ok_stdin(&["apply", "-f", "-"], FLUX_NOTIFICATIONS);
    assert_eq!(out.matches(" created").count(), 4, "{out}");
    let stored = server.ok(&[
        "-n",
        "flux-system",
        "get",
        "receiver",
        "old-receiver",
        "-o",
        "json",
    ]);
    let typed: tidegate_api::Receiver = serde_json::from_str(&stored).unwrap();
    assert_eq!(typed.spec.type_, "generic");
    let raw: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(
        raw["apiVersion"], "notification.toolkit.fluxcd.io/v1",
        "written as v1beta2"
    );
    let table = server.ok(&["-n", "flux-system", "get", "receivers"]);
    assert!(table.lines().next().unwrap().contains("READY"), "{table}");
    // Flux's CEL rules: generic-oidc needs oidcProviders.
    let err = server.fails_stdin(
        &["apply", "-f", "-"],
        "apiVersion: notification.toolkit.fluxcd.io/v1\nkind: Receiver\nmetadata: {name: oidc, namespace: flux-system}\nspec:\n  type: generic-oidc\n  resources: [{kind: GitRepository, name: x}]\n",
    );
    assert!(
        err.contains("generic-oidc receivers must define at least one oidcProvider"),
        "{err}"
    );
}

/// Flux's documented image objects (`docs/spec/v1/imagerepositories.md`, `imagepolicies.md`).
const FLUX_IMAGES: &str = r#"apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata:
  name: podinfo
  namespace: default
spec:
  image: stefanprodan/podinfo
  interval: 1h
  provider: generic
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata:
  name: podinfo
  namespace: default
spec:
  imageRepositoryRef:
    name: podinfo
  policy:
    semver:
      range: 5.1.x
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata:
  name: podinfo-main
  namespace: default
spec:
  imageRepositoryRef:
    name: podinfo
  filterTags:
    pattern: '^main-[a-fA-F0-9]+-(?P<ts>.*)'
    extract: '$ts'
  policy:
    numerical:
      order: asc
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata:
  name: podinfo-digest
  namespace: default
spec:
  imageRepositoryRef:
    name: podinfo
  digestReflectionPolicy: Always
  interval: 10m
  policy:
    alphabetical:
      order: desc
"#;

#[tokio::test(flavor = "multi_thread")]
async fn flux_documented_image_objects_are_accepted_and_the_cel_rules_hold() {
    let server = common::start().await;
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/imagerepositories.image.toolkit.fluxcd.io",
        "crd/imagepolicies.image.toolkit.fluxcd.io",
    ]);
    let out = server.ok_stdin(&["apply", "-f", "-"], FLUX_IMAGES);
    assert_eq!(out.matches(" created").count(), 4, "{out}");
    // Defaults as Flux's CRDs give them.
    let repo: tidegate_api::ImageRepository =
        serde_json::from_str(&server.ok(&["get", "imagerepository", "podinfo", "-o", "json"]))
            .unwrap();
    assert_eq!(repo.spec.exclusion_list, ["^.*\\.sig$"]);
    assert_eq!(repo.spec.provider.as_deref(), Some("generic"));
    let policy: tidegate_api::ImagePolicy =
        serde_json::from_str(&server.ok(&["get", "imgpol", "podinfo-main", "-o", "json"])).unwrap();
    assert_eq!(
        policy.spec.digest_reflection_policy.as_deref(),
        Some("Never")
    );
    assert_eq!(
        policy
            .spec
            .policy
            .numerical
            .and_then(|n| n.order)
            .as_deref(),
        Some("asc")
    );
    let table = server.ok(&["get", "imagerepositories"]);
    let header = table.lines().next().unwrap();
    assert!(
        header.starts_with("NAME") && header.contains("IMAGE") && header.contains("TAGS"),
        "{table}"
    );
    // Flux's CEL rules on interval and digestReflectionPolicy, and the interval pattern.
    let policy = |spec: &str| {
        format!(
            "apiVersion: image.toolkit.fluxcd.io/v1\nkind: ImagePolicy\nmetadata: {{name: bad, namespace: default}}\nspec:\n  imageRepositoryRef: {{name: podinfo}}\n  policy: {{semver: {{range: 1.x}}}}\n{spec}"
        )
    };
    for (doc, wanted) in [
        (
            policy("  interval: 5m\n"),
            "spec.interval is only accepted when spec.digestReflectionPolicy is set to 'Always'",
        ),
        (
            policy("  digestReflectionPolicy: Always\n"),
            "spec.interval must be set when spec.digestReflectionPolicy is set to 'Always'",
        ),
        (
            "apiVersion: image.toolkit.fluxcd.io/v1\nkind: ImageRepository\nmetadata: {name: bad, namespace: default}\nspec:\n  image: ghcr.io/org/app\n  interval: soon\n".to_string(),
            "spec.interval",
        ),
    ] {
        let err = server.fails_stdin(&["apply", "-f", "-"], &doc);
        assert!(err.contains(wanted), "{err}");
    }
}

/// Image automation as Flux's image update guide and older fleet repositories write it, in
/// `v1beta2` (served beside `v1`, deprecated, stored as `v1`), and an ImageUpdateAutomation in
/// `v1` with the defaults Flux's CRD gives.
const FLUX_IMAGES_V1BETA2: &str = r#"apiVersion: image.toolkit.fluxcd.io/v1beta2
kind: ImageRepository
metadata: {name: podinfo, namespace: flux-system}
spec:
  image: ghcr.io/stefanprodan/podinfo
  interval: 5m
---
apiVersion: image.toolkit.fluxcd.io/v1beta2
kind: ImagePolicy
metadata: {name: podinfo, namespace: flux-system}
spec:
  imageRepositoryRef:
    name: podinfo
  policy:
    semver:
      range: 5.0.x
---
apiVersion: image.toolkit.fluxcd.io/v1beta2
kind: ImageUpdateAutomation
metadata: {name: flux-system, namespace: flux-system}
spec:
  interval: 30m
  sourceRef:
    kind: GitRepository
    name: flux-system
  git:
    checkout:
      ref:
        branch: main
    commit:
      author:
        email: fluxcdbot@users.noreply.github.com
        name: fluxcdbot
      messageTemplate: '{{range .Changed.Changes}}{{print .OldValue}} -> {{println .NewValue}}{{end}}'
    push:
      branch: main
  update:
    path: ./clusters/my-cluster
    strategy: Setters
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageUpdateAutomation
metadata: {name: defaults, namespace: flux-system}
spec:
  interval: 1h
  sourceRef:
    name: flux-system
  git:
    commit:
      author:
        email: bot@example.com
      signingKey:
        secretRef:
          name: pgp
"#;

#[tokio::test(flavor = "multi_thread")]
async fn image_automation_in_v1beta2_and_v1_is_accepted() {
    let server = common::start().await;
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/imagerepositories.image.toolkit.fluxcd.io",
        "crd/imagepolicies.image.toolkit.fluxcd.io",
        "crd/imageupdateautomations.image.toolkit.fluxcd.io",
    ]);
    server.ok(&["create", "namespace", "flux-system"]);
    let out = server.ok_stdin(&["apply", "-f", "-"], FLUX_IMAGES_V1BETA2);
    assert_eq!(out.matches(" created").count(), 4, "{out}");
    let auto: tidegate_api::ImageUpdateAutomation = serde_json::from_str(&server.ok(&[
        "get",
        "-n",
        "flux-system",
        "iua",
        "flux-system",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(auto.metadata.name.as_deref(), Some("flux-system"));
    let git = auto.spec.git.expect("git");
    assert_eq!(git.push.expect("push").branch, "main");
    assert!(
        git.commit
            .message_template
            .starts_with("{{range .Changed.Changes}}")
    );
    // Flux's CRD defaults.
    let defaults: tidegate_api::ImageUpdateAutomation = serde_json::from_str(&server.ok(&[
        "get",
        "-n",
        "flux-system",
        "imgupd",
        "defaults",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(defaults.spec.source_ref.kind, "GitRepository");
    assert_eq!(defaults.spec.update.expect("update").strategy, "Setters");
    let beta = server.ok(&[
        "get",
        "imagepolicies.v1beta2.image.toolkit.fluxcd.io",
        "-n",
        "flux-system",
        "podinfo",
        "-o",
        "jsonpath={.apiVersion} {.spec.policy.semver.range}",
    ]);
    assert_eq!(beta, "image.toolkit.fluxcd.io/v1beta2 5.0.x");
    let table = server.ok(&["get", "imageupdateautomations", "-A"]);
    let header = table.lines().next().unwrap();
    assert!(
        header.contains("READY") && header.contains("STATUS"),
        "{table}"
    );
}
