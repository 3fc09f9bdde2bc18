//! Cosign signatures checked with public keys, as Flux's cosign verifier checks them when the
//! Secret holds keys: offline, without the transparency log. The signatures are cosign's
//! simple-signing layers under the `sha256-<hex>.sig` tag of the signed manifest's
//! repository; one whose payload names the manifest digest and whose signature a key accepts
//! verifies the artifact. Cosign v3's Sigstore bundles are read too: manifests referring to
//! the signed one (OCI 1.1 referrers API, else its `sha256-<hex>` tag schema) whose layer is a
//! bundle (`application/vnd.dev.sigstore.bundle.v0.3+json`) holding a DSSE envelope of an
//! in-toto statement (predicate `https://sigstore.dev/cosign/sign/v1`) whose subject is the
//! manifest digest; the envelope's signature is checked over DSSE's pre-authentication
//! encoding. Transparency log entries in the bundle are not checked (offline, as for keys).

use base64::Engine;
use serde_json::Value;

use super::registry::{Registry, RegistryError};

/// The media type of a cosign signature layer.
pub const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The largest signature payload (or bundle) read.
const MAX_PAYLOAD: u64 = 1 << 20;
/// The media type of a Sigstore bundle (v0.3) as cosign v3 stores it.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// The DSSE payload type of an in-toto statement.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The predicate type of `cosign sign` statements.
pub const COSIGN_SIGN_PREDICATE: &str = "https://sigstore.dev/cosign/sign/v1";
/// At most this many referrers are examined.
const MAX_REFERRERS: usize = 64;

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
/// `keys`: a simple-signing signature under the `.sig` tag, or a cosign v3 bundle among the
/// manifest's referrers. `Ok(false)` when there is no signature or none verifies.
pub async fn verify(
    registry: &Registry,
    digest: &str,
    keys: &[PublicKey],
) -> Result<bool, RegistryError> {
    if verify_tagged(registry, digest, keys).await? {
        return Ok(true);
    }
    verify_bundles(registry, digest, keys).await
}

async fn verify_tagged(
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

async fn verify_bundles(
    registry: &Registry,
    digest: &str,
    keys: &[PublicKey],
) -> Result<bool, RegistryError> {
    let referrers = match registry.referrers(digest).await {
        Ok(r) => r,
        Err(RegistryError::NotFound(_)) => return Ok(false),
        Err(e) => return Err(e),
    };
    // cosign has written the empty type as the artifact type of its bundles, so anything
    // that is not clearly something else is looked at.
    for (manifest_digest, artifact_type) in referrers.into_iter().take(MAX_REFERRERS) {
        if !artifact_type.is_empty()
            && artifact_type != BUNDLE_MEDIA_TYPE
            && artifact_type != "application/vnd.oci.empty.v1+json"
        {
            continue;
        }
        let manifest = match registry
            .manifest(&registry.repository().digest(&manifest_digest))
            .await
        {
            Ok(m) => m,
            Err(RegistryError::NotFound(_) | RegistryError::Manifest(_)) => continue,
            Err(e) => return Err(e),
        };
        for layer in &manifest.image.layers {
            if layer.media_type != BUNDLE_MEDIA_TYPE {
                continue;
            }
            let bundle = registry.blob(layer, MAX_PAYLOAD).await?;
            if bundle_verifies(&bundle, digest, keys) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// DSSE's pre-authentication encoding of a payload.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// Whether the Sigstore bundle `bundle` holds a DSSE envelope, signed by one of `keys`, of a
/// `cosign sign` statement about `digest`.
pub fn bundle_verifies(bundle: &[u8], digest: &str, keys: &[PublicKey]) -> bool {
    let b64 = base64::engine::general_purpose::STANDARD;
    let Ok(bundle) = serde_json::from_slice::<Value>(bundle) else {
        return false;
    };
    let envelope = &bundle["dsseEnvelope"];
    let payload_type = envelope["payloadType"].as_str().unwrap_or_default();
    if payload_type != IN_TOTO_PAYLOAD_TYPE {
        return false;
    }
    let Some(payload) = envelope["payload"]
        .as_str()
        .and_then(|p| b64.decode(p).ok())
    else {
        return false;
    };
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return false;
    };
    let statement: Value = match serde_json::from_slice(&payload) {
        Ok(v) => v,
        Err(_) => return false,
    };
    let about = statement["predicateType"] == COSIGN_SIGN_PREDICATE
        && statement["subject"].as_array().is_some_and(|subjects| {
            subjects
                .iter()
                .any(|s| s["digest"][algorithm].as_str() == Some(hex))
        });
    if !about {
        return false;
    }
    let signed = pae(payload_type, &payload);
    envelope["signatures"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["sig"].as_str().and_then(|sig| b64.decode(sig).ok()))
        .any(|sig| keys.iter().any(|k| k.verify(&signed, &sig)))
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

    #[test]
    fn dsse_pre_authentication_encoding_and_bundles() {
        use base64::Engine;
        use p256::ecdsa::signature::Signer;
        use p256::pkcs8::EncodePublicKey;
        // The DSSE specification's example.
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
        let secret = p256::ecdsa::SigningKey::from_slice(&[9u8; 32]).unwrap();
        let key = parse_public_key(
            secret
                .verifying_key()
                .to_public_key_pem(p256::pkcs8::LineEnding::LF)
                .unwrap()
                .as_bytes(),
        )
        .unwrap();
        let b64 = base64::engine::general_purpose::STANDARD;
        let bundle = |statement: &str, payload_type: &str| {
            let sig: p256::ecdsa::DerSignature =
                secret.sign(&pae(payload_type, statement.as_bytes()));
            serde_json::json!({
                "mediaType": BUNDLE_MEDIA_TYPE,
                "dsseEnvelope": {
                    "payload": b64.encode(statement),
                    "payloadType": payload_type,
                    "signatures": [{"sig": b64.encode(sig.as_bytes()), "keyid": ""}]
                }
            })
            .to_string()
        };
        let statement = r#"{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":"ab"}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{}}"#;
        let good = bundle(statement, IN_TOTO_PAYLOAD_TYPE);
        assert!(bundle_verifies(
            good.as_bytes(),
            "sha256:ab",
            std::slice::from_ref(&key)
        ));
        assert!(!bundle_verifies(
            good.as_bytes(),
            "sha256:cd",
            std::slice::from_ref(&key)
        ));
        // Another predicate, another payload type, a tampered payload: refused.
        let other = statement.replace("cosign/sign/v1", "slsa/provenance");
        assert!(!bundle_verifies(
            bundle(&other, IN_TOTO_PAYLOAD_TYPE).as_bytes(),
            "sha256:ab",
            std::slice::from_ref(&key)
        ));
        assert!(!bundle_verifies(
            bundle(statement, "text/plain").as_bytes(),
            "sha256:ab",
            std::slice::from_ref(&key)
        ));
        let tampered = good.replace(
            &b64.encode(statement),
            &b64.encode(statement.replace("ab", "cd")),
        );
        assert!(!bundle_verifies(
            tampered.as_bytes(),
            "sha256:cd",
            std::slice::from_ref(&key)
        ));
        assert!(!bundle_verifies(b"not json", "sha256:ab", &[key]));
    }
}
