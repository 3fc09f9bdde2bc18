//! `tidegate install --export` and `tidegate controllers --components source-controller` as a
//! user runs them: CRDs applied with real kubectl, Flux's documented GitRepository manifests
//! accepted unchanged, and one of them reconciled to Ready by the controller process.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;

use std::process::{Child, Command, Stdio};

fn kubectl(kc: &str, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    if let Some(text) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Flux's documented examples (docs/spec/v1/gitrepositories.md), as published.
const FLUX_DOC_EXAMPLES: &str = r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: podinfo
  namespace: default
spec:
  interval: 5m0s
  url: https://github.com/stefanprodan/podinfo
  ref:
    branch: master
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: codecommit-repository
  namespace: flux-system
spec:
  interval: 5m0s
  provider: aws
  serviceAccountName: my-tenant
  url: https://git-codecommit.<region>.amazonaws.com/v1/repos/<repository-name>
  ref:
    branch: main
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: podinfo-verify
  namespace: default
spec:
  interval: 1m
  url: https://github.com/stefanprodan/podinfo
  ref:
    branch: master
  verify:
    mode: HEAD
    secretRef:
      name: pgp-public-keys
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: podinfo-sparse
  namespace: default
spec:
  interval: 5m
  url: https://github.com/stefanprodan/podinfo
  ref:
    branch: master
  sparseCheckout:
  - charts
  - kustomize
"#;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn install_export_then_controllers_reconcile_a_documented_manifest() {
    let server = tidegate_apiserver::ApiServer::start(tidegate_apiserver::Config {
        workload_simulator: Some(std::time::Duration::from_millis(200)),
        ..Default::default()
    })
    .await
    .expect("server starts");
    let tmp = tempfile::tempdir().unwrap();
    let kubeconfig = tmp.path().join("kubeconfig");
    std::fs::write(&kubeconfig, &server.kubeconfig).unwrap();
    let kc = kubeconfig.to_str().unwrap();

    // tidegate install --export | kubectl apply --server-side -f -
    let export = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(["install", "--export"])
        .output()
        .unwrap();
    assert!(export.status.success());
    let manifests = String::from_utf8(export.stdout).unwrap();
    // Flux's `--components-extra` adds the image controllers; an unknown one is refused.
    let extra = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args([
            "install",
            "--export",
            "--components-extra=image-reflector-controller,image-automation-controller",
        ])
        .output()
        .unwrap();
    assert!(extra.status.success());
    assert!(
        String::from_utf8_lossy(&extra.stdout).contains("- --components=source-controller,kustomize-controller,helm-controller,notification-controller,image-reflector-controller,image-automation-controller\n"),
        "{}",
        String::from_utf8_lossy(&extra.stdout)
    );
    let unknown = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args([
            "install",
            "--export",
            "--components-extra=imaginary-controller",
        ])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .contains("unknown component \"imaginary-controller\""),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    let applied = kubectl(kc, &["apply", "--server-side", "-f", "-"], Some(&manifests));
    assert!(applied.contains("customresourcedefinition.apiextensions.k8s.io/gitrepositories.source.toolkit.fluxcd.io serverside-applied"), "{applied}");
    kubectl(
        kc,
        &[
            "wait",
            "--for=condition=Established",
            "crd/gitrepositories.source.toolkit.fluxcd.io",
        ],
        None,
    );
    assert!(
        applied.contains("namespace/flux-system serverside-applied"),
        "{applied}"
    );
    assert!(
        applied.contains("deployment.apps/tidegate-controllers serverside-applied"),
        "{applied}"
    );
    for service in [
        "source-controller",
        "notification-controller",
        "webhook-receiver",
    ] {
        assert!(
            applied.contains(&format!("service/{service} serverside-applied")),
            "{applied}"
        );
    }
    assert!(
        manifests.contains("- --events-addr=http://notification-controller.$(RUNTIME_NAMESPACE).svc.cluster.local./\n        - --receiver-addr=:9292\n"),
        "{manifests}"
    );
    assert!(applied.contains("clusterrolebinding.rbac.authorization.k8s.io/cluster-reconciler-flux-system serverside-applied"), "{applied}");
    // Flux's RBAC, named as `flux install` names it.
    for object in [
        "clusterrole.rbac.authorization.k8s.io/crd-controller-flux-system",
        "clusterrolebinding.rbac.authorization.k8s.io/crd-controller-flux-system",
        "clusterrole.rbac.authorization.k8s.io/flux-view-flux-system",
        "clusterrole.rbac.authorization.k8s.io/flux-edit-flux-system",
        "serviceaccount/kustomize-controller",
        "serviceaccount/helm-controller",
    ] {
        assert!(
            applied.contains(&format!("{object} serverside-applied")),
            "{applied}"
        );
    }
    assert!(
        !manifests.contains("--no-cross-namespace-refs"),
        "single-tenant by default"
    );
    let locked = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(["install", "--export", "--multi-tenant"])
        .output()
        .unwrap();
    let locked = String::from_utf8(locked.stdout).unwrap();
    assert!(
        locked.contains("        - --no-cross-namespace-refs=true\n        - --no-remote-bases=true\n        - --default-service-account=default\n"),
        "{locked}"
    );
    // tidegate check: the version floor, the (simulated) controllers' Deployment, the CRDs.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let check = loop {
        let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
            .args(["check", "--kubeconfig", kc])
            .output()
            .unwrap();
        if out.status.success() || std::time::Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let report = String::from_utf8_lossy(&check.stderr).into_owned();
    assert!(check.status.success(), "{report}");
    assert!(
        report.starts_with("► checking prerequisites\n✔ Kubernetes 1."),
        "{report}"
    );
    assert!(
        report.contains("✔ tidegate-controllers: deployment ready\n► ghcr.io/tidegate/tidegate:v"),
        "{report}"
    );
    assert!(
        report.contains("✔ kustomizations.kustomize.toolkit.fluxcd.io\n"),
        "{report}"
    );
    assert!(report.ends_with("✔ all checks passed\n"), "{report}");

    // Flux's documented manifests are accepted unchanged (server-side validation, no writes).
    let dry = kubectl(
        kc,
        &["apply", "--dry-run=server", "-f", "-"],
        Some(FLUX_DOC_EXAMPLES),
    );
    assert_eq!(dry.matches("(server dry run)").count(), 4, "{dry}");
    // A manifest Flux rejects is rejected here too.
    let bad = FLUX_DOC_EXAMPLES
        .split("---\n")
        .next()
        .unwrap()
        .replace("interval: 5m0s", "interval: soon");
    let out = Command::new("kubectl")
        .args(["--kubeconfig", kc, "apply", "-f", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(bad.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("spec.interval"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The controllers, as a process, against that cluster.
    let repo = git_support::Repo::new();
    repo.git(&["checkout", "-q", "-b", "master"]);
    repo.write(
        "kustomize/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: podinfo\n",
    );
    let commit = repo.commit("Merge pull request #160 from stefanprodan/release-6.0.3");
    let daemon = git_support::GitDaemon::start(&repo.base);
    let storage_port = git_support::free_port();
    let metrics_port = git_support::free_port();
    let health_port = git_support::free_port();
    let storage = tmp.path().join("storage");
    let _controllers = Killed(
        Command::new(env!("CARGO_BIN_EXE_tidegate"))
            .args([
                "controllers",
                "--components",
                "source-controller",
                "--kubeconfig",
                kc,
            ])
            .arg("--storage-path")
            .arg(&storage)
            .args(["--storage-addr", &format!("127.0.0.1:{storage_port}")])
            .args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")])
            .args(["--health-addr", &format!("127.0.0.1:{health_port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // The documented podinfo manifest, pointed at a local server (the test machine is offline).
    let podinfo = FLUX_DOC_EXAMPLES.split("---\n").next().unwrap().replace(
        "https://github.com/stefanprodan/podinfo",
        &daemon.url("repo.git"),
    );
    kubectl(kc, &["apply", "-f", "-"], Some(&podinfo));
    kubectl(
        kc,
        &[
            "wait",
            "--for=condition=Ready",
            "gitrepository/podinfo",
            "--timeout=60s",
        ],
        None,
    );
    let revision = kubectl(
        kc,
        &[
            "get",
            "gitrepository/podinfo",
            "-o",
            "jsonpath={.status.artifact.revision}",
        ],
        None,
    );
    assert_eq!(revision, format!("master@sha1:{commit}"));
    let url = kubectl(
        kc,
        &[
            "get",
            "gitrepository/podinfo",
            "-o",
            "jsonpath={.status.artifact.url}",
        ],
        None,
    );
    assert_eq!(
        url,
        format!("http://127.0.0.1:{storage_port}/gitrepository/default/podinfo/{commit}.tar.gz")
    );
    let digest = kubectl(
        kc,
        &[
            "get",
            "gitrepository/podinfo",
            "-o",
            "jsonpath={.status.artifact.digest}",
        ],
        None,
    );
    let (_, served) = git_support::download(&url).await;
    let client = tidegate_source::tls::http_client();
    assert_eq!(digest, served);
    let events = kubectl(
        kc,
        &[
            "get",
            "events",
            "--field-selector",
            "reason=NewArtifact",
            "-o",
            "jsonpath={.items[*].message}",
        ],
        None,
    );
    // Flux's docs show the whole subject; its code (and ours) cuts subjects at 50 characters.
    assert_eq!(
        events,
        "stored artifact for commit 'Merge pull request #160 from stefanprodan/release-...'"
    );
    let metrics = client
        .get(format!("http://127.0.0.1:{metrics_port}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("gotk_reconcile_duration_seconds_bucket"),
        "{metrics}"
    );
    for probe in ["healthz", "readyz"] {
        let url = format!("http://127.0.0.1:{health_port}/{probe}");
        let status = client.get(&url).send().await.unwrap().status();
        assert!(status.is_success(), "{probe}: {status}");
    }
    // tidegate create source git into that installation: the controllers reconcile it.
    let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args([
            "create",
            "source",
            "git",
            "created",
            "--url",
            &daemon.url("repo.git"),
        ])
        .args(["--branch", "master", "--kubeconfig", kc])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.ends_with(&format!("✔ fetched revision: master@sha1:{commit}\n")),
        "{err}"
    );
}
