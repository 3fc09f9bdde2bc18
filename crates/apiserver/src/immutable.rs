//! Fields kube-apiserver refuses to change after creation, with its messages: workload
//! selectors, Job templates, StatefulSet spec outside the updatable fields, immutable
//! ConfigMaps and Secrets, PersistentVolumeClaim specs and Pod specs.

use crate::error::Cause;
use serde_json::{Map, Value};
use tidegate_schema::ResourceInfo;

const STATEFULSET_UPDATABLE: [&str; 6] = [
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// The causes for changes of immutable fields between `old` and `obj` (an update).
pub fn validate_update(r: &ResourceInfo, obj: &Value, old: &Value) -> Vec<Cause> {
    if r.custom {
        return Vec::new();
    }
    let mut out = Vec::new();
    match (r.group.as_str(), r.plural.as_str()) {
        ("apps", "deployments" | "replicasets" | "daemonsets") => {
            unchanged(&mut out, obj, old, "/spec/selector", "spec.selector");
        }
        // No selector rule of its own: the selector is one of the fields the spec rule covers.
        ("apps", "statefulsets")
            if without(obj, &STATEFULSET_UPDATABLE) != without(old, &STATEFULSET_UPDATABLE) =>
        {
            out.push(Cause::forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', \
                     'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and \
                     'minReadySeconds' are forbidden",
            ));
        }
        ("batch", "jobs") => {
            unchanged(&mut out, obj, old, "/spec/selector", "spec.selector");
            // A Job suspended before it ever started may still have its scheduling
            // directives changed (`AllowMutableSchedulingDirectives`), as queueing controllers do.
            let mutable = old.pointer("/spec/suspend") == Some(&Value::Bool(true))
                && old.pointer("/status/startTime").is_none_or(Value::is_null);
            if mutable {
                let mut was = old.clone();
                for pointer in [
                    "/spec/template/spec/nodeSelector",
                    "/spec/template/spec/tolerations",
                    "/spec/template/metadata/annotations",
                    "/spec/template/metadata/labels",
                    "/spec/template/spec/schedulingGates",
                    "/spec/template/spec/affinity",
                ] {
                    set_pointer(&mut was, pointer, obj.pointer(pointer));
                }
                unchanged(&mut out, obj, &was, "/spec/template", "spec.template");
            } else {
                unchanged(&mut out, obj, old, "/spec/template", "spec.template");
            }
            unchanged(
                &mut out,
                obj,
                old,
                "/spec/completionMode",
                "spec.completionMode",
            );
        }
        ("", "configmaps" | "secrets") if old.get("immutable") == Some(&Value::Bool(true)) => {
            let why = "field is immutable when `immutable` is set";
            if obj.get("immutable") != Some(&Value::Bool(true)) {
                out.push(Cause::forbidden("immutable", why));
            }
            for field in ["data", "binaryData"] {
                if obj.get(field) != old.get(field) {
                    out.push(Cause::forbidden(field, why));
                }
            }
        }
        ("", "persistentvolumeclaims") => {
            // A claim may be bound once (`volumeName` set while empty) and given a class it
            // had none of (`storageClassName` set while unset).
            let old_spec = old.get("spec");
            let unset = |f: &str| {
                old_spec
                    .and_then(|s| s.get(f))
                    .is_none_or(|v| v.is_null() || v.as_str() == Some(""))
            };
            let bind_once = unset("volumeName");
            let class_once = old_spec
                .and_then(|s| s.get("storageClassName"))
                .is_none_or(Value::is_null);
            let strip = |o: &Value| {
                let mut spec = o.get("spec").cloned().unwrap_or(Value::Null);
                if let Some(m) = spec.as_object_mut() {
                    m.remove("resources");
                    m.remove("volumeAttributesClassName");
                    if bind_once {
                        m.remove("volumeName");
                    }
                    if class_once {
                        m.remove("storageClassName");
                    }
                }
                spec
            };
            if strip(obj) != strip(old) {
                out.push(Cause::forbidden(
                    "spec",
                    "spec is immutable after creation except resources.requests and \
                     volumeAttributesClassName for bound claims",
                ));
            }
        }
        ("", "pods") => pod_update(&mut out, obj, old),
        // The primary cluster IP stays, unless the Service turns into or out of ExternalName.
        ("", "services") => {
            let external =
                |o: &Value| o.pointer("/spec/type") == Some(&Value::from("ExternalName"));
            let first = |o: &Value| {
                o.pointer("/spec/clusterIPs/0")
                    .and_then(Value::as_str)
                    .filter(|ip| !ip.is_empty())
                    .map(str::to_string)
            };
            if !external(obj)
                && !external(old)
                && let (Some(now), Some(was)) = (first(obj), first(old))
                && now != was
            {
                out.push(Cause::invalid(
                    "spec.clusterIPs[0]",
                    obj.pointer("/spec/clusterIPs").unwrap_or(&Value::Null),
                    "may not change once set",
                ));
            }
        }
        _ => {}
    }
    out
}

/// `ValidatePodUpdate`'s rules on the spec: containers neither added nor removed, scheduling
/// gates only removed, and while the pod is gated its node selector may gain entries and its
/// node affinity change; otherwise only images, `activeDeadlineSeconds`, tolerations and
/// `terminationGracePeriodSeconds` change.
fn pod_update(out: &mut Vec<Cause>, obj: &Value, old: &Value) {
    for list in ["containers", "initContainers"] {
        let len = |o: &Value| {
            o.pointer(&format!("/spec/{list}"))
                .and_then(Value::as_array)
                .map_or(0, Vec::len)
        };
        if len(obj) != len(old) {
            out.push(Cause::forbidden(
                &format!("spec.{list}"),
                "pod updates may not add or remove containers",
            ));
            return;
        }
    }
    let gate_names = |o: &Value| -> Vec<String> {
        o.pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|g| g.get("name").and_then(Value::as_str).map(str::to_string))
            .collect()
    };
    let (gates, old_gates) = (gate_names(obj), gate_names(old));
    for (i, g) in gates.iter().enumerate() {
        if !old_gates.contains(g) {
            out.push(Cause::forbidden(
                &format!("spec.schedulingGates[{i}].name"),
                &format!("only deletion is allowed, but found new scheduling gate '{g}'"),
            ));
        }
    }
    let gated = !old_gates.is_empty();
    let selector_grows = {
        let now = obj.pointer("/spec/nodeSelector").and_then(Value::as_object);
        let was = old.pointer("/spec/nodeSelector").and_then(Value::as_object);
        was.is_none_or(|w| w.iter().all(|(k, v)| now.and_then(|n| n.get(k)) == Some(v)))
    };
    let mut extra = vec!["schedulingGates"];
    if gated && selector_grows {
        extra.extend(["nodeSelector", "affinity"]);
    }
    if pod_spec_core(obj, &extra) != pod_spec_core(old, &extra) {
        out.push(Cause::forbidden(
            "spec",
            "pod updates may not change fields other than `spec.containers[*].image`,\
                 `spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,\
                 `spec.tolerations` (only additions to existing tolerations),\
                 `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was \
                 previously negative)",
        ));
    }
}

fn unchanged(out: &mut Vec<Cause>, obj: &Value, old: &Value, pointer: &str, field: &str) {
    let now = obj.pointer(pointer);
    if now != old.pointer(pointer) {
        out.push(Cause::invalid(
            field,
            now.unwrap_or(&Value::Null),
            "field is immutable",
        ));
    }
}

/// Sets (or, for `None`, removes) the value at a JSON pointer whose parents exist.
fn set_pointer(obj: &mut Value, pointer: &str, value: Option<&Value>) {
    let Some((parent, key)) = pointer.rsplit_once('/') else {
        return;
    };
    let Some(p) = obj.pointer_mut(parent).and_then(Value::as_object_mut) else {
        return;
    };
    match value {
        Some(v) => {
            p.insert(key.to_string(), v.clone());
        }
        None => {
            p.remove(key);
        }
    }
}

/// `spec` without the named fields.
fn without(obj: &Value, fields: &[&str]) -> Map<String, Value> {
    let mut spec = obj
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for f in fields {
        spec.remove(*f);
    }
    spec
}

/// A Pod's spec with the fields an update may change blanked out.
fn pod_spec_core(obj: &Value, extra: &[&str]) -> Map<String, Value> {
    // Ephemeral containers change through their own subresource, which checks them.
    let mut fields = vec![
        "activeDeadlineSeconds",
        "tolerations",
        "terminationGracePeriodSeconds",
        "ephemeralContainers",
    ];
    fields.extend_from_slice(extra);
    let mut spec = without(obj, &fields);
    for list in ["containers", "initContainers"] {
        if let Some(items) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for c in items.iter_mut().filter_map(Value::as_object_mut) {
                c.remove("image");
            }
        }
    }
    spec
}

/// `ValidatePodEphemeralContainersUpdate`: ephemeral containers are only ever added — each
/// named, with an image, named unlike every other container — never changed or removed.
pub fn ephemeral_containers_update(obj: &Value, old: &Value) -> Vec<Cause> {
    let list = |o: &Value| -> Vec<Value> {
        o.pointer("/spec/ephemeralContainers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (now, was) = (list(obj), list(old));
    let name_of = |c: &Value| {
        c.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut out = Vec::new();
    let mut names: Vec<String> = ["containers", "initContainers"]
        .iter()
        .flat_map(|l| {
            obj.pointer(&format!("/spec/{l}"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(name_of)
                .collect::<Vec<_>>()
        })
        .collect();
    for (i, c) in now.iter().enumerate() {
        let at = format!("spec.ephemeralContainers[{i}]");
        let name = name_of(c);
        if name.is_empty() {
            out.push(Cause::required(&format!("{at}.name")));
        } else if names.contains(&name) {
            out.push(Cause {
                reason: "FieldValueDuplicate".into(),
                message: format!("Duplicate value: \"{name}\""),
                field: format!("{at}.name"),
            });
        } else {
            names.push(name);
        }
        if c.get("image")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            out.push(Cause::required(&format!("{at}.image")));
        }
    }
    for c in &was {
        let name = name_of(c);
        match now.iter().find(|n| name_of(n) == name) {
            None => out.push(Cause::forbidden(
                "spec.ephemeralContainers",
                &format!("existing ephemeral containers \"{name}\" may not be removed\n"),
            )),
            Some(n) if n != c => out.push(Cause::forbidden(
                "spec.ephemeralContainers",
                &format!("existing ephemeral containers \"{name}\" may not be changed\n"),
            )),
            Some(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(group: &str, plural: &str) -> ResourceInfo {
        tidegate_schema::builtin_resources()
            .iter()
            .find(|r| r.group == group && r.plural == plural)
            .cloned()
            .expect("built-in resource")
    }

    #[test]
    fn selectors_and_templates_are_immutable() {
        let old = json!({"spec": {"selector": {"matchLabels": {"app": "a"}}, "replicas": 1}});
        let new = json!({"spec": {"selector": {"matchLabels": {"app": "b"}}, "replicas": 1}});
        let causes = validate_update(&res("apps", "deployments"), &new, &old);
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "spec.selector");
        assert!(causes[0].message.ends_with("field is immutable"));
        let scaled = json!({"spec": {"selector": {"matchLabels": {"app": "a"}}, "replicas": 3}});
        assert!(validate_update(&res("apps", "deployments"), &scaled, &old).is_empty());
        let job_old = json!({"spec": {"template": {"spec": {"restartPolicy": "Never"}}}});
        let job_new = json!({"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}});
        assert_eq!(
            validate_update(&res("batch", "jobs"), &job_new, &job_old)[0].field,
            "spec.template"
        );
    }

    #[test]
    fn immutable_configmaps_and_statefulsets() {
        let old = json!({"immutable": true, "data": {"a": "1"}});
        let new = json!({"immutable": true, "data": {"a": "2"}});
        let causes = validate_update(&res("", "configmaps"), &new, &old);
        assert_eq!(causes[0].field, "data");
        assert!(validate_update(&res("", "configmaps"), &old, &old).is_empty());
        let sts_old = json!({"spec": {"serviceName": "a", "replicas": 1}});
        let sts_new = json!({"spec": {"serviceName": "b", "replicas": 1}});
        assert_eq!(
            validate_update(&res("apps", "statefulsets"), &sts_new, &sts_old)[0].field,
            "spec"
        );
    }
}
