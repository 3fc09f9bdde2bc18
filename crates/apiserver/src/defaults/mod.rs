//! Defaulting of built-in kinds: the values kube-apiserver fills in when an object is decoded
//! (`SetDefaults_*` of `pkg/apis/*/v1/defaults.go`, the declarative `+default` markers, and
//! the few values its admission plugins and registry strategies add on every write). Runs on
//! every create and update, before validation and field management, so stored objects, dry
//! runs and managed fields all see defaulted objects, as on a real server. Defaulting is
//! idempotent: a defaulted object is its own default.

mod kinds;
pub mod pod;

use serde_json::{Map, Value};
use tidegate_schema::ResourceInfo;

/// Fills in the defaults of a built-in object. Custom resources are defaulted from their schema
/// elsewhere.
pub fn apply(r: &ResourceInfo, obj: &mut Value) {
    if r.custom || !obj.is_object() {
        return;
    }
    drop_nulls(obj);
    kinds::apply(&r.group, &r.kind, obj);
}

/// Removes `null` values below the top level, as decoding into Go's types does (a null pointer,
/// slice or map is omitted when written again). kubectl sends `creationTimestamp: null` in every
/// pod template; without this, a template it copies back (`rollout undo`) would differ from
/// the stored one.
fn drop_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(drop_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// What kube-apiserver's registry strategies decide once, when an object is created (after
/// its uid is set): a Job's generated selector and the labels it puts on the Job's pods.
pub fn on_create(r: &ResourceInfo, obj: &mut Value) {
    if !r.custom && r.group == "batch" && r.kind == "Job" {
        kinds::job_selector(obj);
    }
}

/// The objects in the array `v` holds (none when it is not an array).
fn each(v: Option<&mut Value>) -> impl Iterator<Item = &mut Map<String, Value>> {
    v.and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// The object at `key` of `v`, if `v` is an object and it holds one there.
fn obj_at<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    v.get_mut(key).and_then(Value::as_object_mut)
}

/// The object at `key` of `m`, created (`{}`) when missing or null.
fn obj_entry<'a>(m: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    let v = m.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if v.is_null() {
        *v = Value::Object(Map::new());
    }
    v.as_object_mut()
}

/// Sets `key` when it is missing or null (a nil pointer in Go).
fn set(m: &mut Map<String, Value>, key: &str, value: Value) {
    match m.get(key) {
        None | Some(Value::Null) => {
            m.insert(key.into(), value);
        }
        Some(_) => {}
    }
}

/// Sets a string `key` when it is missing, null or empty (Go's zero string).
fn set_str(m: &mut Map<String, Value>, key: &str, value: &str) {
    match m.get(key) {
        None | Some(Value::Null) => {
            m.insert(key.into(), Value::String(value.into()));
        }
        Some(Value::String(s)) if s.is_empty() => {
            m.insert(key.into(), Value::String(value.into()));
        }
        Some(_) => {}
    }
}
