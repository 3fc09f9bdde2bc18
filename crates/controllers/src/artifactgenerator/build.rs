//! Building one artifact from fetched sources: the copy operations in order into a staging
//! directory, as source-watcher applies them (its destination rules, excludes and the three
//! strategies), and the directory hash that names the tarball.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tidegate_api::artifactgenerator::CopyOperation;
use tidegate_source::extract::Limits;
use tidegate_source::tree::{clean_relative, safe_join};

use super::glob::{BadPattern, Excludes, double_star_glob, fs_glob, has_glob};
use super::merge::merge;

/// How a copy writes a file that is already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Overwrite,
    Merge,
    Extract,
}

fn strategy(op: &CopyOperation) -> Strategy {
    match op.strategy.as_deref() {
        Some("Merge") => Strategy::Merge,
        Some("Extract") => Strategy::Extract,
        _ => Strategy::Overwrite,
    }
}

/// Applies `ops` in order into `staging`, the sources being the directories of `sources` by
/// alias. The error reads as source-watcher's (`failed to apply copy operations: …`).
pub(super) fn apply(
    sources: &HashMap<String, PathBuf>,
    staging: &Path,
    ops: &[CopyOperation],
) -> Result<(), String> {
    for op in ops {
        apply_one(sources, staging, op).map_err(|e| {
            format!(
                "failed to apply copy operations: failed to apply copy operation from '{}' to '{}': {e}",
                op.from, op.to
            )
        })?;
    }
    Ok(())
}

fn apply_one(
    sources: &HashMap<String, PathBuf>,
    staging: &Path,
    op: &CopyOperation,
) -> Result<(), String> {
    let Some(rest) = op.from.strip_prefix('@') else {
        return Err(format!(
            "invalid copy source '{}': source must start with '@'",
            op.from
        ));
    };
    let Some((alias, pattern)) = rest.split_once('/') else {
        return Err(format!(
            "invalid copy source '{}': source format must be '@alias/pattern'",
            op.from
        ));
    };
    let Some(to) = op.to.strip_prefix("@artifact/") else {
        return Err(format!(
            "invalid copy destination '{}': destination must start with '@artifact/'",
            op.to
        ));
    };
    let root = sources
        .get(alias)
        .ok_or_else(|| format!("source alias '{alias}' not found"))?;
    let excludes = Excludes::new(&op.exclude)?;
    let strategy = strategy(op);
    if has_glob(pattern) {
        return copy_glob(root, alias, pattern, staging, to, &excludes, strategy);
    }
    let cleaned = clean_relative(pattern).ok_or_else(|| "path escapes from parent".to_string())?;
    let shown = if cleaned.is_empty() { "." } else { &cleaned };
    let src = safe_join(root, &cleaned).ok_or_else(|| "path escapes from parent".to_string())?;
    let meta =
        std::fs::symlink_metadata(&src).map_err(|_| format!("source '{shown}' does not exist"))?;
    if meta.is_dir() {
        if strategy == Strategy::Extract {
            return Err(format!(
                "extract strategy is not supported for directories, got '{shown}'"
            ));
        }
        let base = if cleaned.is_empty() {
            String::new()
        } else {
            cleaned.rsplit('/').next().unwrap_or("").to_string()
        };
        let dest = join(to, &base);
        return copy_dir(root, &cleaned, staging, &dest, &excludes, &cleaned);
    }
    if excludes.excluded(&cleaned, "") {
        return Ok(());
    }
    let base = cleaned.rsplit('/').next().unwrap_or(&cleaned);
    if strategy == Strategy::Extract {
        if !is_tarball(&cleaned) {
            return Err(format!(
                "extract strategy requires tarball file (.tar.gz or .tgz), got '{shown}'"
            ));
        }
        return extract(&src, staging, to, &cleaned);
    }
    let dest = if to.is_empty() || to.ends_with('/') || dest_is_dir(staging, to) {
        join(to, base)
    } else {
        to.to_string()
    };
    copy_file(&src, staging, &dest, &cleaned, strategy)
}

fn join(dir: &str, name: &str) -> String {
    let dir = dir.trim_end_matches('/');
    match (dir.is_empty(), name.is_empty()) {
        (true, _) => name.to_string(),
        (false, true) => dir.to_string(),
        (false, false) => format!("{dir}/{name}"),
    }
}

fn dest_is_dir(staging: &Path, to: &str) -> bool {
    safe_join(staging, to).is_some_and(|p| p.is_dir())
}

fn is_tarball(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".tar.gz") || lower.ends_with(".tgz")
}

/// The literal directory before the first segment holding a glob character.
fn selection_root(pattern: &str) -> String {
    pattern
        .split('/')
        .take_while(|s| !has_glob(s))
        .collect::<Vec<_>>()
        .join("/")
}

fn copy_glob(
    root: &Path,
    alias: &str,
    pattern: &str,
    staging: &Path,
    to: &str,
    excludes: &Excludes<'_>,
    strategy: Strategy,
) -> Result<(), String> {
    let bad = |_: BadPattern| format!("invalid glob pattern '{pattern}': syntax error in pattern");
    let matches = if strategy == Strategy::Extract {
        double_star_glob(root, pattern).map_err(bad)?
    } else {
        fs_glob(root, pattern).map_err(bad)?
    };
    if matches.is_empty() {
        return Err(format!(
            "no files match pattern '{pattern}' in source '{alias}'"
        ));
    }
    let selection = selection_root(pattern);
    let kept: Vec<String> = matches
        .into_iter()
        .filter(|m| m != "." && m != ".." && !excludes.excluded(m, &selection))
        .collect();
    if kept.is_empty() {
        return Err(format!(
            "all files matching pattern '{pattern}' in source '{alias}' were excluded"
        ));
    }
    let strip = pattern.strip_suffix("/**");
    for m in kept {
        let src = root.join(&m);
        let is_dir = src.is_dir();
        if strategy == Strategy::Extract {
            if !is_dir && is_tarball(&m) {
                extract(&src, staging, to, &m)?;
            }
            continue;
        }
        let dest = match strip.and_then(|p| m.strip_prefix(p).and_then(|r| r.strip_prefix('/'))) {
            Some(rest) => join(to, rest),
            None => join(to, &m),
        };
        if is_dir {
            copy_dir(root, &m, staging, &dest, excludes, &selection)?;
        } else {
            copy_file(&src, staging, &dest, &m, strategy)?;
        }
    }
    Ok(())
}

/// Copies directory `rel` of the source into `dest` of the staging directory, leaving out
/// what `excludes` excludes (relative to the source root or to `selection`). Files are always
/// overwritten, never merged.
fn copy_dir(
    root: &Path,
    rel: &str,
    staging: &Path,
    dest: &str,
    excludes: &Excludes<'_>,
    selection: &str,
) -> Result<(), String> {
    let target = safe_join(staging, dest).ok_or_else(|| "path escapes from parent".to_string())?;
    std::fs::create_dir_all(&target).map_err(|e| format!("failed to create '{dest}': {e}"))?;
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let mut entries: Vec<(String, std::fs::FileType)> = std::fs::read_dir(&dir)
        .map_err(|e| format!("failed to read '{rel}': {e}"))?
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.file_type().ok()?)))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in entries {
        let child = join(rel, &name);
        if excludes.excluded(&child, selection) {
            continue;
        }
        let child_dest = join(dest, &name);
        if kind.is_dir() {
            copy_dir(root, &child, staging, &child_dest, excludes, selection)?;
        } else if kind.is_file() {
            copy_file(
                &root.join(&child),
                staging,
                &child_dest,
                &child,
                Strategy::Overwrite,
            )?;
        }
    }
    Ok(())
}

fn copy_file(
    src: &Path,
    staging: &Path,
    dest: &str,
    shown: &str,
    strategy: Strategy,
) -> Result<(), String> {
    let failed = |e: String| format!("failed to copy file '{shown}' to '{dest}': {e}");
    let target =
        safe_join(staging, dest).ok_or_else(|| failed("path escapes from parent".into()))?;
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|e| failed(e.to_string()))?;
    }
    if strategy == Strategy::Merge && target.is_file() {
        let base = std::fs::read_to_string(&target).map_err(|e| failed(e.to_string()))?;
        let overlay = std::fs::read_to_string(src).map_err(|e| failed(e.to_string()))?;
        let merged = merge(&base, &overlay)?;
        return std::fs::write(&target, merged).map_err(|e| failed(e.to_string()));
    }
    if target.is_dir() {
        return Err(failed("destination is a directory".to_string()));
    }
    std::fs::copy(src, &target)
        .map(|_| ())
        .map_err(|e| failed(e.to_string()))
}

fn extract(src: &Path, staging: &Path, to: &str, shown: &str) -> Result<(), String> {
    let failed = |e: String| format!("failed to extract tarball '{shown}' to '{to}': {e}");
    let target = safe_join(staging, to).ok_or_else(|| failed("path escapes from parent".into()))?;
    std::fs::create_dir_all(&target).map_err(|e| failed(e.to_string()))?;
    let file = std::fs::File::open(src).map_err(|e| failed(e.to_string()))?;
    tidegate_source::extract::extract_tar_gz(
        std::io::BufReader::new(file),
        &target,
        Limits::default(),
    )
    .map_err(|e| failed(e.to_string()))
}

/// source-watcher's directory hash, which names the tarball: for each file (names
/// `<prefix>/<relative path>`, byte order) the line `<adler32 hex>  <name>\n`, all of it
/// through Adler-32 again, written in decimal.
pub(super) fn dir_hash(dir: &Path, prefix: &str) -> std::io::Result<String> {
    let mut files = Vec::new();
    collect_files(dir, "", &mut files)?;
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|(rel, path)| (format!("{prefix}/{rel}"), path))
        .collect();
    named.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut outer = adler2::Adler32::new();
    for (name, path) in named {
        if name.contains('\n') {
            return Err(std::io::Error::other(format!(
                "file name {name:?} has a newline"
            )));
        }
        let data = std::fs::read(&path)?;
        let mut inner = adler2::Adler32::new();
        inner.write_slice(&data);
        outer.write_slice(format!("{:x}  {name}\n", inner.checksum()).as_bytes());
    }
    Ok(outer.checksum().to_string())
}

fn collect_files(dir: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        let child = join(rel, &name);
        if e.file_type()?.is_dir() {
            collect_files(&e.path(), &child, out)?;
        } else {
            out.push((child, e.path()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
