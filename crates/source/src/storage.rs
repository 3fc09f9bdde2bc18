//! The artifact store: a directory of `<kind>/<namespace>/<name>/<file>` artifacts, written
//! atomically, verified by digest, pruned to the last few, and advertised by URL.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::archive::{Written, digest_of};

/// How many old artifacts to keep (Flux: `--artifact-retention-ttl` 1m, `--artifact-retention-records` 2).
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    /// Artifacts older than this are removed (never the current one).
    pub ttl: Duration,
    /// At most this many files stay, the current one included.
    pub records: usize,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            ttl: Duration::from_secs(60),
            records: 2,
        }
    }
}

/// The store.
#[derive(Debug, Clone)]
pub struct Storage {
    root: PathBuf,
    base_url: String,
    retention: Retention,
}

impl Storage {
    /// A store under `root`, advertised at `advertised` (`host:port` or an `http(s)://` URL).
    pub fn new(
        root: impl Into<PathBuf>,
        advertised: &str,
        retention: Retention,
    ) -> io::Result<Self> {
        let root = root.into();
        fs::create_dir_all(&root)?;
        let base_url = if advertised.starts_with("http://") || advertised.starts_with("https://") {
            advertised.trim_end_matches('/').to_string()
        } else {
            format!("http://{}", advertised.trim_end_matches('/'))
        };
        Ok(Storage {
            root,
            base_url,
            retention,
        })
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<kind lower-case>/<namespace>/<name>/<file>`, Flux's artifact path.
    pub fn artifact_path(kind: &str, namespace: &str, name: &str, file: &str) -> String {
        format!("{}/{namespace}/{name}/{file}", kind.to_lowercase())
    }

    /// The URL an artifact path is served at.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path.trim_start_matches('/'))
    }

    /// The file of an artifact path, refusing paths that leave the store.
    pub fn local_path(&self, path: &str) -> io::Result<PathBuf> {
        match crate::tree::clean_relative(path.trim_start_matches('/')) {
            Some(rel) if !rel.is_empty() => Ok(self.root.join(rel)),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid artifact path '{path}'"),
            )),
        }
    }

    /// Writes an artifact atomically: `write` fills a temporary file in the same directory,
    /// which is then synced and renamed into place. Readers see the old file or the new one.
    pub fn write_atomic(
        &self,
        path: &str,
        write: impl FnOnce(io::BufWriter<fs::File>) -> io::Result<(io::BufWriter<fs::File>, Written)>,
    ) -> io::Result<Written> {
        let dest = self.local_path(path)?;
        let dir = dest
            .parent()
            .ok_or_else(|| io::Error::other("artifact path has no directory"))?;
        create_private_dir(dir)?;
        // A random name, created 0600: a file left by a crash never blocks the next write and
        // is removed by garbage collection once older than the TTL.
        let tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
        let (tmp_file, tmp_path) = tmp.into_parts();
        let (mut out, written) = write(io::BufWriter::new(tmp_file))?;
        out.flush()?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        tmp_path.persist(&dest).map_err(|e| e.error)?;
        Ok(written)
    }

    /// Points `<dir of path>/<link>` at the artifact `path` (a relative symbolic link, replaced
    /// atomically) and returns the link's URL, as Flux's `latest.tar.gz`.
    pub fn symlink(&self, path: &str, link: &str) -> io::Result<String> {
        let dest = self.local_path(path)?;
        let dir = dest
            .parent()
            .ok_or_else(|| io::Error::other("artifact path has no directory"))?;
        let target = dest
            .file_name()
            .ok_or_else(|| io::Error::other("artifact path has no file name"))?;
        let tmp = dir.join(format!(".tmp-link-{}", std::process::id()));
        let _ = fs::remove_file(&tmp);
        #[cfg(unix)]
        std::os::unix::fs::symlink(target, &tmp)?;
        #[cfg(not(unix))]
        fs::copy(&dest, &tmp)?;
        fs::rename(&tmp, dir.join(link))?;
        let link_path = match path.rsplit_once('/') {
            Some((d, _)) => format!("{d}/{link}"),
            None => link.to_string(),
        };
        Ok(self.url(&link_path))
    }

    /// Whether the artifact file exists and its bytes have `digest` (`sha256:<hex>`).
    pub fn verify(&self, path: &str, digest: &str) -> io::Result<bool> {
        let file = match fs::File::open(self.local_path(path)?) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        Ok(digest_of(io::BufReader::new(file))?.digest == digest)
    }

    /// Whether the artifact file exists.
    pub fn exists(&self, path: &str) -> bool {
        self.local_path(path).is_ok_and(|p| p.is_file())
    }

    /// Removes old artifacts beside `current` (an artifact path): those older than the TTL,
    /// then the oldest until `records` remain. Returns how many were removed.
    pub fn garbage_collect(&self, current: &str) -> io::Result<usize> {
        let current = self.local_path(current)?;
        let Some(dir) = current.parent() else {
            return Ok(0);
        };
        let now = SystemTime::now();
        let mut files: Vec<(PathBuf, SystemTime)> = Vec::new();
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let ty = entry.file_type()?;
            let path = entry.path();
            if !ty.is_file() || path.extension().is_some_and(|e| e == "lock") || path == current {
                continue;
            }
            let modified = entry.metadata()?.modified()?;
            if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".tmp-"))
            {
                // A write in progress, or one a crash left behind.
                if now.duration_since(modified).unwrap_or_default() > self.retention.ttl {
                    fs::remove_file(&path)?;
                }
                continue;
            }
            files.push((path, modified));
        }
        files.sort_by_key(|(_, t)| *t);
        let mut removed = 0;
        let keep_others = self.retention.records.saturating_sub(1);
        let excess = files.len().saturating_sub(keep_others);
        for (i, (path, modified)) in files.iter().enumerate() {
            let expired = now.duration_since(*modified).unwrap_or_default() > self.retention.ttl;
            if expired || i < excess {
                fs::remove_file(path)?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Removes every artifact of one object (`<kind>/<namespace>/<name>`). Returns whether
    /// anything was there.
    pub fn remove_all(&self, kind: &str, namespace: &str, name: &str) -> io::Result<bool> {
        let dir = self.local_path(&format!("{}/{namespace}/{name}", kind.to_lowercase()))?;
        match fs::remove_dir_all(&dir) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_urls_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::new(dir.path(), "localhost:9090", Retention::default()).unwrap();
        let p = Storage::artifact_path("GitRepository", "default", "podinfo", "abc.tar.gz");
        assert_eq!(p, "gitrepository/default/podinfo/abc.tar.gz");
        assert_eq!(
            s.url(&p),
            "http://localhost:9090/gitrepository/default/podinfo/abc.tar.gz"
        );
        assert!(s.local_path("../etc/passwd").is_err());
        assert!(s.local_path("a/../../b").is_err());
        let s = Storage::new(dir.path(), "https://store.example/", Retention::default()).unwrap();
        assert_eq!(s.url("/x/y"), "https://store.example/x/y");
    }

    #[test]
    fn atomic_write_verify_and_retention() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::new(
            dir.path(),
            "h:1",
            Retention {
                ttl: Duration::from_secs(3600),
                records: 2,
            },
        )
        .unwrap();
        let mut last = String::new();
        for i in 0..4 {
            let path = Storage::artifact_path("GitRepository", "ns", "n", &format!("{i}.tar.gz"));
            let written = s
                .write_atomic(&path, |mut w| {
                    w.write_all(format!("content {i}").as_bytes())?;
                    let d = digest_of(format!("content {i}").as_bytes())?;
                    Ok((w, d))
                })
                .unwrap();
            assert!(s.verify(&path, &written.digest).unwrap());
            assert!(!s.verify(&path, "sha256:00").unwrap());
            std::thread::sleep(Duration::from_millis(20));
            last = path;
        }
        assert_eq!(s.garbage_collect(&last).unwrap(), 2);
        let left: Vec<_> = fs::read_dir(dir.path().join("gitrepository/ns/n"))
            .unwrap()
            .collect();
        assert_eq!(left.len(), 2);
        assert!(s.exists(&last));
        assert!(s.remove_all("GitRepository", "ns", "n").unwrap());
        assert!(!s.exists(&last));
    }
}
