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
        ("apps", "statefulsets") => {
            unchanged(&mut out, obj, old, "/spec/selector", "spec.selector");
            if out.is_empty()
                && without(obj, &STATEFULSET_UPDATABLE) != without(old, &STATEFULSET_UPDATABLE)
            {
                out.push(Cause::forbidden(
                    "spec",
                    "updates to statefulset spec for fields other than 'replicas', 'ordinals', \
                     'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and \
                     'minReadySeconds' are forbidden",
                ));
            }
        }
        ("batch", "jobs") => {
            unchanged(&mut out, obj, old, "/spec/selector", "spec.selector");
            unchanged(&mut out, obj, old, "/spec/template", "spec.template");
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
            let strip = |o: &Value| {
                let mut spec = o.get("spec").cloned().unwrap_or(Value::Null);
                if let Some(m) = spec.as_object_mut() {
                    m.remove("resources");
                    m.remove("volumeAttributesClassName");
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
        ("", "pods") if pod_spec_core(obj) != pod_spec_core(old) => {
            out.push(Cause::forbidden(
                "spec",
                "pod updates may not change fields other than `spec.containers[*].image`,\
                     `spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,\
                     `spec.tolerations` (only additions to existing tolerations),\
                     `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was \
                     previously negative)",
            ));
        }
        _ => {}
    }
    out
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
fn pod_spec_core(obj: &Value) -> Map<String, Value> {
    let mut spec = without(
        obj,
        &[
            "activeDeadlineSeconds",
            "tolerations",
            "terminationGracePeriodSeconds",
        ],
    );
    for list in ["containers", "initContainers"] {
        if let Some(items) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for c in items.iter_mut().filter_map(Value::as_object_mut) {
                c.remove("image");
            }
        }
    }
    spec
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
