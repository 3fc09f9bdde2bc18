//! The keys `spec.verify` names, shared by the OCIRepository and HelmChart reconcilers: cosign
//! public keys (`*.pub`) from `secretRef`, with keyless and notation refused clearly.

use tidegate_source::oci::cosign::{PublicKey, parse_public_key};

use super::failure::{Failure, SOURCE_VERIFIED};

/// Flux's verification failure: `SourceVerified=False` `VerificationError`
/// `failed to verify the signature using provider '<provider>': <message>`.
pub(crate) fn failure(provider: &str, message: String) -> Failure {
    Failure::new(
        SOURCE_VERIFIED,
        "VerificationError",
        format!("failed to verify the signature using provider '{provider}': {message}"),
    )
}

/// The cosign public keys of `secret` in `ns` (possibly none) for `provider`; other providers
/// and keyless verification (no secret) stall with a message saying they are not supported.
pub(crate) async fn cosign_keys(
    client: &kube::Client,
    ns: &str,
    provider: &str,
    secret: Option<&str>,
) -> Result<Vec<PublicKey>, Failure> {
    if provider != "cosign" {
        return Err(failure(
            provider,
            format!("{provider} verification is not supported by Tidegate yet"),
        )
        .stall());
    }
    let Some(secret) = secret else {
        return Err(failure(
            "cosign keyless",
            "keyless verification is not supported by Tidegate yet (give public keys in spec.verify.secretRef)".to_string(),
        )
        .stall());
    };
    let data = super::secret_data(client, ns, secret)
        .await
        .map_err(|m| failure("cosign", m))?;
    data.iter()
        .filter(|(k, _)| k.ends_with(".pub"))
        .map(|(name, pem)| {
            parse_public_key(pem).map_err(|e| failure("cosign", format!("key '{name}': {e}")))
        })
        .collect()
}
