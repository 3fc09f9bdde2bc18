//! Packing a fetched commit (plus included artifacts) into the store.

use std::io;

use crate::archive::Written;
use crate::ignore::SourceIgnore;
use crate::storage::Storage;
use crate::tree::{BlobReader, FileTree};

/// Writes the artifact of `tree` to `path` in `storage`: `.sourceignore` files found in the tree
/// and `spec_ignore` select the files; the write is atomic.
pub fn package(
    tree: &FileTree,
    blobs: &dyn BlobReader,
    spec_ignore: Option<&str>,
    storage: &Storage,
    path: &str,
) -> io::Result<Written> {
    let files = tree.ignore_files(blobs)?;
    let ignore = SourceIgnore::new(
        files.iter().map(|(d, c)| (d.as_str(), c.as_slice())),
        spec_ignore,
    );
    storage.write_atomic(path, |out| tree.write_archive(&ignore, blobs, out))
}

/// The tree of a commit.
pub fn commit_tree(repo: &gix::Repository, commit: gix::ObjectId) -> io::Result<FileTree> {
    let c = repo.find_commit(commit).map_err(io::Error::other)?;
    let tree = c.tree_id().map_err(io::Error::other)?;
    FileTree::from_git(repo, tree.detach())
}
