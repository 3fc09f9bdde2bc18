//! `behavior: merge` and `behavior: replace` of generators against an existing resource.

use serde_json::Value;

use crate::resource::{Behavior, Generated, Resource};

/// Combines a newly generated object into the existing one, which keeps its place, name and
/// namespace. Labels and annotations are merged (new wins); `merge` also merges data and
/// binaryData, `replace` takes them from the new object. The content hash survives only when
/// both had it.
pub fn combine(existing: &mut Resource, new: Resource, behavior: Behavior) {
    let old = existing.obj.clone();
    let mut obj = new.obj.clone();
    let old_meta = old
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Value::Object(meta) = meta {
        for key in ["name", "namespace"] {
            match old_meta.get(key) {
                Some(v) => {
                    meta.insert(key.into(), v.clone());
                }
                None => {
                    meta.remove(key);
                }
            }
        }
        for key in ["labels", "annotations"] {
            let mut merged = old_meta
                .get(key)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            if let Some(Value::Object(n)) = meta.get(key) {
                for (k, v) in n {
                    merged.insert(k.clone(), v.clone());
                }
            }
            if merged.is_empty() {
                meta.remove(key);
            } else {
                meta.insert(key.into(), Value::Object(merged));
            }
        }
    }
    if behavior == Behavior::Merge {
        for key in ["data", "binaryData"] {
            let mut merged = old
                .get(key)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            if let Some(Value::Object(n)) = obj.get(key) {
                for (k, v) in n {
                    merged.insert(k.clone(), v.clone());
                }
            }
            if !merged.is_empty() {
                obj.insert(key.into(), Value::Object(merged));
            }
        }
    }
    let hash = existing.generated.as_ref().is_some_and(|g| g.hash)
        && new.generated.as_ref().is_some_and(|g| g.hash);
    existing.obj = obj;
    existing.generated = Some(Generated {
        behavior: Behavior::Create,
        hash,
    });
}
