//! Cluster API's `cluster.x-k8s.io/v1beta2` Cluster (also served as `v1beta1`), as much of it
//! as ClusterResourceSets need: its labels, whether it is paused, and whether its
//! infrastructure is provisioned (until then nobody connects to it). Its kubeconfig lives in
//! the Secret `<name>-kubeconfig`, key `value`.

use serde_json::Value;

/// The API group.
pub const GROUP: &str = "cluster.x-k8s.io";
/// Kind name.
pub const KIND: &str = "Cluster";
/// The annotation that pauses reconciliation of Cluster API objects.
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
/// The label naming the Cluster a Secret or object belongs to.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// The type of the Secrets Cluster API writes for a Cluster (kubeconfig, CA, …).
pub const CLUSTER_SECRET_TYPE: &str = "cluster.x-k8s.io/secret";
/// The key of the kubeconfig in `<name>-kubeconfig`.
pub const KUBECONFIG_KEY: &str = "value";

/// A Cluster API Cluster; `spec` and `status` are kept whole.
pub type Cluster = crate::Object<Value, Value>;

crate::namespaced_resource!(
    Cluster,
    group = "cluster.x-k8s.io",
    version = "v1beta2",
    kind = "Cluster",
    plural = "clusters"
);

/// The name of a Cluster's kubeconfig Secret.
pub fn kubeconfig_secret_name(cluster: &str) -> String {
    format!("{cluster}-kubeconfig")
}

/// Whether the Cluster's infrastructure is provisioned: `status.initialization.
/// infrastructureProvisioned` (v1beta2), or `status.infrastructureReady` as v1beta1 writes it.
pub fn infrastructure_provisioned(cluster: &Cluster) -> bool {
    let Some(status) = &cluster.status else {
        return false;
    };
    status
        .pointer("/initialization/infrastructureProvisioned")
        .and_then(Value::as_bool)
        .or_else(|| status.get("infrastructureReady").and_then(Value::as_bool))
        .unwrap_or(false)
}

/// Whether the Cluster is paused (`spec.paused`).
pub fn paused(cluster: &Cluster) -> bool {
    cluster
        .spec
        .get("paused")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(status: Value) -> Cluster {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c"}, "spec": {"paused": true}, "status": status}))
        .unwrap()
    }

    #[test]
    fn provisioned_in_either_version() {
        assert!(infrastructure_provisioned(&cluster(
            serde_json::json!({"initialization": {"infrastructureProvisioned": true}})
        )));
        assert!(infrastructure_provisioned(&cluster(
            serde_json::json!({"infrastructureReady": true})
        )));
        assert!(!infrastructure_provisioned(&cluster(serde_json::json!({}))));
        assert!(paused(&cluster(serde_json::json!({}))));
    }
}
