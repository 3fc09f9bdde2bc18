//! Writing a commit without a git binary: `tidegate up --example` turns the bundled example
//! into a local repository this way. Files become one commit on a branch of a bare repository;
//! committing the same files again adds nothing.

use std::path::Path;

use gix::objs::tree::EntryKind;

use super::GitError;

fn fail(context: &str, e: impl std::fmt::Display) -> GitError {
    GitError::Invalid(format!("{context}: {e}"))
}

/// The commit `branch` of the bare repository at `dir` points at, if the repository and the
/// branch exist.
pub fn branch_commit(dir: &Path, branch: &str) -> Result<Option<String>, GitError> {
    if !dir.join("HEAD").exists() {
        return Ok(None);
    }
    let repo = gix::open(dir).map_err(|e| fail("opening the repository", e))?;
    let reference = format!("refs/heads/{branch}");
    Ok(repo
        .try_find_reference(reference.as_str())
        .map_err(|e| fail("reading the branch", e))?
        .and_then(|mut r| r.peel_to_id().ok())
        .map(|id| id.to_string()))
}

/// Commits `files` (path relative to the root, content) to `branch` of the bare repository
/// at `dir` (created when missing). Returns the commit id, which is the branch's current
/// commit when its tree already holds exactly these files.
pub fn commit_files(
    dir: &Path,
    branch: &str,
    files: &[(&str, &[u8])],
    message: &str,
) -> Result<String, GitError> {
    let repo = if dir.join("HEAD").exists() {
        gix::open(dir).map_err(|e| fail("opening the repository", e))?
    } else {
        gix::init_bare(dir).map_err(|e| fail("creating the repository", e))?
    };
    let mut editor = repo
        .edit_tree(gix::ObjectId::empty_tree(repo.object_hash()))
        .map_err(|e| fail("building the tree", e))?;
    for (path, content) in files {
        let blob = repo
            .write_blob(content)
            .map_err(|e| fail("writing a file", e))?;
        editor
            .upsert(*path, EntryKind::Blob, blob)
            .map_err(|e| fail(path, e))?;
    }
    let tree = editor.write().map_err(|e| fail("writing the tree", e))?;
    let reference = format!("refs/heads/{branch}");
    let parent = repo
        .try_find_reference(reference.as_str())
        .map_err(|e| fail("reading the branch", e))?
        .and_then(|mut r| r.peel_to_id().ok())
        .map(gix::Id::detach);
    if let Some(p) = parent {
        let current = repo
            .find_commit(p)
            .and_then(|c| c.tree_id())
            .map_err(|e| fail("reading the branch", e))?;
        if current == tree {
            return Ok(p.to_string());
        }
    }
    let signature = gix::actor::Signature {
        name: "Tidegate".into(),
        email: "tidegate@localhost".into(),
        time: gix::date::Time::now_utc(),
    };
    let mut time = gix::date::parse::TimeBuf::default();
    let sig = signature.to_ref(&mut time);
    let id = repo
        .commit_as(sig, sig, reference.as_str(), message, tree, parent)
        .map_err(|e| fail("committing", e))?;
    // HEAD names the branch, so clones check it out.
    std::fs::write(dir.join("HEAD"), format!("ref: {reference}\n"))
        .map_err(|e| fail("writing HEAD", e))?;
    Ok(id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_once_per_content() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("r.git");
        let files: &[(&str, &[u8])] = &[("a/b.yaml", b"x: 1\n"), ("c.txt", b"c")];
        let first = commit_files(&repo, "main", files, "one").unwrap();
        let again = commit_files(&repo, "main", files, "one").unwrap();
        assert_eq!(first, again);
        let changed = commit_files(&repo, "main", &[("c.txt", b"d")], "two").unwrap();
        assert_ne!(first, changed);
        assert_eq!(branch_commit(&repo, "main").unwrap(), Some(changed.clone()));
        assert_eq!(branch_commit(&repo, "other").unwrap(), None);
        assert_eq!(
            branch_commit(&dir.path().join("none.git"), "main").unwrap(),
            None
        );
        // git itself reads what was written.
        let out = std::process::Command::new("git")
            .args([
                "--git-dir",
                repo.to_str().unwrap(),
                "log",
                "--format=%H %s",
                "main",
            ])
            .output()
            .expect("git runs");
        let log = String::from_utf8_lossy(&out.stdout);
        assert!(
            log.starts_with(&format!("{changed} two\n{first} one")),
            "{log}"
        );
        let out = std::process::Command::new("git")
            .args([
                "--git-dir",
                repo.to_str().unwrap(),
                "show",
                &format!("{first}:a/b.yaml"),
            ])
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"x: 1\n");
    }
}
