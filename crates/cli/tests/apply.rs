//! `tidegate apply` as a user runs it, against an embedded API server with the workload
//! simulator: the change set on stdout, the no-op run, prune through the inventory, health
//! waits, dry runs and failing exits.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

fn tidegate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(args)
        .output()
        .expect("tidegate runs")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "tidegate failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join(name), text).expect("write");
}

const APP: &str = r#"apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {mode: fast}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
"#;

#[tokio::test(flavor = "multi_thread")]
async fn apply_prune_wait_and_failures() {
    let server = tidegate_apiserver::ApiServer::start(tidegate_apiserver::Config {
        workload_simulator: Some(Duration::from_millis(100)),
        ..Default::default()
    })
    .await
    .expect("server starts");
    let tmp = tempfile::tempdir().expect("tempdir");
    let kubeconfig = tmp.path().join("kubeconfig");
    std::fs::write(&kubeconfig, &server.kubeconfig).expect("kubeconfig");
    let kc = kubeconfig.to_str().expect("utf-8");
    let dir = tmp.path().join("app");
    let d = dir.to_str().expect("utf-8");
    write(&dir, "app.yaml", APP);
    let common = ["--kubeconfig", kc, "--inventory", "shop", "--prune"];
    let run = |extra: &[&str]| {
        let mut args = vec!["apply", d];
        args.extend(common);
        args.extend(extra);
        tidegate(&args)
    };
    let first = stdout(&run(&["--wait", "--timeout", "30s"]));
    assert!(
        first.starts_with(
            "Namespace/shop created\nConfigMap/shop/settings created\nDeployment/shop/web created\nall 3 objects are healthy"
        ),
        "{first}"
    );
    assert_eq!(
        stdout(&run(&[])),
        "Namespace/shop unchanged\nConfigMap/shop/settings unchanged\nDeployment/shop/web unchanged\n"
    );
    // A dry run of a change reports it and writes nothing.
    write(&dir, "app.yaml", &APP.replace("mode: fast", "mode: safe"));
    assert!(stdout(&run(&["--dry-run"])).contains("ConfigMap/shop/settings configured (dry run)"));
    // Removing the ConfigMap from the directory prunes it.
    let without_cm: Vec<&str> = APP
        .split("---\n")
        .filter(|d| !d.contains("ConfigMap"))
        .collect();
    write(&dir, "app.yaml", &without_cm.join("---\n"));
    assert_eq!(
        stdout(&run(&[])),
        "Namespace/shop unchanged\nDeployment/shop/web unchanged\nConfigMap/shop/settings deleted\n"
    );
    // A failing rollout exits non-zero with Flux's message.
    write(
        &dir,
        "app.yaml",
        &without_cm
            .join("---\n")
            .replace("metadata: {name: web, namespace: shop}", "metadata: {name: web, namespace: shop, annotations: {tidegate.dev/simulate: fail}}")
            .replace("nginx:1.27", "nginx:1.28"),
    );
    let out = run(&["--wait", "--timeout", "30s"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "failed early due to stalled resources: [Deployment/shop/web status: 'Failed']"
        ),
        "{err}"
    );
    // A broken manifest names the file; an unreachable server fails with one clear line.
    write(
        &dir,
        "app.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: shop\n",
    );
    let out = run(&[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("app.yaml"));
    server.shutdown().await;
}
