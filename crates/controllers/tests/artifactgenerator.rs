//! The ArtifactGenerator (source-watcher) against the embedded API server, with a repository in
//! the shape of flux2-kustomize-helm-example: its ArtifactGenerator and the Kustomizations that
//! read the ExternalArtifacts are applied unchanged (the GitRepository points at a local git
//! daemon, the workloads are ConfigMaps). A change outside an artifact's copy rules leaves that
//! artifact's revision alone; a change inside makes a new one, which its Kustomization applies.

mod source_support;

use source_support::git_support::{GitDaemon, Repo};
use source_support::*;

/// clusters/staging/artifacts.yaml of flux2-kustomize-helm-example, unchanged.
const ARTIFACTS: &str = r#"---
apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: flux-system
  namespace: flux-system
spec:
  sources:
    - alias: monorepo
      kind: GitRepository
      name: flux-system
  artifacts:
    - name: infrastructure
      originRevision: "@monorepo"
      copy:
        - from: "@monorepo/infrastructure/**"
          to: "@artifact/"
    - name: apps
      originRevision: "@monorepo"
      copy:
        - from: "@monorepo/apps/base/**"
          to: "@artifact/base/"
        - from: "@monorepo/apps/staging/**"
          to: "@artifact/staging/"
"#;

/// clusters/staging/infrastructure.yaml and apps.yaml of the example, unchanged.
const KUSTOMIZATIONS: &str = r#"---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infra-controllers
  namespace: flux-system
spec:
  interval: 1h
  retryInterval: 2m
  timeout: 5m
  sourceRef:
    kind: ExternalArtifact
    name: infrastructure
  path: ./controllers
  prune: true
  wait: true
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infra-configs
  namespace: flux-system
spec:
  dependsOn:
    - name: infra-controllers
  interval: 1h
  retryInterval: 2m
  timeout: 5m
  sourceRef:
    kind: ExternalArtifact
    name: infrastructure
  path: ./configs
  prune: true
  patches:
    - patch: |
        - op: replace
          path: /spec/acme/server
          value: https://acme-staging-v02.api.letsencrypt.org/directory
      target:
        kind: ClusterIssuer
        name: letsencrypt
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  dependsOn:
    - name: infra-configs
  interval: 1h
  retryInterval: 2m
  timeout: 5m
  sourceRef:
    kind: ExternalArtifact
    name: apps
  path: ./staging
  prune: true
  wait: true
"#;

fn cm(name: &str, ns: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {ns}\ndata:\n  value: \"{value}\"\n"
    )
}

fn kustomization(resources: &[&str]) -> String {
    let mut s = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
        .to_string();
    for r in resources {
        s.push_str(&format!("  - {r}\n"));
    }
    s
}

fn text<'a>(o: &'a serde_json::Value, pointer: &str) -> &'a str {
    o.pointer(pointer).and_then(|v| v.as_str()).unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_monorepo_is_split_into_external_artifacts_that_kustomizations_apply() {
    let repo = Repo::new();
    repo.write("README.md", "# fleet\n");
    repo.write(
        "infrastructure/controllers/kustomization.yaml",
        &kustomization(&["cert-manager.yaml"]),
    );
    repo.write(
        "infrastructure/controllers/cert-manager.yaml",
        &cm("cert-manager", "flux-system", "v1"),
    );
    repo.write(
        "infrastructure/configs/kustomization.yaml",
        &kustomization(&["cluster-issuers.yaml"]),
    );
    repo.write(
        "infrastructure/configs/cluster-issuers.yaml",
        &cm("cluster-issuers", "flux-system", "v1"),
    );
    repo.write(
        "apps/base/podinfo/kustomization.yaml",
        &kustomization(&["release.yaml"]),
    );
    repo.write(
        "apps/base/podinfo/release.yaml",
        &cm("podinfo", "flux-system", "base"),
    );
    repo.write(
        "apps/staging/kustomization.yaml",
        &kustomization(&["../base/podinfo", "podinfo-values.yaml"]),
    );
    repo.write(
        "apps/staging/podinfo-values.yaml",
        &cm("podinfo-values", "flux-system", "staging-1"),
    );
    repo.write(
        "apps/production/kustomization.yaml",
        &kustomization(&["../base/podinfo"]),
    );
    let first = repo.commit("fleet");
    let daemon = GitDaemon::start(&repo.base);
    let env = start().await;
    env.server.ok(&["create", "namespace", "flux-system"]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  url: {}\n  ref:\n    branch: main\n",
            daemon.url("repo.git")
        ),
    );
    env.server.ok_stdin(&["apply", "-f", "-"], ARTIFACTS);
    env.server.ok_stdin(&["apply", "-f", "-"], KUSTOMIZATIONS);

    let g = wait_for(
        &env,
        "artifactgenerator/flux-system -n flux-system",
        "Ready",
        ready,
    )
    .await;
    assert_eq!(
        condition(&g, "Ready").unwrap()["message"],
        "reconciliation succeeded, generated 2 artifact(s)"
    );
    assert_eq!(g["status"]["inventory"].as_array().unwrap().len(), 2);
    let git_revision = format!("main@sha1:{first}");
    exists(&env, "externalartifact/infrastructure").await;
    exists(&env, "externalartifact/apps").await;
    let infra = wait_for(
        &env,
        "externalartifact/infrastructure -n flux-system",
        "Ready",
        ready,
    )
    .await;
    let apps1 = wait_for(&env, "externalartifact/apps -n flux-system", "Ready", ready).await;
    for ea in [&infra, &apps1] {
        let digest = text(ea, "/status/artifact/digest");
        assert_eq!(
            text(ea, "/status/artifact/revision"),
            format!("latest@{digest}")
        );
        assert_eq!(
            text(
                ea,
                "/status/artifact/metadata/org.opencontainers.image.revision"
            ),
            git_revision
        );
        assert_eq!(text(ea, "/spec/sourceRef/kind"), "ArtifactGenerator");
        assert_eq!(
            text(ea, "/metadata/labels/app.kubernetes.io~1managed-by"),
            "source-watcher"
        );
        assert_eq!(
            condition(ea, "Ready").unwrap()["message"],
            "Artifact is ready"
        );
    }
    assert!(
        text(&infra, "/status/artifact/path")
            .starts_with("externalartifact/flux-system/infrastructure/")
    );
    assert_eq!(
        artifact_files(text(&infra, "/status/artifact/url")).await,
        [
            "configs/cluster-issuers.yaml",
            "configs/kustomization.yaml",
            "controllers/cert-manager.yaml",
            "controllers/kustomization.yaml"
        ]
    );
    assert_eq!(
        artifact_files(text(&apps1, "/status/artifact/url")).await,
        [
            "base/podinfo/kustomization.yaml",
            "base/podinfo/release.yaml",
            "staging/kustomization.yaml",
            "staging/podinfo-values.yaml"
        ]
    );
    // The Kustomizations read them, in dependency order.
    for k in ["infra-controllers", "infra-configs", "apps"] {
        wait_for(
            &env,
            &format!("kustomization/{k} -n flux-system"),
            "Ready",
            ready,
        )
        .await;
    }
    let value = |name: &str| {
        env.server.ok(&[
            "get",
            "configmap",
            name,
            "-n",
            "flux-system",
            "-o",
            "jsonpath={.data.value}",
        ])
    };
    assert_eq!(value("podinfo-values"), "staging-1");
    assert_eq!(value("cert-manager"), "v1");

    // A commit outside every copy rule: new sources digest, same artifacts.
    repo.write("README.md", "# fleet, documented\n");
    repo.write(
        "apps/production/kustomization.yaml",
        &kustomization(&["../base/podinfo", "x.yaml"]),
    );
    let second = repo.commit("docs");
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "-n",
        "flux-system",
        "gitrepository/flux-system",
        "reconcile.fluxcd.io/requestedAt=one",
    ]);
    let digest1 = text(&g, "/status/observedSourcesDigest").to_string();
    let g = wait_for(
        &env,
        "artifactgenerator/flux-system -n flux-system",
        "the new commit",
        |o| ready(o) && text(o, "/status/observedSourcesDigest") != digest1,
    )
    .await;
    let infra2 = env_get(&env, "externalartifact/infrastructure");
    let apps2 = env_get(&env, "externalartifact/apps");
    assert_eq!(
        text(&infra2, "/status/artifact/revision"),
        text(&infra, "/status/artifact/revision")
    );
    assert_eq!(
        text(&apps2, "/status/artifact/revision"),
        text(&apps1, "/status/artifact/revision")
    );
    assert_eq!(
        text(
            &apps2,
            "/status/artifact/metadata/org.opencontainers.image.revision"
        ),
        format!("main@sha1:{second}")
    );

    // A commit inside the apps rules: apps changes, infrastructure does not.
    repo.write(
        "apps/staging/podinfo-values.yaml",
        &cm("podinfo-values", "flux-system", "staging-2"),
    );
    repo.commit("staging values");
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "-n",
        "flux-system",
        "gitrepository/flux-system",
        "reconcile.fluxcd.io/requestedAt=two",
    ]);
    let digest2 = text(&g, "/status/observedSourcesDigest").to_string();
    wait_for(
        &env,
        "artifactgenerator/flux-system -n flux-system",
        "the second commit",
        |o| ready(o) && text(o, "/status/observedSourcesDigest") != digest2,
    )
    .await;
    let apps3 = env_get(&env, "externalartifact/apps");
    assert_ne!(
        text(&apps3, "/status/artifact/revision"),
        text(&apps1, "/status/artifact/revision")
    );
    assert_eq!(
        text(
            &env_get(&env, "externalartifact/infrastructure"),
            "/status/artifact/revision"
        ),
        text(&infra, "/status/artifact/revision")
    );
    for _ in 0..150 {
        if value("podinfo-values") == "staging-2" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(value("podinfo-values"), "staging-2");

    // Deleting the generator deletes its ExternalArtifacts.
    env.server.ok(&[
        "delete",
        "artifactgenerator/flux-system",
        "-n",
        "flux-system",
        "--timeout=30s",
    ]);
    let left = env.server.ok(&[
        "get",
        "externalartifacts",
        "-n",
        "flux-system",
        "-o",
        "name",
    ]);
    assert!(left.trim().is_empty(), "{left}");
}

/// Waits until `kubectl get <what> -n flux-system` finds the object.
async fn exists(env: &Env, what: &str) {
    for _ in 0..300 {
        if env
            .server
            .kubectl(&["get", what, "-n", "flux-system"])
            .status
            .success()
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{what} was never created");
}

fn env_get(env: &Env, what: &str) -> serde_json::Value {
    let out = env
        .server
        .ok(&["get", what, "-n", "flux-system", "-o", "json"]);
    serde_json::from_str(&out).unwrap()
}

/// A chart composed by a generator (the chart from one path, production values merged over
/// its defaults from another, as Flux's composition example does) is installed by a
/// HelmRelease through `chartRef: {kind: ExternalArtifact}`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_helmrelease_installs_a_chart_composed_by_a_generator() {
    let repo = Repo::new();
    repo.write(
        "charts/app/Chart.yaml",
        "apiVersion: v2\nname: app\nversion: 1.2.3\n",
    );
    repo.write(
        "charts/app/values.yaml",
        "replicas: 1\nsettings:\n  env: dev\n  tier: web\n",
    );
    repo.write(
        "charts/app/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\ndata:\n  env: {{ .Values.settings.env | quote }}\n  tier: {{ .Values.settings.tier | quote }}\n  replicas: {{ .Values.replicas | quote }}\n",
    );
    repo.write("charts/app/README.md", "# app\n");
    repo.write(
        "values/prod.yaml",
        "settings:\n  env: production\nreplicas: 3\n",
    );
    repo.commit("chart");
    let daemon = GitDaemon::start(&repo.base);
    let env = start().await;
    env.server.ok(&["create", "namespace", "flux-system"]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: repo\n  namespace: flux-system\nspec:\n  interval: 10m\n  url: {}\n  ref:\n    branch: main\n",
            daemon.url("repo.git")
        ),
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: chart-gen
  namespace: flux-system
spec:
  sources:
    - alias: repo
      kind: GitRepository
      name: repo
  artifacts:
    - name: app-chart
      revision: "@repo"
      copy:
        - from: "@repo/charts/**"
          to: "@artifact/"
          exclude: ["*.md"]
        - from: "@repo/values/prod.yaml"
          to: "@artifact/app/values.yaml"
          strategy: Merge
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app
  namespace: flux-system
spec:
  interval: 10m
  chartRef:
    kind: ExternalArtifact
    name: app-chart
"#,
    );
    let ea = wait_for(
        &env,
        "externalartifact/app-chart -n flux-system",
        "Ready",
        ready,
    )
    .await;
    let git = get(&env, "gitrepository/repo -n flux-system");
    // `revision: "@repo"`: the artifact carries the Git revision.
    assert_eq!(
        text(&ea, "/status/artifact/revision"),
        text(&git, "/status/artifact/revision")
    );
    assert_eq!(
        artifact_files(text(&ea, "/status/artifact/url")).await,
        ["app/Chart.yaml", "app/templates/cm.yaml", "app/values.yaml"]
    );
    wait_for(&env, "helmrelease/app -n flux-system", "Ready", ready).await;
    let data = env.server.ok(&[
        "get",
        "configmap",
        "app-settings",
        "-n",
        "flux-system",
        "-o",
        "jsonpath={.data.env} {.data.tier} {.data.replicas}",
    ]);
    assert_eq!(data, "production web 3");
}

/// `pathPattern`: one ExternalArtifact per matching directory, labelled with the captures;
/// a directory removed from the source takes its ExternalArtifact with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_pattern_makes_one_artifact_per_directory() {
    let repo = Repo::new();
    repo.write("apps/Frontend/cm.yaml", &cm("frontend", "flux-system", "f"));
    repo.write("apps/backend/cm.yaml", &cm("backend", "flux-system", "b"));
    repo.write("apps/backend/README.md", "# backend\n");
    repo.write("apps/notes.txt", "not a directory\n");
    repo.commit("apps");
    let daemon = GitDaemon::start(&repo.base);
    let env = start().await;
    env.server.ok(&["create", "namespace", "flux-system"]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: repo\n  namespace: flux-system\nspec:\n  interval: 10m\n  url: {}\n  ref:\n    branch: main\n",
            daemon.url("repo.git")
        ),
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: apps
  namespace: flux-system
spec:
  commonMetadata:
    labels:
      team: platform
  sources:
    - alias: repo
      kind: GitRepository
      name: repo
  pathPattern: "@repo/apps/{app}"
  artifacts:
    - name: "app-{app}"
      copy:
        - from: "@repo/apps/{app}/**"
          to: "@artifact/"
          exclude: ["*.md"]
"#,
    );
    let g = wait_for(
        &env,
        "artifactgenerator/apps -n flux-system",
        "Ready",
        ready,
    )
    .await;
    assert_eq!(
        condition(&g, "Ready").unwrap()["message"],
        "reconciliation succeeded, generated 2 artifact(s)"
    );
    exists(&env, "externalartifact/app-frontend").await;
    exists(&env, "externalartifact/app-backend").await;
    let frontend = wait_for(
        &env,
        "externalartifact/app-frontend -n flux-system",
        "Ready",
        ready,
    )
    .await;
    assert_eq!(text(&frontend, "/metadata/labels/app"), "frontend");
    assert_eq!(text(&frontend, "/metadata/labels/team"), "platform");
    assert_eq!(
        artifact_files(text(&frontend, "/status/artifact/url")).await,
        ["cm.yaml"]
    );
    let backend = wait_for(
        &env,
        "externalartifact/app-backend -n flux-system",
        "Ready",
        ready,
    )
    .await;
    assert_eq!(
        artifact_files(text(&backend, "/status/artifact/url")).await,
        ["cm.yaml"]
    );

    // The backend directory goes: so does its ExternalArtifact.
    repo.git(&["rm", "-r", "-q", "apps/backend"]);
    repo.commit("no backend");
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "-n",
        "flux-system",
        "gitrepository/repo",
        "reconcile.fluxcd.io/requestedAt=one",
    ]);
    wait_for(
        &env,
        "artifactgenerator/apps -n flux-system",
        "one artifact",
        |o| {
            ready(o)
                && o["status"]["inventory"]
                    .as_array()
                    .is_some_and(|i| i.len() == 1)
        },
    )
    .await;
    let left = env.server.ok(&[
        "get",
        "externalartifacts",
        "-n",
        "flux-system",
        "-o",
        "name",
    ]);
    assert_eq!(
        left.trim(),
        "externalartifact.source.toolkit.fluxcd.io/app-frontend"
    );
}
