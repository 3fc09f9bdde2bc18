//! JSON patch (RFC 6902) with kube-apiserver's bounds: at most 10,000 operations, and copies
//! that add at most 3 MiB in all (a few dozen `copy` operations that each double a field would
//! otherwise ask for terabytes). Operations apply to the caller's copy one at a time; a failed
//! patch leaves that copy half-done and the caller discards it (nothing is undone in place).

use json_patch::{Patch, PatchOperation};
use serde_json::Value;

/// Operations one patch may hold (kube-apiserver's `maxJSONPatchOperations`).
pub const MAX_OPERATIONS: usize = 10_000;
/// Bytes all `copy` operations of one patch may add (kube-apiserver's `JSONPatchMaxCopyBytes`).
pub const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// How deeply a patched object may nest: the JSON decoder (which reads the store back after a
/// restart) refuses 128 levels, so no write may produce them.
pub const MAX_DEPTH: usize = 100;

/// Why a patch was not applied.
#[derive(Debug, thiserror::Error)]
pub enum PatchFailure {
    /// More operations than [`MAX_OPERATIONS`] (kube answers 413).
    #[error(
        "Request entity too large: The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {0}"
    )]
    TooManyOperations(usize),
    /// The copies would add more than [`MAX_COPY_BYTES`].
    #[error(
        "Unable to complete the copy, the accumulated size increase of copy is more than the limit of {MAX_COPY_BYTES} bytes"
    )]
    CopiesTooLarge,
    /// The result nests deeper than [`MAX_DEPTH`].
    #[error("the patched object nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// An operation failed (its index and path, json-patch's words).
    #[error("{0}")]
    Operation(String),
}

impl PatchFailure {
    /// The API error kube-apiserver answers: 413 for too many operations, otherwise 422 naming
    /// the object.
    pub fn to_api(&self, group: &str, kind: &str, name: &str) -> crate::error::ApiError {
        match self {
            PatchFailure::TooManyOperations(_) => {
                crate::error::ApiError::entity_too_large(self.to_string())
            }
            _ => crate::error::ApiError::invalid(
                group,
                kind,
                name,
                vec![crate::error::Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "the server rejected our request due to an error in our request: {self}"
                    ),
                    field: String::new(),
                }],
            ),
        }
    }
}

/// Applies `patch` to `doc` (a copy the caller discards on error).
pub fn apply(doc: &mut Value, patch: &Patch) -> Result<(), PatchFailure> {
    if patch.0.len() > MAX_OPERATIONS {
        return Err(PatchFailure::TooManyOperations(patch.0.len()));
    }
    let mut copied = 0usize;
    for (i, op) in patch.0.iter().enumerate() {
        if let PatchOperation::Copy(c) = op
            && let Some(source) = doc.pointer(c.from.as_str())
        {
            copied = copied.saturating_add(size_up_to(source, MAX_COPY_BYTES + 1));
            if copied > MAX_COPY_BYTES {
                return Err(PatchFailure::CopiesTooLarge);
            }
        }
        json_patch::patch_unsafe(doc, std::slice::from_ref(op)).map_err(|e| {
            PatchFailure::Operation(format!(
                "operation '/{i}' failed at path '{}': {}",
                e.path, e.kind
            ))
        })?;
    }
    if depth_up_to(doc, MAX_DEPTH) > MAX_DEPTH {
        return Err(PatchFailure::TooDeep);
    }
    Ok(())
}

/// The JSON length of `v`, roughly, counted no further than `limit`.
fn size_up_to(v: &Value, limit: usize) -> usize {
    let mut total = 0usize;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        if total > limit {
            break;
        }
        total += match v {
            Value::String(s) => s.len() + 2,
            Value::Array(a) => {
                stack.extend(a.iter());
                2 + a.len()
            }
            Value::Object(m) => {
                stack.extend(m.values());
                2 + m.keys().map(|k| k.len() + 4).sum::<usize>()
            }
            _ => 8,
        };
    }
    total
}

/// How deeply `v` nests, counted no further than `limit + 1`, without recursion.
pub fn depth_up_to(v: &Value, limit: usize) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        if deepest > limit {
            break;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(m) => stack.extend(m.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(ops: Value) -> Patch {
        serde_json::from_value(ops).expect("patch")
    }

    #[test]
    fn doubling_copies_stop_at_the_limit() {
        let mut doc = json!({"data": {"k": "x".repeat(1000)}});
        let ops: Vec<Value> = (0..40)
            .map(|i| json!({"op": "copy", "from": "/data", "path": format!("/data/k{i}")}))
            .collect();
        let err = apply(&mut doc, &patch(Value::Array(ops))).expect_err("bounded");
        assert!(matches!(err, PatchFailure::CopiesTooLarge), "{err}");
    }

    #[test]
    fn too_many_operations() {
        let ops = vec![json!({"op": "test", "path": "/a", "value": 1}); MAX_OPERATIONS + 1];
        let err = apply(&mut json!({"a": 1}), &patch(Value::Array(ops))).expect_err("bounded");
        assert_eq!(
            err.to_string(),
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
        );
    }

    #[test]
    fn a_failed_move_inside_itself_is_an_error_not_a_panic() {
        let mut doc = json!({"metadata": {"name": "a"}});
        let err = apply(
            &mut doc,
            &patch(json!([
                {"op": "move", "from": "/metadata/name", "path": "/metadata"},
                {"op": "test", "path": "/nope", "value": 1}
            ])),
        )
        .expect_err("fails");
        assert!(
            err.to_string().starts_with("operation '/1' failed"),
            "{err}"
        );
    }

    #[test]
    fn moves_cannot_nest_beyond_the_limit() {
        let mut ops = vec![json!({"op": "add", "path": "/x", "value": 1})];
        for _ in 0..150 {
            ops.push(json!({"op": "add", "path": "/n", "value": {}}));
            ops.push(json!({"op": "move", "from": "/x", "path": "/n/x"}));
            ops.push(json!({"op": "move", "from": "/n", "path": "/x"}));
        }
        let err = apply(&mut json!({}), &patch(Value::Array(ops))).expect_err("too deep");
        assert!(matches!(err, PatchFailure::TooDeep), "{err}");
    }

    #[test]
    fn depth() {
        assert_eq!(depth_up_to(&json!(1), 10), 1);
        assert_eq!(depth_up_to(&json!({"a": [{"b": 1}]}), 10), 4);
        let mut deep = json!(1);
        for _ in 0..50 {
            deep = json!([deep]);
        }
        assert_eq!(depth_up_to(&deep, 10), 11);
    }
}
