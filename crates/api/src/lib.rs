//! The Flux APIs Tidegate serves: Rust types for controllers and the CRD manifests that install
//! them (`tidegate install --export`). The manifests accept Flux's own manifests unchanged.

pub mod alert;
pub mod artifactgenerator;
pub mod bucket;
pub mod cluster;
pub mod clusterresourceset;
pub mod conditions;
pub mod crds;
pub mod event;
pub mod externalartifact;
pub mod gitrepository;
pub mod helmchart;
pub mod helmrelease;
pub mod helmrepository;
pub mod imagepolicy;
pub mod imagerepository;
pub mod imageupdateautomation;
pub mod kustomization;
pub mod meta;
pub mod ocirepository;
pub mod provider;
pub mod receiver;

pub use alert::{Alert, AlertSpec};
pub use artifactgenerator::{ArtifactGenerator, ArtifactGeneratorSpec, ArtifactGeneratorStatus};
pub use bucket::{Bucket, BucketSpec, BucketStatus};
pub use cluster::Cluster;
pub use clusterresourceset::{ClusterResourceSet, ClusterResourceSetBinding};
pub use externalartifact::{ExternalArtifact, ExternalArtifactSpec, ExternalArtifactStatus};
pub use gitrepository::{GitRepository, GitRepositorySpec, GitRepositoryStatus};
pub use helmchart::{HelmChart, HelmChartSpec, HelmChartStatus};
pub use helmrelease::{HelmRelease, HelmReleaseSpec, HelmReleaseStatus};
pub use helmrepository::{HelmRepository, HelmRepositorySpec, HelmRepositoryStatus};
pub use imagepolicy::{ImagePolicy, ImagePolicySpec, ImagePolicyStatus};
pub use imagerepository::{ImageRepository, ImageRepositorySpec, ImageRepositoryStatus};
pub use imageupdateautomation::{
    ImageUpdateAutomation, ImageUpdateAutomationSpec, ImageUpdateAutomationStatus,
};
pub use kustomization::{Kustomization, KustomizationSpec, KustomizationStatus};
pub use ocirepository::{OCIRepository, OCIRepositorySpec, OCIRepositoryStatus};
pub use provider::{Provider, ProviderSpec};
pub use receiver::{Receiver, ReceiverSpec, ReceiverStatus};

/// A toolkit object: `apiVersion`, `kind`, `metadata`, `spec` and an optional `status`.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Object<S, T> {
    /// The API version, when written.
    #[serde(
        default,
        rename = "apiVersion",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// The kind, when written.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    pub metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: S,
    /// What the controller observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<T>,
}

/// Implements `kube::Resource` for a namespaced custom resource with `metadata` field.
macro_rules! namespaced_resource {
    ($ty:ty, group = $group:literal, version = $version:literal, kind = $kind:literal, plural = $plural:literal) => {
        impl kube::Resource for $ty {
            type DynamicType = ();
            type Scope = k8s_openapi::NamespaceResourceScope;

            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                $kind.into()
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                $group.into()
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                $version.into()
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                $plural.into()
            }
            fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(
                &mut self,
            ) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }
    };
}
pub(crate) use namespaced_resource;
