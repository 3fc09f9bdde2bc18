//! Object semantics shared by the verbs and the server's own controllers: metadata defaults,
//! generation, deletion with finalizers and propagation.

use crate::error::{ApiError, ApiResult, Cause};
use crate::store::{Change, Key, Outcome, Store, StoreError};
use serde_json::{Map, Value, json};
use tidegate_schema::ResourceInfo;

/// Now, as Kubernetes writes timestamps (RFC 3339, seconds, UTC).
pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `group` and `plural` of a storage key's resource (`apps/deployments`).
pub fn split_resource(resource: &str) -> (&str, &str) {
    resource.split_once('/').unwrap_or(("", resource))
}

/// Whether objects of this resource carry `metadata.generation`.
pub fn tracks_generation(r: &ResourceInfo) -> bool {
    if r.custom {
        return true;
    }
    if matches!(
        (r.group.as_str(), r.kind.as_str()),
        ("", "Namespace")
            | ("", "Service")
            | ("", "Node")
            | ("", "PersistentVolume")
            | ("", "PersistentVolumeClaim")
            | ("", "Endpoints")
    ) {
        return false;
    }
    let Some(def) = r
        .definition
        .as_ref()
        .and_then(|d| tidegate_schema::builtin_definitions().get(d))
    else {
        return false;
    };
    def.pointer("/properties/spec").is_some()
}

/// Whether anything outside `metadata` and `status` differs.
pub fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| -> Map<String, Value> {
        v.as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| {
                        !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    strip(old) != strip(new)
}

/// The metadata map of an object, created if missing.
pub fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    match obj.get_mut("metadata").and_then(Value::as_object_mut) {
        Some(m) => m,
        None => unreachable!("metadata was just made an object"),
    }
}

/// A string field of `metadata`.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

/// `metadata.finalizers` as strings.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Sets `metadata.finalizers` (removing the field when empty).
pub fn set_finalizers(obj: &mut Value, list: &[String]) {
    let meta = meta_mut(obj);
    if list.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert("finalizers".into(), json!(list));
    }
}

/// How dependents are treated when their owner is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// Owner goes at once; the garbage collector removes dependents afterwards.
    Background,
    /// Owner waits (finalizer `foregroundDeletion`) until dependents are gone.
    Foreground,
    /// Dependents lose their owner reference and stay (finalizer `orphan`).
    Orphan,
}

impl Propagation {
    /// Parses `propagationPolicy`.
    pub fn parse(s: &str) -> ApiResult<Propagation> {
        match s {
            "Background" => Ok(Propagation::Background),
            "Foreground" => Ok(Propagation::Foreground),
            "Orphan" => Ok(Propagation::Orphan),
            other => Err(ApiError::bad_request(format!(
                "propagationPolicy: Unsupported value: \"{other}\": supported values: \"Background\", \"Foreground\", \"Orphan\""
            ))),
        }
    }
}

/// Preconditions of a delete.
#[derive(Debug, Clone, Default)]
pub struct Preconditions {
    /// Required uid.
    pub uid: Option<String>,
    /// Required resourceVersion.
    pub resource_version: Option<String>,
}

/// Deletes (or starts deleting, when finalizers remain) the object at `key`.
/// With `dry_run`, computes the outcome without writing.
pub fn delete(
    store: &Store,
    key: &Key,
    propagation: Propagation,
    pre: &Preconditions,
    dry_run: bool,
) -> ApiResult<Outcome> {
    let (group, plural) = split_resource(&key.resource);
    let decide = |cur: Option<&std::sync::Arc<Value>>| -> ApiResult<Change> {
        let Some(cur) = cur else {
            return Err(ApiError::not_found(group, plural, &key.name));
        };
        if let Some(uid) = &pre.uid
            && meta_str(cur, "uid") != Some(uid.as_str())
        {
            return Err(ApiError::conflict(
                group,
                plural,
                &key.name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    meta_str(cur, "uid").unwrap_or("")
                ),
            ));
        }
        if let Some(rv) = &pre.resource_version
            && meta_str(cur, "resourceVersion") != Some(rv.as_str())
        {
            return Err(ApiError::conflict(
                group,
                plural,
                &key.name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                    meta_str(cur, "resourceVersion").unwrap_or("")
                ),
            ));
        }
        let mut fins = finalizers(cur);
        let deleting = meta_str(cur, "deletionTimestamp").is_some();
        let extra = match propagation {
            Propagation::Foreground => Some("foregroundDeletion"),
            Propagation::Orphan => Some("orphan"),
            Propagation::Background => None,
        };
        let namespace_pending = key.resource == "/namespaces"
            && cur
                .pointer("/spec/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
        if fins.is_empty() && !namespace_pending && (extra.is_none() || !has_dependents(store, cur))
        {
            return Ok(Change::Delete);
        }
        if deleting && extra.is_none_or(|f| fins.iter().any(|x| x == f)) {
            return Ok(Change::Keep);
        }
        let mut next = (**cur).clone();
        if let Some(f) = extra
            && !fins.iter().any(|x| x == f)
        {
            fins.push(f.to_string());
        }
        set_finalizers(&mut next, &fins);
        if !deleting {
            let meta = meta_mut(&mut next);
            meta.insert("deletionTimestamp".into(), json!(now()));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        }
        if key.resource == "/namespaces"
            && let Some(o) = next.as_object_mut()
        {
            let status = o.entry("status").or_insert_with(|| json!({}));
            if !status.is_object() {
                *status = json!({});
            }
            if let Some(s) = status.as_object_mut() {
                s.insert("phase".into(), json!("Terminating"));
            }
        }
        Ok(Change::Put(next))
    };
    if dry_run {
        let cur = store.get(key);
        return match decide(cur.as_ref())? {
            Change::Put(v) => Ok(Outcome {
                object: Some(std::sync::Arc::new(v)),
                written: false,
                created: false,
            }),
            Change::Delete | Change::Keep => Ok(Outcome {
                object: cur,
                written: false,
                created: false,
            }),
        };
    }
    store.mutate(key, decide)
}

fn has_dependents(store: &Store, obj: &Value) -> bool {
    meta_str(obj, "uid").is_some_and(|uid| !store.dependents_of(uid).is_empty())
}

/// Removes one finalizer; deletes the object if it was being deleted and none remain.
pub fn remove_finalizer(store: &Store, key: &Key, finalizer: &str) -> ApiResult<Outcome> {
    store.mutate(key, |cur| {
        let Some(cur) = cur else {
            return Ok(Change::Keep);
        };
        let mut fins = finalizers(cur);
        let before = fins.len();
        fins.retain(|f| f != finalizer);
        if fins.len() == before {
            return Ok(Change::Keep);
        }
        if fins.is_empty() && meta_str(cur, "deletionTimestamp").is_some() {
            return Ok(Change::Delete);
        }
        let mut next = (**cur).clone();
        set_finalizers(&mut next, &fins);
        Ok(Change::Put(next))
    })
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> Self {
        match e {
            crate::store::StoreError::Expired { requested, oldest } => {
                ApiError::gone(format!("too old resource version: {requested} ({oldest})"))
            }
            other => ApiError::internal(other.to_string()),
        }
    }
}

/// Checks that the namespace of a new object exists and is not terminating.
pub fn check_namespace(store: &Store, namespace: &str, resource: &str) -> ApiResult<()> {
    let (group, plural) = split_resource(resource);
    match store.get(&Key::new("/namespaces", "", namespace)) {
        None => Err(ApiError::not_found("", "namespaces", namespace)),
        Some(ns) if meta_str(&ns, "deletionTimestamp").is_some() => {
            let mut e = ApiError::forbidden(
                group,
                plural,
                "",
                &format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            );
            e.message = format!(
                "{} is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
                if group.is_empty() {
                    plural.to_string()
                } else {
                    format!("{plural}.{group}")
                }
            );
            e.reason = "Forbidden".into();
            Err(e)
        }
        Some(_) => Ok(()),
    }
}

/// Stores `obj` at `key` unless something is there, giving it a uid and a creation time, as the
/// server's own controllers create what they own. Returns whether it was written.
pub fn create_if_missing(store: &Store, key: &Key, mut obj: Value) -> Result<bool, StoreError> {
    let meta = meta_mut(&mut obj);
    meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    meta.insert("creationTimestamp".into(), json!(now()));
    let out = store.mutate::<StoreError>(key, |cur| {
        Ok(if cur.is_some() {
            Change::Keep
        } else {
            Change::Put(obj)
        })
    })?;
    Ok(out.written)
}

/// A random suffix as `generateName` uses (5 characters from Kubernetes' alphabet).
pub fn random_suffix() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// Causes for metadata that the server owns but the client tried to set on create.
pub fn metadata_type_causes(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    if let Some(meta) = obj.get("metadata")
        && !meta.is_object()
    {
        out.push(Cause::type_invalid("metadata", meta, "object"));
    }
    for f in ["name", "namespace", "generateName"] {
        if let Some(v) = obj.get("metadata").and_then(|m| m.get(f))
            && !v.is_string()
            && !v.is_null()
        {
            out.push(Cause::type_invalid(&format!("metadata.{f}"), v, "string"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(obj: Value) -> (Store, Key) {
        let store = Store::open(None).expect("store");
        let key = Key::new("/configmaps", "default", "x");
        store
            .mutate::<ApiError>(&key, |_| Ok(Change::Put(obj)))
            .expect("put");
        (store, key)
    }

    #[test]
    fn delete_without_finalizers_removes() {
        let (store, key) = store_with(json!({"metadata": {"name": "x", "uid": "u1"}}));
        let out = delete(
            &store,
            &key,
            Propagation::Background,
            &Preconditions::default(),
            false,
        )
        .expect("delete");
        assert!(out.written);
        assert!(store.get(&key).is_none());
    }

    #[test]
    fn finalizers_hold_the_object_until_removed() {
        let (store, key) = store_with(json!({"metadata": {"name": "x", "finalizers": ["a/b"]}}));
        delete(
            &store,
            &key,
            Propagation::Background,
            &Preconditions::default(),
            false,
        )
        .expect("delete");
        let held = store.get(&key).expect("still there");
        assert!(meta_str(&held, "deletionTimestamp").is_some());
        remove_finalizer(&store, &key, "a/b").expect("remove");
        assert!(store.get(&key).is_none());
    }

    #[test]
    fn preconditions_conflict() {
        let (store, key) = store_with(json!({"metadata": {"name": "x", "uid": "u1"}}));
        let pre = Preconditions {
            uid: Some("other".into()),
            resource_version: None,
        };
        let e = delete(&store, &key, Propagation::Background, &pre, false).expect_err("conflict");
        assert_eq!(e.code, 409);
        assert!(
            e.message
                .contains("Precondition failed: UID in precondition: other"),
            "{}",
            e.message
        );
        assert!(store.get(&key).is_some());
    }
}
