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

/// Whether objects of this resource carry `metadata.generation`: the kinds whose
/// kube-apiserver registry strategy sets it on create, and every custom resource.
pub fn tracks_generation(r: &ResourceInfo) -> bool {
    r.custom
        || matches!(
            (r.group.as_str(), r.kind.as_str()),
            ("", "Pod" | "PodTemplate" | "ReplicationController")
                | (
                    "apps",
                    "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet"
                )
                | ("batch", "Job" | "CronJob")
                | ("policy", "PodDisruptionBudget")
                | (
                    "networking.k8s.io",
                    "Ingress" | "IngressClass" | "NetworkPolicy"
                )
                | ("discovery.k8s.io", "EndpointSlice")
                | (
                    "admissionregistration.k8s.io",
                    "ValidatingWebhookConfiguration"
                        | "MutatingWebhookConfiguration"
                        | "ValidatingAdmissionPolicy"
                        | "ValidatingAdmissionPolicyBinding"
                        | "MutatingAdmissionPolicy"
                        | "MutatingAdmissionPolicyBinding"
                )
                | ("apiextensions.k8s.io", "CustomResourceDefinition")
                | (
                    "flowcontrol.apiserver.k8s.io",
                    "FlowSchema" | "PriorityLevelConfiguration"
                )
                | ("resource.k8s.io", "DeviceClass" | "ResourceSlice")
                | ("scheduling.k8s.io", "PriorityClass")
        )
}

/// Bumps `next`'s generation where its kind's registry strategy does on update: a change of
/// the spec (everything outside `metadata` and `status`); for Deployments also of the
/// annotations, for EndpointSlices of the labels, for custom resources without a status
/// subresource of the status too; never for PriorityClasses. Runs after defaulting,
/// so a write that only restates defaults changes nothing.
pub fn bump_generation(r: &ResourceInfo, old: &Value, next: &mut Value) {
    if !tracks_generation(r) || (r.group == "scheduling.k8s.io" && r.kind == "PriorityClass") {
        return;
    }
    let with_status = r.custom && r.subresource("status").is_none();
    let changed = spec_differs(old, next, with_status)
        || (r.group == "apps"
            && r.kind == "Deployment"
            && old.pointer("/metadata/annotations") != next.pointer("/metadata/annotations"))
        || (r.group == "discovery.k8s.io"
            && old.pointer("/metadata/labels") != next.pointer("/metadata/labels"));
    if !changed {
        return;
    }
    let g = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    meta_mut(next).insert("generation".into(), json!(g + 1));
}

/// A DaemonSet's template generation, which the registry owns (a spec field inside
/// kube-apiserver, this annotation outside): kept from the stored object whatever a client
/// writes, and bumped when the pod template changes.
pub fn daemonset_template_generation(r: &ResourceInfo, old: &Value, next: &mut Value) {
    if r.custom || r.group != "apps" || r.kind != "DaemonSet" {
        return;
    }
    let pointer = format!(
        "/metadata/annotations/{}",
        DAEMONSET_TEMPLATE_GENERATION
            .replace('~', "~0")
            .replace('/', "~1")
    );
    let Some(stored) = old
        .pointer(&pointer)
        .and_then(Value::as_str)
        .and_then(|g| g.parse::<i64>().ok())
    else {
        return;
    };
    let changed = old.pointer("/spec/template") != next.pointer("/spec/template");
    let value = if changed { stored + 1 } else { stored };
    set_annotation(next, DAEMONSET_TEMPLATE_GENERATION, &value.to_string());
}

/// The annotation a DaemonSet's registry keeps its template generation in.
pub const DAEMONSET_TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// Sets one annotation, creating the map if needed.
pub fn set_annotation(obj: &mut Value, key: &str, value: &str) {
    let meta = meta_mut(obj);
    let annotations = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    if let Some(a) = annotations.as_object_mut() {
        a.insert(key.into(), json!(value));
    }
}

/// Whether anything outside `metadata` (and `status`, unless `with_status`) differs.
fn spec_differs(old: &Value, new: &Value, with_status: bool) -> bool {
    let strip = |v: &Value| -> Map<String, Value> {
        v.as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| match k.as_str() {
                        "metadata" | "apiVersion" | "kind" => false,
                        "status" => with_status,
                        _ => true,
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
        // A CRD gets its cleanup finalizer when its deletion starts, as the CRD storage adds
        // it (its objects go first).
        if key.resource == crate::controllers::CRDS
            && !deleting
            && !fins
                .iter()
                .any(|f| f == crate::hooks::CRD_CLEANUP_FINALIZER)
        {
            fins.push(crate::hooks::CRD_CLEANUP_FINALIZER.to_string());
        }
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
            // Marking an object for deletion bumps a generation it has (kube's
            // BeforeDelete), so controllers see the change as one to observe.
            if let Some(g) = meta
                .get("generation")
                .and_then(Value::as_i64)
                .filter(|g| *g > 0)
            {
                meta.insert("generation".into(), json!(g + 1));
            }
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
