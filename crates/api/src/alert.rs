//! `notification.toolkit.fluxcd.io/v1beta3` Alert (also served as `v1beta2`): which events go
//! to which Provider. Like Flux's v1beta3 Alert it has no status.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::meta::LocalObjectReference;

/// Kind name.
pub const KIND: &str = "Alert";

/// Events are routed to a Provider when they match.
pub type Alert = crate::Object<AlertSpec, serde_json::Value>;

crate::namespaced_resource!(
    Alert,
    group = "notification.toolkit.fluxcd.io",
    version = "v1beta3",
    kind = "Alert",
    plural = "alerts"
);

/// `spec` of an Alert.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlertSpec {
    /// The Provider (same namespace) notifications go to.
    pub provider_ref: LocalObjectReference,
    /// `info` (every event) or `error` (only errors); default `info`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_severity: Option<String>,
    /// The objects whose events are sent.
    #[serde(default)]
    pub event_sources: Vec<CrossNamespaceObjectReference>,
    /// Go regular expressions; when set, a message must match one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inclusion_list: Vec<String>,
    /// Go regular expressions; a message matching one is dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclusion_list: Vec<String>,
    /// Extra metadata added to every event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_metadata: Option<BTreeMap<String, String>>,
    /// Deprecated: a `summary` metadata entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Stop sending.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
}

impl AlertSpec {
    /// `eventSeverity` with its default.
    pub fn severity(&self) -> &str {
        self.event_severity.as_deref().unwrap_or("info")
    }
}

/// An object (or every object of a kind, `name: *`) in some namespace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrossNamespaceObjectReference {
    /// API version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind.
    pub kind: String,
    /// Name, or `*`.
    pub name: String,
    /// Namespace (default: the referrer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Labels the objects must have (with `name: *`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<BTreeMap<String, String>>,
}
