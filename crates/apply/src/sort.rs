//! The order Flux applies objects in, and the stages of a staged apply.

use std::cmp::Ordering;
use tidegate_core::ObjectRef;

/// Kinds applied first, in this order (Flux's `ReconcileOrder.First`).
const FIRST: [&str; 23] = [
    "CustomResourceDefinition",
    "Namespace",
    "ClusterRole",
    "ClusterClass",
    "RuntimeClass",
    "PriorityClass",
    "StorageClass",
    "VolumeSnapshotClass",
    "IngressClass",
    "GatewayClass",
    "ClusterRoleBinding",
    "ResourceQuota",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ConfigMap",
    "Secret",
    "Service",
    "LimitRange",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];

/// Kinds applied last.
const LAST: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// The rank of a kind: negative for the kinds applied first, zero for all others, positive
/// for webhook configurations. Only the kind's name counts, not its group.
pub fn rank(kind: &str) -> i32 {
    if let Some(i) = FIRST.iter().position(|k| *k == kind) {
        return i as i32 - FIRST.len() as i32;
    }
    if let Some(i) = LAST.iter().position(|k| *k == kind) {
        return i as i32 + 1;
    }
    0
}

/// Flux's apply order: rank, then group, kind, namespace and name.
pub fn apply_order(a: &ObjectRef, b: &ObjectRef) -> Ordering {
    if a.group != b.group || a.kind != b.kind {
        return rank(&a.kind)
            .cmp(&rank(&b.kind))
            .then_with(|| a.group.cmp(&b.group))
            .then_with(|| a.kind.cmp(&b.kind));
    }
    a.namespace
        .cmp(&b.namespace)
        .then_with(|| a.name.cmp(&b.name))
}

/// The stages of a staged apply, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// CustomResourceDefinitions, Namespaces and ClusterRoles; waited for before what follows.
    Definitions,
    /// Kinds whose name ends in `Class`; waited for before what follows.
    Classes,
    /// Everything else.
    Resources,
}

/// The stage an object with this `apiVersion` and `kind` belongs to.
pub fn stage_of(api_version: &str, kind: &str) -> Stage {
    let lower = kind.to_ascii_lowercase();
    let definition = (lower == "customresourcedefinition"
        && api_version.starts_with("apiextensions.k8s.io/"))
        || (lower == "namespace" && api_version == "v1")
        || (lower == "clusterrole" && api_version.starts_with("rbac.authorization.k8s.io/"));
    if definition {
        Stage::Definitions
    } else if kind.ends_with("Class") {
        Stage::Classes
    } else {
        Stage::Resources
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_like_flux() {
        let mut refs = vec![
            ObjectRef::new(
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
                "",
                "v",
            ),
            ObjectRef::new("apps", "DaemonSet", "a", "d"),
            ObjectRef::new("apps", "Deployment", "b", "web"),
            ObjectRef::new("apps", "Deployment", "a", "web"),
            ObjectRef::new("", "Namespace", "", "a"),
            ObjectRef::new("apiextensions.k8s.io", "CustomResourceDefinition", "", "x"),
            ObjectRef::new("", "ConfigMap", "a", "c"),
            ObjectRef::new("batch", "Job", "a", "j"),
            ObjectRef::new(
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration",
                "",
                "m",
            ),
        ];
        refs.sort_by(apply_order);
        let kinds: Vec<String> = refs.iter().map(|r| format!("{}", r)).collect();
        assert_eq!(
            kinds,
            [
                "CustomResourceDefinition/x",
                "Namespace/a",
                "ConfigMap/a/c",
                "Deployment/a/web",
                "Deployment/b/web",
                "DaemonSet/a/d",
                "Job/a/j",
                "MutatingWebhookConfiguration/m",
                "ValidatingWebhookConfiguration/v",
            ]
        );
    }

    #[test]
    fn stages() {
        assert_eq!(
            stage_of("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
            Stage::Definitions
        );
        assert_eq!(stage_of("v1", "Namespace"), Stage::Definitions);
        assert_eq!(
            stage_of("rbac.authorization.k8s.io/v1", "ClusterRole"),
            Stage::Definitions
        );
        assert_eq!(
            stage_of("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
            Stage::Resources
        );
        assert_eq!(
            stage_of("storage.k8s.io/v1", "StorageClass"),
            Stage::Classes
        );
        assert_eq!(stage_of("apps/v1", "Deployment"), Stage::Resources);
    }
}
