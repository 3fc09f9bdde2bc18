//! The files of one source, before they become an artifact.
//!
//! A [`FileTree`] is built from a Git tree (contents stay in the object database until written)
//! and from directories on disk (included artifacts), then written as a reproducible tar.gz:
//! depth first, each directory's entries sorted by name, ignored paths left out, symbolic links
//! and submodules skipped (as Flux does).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::archive::{ArchiveWriter, Written};
use crate::ignore::{IGNORE_FILE, SourceIgnore};

/// Where a file's bytes are.
#[derive(Debug, Clone)]
pub enum Content {
    /// A blob in a Git object database.
    Blob(gix::ObjectId),
    /// A file on disk.
    Disk(PathBuf),
}

#[derive(Debug, Clone)]
enum Node {
    Dir(Dir),
    File { executable: bool, content: Content },
}

#[derive(Debug, Clone, Default)]
struct Dir {
    entries: BTreeMap<String, Node>,
}

/// A tree of files and directories.
#[derive(Debug, Clone, Default)]
pub struct FileTree {
    root: Dir,
    files: usize,
}

/// Reads the bytes of a [`Content::Blob`].
pub trait BlobReader {
    /// The blob's data.
    fn read_blob(&self, id: &gix::ObjectId) -> io::Result<Vec<u8>>;
}

impl BlobReader for gix::Repository {
    fn read_blob(&self, id: &gix::ObjectId) -> io::Result<Vec<u8>> {
        let blob = self.find_blob(*id).map_err(io::Error::other)?;
        Ok(blob.detach().data)
    }
}

/// No object database: every blob read fails (for trees built from disk only).
pub struct NoBlobs;

impl BlobReader for NoBlobs {
    fn read_blob(&self, id: &gix::ObjectId) -> io::Result<Vec<u8>> {
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no object database for blob {id}"),
        ))
    }
}

impl FileTree {
    /// The tree of a Git tree object, recursively. Symbolic links and submodules are skipped.
    pub fn from_git(repo: &gix::Repository, tree: gix::ObjectId) -> io::Result<Self> {
        let mut out = FileTree::default();
        let mut files = 0;
        fill_from_git(repo, tree, &mut out.root, &mut files)?;
        out.files = files;
        Ok(out)
    }

    /// The tree of a directory on disk. Symbolic links are skipped.
    pub fn from_dir(dir: &Path) -> io::Result<Self> {
        let mut out = FileTree::default();
        let mut files = 0;
        fill_from_dir(dir, &mut out.root, &mut files)?;
        out.files = files;
        Ok(out)
    }

    /// Number of files.
    pub fn file_count(&self) -> usize {
        self.files
    }

    /// Puts `other` at `at` (a path from [`clean_relative`]; `""` for the root), replacing what
    /// was there.
    pub fn graft(&mut self, at: &str, other: FileTree) {
        let mut dir = &mut self.root;
        for part in at.split('/').filter(|p| !p.is_empty()) {
            let node = dir
                .entries
                .entry(part.to_string())
                .or_insert_with(|| Node::Dir(Dir::default()));
            // A file in the way is replaced by a directory.
            if !matches!(node, Node::Dir(_)) {
                *node = Node::Dir(Dir::default());
            }
            dir = match node {
                Node::Dir(d) => d,
                Node::File { .. } => return,
            };
        }
        *dir = other.root;
        self.files = count_files(&self.root);
    }

    /// Keeps only the directories `dirs` (relative paths) and what is under them (sparse
    /// checkout). Returns the first directory that does not exist.
    pub fn retain_dirs(&mut self, dirs: &[String]) -> Result<(), String> {
        let mut kept = FileTree::default();
        for dir in dirs {
            let clean = clean_relative(dir).ok_or_else(|| dir.clone())?;
            let mut at = &self.root;
            for part in clean.split('/').filter(|p| !p.is_empty()) {
                match at.entries.get(part) {
                    Some(Node::Dir(d)) => at = d,
                    _ => return Err(dir.clone()),
                }
            }
            kept.graft(
                dir,
                FileTree {
                    root: at.clone(),
                    files: 0,
                },
            );
        }
        *self = kept;
        Ok(())
    }

    /// The `.sourceignore` files of the tree as `(directory, content)`, in walk order.
    pub fn ignore_files(&self, blobs: &dyn BlobReader) -> io::Result<Vec<(String, Vec<u8>)>> {
        let mut out = Vec::new();
        collect_ignore_files(&self.root, "", blobs, &mut out)?;
        Ok(out)
    }

    /// Writes the tree as a tar.gz to `out`, leaving out what `ignore` excludes.
    pub fn write_archive<W: Write>(
        &self,
        ignore: &SourceIgnore,
        blobs: &dyn BlobReader,
        out: W,
    ) -> io::Result<(W, Written)> {
        let mut writer = ArchiveWriter::new(out);
        let mut path = String::new();
        write_dir(&self.root, &mut path, ignore, blobs, &mut writer)?;
        writer.finish()
    }
}

/// Bounds on a tree read from Git: a hostile repository must not exhaust the stack or memory.
const MAX_DEPTH: usize = 1024;
/// Files and directories at most (a tree may reference one subtree many times).
const MAX_ENTRIES: usize = 1_000_000;

fn fill_from_git(
    repo: &gix::Repository,
    id: gix::ObjectId,
    dir: &mut Dir,
    files: &mut usize,
) -> io::Result<()> {
    let mut entries = 0usize;
    fill_git_dir(repo, id, dir, files, &mut entries, "", 0)
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

fn fill_git_dir(
    repo: &gix::Repository,
    id: gix::ObjectId,
    dir: &mut Dir,
    files: &mut usize,
    entries: &mut usize,
    at: &str,
    depth: usize,
) -> io::Result<()> {
    use gix::object::tree::EntryKind;
    if depth > MAX_DEPTH {
        return Err(invalid(format!(
            "directory '{at}' is nested deeper than {MAX_DEPTH} levels"
        )));
    }
    let tree = repo.find_tree(id).map_err(io::Error::other)?;
    for entry in tree.iter() {
        let entry = entry.map_err(|e| invalid(format!("reading tree '{at}': {e}")))?;
        let name = entry.filename().to_string();
        if !valid_name(&name) {
            return Err(invalid(format!(
                "tree '{at}' has an entry with an invalid name {name:?}"
            )));
        }
        *entries += 1;
        if *entries > MAX_ENTRIES {
            return Err(invalid(format!(
                "the tree has more than {MAX_ENTRIES} files and directories"
            )));
        }
        let oid = entry.oid().to_owned();
        let node = match entry.mode().kind() {
            EntryKind::Tree => {
                let mut sub = Dir::default();
                let path = if at.is_empty() {
                    name.clone()
                } else {
                    format!("{at}/{name}")
                };
                fill_git_dir(repo, oid, &mut sub, files, entries, &path, depth + 1)?;
                Node::Dir(sub)
            }
            EntryKind::Blob | EntryKind::BlobExecutable => {
                *files += 1;
                let executable = entry.mode().kind() == EntryKind::BlobExecutable;
                Node::File {
                    executable,
                    content: Content::Blob(oid),
                }
            }
            EntryKind::Link | EntryKind::Commit => continue,
        };
        dir.entries.insert(name, node);
    }
    Ok(())
}

/// A file name a tree may hold: not empty, not `.` or `..`, no `/` or NUL.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
}

fn fill_from_dir(path: &Path, dir: &mut Dir, files: &mut usize) -> io::Result<()> {
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        let ty = entry.file_type()?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if ty.is_dir() {
            let mut sub = Dir::default();
            fill_from_dir(&entry.path(), &mut sub, files)?;
            dir.entries.insert(name, Node::Dir(sub));
        } else if ty.is_file() {
            *files += 1;
            let executable = is_executable(&entry.metadata()?);
            dir.entries.insert(
                name,
                Node::File {
                    executable,
                    content: Content::Disk(entry.path()),
                },
            );
        }
    }
    Ok(())
}

#[cfg(unix)]
fn is_executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_: &std::fs::Metadata) -> bool {
    false
}

fn count_files(dir: &Dir) -> usize {
    dir.entries
        .values()
        .map(|n| match n {
            Node::Dir(d) => count_files(d),
            Node::File { .. } => 1,
        })
        .sum()
}

fn read(content: &Content, blobs: &dyn BlobReader) -> io::Result<Vec<u8>> {
    match content {
        Content::Blob(id) => blobs.read_blob(id),
        Content::Disk(p) => std::fs::read(p),
    }
}

fn collect_ignore_files(
    dir: &Dir,
    at: &str,
    blobs: &dyn BlobReader,
    out: &mut Vec<(String, Vec<u8>)>,
) -> io::Result<()> {
    if let Some(Node::File { content, .. }) = dir.entries.get(IGNORE_FILE) {
        out.push((at.to_string(), read(content, blobs)?));
    }
    for (name, node) in &dir.entries {
        if let Node::Dir(sub) = node
            && name != ".git"
        {
            let path = if at.is_empty() {
                name.clone()
            } else {
                format!("{at}/{name}")
            };
            collect_ignore_files(sub, &path, blobs, out)?;
        }
    }
    Ok(())
}

fn write_dir<W: Write>(
    dir: &Dir,
    path: &mut String,
    ignore: &SourceIgnore,
    blobs: &dyn BlobReader,
    writer: &mut ArchiveWriter<W>,
) -> io::Result<()> {
    for (name, node) in &dir.entries {
        let len = path.len();
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str(name);
        match node {
            Node::Dir(sub) => {
                if !ignore.is_ignored(path, true) {
                    writer.add_dir(path)?;
                    write_dir(sub, path, ignore, blobs, writer)?;
                }
            }
            Node::File {
                executable,
                content,
            } => {
                if !ignore.is_ignored(path, false) {
                    let data = read(content, blobs)?;
                    writer.add_file(path, *executable, &data)?;
                }
            }
        }
        path.truncate(len);
    }
    Ok(())
}

/// A relative path in clean `a/b` form: `.` components and empty ones dropped, `None` for
/// absolute paths and `..` (the one rule for every path that comes from a spec or an archive).
pub fn clean_relative(path: &str) -> Option<String> {
    let mut parts = Vec::new();
    for c in Path::new(path).components() {
        match c {
            std::path::Component::Normal(p) => parts.push(p.to_str()?),
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// `root` joined with a relative `path`, or `None` when `path` is absolute or climbs out.
pub fn safe_join(root: &Path, path: &str) -> Option<PathBuf> {
    clean_relative(path).map(|p| {
        if p.is_empty() {
            root.to_path_buf()
        } else {
            root.join(p)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk_tree(files: &[&str]) -> (tempfile::TempDir, FileTree) {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, f).unwrap();
        }
        let tree = FileTree::from_dir(dir.path()).unwrap();
        (dir, tree)
    }

    #[test]
    fn sparse_dirs_graft_and_safe_join() {
        let (_d, mut tree) = disk_tree(&["a/x.yaml", "b/y.yaml", "b/c/z.yaml", "top.yaml"]);
        assert_eq!(tree.file_count(), 4);
        tree.retain_dirs(&["b/c".into(), "a".into()]).unwrap();
        assert_eq!(tree.file_count(), 2);
        assert_eq!(
            tree.clone().retain_dirs(&["nope".into()]),
            Err("nope".into())
        );
        let (_e, other) = disk_tree(&["lib.yaml"]);
        tree.graft("vendor/lib", other);
        assert_eq!(tree.file_count(), 3);
        assert!(safe_join(Path::new("/r"), "../x").is_none());
        assert!(safe_join(Path::new("/r"), "/abs").is_none());
        assert_eq!(clean_relative("./a//b/."), Some("a/b".into()));
        assert_eq!(clean_relative("."), Some(String::new()));
        assert!(clean_relative("a/../b").is_none());
        assert_eq!(
            safe_join(Path::new("/r"), "./a/b"),
            Some(PathBuf::from("/r/a/b"))
        );
    }
}
