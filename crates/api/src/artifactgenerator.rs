//! `source.extensions.fluxcd.io/v1beta1` ArtifactGenerator (Flux's source-watcher): composes
//! the artifacts of several sources into ExternalArtifacts, or splits one source into several.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

/// Kind name.
pub const KIND: &str = "ArtifactGenerator";

/// The finalizer of ArtifactGenerators.
pub const FINALIZER: &str = "source.extensions.fluxcd.io/finalizer";

/// The label naming, on each ExternalArtifact, the UID of the generator that made it.
pub const GENERATOR_LABEL: &str = "source.extensions.fluxcd.io/generator";

/// The annotation that pauses a generator when it says `disabled`.
pub const RECONCILE_ANNOTATION: &str = "source.extensions.fluxcd.io/reconcile";

/// A generator of ExternalArtifacts.
pub type ArtifactGenerator = crate::Object<ArtifactGeneratorSpec, ArtifactGeneratorStatus>;

crate::namespaced_resource!(
    ArtifactGenerator,
    group = "source.extensions.fluxcd.io",
    version = "v1beta1",
    kind = "ArtifactGenerator",
    plural = "artifactgenerators"
);

/// `spec` of an ArtifactGenerator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactGeneratorSpec {
    /// Labels and annotations set on every ExternalArtifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_metadata: Option<CommonMetadata>,
    /// The sources, each under an alias.
    #[serde(default)]
    pub sources: Vec<SourceReference>,
    /// `@alias/<dir pattern with {captures}>`: one set of artifacts per matching directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_pattern: Option<String>,
    /// The artifacts to generate.
    #[serde(default)]
    pub artifacts: Vec<OutputArtifact>,
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

/// `spec.sources[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceReference {
    /// How copy rules name it (`@alias/…`).
    pub alias: String,
    /// `GitRepository`, `OCIRepository`, `Bucket`, `HelmChart` or `ExternalArtifact`.
    pub kind: String,
    /// The source's name.
    pub name: String,
    /// The source's namespace (default: the generator's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `spec.artifacts[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputArtifact {
    /// The ExternalArtifact's name.
    pub name: String,
    /// `@alias`: take the revision of that source instead of `latest@<digest>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// `@alias`: record that source's revision as the origin revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_revision: Option<String>,
    /// What goes into the artifact, in order.
    #[serde(default)]
    pub copy: Vec<CopyOperation>,
}

/// `spec.artifacts[].copy[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CopyOperation {
    /// `@alias/<path or glob>`.
    pub from: String,
    /// `@artifact/<path>`.
    pub to: String,
    /// Patterns (doublestar syntax) left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// `Overwrite` (default), `Merge` (YAML deep merge) or `Extract` (tarballs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
}

/// `status` of an ArtifactGenerator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactGeneratorStatus {
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The ExternalArtifacts generated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inventory: Vec<ExternalArtifactReference>,
    /// The digest of the sources' artifacts last built from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_sources_digest: Option<String>,
    /// The last `reconcile.fluxcd.io/requestedAt` value handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}

/// `status.inventory[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalArtifactReference {
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// The artifact's digest.
    pub digest: String,
    /// The artifact's file name in storage.
    pub filename: String,
}
