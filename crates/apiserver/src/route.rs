//! Parsing request paths into what they address.

/// What a request path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/version`
    Version,
    /// `/healthz`, `/livez`, `/readyz` (and their sub-checks)
    Health,
    /// `/metrics` (Prometheus text: requests served)
    Metrics,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/<group>`
    Group(String),
    /// `/api/v1` or `/apis/<group>/<version>`
    ResourceList {
        /// Group, empty for core.
        group: String,
        /// Version.
        version: String,
    },
    /// `/.well-known/openid-configuration`: the service account issuer's discovery document
    OidcDiscovery,
    /// `/openid/v1/jwks`: the keys that sign service account tokens
    Jwks,
    /// `/openapi/v2`
    OpenApiV2,
    /// `/openapi/v3`
    OpenApiV3Root,
    /// `/openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>`
    OpenApiV3 {
        /// Group, empty for core.
        group: String,
        /// Version.
        version: String,
    },
    /// A resource, collection or subresource.
    Resource(ResourcePath),
}

/// The parts of a resource URL.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourcePath {
    /// Group, empty for core.
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural resource name.
    pub plural: String,
    /// Namespace from the URL, if any.
    pub namespace: Option<String>,
    /// Object name, if the URL names one.
    pub name: Option<String>,
    /// Subresource (`status`, `scale`, …).
    pub subresource: Option<String>,
    /// The deprecated `/watch/` path form was used.
    pub watch_prefix: bool,
}

fn decode(seg: &str) -> String {
    percent_encoding::percent_decode_str(seg)
        .decode_utf8_lossy()
        .into_owned()
}

/// Parses a request path. `None` means nothing is served there (404).
pub fn parse(path: &str) -> Option<Route> {
    let trimmed = path.trim_end_matches('/');
    let segs: Vec<String> = trimmed
        .split('/')
        .filter(|s| !s.is_empty())
        .map(decode)
        .collect();
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    match s.as_slice() {
        ["version"] => return Some(Route::Version),
        [".well-known", "openid-configuration"] => return Some(Route::OidcDiscovery),
        ["openid", "v1", "jwks"] => return Some(Route::Jwks),
        ["metrics"] => return Some(Route::Metrics),
        [h, ..] if matches!(*h, "healthz" | "livez" | "readyz") => return Some(Route::Health),
        ["api"] => return Some(Route::CoreVersions),
        ["apis"] => return Some(Route::Groups),
        ["apis", g] => return Some(Route::Group(g.to_string())),
        ["api", v] => {
            return Some(Route::ResourceList {
                group: String::new(),
                version: v.to_string(),
            });
        }
        ["apis", g, v] => {
            return Some(Route::ResourceList {
                group: g.to_string(),
                version: v.to_string(),
            });
        }
        ["openapi", "v2"] => return Some(Route::OpenApiV2),
        ["openapi", "v3"] => return Some(Route::OpenApiV3Root),
        ["openapi", "v3", "api", v] => {
            return Some(Route::OpenApiV3 {
                group: String::new(),
                version: v.to_string(),
            });
        }
        ["openapi", "v3", "apis", g, v] => {
            return Some(Route::OpenApiV3 {
                group: g.to_string(),
                version: v.to_string(),
            });
        }
        _ => {}
    }
    let (group, version, rest) = match s.as_slice() {
        ["api", v, rest @ ..] => (String::new(), v.to_string(), rest),
        ["apis", g, v, rest @ ..] => (g.to_string(), v.to_string(), rest),
        _ => return None,
    };
    let mut rest: Vec<&str> = rest.to_vec();
    let mut watch_prefix = false;
    if rest.first() == Some(&"watch") {
        watch_prefix = true;
        rest.remove(0);
    }
    let mut p = ResourcePath {
        group,
        version,
        watch_prefix,
        ..Default::default()
    };
    match rest.as_slice() {
        [plural] => p.plural = plural.to_string(),
        ["namespaces", ns, plural, tail @ ..] if !tail.is_empty() || !is_ns_sub(plural) => {
            p.namespace = Some(ns.to_string());
            p.plural = plural.to_string();
            match tail {
                [] => {}
                [name] => p.name = Some(name.to_string()),
                [name, sub] => {
                    p.name = Some(name.to_string());
                    p.subresource = Some(sub.to_string());
                }
                // A proxy's path continues to the backend.
                [name, "proxy", ..] => {
                    p.name = Some(name.to_string());
                    p.subresource = Some("proxy".into());
                }
                _ => return None,
            }
        }
        [plural, name] => {
            p.plural = plural.to_string();
            p.name = Some(name.to_string());
        }
        [plural, name, sub] => {
            p.plural = plural.to_string();
            p.name = Some(name.to_string());
            p.subresource = Some(sub.to_string());
        }
        _ => return None,
    }
    Some(Route::Resource(p))
}

/// `/api/v1/namespaces/<name>/status` and `/finalize` are subresources of the namespace itself,
/// not a namespaced collection called `status`.
fn is_ns_sub(seg: &str) -> bool {
    matches!(seg, "status" | "finalize")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match parse(path) {
            Some(Route::Resource(p)) => p,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn parses_resource_paths() {
        let p = res("/api/v1/namespaces/default/configmaps/x");
        assert_eq!(
            (p.namespace.as_deref(), p.plural.as_str(), p.name.as_deref()),
            (Some("default"), "configmaps", Some("x"))
        );
        let p = res("/apis/apps/v1/namespaces/a/deployments/web/scale");
        assert_eq!(p.subresource.as_deref(), Some("scale"));
        assert_eq!(p.group, "apps");
        let p = res("/api/v1/namespaces/kube-system");
        assert_eq!(
            (p.plural.as_str(), p.name.as_deref(), p.namespace),
            ("namespaces", Some("kube-system"), None)
        );
        let p = res("/api/v1/namespaces/x/status");
        assert_eq!(
            (
                p.plural.as_str(),
                p.name.as_deref(),
                p.subresource.as_deref()
            ),
            ("namespaces", Some("x"), Some("status"))
        );
        let p = res("/api/v1/namespaces/x/finalize");
        assert_eq!(p.subresource.as_deref(), Some("finalize"));
        let p = res("/api/v1/namespaces");
        assert_eq!((p.plural.as_str(), p.name), ("namespaces", None));
        let p = res("/api/v1/watch/namespaces/d/pods");
        assert!(p.watch_prefix);
        assert_eq!(p.plural, "pods");
        let p = res("/apis/example.com/v1/widgets");
        assert_eq!((p.group.as_str(), p.namespace), ("example.com", None));
        assert_eq!(parse("/apis/apps"), Some(Route::Group("apps".into())));
        assert_eq!(parse("/nothing"), None);
        assert_eq!(
            parse("/openapi/v3/apis/apps/v1"),
            Some(Route::OpenApiV3 {
                group: "apps".into(),
                version: "v1".into()
            })
        );
    }
}
