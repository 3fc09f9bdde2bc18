//! `source.toolkit.fluxcd.io/v1` ExternalArtifact: an artifact produced by another controller
//! (an ArtifactGenerator, …), usable as a Kustomization or HelmRelease source.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use crate::meta::Artifact;

/// Kind name.
pub const KIND: &str = "ExternalArtifact";

/// An artifact whose producer is another controller.
pub type ExternalArtifact = crate::Object<ExternalArtifactSpec, ExternalArtifactStatus>;

crate::namespaced_resource!(
    ExternalArtifact,
    group = "source.toolkit.fluxcd.io",
    version = "v1",
    kind = "ExternalArtifact",
    plural = "externalartifacts"
);

/// `spec` of an ExternalArtifact.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalArtifactSpec {
    /// The object the artifact is generated for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<NamespacedObjectKindReference>,
}

/// A reference to an object by kind, name and (optionally) namespace and API version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespacedObjectKindReference {
    /// API version of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind of the referent.
    pub kind: String,
    /// Name of the referent.
    pub name: String,
    /// Namespace of the referent (default: the referrer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `status` of an ExternalArtifact.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalArtifactStatus {
    /// The artifact in storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
