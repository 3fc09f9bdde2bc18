//! The default RBAC policy written at start when RBAC is on, as kube-apiserver's bootstrap
//! policy writes it: Kubernetes' own test data for that policy (`bootstrap-policy/`, see its
//! README) — `cluster-admin` bound to `system:masters`, the aggregated `admin`, `edit` and
//! `view` with their `system:aggregate-to-*` parts, discovery, basic-user, public-info,
//! monitoring and the system components' roles and bindings. Objects that exist are left
//! alone (kube reconciles only its autoupdate ones).

use serde_json::Value;

use crate::server::ServerState;
use crate::store::Key;

const CLUSTER_ROLES: &str = include_str!("bootstrap-policy/cluster-roles.yaml");
const CLUSTER_ROLE_BINDINGS: &str = include_str!("bootstrap-policy/cluster-role-bindings.yaml");

/// The bootstrap ClusterRoles and ClusterRoleBindings with their store keys.
pub fn objects() -> Vec<(Key, Value)> {
    let mut out = Vec::new();
    for (text, resource) in [
        (CLUSTER_ROLES, "clusterroles"),
        (CLUSTER_ROLE_BINDINGS, "clusterrolebindings"),
    ] {
        let list: Value = match yaml_serde::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!(error = %e, "the bootstrap RBAC policy does not parse");
                continue;
            }
        };
        for item in list
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = item.pointer("/metadata/name").and_then(Value::as_str) else {
                continue;
            };
            let key = Key::new(&format!("rbac.authorization.k8s.io/{resource}"), "", name);
            out.push((key, item.clone()));
        }
    }
    out
}

/// Writes the bootstrap policy objects that are missing.
pub fn ensure(state: &ServerState) {
    for (key, obj) in objects() {
        if let Err(e) = crate::objects::create_if_missing(&state.store, &key, obj) {
            tracing::warn!(error = %e, "bootstrap RBAC policy");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_bootstrap_policy_is_embedded() {
        let objects = objects();
        let names = |r: &str| -> Vec<String> {
            objects
                .iter()
                .filter(|(k, _)| k.resource.ends_with(r))
                .map(|(k, _)| k.name.clone())
                .collect()
        };
        assert_eq!(names("/clusterroles").len(), 31);
        assert_eq!(names("/clusterrolebindings").len(), 12);
        for role in [
            "cluster-admin",
            "admin",
            "edit",
            "view",
            "system:aggregate-to-edit",
        ] {
            assert!(names("/clusterroles").contains(&role.to_string()), "{role}");
        }
        // Every binding names a role that is there.
        for (k, b) in objects
            .iter()
            .filter(|(k, _)| k.resource.ends_with("/clusterrolebindings"))
        {
            let role = b.pointer("/roleRef/name").and_then(Value::as_str).unwrap();
            assert!(
                names("/clusterroles").contains(&role.to_string()),
                "{}",
                k.name
            );
        }
    }
}
