//! Commit → artifact for a repository of 10,000 files: `tidegate build artifact --git` against
//! `git clone --depth 1` plus `tar czf` of the same tree, both over the same `git daemon` on
//! loopback. Wall time and peak RSS of each process (tree of processes for the peer), median
//! of five alternating runs. Both archives are checked to hold the 10,000 files.
//! Run with `cargo bench -p tidegate --bench source`; figures go to docs/benchmarks.md.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

const DIRS: usize = 100;
const FILES_PER_DIR: usize = 100;

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("command runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn make_repo(root: &Path) -> std::path::PathBuf {
    let work = root.join("work");
    for d in 0..DIRS {
        let dir = work.join(format!("apps/app-{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            let body = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-{d}-cm-{f}\n  namespace: app-{d}\ndata:\n  index: \"{f}\"\n  settings.yaml: |\n    replicas: {}\n    image: registry.example/app-{d}:1.{f}.0\n    peers: [a, b, c, d]\n",
                f % 5 + 1
            );
            std::fs::write(dir.join(format!("cm-{f:03}.yaml")), body).unwrap();
        }
    }
    let git = |args: &[&str]| {
        run(Command::new("git")
            .args(args)
            .current_dir(&work)
            .env("HOME", root)
            .env("GIT_CONFIG_NOSYSTEM", "1"))
    };
    git(&["init", "-q", "-b", "main"]);
    git(&[
        "-c",
        "user.name=Bench",
        "-c",
        "user.email=bench@tidegate.invalid",
        "add",
        "-A",
    ]);
    git(&[
        "-c",
        "user.name=Bench",
        "-c",
        "user.email=bench@tidegate.invalid",
        "commit",
        "-q",
        "-m",
        "10,000 files",
    ]);
    let base = root.join("srv");
    std::fs::create_dir_all(&base).unwrap();
    run(Command::new("git")
        .args(["clone", "-q", "--bare"])
        .arg(&work)
        .arg(base.join("repo.git")));
    base
}

fn entries(archive: &Path) -> usize {
    let out = Command::new("tar")
        .arg("tzf")
        .arg(archive)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.ends_with(".yaml"))
        .count()
}

fn median(mut v: Vec<(Duration, u64)>) -> (Duration, u64) {
    v.sort_by_key(|x| x.0);
    let t = v[v.len() / 2].0;
    let mut rss: Vec<u64> = v.iter().map(|x| x.1).collect();
    rss.sort();
    (t, rss[rss.len() / 2])
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let base = make_repo(tmp.path());
    let daemon = git_support::GitDaemon::start(&base);
    let url = daemon.url("repo.git");
    let tidegate = env!("CARGO_BIN_EXE_tidegate");
    let local = format!("file://{}", base.join("repo.git").display());
    println!(
        "commit -> artifact, {} files (median of 5)",
        DIRS * FILES_PER_DIR
    );
    for (label, url) in [("git daemon", url.as_str()), ("file://", local.as_str())] {
        let mut ours = Vec::new();
        let mut peer = Vec::new();
        for i in 0..5 {
            let out = tmp.path().join(format!("ours-{i}.tar.gz"));
            ours.push(support::time_process(&[
                tidegate,
                "build",
                "artifact",
                "--git",
                url,
                "--branch",
                "main",
                "--output",
                out.to_str().unwrap(),
            ]));
            assert_eq!(entries(&out), DIRS * FILES_PER_DIR);
            let clone = tmp.path().join(format!("clone-{i}"));
            let _ = std::fs::remove_dir_all(&clone);
            let peer_out = tmp.path().join(format!("peer-{i}.tar.gz"));
            let script = format!(
                "git clone -q --depth 1 --branch main {url} {c} && tar czf {o} --exclude=.git -C {c} .",
                c = clone.display(),
                o = peer_out.display()
            );
            peer.push(support::time_process(&["sh", "-c", &script]));
            assert_eq!(entries(&peer_out), DIRS * FILES_PER_DIR);
        }
        let (ot, orss) = median(ours);
        let (pt, prss) = median(peer);
        println!("  over {label}:");
        println!(
            "    tidegate build artifact --git : {:>8.3} s  peak RSS {:>7} KiB",
            ot.as_secs_f64(),
            orss
        );
        println!(
            "    git clone --depth 1 + tar czf : {:>8.3} s  peak RSS {:>7} KiB",
            pt.as_secs_f64(),
            prss
        );
        println!(
            "    ratio (peer / tidegate)       : {:>8.2}x",
            pt.as_secs_f64() / ot.as_secs_f64()
        );
    }
    drop(daemon);
}
