//! Safe extraction of an artifact (a tar.gz) into a directory.
//!
//! An artifact comes over the network, so every entry is checked before anything is written:
//! no absolute paths, no `..`, nothing written through a symbolic link, symbolic links only when
//! they resolve inside the root (checked again once everything is extracted, so a later entry
//! cannot redirect an earlier link), no hard links, devices or FIFOs, and limits on the
//! uncompressed size and the number of entries.

use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// Bounds on what one artifact may unpack to.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Total bytes of file content.
    pub max_size: u64,
    /// Number of tar entries (files, directories, links).
    pub max_entries: usize,
}

impl Default for Limits {
    /// 100 MiB and 100,000 entries (Flux's untar limit is 100 MiB).
    fn default() -> Self {
        Limits {
            max_size: 100 << 20,
            max_entries: 100_000,
        }
    }
}

/// Why an archive was refused or could not be extracted. Messages name the entry.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The entry's path is absolute or climbs out of the root.
    #[error("tar entry '{0}' has an unsafe path (absolute or containing '..')")]
    UnsafePath(String),
    /// The entry is a symbolic link whose target leaves the root.
    #[error(
        "tar entry '{entry}' is a symbolic link to '{target}', which is outside the extraction root"
    )]
    EscapingLink {
        /// The link's path in the archive.
        entry: String,
        /// Its target.
        target: String,
    },
    /// Writing the entry would go through a symbolic link.
    #[error("tar entry '{entry}' would be written through the symbolic link '{link}'")]
    ThroughLink {
        /// The entry's path in the archive.
        entry: String,
        /// The link on the way.
        link: String,
    },
    /// Hard links, devices, FIFOs and other types are refused.
    #[error("tar entry '{entry}' has an unsupported type ({kind})")]
    Unsupported {
        /// The entry's path in the archive.
        entry: String,
        /// Its type.
        kind: String,
    },
    /// The uncompressed content is larger than the limit.
    #[error("archive content exceeds the size limit of {0} bytes")]
    TooLarge(u64),
    /// The archive has more entries than the limit.
    #[error("archive has more than {0} entries")]
    TooManyEntries(usize),
    /// The stream is not a readable tar.gz, or the disk refused a write.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: io::Error,
    },
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> ExtractError {
    let context = context.into();
    move |source| ExtractError::Io { context, source }
}

/// Extracts a gzip-compressed tar stream into `root` (created if missing), enforcing `limits`.
pub fn extract_tar_gz(reader: impl Read, root: &Path, limits: Limits) -> Result<(), ExtractError> {
    let gz = flate2::read::GzDecoder::new(reader);
    extract_tar(gz, root, limits)
}

/// Extracts an uncompressed tar stream into `root`; see [`extract_tar_gz`].
pub fn extract_tar(reader: impl Read, root: &Path, limits: Limits) -> Result<(), ExtractError> {
    fs::create_dir_all(root).map_err(io_err(format!("creating {}", root.display())))?;
    let mut archive = tar::Archive::new(reader);
    let entries = archive.entries().map_err(io_err("reading archive"))?;
    let mut total: u64 = 0;
    let mut count = 0usize;
    let mut links: Vec<(String, PathBuf, String)> = Vec::new();
    for entry in entries {
        let mut entry = entry.map_err(io_err("reading archive"))?;
        count += 1;
        if count > limits.max_entries {
            return Err(ExtractError::TooManyEntries(limits.max_entries));
        }
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let rel = safe_relative(&raw)?;
        if rel.as_os_str().is_empty() {
            continue; // "./" or the root itself
        }
        let dest = root.join(&rel);
        check_no_link_on_path(root, &rel, &raw)?;
        let kind = entry.header().entry_type();
        match kind {
            tar::EntryType::Directory => {
                fs::create_dir_all(&dest).map_err(io_err(format!("creating {raw}")))?;
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let size = entry.size();
                total = total.saturating_add(size);
                if total > limits.max_size {
                    return Err(ExtractError::TooLarge(limits.max_size));
                }
                if let Some(parent) = dest.parent() {
                    fs::create_dir_all(parent).map_err(io_err(format!("creating {raw}")))?;
                }
                remove_existing(&dest, &raw)?;
                let mut file =
                    fs::File::create(&dest).map_err(io_err(format!("creating {raw}")))?;
                // Read at most the declared size (plus one byte to notice a lie).
                let copied = io::copy(&mut (&mut entry).take(size + 1), &mut file)
                    .map_err(io_err(format!("writing {raw}")))?;
                if copied > size {
                    return Err(ExtractError::TooLarge(limits.max_size));
                }
                set_mode(&file, entry.header().mode().unwrap_or(0o644), &raw)?;
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name_bytes()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                let parent = rel.parent().unwrap_or(Path::new(""));
                if lexical_escape(parent, &target) {
                    return Err(ExtractError::EscapingLink { entry: raw, target });
                }
                if let Some(p) = dest.parent() {
                    fs::create_dir_all(p).map_err(io_err(format!("creating {raw}")))?;
                }
                remove_existing(&dest, &raw)?;
                make_symlink(&target, &dest).map_err(io_err(format!("linking {raw}")))?;
                links.push((raw, rel, target));
            }
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => {}
            other => {
                return Err(ExtractError::Unsupported {
                    entry: raw,
                    kind: format!("{other:?}"),
                });
            }
        }
    }
    // A link checked when it was written may have been redirected by a later entry (a link
    // that its target goes through); check every link again on the final tree.
    for (raw, rel, target) in links {
        if !resolves_inside(root, &rel) {
            return Err(ExtractError::EscapingLink { entry: raw, target });
        }
    }
    Ok(())
}

/// The entry path as a clean relative path, or an error for absolute paths and `..`.
fn safe_relative(raw: &str) -> Result<PathBuf, ExtractError> {
    crate::tree::clean_relative(raw)
        .map(PathBuf::from)
        .ok_or_else(|| ExtractError::UnsafePath(raw.to_string()))
}

/// Refuses to write `rel` when one of its parent directories inside `root` is a symbolic link.
fn check_no_link_on_path(root: &Path, rel: &Path, raw: &str) -> Result<(), ExtractError> {
    let mut at = root.to_path_buf();
    let mut parts = rel.components().peekable();
    while let Some(c) = parts.next() {
        if parts.peek().is_none() {
            break; // the entry itself may replace an existing link
        }
        at.push(c);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = at.strip_prefix(root).unwrap_or(&at).display().to_string();
                return Err(ExtractError::ThroughLink {
                    entry: raw.to_string(),
                    link,
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether `target`, read from directory `parent` (relative to the root), climbs above the root
/// by its text alone. Absolute targets always escape.
fn lexical_escape(parent: &Path, target: &str) -> bool {
    let t = Path::new(target);
    if t.is_absolute() || target.is_empty() {
        return true;
    }
    let mut depth = parent.components().count() as i64;
    for c in t.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return true,
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

/// Resolves the link at `rel` physically, following links inside the tree, and tells whether
/// every step stays inside the root. Missing targets are judged by their path.
fn resolves_inside(root: &Path, rel: &Path) -> bool {
    // `stack` is the current location as components below the root.
    let mut pending: Vec<std::ffi::OsString> = rel
        .components()
        .rev()
        .map(|c| c.as_os_str().to_os_string())
        .collect();
    let mut stack: Vec<std::ffi::OsString> = Vec::new();
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            if stack.pop().is_none() {
                return false;
            }
            continue;
        }
        if part == "." {
            continue;
        }
        stack.push(part);
        let here: PathBuf = stack.iter().fold(root.to_path_buf(), |p, s| p.join(s));
        if let Ok(target) = fs::read_link(&here) {
            hops += 1;
            if hops > 40 || target.is_absolute() {
                return false;
            }
            stack.pop();
            for c in target.components().rev() {
                match c {
                    Component::Normal(s) => pending.push(s.to_os_string()),
                    Component::ParentDir => pending.push("..".into()),
                    Component::CurDir => {}
                    Component::RootDir | Component::Prefix(_) => return false,
                }
            }
        }
    }
    true
}

fn remove_existing(dest: &Path, raw: &str) -> Result<(), ExtractError> {
    match fs::symlink_metadata(dest) {
        Ok(m) if m.is_dir() => Err(ExtractError::Io {
            context: format!("writing {raw}"),
            source: io::Error::new(io::ErrorKind::AlreadyExists, "a directory is in the way"),
        }),
        Ok(_) => fs::remove_file(dest).map_err(io_err(format!("replacing {raw}"))),
        Err(_) => Ok(()),
    }
}

#[cfg(unix)]
fn set_mode(file: &fs::File, mode: u32, raw: &str) -> Result<(), ExtractError> {
    use std::os::unix::fs::PermissionsExt;
    // Only permission bits, never setuid/setgid/sticky; always readable by the owner.
    let mode = (mode & 0o777) | 0o600;
    file.set_permissions(fs::Permissions::from_mode(mode))
        .map_err(io_err(format!("chmod {raw}")))
}

#[cfg(not(unix))]
fn set_mode(_: &fs::File, _: u32, _: &str) -> Result<(), ExtractError> {
    Ok(())
}

#[cfg(unix)]
fn make_symlink(target: &str, dest: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, dest)
}

#[cfg(not(unix))]
fn make_symlink(_: &str, _: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "symbolic links are not supported here",
    ))
}
