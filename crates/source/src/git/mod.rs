//! Fetching a Git reference with gix: the commit a GitRepository's `ref` selects, its tree,
//! signatures and revision.
//!
//! Remote repositories (`https://`, `http://`, `ssh://`, `git://`) are fetched into a fresh bare
//! repository, shallow (depth 1) except for commit references; `file://` repositories are read
//! in place. Before fetching, the remote's references are listed; when the selected commit
//! gives the revision already stored, nothing is fetched ([`Outcome::Unchanged`]).

mod auth;
pub mod commit;
mod local;
mod pack;
pub mod push;
mod remote;
pub mod seed;
pub mod select;
pub mod sign;

use std::path::Path;
use std::sync::atomic::AtomicBool;

pub use auth::Auth;
pub use select::{GitReference, ListedRef, Selection, Strategy};

/// Why a fetch failed. The variant gives Flux's condition reason.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// Credentials are missing, malformed or refused (`AuthenticationFailed`).
    #[error("{0}")]
    Auth(String),
    /// The reference, tag match or commit does not exist (`GitOperationFailed`).
    #[error("{0}")]
    NotFound(String),
    /// The reference or URL is malformed (`GitOperationFailed`).
    #[error("{0}")]
    Invalid(String),
    /// The repository has no commits (`EmptyGitRepository`).
    #[error("git repository is empty")]
    Empty,
    /// Any other failure of the Git operation (`GitOperationFailed`).
    #[error("{0}")]
    Operation(String),
}

impl GitError {
    /// Flux's condition reason for this error.
    pub fn reason(&self) -> &'static str {
        match self {
            GitError::Auth(_) => "AuthenticationFailed",
            GitError::Empty => "EmptyGitRepository",
            _ => "GitOperationFailed",
        }
    }
}

/// What to fetch.
pub struct FetchOptions<'a> {
    /// The repository URL.
    pub url: &'a str,
    /// `spec.ref`.
    pub reference: &'a GitReference,
    /// Credentials.
    pub auth: &'a Auth,
    /// The revision of the stored artifact: when the selected commit gives the same revision
    /// (branch, tag and name references only), nothing is fetched.
    pub last_revision: Option<&'a str>,
    /// Set to stop a running fetch (timeouts).
    pub interrupt: &'a AtomicBool,
    /// Bound on each network operation: HTTP requests time out after it, SSH gives up on a
    /// silent server after it. (`git://` connections have no such bound.)
    pub timeout: std::time::Duration,
}

/// A fetched commit, ready to be read.
pub struct Fetched {
    /// The repository holding the commit (a bare clone, or the local repository).
    pub repo: gix::Repository,
    /// The commit.
    pub commit: gix::ObjectId,
    /// The annotated tag object the reference points at, if any.
    pub tag: Option<gix::ObjectId>,
    /// Whether the reference is a tag (annotated or lightweight).
    pub is_tag: bool,
    /// The tag's short name, when the reference is a tag.
    pub tag_name: Option<String>,
    /// Flux's revision string.
    pub revision: String,
}

/// The result of a fetch.
pub enum Outcome {
    /// The remote still points at the stored revision; nothing was fetched.
    Unchanged {
        /// The revision, equal to the stored one.
        revision: String,
    },
    /// A commit was fetched.
    Fetched(Box<Fetched>),
}

/// Fetches what `opts` selects. Remote repositories are cloned into `workdir` (an empty
/// directory the caller removes afterwards).
pub fn fetch(opts: &FetchOptions<'_>, workdir: &Path) -> Result<Outcome, GitError> {
    crate::tls::ensure_provider();
    let result = if let Some(path) = opts.url.strip_prefix("file://") {
        local::fetch(opts, Path::new(path))
    } else {
        remote::fetch(opts, workdir)
    };
    result.map_err(|e| e.redact(opts.url))
}

/// The `user:password@` part of a URL, if any.
fn userinfo(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split('/').next()?;
    let at = authority.rfind('@')?;
    Some(&rest[..=at])
}

/// `url` without its credentials, for messages.
pub fn redacted_url(url: &str) -> String {
    match userinfo(url) {
        Some(info) => url.replacen(info, "", 1),
        None => url.to_string(),
    }
}

impl GitError {
    /// The same error with any credentials of `url` removed from its message.
    pub(crate) fn redact(self, url: &str) -> GitError {
        let Some(info) = userinfo(url) else {
            return self;
        };
        let clean = |m: String| {
            let m = m.replace(info, "");
            // A password may also appear on its own (URL-decoded or in a header dump).
            match info.trim_end_matches('@').split_once(':') {
                Some((_, password)) if !password.is_empty() => m.replace(password, "***"),
                _ => m,
            }
        };
        match self {
            GitError::Auth(m) => GitError::Auth(clean(m)),
            GitError::NotFound(m) => GitError::NotFound(clean(m)),
            GitError::Invalid(m) => GitError::Invalid(clean(m)),
            GitError::Operation(m) => GitError::Operation(clean(m)),
            GitError::Empty => GitError::Empty,
        }
    }
}

/// Whether the no-op check may be used for a strategy (Flux: branch, tag and name only).
fn may_skip(strategy: &Strategy) -> bool {
    matches!(
        strategy,
        Strategy::Branch(_) | Strategy::Tag(_) | Strategy::Name(_)
    )
}

/// Parses a full commit SHA from `spec.ref.commit`.
fn parse_commit(hex: &str) -> Result<gix::ObjectId, GitError> {
    gix::ObjectId::from_hex(hex.as_bytes()).map_err(|_| {
        GitError::Invalid(format!(
            "invalid commit '{hex}': a full 40-character SHA-1 is required"
        ))
    })
}

/// The no-op check after listing: `Some(Unchanged)` when the selected commit gives the stored
/// revision (branch, tag and name references only).
pub(crate) fn unchanged(
    strategy: &Strategy,
    selection: &Selection,
    last: Option<&str>,
) -> Option<Outcome> {
    let (commit, last) = (selection.commit?, last?);
    (may_skip(strategy) && selection.revision(&commit) == last).then(|| Outcome::Unchanged {
        revision: last.to_string(),
    })
}

/// The object the selected reference points at (a tag object for annotated tags).
pub(crate) fn target_of(selection: &Selection, listed: &[ListedRef]) -> Option<gix::ObjectId> {
    let wanted = selection.fetch_ref.as_ref()?;
    listed.iter().find(|l| &l.name == wanted).map(|l| l.target)
}

/// The commit to read: the spec's SHA for commit strategies, else the listed one.
pub(crate) fn commit_of(
    strategy: &Strategy,
    selection: &Selection,
) -> Result<gix::ObjectId, GitError> {
    match (strategy, selection.commit) {
        (Strategy::Commit { commit, .. }, _) => parse_commit(commit),
        (_, Some(c)) => Ok(c),
        (_, None) => Err(GitError::Operation(
            "the remote did not name a commit".into(),
        )),
    }
}

/// Finishes a fetch: the commit and tag objects for a selection.
pub(crate) fn finish(
    repo: gix::Repository,
    selection: &Selection,
    commit: gix::ObjectId,
    target: Option<gix::ObjectId>,
) -> Result<Outcome, GitError> {
    let commit_obj = repo.find_commit(commit).map_err(|e| {
        GitError::NotFound(format!(
            "unable to resolve commit object for '{commit}': {e}"
        ))
    })?;
    drop(commit_obj);
    let tag = target.filter(|t| {
        *t != commit
            && repo
                .find_object(*t)
                .is_ok_and(|o| o.kind == gix::object::Kind::Tag)
    });
    let tag_name = selection.is_tag.then(|| {
        selection
            .reference
            .trim_start_matches("refs/tags/")
            .trim_end_matches("^{}")
            .to_string()
    });
    Ok(Outcome::Fetched(Box::new(Fetched {
        revision: selection.revision(&commit),
        repo,
        commit,
        tag,
        is_tag: selection.is_tag,
        tag_name,
    })))
}

/// A commit's subject line as Flux shortens it for events (50 characters, then `...`).
pub fn short_message(repo: &gix::Repository, commit: gix::ObjectId) -> String {
    let Ok(c) = repo.find_commit(commit) else {
        return String::new();
    };
    let Ok(msg) = c.message_raw() else {
        return String::new();
    };
    let text = String::from_utf8_lossy(msg);
    let first = text.lines().next().unwrap_or("").trim_end().to_string();
    if first.chars().count() > 50 {
        format!("{}...", first.chars().take(50).collect::<String>())
    } else {
        first
    }
}

/// A signature and the bytes it signs.
#[derive(Debug, Clone)]
pub struct Signed {
    /// The armored signature.
    pub signature: Vec<u8>,
    /// The signed payload.
    pub payload: Vec<u8>,
}

/// The signature of a commit, if it is signed.
pub fn commit_signature(
    repo: &gix::Repository,
    commit: gix::ObjectId,
) -> Result<Option<Signed>, GitError> {
    let c = repo
        .find_commit(commit)
        .map_err(|e| GitError::Operation(e.to_string()))?;
    let sig = c
        .signature()
        .map_err(|e| GitError::Operation(e.to_string()))?;
    Ok(sig.map(|(signature, data)| Signed {
        signature: signature.to_vec(),
        payload: data.to_bstring().to_vec(),
    }))
}

/// The signature of an annotated tag, if it is signed.
pub fn tag_signature(
    repo: &gix::Repository,
    tag: gix::ObjectId,
) -> Result<Option<Signed>, GitError> {
    let obj = repo
        .find_object(tag)
        .map_err(|e| GitError::Operation(e.to_string()))?;
    let data = obj.data.clone();
    let parsed = gix::objs::TagRef::from_bytes(&data, repo.object_hash())
        .map_err(|e| GitError::Operation(format!("reading tag {tag}: {e}")))?;
    let Some(sig) = parsed.signature else {
        return Ok(None);
    };
    let sig = sig.to_vec();
    // The signature closes the tag object; everything before it is what was signed.
    let payload = match data.len().checked_sub(sig.len()) {
        Some(at) if data[at..] == sig[..] => data[..at].to_vec(),
        _ => {
            return Err(GitError::Operation(format!(
                "tag {tag}: signature is not at the end of the object"
            )));
        }
    };
    Ok(Some(Signed {
        signature: sig,
        payload,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_messages() {
        assert_eq!(redacted_url("https://u:p@h/r.git"), "https://h/r.git");
        assert_eq!(redacted_url("ssh://git@h:22/r"), "ssh://h:22/r");
        assert_eq!(redacted_url("https://h/a@b"), "https://h/a@b");
        let e = GitError::Operation("unable to clone 'https://u:pw1@h/r': pw1 refused".into())
            .redact("https://u:pw1@h/r");
        assert_eq!(e.to_string(), "unable to clone 'https://h/r': *** refused");
    }
}
