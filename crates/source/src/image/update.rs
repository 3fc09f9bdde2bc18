//! One run of an ImageUpdateAutomation against its Git repository, without a work tree:
//! check out the reference (stopping early when the remote has not moved), run the setters
//! over the files under the update path, commit the changed files (signed when asked) and push
//! to the push branch and refspec, as Flux's image-automation-controller does.
//!
//! Objects written by a run stay in memory until pushed; nothing is written to the checked-out
//! repository itself (a `file://` remote is read in place).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use gix::ObjectId;

use super::setters::{self, ObjectChanges, Setters};
use crate::git::commit::{self, Author, TreeFile};
use crate::git::push::{self, PushOptions, RefUpdate};
use crate::git::sign::Signer;
use crate::git::{self as git, Auth, GitError, GitReference};

/// What to check out.
pub struct CheckoutRequest<'a> {
    /// The GitRepository's URL.
    pub url: &'a str,
    /// Its credentials.
    pub auth: &'a Auth,
    /// Bound on each network operation (the GitRepository's `timeout`, default 1 minute).
    pub timeout: Duration,
    /// Set to stop a running fetch.
    pub interrupt: &'a AtomicBool,
    /// `spec.git.checkout.ref`, else the GitRepository's `ref`.
    pub reference: &'a GitReference,
    /// The branch commits are pushed to.
    pub push_branch: &'a str,
    /// Whether the push branch differs from the checkout branch: it is checked out when it
    /// exists, else created from the checkout.
    pub switch_branch: bool,
    /// The last observed revision (`status.observedSourceRevision`), when no full run is
    /// needed: a remote still at it ends the run early.
    pub last_observed: Option<&'a str>,
}

/// The outcome of a checkout.
pub enum Checkout {
    /// The remote is still at the last observed revision.
    Unchanged,
    /// Checked out, ready to update.
    Ready(Box<Workspace>),
}

/// A checked-out repository, ready for the setters, a commit and a push.
pub struct Workspace {
    repo: gix::Repository,
    _dirs: Vec<tempfile::TempDir>,
    /// The checkout's revision (`main@sha1:<hex>`).
    pub revision: String,
    checkout_commit: ObjectId,
    checkout_branch: Option<String>,
    base: ObjectId,
    push_branch: String,
    head: Option<ObjectId>,
}

/// The files the setters changed and what changed in them (file paths relative to the update
/// path, as Flux reports them).
#[derive(Debug, Default, Clone)]
pub struct UpdateResult {
    /// Per file (sorted by path), the changes per object.
    pub files: Vec<(String, ObjectChanges)>,
    updated: Vec<TreeFile>,
}

impl UpdateResult {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// How to push.
pub struct PushRequest<'a> {
    /// The GitRepository's URL.
    pub url: &'a str,
    /// Its credentials.
    pub auth: &'a Auth,
    /// Bound on each network operation.
    pub timeout: Duration,
    /// Force the push branch (Flux's `GitForcePushBranch`, on when the push branch differs from
    /// the checkout branch).
    pub force_push_branch: bool,
    /// `spec.git.push.refspec`.
    pub refspec: Option<&'a str>,
    /// `spec.git.push.options`.
    pub options: &'a BTreeMap<String, String>,
}

fn scratch(prefix: &str) -> Result<tempfile::TempDir, GitError> {
    crate::scratch::tempdir(prefix)
        .map_err(|e| GitError::Operation(format!("creating a working directory: {e}")))
}

/// Checks out what `req` asks for.
pub fn checkout(req: &CheckoutRequest<'_>) -> Result<Checkout, GitError> {
    let dir = scratch("automation-")?;
    let fetched = match git::fetch(
        &git::FetchOptions {
            url: req.url,
            reference: req.reference,
            auth: req.auth,
            last_revision: req.last_observed,
            interrupt: req.interrupt,
            timeout: req.timeout,
        },
        dir.path(),
    )? {
        git::Outcome::Unchanged { .. } => return Ok(Checkout::Unchanged),
        git::Outcome::Fetched(f) => f,
    };
    let checkout_commit = fetched.commit;
    let revision = fetched.revision.clone();
    let checkout_branch = match req.reference.strategy() {
        git::Strategy::Branch(b) => Some(b),
        _ => None,
    };
    let mut dirs = vec![dir];
    let (repo, base) = if req.switch_branch {
        let push_dir = scratch("automation-push-")?;
        let push_ref = GitReference {
            branch: Some(req.push_branch.to_string()),
            ..Default::default()
        };
        match git::fetch(
            &git::FetchOptions {
                url: req.url,
                reference: &push_ref,
                auth: req.auth,
                last_revision: None,
                interrupt: req.interrupt,
                timeout: req.timeout,
            },
            push_dir.path(),
        ) {
            Ok(git::Outcome::Fetched(p)) => {
                dirs.push(push_dir);
                (p.repo, p.commit)
            }
            Err(GitError::NotFound(_)) | Ok(git::Outcome::Unchanged { .. }) => {
                (fetched.repo, checkout_commit)
            }
            Err(e) => return Err(e),
        }
    } else {
        (fetched.repo, checkout_commit)
    };
    Ok(Checkout::Ready(Box::new(Workspace {
        repo: repo.with_object_memory(),
        _dirs: dirs,
        revision,
        checkout_commit,
        checkout_branch,
        base,
        push_branch: req.push_branch.to_string(),
        head: None,
    })))
}

impl Workspace {
    /// Runs the setters over the files under `path` (cleaned, never above the root).
    pub fn apply_setters(&self, path: &str, setters: &Setters) -> Result<UpdateResult, GitError> {
        let under = commit::clean_path(path);
        let files = commit::read_files(&self.repo, self.base, &under, &setters::is_candidate)?;
        let prefix = if under.is_empty() {
            String::new()
        } else {
            format!("{}/", under.join("/"))
        };
        let mut result = UpdateResult::default();
        for f in files {
            let Ok(text) = std::str::from_utf8(&f.data) else {
                continue;
            };
            let Some(updated) = setters::update_text(text, setters) else {
                continue;
            };
            let rel = match f.path.strip_prefix(&prefix) {
                Some(r) => r.to_string(),
                // The update path named the file itself.
                None => f.path.rsplit('/').next().unwrap_or(&f.path).to_string(),
            };
            result.files.push((rel, updated.changes));
            result.updated.push(TreeFile {
                path: f.path,
                data: updated.text.into_bytes(),
            });
        }
        Ok(result)
    }

    /// Commits the result on the base (the push branch when it exists, else the checkout).
    pub fn commit(
        &mut self,
        result: &UpdateResult,
        author: &Author,
        message: &str,
        signer: Option<&Signer>,
    ) -> Result<ObjectId, GitError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or_default();
        let id = commit::commit_files(
            &self.repo,
            self.base,
            &result.updated,
            author,
            message,
            gix::date::Time {
                seconds: now,
                offset: 0,
            },
            signer,
        )?;
        self.head = Some(id);
        Ok(id)
    }

    /// Pushes the commit to the push branch, then to the refspec when one is given. Returns
    /// the refspecs pushed.
    pub fn push(&self, req: &PushRequest<'_>) -> Result<(), GitError> {
        let head = self
            .head
            .ok_or_else(|| GitError::Operation("nothing committed to push".into()))?;
        let dir = scratch("automation-ssh-")?;
        let opts = PushOptions {
            url: req.url,
            auth: req.auth,
            timeout: req.timeout,
            options: req.options,
        };
        push::push(
            &self.repo,
            dir.path(),
            &opts,
            &RefUpdate {
                commit: head,
                name: format!("refs/heads/{}", self.push_branch),
                force: req.force_push_branch,
            },
        )
        .map_err(|e| e.redact(req.url))?;
        if let Some(spec) = req.refspec.filter(|s| !s.is_empty()) {
            let update = self.refspec_update(spec, head)?;
            push::push(&self.repo, dir.path(), &opts, &update).map_err(|e| e.redact(req.url))?;
        }
        Ok(())
    }

    /// Reads `[+]<src>:<dst>`: the source is `HEAD` or the push branch (the new commit), or the
    /// checkout branch; a destination without `refs/` is a branch.
    fn refspec_update(&self, spec: &str, head: ObjectId) -> Result<RefUpdate, GitError> {
        let (force, spec) = match spec.strip_prefix('+') {
            Some(s) => (true, s),
            None => (false, spec),
        };
        let (src, dst) = spec.split_once(':').ok_or_else(|| {
            GitError::Invalid(format!(
                "invalid refspec '{spec}': a refspec needs <src>:<dst>"
            ))
        })?;
        let short = |s: &str| s.strip_prefix("refs/heads/").unwrap_or(s).to_string();
        let commit = if src == "HEAD" || short(src) == self.push_branch {
            head
        } else if self.checkout_branch.as_deref() == Some(short(src).as_str()) {
            self.checkout_commit
        } else {
            return Err(GitError::Invalid(format!(
                "invalid refspec '{spec}': source '{src}' is neither HEAD nor a checked-out branch"
            )));
        };
        if dst.is_empty() {
            return Err(GitError::Invalid(format!(
                "invalid refspec '{spec}': empty destination"
            )));
        }
        let name = if dst.starts_with("refs/") {
            dst.to_string()
        } else {
            format!("refs/heads/{dst}")
        };
        Ok(RefUpdate {
            commit,
            name,
            force,
        })
    }
}
