//! Which GitRepositories may read a repository on the controller's own filesystem
//! (`file://` URLs). Such a URL reads whatever repository the controller's user can read, so
//! it is refused unless the operator enabled it: for every object (`--allow-file-urls`, never
//! under `tidegate up --multi-tenant`) or for the bootstrap object only (`tidegate up --git
//! PATH` and `--example` reconcile `flux-system/flux-system` from a local repository).

/// The `file://` policy of a controller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FileUrls {
    /// No object may use `file://` (the default of `tidegate controllers`).
    #[default]
    Refused,
    /// Every object may (`--allow-file-urls`).
    All,
    /// Only these objects, as (namespace, name).
    Only(Vec<(String, String)>),
}

impl FileUrls {
    /// Whether the object `namespace/name` may read `url`.
    pub fn allows(&self, url: &str, namespace: &str, name: &str) -> bool {
        if !is_file_url(url) {
            return true;
        }
        match self {
            FileUrls::Refused => false,
            FileUrls::All => true,
            FileUrls::Only(objects) => objects.iter().any(|(n, m)| n == namespace && m == name),
        }
    }

    /// Why `namespace/name` may not use its `file://` URL.
    pub fn refusal(&self, namespace: &str, name: &str) -> String {
        match self {
            FileUrls::Only(objects) if !objects.is_empty() => {
                let allowed: Vec<String> =
                    objects.iter().map(|(n, m)| format!("{n}/{m}")).collect();
                format!(
                    "file:// URLs are refused for GitRepository {namespace}/{name}: they read repositories on the controller's filesystem, which only {} may do",
                    allowed.join(", ")
                )
            }
            _ => format!(
                "file:// URLs are refused for GitRepository {namespace}/{name}: they read repositories on the controller's filesystem, which this controller allows only with --allow-file-urls"
            ),
        }
    }
}

/// Whether `url` names a repository on the local filesystem (the scheme compared without
/// regard to case, as Git and URL parsers do).
pub fn is_file_url(url: &str) -> bool {
    let url = url.trim_start();
    url.get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("file://"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_file_urls_are_judged() {
        for policy in [FileUrls::Refused, FileUrls::All, FileUrls::Only(vec![])] {
            assert!(policy.allows("https://example.com/r.git", "t", "r"));
            assert!(policy.allows("ssh://git@example.com/r.git", "t", "r"));
        }
    }

    #[test]
    fn the_bootstrap_object_alone_may_read_local_repositories() {
        let policy = FileUrls::Only(vec![("flux-system".into(), "flux-system".into())]);
        assert!(policy.allows("file:///srv/fleet.git", "flux-system", "flux-system"));
        assert!(!policy.allows("file:///srv/fleet.git", "tenant", "flux-system"));
        assert!(!policy.allows("FILE:///srv/fleet.git", "tenant", "platform"));
        assert!(!policy.allows(" File:///srv/fleet.git", "flux-system", "other"));
        let why = policy.refusal("tenant", "platform");
        assert!(why.contains("GitRepository tenant/platform"), "{why}");
        assert!(why.contains("only flux-system/flux-system may do"), "{why}");
    }

    #[test]
    fn refused_and_all() {
        assert!(!FileUrls::Refused.allows("file:///x", "a", "b"));
        assert!(FileUrls::All.allows("file:///x", "a", "b"));
        assert!(
            FileUrls::Refused
                .refusal("a", "b")
                .ends_with("allows only with --allow-file-urls")
        );
    }
}
