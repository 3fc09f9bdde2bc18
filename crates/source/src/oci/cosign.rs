//! Cosign signatures checked with public keys, as Flux's cosign verifier checks them when the
//! Secret holds keys: offline, without the transparency log. The signatures are cosign's
//! simple-signing layers under the `sha256-<hex>.sig` tag of the signed manifest's
//! repository; one whose payload names the manifest digest and whose signature a key accepts
//! verifies the artifact. Cosign v3's bundles (OCI referrers) are not read yet.

use base64::Engine;
use serde_json::Value;

use super::registry::{Registry, RegistryError};

/// The media type of a cosign signature layer.
pub const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The largest signature payload read.
const MAX_PAYLOAD: u64 = 1 << 20;

/// A key cosign signatures are checked with.
pub enum PublicKey {
    /// ECDSA P-256 (what `cosign generate-key-pair` makes), SHA-256.
    P256(p256::ecdsa::VerifyingKey),
    /// RSA, PKCS #1 v1.5 with SHA-256.
    Rsa(Box<rsa::pkcs1v15::VerifyingKey<rsa::sha2::Sha256>>),
    /// Ed25519.
    Ed25519(ed25519_dalek::VerifyingKey),
}

/// A key that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Not a PEM `PUBLIC KEY` of a supported type.
    #[error("unsupported public key: {0}")]
    Unsupported(String),
}

/// Reads a PEM public key (SubjectPublicKeyInfo): ECDSA P-256, RSA or Ed25519.
pub fn parse_public_key(pem: &[u8]) -> Result<PublicKey, KeyError> {
    let text = std::str::from_utf8(pem)
        .map_err(|_| KeyError::Unsupported("the key is not PEM text".into()))?;
    use p256::pkcs8::DecodePublicKey;
    if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_pem(text) {
        return Ok(PublicKey::P256(k));
    }
    if let Ok(k) = rsa::RsaPublicKey::from_public_key_pem(text) {
        return Ok(PublicKey::Rsa(Box::new(rsa::pkcs1v15::VerifyingKey::new(
            k,
        ))));
    }
    if let Ok(k) = ed25519_dalek::VerifyingKey::from_public_key_pem(text) {
        return Ok(PublicKey::Ed25519(k));
    }
    Err(KeyError::Unsupported(
        "expected a PEM PUBLIC KEY (ECDSA P-256, RSA or Ed25519)".into(),
    ))
}

impl PublicKey {
    /// Whether `signature` is this key's signature of `payload`.
    pub fn verify(&self, payload: &[u8], signature: &[u8]) -> bool {
        use p256::ecdsa::signature::Verifier;
        match self {
            PublicKey::P256(k) => {
                let sig = p256::ecdsa::DerSignature::try_from(signature)
                    .ok()
                    .and_then(|d| p256::ecdsa::Signature::from_der(d.as_bytes()).ok())
                    .or_else(|| p256::ecdsa::Signature::from_slice(signature).ok());
                sig.is_some_and(|s| k.verify(payload, &s).is_ok())
            }
            PublicKey::Rsa(k) => rsa::pkcs1v15::Signature::try_from(signature)
                .is_ok_and(|s| k.verify(payload, &s).is_ok()),
            PublicKey::Ed25519(k) => ed25519_dalek::Signature::from_slice(signature)
                .is_ok_and(|s| k.verify(payload, &s).is_ok()),
        }
    }
}

/// The tag cosign stores the signatures of `digest` (`sha256:<hex>`) under.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// Whether the simple-signing `payload` claims `digest`.
fn claims(payload: &[u8], digest: &str) -> bool {
    serde_json::from_slice::<Value>(payload).is_ok_and(|v| {
        v.pointer("/critical/image/docker-manifest-digest")
            .and_then(Value::as_str)
            == Some(digest)
    })
}

/// Whether a signature of manifest `digest` in `registry`'s repository verifies with one of
/// `keys`. `Ok(false)` when there is no signature or none verifies.
pub async fn verify(
    registry: &Registry,
    digest: &str,
    keys: &[PublicKey],
) -> Result<bool, RegistryError> {
    let reference = registry.repository().tag(&signature_tag(digest));
    let manifest = match registry.manifest(&reference).await {
        Ok(m) => m,
        Err(RegistryError::NotFound(_)) => return Ok(false),
        Err(e) => return Err(e),
    };
    for layer in &manifest.image.layers {
        if layer.media_type != SIMPLE_SIGNING {
            continue;
        }
        let Some(signature) = layer
            .annotations
            .get(SIGNATURE_ANNOTATION)
            .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        else {
            continue;
        };
        let payload = registry.blob(layer, MAX_PAYLOAD).await?;
        if !claims(&payload, digest) {
            continue;
        }
        if keys.iter().any(|k| k.verify(&payload, &signature)) {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_signatures_and_claims() {
        use p256::ecdsa::signature::Signer;
        use p256::pkcs8::EncodePublicKey;
        let secret = p256::ecdsa::SigningKey::from_slice(&[7u8; 32]).unwrap();
        let pem = secret
            .verifying_key()
            .to_public_key_pem(p256::pkcs8::LineEnding::LF)
            .unwrap();
        let key = parse_public_key(pem.as_bytes()).unwrap();
        let payload = br#"{"critical":{"identity":{"docker-reference":"r/app"},"image":{"docker-manifest-digest":"sha256:ab"},"type":"cosign container image signature"},"optional":null}"#;
        let sig: p256::ecdsa::DerSignature = secret.sign(payload);
        assert!(key.verify(payload, sig.as_bytes()));
        assert!(!key.verify(b"other", sig.as_bytes()));
        assert!(claims(payload, "sha256:ab"));
        assert!(!claims(payload, "sha256:cd"));
        assert_eq!(signature_tag("sha256:ab"), "sha256-ab.sig");
        assert!(parse_public_key(b"not a key").is_err());
    }
}
