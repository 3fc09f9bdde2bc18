//! Deploy key pairs: generated (ECDSA P-384 by default, as in Flux) or read from a file.

use ssh_key::rand_core::OsRng;
use ssh_key::{Algorithm, EcdsaCurve, LineEnding, PrivateKey};

use super::SshError;

/// A key pair as it goes into a Secret: `identity` (the private key, OpenSSH format) and
/// `identity.pub` (one authorized-keys line).
#[derive(Debug, Clone)]
pub struct KeyPair {
    /// The private key file's text.
    pub private_key: String,
    /// `<type> <base64>` followed by a newline, as Go's `MarshalAuthorizedKey` writes it.
    pub public_key: String,
}

/// The algorithms `--ssh-key-algorithm` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAlgorithm {
    /// RSA with the given modulus size in bits.
    Rsa(usize),
    /// ECDSA on P-256, P-384 or P-521 (the bit size of the curve).
    Ecdsa(u16),
    /// Ed25519.
    Ed25519,
}

impl KeyPair {
    /// Generates a key pair.
    pub fn generate(algorithm: KeyAlgorithm) -> Result<KeyPair, SshError> {
        let generate = |alg| PrivateKey::random(&mut OsRng, alg);
        let key = match algorithm {
            KeyAlgorithm::Rsa(bits) => ssh_key::private::RsaKeypair::random(&mut OsRng, bits)
                .and_then(|k| PrivateKey::new(k.into(), "")),
            KeyAlgorithm::Ecdsa(bits) => {
                let curve = match bits {
                    256 => EcdsaCurve::NistP256,
                    384 => EcdsaCurve::NistP384,
                    521 => EcdsaCurve::NistP521,
                    other => {
                        return Err(SshError::Generate(format!(
                            "unsupported ECDSA curve P-{other}"
                        )));
                    }
                };
                generate(Algorithm::Ecdsa { curve })
            }
            KeyAlgorithm::Ed25519 => generate(Algorithm::Ed25519),
        }
        .map_err(|e| SshError::Generate(e.to_string()))?;
        Self::from_private(&key, None)
    }

    /// Reads an OpenSSH private key file's text; an encrypted key needs its `password`, which
    /// is checked. The text is kept as it is (still encrypted, as Flux keeps it).
    pub fn load(text: &str, password: Option<&str>) -> Result<KeyPair, SshError> {
        let key = PrivateKey::from_openssh(text).map_err(|e| {
            SshError::Load(format!(
                "failed to parse private key: {e} (an OpenSSH private key is expected)"
            ))
        })?;
        if key.is_encrypted() {
            let Some(password) = password.filter(|p| !p.is_empty()) else {
                return Err(SshError::Load(
                    "the private key is encrypted: give its --password".into(),
                ));
            };
            key.decrypt(password).map_err(|_| {
                SshError::Load("failed to decrypt private key: wrong --password".into())
            })?;
        }
        Self::from_private(&key, Some(text))
    }

    fn from_private(key: &PrivateKey, text: Option<&str>) -> Result<KeyPair, SshError> {
        let mut public = key.public_key().clone();
        public.set_comment("");
        let public_key = public
            .to_openssh()
            .map_err(|e| SshError::Generate(e.to_string()))?;
        let private_key = match text {
            Some(t) => t.to_string(),
            None => key
                .to_openssh(LineEnding::LF)
                .map_err(|e| SshError::Generate(e.to_string()))?
                .to_string(),
        };
        Ok(KeyPair {
            private_key,
            public_key: format!("{}\n", public_key.trim_end()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_each_algorithm() {
        for (alg, prefix) in [
            (KeyAlgorithm::Ecdsa(256), "ecdsa-sha2-nistp256 "),
            (KeyAlgorithm::Ecdsa(384), "ecdsa-sha2-nistp384 "),
            (KeyAlgorithm::Ecdsa(521), "ecdsa-sha2-nistp521 "),
            (KeyAlgorithm::Ed25519, "ssh-ed25519 "),
        ] {
            let pair = KeyPair::generate(alg).unwrap();
            assert!(pair.public_key.starts_with(prefix), "{}", pair.public_key);
            assert!(pair.public_key.ends_with('\n'));
            assert_eq!(pair.public_key.matches(' ').count(), 1);
            assert!(
                pair.private_key
                    .starts_with("-----BEGIN OPENSSH PRIVATE KEY-----\n")
            );
            // What was written reads back to the same public key.
            let again = KeyPair::load(&pair.private_key, None).unwrap();
            assert_eq!(again.public_key, pair.public_key);
        }
        assert!(KeyPair::generate(KeyAlgorithm::Ecdsa(224)).is_err());
    }

    #[test]
    fn refuses_what_it_cannot_use() {
        let e = KeyPair::load("not a key", None).unwrap_err().to_string();
        assert!(e.starts_with("failed to parse private key"), "{e}");
    }
}
