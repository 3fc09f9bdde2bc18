//! The two pattern languages of copy rules, as source-watcher uses them: Go's `fs.Glob` for
//! `Overwrite`/`Merge` sources (`path.Match` per segment, so `**` is one segment like `*`)
//! and doublestar for excludes and `Extract` sources (`**` spans segments, `{a,b}`).

use std::path::Path;

use tidegate_helm::chart::ignore::go_match;

/// The pattern is malformed (Go's `path.ErrBadPattern`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BadPattern;

impl std::fmt::Display for BadPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("syntax error in pattern")
    }
}

/// Whether `pattern` is a glob (`*`, `?`, `[` or `]`); braces alone are not.
pub(super) fn has_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', ']'])
}

fn matches(pattern: &str, name: &str) -> Result<bool, BadPattern> {
    go_match(pattern, name).map_err(|_| BadPattern)
}

/// Go's `fs.Glob` under `root`: the `/`-separated paths (relative to `root`) matching
/// `pattern`, sorted; each segment with `path.Match`, dotfiles included.
pub(super) fn fs_glob(root: &Path, pattern: &str) -> Result<Vec<String>, BadPattern> {
    // As fs.Glob: a malformed pattern is an error even when nothing could match.
    matches(pattern, "")?;
    let segments: Vec<&str> = pattern.split('/').collect();
    let mut found = vec![String::new()];
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        let mut next = Vec::new();
        for base in &found {
            let dir = if base.is_empty() {
                root.to_path_buf()
            } else {
                root.join(base)
            };
            let join = |name: &str| {
                if base.is_empty() {
                    name.to_string()
                } else {
                    format!("{base}/{name}")
                }
            };
            if !has_glob(seg) {
                let candidate = join(seg);
                let path = root.join(&candidate);
                let keep = if last {
                    std::fs::symlink_metadata(&path).is_ok()
                } else {
                    path.is_dir()
                };
                if keep {
                    next.push(candidate);
                }
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect();
            names.sort();
            for name in names {
                if matches(seg, &name)? && (last || dir.join(&name).is_dir()) {
                    next.push(join(&name));
                }
            }
        }
        found = next;
    }
    found.sort();
    Ok(found)
}

/// `{a,b}` alternatives expanded (nested too); a pattern without braces is itself.
fn expand_braces(pattern: &str) -> Result<Vec<String>, BadPattern> {
    let Some(open) = pattern.find('{') else {
        if pattern.contains('}') {
            return Err(BadPattern);
        }
        return Ok(vec![pattern.to_string()]);
    };
    let bytes = pattern.as_bytes();
    let (mut depth, mut close, mut commas) = (0usize, None, Vec::new());
    for (i, b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            b',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    let close = close.ok_or(BadPattern)?;
    let mut bounds = vec![open];
    bounds.extend(commas);
    bounds.push(close);
    let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
    let mut out = Vec::new();
    for w in bounds.windows(2) {
        let alternative = &pattern[w[0] + 1..w[1]];
        for expanded in expand_braces(&format!("{head}{alternative}{tail}"))? {
            out.push(expanded);
        }
    }
    Ok(out)
}

/// Checks a doublestar pattern's syntax (braces and every segment's `path.Match` syntax).
fn check_double_star(pattern: &str) -> Result<(), BadPattern> {
    for alternative in expand_braces(pattern)? {
        for seg in alternative
            .split('/')
            .filter(|s| !s.is_empty() && *s != "**")
        {
            matches(seg, "")?;
        }
    }
    Ok(())
}

/// doublestar's `Match`: `**` as a whole segment matches zero or more segments (so `a/**`
/// also matches `a`), other segments as `path.Match`, `{a,b}` alternatives.
pub(super) fn double_star(pattern: &str, path: &str) -> Result<bool, BadPattern> {
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    for alternative in expand_braces(pattern)? {
        let segs: Vec<&str> = alternative.split('/').filter(|s| !s.is_empty()).collect();
        if match_segments(&segs, &parts)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn match_segments(pattern: &[&str], path: &[&str]) -> Result<bool, BadPattern> {
    match pattern.first() {
        None => Ok(path.is_empty()),
        Some(&"**") => {
            for skip in 0..=path.len() {
                if match_segments(&pattern[1..], &path[skip..])? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Some(seg) => match path.first() {
            Some(name) if matches(seg, name)? => match_segments(&pattern[1..], &path[1..]),
            _ => Ok(false),
        },
    }
}

/// doublestar's `Glob` under `root`: every path (files and directories, relative, `/`-
/// separated, in walk order) matching `pattern`.
pub(super) fn double_star_glob(root: &Path, pattern: &str) -> Result<Vec<String>, BadPattern> {
    check_double_star(pattern)?;
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let dir = if rel.is_empty() {
            root.to_path_buf()
        } else {
            root.join(&rel)
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<(String, bool)> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let is_dir = e.file_type().ok()?.is_dir();
                Some((e.file_name().into_string().ok()?, is_dir))
            })
            .collect();
        names.sort();
        for (name, is_dir) in names.into_iter().rev() {
            let path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if is_dir {
                stack.push(path.clone());
            }
            if double_star(pattern, &path)? {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Exclude patterns (doublestar): a path is excluded when a pattern matches it relative to
/// the source root, or relative to the selection root; a pattern without `/` also matches
/// the base name at any depth.
pub(super) struct Excludes<'a> {
    patterns: &'a [String],
}

impl<'a> Excludes<'a> {
    /// Checks every pattern's syntax: `invalid exclude pattern '<p>'`.
    pub(super) fn new(patterns: &'a [String]) -> Result<Excludes<'a>, String> {
        for p in patterns {
            if check_double_star(p).is_err() {
                return Err(format!("invalid exclude pattern '{p}'"));
            }
        }
        Ok(Excludes { patterns })
    }

    /// Whether `path` (relative to the source root) is excluded, `selection` being the
    /// selection root (`""` for the source root).
    pub(super) fn excluded(&self, path: &str, selection: &str) -> bool {
        let relative = if selection.is_empty() || selection == "." {
            None
        } else {
            path.strip_prefix(selection)
                .and_then(|r| r.strip_prefix('/'))
                .filter(|r| !r.is_empty() && *r != path)
        };
        let base = path.rsplit('/').next().unwrap_or(path);
        self.patterns.iter().any(|p| {
            let hit = |candidate: &str| double_star(p, candidate).unwrap_or(false);
            hit(path) || relative.is_some_and(hit) || (!p.contains('/') && hit(base))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_star_as_doublestar() {
        for (p, path, want) in [
            ("**/testdata/**", "testdata", true),
            ("**/testdata/**", "a/testdata/x.yaml", true),
            ("**/testdata/**", "a/test/x.yaml", false),
            ("*.md", "README.md", true),
            ("*.md", "docs/guide.md", false),
            ("**/.*", ".hidden", true),
            (
                "infrastructure/controllers/descheduler/**",
                "infrastructure/controllers/descheduler",
                true,
            ),
            ("*.{yaml,yml}", "a.yml", true),
            ("*.{yaml,yml}", "a.json", false),
            ("prod/**/*.tgz", "prod/m.tgz", true),
        ] {
            assert_eq!(double_star(p, path), Ok(want), "{p} {path}");
        }
        assert_eq!(check_double_star("[*.md"), Err(BadPattern));
        assert_eq!(check_double_star("{a,b"), Err(BadPattern));
        assert_eq!(check_double_star("**/*.{yaml,yml}"), Ok(()));
    }

    #[test]
    fn fs_glob_is_one_segment_per_star() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["a.yaml", "config/app.yaml", "config/sub/db.yaml", ".hidden"] {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        assert_eq!(fs_glob(dir.path(), "*.yaml").unwrap(), ["a.yaml"]);
        assert_eq!(
            fs_glob(dir.path(), "**").unwrap(),
            [".hidden", "a.yaml", "config"]
        );
        assert_eq!(
            fs_glob(dir.path(), "config/**").unwrap(),
            ["config/app.yaml", "config/sub"]
        );
        assert_eq!(
            fs_glob(dir.path(), "*/*.yaml").unwrap(),
            ["config/app.yaml"]
        );
        assert_eq!(fs_glob(dir.path(), "["), Err(BadPattern));
        assert!(fs_glob(dir.path(), "*.json").unwrap().is_empty());
    }
}
