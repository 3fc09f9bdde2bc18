//! `kustomize.toolkit.fluxcd.io/v1` Kustomization.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use crate::meta::LocalObjectReference;

/// API group of the Kustomization kind.
pub const GROUP: &str = "kustomize.toolkit.fluxcd.io";

/// A path of a source artifact, built and applied to a cluster.
pub type Kustomization = crate::Object<KustomizationSpec, KustomizationStatus>;

crate::namespaced_resource!(
    Kustomization,
    group = "kustomize.toolkit.fluxcd.io",
    version = "v1",
    kind = "Kustomization",
    plural = "kustomizations"
);

/// `spec` of a Kustomization.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KustomizationSpec {
    /// The source whose artifact holds the manifests.
    pub source_ref: CrossNamespaceSourceReference,
    /// Path in the artifact (default: its root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// How often to reconcile (Go duration).
    pub interval: String,
    /// Retry interval after a failure (default: `interval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_interval: Option<String>,
    /// Timeout of apply and health checks (default: interval − 30s, at least 30s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Garbage-collect objects removed from the source.
    pub prune: bool,
    /// What happens to applied objects when the Kustomization is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_policy: Option<String>,
    /// Wait for every applied object to become ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Objects whose readiness is checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health_checks: Vec<NamespacedObjectKindReference>,
    /// CEL health checks per kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health_check_exprs: Vec<CustomHealthCheck>,
    /// Kustomizations that must be ready first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<DependencyReference>,
    /// Service account to impersonate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Namespace set on every namespaced object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_namespace: Option<String>,
    /// Prefix of every object name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_prefix: Option<String>,
    /// Suffix of every object name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_suffix: Option<String>,
    /// Labels and annotations set on every object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_metadata: Option<CommonMetadata>,
    /// Patches applied after the build.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<Patch>,
    /// Image overrides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// Kustomize components to include.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<String>,
    /// Skip components that do not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_missing_components: Option<bool>,
    /// Variable substitution after the build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_build: Option<PostBuild>,
    /// Recreate objects whose immutable fields changed (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
    /// Stop reconciling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// Apply to a remote cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_config: Option<KubeConfigReference>,
    /// SOPS decryption.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decryption: Option<Decryption>,
    /// Drift-detection ignore rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<IgnoreRule>,
    /// Build metadata to add (`originAnnotations`, `transformerAnnotations`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build_metadata: Vec<String>,
}

/// A source in any namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrossNamespaceSourceReference {
    /// API version of the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `GitRepository`, `OCIRepository`, `Bucket` or `ExternalArtifact`.
    pub kind: String,
    /// Name of the source.
    pub name: String,
    /// Namespace of the source (default: the Kustomization's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// An object to health-check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespacedObjectKindReference {
    /// API version (default: the preferred one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// CEL expressions deciding a kind's health.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomHealthCheck {
    /// API version of the kind.
    pub api_version: String,
    /// The kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// True when the object is current (healthy).
    pub current: String,
    /// True while the object progresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_progress: Option<String>,
    /// True when the object failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// A Kustomization this one depends on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DependencyReference {
    /// Name.
    pub name: String,
    /// Namespace (default: the dependent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// CEL readiness expression replacing the built-in check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_expr: Option<String>,
}

/// `spec.commonMetadata`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommonMetadata {
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// Which objects a patch or ignore rule targets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Selector {
    /// API group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// API version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name (a regular expression in kustomize).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Label selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// Annotation selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation_selector: Option<String>,
}

/// `spec.patches[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patch {
    /// A strategic merge patch or a JSON 6902 patch.
    pub patch: String,
    /// The objects to patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Selector>,
}

/// `spec.images[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// Image name to match (without tag).
    pub name: String,
    /// Replacement name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_name: Option<String>,
    /// Replacement tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_tag: Option<String>,
    /// Replacement digest (wins over the tag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// `spec.postBuild`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostBuild {
    /// Variables and values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub substitute: BTreeMap<String, String>,
    /// ConfigMaps and Secrets holding variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub substitute_from: Vec<SubstituteReference>,
    /// `WithVariables` (default) or `Always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub substitute_strategy: Option<String>,
}

/// `spec.postBuild.substituteFrom[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubstituteReference {
    /// `ConfigMap` or `Secret`.
    pub kind: String,
    /// Name, in the Kustomization's namespace.
    pub name: String,
    /// Missing is not an error.
    #[serde(default)]
    pub optional: bool,
}

/// `spec.kubeConfig`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeConfigReference {
    /// Secret holding a kubeconfig (key `value` or `value.yaml` unless `key` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeyReference>,
    /// ConfigMap describing a cloud provider's cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<LocalObjectReference>,
}

/// A Secret and one of its keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretKeyReference {
    /// Secret name.
    pub name: String,
    /// Key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// `spec.decryption`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decryption {
    /// `sops`.
    pub provider: String,
    /// Secret with the keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// Service account for cloud KMS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
}

/// `spec.ignore[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoreRule {
    /// JSON pointers to ignore.
    pub paths: Vec<String>,
    /// The objects the rule applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Selector>,
}

/// `status` of a Kustomization.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KustomizationStatus {
    /// Last generation reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The objects applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inventory: Option<ResourceInventory>,
    /// Revision last applied successfully.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_revision: Option<String>,
    /// Origin revision (OCI) last applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_origin_revision: Option<String>,
    /// Revision last attempted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_revision: Option<String>,
    /// The last `reconcile.fluxcd.io/requestedAt` value handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}

/// `status.inventory`: entries `<ns>_<name>_<group>_<kind>` with their API version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceInventory {
    /// The objects.
    pub entries: Vec<ResourceRef>,
}

/// One inventory entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceRef {
    /// `<namespace>_<name>_<group>_<kind>`.
    pub id: String,
    /// API version.
    pub v: String,
}
