//! The built-in resources and types of Kubernetes 1.35, from the committed generated table.

use crate::resource::ResourceInfo;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::LazyLock;

const TABLE: &str = include_str!("../data/kubernetes.json");

#[derive(Deserialize)]
struct Table {
    resources: Vec<ResourceInfo>,
    definitions: Map<String, Value>,
}

static BUILTIN: LazyLock<Table> = LazyLock::new(|| {
    // The table is generated and committed with the source; a parse failure is a build defect
    // caught by this crate's tests, not bad input.
    serde_json::from_str(TABLE).expect("data/kubernetes.json is valid")
});

/// Every built-in resource, in discovery order (groups by kube-apiserver's priority, then
/// preferred version first).
pub fn builtin_resources() -> &'static [ResourceInfo] {
    &BUILTIN.resources
}

/// The OpenAPI definitions of the built-in types, without prose, keyed by definition name
/// (`io.k8s.api.apps.v1.Deployment`).
pub fn builtin_definitions() -> &'static Map<String, Value> {
    &BUILTIN.definitions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_the_familiar_resources() {
        let res = builtin_resources();
        let deploy = res
            .iter()
            .find(|r| r.group == "apps" && r.plural == "deployments")
            .expect("deployments");
        assert_eq!(deploy.kind, "Deployment");
        assert!(deploy.namespaced);
        assert_eq!(deploy.short_names, vec!["deploy"]);
        assert!(deploy.subresource("scale").is_some());
        let ns = res
            .iter()
            .find(|r| r.group.is_empty() && r.plural == "namespaces")
            .expect("namespaces");
        assert!(!ns.namespaced);
        assert!(!ns.has_verb("deletecollection"));
        let def = builtin_definitions()
            .get("io.k8s.api.core.v1.PodSpec")
            .expect("PodSpec");
        assert_eq!(
            def["properties"]["containers"]["x-kubernetes-patch-merge-key"],
            "name"
        );
        assert!(def.get("description").is_none(), "prose is stripped");
        // Only stable versions are served by default.
        assert!(
            res.iter()
                .all(|r| !r.version.contains("beta") && !r.version.contains("alpha"))
        );
    }
}
