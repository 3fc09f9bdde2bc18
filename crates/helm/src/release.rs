//! Rendered files into manifests and hooks, as Helm's `releaseutil` does: documents split on
//! `---`, hooks recognised by `helm.sh/hook`, both sorted by Helm's install order.

use std::collections::BTreeMap;

/// A rendered document that is not a hook.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The template it came from.
    pub name: String,
    pub content: String,
    pub kind: String,
    pub api_version: String,
}

/// A hook document.
#[derive(Debug, Clone)]
pub struct Hook {
    pub name: String,
    pub kind: String,
    /// The template it came from.
    pub path: String,
    pub manifest: String,
    pub events: Vec<String>,
    pub weight: i64,
    pub delete_policies: Vec<String>,
    pub output_log_policies: Vec<String>,
}

impl Hook {
    /// Whether the hook runs as a test (`helm template --skip-tests` leaves it out).
    pub fn is_test(&self) -> bool {
        self.events.iter().any(|e| e == "test")
    }
}

/// Helm's install order of kinds; others come after, by name.
pub const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

const HOOK_EVENTS: &[(&str, &str)] = &[
    ("pre-install", "pre-install"),
    ("post-install", "post-install"),
    ("pre-delete", "pre-delete"),
    ("post-delete", "post-delete"),
    ("pre-upgrade", "pre-upgrade"),
    ("post-upgrade", "post-upgrade"),
    ("pre-rollback", "pre-rollback"),
    ("post-rollback", "post-rollback"),
    ("test", "test"),
    ("test-success", "test"),
];

/// Helm's `SplitManifests`: documents separated by `---` lines, trimmed, empty ones dropped,
/// in order.
pub fn split_manifests(big: &str) -> Vec<String> {
    let text = big.trim();
    let mut docs = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    // A separator is `---` at the start or after a newline (spaces before the newline are
    // part of it), and the white space after it.
    while i < bytes.len() {
        let at_line_start = i == 0 || bytes[i - 1] == b'\n';
        if at_line_start && text[i..].starts_with("---") {
            let mut sep_start = i;
            if i > 0 {
                sep_start = i - 1;
                while sep_start > start && (bytes[sep_start - 1] as char).is_whitespace() {
                    sep_start -= 1;
                }
            }
            let mut end = i + 3;
            while end < bytes.len() && (bytes[end] as char).is_whitespace() {
                end += 1;
            }
            docs.push(&text[start..sep_start.max(start)]);
            start = end;
            i = end;
            continue;
        }
        i += 1;
    }
    docs.push(&text[start..]);
    docs.into_iter()
        .filter(|d| !d.is_empty())
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .collect()
}

fn kind_rank(kind: &str) -> Option<usize> {
    INSTALL_ORDER.iter().position(|k| *k == kind)
}

/// Helm's `lessByKind` for a stable sort.
fn less_by_kind(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (kind_rank(a), kind_rank(b)) {
        (None, None) => a.cmp(b),
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => x.cmp(&y),
    }
}

/// The head of a document: kind, apiVersion, name and annotations.
struct Head {
    kind: String,
    api_version: String,
    name: String,
    annotations: Option<BTreeMap<String, String>>,
}

fn read_head(doc: &str, path: &str) -> Result<Head, String> {
    let v = crate::chart::read_yaml(doc).map_err(|e| format!("YAML parse error on {path}: {e}"))?;
    let s = |v: Option<&serde_json::Value>, field: &str| -> Result<String, String> {
        match v {
            None | Some(serde_json::Value::Null) => Ok(String::new()),
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(format!(
                "YAML parse error on {path}: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field {field} of type string",
                crate::chart::json_kind(other)
            )),
        }
    };
    let obj = match &v {
        serde_json::Value::Object(m) => m.clone(),
        serde_json::Value::Null => serde_json::Map::new(),
        other => {
            return Err(format!(
                "YAML parse error on {path}: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type util.SimpleHead",
                crate::chart::json_kind(other)
            ));
        }
    };
    let metadata = obj.get("metadata").and_then(|m| m.as_object());
    let annotations = match metadata.and_then(|m| m.get("annotations")) {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Object(a)) => {
            let mut out = BTreeMap::new();
            for (k, v) in a {
                out.insert(k.clone(), s(Some(v), "SimpleHead.metadata.annotations")?);
            }
            Some(out)
        }
        Some(other) => {
            return Err(format!(
                "YAML parse error on {path}: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field .metadata.annotations of type map[string]string",
                crate::chart::json_kind(other)
            ));
        }
    };
    Ok(Head {
        kind: s(obj.get("kind"), "SimpleHead.kind")?,
        api_version: s(obj.get("apiVersion"), "SimpleHead.apiVersion")?,
        name: s(
            metadata.and_then(|m| m.get("name")),
            "SimpleHead.metadata.name",
        )?,
        annotations,
    })
}

/// Helm's `SortManifests`: the files' documents as hooks and manifests, each sorted by
/// install order (stable: files by name, documents in order).
pub fn sort_manifests(
    files: &BTreeMap<String, String>,
) -> Result<(Vec<Hook>, Vec<Manifest>), String> {
    let mut hooks = Vec::new();
    let mut manifests = Vec::new();
    for (path, content) in files {
        if crate::sprig::path_base(path).starts_with('_') || content.trim().is_empty() {
            continue;
        }
        for doc in split_manifests(content) {
            let head = read_head(&doc, path)?;
            let hook_types = head
                .annotations
                .as_ref()
                .filter(|a| !a.is_empty())
                .and_then(|a| a.get("helm.sh/hook").cloned());
            let Some(hook_types) = hook_types else {
                manifests.push(Manifest {
                    name: path.clone(),
                    content: doc,
                    kind: head.kind,
                    api_version: head.api_version,
                });
                continue;
            };
            let annotations = head.annotations.unwrap_or_default();
            let mut events = Vec::new();
            let mut unknown = false;
            for t in hook_types.split(',') {
                let t = t.trim().to_lowercase();
                match HOOK_EVENTS.iter().find(|(k, _)| *k == t) {
                    Some((_, e)) => events.push(e.to_string()),
                    None => {
                        unknown = true;
                        break;
                    }
                }
            }
            if unknown {
                continue;
            }
            let list = |key: &str| -> Vec<String> {
                annotations
                    .get(key)
                    .map(|v| v.split(',').map(|p| p.trim().to_lowercase()).collect())
                    .unwrap_or_default()
            };
            hooks.push(Hook {
                name: head.name,
                kind: head.kind,
                path: path.clone(),
                manifest: doc,
                events,
                weight: annotations
                    .get("helm.sh/hook-weight")
                    .and_then(|w| w.parse::<i64>().ok())
                    .unwrap_or(0),
                delete_policies: list("helm.sh/hook-delete-policy"),
                output_log_policies: list("helm.sh/hook-output-log-policy"),
            });
        }
    }
    hooks.sort_by(|a, b| less_by_kind(&a.kind, &b.kind));
    manifests.sort_by(|a, b| less_by_kind(&a.kind, &b.kind));
    Ok((hooks, manifests))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_as_helm() {
        assert_eq!(
            split_manifests("a: 1\n---\nb: 2\n---  \n\nc: 3\n"),
            vec!["a: 1", "b: 2", "c: 3"]
        );
        assert_eq!(
            split_manifests("---\n# Source: x\na: 1"),
            vec!["# Source: x\na: 1"]
        );
        assert_eq!(split_manifests("\n\n"), Vec::<String>::new());
        assert_eq!(split_manifests("a: |\n  x---y\n"), vec!["a: |\n  x---y"]);
    }
}
