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
    /// A PAX header or GNU long name claims more than [`MAX_HEADER_BYTES`].
    #[error("tar {kind} entry of {size} bytes exceeds the limit of {MAX_HEADER_BYTES} bytes")]
    HeaderTooLarge {
        /// The entry type.
        kind: String,
        /// The size it declares.
        size: u64,
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
    let gz = flate2::read::MultiGzDecoder::new(reader);
    extract_tar(gz, root, limits)
}

/// The largest PAX header or GNU long name/link entry read (Go's archive/tar allows 1 MiB):
/// their bodies are read whole, so a header claiming a gigabyte must be refused before that.
pub const MAX_HEADER_BYTES: u64 = 1 << 20;

/// Entry names in error messages are cut to this many characters: an attacker's megabyte-long
/// path must not become a megabyte-long log line.
const SHOWN_NAME_CHARS: usize = 256;

/// `name` for a message, cut to [`SHOWN_NAME_CHARS`].
fn shown(name: &str) -> String {
    match name.char_indices().nth(SHOWN_NAME_CHARS) {
        Some((at, _)) => format!("{}… ({} bytes)", &name[..at], name.len()),
        None => name.to_string(),
    }
}

/// Extracts an uncompressed tar stream into `root`; see [`extract_tar_gz`].
///
/// Entries are read raw: GNU long names and PAX headers are parsed here, after their declared
/// size was checked against [`MAX_HEADER_BYTES`], instead of being read whole by the tar crate
/// whatever size they claim.
pub fn extract_tar(reader: impl Read, root: &Path, limits: Limits) -> Result<(), ExtractError> {
    fs::create_dir_all(root).map_err(io_err(format!("creating {}", root.display())))?;
    let mut archive = tar::Archive::new(reader);
    let entries = archive
        .entries()
        .map_err(io_err("reading archive"))?
        .raw(true);
    let mut total: u64 = 0;
    let mut count = 0usize;
    let mut links: Vec<(String, PathBuf, String)> = Vec::new();
    // Directories (relative) this extraction made or found to be real directories: their
    // paths need no second symlink check nor `mkdir`. Cleared whenever a link is written.
    let mut known_dirs: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    // Names carried by the GNU long-name/long-link or PAX entry before the current one.
    let mut long_name: Option<Vec<u8>> = None;
    let mut long_link: Option<Vec<u8>> = None;
    for entry in entries {
        let mut entry = entry.map_err(io_err("reading archive"))?;
        count += 1;
        if count > limits.max_entries {
            return Err(ExtractError::TooManyEntries(limits.max_entries));
        }
        let kind = entry.header().entry_type();
        if matches!(
            kind,
            tar::EntryType::GNULongName
                | tar::EntryType::GNULongLink
                | tar::EntryType::XHeader
                | tar::EntryType::XGlobalHeader
        ) {
            let size = entry
                .header()
                .entry_size()
                .map_err(io_err("reading archive"))?;
            if size > MAX_HEADER_BYTES {
                return Err(ExtractError::HeaderTooLarge {
                    kind: format!("{kind:?}"),
                    size,
                });
            }
            let mut body = Vec::with_capacity(size as usize);
            (&mut entry)
                .take(size)
                .read_to_end(&mut body)
                .map_err(io_err("reading archive"))?;
            match kind {
                tar::EntryType::GNULongName => long_name = Some(trim_nul(body)),
                tar::EntryType::GNULongLink => long_link = Some(trim_nul(body)),
                tar::EntryType::XHeader => {
                    for (key, value) in pax_records(&body)? {
                        match key.as_str() {
                            "path" => long_name = Some(value),
                            "linkpath" => long_link = Some(value),
                            "size" => {
                                return Err(ExtractError::Unsupported {
                                    entry: "(pax header)".into(),
                                    kind: "a pax size record".into(),
                                });
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        let path_bytes = long_name
            .take()
            .unwrap_or_else(|| entry.path_bytes().into_owned());
        let link_bytes = long_link
            .take()
            .or_else(|| entry.link_name_bytes().map(|b| b.into_owned()));
        let raw = String::from_utf8_lossy(&path_bytes).into_owned();
        let rel = safe_relative(&raw)?;
        if rel.as_os_str().is_empty() {
            continue; // "./" or the root itself
        }
        let dest = root.join(&rel);
        let parent_known = rel
            .parent()
            .is_some_and(|p| p.as_os_str().is_empty() || known_dirs.contains(p));
        if !parent_known {
            check_no_link_on_path(root, &rel, &raw)?;
        }
        match kind {
            tar::EntryType::Directory => {
                if !known_dirs.contains(&rel) {
                    fs::create_dir_all(&dest)
                        .map_err(io_err(format!("creating {}", shown(&raw))))?;
                    // Remembered only when it is a directory itself, not a link to one.
                    if fs::symlink_metadata(&dest).is_ok_and(|m| m.is_dir()) {
                        remember_dirs(&mut known_dirs, &rel);
                    }
                }
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let size = entry.size();
                total = total.saturating_add(size);
                if total > limits.max_size {
                    return Err(ExtractError::TooLarge(limits.max_size));
                }
                if !parent_known && let Some(parent) = dest.parent() {
                    fs::create_dir_all(parent)
                        .map_err(io_err(format!("creating {}", shown(&raw))))?;
                    if let Some(p) = rel.parent() {
                        remember_dirs(&mut known_dirs, p);
                    }
                }
                remove_existing(&dest, &raw)?;
                let mut file =
                    fs::File::create(&dest).map_err(io_err(format!("creating {}", shown(&raw))))?;
                // Read at most the declared size (plus one byte to notice a lie).
                let copied = io::copy(&mut (&mut entry).take(size + 1), &mut file)
                    .map_err(io_err(format!("writing {}", shown(&raw))))?;
                if copied > size {
                    return Err(ExtractError::TooLarge(limits.max_size));
                }
                set_mode(&file, entry.header().mode().unwrap_or(0o644), &raw)?;
            }
            tar::EntryType::Symlink => {
                let target = link_bytes
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                let parent = rel.parent().unwrap_or(Path::new(""));
                if lexical_escape(parent, &target) {
                    return Err(ExtractError::EscapingLink {
                        entry: shown(&raw),
                        target: shown(&target),
                    });
                }
                if let Some(p) = dest.parent() {
                    fs::create_dir_all(p).map_err(io_err(format!("creating {}", shown(&raw))))?;
                }
                remove_existing(&dest, &raw)?;
                make_symlink(&target, &dest).map_err(io_err(format!("linking {}", shown(&raw))))?;
                // The link may stand where a remembered directory was.
                known_dirs.clear();
                links.push((raw, rel, target));
            }
            other => {
                return Err(ExtractError::Unsupported {
                    entry: shown(&raw),
                    kind: format!("{other:?}"),
                });
            }
        }
    }
    // A link checked when it was written may have been redirected by a later entry (a link
    // that its target goes through); check every link again on the final tree.
    for (raw, rel, target) in links {
        if !resolves_inside(root, &rel) {
            return Err(ExtractError::EscapingLink {
                entry: shown(&raw),
                target: shown(&target),
            });
        }
    }
    Ok(())
}

/// Records `dir` and its ancestors as real directories.
fn remember_dirs(known: &mut std::collections::HashSet<PathBuf>, dir: &Path) {
    let mut at = Some(dir);
    while let Some(d) = at {
        if d.as_os_str().is_empty() || !known.insert(d.to_path_buf()) {
            break;
        }
        at = d.parent();
    }
}

/// A GNU long name's body without its trailing NULs.
fn trim_nul(mut body: Vec<u8>) -> Vec<u8> {
    while body.last() == Some(&0) {
        body.pop();
    }
    body
}

/// The records of a PAX extended header: `"<length> <key>=<value>\n"`, the length counting the
/// whole record.
fn pax_records(mut body: &[u8]) -> Result<Vec<(String, Vec<u8>)>, ExtractError> {
    let malformed = || ExtractError::Unsupported {
        entry: "(pax header)".into(),
        kind: "a malformed pax record".into(),
    };
    let mut out = Vec::new();
    while !body.is_empty() && body[0] != 0 {
        let space = body.iter().position(|b| *b == b' ').ok_or_else(malformed)?;
        let len: usize = std::str::from_utf8(&body[..space])
            .ok()
            .and_then(|n| n.parse().ok())
            .ok_or_else(malformed)?;
        if len <= space + 1 || len > body.len() || body[len - 1] != b'\n' {
            return Err(malformed());
        }
        let record = &body[space + 1..len - 1];
        let eq = record
            .iter()
            .position(|b| *b == b'=')
            .ok_or_else(malformed)?;
        let key = String::from_utf8_lossy(&record[..eq]).into_owned();
        out.push((key, record[eq + 1..].to_vec()));
        body = &body[len..];
    }
    Ok(out)
}

/// The entry path as a clean relative path, or an error for absolute paths and `..`.
fn safe_relative(raw: &str) -> Result<PathBuf, ExtractError> {
    crate::tree::clean_relative(raw)
        .map(PathBuf::from)
        .ok_or_else(|| ExtractError::UnsafePath(shown(raw)))
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
                    entry: shown(raw),
                    link: shown(&link),
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
            context: format!("writing {}", shown(raw)),
            source: io::Error::new(io::ErrorKind::AlreadyExists, "a directory is in the way"),
        }),
        Ok(_) => fs::remove_file(dest).map_err(io_err(format!("replacing {}", shown(raw)))),
        Err(_) => Ok(()),
    }
}

#[cfg(unix)]
fn set_mode(file: &fs::File, mode: u32, raw: &str) -> Result<(), ExtractError> {
    use std::os::unix::fs::PermissionsExt;
    // Only permission bits, never setuid/setgid/sticky; always readable by the owner.
    let mode = (mode & 0o777) | 0o600;
    file.set_permissions(fs::Permissions::from_mode(mode))
        .map_err(io_err(format!("chmod {}", shown(raw))))
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
