//! `event.toolkit.fluxcd.io` Event: what every toolkit controller POSTs to the
//! notification-controller's event server, and what the generic providers forward.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The API group whose prefix marks annotations copied into events.
pub const GROUP: &str = "event.toolkit.fluxcd.io";
/// Severity of a failure.
pub const SEVERITY_ERROR: &str = "error";
/// Severity of everything else.
pub const SEVERITY_INFO: &str = "info";
/// Severity of trace events (never posted).
pub const SEVERITY_TRACE: &str = "trace";
/// Metadata key of the source revision.
pub const META_REVISION: &str = "revision";
/// Metadata key of the origin revision.
pub const META_ORIGIN_REVISION: &str = "originRevision";
/// Metadata key of the (deprecated) artifact checksum.
pub const META_CHECKSUM: &str = "checksum";
/// Metadata key of the artifact digest.
pub const META_DIGEST: &str = "digest";
/// Metadata key of an emitter-defined token used in rate limiting.
pub const META_TOKEN: &str = "token";
/// Metadata key of the Git commit.
pub const META_COMMIT: &str = "commit";
/// Metadata key marking a commit status event.
pub const META_COMMIT_STATUS: &str = "commit_status";
/// The value of [`META_COMMIT_STATUS`] asking for a commit status update.
pub const META_COMMIT_STATUS_UPDATE: &str = "update";
/// Metadata key of a change request (pull request) identifier.
pub const META_CHANGE_REQUEST: &str = "change_request";
/// The longest message an event carries.
pub const MAX_MESSAGE_LEN: usize = 39_000;

/// One event, in Flux's wire format (field order as Flux's, so it marshals as Go does). Like
/// Go's decoder, missing fields read as empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Event {
    /// The object the event is about.
    pub involved_object: ObjectReference,
    /// `info`, `error` or `trace`.
    pub severity: String,
    /// When it was recorded (RFC 3339, seconds).
    pub timestamp: String,
    /// What happened.
    pub message: String,
    /// Why (a CamelCase reason).
    pub reason: String,
    /// Revision, token, commit status and annotations, keys prefixed by group.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// The controller that sent it.
    pub reporting_controller: String,
    /// The controller instance (host name).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_instance: String,
}

/// `v1` ObjectReference with Go's field order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// Kind.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// UID.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// API version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// Resource version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// Field path.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field_path: String,
}

impl ObjectReference {
    /// The API group of `apiVersion` (empty for the core group).
    pub fn group(&self) -> &str {
        match self.api_version.split_once('/') {
            Some((group, _)) => group,
            None => "",
        }
    }
}

impl Event {
    /// The revision the event is about: `commit`, else `originRevision`, else `revision`
    /// (un-prefixed keys, as providers see them).
    pub fn revision(&self) -> Option<&str> {
        [META_COMMIT, META_ORIGIN_REVISION, META_REVISION]
            .iter()
            .find_map(|k| self.metadata.get(*k).map(String::as_str))
    }

    /// Whether `metadata[key] == value`.
    pub fn has_metadata(&self, key: &str, value: &str) -> bool {
        self.metadata.get(key).is_some_and(|v| v == value)
    }
}
