//! Writing commits: reading the files under a path of a commit's tree, writing changed files
//! as a new commit on top (trees edited in the object database, no work tree), signed when a
//! [`Signer`] is given.

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};

use super::GitError;
use super::sign::Signer;

/// A file read from a commit.
#[derive(Debug, Clone)]
pub struct TreeFile {
    /// The path from the repository root (`clusters/app/deploy.yaml`).
    pub path: String,
    /// The content.
    pub data: Vec<u8>,
}

/// The author (and committer) of a commit.
#[derive(Debug, Clone)]
pub struct Author {
    /// The name (may be empty).
    pub name: String,
    /// The email.
    pub email: String,
}

fn op(message: String) -> GitError {
    GitError::Operation(message)
}

/// Cleans `path` as a path inside the repository (`filepath-securejoin`'s lexical rules: `.`
/// and empty parts dropped, `..` never above the root). Returns its parts.
pub fn clean_path(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p.to_string()),
        }
    }
    parts
}

/// The regular files under `under` (a cleaned path; empty for the root) of `commit`'s tree
/// whose names `wanted` accepts, with their contents; symbolic links and submodules are
/// skipped. A path that does not exist is an error, as walking a missing directory is.
pub fn read_files(
    repo: &gix::Repository,
    commit: ObjectId,
    under: &[String],
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<TreeFile>, GitError> {
    let commit = repo
        .find_commit(commit)
        .map_err(|e| op(format!("reading commit {commit}: {e}")))?;
    let mut tree = commit
        .tree()
        .map_err(|e| op(format!("reading the tree of {}: {e}", commit.id)))?;
    let mut prefix = String::new();
    let display = under.join("/");
    for (i, part) in under.iter().enumerate() {
        let entry = tree.find_entry(part.as_str()).ok_or_else(|| {
            op(format!(
                "walking path for files: lstat {display}: no such file or directory"
            ))
        })?;
        let id = entry.object_id();
        let mode = entry.mode();
        if mode.is_tree() {
            tree = repo
                .find_tree(id)
                .map_err(|e| op(format!("reading tree {id}: {e}")))?;
            prefix.push_str(part);
            prefix.push('/');
        } else if mode.is_blob() && i + 1 == under.len() {
            // A single file.
            let blob = repo
                .find_blob(id)
                .map_err(|e| op(format!("reading {display}: {e}")))?;
            if !wanted(part) {
                return Ok(Vec::new());
            }
            return Ok(vec![TreeFile {
                path: display,
                data: blob.data.clone(),
            }]);
        } else {
            return Ok(Vec::new());
        }
    }
    let mut recorder = gix::traverse::tree::Recorder::default();
    tree.traverse()
        .breadthfirst(&mut recorder)
        .map_err(|e| op(format!("walking path for files: {e}")))?;
    let mut out = Vec::new();
    for entry in recorder.records {
        if !entry.mode.is_blob() {
            continue;
        }
        let rel = entry.filepath.to_str_lossy().to_string();
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if !wanted(name) {
            continue;
        }
        let blob = repo
            .find_blob(entry.oid)
            .map_err(|e| op(format!("reading {prefix}{rel}: {e}")))?;
        out.push(TreeFile {
            path: format!("{prefix}{rel}"),
            data: blob.data.clone(),
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Writes `files` (paths from the root, existing regular files) on top of `parent` as a new
/// commit with `message`, authored and committed by `author` at `time`, signed by `signer`.
/// Returns the commit's id; the repository's references are not touched.
pub fn commit_files(
    repo: &gix::Repository,
    parent: ObjectId,
    files: &[TreeFile],
    author: &Author,
    message: &str,
    time: gix::date::Time,
    signer: Option<&Signer>,
) -> Result<ObjectId, GitError> {
    let parent_commit = repo
        .find_commit(parent)
        .map_err(|e| op(format!("reading commit {parent}: {e}")))?;
    let tree_id = parent_commit
        .tree_id()
        .map_err(|e| op(format!("reading the tree of {parent}: {e}")))?;
    let mut editor = repo
        .edit_tree(tree_id)
        .map_err(|e| op(format!("editing tree {tree_id}: {e}")))?;
    for f in files {
        let kind = editor
            .get(f.path.as_str())
            .map(|e| e.mode().kind())
            .unwrap_or(gix::object::tree::EntryKind::Blob);
        let blob = repo
            .write_blob(&f.data)
            .map_err(|e| op(format!("writing {}: {e}", f.path)))?;
        editor
            .upsert(f.path.as_str(), kind, blob.detach())
            .map_err(|e| op(format!("writing {}: {e}", f.path)))?;
    }
    let tree = editor
        .write()
        .map_err(|e| op(format!("writing the tree: {e}")))?
        .detach();
    let signature = gix::actor::Signature {
        name: BString::from(author.name.as_str()),
        email: BString::from(author.email.as_str()),
        time,
    };
    let mut commit = gix::objs::Commit {
        tree,
        parents: [parent].into_iter().collect(),
        author: signature.clone(),
        committer: signature,
        encoding: None,
        message: BString::from(message),
        extra_headers: Vec::new(),
    };
    if let Some(signer) = signer {
        let mut payload = Vec::new();
        gix::objs::WriteTo::write_to(&commit, &mut payload)
            .map_err(|e| op(format!("encoding the commit: {e}")))?;
        let sig = signer
            .sign(&payload)
            .map_err(|e| op(format!("unable to sign commit: {e}")))?;
        commit.extra_headers.push((
            BString::from("gpgsig"),
            BString::from(sig.trim_end_matches('\n')),
        ));
    }
    let id = repo
        .write_object(&commit)
        .map_err(|e| op(format!("writing the commit: {e}")))?;
    Ok(id.detach())
}

/// The objects `commit` adds to its first parent: itself, and the trees and blobs whose ids
/// its parent's tree does not hold at the same path.
pub fn new_objects(repo: &gix::Repository, commit: ObjectId) -> Result<Vec<ObjectId>, GitError> {
    let c = repo
        .find_commit(commit)
        .map_err(|e| op(format!("reading commit {commit}: {e}")))?;
    let tree = c
        .tree_id()
        .map_err(|e| op(format!("reading commit {commit}: {e}")))?
        .detach();
    let old = match c.parent_ids().next() {
        Some(p) => Some(
            repo.find_commit(p)
                .map_err(|e| op(format!("reading commit {p}: {e}")))?
                .tree_id()
                .map_err(|e| op(format!("reading commit {p}: {e}")))?
                .detach(),
        ),
        None => None,
    };
    let mut out = vec![commit];
    diff_trees(repo, tree, old, &mut out)?;
    Ok(out)
}

fn diff_trees(
    repo: &gix::Repository,
    new: ObjectId,
    old: Option<ObjectId>,
    out: &mut Vec<ObjectId>,
) -> Result<(), GitError> {
    if Some(new) == old {
        return Ok(());
    }
    out.push(new);
    let read =
        |id: ObjectId| -> Result<Vec<(BString, gix::objs::tree::EntryMode, ObjectId)>, GitError> {
            let t = repo
                .find_tree(id)
                .map_err(|e| op(format!("reading tree {id}: {e}")))?;
            let decoded = t
                .decode()
                .map_err(|e| op(format!("reading tree {id}: {e}")))?;
            Ok(decoded
                .entries
                .iter()
                .map(|e| (e.filename.to_owned(), e.mode, e.oid.to_owned()))
                .collect())
        };
    let new_entries = read(new)?;
    let old_entries = match old {
        Some(o) => read(o)?,
        None => Vec::new(),
    };
    for (name, mode, id) in new_entries {
        if mode.is_commit() {
            continue;
        }
        let before = old_entries
            .iter()
            .find(|(n, m, _)| *n == name && m.is_tree() == mode.is_tree())
            .map(|(_, _, id)| *id);
        if before == Some(id) {
            continue;
        }
        if mode.is_tree() {
            diff_trees(repo, id, before, out)?;
        } else {
            out.push(id);
        }
    }
    Ok(())
}

/// Whether `ancestor` is `commit` or one of its ancestors, as far as the (possibly shallow)
/// repository knows them.
pub fn is_ancestor(repo: &gix::Repository, ancestor: ObjectId, commit: ObjectId) -> bool {
    if ancestor == commit {
        return true;
    }
    let Ok(walk) = repo.rev_walk([commit]).all() else {
        return false;
    };
    for info in walk {
        match info {
            Ok(info) if info.id == ancestor => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}
