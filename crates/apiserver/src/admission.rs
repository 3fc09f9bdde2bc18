//! The admission plugins of kube-apiserver's default set that decide about a new Pod from other
//! objects: `ServiceAccount` (the service account must exist) and `Priority` (the priority
//! class is resolved into `spec.priority` and `spec.preemptionPolicy`).

use crate::error::{ApiError, ApiResult};
use crate::store::{Key, Store};
use serde_json::{Value, json};

const PRIORITY_CLASSES: &str = "scheduling.k8s.io/priorityclasses";

/// The priority classes every cluster has, as kube-apiserver's bootstrap writes them:
/// `(name, value, description)`.
pub const SYSTEM_PRIORITY_CLASSES: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// Admits a Pod being created in `namespace`, resolving its priority.
pub fn pod(store: &Store, namespace: &str, pod: &mut Value) -> ApiResult<()> {
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let forbidden = |why: String| ApiError::forbidden("", "pods", &name, &why);
    // The `default` account is made by a controller right after its namespace; kube's plugin
    // waits for it rather than refusing, so only other names must already exist.
    let account = pod
        .pointer("/spec/serviceAccountName")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
        .unwrap_or("default")
        .to_string();
    if account != "default"
        && store
            .get(&Key::new("/serviceaccounts", namespace, &account))
            .is_none()
    {
        return Err(forbidden(format!(
            "error looking up service account {namespace}/{account}: serviceaccount \"{account}\" not found"
        )));
    }
    let class_name = pod
        .pointer("/spec/priorityClassName")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    let class = match &class_name {
        Some(c) => Some(
            store
                .get(&Key::new(PRIORITY_CLASSES, "", c))
                .ok_or_else(|| forbidden(format!("no PriorityClass with name {c} was found")))?,
        ),
        None => {
            let (classes, _) = store.list(PRIORITY_CLASSES, None, None);
            classes
                .into_iter()
                .map(|(_, c)| c)
                .find(|c| c.get("globalDefault") == Some(&json!(true)))
        }
    };
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let (value, policy) = match &class {
        Some(c) => {
            if class_name.is_none()
                && let Some(n) = c.pointer("/metadata/name")
            {
                spec.insert("priorityClassName".into(), n.clone());
            }
            (
                c.get("value").and_then(Value::as_i64).unwrap_or(0),
                c.get("preemptionPolicy")
                    .and_then(Value::as_str)
                    .unwrap_or("PreemptLowerPriority")
                    .to_string(),
            )
        }
        None => (0, "PreemptLowerPriority".to_string()),
    };
    spec.insert("priority".into(), json!(value));
    spec.insert("preemptionPolicy".into(), json!(policy));
    Ok(())
}
