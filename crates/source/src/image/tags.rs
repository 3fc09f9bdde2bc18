//! The tags an ImageRepository scan found, kept by the controller outside the API server (as
//! Flux's image-reflector-controller keeps them in its own database): one file per
//! ImageRepository, `imagerepository/<namespace>/<name>/tags`, one tag per line, written to a
//! temporary file, synced and renamed, so a crash leaves the previous list or the new one.
//! The revision is what Flux's default store reports: the decimal Adler-32 of the JSON array
//! of the tags in descending byte order.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// How many tags `latestTags` shows.
pub const LATEST_TAGS: usize = 10;

/// Sorts tags as Flux stores them: descending byte order (stable).
pub fn sort_descending(tags: &mut [String]) {
    tags.sort_by(|a, b| b.cmp(a));
}

/// The revision of a (descending) tag list.
pub fn revision(tags: &[String]) -> String {
    let json = serde_json::to_vec(tags).unwrap_or_default();
    adler2::adler32_slice(&json).to_string()
}

/// Tag lists on disk, under one directory.
#[derive(Debug, Clone)]
pub struct TagStore {
    root: PathBuf,
}

impl TagStore {
    /// A store under `root` (created on first write).
    pub fn new(root: impl Into<PathBuf>) -> TagStore {
        TagStore { root: root.into() }
    }

    fn file(&self, namespace: &str, name: &str) -> PathBuf {
        self.root
            .join("imagerepository")
            .join(namespace)
            .join(name)
            .join("tags")
    }

    /// Replaces the tags of `namespace/name` (already sorted); returns their revision.
    pub fn set(&self, namespace: &str, name: &str, tags: &[String]) -> std::io::Result<String> {
        let path = self.file(namespace, name);
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let tmp = path.with_extension("tmp");
        {
            let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            for t in tags {
                f.write_all(t.as_bytes())?;
                f.write_all(b"\n")?;
            }
            f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        }
        std::fs::rename(&tmp, &path)?;
        Ok(revision(tags))
    }

    /// The tags of `namespace/name`, empty when none were stored.
    pub fn get(&self, namespace: &str, name: &str) -> std::io::Result<Vec<String>> {
        match std::fs::read_to_string(self.file(namespace, name)) {
            Ok(text) => Ok(text.lines().map(str::to_string).collect()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Forgets `namespace/name`.
    pub fn delete(&self, namespace: &str, name: &str) -> std::io::Result<()> {
        let path = self.file(namespace, name);
        match path.parent().map(std::fs::remove_dir_all) {
            Some(Err(e)) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_are_fluxs_and_lists_survive_a_reopen() {
        let v = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(revision(&v(&["d", "c", "b", "a"])), "580584407");
        assert_eq!(revision(&[]), "18153657");
        assert_eq!(revision(&v(&["1.0.1", "1.0.0"])), "495321928");
        let mut tags = v(&["1.0.0", "latest", "1.10.0", "1.9.0"]);
        sort_descending(&mut tags);
        assert_eq!(tags, v(&["latest", "1.9.0", "1.10.0", "1.0.0"]));
        let dir = tempfile::tempdir().unwrap();
        let store = TagStore::new(dir.path());
        assert!(store.get("ns", "app").unwrap().is_empty());
        let rev = store.set("ns", "app", &tags).unwrap();
        assert_eq!(rev, revision(&tags));
        assert_eq!(TagStore::new(dir.path()).get("ns", "app").unwrap(), tags);
        store.delete("ns", "app").unwrap();
        assert!(store.get("ns", "app").unwrap().is_empty());
        store.delete("ns", "app").unwrap();
    }
}
