//! What Flux does to objects before applying them: Secret `stringData` folded into `data`,
//! port protocols defaulted to `TCP`, `status` and `creationTimestamp` dropped (CRDs keep
//! their status), and owner labels set.

use serde_json::{Value, json};

const POD_TEMPLATE_KINDS: [&str; 6] = [
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
];

/// Normalises `obj` in place, as Flux does before a server-side apply.
pub fn normalize(obj: &mut Value) {
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("creationTimestamp");
    }
    if kind != "CustomResourceDefinition"
        && let Some(m) = obj.as_object_mut()
    {
        m.remove("status");
    }
    match (api_version.as_str(), kind.as_str()) {
        ("v1", "Secret") => tidegate_core::secret::fold_string_data(obj),
        ("v1", "Service") => default_protocols(obj.pointer_mut("/spec/ports")),
        ("v1", "Pod") => containers(obj.pointer_mut("/spec")),
        (av, k)
            if POD_TEMPLATE_KINDS.contains(&k)
                && (av.starts_with("apps/") || av.starts_with("batch/")) =>
        {
            let pointer = if k == "CronJob" {
                "/spec/jobTemplate/spec/template/spec"
            } else {
                "/spec/template/spec"
            };
            containers(obj.pointer_mut(pointer));
        }
        _ => {}
    }
}

/// Sets the owner labels (`<group>/name`, `<group>/namespace`) on `obj`.
pub fn set_owner_labels(obj: &mut Value, group: &str, name: &str, namespace: &str) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let labels = meta.entry("labels").or_insert_with(|| json!({}));
    if !labels.is_object() {
        *labels = json!({});
    }
    labels[format!("{group}/name")] = json!(name);
    labels[format!("{group}/namespace")] = json!(namespace);
}

fn containers(spec: Option<&mut Value>) {
    if let Some(list) = spec
        .and_then(|s| s.get_mut("containers"))
        .and_then(Value::as_array_mut)
    {
        for c in list {
            default_protocols(c.get_mut("ports"));
        }
    }
}

fn default_protocols(ports: Option<&mut Value>) {
    if let Some(list) = ports.and_then(Value::as_array_mut) {
        for p in list.iter_mut().filter_map(Value::as_object_mut) {
            let empty = p
                .get("protocol")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if empty {
                p.insert("protocol".into(), json!("TCP"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_ports_and_status() {
        let mut s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"a": "eA=="}, "stringData": {"b": "hello"}});
        normalize(&mut s);
        assert_eq!(s["data"], json!({"a": "eA==", "b": "aGVsbG8="}));
        assert!(s.get("stringData").is_none());
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "creationTimestamp": null},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}}},
            "status": {"replicas": 1}});
        normalize(&mut d);
        assert_eq!(
            d.pointer("/spec/template/spec/containers/0/ports/0/protocol"),
            Some(&json!("TCP"))
        );
        assert!(d.get("status").is_none() && d.pointer("/metadata/creationTimestamp").is_none());
        let mut o = json!({"metadata": {"name": "x"}});
        set_owner_labels(&mut o, "kustomize.toolkit.fluxcd.io", "app", "flux-system");
        assert_eq!(
            o["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"],
            "app"
        );
    }
}
