//! Build errors: each names the file (relative to the build root) and, where the problem comes
//! from YAML, the line.

use std::fmt;

/// What went wrong, for callers that react to the kind rather than the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A referenced file or directory does not exist.
    MissingFile,
    /// A file is not valid YAML, or a document is not a Kubernetes object.
    InvalidYaml,
    /// A path leaves the build root (`..`, absolute path, or a symlink pointing outside).
    OutsideRoot,
    /// A remote resource (URL or Git reference); remote bases are never fetched.
    Remote,
    /// A feature that is refused for safety: plugins, exec functions, Helm chart inflation.
    Unsupported,
    /// Kustomizations that include each other.
    Cycle,
    /// Two resources with the same group, kind, namespace and name.
    IdConflict,
    /// A patch (or replacement source, or var) whose target matches no resource.
    NoMatch,
    /// A field a kustomization file does not have.
    UnknownField,
    /// Any other invalid input: bad selector, bad patch, bad generator source.
    Invalid,
}

/// A failed build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The kind of failure.
    pub kind: ErrorKind,
    /// The file the error is about, relative to the build root.
    pub file: Option<String>,
    /// The 1-based line in that file, when known.
    pub line: Option<usize>,
    /// What happened.
    pub message: String,
}

impl Error {
    /// An error about no particular file.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            file: None,
            line: None,
            message: message.into(),
        }
    }

    /// An error about `file`.
    pub fn in_file(kind: ErrorKind, file: impl Into<String>, message: impl Into<String>) -> Error {
        Error {
            kind,
            file: Some(file.into()),
            line: None,
            message: message.into(),
        }
    }

    /// Sets the line, keeping one already known.
    pub fn at_line(mut self, line: Option<usize>) -> Error {
        if self.line.is_none() {
            self.line = line;
        }
        self
    }

    /// Sets the file when none is known yet (an error raised deep inside a transformer gets the
    /// kustomization file that configured it).
    pub fn or_file(mut self, file: &str) -> Error {
        if self.file.is_none() {
            self.file = Some(file.to_string());
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: {}", self.message),
            (Some(file), None) => write!(f, "{file}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// An invalid-input error with no file yet.
pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Invalid, message)
}
