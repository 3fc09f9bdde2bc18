//! References to Kubernetes objects and their `Kind/Namespace/Name` display form.

use serde_json::Value;
use std::fmt;

/// Identifies one object: group, kind, namespace (empty for cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    /// API group, empty for the core group.
    pub group: String,
    /// Kind, for example `Deployment`.
    pub kind: String,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Object name.
    pub name: String,
}

impl ObjectRef {
    /// A reference from its parts.
    pub fn new(group: &str, kind: &str, namespace: &str, name: &str) -> ObjectRef {
        ObjectRef {
            group: group.into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// Reads the reference out of an object's `apiVersion`, `kind` and `metadata`.
    /// Missing fields become empty strings.
    pub fn from_object(obj: &Value) -> ObjectRef {
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let group = match api_version.rsplit_once('/') {
            Some((g, _)) => g,
            None => "",
        };
        let meta = obj.get("metadata");
        let field = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        ObjectRef {
            group: group.to_string(),
            kind: obj
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            namespace: field("namespace"),
            name: field("name"),
        }
    }
}

/// `Kind/Namespace/Name`, or `Kind/Name` for cluster-scoped objects, as Flux prints change sets.
impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}/{}", self.kind, self.name)
        } else {
            write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// Splits an `apiVersion` into group and version (`"v1"` → `("", "v1")`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn displays_like_flux() {
        let r = ObjectRef::from_object(&json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "apps"}
        }));
        assert_eq!(r.group, "apps");
        assert_eq!(r.to_string(), "Deployment/apps/web");
        let ns = ObjectRef::from_object(&json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}
        }));
        assert_eq!(ns.group, "");
        assert_eq!(ns.to_string(), "Namespace/apps");
    }

    #[test]
    fn splits_api_versions() {
        assert_eq!(split_api_version("v1"), ("", "v1"));
        assert_eq!(
            split_api_version("apps.example.com/v1beta1"),
            ("apps.example.com", "v1beta1")
        );
    }
}
