//! Which files of a source go into its artifact: Flux's `.sourceignore` rules.
//!
//! Patterns have gitignore semantics and rise in priority in this order: the VCS exclusions
//! (always there), the `.sourceignore` files (the root one, then nested ones, each scoped to its
//! directory), then `spec.ignore` (scoped to the root). The last matching pattern decides; `!`
//! re-includes. Flux's default exclusions (images, archives, CI files, …) apply only when no
//! `.sourceignore` file and no `spec.ignore` holds a single pattern.

use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;
use gix::glob::pattern::Case;
use gix::ignore::search::Ignore;

/// Name of the ignore file read at any depth.
pub const IGNORE_FILE: &str = ".sourceignore";

/// Always excluded: the VCS files.
pub const EXCLUDE_VCS: &[&str] = &[".git/", ".gitignore", ".gitmodules", ".gitattributes"];
/// Excluded when no pattern is given: file extensions.
pub const EXCLUDE_EXT: &[&str] = &[
    "*.jpg", "*.jpeg", "*.gif", "*.png", "*.wmv", "*.flv", "*.tar.gz", "*.zip",
];
/// What `flux push artifact` leaves out by default (`--ignore-paths`): VCS files and the
/// excluded extensions.
pub fn exclude_oci() -> Vec<String> {
    EXCLUDE_VCS
        .iter()
        .chain(EXCLUDE_EXT)
        .map(|p| p.to_string())
        .collect()
}

/// Excluded when no pattern is given: CI files.
pub const EXCLUDE_CI: &[&str] = &[
    ".github/",
    ".circleci/",
    ".travis.yml",
    ".gitlab-ci.yml",
    "appveyor.yml",
    ".drone.yml",
    "cloudbuild.yaml",
    "codeship-services.yml",
    "codeship-steps.yml",
];
/// Excluded when no pattern is given: tool configuration.
pub const EXCLUDE_EXTRA: &[&str] = &["**/.goreleaser.yml", "**/.sops.yaml", "**/.flux.yaml"];

/// A compiled set of ignore rules for one source.
pub struct SourceIgnore {
    search: gix::ignore::Search,
}

/// A virtual root the pattern lists are scoped against; never touches the filesystem.
const ROOT: &str = "/source-root";

impl SourceIgnore {
    /// Builds the rules from the `.sourceignore` files found in the tree (`(directory, content)`,
    /// the directory relative to the root, `""` for the root itself, in walk order) and the
    /// optional `spec.ignore`.
    pub fn new<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
        spec: Option<&str>,
    ) -> Self {
        let parse = Ignore {
            support_precious: false,
        };
        let mut lists: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        let mut any_pattern = false;
        for (dir, content) in files {
            any_pattern |= has_pattern(content);
            let source = Path::new(ROOT).join(dir).join(IGNORE_FILE);
            lists.push((source, content.to_vec()));
        }
        if let Some(spec) = spec {
            any_pattern |= has_pattern(spec.as_bytes());
            lists.push((
                Path::new(ROOT).join("spec.ignore"),
                spec.as_bytes().to_vec(),
            ));
        }
        let mut defaults: Vec<&str> = EXCLUDE_VCS.to_vec();
        if !any_pattern {
            defaults.extend(EXCLUDE_EXT);
            defaults.extend(EXCLUDE_CI);
            defaults.extend(EXCLUDE_EXTRA);
        }
        let mut search = gix::ignore::Search::default();
        let root = Path::new(ROOT);
        let _ = search.add_patterns_buffer(
            defaults.join("\n").as_bytes(),
            root.join("defaults"),
            Some(root),
            parse,
        );
        for (source, content) in lists {
            // Only fails when the source has no parent directory, which ours always have.
            let _ = search.add_patterns_buffer(&content, source, Some(root), parse);
        }
        SourceIgnore { search }
    }

    /// Rules made of `patterns` alone (gitignore syntax, scoped to the root), with no default
    /// exclusions: what `flux push artifact --ignore-paths` uses.
    pub fn from_patterns(patterns: &[String]) -> Self {
        let parse = Ignore {
            support_precious: false,
        };
        let mut search = gix::ignore::Search::default();
        let root = Path::new(ROOT);
        let _ = search.add_patterns_buffer(
            patterns.join("\n").as_bytes(),
            root.join("patterns"),
            Some(root),
            parse,
        );
        SourceIgnore { search }
    }

    /// Whether file `path` (relative, `/`-separated) is left out, by its own rule or because
    /// a directory above it is (as a walk that does not descend into ignored directories
    /// decides, and as Flux matches object keys).
    pub fn excludes_file(&self, path: &str) -> bool {
        let mut end = 0;
        while let Some(i) = path[end..].find('/') {
            end += i;
            if self.is_ignored(&path[..end], true) {
                return true;
            }
            end += 1;
        }
        self.is_ignored(path, false)
    }

    /// Whether `path` (relative, `/`-separated) is left out of the artifact.
    pub fn is_ignored(&self, path: &str, is_dir: bool) -> bool {
        self.search
            .pattern_matching_relative_path(
                path.as_bytes().as_bstr(),
                Some(is_dir),
                Case::Sensitive,
            )
            .is_some_and(|m| !m.pattern.is_negative())
    }
}

/// Whether a pattern file holds at least one pattern (not only blank lines and comments).
fn has_pattern(content: &[u8]) -> bool {
    content.lines().any(|line| {
        let t = line.trim();
        !t.is_empty() && !t.starts_with(b"#")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_without_patterns() {
        let ig = SourceIgnore::new([], None);
        assert!(ig.is_ignored(".git", true));
        assert!(ig.is_ignored(".gitignore", false));
        assert!(ig.is_ignored("img/logo.png", false));
        assert!(ig.is_ignored(".github", true));
        assert!(ig.is_ignored("deep/dir/.sops.yaml", false));
        assert!(!ig.is_ignored("deploy/app.yaml", false));
        // A comment-only spec.ignore counts as no pattern.
        let ig = SourceIgnore::new([], Some("# nothing\n\n"));
        assert!(ig.is_ignored("logo.png", false));
    }

    #[test]
    fn a_file_under_an_ignored_directory_is_excluded() {
        let ig = SourceIgnore::from_patterns(&[
            "app/skip/".to_string(),
            "/*".to_string(),
            "!/app".to_string(),
        ]);
        assert!(ig.excludes_file("app/skip/me.yaml"));
        assert!(ig.excludes_file("top.yaml"));
        assert!(ig.excludes_file("other/deep/x.yaml"));
        assert!(!ig.excludes_file("app/cm.yaml"));
        assert!(!ig.is_ignored("app/skip/me.yaml", false));
    }

    #[test]
    fn any_pattern_drops_the_defaults_but_not_vcs() {
        let ig = SourceIgnore::new([("", b"*.md\n".as_slice())], None);
        assert!(ig.is_ignored("README.md", false));
        assert!(!ig.is_ignored("logo.png", false));
        assert!(ig.is_ignored(".git", true));
        assert!(ig.is_ignored(".gitignore", false));
    }

    #[test]
    fn nested_files_are_scoped_and_spec_wins() {
        let files = [
            ("", b"*.txt\n".as_slice()),
            ("deploy", b"/secret.yaml\n".as_slice()),
        ];
        let ig = SourceIgnore::new(files, Some("!keep.txt\n"));
        assert!(ig.is_ignored("a.txt", false));
        assert!(!ig.is_ignored("keep.txt", false));
        assert!(ig.is_ignored("deploy/secret.yaml", false));
        assert!(!ig.is_ignored("secret.yaml", false));
        assert!(!ig.is_ignored("deploy/app.yaml", false));
    }

    #[test]
    fn flux_documented_example() {
        let spec = "# exclude all\n/*\n# include deploy dir\n!/deploy\n# exclude file extensions from deploy dir\n/deploy/**/*.md\n/deploy/**/*.txt\n";
        let ig = SourceIgnore::new([], Some(spec));
        assert!(ig.is_ignored("README.md", false));
        assert!(ig.is_ignored("src", true));
        assert!(!ig.is_ignored("deploy", true));
        assert!(!ig.is_ignored("deploy/app/deploy.yaml", false));
        assert!(ig.is_ignored("deploy/app/notes.md", false));
        assert!(ig.is_ignored("deploy/app/x/notes.txt", false));
    }
}
