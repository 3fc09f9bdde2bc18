//! The blocking part of a reconcile: fetch, verify, pack.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use tidegate_api::gitrepository::VerificationMode;
use tidegate_api::meta::Artifact;
use tidegate_source::git::{self, Auth, GitReference, Outcome};
use tidegate_source::storage::Storage;
use tidegate_source::tree::FileTree;
use tidegate_source::verify::Keyring;

use super::reconcile::Included;
use crate::source::failure::{FETCH_FAILED, Failure, SOURCE_VERIFIED, STORAGE_FAILED};

/// What the blocking part produced.
pub(super) enum Packed {
    /// The remote still points at the stored revision.
    Unchanged(String),
    /// The revision is stored: `written` is the new artifact, `None` when the stored one is
    /// already this revision.
    Stored {
        revision: String,
        written: Option<Box<Artifact>>,
        message: Option<String>,
        verified: Option<String>,
    },
}

/// Everything the blocking part needs, owned so it can move to a blocking thread.
pub(super) struct Job {
    pub(super) spec: tidegate_api::GitRepositorySpec,
    pub(super) auth: Auth,
    pub(super) keyring: Option<Keyring>,
    pub(super) mode: Option<VerificationMode>,
    /// The stored revision, when the no-op check may skip the fetch.
    pub(super) last_revision: Option<String>,
    pub(super) interrupt: Arc<AtomicBool>,
    pub(super) storage: Arc<Storage>,
    pub(super) namespace: String,
    pub(super) name: String,
    /// The artifact in the status.
    pub(super) current: Option<Artifact>,
    /// Whether anything besides the revision changes the artifact's content.
    pub(super) config_changed: bool,
    /// `spec.timeout`.
    pub(super) timeout: std::time::Duration,
}

/// What phase one found.
pub(super) enum Fetch {
    /// The remote still points at the stored revision.
    Unchanged(String),
    /// A verified commit (the directory holds its repository until packing is done).
    Fetched {
        fetched: Box<git::Fetched>,
        verified: Option<String>,
        _work: tempfile::TempDir,
    },
}

/// Phase one, bounded by `spec.timeout`: fetch and verify (blocking).
pub(super) fn fetch_verified(job: &Job) -> Result<Fetch, Failure> {
    let r = job.spec.reference.clone().unwrap_or_default();
    let reference = GitReference {
        branch: r.branch,
        tag: r.tag,
        semver: r.semver,
        name: r.name,
        commit: r.commit,
    };
    let work = tidegate_source::scratch::tempdir("gitrepository-").map_err(|e| {
        Failure::new(
            STORAGE_FAILED,
            "DirectoryCreationFailed",
            format!("failed to create temporary working directory: {e}"),
        )
    })?;
    let opts = git::FetchOptions {
        url: &job.spec.url,
        reference: &reference,
        auth: &job.auth,
        last_revision: job.last_revision.as_deref(),
        interrupt: &job.interrupt,
        timeout: job.timeout,
    };
    let fetched = match git::fetch(&opts, work.path()) {
        Ok(Outcome::Unchanged { revision }) => return Ok(Fetch::Unchanged(revision)),
        Ok(Outcome::Fetched(f)) => f,
        Err(e) => {
            let message = match &e {
                git::GitError::Empty => e.to_string(),
                _ => format!("failed to checkout and determine revision: {e}"),
            };
            return Err(Failure::new(FETCH_FAILED, e.reason(), message));
        }
    };
    let verified = match (&job.keyring, job.mode) {
        (Some(k), Some(m)) => Some(verify(&fetched, k, m)?),
        _ => None,
    };
    Ok(Fetch::Fetched {
        fetched,
        verified,
        _work: work,
    })
}

/// Phase two: pack the fetched commit into the store (blocking; not bounded by the timeout,
/// as in Flux, where the timeout covers the Git operation only).
/// Whether the stored artifact already holds `fetched` with the same content settings.
pub(super) fn up_to_date(job: &Job, fetched: &git::Fetched) -> bool {
    !job.config_changed
        && job
            .current
            .as_ref()
            .is_some_and(|a| a.revision == fetched.revision && job.storage.exists(&a.path))
}

pub(super) fn pack(
    job: &Job,
    fetched: &git::Fetched,
    verified: Option<String>,
    includes: &[Included],
) -> Result<Packed, Failure> {
    let (spec, storage, ns, name) = (
        &job.spec,
        &*job.storage,
        job.namespace.as_str(),
        job.name.as_str(),
    );
    let commit_hex = fetched.commit.to_string();
    if up_to_date(job, fetched) {
        return Ok(Packed::Stored {
            revision: fetched.revision.clone(),
            written: None,
            message: None,
            verified,
        });
    }
    let archive_err = |e: String| {
        Failure::new(
            STORAGE_FAILED,
            "ArchiveOperationFailed",
            format!("unable to archive artifact to storage: {e}"),
        )
    };
    let mut tree = tidegate_source::package::commit_tree(&fetched.repo, fetched.commit)
        .map_err(|e| archive_err(e.to_string()))?;
    if !spec.sparse_checkout.is_empty() {
        let dirs: Vec<String> = spec
            .sparse_checkout
            .iter()
            .map(|d| d.trim_start_matches("./").to_string())
            .collect();
        tree.retain_dirs(&dirs).map_err(|dir| {
            Failure::new(
                FETCH_FAILED,
                "GitOperationFailed",
                format!("failed to sparse checkout directories : sparse checkout dir '{dir}' does not exist in repository"),
            )
        })?;
    }
    for inc in includes {
        let (repo, from, to) = (inc.name.as_str(), inc.from.as_str(), inc.to.as_str());
        let illegal = || {
            Failure::new(
                STORAGE_FAILED,
                "IllegalPath",
                format!(
                    "path calculation for include '{repo}' failed: '{from}' or '{to}' leaves the repository or is its root"
                ),
            )
        };
        let src = tidegate_source::tree::safe_join(inc.dir.path(), from).ok_or_else(illegal)?;
        let dest = tidegate_source::tree::clean_relative(to)
            .filter(|t| !t.is_empty())
            .ok_or_else(illegal)?;
        let sub = FileTree::from_dir(&src).map_err(|e| {
            Failure::new(
                STORAGE_FAILED,
                "CopyFailure",
                format!("failed to copy '{repo}' include from {from} to {to}: {e}"),
            )
        })?;
        tree.graft(&dest, sub);
    }
    let path = Storage::artifact_path("GitRepository", ns, name, &format!("{commit_hex}.tar.gz"));
    let written = tidegate_source::package::package(
        &tree,
        &fetched.repo,
        spec.ignore.as_deref(),
        storage,
        &path,
    )
    .map_err(|e| archive_err(e.to_string()))?;
    let artifact = Artifact {
        url: storage.url(&path),
        path,
        revision: fetched.revision.clone(),
        digest: written.digest,
        last_update_time: crate::source::artifact_time(),
        size: i64::try_from(written.size).ok(),
        metadata: Default::default(),
    };
    let message = Some(git::short_message(&fetched.repo, fetched.commit));
    Ok(Packed::Stored {
        revision: fetched.revision.clone(),
        written: Some(Box::new(artifact)),
        message,
        verified,
    })
}

/// Verifies the fetched commit and/or tag; returns the SourceVerified message.
fn verify(f: &git::Fetched, keyring: &Keyring, mode: VerificationMode) -> Result<String, Failure> {
    let fail = |reason: &str, message: String| Failure::new(SOURCE_VERIFIED, reason, message);
    let mut lines = Vec::new();
    if matches!(mode, VerificationMode::Tag | VerificationMode::TagAndHead) {
        if !f.is_tag {
            return Err(fail(
                "InvalidVerificationMode",
                "cannot verify tag object's signature if a tag reference is not specified".into(),
            )
            .stall());
        }
        let tag_name = f.tag_name.clone().unwrap_or_default();
        let tag_text = match f.tag {
            Some(t) => format!("{tag_name}@{t}"),
            None => tag_name.clone(),
        };
        let signed = match f.tag {
            Some(t) => git::tag_signature(&f.repo, t)
                .map_err(|e| fail("VerificationError", e.to_string()))?,
            None => None,
        };
        let Some(signed) = signed else {
            return Err(fail(
                "InvalidGitObject",
                format!("cannot verify signature of tag '{tag_text}' since it is not signed"),
            ));
        };
        let id = keyring
            .verify(&signed.signature, &signed.payload)
            .map_err(|e| {
                fail(
                    "InvalidTagSignature",
                    format!("signature verification of tag '{tag_text}' failed: {e}"),
                )
            })?;
        lines.push(format!("\t- tag '{tag_text}' with key '{id}'"));
    }
    if matches!(mode, VerificationMode::Head | VerificationMode::TagAndHead) {
        let hex = f.commit.to_string();
        let signed = git::commit_signature(&f.repo, f.commit)
            .map_err(|e| fail("VerificationError", e.to_string()))?;
        let id = match signed {
            Some(s) => keyring.verify(&s.signature, &s.payload),
            None => keyring.verify(b"", b""),
        }
        .map_err(|e| {
            fail(
                "InvalidCommitSignature",
                format!("signature verification of commit '{hex}' failed: {e}"),
            )
        })?;
        lines.push(format!("\t- commit '{hex}' with key '{id}'"));
    }
    Ok(format!("verified signature of\n{}", lines.join("\n")))
}
