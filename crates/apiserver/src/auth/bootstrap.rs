//! The default RBAC policy written at start when RBAC is on, as kube-apiserver's bootstrap
//! policy writes it (Kubernetes' `bootstrappolicy/testdata`): `cluster-admin` bound to
//! `system:masters`, and the discovery, basic-user and public-info roles every user holds.
//! Objects that exist are left alone (kube reconciles only its autoupdate ones).
//! The aggregated `admin`/`edit`/`view` roles and the controllers' roles are not yet written.

use serde_json::{Value, json};

use crate::server::ServerState;
use crate::store::Key;

const GROUP: &str = "rbac.authorization.k8s.io";

fn meta(name: &str) -> Value {
    json!({"name": name,
           "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
           "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}})
}

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": meta(name), "rules": rules})
}

fn binding(name: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": GROUP, "kind": "Group", "name": g}))
        .collect();
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": meta(name),
           "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": name},
           "subjects": subjects})
}

/// The bootstrap ClusterRoles and ClusterRoleBindings.
pub fn objects() -> Vec<(Key, Value)> {
    let roles = [
        cluster_role(
            "cluster-admin",
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                   {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        ),
        cluster_role(
            "system:discovery",
            json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz",
                    "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"],
                    "verbs": ["get"]}]),
        ),
        cluster_role(
            "system:basic-user",
            json!([{"apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"]},
                   {"apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"], "verbs": ["create"]}]),
        ),
        cluster_role(
            "system:public-info-viewer",
            json!([{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                    "verbs": ["get"]}]),
        ),
    ];
    let bindings = [
        binding("cluster-admin", &["system:masters"]),
        binding("system:discovery", &["system:authenticated"]),
        binding("system:basic-user", &["system:authenticated"]),
        binding(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ];
    let mut out = Vec::new();
    for r in roles {
        let name = r["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        out.push((Key::new(&format!("{GROUP}/clusterroles"), "", &name), r));
    }
    for b in bindings {
        let name = b["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        out.push((
            Key::new(&format!("{GROUP}/clusterrolebindings"), "", &name),
            b,
        ));
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
