//! `image.toolkit.fluxcd.io/v1` ImageUpdateAutomation: image updates written back to Git (Flux's
//! image-automation-controller).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector};
use serde::{Deserialize, Serialize};

use crate::gitrepository::GitRepositoryRef;
use crate::meta::LocalObjectReference;

/// Kind name.
pub const KIND: &str = "ImageUpdateAutomation";

/// An automation.
pub type ImageUpdateAutomation =
    crate::Object<ImageUpdateAutomationSpec, ImageUpdateAutomationStatus>;

crate::namespaced_resource!(
    ImageUpdateAutomation,
    group = "image.toolkit.fluxcd.io",
    version = "v1",
    kind = "ImageUpdateAutomation",
    plural = "imageupdateautomations"
);

/// `spec.sourceRef`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceReference {
    /// API version of the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `GitRepository` (the only kind).
    #[serde(default)]
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its namespace (default: the automation's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `spec.git.checkout`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitCheckoutSpec {
    /// The reference to clone.
    #[serde(rename = "ref")]
    pub reference: GitRepositoryRef,
}

/// `spec.git.commit.author`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitUser {
    /// Name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Email.
    #[serde(default)]
    pub email: String,
}

/// `spec.git.commit.signingKey`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SigningKey {
    /// The Secret with `git.asc` (gpg) or `identity` (ssh).
    pub secret_ref: LocalObjectReference,
    /// `gpg` (default) or `ssh`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub key_type: Option<String>,
}

/// `spec.git.commit`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommitSpec {
    /// The author.
    pub author: CommitUser,
    /// The key commits are signed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_key: Option<SigningKey>,
    /// Go template of the commit message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message_template: String,
    /// Values the template sees as `.Values`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub message_template_values: BTreeMap<String, String>,
}

/// `spec.git.push`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushSpec {
    /// The branch to push to (created from the checkout when missing).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub branch: String,
    /// A refspec pushed as well.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub refspec: String,
    /// Push options.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
}

/// `spec.git`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitSpec {
    /// What to clone (default: the GitRepository's `ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkout: Option<GitCheckoutSpec>,
    /// How to commit.
    #[serde(default)]
    pub commit: CommitSpec,
    /// Where to push (default: the checkout branch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push: Option<PushSpec>,
}

/// `spec.update`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateStrategy {
    /// `Setters` (default and only).
    #[serde(default)]
    pub strategy: String,
    /// The directory (or file) updated, from the repository root.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
}

/// `spec` of an ImageUpdateAutomation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageUpdateAutomationSpec {
    /// The GitRepository.
    pub source_ref: SourceReference,
    /// Git checkout, commit and push.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitSpec>,
    /// How often to run.
    pub interval: String,
    /// Which ImagePolicies of the namespace are applied (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_selector: Option<LabelSelector>,
    /// How to update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateStrategy>,
    /// Stop reconciling.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
}

/// An image reference as observed (`status.observedPolicies` values).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedRef {
    /// The image name.
    pub name: String,
    /// The tag.
    pub tag: String,
    /// The digest.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
}

/// `status` of an ImageUpdateAutomation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageUpdateAutomationStatus {
    /// When the last run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_automation_run_time: Option<String>,
    /// The last commit pushed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_push_commit: Option<String>,
    /// When it was pushed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_push_time: Option<String>,
    /// The generation last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The latest image of each policy applied, by policy name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub observed_policies: BTreeMap<String, ObservedRef>,
    /// The source revision last observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_source_revision: Option<String>,
    /// The last `reconcile.fluxcd.io/requestedAt` handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}
