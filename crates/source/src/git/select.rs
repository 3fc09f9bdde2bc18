//! Which commit a GitRepository's `ref` points at, and the revision string Flux forms for it.

use tidegate_core::semver::{Constraints, Version};

use super::GitError;

/// `spec.ref` of a GitRepository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitReference {
    /// Branch to check out (default `master` when nothing else is set).
    pub branch: Option<String>,
    /// Tag to check out.
    pub tag: Option<String>,
    /// Masterminds semver range over the tags.
    pub semver: Option<String>,
    /// A full reference name (`refs/heads/main`, `refs/pull/1/head`).
    pub name: Option<String>,
    /// A commit SHA.
    pub commit: Option<String>,
}

/// Flux's default branch.
pub const DEFAULT_BRANCH: &str = "master";

/// What a reference asks for, in Flux's precedence: commit > name > tag > semver > branch
/// (the code's order, which puts tag before semver although the API comment says otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strategy {
    /// A commit, optionally on a branch or under a reference name (for the revision).
    Commit {
        /// The SHA.
        commit: String,
        /// `spec.ref.branch`, when set.
        branch: Option<String>,
        /// `spec.ref.name`, when set.
        name: Option<String>,
    },
    /// A full reference name.
    Name(String),
    /// A tag.
    Tag(String),
    /// A semver range over tags.
    Semver(String),
    /// A branch.
    Branch(String),
}

impl GitReference {
    /// The strategy this reference selects.
    pub fn strategy(&self) -> Strategy {
        let set = |s: &Option<String>| s.as_deref().filter(|s| !s.is_empty()).map(str::to_string);
        if let Some(commit) = set(&self.commit) {
            return Strategy::Commit {
                commit,
                branch: set(&self.branch),
                name: set(&self.name),
            };
        }
        if let Some(name) = set(&self.name) {
            return Strategy::Name(name);
        }
        if let Some(tag) = set(&self.tag) {
            return Strategy::Tag(tag);
        }
        if let Some(range) = set(&self.semver) {
            return Strategy::Semver(range);
        }
        Strategy::Branch(set(&self.branch).unwrap_or_else(|| DEFAULT_BRANCH.to_string()))
    }
}

/// One reference as a remote (or a local repository) lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedRef {
    /// Full name, `refs/heads/main`.
    pub name: String,
    /// The object the reference points at (a tag object for annotated tags).
    pub target: gix::ObjectId,
    /// The commit an annotated tag peels to, when the listing says.
    pub peeled: Option<gix::ObjectId>,
}

impl ListedRef {
    /// The commit (or other object) the reference ends at, as far as the listing tells.
    pub fn commit(&self) -> gix::ObjectId {
        self.peeled.unwrap_or(self.target)
    }
}

/// The outcome of selecting: which remote reference to fetch and what the revision will be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The full reference to fetch, or `None` to fetch a commit by history.
    pub fetch_ref: Option<String>,
    /// The reference recorded in the revision (`refs/heads/main`), or empty for a bare commit.
    pub reference: String,
    /// Whether the revision uses the full reference (`spec.ref.name`) rather than the short one.
    pub absolute: bool,
    /// The commit, when the listing tells it (not for commit strategies before fetching).
    pub commit: Option<gix::ObjectId>,
    /// Whether the reference is a tag (for tag verification).
    pub is_tag: bool,
}

impl Selection {
    /// The revision for `commit`: `main@sha1:<hex>`, `v1.2.0@sha1:<hex>`, `refs/heads/main@sha1:<hex>`
    /// (name refs) or `sha1:<hex>`.
    pub fn revision(&self, commit: &gix::oid) -> String {
        revision(&self.reference, self.absolute, commit)
    }
}

/// Flux's revision string for a commit reached through `reference`.
pub fn revision(reference: &str, absolute: bool, commit: &gix::oid) -> String {
    let digest = format!("sha1:{}", commit.to_hex());
    if reference.is_empty() {
        return digest;
    }
    if absolute {
        return format!("{reference}@{digest}");
    }
    // Drop the first two components (`refs/heads/`, `refs/tags/`), as Flux does.
    let mut parts = reference.splitn(3, '/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(_), Some(_), Some(short)) => format!("{short}@{digest}"),
        _ => digest,
    }
}

/// The refspec sources to list for a strategy (what the server is asked to advertise).
pub fn list_prefixes(strategy: &Strategy) -> Vec<String> {
    match strategy {
        Strategy::Branch(b) => vec![format!("refs/heads/{b}")],
        Strategy::Tag(t) => vec![format!("refs/tags/{t}")],
        Strategy::Semver(_) => vec!["refs/tags/*".to_string()],
        Strategy::Name(n) => vec![n.trim_end_matches("^{}").to_string()],
        Strategy::Commit {
            branch: Some(b), ..
        } => vec![format!("refs/heads/{b}")],
        Strategy::Commit { .. } => vec!["refs/heads/*".to_string(), "refs/tags/*".to_string()],
    }
}

/// Picks the reference for `strategy` from a listing. `url` names the repository in errors.
pub fn select(strategy: &Strategy, listed: &[ListedRef], url: &str) -> Result<Selection, GitError> {
    let find = |full: &str| listed.iter().find(|r| r.name == full);
    let not_found = |full: &str| {
        GitError::NotFound(format!(
            "unable to clone '{url}': couldn't find remote ref \"{full}\""
        ))
    };
    match strategy {
        Strategy::Branch(_) | Strategy::Tag(_) => {
            let is_tag = matches!(strategy, Strategy::Tag(_));
            let full = list_prefixes(strategy).remove(0);
            let r = find(&full).ok_or_else(|| not_found(&full))?;
            Ok(Selection {
                fetch_ref: Some(full.clone()),
                reference: full,
                absolute: false,
                commit: Some(r.commit()),
                is_tag,
            })
        }
        Strategy::Name(n) => {
            if n.starts_with('/') || n.ends_with('/') {
                return Err(GitError::Invalid(format!(
                    "ref {n} is invalid; Git refs cannot begin or end with a slash '/'"
                )));
            }
            let lookup = n.trim_end_matches("^{}");
            let r = find(lookup).ok_or_else(|| {
                GitError::NotFound(format!("unable to resolve ref '{n}' to a specific commit"))
            })?;
            Ok(Selection {
                fetch_ref: Some(lookup.to_string()),
                reference: n.clone(),
                absolute: true,
                commit: Some(r.commit()),
                is_tag: lookup.starts_with("refs/tags/"),
            })
        }
        Strategy::Semver(range) => {
            let constraints = Constraints::parse(range)
                .map_err(|e| GitError::Invalid(format!("semver parse error: {e}")))?;
            let mut best: Option<(Version, &ListedRef)> = None;
            for r in listed {
                let Some(tag) = r.name.strip_prefix("refs/tags/") else {
                    continue;
                };
                // Flux wants three dot-separated parts before parsing (a `v` prefix is fine).
                if tag.splitn(3, '.').count() != 3 {
                    continue;
                }
                let Ok(v) = Version::parse(tag) else { continue };
                if !constraints.check(&v) {
                    continue;
                }
                // Equal versions (differing in metadata only) keep the later tag in listing
                // order; Flux breaks that tie by commit time.
                if best.as_ref().is_none_or(|(b, _)| v >= *b) {
                    best = Some((v, r));
                }
            }
            let (_, r) = best
                .ok_or_else(|| GitError::NotFound(format!("no match found for semver: {range}")))?;
            Ok(Selection {
                fetch_ref: Some(r.name.clone()),
                reference: r.name.clone(),
                absolute: false,
                commit: Some(r.commit()),
                is_tag: true,
            })
        }
        Strategy::Commit { branch, name, .. } => {
            let reference = match (name, branch) {
                (Some(n), _) => n.clone(),
                (None, Some(b)) => format!("refs/heads/{b}"),
                (None, None) => String::new(),
            };
            if let Some(b) = branch {
                let full = format!("refs/heads/{b}");
                find(&full).ok_or_else(|| not_found(&full))?;
            }
            Ok(Selection {
                fetch_ref: None,
                absolute: name.is_some(),
                reference,
                commit: None,
                is_tag: name.as_deref().is_some_and(|n| n.starts_with("refs/tags/")),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(c: char) -> gix::ObjectId {
        gix::ObjectId::from_hex(c.to_string().repeat(40).as_bytes()).unwrap()
    }

    #[test]
    fn revisions_as_flux_forms_them() {
        let c = oid('a');
        let hex = "a".repeat(40);
        assert_eq!(
            revision("refs/heads/main", false, &c),
            format!("main@sha1:{hex}")
        );
        assert_eq!(
            revision("refs/heads/feature/x", false, &c),
            format!("feature/x@sha1:{hex}")
        );
        assert_eq!(
            revision("refs/tags/v1.2.0", false, &c),
            format!("v1.2.0@sha1:{hex}")
        );
        assert_eq!(
            revision("refs/heads/main", true, &c),
            format!("refs/heads/main@sha1:{hex}")
        );
        assert_eq!(revision("", false, &c), format!("sha1:{hex}"));
    }

    #[test]
    fn precedence_and_default_branch() {
        let r = GitReference::default();
        assert_eq!(r.strategy(), Strategy::Branch("master".into()));
        let r = GitReference {
            tag: Some("v1".into()),
            semver: Some("*".into()),
            ..Default::default()
        };
        assert_eq!(r.strategy(), Strategy::Tag("v1".into()));
        let r = GitReference {
            name: Some("refs/heads/x".into()),
            tag: Some("v1".into()),
            ..Default::default()
        };
        assert_eq!(r.strategy(), Strategy::Name("refs/heads/x".into()));
    }

    #[test]
    fn semver_picks_highest_matching_tag() {
        let tags = [
            "non-semver-tag",
            "v0.1.0",
            "0.2.0",
            "v0.2.1",
            "v1.0.0-alpha",
            "v1.1.0",
            "v2.0.0",
        ];
        let listed: Vec<ListedRef> = tags
            .iter()
            .enumerate()
            .map(|(i, t)| ListedRef {
                name: format!("refs/tags/{t}"),
                target: oid(char::from(b'0' + i as u8)),
                peeled: None,
            })
            .collect();
        let pick = |range: &str| {
            select(&Strategy::Semver(range.into()), &listed, "u").map(|s| s.reference)
        };
        assert_eq!(pick("*").unwrap(), "refs/tags/v2.0.0");
        assert_eq!(pick("<v0.2.1").unwrap(), "refs/tags/0.2.0");
        assert_eq!(
            pick(">=1.0.0-0 <1.1.0-0").unwrap(),
            "refs/tags/v1.0.0-alpha"
        );
        let err = pick(">=3").unwrap_err().to_string();
        assert_eq!(err, "no match found for semver: >=3");
    }
}
