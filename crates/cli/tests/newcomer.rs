//! `tidegate up` and the CLI as a newcomer meets them: a restart keeps the user's pushes, a
//! failure hands over at once and is said once, signals are handled from the first moment and
//! a stop is quiet, errors are one line.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use std::process::Command;

use up_support::*;

/// The lines printed between `► shutting down` and `✔ stopped`, which must hold nothing else.
fn shutdown_noise(lines: &[String]) -> Vec<String> {
    let start = lines
        .iter()
        .position(|l| l == "► shutting down")
        .unwrap_or_else(|| panic!("no shutdown line:\n{}", lines.join("\n")));
    assert_eq!(
        lines.last().map(String::as_str),
        Some("✔ stopped"),
        "{}",
        lines.join("\n")
    );
    lines[start + 1..lines.len() - 1].to_vec()
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    git_support::run(
        Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@tidegate.invalid"])
            .args(args)
            .current_dir(dir),
    )
}

#[test]
fn restart_keeps_pushes_failures_hand_over_once_and_stops_are_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = git_support::free_port();
    // A normal first start: nothing fails, no race with the first fetch is shown as one.
    let mut first = up_logged(
        &data,
        port,
        &["--example", "--interval", "2m"],
        &[("RUST_BACKTRACE", "1")],
    );
    first.wait_for("the hand-over", |l| l.starts_with("kubeconfig: "));
    let kc = first.up.kubeconfig.clone();
    let lines = first.lines();
    assert!(
        !lines
            .iter()
            .any(|l| l.contains('✗') || l.contains("Source artifact not found")),
        "{}",
        lines.join("\n")
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("✔ Kustomization flux-system/apps-staging: Applied revision")),
        "{}",
        lines.join("\n")
    );
    // --interval reaches both bootstrap objects.
    for kind in ["gitrepository", "kustomization"] {
        let obj = json(&kc, &["-n", "flux-system", "get", kind, "flux-system"]);
        assert_eq!(obj["spec"]["interval"], "2m", "{kind}");
    }
    first.stop("TERM");
    let lines = first.lines();
    assert_eq!(shutdown_noise(&lines), Vec::<String>::new());
    assert!(
        !lines.iter().any(|l| l.contains('\u{1b}')),
        "no colours off a terminal"
    );

    // The user pushes: production scaled, staging given two invalid ConfigMaps.
    let work = dir.path().join("work");
    git_support::run(Command::new("git").args([
        "clone",
        "-q",
        data.join("example.git").to_str().unwrap(),
        work.to_str().unwrap(),
    ]));
    let prod = work.join("apps/production/kustomization.yaml");
    let text = std::fs::read_to_string(&prod).unwrap();
    std::fs::write(&prod, text.replace("count: 3", "count: 2")).unwrap();
    std::fs::write(
        work.join("apps/staging/broken.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken-a\ndata:\n  a: {not: text}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken-b\ndata:\n  b: [1]\n",
    )
    .unwrap();
    let staging = work.join("apps/staging/kustomization.yaml");
    let text = std::fs::read_to_string(&staging).unwrap();
    std::fs::write(
        &staging,
        text.replace("resources:\n", "resources:\n  - broken.yaml\n"),
    )
    .unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", "scale production, break staging"]);
    git(&work, &["push", "-q", "origin", "HEAD:main"]);
    let pushed = git(&work, &["rev-parse", "HEAD"]).trim().to_string();

    // A restart leaves the repository alone and hands over as soon as the reconcile settles,
    // long before --wait-timeout, saying what failed once.
    let mut second = up_logged(&data, port, &["--example", "--wait-timeout", "30m"], &[]);
    second.wait_for("the hand-over", |l| l.starts_with("kubeconfig: "));
    let head = git_support::run(Command::new("git").args([
        "--git-dir",
        data.join("example.git").to_str().unwrap(),
        "rev-parse",
        "main",
    ]));
    assert_eq!(head.trim(), pushed, "no commit on top of the user's push");
    let lines = second.lines();
    let all = lines.join("\n");
    assert!(
        lines.iter().any(|l| l
            == &format!(
                "✔ Kustomization flux-system/apps-production: Applied revision: main@sha1:{pushed}"
            )),
        "{all}"
    );
    let failures: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("✗ Kustomization flux-system/apps-staging: "))
        .collect();
    assert_eq!(failures.len(), 1, "{all}");
    assert!(
        failures[0].contains("ConfigMap/staging/broken-a dry-run failed (BadRequest)")
            && !failures[0].contains("broken-b"),
        "the first error only: {all}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l == "✗ 1 of 4 Kustomizations not ready: flux-system/apps-staging"),
        "{all}"
    );
    assert!(!all.contains("WARN") && !all.contains("ERROR"), "{all}");
    let kc = second.up.kubeconfig.clone();
    let ks = json(
        &kc,
        &["-n", "flux-system", "get", "kustomization", "apps-staging"],
    );
    let (status, message) = ready(&ks).unwrap();
    assert_eq!(status, "False");
    assert!(!message.contains('\n'), "one line: {message:?}");
    assert_eq!(
        json(&kc, &["-n", "production", "get", "deployment", "podinfo"])["spec"]["replicas"],
        2
    );

    // diff: a kind the cluster does not serve is an error (exit 2, Flux's words); the other
    // objects are still diffed.
    let local = dir.path().join("local");
    std::fs::create_dir_all(&local).unwrap();
    std::fs::write(
        local.join("objects.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: production\ndata:\n  a: b\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: production\n",
    )
    .unwrap();
    let (code, out, err) = tidegate(
        &kc,
        &[
            "diff",
            "kustomization",
            "apps-production",
            "--path",
            local.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(
        err.trim(),
        "✗ Widget/production/w dry-run failed: no matches for kind \"Widget\" in version \"example.com/v1\""
    );
    assert!(
        out.contains("► ConfigMap/production/extra created"),
        "{out}"
    );

    second.stop("INT");
    assert_eq!(shutdown_noise(&second.lines()), Vec::<String>::new());
}

#[test]
fn a_signal_during_start_up_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut up = up_logged(
        &dir.path().join("data"),
        git_support::free_port(),
        &["--example"],
        &[],
    );
    up.wait_for("the API server", |l| {
        l.starts_with("✔ API server listening")
    });
    up.stop("INT");
    let lines = up.lines();
    assert!(
        !lines.iter().any(|l| l.starts_with("tidegate is up")),
        "stopped before the hand-over: {}",
        lines.join("\n")
    );
    assert_eq!(shutdown_noise(&lines), Vec::<String>::new());
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("WARN") || l.contains("ERROR")),
        "{}",
        lines.join("\n")
    );
}

#[test]
fn user_errors_are_one_line_without_backtraces() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["kustomize", "/nonexistent/dir"]);
    assert_eq!(code, Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("✗ ") && err.contains("/nonexistent/dir"),
        "{err}"
    );

    // A busy --listen port: one line naming the address, the cause said once.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = run(&[
        "up",
        "--data-dir",
        dir.path().to_str().unwrap(),
        "--listen",
        &addr,
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("✗ starting the API server in ")
            && err.contains(&format!("listening on {addr}: "))
            && err.matches("Address already in use").count() == 1,
        "{err}"
    );
}
