//! The build root: every file the engine reads is resolved here and must stay inside it.
//!
//! Paths are joined lexically, then resolved through symlinks; a result outside the root is an
//! error, as are absolute paths and remote references (URLs, Git shorthands), which are never
//! fetched.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, ErrorKind, Result};

/// Sees the bytes of every file the build reads and may give other bytes in their place (or
/// refuse the file): how Flux's SOPS decryption reaches generator sources, patches and
/// resources without writing plaintext to disk. Called with the path relative to the root.
pub trait ReadFilter: Send + Sync {
    /// The content the build uses for `path`; an error names what is wrong with the file.
    fn filter(&self, path: &str, content: Vec<u8>) -> std::result::Result<Vec<u8>, String>;
}

/// A shared [`ReadFilter`].
#[derive(Clone)]
pub struct Filter(pub std::sync::Arc<dyn ReadFilter>);

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Filter")
    }
}

/// A directory tree the build may read, and nothing outside it.
#[derive(Debug, Clone)]
pub struct BuildRoot {
    root: PathBuf,
    filter: Option<Filter>,
}

impl BuildRoot {
    /// Opens `root`, which must be an existing directory.
    pub fn new(root: &Path) -> Result<BuildRoot> {
        let root = root.canonicalize().map_err(|e| {
            Error::in_file(
                ErrorKind::MissingFile,
                root.display().to_string(),
                format!("cannot open build root: {e}"),
            )
        })?;
        if !root.is_dir() {
            return Err(Error::in_file(
                ErrorKind::MissingFile,
                root.display().to_string(),
                "build root is not a directory",
            ));
        }
        Ok(BuildRoot { root, filter: None })
    }

    /// The same root, with every file read passed through `filter`.
    pub fn with_filter(mut self, filter: Option<Filter>) -> BuildRoot {
        self.filter = filter;
        self
    }

    /// The root's absolute, canonical path.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Resolves a directory given on the command line or by a caller (absolute, or relative to
    /// the current directory) to a path inside the root.
    pub fn locate(&self, dir: &Path) -> Result<PathBuf> {
        let shown = dir.display().to_string();
        let real = dir
            .canonicalize()
            .map_err(|e| Error::in_file(ErrorKind::MissingFile, shown.clone(), e.to_string()))?;
        if !real.starts_with(&self.root) {
            return Err(Error::in_file(
                ErrorKind::OutsideRoot,
                shown,
                format!("is outside the build root {}", self.root.display()),
            ));
        }
        Ok(real)
    }

    /// Resolves `reference` (as written in the kustomization file `from`) relative to the
    /// directory `dir`. The result exists, lies inside the root, and has symlinks resolved.
    pub fn resolve(&self, dir: &Path, reference: &str, from: &str) -> Result<PathBuf> {
        if reference.contains("://") {
            return Err(remote(reference, from));
        }
        let given = Path::new(reference);
        if given.is_absolute() {
            return Err(Error::in_file(
                ErrorKind::OutsideRoot,
                from,
                format!(
                    "absolute path {reference:?} is not allowed; use a path relative to the kustomization"
                ),
            ));
        }
        let mut joined = dir.to_path_buf();
        for part in given.components() {
            match part {
                Component::CurDir => {}
                Component::ParentDir => {
                    if !joined.pop() || !joined.starts_with(&self.root) {
                        return Err(self.escapes(reference, from));
                    }
                }
                Component::Normal(p) => joined.push(p),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(self.escapes(reference, from));
                }
            }
        }
        if !joined.starts_with(&self.root) {
            return Err(self.escapes(reference, from));
        }
        let real = match joined.canonicalize() {
            Ok(real) => real,
            Err(_) if is_remote(reference) => return Err(remote(reference, from)),
            Err(_) => {
                return Err(Error::in_file(
                    ErrorKind::MissingFile,
                    from,
                    format!(
                        "{reference:?}: no such file or directory ({})",
                        self.display(&joined)
                    ),
                ));
            }
        };
        if !real.starts_with(&self.root) {
            return Err(Error::in_file(
                ErrorKind::OutsideRoot,
                from,
                format!("{reference:?} is a symlink that leaves the build root"),
            ));
        }
        Ok(real)
    }

    fn escapes(&self, reference: &str, from: &str) -> Error {
        Error::in_file(
            ErrorKind::OutsideRoot,
            from,
            format!("{reference:?} leaves the build root"),
        )
    }

    /// Reads a file resolved by [`BuildRoot::resolve`].
    pub fn read(&self, path: &Path) -> Result<Vec<u8>> {
        let bytes = std::fs::read(path).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound {
                ErrorKind::MissingFile
            } else {
                ErrorKind::Invalid
            };
            Error::in_file(kind, self.display(path), format!("cannot read: {e}"))
        })?;
        match &self.filter {
            None => Ok(bytes),
            Some(f) => {
                let shown = self.display(path);
                f.0.filter(&shown, bytes)
                    .map_err(|message| Error::in_file(ErrorKind::Invalid, shown, message))
            }
        }
    }

    /// Reads a UTF-8 text file.
    pub fn read_text(&self, path: &Path) -> Result<String> {
        let bytes = self.read(path)?;
        String::from_utf8(bytes).map_err(|_| {
            Error::in_file(
                ErrorKind::InvalidYaml,
                self.display(path),
                "is not UTF-8 text",
            )
        })
    }

    /// A path for messages: relative to the root, `.` for the root itself.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

fn remote(reference: &str, from: &str) -> Error {
    Error::in_file(
        ErrorKind::Remote,
        from,
        format!(
            "remote resource {reference:?} is not supported: remote bases are never fetched; vendor it into the repository"
        ),
    )
}

/// Whether a resource reference names something remote: a URL or a Git shorthand as kustomize
/// accepts them.
pub fn is_remote(reference: &str) -> bool {
    let r = reference.trim();
    r.contains("://")
        || r.starts_with("git@")
        || r.starts_with("github.com/")
        || r.starts_with("gitlab.com/")
        || r.starts_with("bitbucket.org/")
        || r.contains("?ref=")
        || r.contains(".git//")
}
