//! `source.toolkit.fluxcd.io/v1` OCIRepository (also served as `v1beta2`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use crate::meta::{Artifact, LocalObjectReference};

/// Kind name.
pub const KIND: &str = "OCIRepository";

/// An OCI repository whose artifacts become source artifacts.
pub type OCIRepository = crate::Object<OCIRepositorySpec, OCIRepositoryStatus>;

crate::namespaced_resource!(
    OCIRepository,
    group = "source.toolkit.fluxcd.io",
    version = "v1",
    kind = "OCIRepository",
    plural = "ocirepositories"
);

/// `spec` of an OCIRepository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OCIRepositorySpec {
    /// `oci://<registry>/<repository>`, without tag.
    pub url: String,
    /// Which artifact to pull (digest > semver > tag; default tag `latest`).
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<OCIRepositoryRef>,
    /// Which layer to use and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer_selector: Option<OCILayerSelector>,
    /// `generic` (default), `aws`, `azure` or `gcp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// A docker-config Secret with registry credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// Signature verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<OCIRepositoryVerification>,
    /// The service account whose imagePullSecrets are used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// A Secret with `ca.crt` (and `tls.crt`/`tls.key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_secret_ref: Option<LocalObjectReference>,
    /// A Secret with the proxy `address` (and `username`/`password`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_secret_ref: Option<LocalObjectReference>,
    /// How often to check the registry (Go duration).
    pub interval: String,
    /// Timeout of registry operations (default `60s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Ignore patterns (`.sourceignore` syntax).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore: Option<String>,
    /// Allow plain HTTP (and TLS without verification when no CA is given).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
    /// Stop reconciling.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
}

impl OCIRepositorySpec {
    /// `spec.timeout`, default `60s`.
    pub fn timeout(&self) -> &str {
        self.timeout.as_deref().unwrap_or("60s")
    }
}

/// `spec.ref`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OCIRepositoryRef {
    /// A manifest digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// A semver range over tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semver: Option<String>,
    /// A regular expression tags must match before the semver range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semver_filter: Option<String>,
    /// A tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// `spec.layerSelector` (also kept in `status.observedLayerSelector`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OCILayerSelector {
    /// The layer's media type (default: the first layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// `extract` (default) or `copy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
}

/// `spec.verify`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OCIRepositoryVerification {
    /// `cosign` (default) or `notation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Secret holding the public keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// Keyless identities (issuer and subject regular expressions).
    #[serde(
        default,
        rename = "matchOIDCIdentity",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub match_oidc_identity: Vec<serde_json::Value>,
    /// Secret with a custom Sigstore trusted root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted_root_secret_ref: Option<LocalObjectReference>,
}

/// `status` of an OCIRepository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OCIRepositoryStatus {
    /// Last generation reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The address of the latest artifact (`…/latest.tar.gz`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The artifact in storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    /// `spec.ignore` of the stored artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_ignore: Option<String>,
    /// `spec.layerSelector` of the stored artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_layer_selector: Option<OCILayerSelector>,
    /// The last `reconcile.fluxcd.io/requestedAt` value handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}
