//! Ownership takeover: fields recorded for `kubectl` (client-side and server-side) and
//! `before-first-apply` are handed to our field manager, so that fields later removed from the
//! source are removed from the cluster; `last-applied-configuration` is dropped.

use serde_json::{Map, Value, json};

/// The annotations removed on takeover.
pub const REMOVED_ANNOTATIONS: [&str; 3] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    "kustomize.toolkit.fluxcd.io/checksum",
    "fluxcd.io/sync-checksum",
];
/// The labels removed on takeover.
pub const REMOVED_LABELS: [&str; 1] = ["fluxcd.io/sync-gc-mark"];

/// A field manager whose fields are taken over: a name prefix and an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakeoverManager {
    /// Matches managers whose name starts with this.
    pub prefix: String,
    /// `Apply` or `Update`.
    pub operation: String,
}

impl TakeoverManager {
    /// A manager matched by name prefix and operation.
    pub fn new(prefix: &str, operation: &str) -> TakeoverManager {
        TakeoverManager {
            prefix: prefix.into(),
            operation: operation.into(),
        }
    }

    /// Flux's defaults: `kubectl` (Apply and Update) and `before-first-apply` (Update).
    pub fn defaults() -> Vec<TakeoverManager> {
        vec![
            TakeoverManager::new("kubectl", "Apply"),
            TakeoverManager::new("kubectl", "Update"),
            TakeoverManager::new("before-first-apply", "Update"),
        ]
    }

    fn matches(&self, entry: &Value) -> bool {
        let field = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or("");
        field("operation") == self.operation
            && field("subresource").is_empty()
            && field("manager").starts_with(&self.prefix)
    }
}

/// Unions two FieldsV1 trees.
fn union(into: &mut Value, other: &Value) {
    match (into, other) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(k) {
                    Some(existing) => union(existing, v),
                    None => {
                        a.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (slot @ Value::Null, v) => *slot = v.clone(),
        _ => {}
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The JSON patch that hands the fields of `managers` in `live` to `our_manager` and removes
/// the takeover annotations and labels; `None` when there is nothing to do.
pub fn takeover_patch(
    live: &Value,
    managers: &[TakeoverManager],
    our_manager: &str,
) -> Option<Value> {
    let mut ops = Vec::new();
    let meta = live.get("metadata");
    let present = |field: &str, key: &str| {
        meta.and_then(|m| m.get(field))
            .and_then(|m| m.get(key))
            .is_some()
    };
    for a in REMOVED_ANNOTATIONS {
        if present("annotations", a) {
            ops.push(
                json!({"op": "remove", "path": format!("/metadata/annotations/{}", escape(a))}),
            );
        }
    }
    for l in REMOVED_LABELS {
        if present("labels", l) {
            ops.push(json!({"op": "remove", "path": format!("/metadata/labels/{}", escape(l))}));
        }
    }
    let entries = meta
        .and_then(|m| m.get("managedFields"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let is_ours = |e: &Value| {
        e.get("manager").and_then(Value::as_str) == Some(our_manager)
            && e.get("operation").and_then(Value::as_str) == Some("Apply")
            && e.get("subresource")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
    };
    let mut ours: Option<Value> = entries.iter().rev().find(|e| is_ours(e)).cloned();
    let mut kept = Vec::new();
    let mut matched = false;
    for e in &entries {
        if is_ours(e) {
            continue;
        }
        if managers.iter().any(|m| m.matches(e)) {
            matched = true;
            match &mut ours {
                None => {
                    let mut renamed = e.clone();
                    renamed["manager"] = json!(our_manager);
                    renamed["operation"] = json!("Apply");
                    ours = Some(renamed);
                }
                Some(prev) => {
                    let fields = e.get("fieldsV1").cloned().unwrap_or(Value::Null);
                    let slot = prev
                        .as_object_mut()
                        .map(|m| m.entry("fieldsV1").or_insert(Value::Object(Map::new())));
                    if let Some(slot) = slot {
                        union(slot, &fields);
                    }
                }
            }
        } else {
            kept.push(e.clone());
        }
    }
    if matched && let Some(ours) = ours {
        kept.push(ours);
        ops.push(json!({"op": "replace", "path": "/metadata/managedFields", "value": kept}));
    }
    (!ops.is_empty()).then_some(Value::Array(ops))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_kubectl_fields_over() {
        let live = json!({"metadata": {
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "1"},
        "managedFields": [
            {"manager": "kubectl-client-side-apply", "operation": "Update",
             "fieldsV1": {"f:data": {"f:a": {}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
             "fieldsV1": {"f:status": {}}},
            {"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:data": {"f:b": {}}}},
        ]}});
        let patch = takeover_patch(&live, &TakeoverManager::defaults(), "tidegate").expect("patch");
        assert_eq!(
            patch[0],
            json!({"op": "remove",
            "path": "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"})
        );
        let fields = &patch[1]["value"];
        assert_eq!(fields.as_array().map(Vec::len), Some(2));
        assert_eq!(fields[0]["manager"], "kube-controller-manager");
        assert_eq!(fields[1]["manager"], "tidegate");
        assert_eq!(fields[1]["operation"], "Apply");
        assert_eq!(
            fields[1]["fieldsV1"],
            json!({"f:data": {"f:a": {}, "f:b": {}}})
        );
        // Nothing to take over: no patch.
        let clean = json!({"metadata": {"managedFields": [
            {"manager": "tidegate", "operation": "Apply", "fieldsV1": {}}]}});
        assert_eq!(
            takeover_patch(&clean, &TakeoverManager::defaults(), "tidegate"),
            None
        );
    }
}
