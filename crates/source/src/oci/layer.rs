//! The content layer of a Flux OCI artifact, as `flux push artifact` builds it: a tar.gz of a
//! directory (or of one file), walked in lexical order, with a `.` root entry, permission bits
//! kept from disk, owners and times zeroed, symbolic links and special files left out, and the
//! `--ignore-paths` patterns applied.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;

use crate::archive::Written;
use crate::ignore::SourceIgnore;

/// A layer that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    /// The path does not exist.
    #[error("invalid path '{path}', must point to an existing directory or file: {source}")]
    Path {
        /// The path given.
        path: String,
        /// The cause.
        source: io::Error,
    },
    /// Reading or writing failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: io::Error,
    },
}

/// Builds the layer of `path` (a directory or a single file) into `out`, leaving out what
/// `ignore` matches; returns the writer and the compressed bytes' digest and size.
pub fn build<W: Write>(
    path: &Path,
    ignore: &SourceIgnore,
    out: W,
) -> Result<(W, Written), LayerError> {
    let meta = fs::metadata(path).map_err(|source| LayerError::Path {
        path: path.display().to_string(),
        source,
    })?;
    let hashing = crate::archive::HashingWriter::new(out);
    let gz = GzEncoder::new(hashing, Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    let io = |context: &str| {
        let context = context.to_string();
        move |source| LayerError::Io { context, source }
    };
    if meta.is_dir() {
        append_dir(&mut tar, ".", meta.permissions_mode()).map_err(io("writing '.'"))?;
        walk(&mut tar, path, "", ignore)?;
    } else {
        // A single file: as Flux, which copies it into a fresh 0700 directory first.
        append_dir(&mut tar, ".", 0o700).map_err(io("writing '.'"))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !ignore.is_ignored(&name, false) {
            append_file(&mut tar, &name, path, meta.permissions_mode())
                .map_err(io(&format!("reading '{}'", path.display())))?;
        }
    }
    let gz = tar.into_inner().map_err(io("writing the layer"))?;
    let hashing = gz.finish().map_err(io("compressing the layer"))?;
    Ok(hashing.finish())
}

trait PermissionsMode {
    fn permissions_mode(&self) -> u32;
}

impl PermissionsMode for fs::Metadata {
    #[cfg(unix)]
    fn permissions_mode(&self) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        self.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    fn permissions_mode(&self) -> u32 {
        if self.is_dir() { 0o755 } else { 0o644 }
    }
}

fn walk<W: Write>(
    tar: &mut tar::Builder<W>,
    dir: &Path,
    rel: &str,
    ignore: &SourceIgnore,
) -> Result<(), LayerError> {
    let io = |context: String| move |source| LayerError::Io { context, source };
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(dir)
        .map_err(io(format!("reading '{}'", dir.display())))?
        .collect::<Result<_, _>>()
        .map_err(io(format!("reading '{}'", dir.display())))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let rel_path = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        // Not following symbolic links: they and special files are left out.
        let meta =
            fs::symlink_metadata(&path).map_err(io(format!("reading '{}'", path.display())))?;
        if meta.is_dir() {
            if ignore.is_ignored(&rel_path, true) {
                continue;
            }
            append_dir(tar, &rel_path, meta.permissions_mode())
                .map_err(io(format!("writing '{rel_path}'")))?;
            walk(tar, &path, &rel_path, ignore)?;
        } else if meta.is_file() {
            if ignore.is_ignored(&rel_path, false) {
                continue;
            }
            append_file(tar, &rel_path, &path, meta.permissions_mode())
                .map_err(io(format!("reading '{}'", path.display())))?;
        }
    }
    Ok(())
}

fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut h = tar::Header::new_ustar();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_mtime(0);
    h.set_uid(0);
    h.set_gid(0);
    h
}

fn append_dir<W: Write>(tar: &mut tar::Builder<W>, name: &str, mode: u32) -> io::Result<()> {
    let mut h = header(tar::EntryType::Directory, mode, 0);
    tar.append_data(&mut h, name, io::empty())
}

fn append_file<W: Write>(
    tar: &mut tar::Builder<W>,
    name: &str,
    path: &Path,
    mode: u32,
) -> io::Result<()> {
    let file = fs::File::open(path)?;
    let size = file.metadata()?.len();
    let mut h = header(tar::EntryType::Regular, mode, size);
    tar.append_data(&mut h, name, file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn entries_modes_and_ignores() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("b/c")).unwrap();
        fs::write(dir.path().join("a.yaml"), "a").unwrap();
        fs::write(dir.path().join("b/c/d.yaml"), "d").unwrap();
        fs::write(dir.path().join("logo.png"), "png").unwrap();
        fs::create_dir_all(dir.path().join(".git")).unwrap();
        fs::write(dir.path().join(".git/HEAD"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("a.yaml", dir.path().join("link")).unwrap();
        let ignore = SourceIgnore::from_patterns(&crate::ignore::exclude_oci());
        let (bytes, written) = build(dir.path(), &ignore, Vec::new()).unwrap();
        assert_eq!(written.size, bytes.len() as u64);
        let mut names = Vec::new();
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
        for e in tar.entries().unwrap() {
            let mut e = e.unwrap();
            assert_eq!(e.header().mtime().unwrap(), 0);
            let mut s = String::new();
            e.read_to_string(&mut s).unwrap();
            names.push(e.path().unwrap().to_string_lossy().into_owned());
        }
        assert_eq!(names, [".", "a.yaml", "b", "b/c", "b/c/d.yaml"]);
        // The same input gives the same bytes.
        let (again, _) = build(dir.path(), &ignore, Vec::new()).unwrap();
        assert_eq!(bytes, again);
    }

    #[test]
    fn missing_path_is_named() {
        let ignore = SourceIgnore::from_patterns(&[]);
        let e = build(Path::new("/no/such/dir"), &ignore, Vec::new()).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "invalid path '/no/such/dir', must point to an existing directory or file: "
            ),
            "{e}"
        );
    }
}
