//! `source.toolkit.fluxcd.io/v1` HelmRepository (also served as `v1beta2`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use crate::meta::{Artifact, LocalObjectReference};

/// Kind name.
pub const KIND: &str = "HelmRepository";

/// A Helm chart repository: an HTTP(S) index, or an OCI registry.
pub type HelmRepository = crate::Object<HelmRepositorySpec, HelmRepositoryStatus>;

crate::namespaced_resource!(
    HelmRepository,
    group = "source.toolkit.fluxcd.io",
    version = "v1",
    kind = "HelmRepository",
    plural = "helmrepositories"
);

/// `spec` of a HelmRepository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmRepositorySpec {
    /// `http(s)://…` (the index is `<url>/index.yaml`) or `oci://…`.
    pub url: String,
    /// A Secret with `username`/`password` (and, deprecated, TLS keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// A Secret with `ca.crt`, `tls.crt`, `tls.key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_secret_ref: Option<LocalObjectReference>,
    /// Send the credentials to chart URLs on other hosts than the index's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pass_credentials: bool,
    /// How often to fetch the index (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// Plain HTTP for OCI registries.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
    /// Timeout of index downloads (default `60s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Stop reconciling.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
    /// Namespaces allowed to use it (declared by Flux, not implemented).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_from: Option<serde_json::Value>,
    /// `default` (an HTTP index) or `oci`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// `generic` (default), `aws`, `azure` or `gcp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

impl HelmRepositorySpec {
    /// `spec.timeout`, default `60s`.
    pub fn timeout(&self) -> &str {
        self.timeout.as_deref().unwrap_or("60s")
    }

    /// Whether this is an OCI repository (`type: oci`).
    pub fn is_oci(&self) -> bool {
        self.type_.as_deref() == Some("oci")
    }
}

/// `status` of a HelmRepository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmRepositoryStatus {
    /// Last generation reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The address of the latest index (`…/index.yaml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The stored index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    /// The last `reconcile.fluxcd.io/requestedAt` value handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}
