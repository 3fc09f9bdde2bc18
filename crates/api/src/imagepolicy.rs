//! `image.toolkit.fluxcd.io/v1` ImagePolicy: which tag of an ImageRepository is the latest
//! (Flux's image-reflector-controller).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

/// Kind name.
pub const KIND: &str = "ImagePolicy";

/// A tag selection policy.
pub type ImagePolicy = crate::Object<ImagePolicySpec, ImagePolicyStatus>;

crate::namespaced_resource!(
    ImagePolicy,
    group = "image.toolkit.fluxcd.io",
    version = "v1",
    kind = "ImagePolicy",
    plural = "imagepolicies"
);

/// The ImageRepository a policy reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepositoryRef {
    /// Its name.
    pub name: String,
    /// Its namespace (default: the policy's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `semver`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SemverPolicy {
    /// A Masterminds constraint.
    pub range: String,
}

/// `alphabetical` or `numerical`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderPolicy {
    /// `asc` (the greatest wins) or `desc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

/// `spec.policy`: one of the three.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyChoice {
    /// By semantic version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semver: Option<SemverPolicy>,
    /// By byte order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alphabetical: Option<OrderPolicy>,
    /// By numeric value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numerical: Option<OrderPolicy>,
}

/// `spec.filterTags`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagFilter {
    /// A regular expression tags must match.
    #[serde(default)]
    pub pattern: String,
    /// What to compare instead of the tag (`$1`, `$name`).
    #[serde(default)]
    pub extract: String,
}

/// `spec` of an ImagePolicy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImagePolicySpec {
    /// The ImageRepository.
    pub image_repository_ref: RepositoryRef,
    /// The policy.
    pub policy: PolicyChoice,
    /// The tag filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_tags: Option<TagFilter>,
    /// `Always`, `IfNotPresent` or `Never` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest_reflection_policy: Option<String>,
    /// How often to look again (only with `Always`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// Stop reconciling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
}

/// An image reference as a policy reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRef {
    /// The image repository (`spec.image` of the ImageRepository).
    pub name: String,
    /// The tag.
    pub tag: String,
    /// The manifest digest, when reflected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

impl std::fmt::Display for ImageRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.name, self.tag)?;
        if let Some(d) = self.digest.as_deref().filter(|d| !d.is_empty()) {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

/// `status` of an ImagePolicy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImagePolicyStatus {
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The latest image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_ref: Option<ImageRef>,
    /// The one before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_previous_ref: Option<ImageRef>,
    /// The last `reconcile.fluxcd.io/requestedAt` handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}
