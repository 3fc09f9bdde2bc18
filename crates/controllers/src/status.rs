//! Status writes as JSON merge patches computed from the old and new status, so a reconcile
//! that changed nothing sends nothing.

use kube::api::{Patch, PatchParams};
use kube::{Api, Resource};
use serde_json::{Map, Value};

/// Patches `name`'s status with the difference between `old` and `new` (no request when they
/// are equal); the object as written is recorded in `versions`.
pub async fn patch<K, S>(
    api: &Api<K>,
    versions: &crate::fresh::Versions,
    name: &str,
    old: &S,
    new: &S,
) -> Result<(), String>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    S: serde::Serialize,
{
    let to_json = |s: &S| serde_json::to_value(s).unwrap_or_default();
    let Some(diff) = merge_diff(&to_json(old), &to_json(new)) else {
        return Ok(());
    };
    let patch = serde_json::json!({ "status": diff });
    let stored = api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| format!("patching status: {e}"))?;
    versions.record(&stored);
    Ok(())
}

/// The merge patch turning `old` into `new` (RFC 7386): changed keys, `null` for removed ones,
/// arrays replaced whole. `None` when they are equal.
pub fn merge_diff(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch = Map::new();
            for (k, nv) in n {
                match o.get(k) {
                    Some(ov) => {
                        if let Some(d) = merge_diff(ov, nv) {
                            patch.insert(k.clone(), d);
                        }
                    }
                    None => {
                        patch.insert(k.clone(), nv.clone());
                    }
                }
            }
            for k in o.keys() {
                if !n.contains_key(k) {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        (o, n) if o == n => None,
        (_, n) => Some(n.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diffs() {
        assert_eq!(merge_diff(&json!({"a": 1}), &json!({"a": 1})), None);
        assert_eq!(
            merge_diff(&json!({"a": 1, "b": 2}), &json!({"a": 2})),
            Some(json!({"a": 2, "b": null}))
        );
        assert_eq!(
            merge_diff(
                &json!({"a": {"x": 1, "y": 1}}),
                &json!({"a": {"x": 1, "y": 2}})
            ),
            Some(json!({"a": {"y": 2}}))
        );
        assert_eq!(
            merge_diff(&json!({"l": [1, 2]}), &json!({"l": [1]})),
            Some(json!({"l": [1]}))
        );
        assert_eq!(
            merge_diff(&json!({}), &json!({"n": {"m": 1}})),
            Some(json!({"n": {"m": 1}}))
        );
    }
}
