//! Flux's sharding: two kustomize-controller processes with `--watch-label-selector` split the
//! Kustomizations between them by the `sharding.fluxcd.io/key` label.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use git_support::Repo;
use up_support::*;

/// A child process killed when dropped; its stderr goes to a log file, printed when the test
/// fails so that a process that exited or stalled says why.
struct Running(Child, std::path::PathBuf);

impl Drop for Running {
    fn drop(&mut self) {
        let exited = self.0.try_wait().ok().flatten();
        let _ = self.0.kill();
        let _ = self.0.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.1).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!(
                "--- {} (exited early: {exited:?}), last lines:",
                self.1.display()
            );
            for line in tail.iter().rev() {
                eprintln!("{line}");
            }
        }
    }
}

fn spawn(log: &Path, args: &[&str]) -> Running {
    let file = std::fs::File::create(log).expect("log file");
    Running(
        Command::new(env!("CARGO_BIN_EXE_tidegate"))
            .args(args)
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("tidegate runs"),
        log.to_path_buf(),
    )
}

/// `tidegate controllers` with `components` and extra flags, on free ports.
fn controllers(kc: &Path, dir: &Path, components: &str, extra: &[&str]) -> Running {
    let free = || format!("127.0.0.1:{}", git_support::free_port());
    let mut args: Vec<String> = [
        "controllers",
        "--kubeconfig",
        kc.to_str().unwrap(),
        "--components",
        components,
        "--storage-path",
        dir.to_str().unwrap(),
        "--allow-file-urls",
        "--storage-addr",
        &free(),
        "--metrics-addr",
        &free(),
        "--health-addr",
        &free(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    std::fs::create_dir_all(dir).expect("storage directory");
    spawn(&dir.join("controllers.log"), &args)
}

/// Whether the Kustomization has been reconciled to Ready.
fn reconciled(kc: &Path, name: &str) -> bool {
    let k = json(kc, &["-n", "default", "get", "kustomization", name]);
    ready(&k).is_some_and(|(s, _)| s == "True")
}

#[test]
fn two_controller_processes_split_kustomizations_by_shard_label() {
    let dir = tempfile::tempdir().unwrap();
    let port = git_support::free_port();
    let _api = spawn(
        &dir.path().join("apiserver.log"),
        &[
            "apiserver",
            "--data-dir",
            dir.path().join("api").to_str().unwrap(),
            "--listen",
            &format!("127.0.0.1:{port}"),
        ],
    );
    let kc = dir.path().join("api/kubeconfig");
    wait_until("the API server", || {
        kc.exists() && kubectl_ok(&kc, &["get", "ns"])
    });
    let export = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(["install", "--export"])
        .output()
        .unwrap();
    let crds: Vec<&str> = std::str::from_utf8(&export.stdout)
        .unwrap()
        .split("\n---\n")
        .filter(|d| d.contains("kind: CustomResourceDefinition"))
        .collect();
    assert!(crds.len() >= 2, "the CRDs are exported");
    kubectl_stdin(
        &kc,
        &["apply", "--server-side", "-f", "-"],
        &crds.join("\n---\n"),
    );
    kubectl(
        &kc,
        &[
            "wait",
            "--for=condition=Established",
            "crd/gitrepositories.source.toolkit.fluxcd.io",
            "crd/kustomizations.kustomize.toolkit.fluxcd.io",
        ],
    );

    let repo = Repo::new();
    for name in ["one", "two"] {
        repo.write(
            &format!("{name}/cm.yaml"),
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  k: v\n"),
        );
    }
    repo.commit("two apps");
    let objects = format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: repo\n  namespace: default\nspec:\n  interval: 1h\n  url: {}\n  ref:\n    branch: main\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: one\n  namespace: default\n  labels:\n    sharding.fluxcd.io/key: shard1\nspec:\n  interval: 1h\n  path: ./one\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: repo\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: two\n  namespace: default\nspec:\n  interval: 1h\n  path: ./two\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: repo\n",
        repo.file_url()
    );
    kubectl_stdin(&kc, &["apply", "-f", "-"], &objects);

    let storage = dir.path().join("artifacts");
    let _source = controllers(&kc, &storage, "source-controller", &[]);
    // The shard alone: it reconciles its Kustomization and leaves the other untouched.
    let shard = controllers(
        &kc,
        &dir.path().join("shard"),
        "kustomize-controller",
        &[
            "--watch-label-selector",
            "sharding.fluxcd.io/key in (shard1)",
        ],
    );
    wait_until("the shard's Kustomization", || reconciled(&kc, "one"));
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        let two = json(&kc, &["-n", "default", "get", "kustomization", "two"]);
        assert!(ready(&two).is_none(), "the shard took another's: {two:#}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(!kubectl_ok(
        &kc,
        &["-n", "default", "get", "configmap", "two"]
    ));
    drop(shard);
    // The main instance, which excludes every shard: it reconciles the other one only.
    let _main = controllers(
        &kc,
        &dir.path().join("main"),
        "kustomize-controller",
        &["--watch-label-selector", "!sharding.fluxcd.io/key"],
    );
    wait_until("the main instance's Kustomization", || {
        reconciled(&kc, "two")
    });
    assert!(kubectl_ok(
        &kc,
        &["-n", "default", "get", "configmap", "two"]
    ));
    // A change to the shard's Kustomization is not the main instance's to apply.
    kubectl(
        &kc,
        &[
            "-n",
            "default",
            "annotate",
            "kustomization",
            "one",
            "reconcile.fluxcd.io/requestedAt=after-the-shard-stopped",
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        let one = json(&kc, &["-n", "default", "get", "kustomization", "one"]);
        assert_ne!(
            one["status"]["lastHandledReconcileAt"], "after-the-shard-stopped",
            "the main instance reconciled a shard's Kustomization"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // A malformed selector is refused at start, in one line.
    let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args([
            "controllers",
            "--kubeconfig",
            kc.to_str().unwrap(),
            "--watch-label-selector",
            "sharding.fluxcd.io/key in (",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("✗ --watch-label-selector \"sharding.fluxcd.io/key in (\": ")
            && err.lines().count() == 1,
        "{err}"
    );
}
