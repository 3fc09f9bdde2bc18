//! Real helm (v4.1 and v3.17) against the embedded server with its workload simulator: the
//! release lifecycle a user runs every day. helm comes from `scripts/install-test-tools.sh`
//! (CI runs it); a missing helm fails the test.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn helm_bin(version: &str, env: &str) -> PathBuf {
    let path = std::env::var_os(env).map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").unwrap_or_default();
        let tools = std::env::var_os("TIDEGATE_TOOLS")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(&home).join(".cache/tidegate-tools"));
        tools.join(format!("helm-{version}/helm"))
    });
    assert!(
        path.is_file(),
        "helm {version} is not at {} (run scripts/install-test-tools.sh, or set {env})",
        path.display()
    );
    path
}

struct Helm<'a> {
    bin: PathBuf,
    t: &'a common::TestServer,
    home: PathBuf,
}

impl Helm<'_> {
    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.bin)
            .args(args)
            .arg("--kubeconfig")
            .arg(&self.t.kubeconfig)
            .env("HELM_CACHE_HOME", self.home.join("cache"))
            .env("HELM_CONFIG_HOME", self.home.join("config"))
            .env("HELM_DATA_HOME", self.home.join("data"))
            .env_remove("KUBECONFIG")
            .output()
            .unwrap_or_else(|e| panic!("running {}: {e}", self.bin.display()))
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "helm {args:?} failed:\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            !out.status.success(),
            "helm {args:?} should have failed:\nstdout: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

/// A test pod that fails when `failingTest` is set: its container "exits 1" in the simulator.
const FAILING_TEST: &str = r#"{{- if .Values.failingTest }}
apiVersion: v1
kind: Pod
metadata:
  name: "{{ .Release.Name }}-failing-test"
  annotations:
    "helm.sh/hook": test
    tidegate.dev/simulate: fail
spec:
  restartPolicy: Never
  containers:
  - name: check
    image: busybox
    command: ["false"]
{{- end }}
"#;

fn lifecycle(version: &str, env: &str) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let t = rt.block_on(common::start_simulated(200));
    let helm = Helm {
        bin: helm_bin(version, env),
        t: &t,
        home: t.dir.path().join("helm-home"),
    };
    let chart = t.dir.path().join("app");
    let chart_arg = chart.to_str().expect("utf-8 path");
    helm.ok(&["create", chart_arg]);
    std::fs::write(chart.join("templates/tests/failing.yaml"), FAILING_TEST).expect("write");

    // install --wait: the Deployment's ReplicaSet and Pods become ready, the Service gets an IP.
    let out = helm.ok(&["install", "web", chart_arg, "--wait", "--timeout", "60s"]);
    assert!(out.contains("STATUS: deployed"), "{out}");
    let svc = t.ok(&["get", "svc", "web-app", "-o", "jsonpath={.spec.clusterIP}"]);
    assert!(svc.starts_with("10.96."), "ClusterIP allocated: {svc}");
    let rs = t.ok(&[
        "get",
        "rs",
        "-l",
        "app.kubernetes.io/instance=web",
        "-o",
        "jsonpath={.items[*].metadata.ownerReferences[0].name}",
    ]);
    assert_eq!(rs, "web-app", "the Deployment owns its ReplicaSet");

    // test: a passing test pod runs to completion.
    let out = helm.ok(&["test", "web", "--timeout", "60s"]);
    assert!(out.contains("Phase:          Succeeded"), "{out}");
    assert!(!out.contains("Failed"), "{out}");

    // A failing test pod fails the test command.
    helm.ok(&[
        "upgrade",
        "web",
        chart_arg,
        "--set",
        "failingTest=true",
        "--wait",
    ]);
    let err = helm.fails(&["test", "web", "--timeout", "60s"]);
    assert!(err.contains("web-failing-test"), "{err}");

    // install --atomic of a release that never becomes ready is rolled back (removed).
    let err = helm.fails(&[
        "install",
        "broken",
        chart_arg,
        "--set",
        "podAnnotations.tidegate\\.dev/simulate=fail",
        "--atomic",
        "--timeout",
        "5s",
    ]);
    assert!(
        err.contains("atomic") || err.contains("uninstalled") || err.contains("rolled back"),
        "{err}"
    );
    let list = helm.ok(&["list", "-q", "--deployed", "--failed", "--pending"]);
    assert_eq!(list.trim(), "web", "the failed release is gone: {list}");
    let stored = t.ok(&[
        "get",
        "secrets",
        "-l",
        "owner=helm,name=broken",
        "-o",
        "name",
    ]);
    assert!(stored.trim().is_empty(), "{stored}");

    // upgrade past the history limit: helm prunes its release Secrets (DELETE as protobuf).
    for i in 0..12 {
        helm.ok(&[
            "upgrade",
            "web",
            chart_arg,
            "--set",
            &format!("replicaCount={}", i % 3 + 1),
        ]);
    }
    let history = helm.ok(&["history", "web", "--max", "100"]);
    let revisions: Vec<&str> = history.lines().skip(1).collect();
    assert_eq!(revisions.len(), 10, "history is capped at 10:\n{history}");
    assert!(revisions[9].starts_with("14 "), "{history}");
    let secrets = t.ok(&["get", "secrets", "-l", "owner=helm,name=web", "-o", "name"]);
    assert_eq!(secrets.lines().count(), 10, "{secrets}");

    // rollback to an older revision.
    let out = helm.ok(&["rollback", "web", "10", "--wait"]);
    assert!(out.contains("Rollback was a success"), "{out}");
    let history = helm.ok(&["history", "web"]);
    assert!(history.contains("Rollback to 10"), "{history}");

    // uninstall removes the release; the name can be used again.
    let out = helm.ok(&["uninstall", "web", "--wait"]);
    assert!(out.contains("release \"web\" uninstalled"), "{out}");
    let left = t.ok(&[
        "get",
        "secrets,deploy,svc",
        "-l",
        "app.kubernetes.io/instance=web",
        "-o",
        "name",
    ]);
    assert!(left.trim().is_empty(), "left behind: {left}");
    assert!(
        helm.ok(&[
            "list",
            "-q",
            "--deployed",
            "--failed",
            "--pending",
            "--uninstalling"
        ])
        .trim()
        .is_empty()
    );
    let out = helm.ok(&["install", "web", chart_arg, "--wait"]);
    assert!(out.contains("STATUS: deployed"), "{out}");
    helm.ok(&["uninstall", "web"]);
}

#[test]
fn helm4_release_lifecycle() {
    lifecycle("v4.1.4", "TIDEGATE_HELM4");
}

#[test]
fn helm3_release_lifecycle() {
    lifecycle("v3.17.2", "TIDEGATE_HELM3");
}
