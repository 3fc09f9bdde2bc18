//! Signature verification of commits and tags against OpenPGP and SSH public keys.
//!
//! Keys come from a Secret as Flux reads it: every key ending in `.sshpub` holds
//! authorized_keys lines (signatures in the `git` namespace); every other key holds armored
//! OpenPGP public keys. The identity reported is the OpenPGP primary key ID (16 upper-case hex
//! digits) or the SSH key's `SHA256:` fingerprint.

use std::collections::BTreeMap;

use pgp::composed::{Deserializable, DetachedSignature, SignedPublicKey};
use pgp::types::KeyDetails;

/// Public keys trusted to sign.
#[derive(Default)]
pub struct Keyring {
    pgp: Vec<SignedPublicKey>,
    ssh: Vec<ssh_key::PublicKey>,
}

/// Why a signature did not verify. Messages follow Flux's.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A key in the secret could not be read.
    #[error("{0}")]
    Keys(String),
    /// The object is signed with a kind of signature there is no key for.
    #[error("{0}")]
    NoKeys(String),
    /// The signature is of a kind Flux does not verify, or the object is unsigned.
    #[error("unsupported signature type: {0}")]
    Unsupported(String),
    /// No key verifies the signature.
    #[error("{0}")]
    NoMatch(String),
}

impl Keyring {
    /// Reads the keys from a Secret's data.
    pub fn from_secret(data: &BTreeMap<String, Vec<u8>>) -> Result<Keyring, VerifyError> {
        let mut ring = Keyring::default();
        for (name, value) in data {
            let text = String::from_utf8_lossy(value);
            if name.ends_with(".sshpub") {
                for line in text.lines().map(str::trim) {
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    let key = authorized_key(line).map_err(|e| {
                        VerifyError::Keys(format!(
                            "unable to parse authorized keys: unable to parse authorized key '{name}': {e}"
                        ))
                    })?;
                    ring.ssh.push(key);
                }
            } else {
                let keys = SignedPublicKey::from_string_many(&text)
                    .map_err(|e| {
                        VerifyError::Keys(format!("unable to read armored key ring '{name}': {e}"))
                    })?
                    .0;
                for key in keys {
                    let key = key.map_err(|e| {
                        VerifyError::Keys(format!("unable to read armored key ring '{name}': {e}"))
                    })?;
                    ring.pgp.push(key);
                }
            }
        }
        Ok(ring)
    }

    /// Verifies `signature` over `payload`; returns the identity of the key that signed.
    pub fn verify(&self, signature: &[u8], payload: &[u8]) -> Result<String, VerifyError> {
        let text = String::from_utf8_lossy(signature);
        let trimmed = text.trim();
        if trimmed.starts_with("-----BEGIN PGP SIGNATURE-----") {
            if self.pgp.is_empty() {
                return Err(VerifyError::NoKeys(
                    "PGP signature detected but no PGP public keys found in secret (keys with .asc suffix)".into(),
                ));
            }
            self.verify_pgp(trimmed, payload)
        } else if trimmed.starts_with("-----BEGIN SSH SIGNATURE-----") {
            if self.ssh.is_empty() {
                return Err(VerifyError::NoKeys(
                    "SSH signature detected but no SSH public keys found in secret (keys with .sshpub suffix)".into(),
                ));
            }
            self.verify_ssh(trimmed, payload)
        } else if trimmed.starts_with("-----BEGIN SIGNED MESSAGE-----") {
            Err(VerifyError::Unsupported("x509".into()))
        } else if trimmed.is_empty() {
            Err(VerifyError::Unsupported("empty".into()))
        } else {
            Err(VerifyError::Unsupported("unknown".into()))
        }
    }

    fn verify_pgp(&self, armored: &str, payload: &[u8]) -> Result<String, VerifyError> {
        let (sig, _) = DetachedSignature::from_string(armored)
            .map_err(|e| VerifyError::NoMatch(format!("unable to read signature: {e}")))?;
        for key in &self.pgp {
            let primary_ok = sig.verify(&key.primary_key, payload).is_ok();
            let sub_ok = || {
                key.public_subkeys
                    .iter()
                    .any(|s| sig.verify(&s.key, payload).is_ok())
            };
            if primary_ok || sub_ok() {
                let id = key.primary_key.legacy_key_id();
                return Ok(id.as_ref().iter().map(|b| format!("{b:02X}")).collect());
            }
        }
        Err(VerifyError::NoMatch(
            "unable to verify payload with any of the given key rings: no matching key".into(),
        ))
    }

    fn verify_ssh(&self, armored: &str, payload: &[u8]) -> Result<String, VerifyError> {
        let sig = ssh_key::SshSig::from_pem(armored)
            .map_err(|e| VerifyError::NoMatch(format!("unable to read SSH signature: {e}")))?;
        for key in &self.ssh {
            if key.verify("git", payload, &sig).is_ok() {
                return Ok(key.fingerprint(ssh_key::HashAlg::Sha256).to_string());
            }
        }
        Err(VerifyError::NoMatch(
            "unable to verify payload with any of the given authorized keys: no matching key"
                .into(),
        ))
    }
}

/// One authorized_keys line: optional options, then `<algorithm> <base64> [comment]`.
fn authorized_key(line: &str) -> Result<ssh_key::PublicKey, String> {
    if let Ok(k) = ssh_key::PublicKey::from_openssh(line) {
        return Ok(k);
    }
    // Skip a leading options field (`cert-authority`, `no-pty,...`).
    match line.split_once(char::is_whitespace) {
        Some((_, rest)) => ssh_key::PublicKey::from_openssh(rest.trim()).map_err(|e| e.to_string()),
        None => Err("not an authorized_keys line".to_string()),
    }
}
