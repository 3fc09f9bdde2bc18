//! One process per data directory: the server holds an exclusive lock on `<data-dir>/lock`
//! (an advisory `flock`, released by the kernel when the process ends however it ends) with
//! its process id written in it, so a second `tidegate apiserver` or `up` on the same
//! directory fails at once and names the first, instead of sharing the store and rewriting
//! its kubeconfig.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The name of the lock file in a data directory.
pub const LOCK_FILE: &str = "lock";

/// A held data directory; the lock goes with the value.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

/// The directory is held by another process, or the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("data directory {dir} is in use by another tidegate ({holder})", dir = .dir.display())]
    Held {
        /// The directory.
        dir: PathBuf,
        /// `pid N`, or what is known of the holder.
        holder: String,
    },
    /// The lock file could not be opened or locked.
    #[error("locking data directory {dir}: {source}", dir = .dir.display())]
    Io {
        /// The directory.
        dir: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl DataDirLock {
    /// Takes the lock of `dir` (which must exist) without waiting.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, LockError> {
        let io = |source| LockError::Io {
            dir: dir.to_path_buf(),
            source,
        };
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(LOCK_FILE))
            .map_err(io)?;
        if !try_lock(&file).map_err(io)? {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let holder = match text.trim().parse::<u32>() {
                Ok(pid) => format!("pid {pid}"),
                Err(_) => "a process that has not written its id yet".to_string(),
            };
            return Err(LockError::Held {
                dir: dir.to_path_buf(),
                holder,
            });
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(DataDirLock { _file: file })
    }
}

#[cfg(unix)]
fn try_lock(file: &File) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock on a file descriptor this function borrows for the call.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

#[cfg(not(unix))]
fn try_lock(_: &File) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_named_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(dir.path()).unwrap();
        let e = DataDirLock::acquire(dir.path()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "data directory {} is in use by another tidegate (pid {})",
                dir.path().display(),
                std::process::id()
            )
        );
        drop(first);
        DataDirLock::acquire(dir.path()).unwrap();
    }
}
