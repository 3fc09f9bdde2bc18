//! `notification.toolkit.fluxcd.io/v1` Receiver (also served as `v1beta2`): a webhook that
//! asks Flux objects to reconcile now.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use crate::meta::LocalObjectReference;

/// Kind name.
pub const KIND: &str = "Receiver";
/// The prefix of every webhook path.
pub const WEBHOOK_PATH_PREFIX: &str = "/hook/";
/// Reason of Ready=False when the Secret has no token.
pub const TOKEN_NOT_FOUND_REASON: &str = "TokenNotFound";
/// Reason of Stalled for an invalid spec.
pub const VALIDATION_FAILED_REASON: &str = "ValidationFailed";

/// A webhook receiver.
pub type Receiver = crate::Object<ReceiverSpec, ReceiverStatus>;

crate::namespaced_resource!(
    Receiver,
    group = "notification.toolkit.fluxcd.io",
    version = "v1",
    kind = "Receiver",
    plural = "receivers"
);

/// `spec` of a Receiver.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiverSpec {
    /// `generic`, `generic-hmac`, `generic-oidc`, `github`, `gitlab`, `bitbucket`, `harbor`,
    /// `dockerhub`, `quay`, `gcr`, `nexus`, `acr` or `cdevents`.
    #[serde(rename = "type")]
    pub type_: String,
    /// How often the receiver is reconciled (default 10m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// The events (the provider's event header) accepted; empty: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    /// The objects to reconcile.
    #[serde(default)]
    pub resources: Vec<ReceiverResource>,
    /// A CEL expression over `res` and `req` every resource must satisfy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_filter: Option<String>,
    /// The Secret holding `token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// OIDC providers (`generic-oidc`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub oidc_providers: Vec<OidcProvider>,
    /// Stop handling requests.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
}

/// The audience a `generic-oidc` token must carry when `audience` is not set.
pub const DEFAULT_OIDC_AUDIENCE: &str = "notification-controller";

/// An OIDC issuer whose tokens a `generic-oidc` Receiver accepts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OidcProvider {
    /// The issuer (discovery at `<issuerURL>/.well-known/openid-configuration`; must equal
    /// the token's `iss`).
    #[serde(rename = "issuerURL", default)]
    pub issuer_url: String,
    /// The `aud` the token must carry (default `notification-controller`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub audience: String,
    /// Named CEL expressions over `claims` and earlier `vars`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<OidcVariable>,
    /// CEL conditions over `claims` and `vars`, all of which must hold.
    #[serde(default)]
    pub validations: Vec<OidcValidation>,
}

impl OidcProvider {
    /// The audience to require.
    pub fn audience(&self) -> &str {
        if self.audience.is_empty() {
            DEFAULT_OIDC_AUDIENCE
        } else {
            &self.audience
        }
    }
}

/// A named CEL expression of an [`OidcProvider`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OidcVariable {
    /// The name (`vars.<name>`).
    #[serde(default)]
    pub name: String,
    /// The expression.
    #[serde(default)]
    pub expression: String,
}

/// A CEL condition of an [`OidcProvider`] and the message given when it fails.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OidcValidation {
    /// A boolean expression.
    #[serde(default)]
    pub expression: String,
    /// What a failure says.
    #[serde(default)]
    pub message: String,
}

/// An object a Receiver reconciles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiverResource {
    /// API version (default for source kinds and ImageRepository).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind.
    pub kind: String,
    /// Name, or `*` with `matchLabels`.
    pub name: String,
    /// Namespace (default: the Receiver's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Labels the objects must have (with `name: *`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<BTreeMap<String, String>>,
    /// A CEL expression over `res` and `req` the object must satisfy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
}

/// `status` of a Receiver.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiverStatus {
    /// The last `reconcile.fluxcd.io/requestedAt` handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// `/hook/<sha256(token+name+namespace)>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_path: Option<String>,
    /// The generation the status is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
