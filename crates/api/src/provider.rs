//! `notification.toolkit.fluxcd.io/v1beta3` Provider (also served as `v1beta2`): where and how
//! notifications are sent. Like Flux's v1beta3 Provider it has no status.

use serde::{Deserialize, Serialize};

use crate::meta::LocalObjectReference;

/// Kind name.
pub const KIND: &str = "Provider";

/// A notification sink: a chat, an incident tool, a webhook or a Git forge.
pub type Provider = crate::Object<ProviderSpec, serde_json::Value>;

crate::namespaced_resource!(
    Provider,
    group = "notification.toolkit.fluxcd.io",
    version = "v1beta3",
    kind = "Provider",
    plural = "providers"
);

/// `spec` of a Provider.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSpec {
    /// `slack`, `generic`, `github`, … (Flux's enum).
    #[serde(rename = "type")]
    pub type_: String,
    /// Deprecated and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// Channel, room or topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// Bot name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Webhook URL or repository address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Timeout of a send (default 15s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Deprecated HTTP(S) proxy URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<String>,
    /// Secret with the proxy's `address`, `username`, `password`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_secret_ref: Option<LocalObjectReference>,
    /// Secret with `address`, `token`, `username`/`password`, `headers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// Secret with `ca.crt`, `tls.crt`, `tls.key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_secret_ref: Option<LocalObjectReference>,
    /// Workload identity (not supported by Tidegate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// CEL expression giving the commit status context (Git providers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_status_expr: Option<String>,
    /// Stop sending.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
}

/// The default send timeout.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);
