//! Kind-specific rules of the write path: Namespaces, CustomResourceDefinitions and custom
//! resources.

use crate::error::Cause;
use crate::objects::{meta_mut, meta_str, now};
use crate::server::ServerState;
use serde_json::{Value, json};
use tidegate_schema::ResourceInfo;

/// Finalizer kube-apiserver puts on a CRD when its deletion starts, so its objects are removed
/// before it goes.
pub const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

fn is(r: &ResourceInfo, group: &str, plural: &str) -> bool {
    !r.custom && r.group == group && r.plural == plural
}

/// Defaults set when an object is created.
pub fn prepare_create(r: &ResourceInfo, obj: &mut Value) {
    if r.custom {
        crate::crd_schema::prune_custom(r, obj);
    }
    if is(r, "", "secrets") {
        tidegate_core::secret::fold_string_data(obj);
    }
    if is(r, "", "secrets")
        && obj
            .get("type")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        obj["type"] = json!("Opaque");
    }
    if is(r, "", "namespaces") {
        if obj.pointer("/spec/finalizers").is_none() {
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
        }
        obj["status"] = json!({"phase": "Active"});
    }
    if is(r, "apiextensions.k8s.io", "customresourcedefinitions") {
        crd_status(obj);
    }
}

/// Rules applied when an object is updated.
pub fn prepare_update(r: &ResourceInfo, old: &Value, obj: &mut Value) {
    if r.custom {
        crate::crd_schema::prune_custom(r, obj);
    }
    if is(r, "", "secrets") {
        tidegate_core::secret::fold_string_data(obj);
    }
    if is(r, "", "namespaces") {
        // A namespace keeps its status (phase) unless the status subresource changed it.
        if let Some(s) = old.get("status")
            && obj.get("status").is_none()
        {
            obj["status"] = s.clone();
        }
        if obj.pointer("/spec/finalizers").is_none()
            && let Some(f) = old.pointer("/spec/finalizers")
        {
            match obj.get_mut("spec").and_then(Value::as_object_mut) {
                Some(spec) => {
                    spec.insert("finalizers".into(), f.clone());
                }
                // A spec that is not an object is refused by validation; keep the finalizers.
                None => {
                    if let Some(o) = obj.as_object_mut() {
                        o.insert("spec".into(), serde_json::json!({"finalizers": f}));
                    }
                }
            }
        }
    }
    if is(r, "apiextensions.k8s.io", "customresourcedefinitions") {
        crd_status(obj);
    }
}

/// Whether an object with no finalizers left must still stay (a namespace whose content is
/// still being removed).
pub fn blocks_removal(r: &ResourceInfo, obj: &Value) -> bool {
    is(r, "", "namespaces")
        && obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
}

fn condition(type_: &str, reason: &str, message: &str, old: Option<&Value>) -> Value {
    let since = old
        .and_then(|c| c.as_array())
        .and_then(|a| {
            a.iter()
                .find(|c| c["type"] == type_ && c["status"] == "True")
        })
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| json!(now()));
    json!({"type": type_, "status": "True", "lastTransitionTime": since,
           "reason": reason, "message": message})
}

fn crd_status(obj: &mut Value) {
    let names = obj.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let mut accepted = names.clone();
    if accepted.get("singular").is_none()
        && let Some(k) = names.get("kind").and_then(Value::as_str)
    {
        accepted["singular"] = json!(k.to_lowercase());
    }
    if accepted.get("listKind").is_none()
        && let Some(k) = names.get("kind").and_then(Value::as_str)
    {
        accepted["listKind"] = json!(format!("{k}List"));
    }
    let storage = obj
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| {
            vs.iter()
                .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        })
        .and_then(|v| v.get("name").cloned());
    let old_conditions = obj.pointer("/status/conditions").cloned();
    let mut stored = obj
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(s) = storage
        && !stored.contains(&s)
    {
        stored.push(s);
    }
    obj["status"] = json!({
        "conditions": [
            condition("NamesAccepted", "NoConflicts", "no conflicts found", old_conditions.as_ref()),
            condition("Established", "InitialNamesAccepted", "the initial names have been accepted", old_conditions.as_ref()),
        ],
        "acceptedNames": accepted,
        "storedVersions": stored,
    });
}

/// Kind-specific validation; returns the causes (empty when valid).
pub fn validate(
    state: &ServerState,
    r: &ResourceInfo,
    obj: &Value,
    old: Option<&Value>,
) -> Vec<Cause> {
    if is(r, "apiextensions.k8s.io", "customresourcedefinitions") {
        return validate_crd(state, obj, old);
    }
    let mut out = if r.custom {
        crate::crd_schema::validate_custom(r, obj, old)
    } else {
        crate::validate::validate(&r.group, &r.kind, obj, old)
    };
    if let Some(old) = old {
        out.extend(crate::immutable::validate_update(r, obj, old));
    }
    out
}

fn validate_crd(state: &ServerState, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let name = meta_str(obj, "name").unwrap_or("");
    let group = obj
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    let plural = obj
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Err(e) = tidegate_schema::crd::resources_from_crd(obj) {
        out.push(Cause {
            reason: if e.message == "Required value" {
                "FieldValueRequired".into()
            } else {
                "FieldValueInvalid".into()
            },
            message: e.message,
            field: e.field,
        });
        return out;
    }
    if name != format!("{plural}.{group}") {
        out.push(Cause::invalid(
            "metadata.name",
            &json!(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    if !crate::validation::is_subdomain(group) || !group.contains('.') {
        out.push(Cause::invalid(
            "spec.group",
            &json!(group),
            "should be a domain with at least one dot",
        ));
    }
    if let Some(old) = old {
        for f in ["/spec/group", "/spec/names/plural", "/spec/scope"] {
            if old.pointer(f) != obj.pointer(f) && f == "/spec/scope" {
                out.push(Cause::invalid(
                    "spec.scope",
                    obj.pointer(f).unwrap_or(&Value::Null),
                    "field is immutable",
                ));
            }
        }
    }
    if state.registry.snapshot().plural_taken(group, plural, name) {
        out.push(Cause::invalid(
            "spec.names.plural",
            &json!(plural),
            "is already in use",
        ));
    }
    out
}

/// Drops what Kubernetes never stores: empty metadata maps and lists.
pub fn normalize(mut obj: Value) -> Value {
    let meta = meta_mut(&mut obj);
    for f in [
        "labels",
        "annotations",
        "finalizers",
        "ownerReferences",
        "managedFields",
    ] {
        let empty = match meta.get(f) {
            Some(Value::Null) => true,
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            _ => false,
        };
        if empty {
            meta.remove(f);
        }
    }
    obj
}

/// Work after a committed write: CRDs change what the server serves.
pub fn after_write(state: &ServerState, r: &ResourceInfo, obj: &Value) {
    if is(r, "apiextensions.k8s.io", "customresourcedefinitions")
        && let Some(name) = obj.pointer("/metadata/name").and_then(Value::as_str)
    {
        state.sync_crd(name);
    }
}
