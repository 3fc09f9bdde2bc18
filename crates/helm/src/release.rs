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

/// Helm's `SplitManifests`: the text trimmed, split where the expression
/// `(?:^|\s*\n)---\s*` matches (Go's `\s`: ASCII white space), pieces trimmed and empty
/// ones dropped, in order. A separator's trailing white space takes the newline, so a `---`
/// line right after another stays in the next document, as in Helm.
pub fn split_manifests(big: &str) -> Vec<String> {
    static SEPARATOR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:^|[\t\n\x0C\r ]*\n)---[\t\n\x0C\r ]*").expect("valid expression")
    });
    SEPARATOR
        .split(big.trim())
        .filter(|d| !d.is_empty())
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .collect()
}

/// Helm's uninstall order of kinds; others come after, by name.
pub const UNINSTALL_ORDER: &[&str] = &[
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
    "Ingress",
    "IngressClass",
    "Service",
    "CronJob",
    "Job",
    "StatefulSet",
    "HorizontalPodAutoscaler",
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "Pod",
    "DaemonSet",
    "RoleBindingList",
    "RoleBinding",
    "RoleList",
    "Role",
    "ClusterRoleBindingList",
    "ClusterRoleBinding",
    "ClusterRoleList",
    "ClusterRole",
    "CustomResourceDefinition",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "ConfigMap",
    "SecretList",
    "Secret",
    "ServiceAccount",
    "PodDisruptionBudget",
    "PodSecurityPolicy",
    "LimitRange",
    "ResourceQuota",
    "NetworkPolicy",
    "Namespace",
    "PriorityClass",
];

/// Helm's `lessByKind` for a stable sort: kinds by their place in `order`, unknown kinds
/// after them, by name.
fn less_by_kind(a: &str, b: &str, order: &[&str]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let rank = |kind: &str| order.iter().position(|k| *k == kind);
    match (rank(a), rank(b)) {
        (None, None) => a.cmp(b),
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => x.cmp(&y),
    }
}

/// Helm's `sortManifestsByKind` and `sortHooksByKind`: a stable sort of `items` by the place
/// of their kind in `order` ([`INSTALL_ORDER`] or [`UNINSTALL_ORDER`]); unknown kinds go
/// last, ordered by kind name.
pub fn sort_by_kind<T>(items: &mut [T], order: &[&str], kind: impl Fn(&T) -> &str) {
    items.sort_by(|a, b| less_by_kind(kind(a), kind(b), order));
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
    let empty = serde_json::Map::new();
    let obj = match &v {
        serde_json::Value::Object(m) => m,
        serde_json::Value::Null => &empty,
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

/// The heads of `docs`, in order; read on several threads when there is much to read.
fn read_heads(docs: &[(&String, &str)]) -> Vec<Result<Head, String>> {
    crate::parallel::map_weighted(docs, |(_, d)| d.len(), |(path, doc)| read_head(doc, path))
}

/// A document of a rendered file and its head (or why it has none).
type Document = (String, Result<Head, String>);

/// Rendered files whose documents and heads were read while later templates were still
/// executing: by file name, the content read and its documents with their heads.
#[derive(Default)]
pub struct ReadAhead(std::collections::HashMap<String, (String, Vec<Document>)>);

/// Reads the documents and heads of every `(file name, content)` received until the sender
/// is dropped: the work of [`sort_manifests`] done on another core during execution.
pub fn read_ahead(files: std::sync::mpsc::Receiver<(String, String)>) -> ReadAhead {
    let mut out = ReadAhead::default();
    for (path, content) in files {
        let docs = split_manifests(&content)
            .into_iter()
            .map(|d| {
                let head = read_head(&d, &path);
                (d, head)
            })
            .collect();
        out.0.insert(path, (content, docs));
    }
    out
}

/// Helm's `SortManifests`: the files' documents as hooks and manifests, each sorted by
/// install order (stable: files by name, documents in order).
pub fn sort_manifests(
    files: &BTreeMap<String, String>,
) -> Result<(Vec<Hook>, Vec<Manifest>), String> {
    sort_manifests_with(files, ReadAhead::default())
}

/// [`sort_manifests`] using the documents and heads `ahead` already holds for files whose
/// content is the same; the others are read here.
pub fn sort_manifests_with(
    files: &BTreeMap<String, String>,
    mut ahead: ReadAhead,
) -> Result<(Vec<Hook>, Vec<Manifest>), String> {
    let mut hooks = Vec::new();
    let mut manifests = Vec::new();
    // Each document with its file, and its head when it was read ahead.
    type Unsorted<'a> = (&'a String, String, Option<Result<Head, String>>);
    let mut docs: Vec<Unsorted> = Vec::new();
    for (path, content) in files.iter().filter(|(path, content)| {
        !crate::sprig::path_base(path).starts_with('_') && !content.trim().is_empty()
    }) {
        match ahead.0.remove(path.as_str()) {
            Some((read, read_docs)) if read == *content => {
                docs.extend(read_docs.into_iter().map(|(d, h)| (path, d, Some(h))));
            }
            _ => docs.extend(
                split_manifests(content)
                    .into_iter()
                    .map(|d| (path, d, None)),
            ),
        }
    }
    let unread: Vec<(&String, &str)> = docs
        .iter()
        .filter(|(_, _, h)| h.is_none())
        .map(|(p, d, _)| (*p, d.as_str()))
        .collect();
    let mut read = read_heads(&unread).into_iter();
    let docs: Vec<(&String, String, Result<Head, String>)> = docs
        .into_iter()
        .map(|(p, d, h)| {
            let h = h.unwrap_or_else(|| {
                read.next()
                    .unwrap_or_else(|| Err(format!("no head read for {p}")))
            });
            (p, d, h)
        })
        .collect();
    for (path, doc, head) in docs {
        let head = head?;
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
    sort_by_kind(&mut hooks, INSTALL_ORDER, |h| &h.kind);
    sort_by_kind(&mut manifests, INSTALL_ORDER, |m| &m.kind);
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
        // The first separator's white space takes the newline the second one would need.
        assert_eq!(
            split_manifests("---\n\n---\na: 1\n---b: 2"),
            vec!["---\na: 1", "b: 2"]
        );
    }
}
