//! `file://` repositories, read in place: no clone, no copy.

use std::path::Path;

use super::select::{self, ListedRef};
use super::{FetchOptions, GitError, Outcome, commit_of, finish, target_of, unchanged};

pub(super) fn fetch(opts: &FetchOptions<'_>, path: &Path) -> Result<Outcome, GitError> {
    let repo = gix::open(path).map_err(|e| {
        GitError::NotFound(format!(
            "unable to clone '{}': repository not found: {e}",
            opts.url
        ))
    })?;
    let listed = listing(&repo)?;
    if listed.is_empty() {
        return Err(GitError::Empty);
    }
    let strategy = opts.reference.strategy();
    let selection = select::select(&strategy, &listed, opts.url)?;
    if let Some(outcome) = unchanged(&strategy, &selection, opts.last_revision) {
        return Ok(outcome);
    }
    let target = target_of(&selection, &listed);
    let commit = commit_of(&strategy, &selection)?;
    finish(repo, &selection, commit, target)
}

/// Every reference of the repository with its peeled commit.
fn listing(repo: &gix::Repository) -> Result<Vec<ListedRef>, GitError> {
    let err = |e: &dyn std::fmt::Display| GitError::Operation(format!("listing references: {e}"));
    let platform = repo.references().map_err(|e| err(&e))?;
    let mut out = Vec::new();
    for r in platform.all().map_err(|e| err(&e))? {
        let Ok(mut r) = r else { continue };
        let name = r.name().as_bstr().to_string();
        let Some(target) = r.target().try_id().map(|id| id.to_owned()) else {
            continue;
        };
        let peeled = r
            .peel_to_id()
            .ok()
            .map(|id| id.detach())
            .filter(|p| *p != target);
        out.push(ListedRef {
            name,
            target,
            peeled,
        });
    }
    Ok(out)
}
