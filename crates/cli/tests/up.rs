//! `tidegate up` as a user runs it: the binary, a data directory, real git and real kubectl.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use up_support::*;

#[test]
fn up_example_converges_stops_cleanly_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = git_support::free_port();
    let mut first = up(&data, port, &["--example"], true);
    let kc = first.kubeconfig.clone();
    assert!(
        all_ready(&kc, "main@sha1:"),
        "{}",
        kubectl(&kc, &["get", "ks", "-A"])
    );
    let names: Vec<String> = json(&kc, &["get", "kustomizations", "-n", "flux-system"])["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "apps-production",
            "apps-staging",
            "flux-system",
            "infrastructure"
        ]
    );
    // The example's generic Receiver: ready, and a POST to its path asks the GitRepository to
    // reconcile now.
    let receiver = json(&kc, &["-n", "flux-system", "get", "receiver", "example"]);
    let path = receiver["status"]["webhookPath"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(path.starts_with("/hook/"), "{receiver}");
    let address = std::fs::read_to_string(data.join("receiver-address")).unwrap();
    let answer = {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(address.trim()).unwrap();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            address.trim()
        )
        .unwrap();
        let mut text = String::new();
        let _ = stream.read_to_string(&mut text);
        text
    };
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let repo = json(
        &kc,
        &["-n", "flux-system", "get", "gitrepository", "flux-system"],
    );
    assert!(
        repo["metadata"]["annotations"]["reconcile.fluxcd.io/requestedAt"].is_string(),
        "{repo}"
    );
    // The apps are there, overlaid and substituted, and healthy through the simulator.
    let prod = json(&kc, &["-n", "production", "get", "deployment", "podinfo"]);
    assert_eq!(prod["spec"]["replicas"], 3);
    assert_eq!(
        prod["spec"]["template"]["spec"]["containers"][0]["image"],
        "ghcr.io/stefanprodan/podinfo:6.7.1"
    );
    assert_eq!(prod["status"]["readyReplicas"], 3);
    let staging = json(&kc, &["-n", "staging", "get", "greeting", "welcome"]);
    assert_eq!(staging["spec"]["message"], "Welcome to local-staging");
    assert_eq!(staging["spec"]["repeat"], 1, "CRD default applied");
    let revision = json(
        &kc,
        &["-n", "flux-system", "get", "gitrepository", "flux-system"],
    )["status"]["artifact"]["revision"]
        .as_str()
        .unwrap()
        .to_string();
    interrupt(&mut first);
    drop(first);

    // The data directory keeps everything; the same example is not committed twice.
    let second = up(&data, port, &["--example"], true);
    assert!(all_ready(&second.kubeconfig, &revision));
    let again = json(&kc, &["-n", "production", "get", "deployment", "podinfo"]);
    assert_eq!(again["metadata"]["uid"], prod["metadata"]["uid"]);
}

#[test]
fn kill_9_during_a_reconcile_then_restart_converges_with_nothing_orphaned() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let repo = git_support::Repo::new();
    repo.write(
        "deploy/namespace.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: load\n",
    );
    for i in 0..150 {
        repo.write(
            &format!("deploy/cm-{i:03}.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:03}\n  namespace: load\ndata:\n  n: \"{i}\"\n"
            ),
        );
    }
    let sha = repo.commit("load");
    let port = git_support::free_port();
    let bare = repo.bare().display().to_string();
    let args = [
        "--git",
        bare.as_str(),
        "--path",
        "./deploy",
        "--interval",
        "1h",
    ];
    let mut first = up(&data, port, &args, false);
    let kc = first.kubeconfig.clone();
    // Kill as soon as some objects exist but the apply has not finished.
    wait_until("the apply to start", || {
        let n = json(
            &kc,
            &[
                "-n",
                "load",
                "get",
                "configmaps",
                "-l",
                "kustomize.toolkit.fluxcd.io/name=flux-system",
            ],
        )["items"]
            .as_array()
            .map_or(0, Vec::len);
        n > 0
    });
    first.child.kill().unwrap(); // SIGKILL
    first.child.wait().unwrap();
    drop(first);

    let second = up(&data, port, &args, false);
    let revision = format!("main@sha1:{sha}");
    wait_until("convergence after the restart", || {
        all_ready(&kc, &revision)
    });
    let owned = |kc: &Path| -> Vec<String> {
        let mut v: Vec<String> = json(
            kc,
            &[
                "-n",
                "load",
                "get",
                "configmaps",
                "-l",
                "kustomize.toolkit.fluxcd.io/name=flux-system",
            ],
        )["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["metadata"]["name"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    let inventory = |kc: &Path| -> Vec<String> {
        let k = json(
            kc,
            &["-n", "flux-system", "get", "kustomization", "flux-system"],
        );
        let mut v: Vec<String> = k["status"]["inventory"]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .filter(|id| id.ends_with("__ConfigMap"))
            .map(|id| {
                id.trim_start_matches("load_")
                    .trim_end_matches("__ConfigMap")
                    .to_string()
            })
            .collect();
        v.sort();
        v
    };
    let expected: Vec<String> = (0..150).map(|i| format!("cm-{i:03}")).collect();
    assert_eq!(owned(&kc), expected);
    assert_eq!(inventory(&kc), expected);

    // Nothing orphaned: removing files prunes exactly them.
    for i in 100..150 {
        std::fs::remove_file(repo.work().join(format!("deploy/cm-{i:03}.yaml"))).unwrap();
    }
    let sha2 = repo.commit("shrink");
    kubectl(
        &kc,
        &[
            "-n",
            "flux-system",
            "annotate",
            "--overwrite",
            "gitrepository/flux-system",
            &format!("reconcile.fluxcd.io/requestedAt={sha2}"),
        ],
    );
    let revision2 = format!("main@sha1:{sha2}");
    wait_until("the shrunk revision", || all_ready(&kc, &revision2));
    let expected: Vec<String> = (0..100).map(|i| format!("cm-{i:03}")).collect();
    assert_eq!(owned(&kc), expected);
    assert_eq!(inventory(&kc), expected);
    drop(second);
}

#[test]
fn flux_verbs_get_reconcile_suspend_resume_against_up() {
    let dir = tempfile::tempdir().unwrap();
    let up = up_example(dir.path());
    let kc = up.kubeconfig.clone();

    let (code, out, _) = tidegate(&kc, &["get", "kustomizations"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("NAME") && lines[0].ends_with("\tMESSAGE"),
        "{out}"
    );
    let cells: Vec<&str> = lines[0].split('\t').map(str::trim).collect();
    assert_eq!(cells, ["NAME", "REVISION", "SUSPENDED", "READY", "MESSAGE"]);
    assert_eq!(lines.len(), 5, "{out}");
    for l in &lines[1..] {
        let c: Vec<&str> = l.split('\t').map(str::trim).collect();
        assert!(c[1].starts_with("main@sha1:"), "{l}");
        assert_eq!(&c[2..4], ["False", "True"], "{l}");
        assert!(c[4].starts_with("Applied revision: main@sha1:"), "{l}");
    }
    let (code, out, _) = tidegate(&kc, &["get", "all", "-A"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("flux-system\tgitrepository/flux-system"),
        "{out}"
    );
    assert!(out.contains("kustomization/apps-staging"), "{out}");
    let (code, out, _) = tidegate(&kc, &["get", "ks", "apps-staging", "-o", "json"]);
    assert_eq!(code, 0);
    let obj: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(obj["kind"], "Kustomization");
    assert_eq!(obj["spec"]["path"], "./apps/staging");
    let (code, out, _) = tidegate(&kc, &["get", "all", "-o", "yaml"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("apiVersion: v1\nitems:\n"), "{out}");
    assert_eq!(out.matches("\n  kind: Kustomization\n").count(), 4, "{out}");
    assert_eq!(out.matches("\n  kind: GitRepository\n").count(), 1, "{out}");
    // --watch: the table, then a row per change.
    let mut watching = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(["get", "ks", "apps-staging", "--watch", "--kubeconfig"])
        .arg(&kc)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = watching.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let next = || {
        rx.recv_timeout(Duration::from_secs(30))
            .expect("a line from get --watch")
    };
    assert!(next().starts_with("NAME"));
    assert!(next().starts_with("apps-staging"));
    // Give the watch a moment to start after the table.
    std::thread::sleep(Duration::from_secs(1));
    let (code, _, err) = tidegate(&kc, &["suspend", "ks", "apps-staging"]);
    assert_eq!(code, 0, "{err}");
    let changed = next();
    let cells: Vec<&str> = changed.split('\t').map(str::trim).collect();
    assert_eq!(&cells[..1], ["apps-staging"], "{changed}");
    assert_eq!(cells[2], "True", "{changed}");
    let _ = watching.kill();
    let _ = watching.wait();
    let (code, _, err) = tidegate(&kc, &["resume", "ks", "apps-staging"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = tidegate(&kc, &["get", "sources", "git"]);
    assert_eq!(code, 0);
    assert!(
        out.lines().nth(1).unwrap().starts_with("flux-system"),
        "{out}"
    );

    let (code, _, err) = tidegate(
        &kc,
        &[
            "reconcile",
            "kustomization",
            "apps-staging",
            "--with-source",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let expected = [
        "► annotating GitRepository flux-system in flux-system namespace",
        "✔ GitRepository annotated",
        "◎ waiting for GitRepository reconciliation",
        "✔ fetched revision main@sha1:",
        "► annotating Kustomization apps-staging in flux-system namespace",
        "✔ Kustomization annotated",
        "◎ waiting for Kustomization reconciliation",
        "✔ applied revision main@sha1:",
    ];
    let got: Vec<&str> = err.lines().collect();
    assert_eq!(got.len(), expected.len(), "{err}");
    for (g, e) in got.iter().zip(expected) {
        assert!(g.starts_with(e), "{g:?} should start with {e:?}\n{err}");
    }

    let (code, _, err) = tidegate(&kc, &["suspend", "kustomization", "apps-staging"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("✔ kustomization suspended"), "{err}");
    let (_, out, _) = tidegate(&kc, &["get", "ks", "apps-staging"]);
    assert!(
        out.lines().nth(1).unwrap().contains("\tTrue     \t"),
        "{out}"
    );
    let (code, _, err) = tidegate(&kc, &["reconcile", "ks", "apps-staging"]);
    assert_eq!((code, err.trim()), (1, "✗ resource is suspended"));
    let (code, _, err) = tidegate(&kc, &["resume", "kustomization", "apps-staging"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("✔ kustomization resumed"), "{err}");
    assert!(
        err.contains("✔ Kustomization reconciliation completed"),
        "{err}"
    );
    assert!(err.contains("✔ applied revision main@sha1:"), "{err}");

    // Failures: one clear line, exit 1.
    let (code, _, err) = tidegate(&kc, &["get", "ks", "nope"]);
    assert_eq!(
        (code, err.trim()),
        (1, "✗ Kustomization 'flux-system/nope' not found")
    );
    let (code, _, err) = tidegate(&kc, &["reconcile", "source", "git", "nope"]);
    assert_eq!(
        (code, err.trim()),
        (1, "✗ GitRepository 'flux-system/nope' not found")
    );
    let (code, _, err) = tidegate(&kc, &["get", "ks", "-n", "empty"]);
    assert_eq!(
        (code, err.trim()),
        (0, "no Kustomization objects found in empty namespace")
    );
    // `up` runs the controllers in-process; check finds them by their Lease.
    let (code, _, err) = tidegate(&kc, &["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("✔ controllers: running without a deployment (lease tidegate-controllers-leader-election held by tidegate-up_"),
        "{err}"
    );
    assert!(err.ends_with("✔ all checks passed\n"), "{err}");
    let (code, out, _) = tidegate(&kc, &["version"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("tidegate: v") && out.contains("kubernetes: v1."),
        "{out}"
    );
    drop(up);
    // The server is gone: one line, exit 1.
    let (code, _, err) = tidegate(&kc, &["get", "ks"]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("✗ "), "{err}");
}

#[test]
fn flux_verbs_create_export_delete_against_up() {
    let dir = tempfile::tempdir().unwrap();
    // The GitRepository created below reads a repository on this machine.
    let up = up_example_with(dir.path(), &["--allow-file-urls"]);
    let kc = up.kubeconfig.clone();
    let repo = git_support::Repo::new();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../controllers/tests/data/podinfo/kustomize");
    for f in [
        "kustomization.yaml",
        "deployment.yaml",
        "service.yaml",
        "hpa.yaml",
    ] {
        repo.write(
            &format!("kustomize/{f}"),
            &std::fs::read_to_string(fixture.join(f)).unwrap(),
        );
    }
    let sha = repo.commit("podinfo");
    let url = repo.file_url();

    let (code, _, err) = tidegate(
        &kc,
        &[
            "create",
            "source",
            "git",
            "podinfo",
            "--url",
            &url,
            "--branch",
            "main",
            "--interval",
            "1m",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.starts_with("✚ generating GitRepository source\n► applying GitRepository source\n✔ GitRepository source created\n"), "{err}");
    assert!(
        err.contains(&format!("✔ fetched revision: main@sha1:{sha}")),
        "{err}"
    );
    let (code, _, err) = tidegate(
        &kc,
        &[
            "create",
            "kustomization",
            "podinfo",
            "--source",
            "GitRepository/podinfo",
            "--path",
            "./kustomize",
            "--prune=true",
            "--interval",
            "5m",
            "--target-namespace",
            "default",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("✔ applied revision: main@sha1:{sha}")),
        "{err}"
    );
    assert!(kubectl_ok(
        &kc,
        &["-n", "default", "get", "deployment", "podinfo"]
    ));

    let (code, out, _) = tidegate(&kc, &["export", "kustomization", "podinfo"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n"), "{out}");
    assert!(
        out.contains("  path: ./kustomize\n") && out.contains("  targetNamespace: default\n"),
        "{out}"
    );
    assert!(
        !out.contains("status:") && !out.contains("uid:") && !out.contains("managedFields"),
        "{out}"
    );
    let (code, out, _) = tidegate(&kc, &["export", "source", "git", "--all"]);
    assert_eq!(code, 0);
    assert_eq!(out.matches("---\n").count(), 2, "{out}");
    // The export applies back unchanged.
    let file = dir.path().join("export.yaml");
    std::fs::write(&file, &out).unwrap();
    kubectl(
        &kc,
        &[
            "apply",
            "--server-side",
            "--dry-run=server",
            "-f",
            file.to_str().unwrap(),
        ],
    );

    let (code, _, err) = tidegate(&kc, &["delete", "kustomization", "podinfo"]);
    assert_eq!(
        (code, err.trim()),
        (1, "✗ refusing to delete without confirmation; use --silent")
    );
    let (code, _, err) = tidegate(&kc, &["delete", "kustomization", "podinfo", "--silent"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "► deleting kustomization podinfo in flux-system namespace\n✔ kustomization deleted\n"
    );
    // prune: true — its objects go with it.
    wait_until("the pruned deployment to go", || {
        !kubectl_ok(&kc, &["-n", "default", "get", "deployment", "podinfo"])
    });
    let (code, _, err) = tidegate(
        &kc,
        &["create", "kustomization", "bad", "--source", "Helm/x"],
    );
    assert_eq!(code, 1);
    assert!(
        err.starts_with("✗ --source: unsupported kind 'Helm'"),
        "{err}"
    );
    // A Git server that accepts connections and never answers: the wait ends at --timeout
    // with one line.
    let hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hole_url = format!(
        "http://127.0.0.1:{}/repo.git",
        hole.local_addr().unwrap().port()
    );
    let (code, _, err) = tidegate(
        &kc,
        &[
            "create",
            "source",
            "git",
            "blackhole",
            "--url",
            &hole_url,
            "--branch",
            "main",
            "--timeout",
            "3s",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err.lines().last(),
        Some("✗ timeout waiting for GitRepository 'flux-system/blackhole' to be reconciled"),
        "{err}"
    );
    assert_eq!(err.matches('✗').count(), 1, "{err}");
    drop(hole);
    drop(up);
}

#[test]
fn flux_verbs_tree_and_stats_against_up() {
    let dir = tempfile::tempdir().unwrap();
    let up = up_example(dir.path());
    let kc = up.kubeconfig.clone();

    let (code, out, err) = tidegate(&kc, &["tree", "kustomization", "flux-system"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Kustomization/flux-system/flux-system", "{out}");
    assert_eq!(
        lines[1], "├── Kustomization/flux-system/apps-production",
        "{out}"
    );
    for expected in [
        "│   ├── Service/production/podinfo",
        "│   ├── Deployment/production/podinfo",
        "│   └── Greeting/production/welcome",
        "├── Kustomization/flux-system/apps-staging",
        "└── Kustomization/flux-system/infrastructure",
        "    ├── CustomResourceDefinition/greetings.example.tidegate.dev",
        "    └── Namespace/staging",
    ] {
        assert!(lines.contains(&expected), "missing {expected:?} in\n{out}");
    }
    // Every object of the example appears once: 3 Kustomizations, 3 infrastructure objects,
    // 4 per app.
    assert_eq!(lines.len(), 1 + 3 + 3 + 4 + 4, "{out}");

    let (code, out, _) = tidegate(&kc, &["stats"]);
    assert_eq!(code, 0);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split('\t').map(str::trim).collect())
        .collect();
    assert_eq!(
        rows[0],
        ["RECONCILERS", "RUNNING", "FAILING", "SUSPENDED", "STORAGE"]
    );
    assert_eq!(&rows[1][..4], ["GitRepository", "1", "0", "0"]);
    assert!(rows[1][4].ends_with("KiB"), "{out}");
    assert_eq!(rows[2], ["OCIRepository", "0", "0", "0", "0 B"]);
    assert_eq!(rows[3], ["HelmRepository", "0", "0", "0", "0 B"]);
    assert_eq!(rows[4], ["HelmChart", "0", "0", "0", "0 B"]);
    assert_eq!(rows[5], ["Kustomization", "4", "0", "0", "-"]);
    let (code, out, _) = tidegate(&kc, &["events", "--for", "Kustomization/apps-staging"]);
    assert_eq!(code, 0);
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap()
        .split('\t')
        .map(str::trim)
        .collect();
    assert_eq!(header, ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]);
    // The apply message's lines continue under the row that starts it.
    let progressing: Vec<&str> = out
        .lines()
        .skip_while(|l| !(l.contains("Kustomization/apps-staging") && l.contains("Progressing")))
        .take_while(|l| l.contains("Progressing") || l.starts_with(' '))
        .collect();
    assert!(
        progressing.iter().any(|l| l
            .trim_start()
            .ends_with("Deployment/staging/podinfo created")),
        "{out}"
    );
    // Flux's --for also shows the events of the object's source; a multi-line message
    // continues on lines of its own with the other columns blank.
    assert!(
        out.lines()
            .skip(1)
            .all(|l| l.contains("Kustomization/apps-staging")
                || l.contains("GitRepository/flux-system")
                || l.starts_with(' ')),
        "{out}"
    );
    assert!(out.contains("GitRepository/flux-system"), "{out}");
    let (code, out, _) = tidegate(&kc, &["events"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("GitRepository/flux-system") && out.contains("NewArtifact"),
        "{out}"
    );
    let (code, out, err) = tidegate(&kc, &["events", "--for", "Receiver/example"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines().skip(1).any(|l| l.contains("Receiver/example")
            && l.contains("Succeeded")
            && l.contains("Reconciliation finished")),
        "{out}"
    );
    let (code, _, err) = tidegate(&kc, &["events", "--for", "Deployment/podinfo"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("'Deployment' is not a recognized Flux kind"),
        "{err}"
    );
    let (code, _, err) = tidegate(&kc, &["events", "--types", "Fatal"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("type 'Fatal' not supported. Supported types are Normal, Warning"),
        "{err}"
    );
    let (code, out, err) = tidegate(&kc, &["events", "-A", "--types", "normal"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("NAMESPACE"), "{out}");
    assert!(
        out.lines()
            .skip(1)
            .all(|l| l.starts_with(' ') || l.contains("Normal")),
        "{out}"
    );
    let (code, out, err) = tidegate(&kc, &["trace", "deployment", "podinfo", "-n", "staging"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Object:          Deployment/podinfo", "{out}");
    assert_eq!(lines[1], "Namespace:       staging");
    assert_eq!(lines[2], "Status:          Managed by Flux");
    assert_eq!(lines[4], "Kustomization:   apps-staging");
    assert!(out.contains("Path:            ./apps/staging\n"), "{out}");
    assert!(out.contains("GitRepository:   flux-system\n"), "{out}");
    assert!(out.contains("Branch:          main\n"), "{out}");
    assert!(out.contains("Revision:        main@sha1:"), "{out}");
    assert!(
        out.contains("Message:         Applied revision: main@sha1:"),
        "{out}"
    );
    let (code, _, err) = tidegate(&kc, &["trace", "namespace", "kube-system"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("✗ Namespace/kube-system is not managed by Flux"),
        "{err}"
    );
    // build: the local files give exactly what the controller applied.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let prod = examples.join("apps/production").display().to_string();
    let (code, built, err) = tidegate(
        &kc,
        &["build", "kustomization", "apps-production", "--path", &prod],
    );
    assert_eq!(code, 0, "{err}");
    let spec_file = examples
        .join("clusters/local/apps.yaml")
        .display()
        .to_string();
    let (code, dry, err) = tidegate(
        &kc,
        &[
            "build",
            "kustomization",
            "apps-production",
            "--path",
            &prod,
            "--kustomization-file",
            &spec_file,
            "--dry-run",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(built, dry);
    assert!(
        built.contains("  message: Welcome to local-production\n"),
        "{built}"
    );
    assert!(
        built.contains("    kustomize.toolkit.fluxcd.io/name: apps-production\n"),
        "{built}"
    );
    let live = json(
        &kc,
        &[
            "-n",
            "production",
            "get",
            "configmaps",
            "-l",
            "kustomize.toolkit.fluxcd.io/name=apps-production",
        ],
    );
    let live_name = live["items"][0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        built.contains(&format!("  name: {live_name}\n")),
        "{live_name} not in\n{built}"
    );
    // diff: nothing locally changed → exit 0 and silence; one edit → only that change, exit 1;
    // pushed and reconciled → exit 0 again.
    let work = dir.path().join("work");
    git_support::run(Command::new("git").args([
        "clone",
        "-q",
        dir.path().join("data/example.git").to_str().unwrap(),
        work.to_str().unwrap(),
    ]));
    let prod_dir = work.join("apps/production").display().to_string();
    let diff_production = || {
        tidegate(
            &kc,
            &[
                "diff",
                "kustomization",
                "apps-production",
                "--path",
                &prod_dir,
            ],
        )
    };
    let (code, out, err) = diff_production();
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let file = work.join("apps/production/kustomization.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("count: 3", "count: 4")).unwrap();
    let (code, out, err) = diff_production();
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        out,
        "► Deployment/production/podinfo drifted\n\nspec.replicas\n± value change\n- 3\n+ 4\n\n"
    );
    let git = |args: &[&str]| {
        git_support::run(
            Command::new("git")
                .args(["-c", "user.name=T", "-c", "user.email=t@tidegate.invalid"])
                .args(args)
                .current_dir(&work),
        )
    };
    // A Secret goes along, so that a later change of its value can be diffed.
    let secret = |value: &str| {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-token\nstringData:\n  token: {value}\n  user: admin\n"
        )
    };
    std::fs::write(work.join("apps/production/secret.yaml"), secret("s3cr3t")).unwrap();
    std::fs::write(
        &file,
        std::fs::read_to_string(&file)
            .unwrap()
            .replace("  - ../base\n", "  - ../base\n  - secret.yaml\n"),
    )
    .unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-qam", "four replicas"]);
    git(&["push", "-q", "origin", "HEAD:main"]);
    let (code, _, err) = tidegate(
        &kc,
        &["reconcile", "ks", "apps-production", "--with-source"],
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = diff_production();
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    // A changed Secret value shows as changed, masked (Flux's words), and exits 1.
    std::fs::write(
        work.join("apps/production/secret.yaml"),
        secret("n3w-s3cr3t"),
    )
    .unwrap();
    let (code, out, err) = diff_production();
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        out,
        "► Secret/production/api-token drifted\n\ndata.token\n± value change\n- *** (before)\n+ *** (after)\n\n"
    );
    assert!(
        !out.contains("s3cr3t") && !out.contains("czNjcjN0"),
        "{out}"
    );
    let (code, _, err) = tidegate(
        &kc,
        &[
            "diff",
            "kustomization",
            "apps-production",
            "--path",
            "/nonexistent",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("✗ --path /nonexistent: no such directory"),
        "{err}"
    );
    let (code, _, err) = tidegate(&kc, &["tree", "ks", "nope"]);
    assert_eq!(
        (code, err.trim()),
        (1, "✗ Kustomization 'flux-system/nope' not found")
    );
    drop(up);
}
