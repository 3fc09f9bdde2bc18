//! Scratch space for the controllers' temporary work (clones, extracted artifacts, builds): one
//! directory per process under the system's temporary directory, so what a process killed with
//! `kill -9` left behind is recognised and removed by the next process that starts, without
//! touching the directories of processes still running.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The prefix of every process's scratch directory: `tidegate-scratch-<pid>`.
const PREFIX: &str = "tidegate-scratch-";

/// This process's scratch directory, created (and the directories of dead processes removed)
/// on first use. Falls back to the temporary directory itself when it cannot be created.
pub fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::temp_dir();
        let removed = remove_stale(&base);
        if removed > 0 {
            tracing::info!(removed, "removed scratch directories of processes that are gone");
        }
        let own = base.join(format!("{PREFIX}{}", std::process::id()));
        match std::fs::create_dir_all(&own) {
            Ok(()) => {
                restrict(&own);
                own
            }
            Err(e) => {
                tracing::warn!(error = %e, dir = %own.display(), "cannot create the scratch directory");
                base
            }
        }
    })
}

/// A temporary directory in this process's scratch space, removed when dropped.
pub fn tempdir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new().prefix(prefix).tempdir_in(dir())
}

/// Removes the scratch directories under `base` whose process is no longer running; returns
/// how many went. Only where the running processes can be told (`/proc`).
pub fn remove_stale(base: &Path) -> usize {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || proc.join(pid.to_string()).exists() {
            continue;
        }
        if std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(unix)]
fn restrict(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
}

#[cfg(not(unix))]
fn restrict(_: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_processes_scratch_goes_live_ones_stay() {
        let base = tempfile::tempdir().expect("tempdir");
        // A pid that cannot be running (above the kernel's pid_max).
        let dead = base.path().join(format!("{PREFIX}999999999"));
        std::fs::create_dir_all(dead.join("kustomization-x/deploy")).expect("dead");
        let live = base.path().join(format!("{PREFIX}{}", std::process::id()));
        std::fs::create_dir_all(&live).expect("live");
        let other = base.path().join("unrelated-999999999");
        std::fs::create_dir_all(&other).expect("other");
        let removed = remove_stale(base.path());
        if Path::new("/proc/self").exists() {
            assert_eq!(removed, 1);
            assert!(!dead.exists());
        }
        assert!(live.exists());
        assert!(other.exists());
    }
}
