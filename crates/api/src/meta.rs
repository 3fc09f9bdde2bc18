//! Types shared by the toolkit APIs (Flux's `meta` package).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A reference to an object in the same namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalObjectReference {
    /// Name of the referent.
    pub name: String,
}

/// An artifact produced by a source, as recorded in its status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Path relative to the storage root: `<kind>/<namespace>/<name>/<file>`.
    pub path: String,
    /// HTTP address to download it from.
    pub url: String,
    /// Source revision, e.g. `main@sha1:<hex>`.
    pub revision: String,
    /// `sha256:<hex>` of the file.
    #[serde(default)]
    pub digest: String,
    /// When the artifact was written (RFC 3339).
    pub last_update_time: String,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    /// Extra metadata.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

/// The annotation requesting a reconcile now; its value is echoed in `lastHandledReconcileAt`.
pub const RECONCILE_REQUESTED_AT: &str = "reconcile.fluxcd.io/requestedAt";

/// The finalizer every toolkit controller puts on its objects.
pub const FINALIZER: &str = "finalizers.fluxcd.io";
