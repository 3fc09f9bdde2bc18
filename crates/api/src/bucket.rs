//! `source.toolkit.fluxcd.io/v1` Bucket (also served as `v1beta2`): objects in an S3-compatible
//! bucket become a source artifact.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use crate::meta::{Artifact, LocalObjectReference};

/// Kind name.
pub const KIND: &str = "Bucket";

/// An object storage bucket whose objects become source artifacts.
pub type Bucket = crate::Object<BucketSpec, BucketStatus>;

crate::namespaced_resource!(
    Bucket,
    group = "source.toolkit.fluxcd.io",
    version = "v1",
    kind = "Bucket",
    plural = "buckets"
);

/// `spec` of a Bucket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BucketSpec {
    /// `generic` (default, any S3-compatible store), `aws`, `gcp` or `azure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The bucket's name.
    pub bucket_name: String,
    /// `host[:port]` of the object store.
    pub endpoint: String,
    /// Security Token Service settings (`aws`, `ldap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sts: Option<BucketSts>,
    /// Plain HTTP.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
    /// The bucket's region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Only objects whose keys start with this prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// A Secret with `accesskey` and `secretkey`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// A service account for workload identity (not for `generic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// A Secret with `ca.crt` (and `tls.crt`/`tls.key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_secret_ref: Option<LocalObjectReference>,
    /// A Secret with the proxy `address` (and `username`/`password`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_secret_ref: Option<LocalObjectReference>,
    /// How often to list the bucket (Go duration).
    pub interval: String,
    /// Timeout of the listing and downloads (default `60s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Ignore patterns (`.sourceignore` syntax).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore: Option<String>,
    /// Stop reconciling.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
}

impl BucketSpec {
    /// `spec.provider`, default `generic`.
    pub fn provider(&self) -> &str {
        self.provider
            .as_deref()
            .filter(|p| !p.is_empty())
            .unwrap_or("generic")
    }
    /// `spec.timeout`, default `60s`.
    pub fn timeout(&self) -> &str {
        self.timeout.as_deref().unwrap_or("60s")
    }
}

/// `spec.sts`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BucketSts {
    /// `aws` or `ldap`.
    pub provider: String,
    /// The STS address (`http://` or `https://`).
    pub endpoint: String,
    /// `username` and `password` for `ldap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// TLS for the STS endpoint (`ldap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_secret_ref: Option<LocalObjectReference>,
}

/// `status` of a Bucket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BucketStatus {
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
    /// The last `reconcile.fluxcd.io/requestedAt` value handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}
