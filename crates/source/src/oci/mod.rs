//! OCI artifacts: Flux's `oci://` sources, as `flux push artifact` writes them and the
//! source-controller's OCIRepository reads them.
//!
//! - [`reference`]: `oci://` URLs;
//! - [`auth`]: credentials from Docker configs and `--creds`;
//! - [`registry`]: the distribution API (tags, digests, manifests, blobs, push, tag), over
//!   `transport` (HTTP, TLS and the registry's authentication) with [`error`]'s wording;
//! - [`select`]: which tag a `ref` selects;
//! - [`layer`]: the content layer `flux push artifact` builds;
//! - [`cosign`]: cosign signatures checked with public keys.

pub mod auth;
pub mod cosign;
pub mod error;
pub mod layer;
pub mod reference;
pub mod registry;
pub mod select;
mod transport;

pub use auth::Credentials;
pub use reference::{Repository, UrlError, parse_artifact_url, parse_repository_url};
pub use registry::{Descriptor, Manifest, Options, Registry, RegistryError};

/// The layer of `manifest` to use: the first whose media type is `media_type`, or the first
/// layer when none is asked for. Messages are Flux's.
pub fn select_layer<'a>(
    manifest: &'a registry::ImageManifest,
    media_type: Option<&str>,
) -> Result<&'a Descriptor, String> {
    if manifest.layers.is_empty() {
        return Err("no layers found in artifact".to_string());
    }
    match media_type.filter(|m| !m.is_empty()) {
        None => Ok(&manifest.layers[0]),
        Some(m) => manifest
            .layers
            .iter()
            .find(|l| l.media_type == m)
            .ok_or_else(|| format!("failed to find layer with media type '{m}' in artifact")),
    }
}
