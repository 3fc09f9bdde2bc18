//! `source.toolkit.fluxcd.io/v1` GitRepository.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use crate::meta::{Artifact, LocalObjectReference};

/// API group of the source kinds.
pub const GROUP: &str = "source.toolkit.fluxcd.io";
/// Kind name.
pub const KIND: &str = "GitRepository";

/// A Git repository to turn into artifacts.
pub type GitRepository = crate::Object<GitRepositorySpec, GitRepositoryStatus>;

crate::namespaced_resource!(
    GitRepository,
    group = "source.toolkit.fluxcd.io",
    version = "v1",
    kind = "GitRepository",
    plural = "gitrepositories"
);

/// `spec` of a GitRepository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitRepositorySpec {
    /// Repository URL (`https://`, `http://`, `ssh://`; Tidegate also takes `git://`, `file://`).
    pub url: String,
    /// Secret with credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// `generic`, `aws`, `azure` or `github`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Service account for cloud providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// How often to check the repository (Go duration).
    pub interval: String,
    /// Timeout of Git operations (default `60s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Which reference to check out.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<GitRepositoryRef>,
    /// Signature verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<GitRepositoryVerification>,
    /// Secret with proxy settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_secret_ref: Option<LocalObjectReference>,
    /// Ignore patterns (`.sourceignore` syntax), highest priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore: Option<String>,
    /// Stop reconciling.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
    /// Check out submodules.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recurse_submodules: bool,
    /// Other GitRepositories' artifacts to include.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<GitRepositoryInclude>,
    /// Directories to check out (sparse checkout).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sparse_checkout: Vec<String>,
}

/// `spec.ref`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitRepositoryRef {
    /// Branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Semver range over tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semver: Option<String>,
    /// Full reference name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Commit SHA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// `spec.verify`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitRepositoryVerification {
    /// `HEAD` (default), `Tag` or `TagAndHEAD` (`head` is taken as `HEAD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Secret holding the trusted public keys.
    pub secret_ref: LocalObjectReference,
}

/// How commits and tags are verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerificationMode {
    /// The commit at the reference.
    Head,
    /// The tag object.
    Tag,
    /// Both.
    TagAndHead,
}

impl VerificationMode {
    /// Flux's name for the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            VerificationMode::Head => "HEAD",
            VerificationMode::Tag => "Tag",
            VerificationMode::TagAndHead => "TagAndHEAD",
        }
    }
}

impl GitRepositoryVerification {
    /// The mode, Flux's way: anything but `Tag`/`TagAndHEAD` is `HEAD`.
    pub fn mode(&self) -> VerificationMode {
        match self.mode.as_deref() {
            Some("Tag") => VerificationMode::Tag,
            Some("TagAndHEAD") => VerificationMode::TagAndHead,
            _ => VerificationMode::Head,
        }
    }
}

/// `spec.include[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitRepositoryInclude {
    /// The GitRepository whose artifact to include.
    pub repository: LocalObjectReference,
    /// Directory of that artifact to copy (default: all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_path: Option<String>,
    /// Where to put it (default: the repository's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_path: Option<String>,
}

/// `status` of a GitRepository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitRepositoryStatus {
    /// Last generation reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The artifact in storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    /// Artifacts of the included repositories.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub included_artifacts: Vec<Artifact>,
    /// `spec.ignore` of the stored artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_ignore: Option<String>,
    /// `spec.recurseSubmodules` of the stored artifact.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub observed_recurse_submodules: bool,
    /// `spec.include` of the stored artifact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_include: Vec<GitRepositoryInclude>,
    /// `spec.sparseCheckout` of the stored artifact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_sparse_checkout: Vec<String>,
    /// The verification mode of the stored artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_verification_mode: Option<String>,
    /// The last `reconcile.fluxcd.io/requestedAt` value handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}

impl GitRepositorySpec {
    /// `spec.timeout`, default `60s`.
    pub fn timeout(&self) -> &str {
        self.timeout.as_deref().unwrap_or("60s")
    }
}
