//! Cluster API's `addons.cluster.x-k8s.io/v1beta2` ClusterResourceSet (also served as
//! `v1beta1`) and ClusterResourceSetBinding: ConfigMaps and Secrets of the management cluster
//! applied to every workload Cluster a label selector picks.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, Time};
use serde::{Deserialize, Serialize};

/// The API group.
pub const GROUP: &str = "addons.cluster.x-k8s.io";
/// The stored version's `apiVersion`.
pub const API_VERSION: &str = "addons.cluster.x-k8s.io/v1beta2";
/// Kind name.
pub const KIND: &str = "ClusterResourceSet";
/// The binding's kind name.
pub const BINDING_KIND: &str = "ClusterResourceSetBinding";
/// The finalizer the controller keeps on every ClusterResourceSet.
pub const FINALIZER: &str = "addons.cluster.x-k8s.io";
/// The only Secret type a ClusterResourceSet reads.
pub const SECRET_TYPE: &str = "addons.cluster.x-k8s.io/resource-set";

/// `ApplyOnce`: each resource is created once per cluster, never updated.
pub const APPLY_ONCE: &str = "ApplyOnce";
/// `Reconcile`: a resource whose data hash changed is applied again.
pub const RECONCILE: &str = "Reconcile";
/// `ContinuousApply` (a Tidegate extension): the objects are kept equal to their source by
/// server-side apply, drift is corrected and removed objects are pruned.
pub const CONTINUOUS_APPLY: &str = "ContinuousApply";

/// Condition `ResourcesApplied`.
pub const RESOURCES_APPLIED: &str = "ResourcesApplied";
/// Condition `Paused`.
pub const PAUSED: &str = "Paused";
/// Reason of `ResourcesApplied=True`.
pub const APPLIED_REASON: &str = "Applied";
/// Reason when applying failed.
pub const NOT_APPLIED_REASON: &str = "NotApplied";
/// Reason when a Secret has the wrong type.
pub const WRONG_SECRET_TYPE_REASON: &str = "WrongSecretType";
/// Reason for everything else that went wrong.
pub const INTERNAL_ERROR_REASON: &str = "InternalError";
/// Message of `NotApplied`.
pub const NOT_APPLIED_MESSAGE: &str = "Failed to apply ClusterResourceSet resources to Cluster";
/// Message of `InternalError`.
pub const INTERNAL_ERROR_MESSAGE: &str = "Please check controller logs for errors";

/// The v1beta1 condition reasons (kept in `status.deprecated.v1beta1.conditions`).
pub mod v1beta1_reasons {
    /// Listing the Clusters failed.
    pub const CLUSTER_MATCH_FAILED: &str = "ClusterMatchFailed";
    /// A Secret has the wrong type.
    pub const WRONG_SECRET_TYPE: &str = "WrongSecretType";
    /// A ConfigMap or Secret could not be read.
    pub const RETRIEVING_RESOURCE_FAILED: &str = "RetrievingResourceFailed";
    /// The workload cluster could not be reached.
    pub const REMOTE_CLUSTER_CLIENT_FAILED: &str = "RemoteClusterClientFailed";
    /// Applying to the workload cluster failed.
    pub const APPLY_FAILED: &str = "ApplyFailed";
}

/// A set of ConfigMaps and Secrets applied to the Clusters its selector picks.
pub type ClusterResourceSet = crate::Object<ClusterResourceSetSpec, ClusterResourceSetStatus>;

crate::namespaced_resource!(
    ClusterResourceSet,
    group = "addons.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "ClusterResourceSet",
    plural = "clusterresourcesets"
);

/// `spec` of a ClusterResourceSet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetSpec {
    /// Which Clusters (in the same namespace) receive the resources; never empty.
    #[serde(default)]
    pub cluster_selector: LabelSelector,
    /// The ConfigMaps and Secrets whose values hold the objects, in apply order.
    #[serde(default)]
    pub resources: Vec<ResourceRef>,
    /// `ApplyOnce` (default), `Reconcile`, or Tidegate's `ContinuousApply`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// `ContinuousApply` only: how often everything is applied again even without a change
    /// (Go duration; default: only on changes and drift).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
}

impl ClusterResourceSetSpec {
    /// The strategy, `ApplyOnce` when unset (as Cluster API's defaulting webhook sets it).
    pub fn strategy(&self) -> &str {
        self.strategy
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or(APPLY_ONCE)
    }
}

/// A ConfigMap or Secret in the ClusterResourceSet's namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    /// Its name.
    pub name: String,
    /// `ConfigMap` or `Secret`.
    pub kind: String,
}

/// `status` of a ClusterResourceSet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetStatus {
    /// `ResourcesApplied` and `Paused`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation the status was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The last `reconcile.fluxcd.io/requestedAt` handled (a Tidegate addition, so that
    /// `tidegate reconcile clusterresourceset` knows when its request was handled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
    /// The v1beta1 conditions, as Cluster API still writes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<Deprecated>,
}

/// `status.deprecated`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Deprecated {
    /// `status.deprecated.v1beta1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<DeprecatedV1Beta1>,
}

/// `status.deprecated.v1beta1`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeprecatedV1Beta1 {
    /// Cluster API's v1beta1 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<V1Beta1Condition>,
}

/// A Cluster API v1beta1 condition (with a severity, no observedGeneration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct V1Beta1Condition {
    /// The condition type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// `Error`, `Warning` or `Info` (only when False).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// When the status last changed.
    pub last_transition_time: Time,
    /// Why (CamelCase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What was applied to one Cluster, by every ClusterResourceSet that selects it.
pub type ClusterResourceSetBinding =
    crate::Object<ClusterResourceSetBindingSpec, serde_json::Value>;

crate::namespaced_resource!(
    ClusterResourceSetBinding,
    group = "addons.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "ClusterResourceSetBinding",
    plural = "clusterresourcesetbindings"
);

/// `spec` of a ClusterResourceSetBinding.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetBindingSpec {
    /// One entry per ClusterResourceSet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bindings: Vec<ResourceSetBinding>,
    /// The Cluster (same namespace).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
}

/// What one ClusterResourceSet applied to the Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSetBinding {
    /// The ClusterResourceSet.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster_resource_set_name: String,
    /// One entry per resource.
    #[serde(default)]
    pub resources: Vec<ResourceBinding>,
    /// `ContinuousApply` only (a Tidegate addition): the objects applied to the Cluster, as a
    /// Kustomization's inventory records them, so that removed ones are pruned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inventory: Option<crate::kustomization::ResourceInventory>,
}

/// One resource's last apply to the Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBinding {
    /// The ConfigMap or Secret.
    #[serde(flatten)]
    pub resource: ResourceRef,
    /// `sha256:<hex>` of its data when it was applied.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hash: String,
    /// When it was last applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_time: Option<Time>,
    /// Whether the last apply succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<bool>,
}

impl ResourceSetBinding {
    /// The entry for `resource`.
    pub fn get(&self, resource: &ResourceRef) -> Option<&ResourceBinding> {
        self.resources.iter().find(|r| &r.resource == resource)
    }

    /// Whether `resource` was applied successfully.
    pub fn is_applied(&self, resource: &ResourceRef) -> bool {
        self.get(resource).and_then(|r| r.applied).unwrap_or(false)
    }

    /// Replaces the entry of the same resource, or appends it.
    pub fn set(&mut self, binding: ResourceBinding) {
        match self
            .resources
            .iter_mut()
            .find(|r| r.resource == binding.resource)
        {
            Some(r) => *r = binding,
            None => self.resources.push(binding),
        }
    }
}

impl ClusterResourceSetBindingSpec {
    /// The entry of `crs`, appended (with no resources) when missing.
    pub fn get_or_create(&mut self, crs: &str) -> &mut ResourceSetBinding {
        let i = match self
            .bindings
            .iter()
            .position(|b| b.cluster_resource_set_name == crs)
        {
            Some(i) => i,
            None => {
                self.bindings.push(ResourceSetBinding {
                    cluster_resource_set_name: crs.to_string(),
                    resources: Vec::new(),
                    inventory: None,
                });
                self.bindings.len() - 1
            }
        };
        &mut self.bindings[i]
    }

    /// Removes the entry of `crs`.
    pub fn remove(&mut self, crs: &str) {
        if let Some(i) = self
            .bindings
            .iter()
            .position(|b| b.cluster_resource_set_name == crs)
        {
            self.bindings.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &str, kind: &str) -> ResourceRef {
        ResourceRef {
            name: name.into(),
            kind: kind.into(),
        }
    }

    // Cluster API's clusterresourcesetbinding_types_test.go, as data.
    #[test]
    fn is_applied() {
        let b = ResourceSetBinding {
            cluster_resource_set_name: "test-clusterResourceSet".into(),
            resources: vec![
                ResourceBinding {
                    resource: r("notApplied", "Secret"),
                    applied: Some(false),
                    ..Default::default()
                },
                ResourceBinding {
                    resource: r("applied", "Secret"),
                    applied: Some(true),
                    ..Default::default()
                },
            ],
            inventory: None,
        };
        assert!(!b.is_applied(&r("notApplied", "Secret")));
        assert!(b.is_applied(&r("applied", "Secret")));
        assert!(
            !b.is_applied(&r("applied", "ConfigMap")),
            "kind is part of the key"
        );
        assert!(!b.is_applied(&r("missing", "Secret")));
    }

    #[test]
    fn set_replaces_or_appends() {
        let mut b = ResourceSetBinding::default();
        b.set(ResourceBinding {
            resource: r("a", "ConfigMap"),
            hash: "xyz".into(),
            applied: Some(false),
            ..Default::default()
        });
        b.set(ResourceBinding {
            resource: r("a", "ConfigMap"),
            hash: "abc".into(),
            applied: Some(true),
            ..Default::default()
        });
        b.set(ResourceBinding {
            resource: r("a", "Secret"),
            applied: Some(true),
            ..Default::default()
        });
        assert_eq!(b.resources.len(), 2);
        assert_eq!(b.resources[0].hash, "abc");
        assert_eq!(b.resources[0].applied, Some(true));
    }

    #[test]
    fn remove_binding() {
        let mut s = ClusterResourceSetBindingSpec::default();
        s.get_or_create("a");
        s.get_or_create("b");
        s.get_or_create("a");
        assert_eq!(s.bindings.len(), 2);
        s.remove("a");
        assert_eq!(s.bindings.len(), 1);
        assert_eq!(s.bindings[0].cluster_resource_set_name, "b");
        s.remove("missing");
        assert_eq!(s.bindings.len(), 1);
    }

    #[test]
    fn binding_json_shape() {
        let b = ResourceBinding {
            resource: r("cm", "ConfigMap"),
            hash: "sha256:00".into(),
            applied: Some(true),
            last_applied_time: None,
        };
        assert_eq!(
            serde_json::to_value(&b).unwrap(),
            serde_json::json!({"name": "cm", "kind": "ConfigMap", "hash": "sha256:00", "applied": true})
        );
    }
}
