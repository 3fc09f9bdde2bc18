//! Shared by the benchmarks: one process timed under `/usr/bin/time`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` under `/usr/bin/time` and returns (wall time, peak RSS in KiB). Panics with the
/// command's stderr when it fails.
pub fn time_process(cmd: &[&str]) -> (Duration, u64) {
    let start = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .args(cmd)
        .stdout(Stdio::null())
        .output()
        .expect("/usr/bin/time runs");
    let wall = start.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rss = String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    (wall, rss)
}
