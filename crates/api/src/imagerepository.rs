//! `image.toolkit.fluxcd.io/v1` ImageRepository: an image repository scanned for tags (Flux's
//! image-reflector-controller).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

/// Kind name.
pub const KIND: &str = "ImageRepository";

/// The tags excluded when `exclusionList` is empty (cosign signatures).
pub const DEFAULT_EXCLUSION: &str = "^.*\\.sig$";

/// An image repository to scan.
pub type ImageRepository = crate::Object<ImageRepositorySpec, ImageRepositoryStatus>;

crate::namespaced_resource!(
    ImageRepository,
    group = "image.toolkit.fluxcd.io",
    version = "v1",
    kind = "ImageRepository",
    plural = "imagerepositories"
);

/// A reference to a Secret by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretName {
    /// The Secret's name.
    pub name: String,
}

/// Namespaces allowed to refer to an object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccessFrom {
    /// Namespace label selectors; any match allows.
    #[serde(default)]
    pub namespace_selectors: Vec<NamespaceSelector>,
}

/// A namespace label selector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceSelector {
    /// Labels the namespace must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<std::collections::BTreeMap<String, String>>,
}

/// `spec` of an ImageRepository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageRepositorySpec {
    /// The image repository, without tag (`ghcr.io/org/app`).
    pub image: String,
    /// How often to scan.
    pub interval: String,
    /// Bound on one scan (default: the interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// A docker-config Secret with registry credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretName>,
    /// A Secret with the proxy's `address`, `username`, `password`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_secret_ref: Option<SecretName>,
    /// A service account whose imagePullSecrets are used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// A Secret with `ca.crt` (and `tls.crt`/`tls.key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_secret_ref: Option<SecretName>,
    /// Stop scanning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// Namespaces whose ImagePolicies may use this repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_from: Option<AccessFrom>,
    /// Regular expressions of tags to leave out (default: cosign signatures).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclusion_list: Vec<String>,
    /// `generic`, `aws`, `azure` or `gcp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Allow plain HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
}

impl ImageRepositorySpec {
    /// The exclusion list in force: the spec's, or the default when it is empty.
    pub fn exclusion_list(&self) -> Vec<String> {
        if self.exclusion_list.is_empty() {
            vec![DEFAULT_EXCLUSION.to_string()]
        } else {
            self.exclusion_list.clone()
        }
    }
}

/// What the last scan found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanResult {
    /// The revision (checksum) of the tag list.
    #[serde(default)]
    pub revision: String,
    /// How many tags.
    pub tag_count: i64,
    /// When.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_time: Option<String>,
    /// The ten tags sorting last, greatest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latest_tags: Vec<String>,
}

/// `status` of an ImageRepository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageRepositoryStatus {
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `registry/repository` as scanned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_image_name: Option<String>,
    /// The last scan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scan_result: Option<ScanResult>,
    /// The exclusion list of the last scan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_exclusion_list: Vec<String>,
    /// The last `reconcile.fluxcd.io/requestedAt` handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}
