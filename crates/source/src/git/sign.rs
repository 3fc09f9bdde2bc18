//! Commit signing: an OpenPGP key (`git.asc`, optional `passphrase`) or an SSH key (`identity`,
//! optional `password`), as ImageUpdateAutomation's `spec.git.commit.signingKey` names them.
//! Signatures are what `git verify-commit` checks: an armored detached OpenPGP signature, or an
//! SSH signature in the `git` namespace (SHA-512).

use pgp::composed::{Deserializable, DetachedSignature, SignedSecretKey};
use pgp::crypto::hash::HashAlgorithm;
use pgp::types::Password;

/// A key that signs commits.
pub enum Signer {
    /// An OpenPGP secret key and the passphrase that unlocks it.
    OpenPgp {
        /// The key.
        key: Box<SignedSecretKey>,
        /// Which key signs: `None` for the primary key, else the index of a signing subkey.
        subkey: Option<usize>,
        /// The passphrase (empty when the key is not protected).
        passphrase: String,
    },
    /// An SSH private key, decrypted.
    Ssh(Box<ssh_key::PrivateKey>),
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Signer::OpenPgp { .. } => f.write_str("Signer::OpenPgp"),
            Signer::Ssh(_) => f.write_str("Signer::Ssh"),
        }
    }
}

/// Why a signing key could not be read (messages as Flux's image-automation-controller).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SignError(pub String);

impl Signer {
    /// An OpenPGP signer from the Secret `secret`'s `git.asc` and `passphrase`.
    pub fn open_pgp(
        secret: &str,
        armored: &[u8],
        passphrase: Option<&[u8]>,
    ) -> Result<Signer, SignError> {
        let text = String::from_utf8_lossy(armored);
        let keys = SignedSecretKey::from_armor_many(std::io::Cursor::new(text.as_bytes()))
            .map_err(|e| {
                SignError(format!(
                    "could not read signing key from secret '{secret}': {e}"
                ))
            })
            .and_then(|(keys, _)| {
                keys.collect::<Result<Vec<_>, _>>().map_err(|e| {
                    SignError(format!(
                        "could not read signing key from secret '{secret}': {e}"
                    ))
                })
            })?;
        let key = match keys.len() {
            0 => {
                return Err(SignError(format!(
                    "could not read signing key from secret '{secret}': openpgp: invalid argument: no armored data found"
                )));
            }
            1 => keys
                .into_iter()
                .next()
                .ok_or_else(|| SignError(String::new()))?,
            _ => {
                return Err(SignError(format!(
                    "multiple entities read from secret '{secret}', could not determine which signing key to use"
                )));
            }
        };
        let encrypted = key.primary_key.secret_params().is_encrypted();
        let passphrase = match passphrase {
            Some(p) => String::from_utf8_lossy(p)
                .trim_end_matches('\n')
                .to_string(),
            None if encrypted => {
                return Err(SignError(format!(
                    "can not use passphrase protected signing key without 'passphrase' field present in secret {secret}"
                )));
            }
            None => String::new(),
        };
        let subkey = signing_subkey(&key);
        let signer = Signer::OpenPgp {
            key: Box::new(key),
            subkey,
            passphrase,
        };
        // A wrong passphrase shows now rather than at the first commit.
        signer.sign(b"").map_err(|e| {
            SignError(format!(
                "could not decrypt private key of the signing key present in secret {secret}: {}",
                e.0
            ))
        })?;
        Ok(signer)
    }

    /// An SSH signer from the Secret `secret`'s `identity` and `password`.
    pub fn ssh(secret: &str, pem: &[u8], password: Option<&[u8]>) -> Result<Signer, SignError> {
        let key = ssh_key::PrivateKey::from_openssh(pem).map_err(|e| {
            SignError(format!(
                "could not parse SSH signing key from secret '{secret}': {e}"
            ))
        })?;
        let key = if key.is_encrypted() {
            let Some(password) = password else {
                return Err(SignError(format!(
                    "can not use passphrase protected signing key without 'password' field present in secret {secret}"
                )));
            };
            key.decrypt(password).map_err(|e| {
                SignError(format!(
                    "could not parse SSH signing key from secret '{secret}': {e}"
                ))
            })?
        } else {
            key
        };
        Ok(Signer::Ssh(Box::new(key)))
    }

    /// The armored signature of `payload` (a commit without its `gpgsig` header).
    pub fn sign(&self, payload: &[u8]) -> Result<String, SignError> {
        match self {
            Signer::OpenPgp {
                key,
                subkey,
                passphrase,
            } => {
                let password = Password::from(passphrase.as_str());
                let rng = rand::thread_rng();
                let sig = match subkey {
                    Some(i) => {
                        let sub = key
                            .secret_subkeys
                            .get(*i)
                            .ok_or_else(|| SignError("signing subkey missing".into()))?;
                        DetachedSignature::sign_binary_data(
                            rng,
                            &sub.key,
                            &password,
                            HashAlgorithm::Sha256,
                            payload,
                        )
                    }
                    None => DetachedSignature::sign_binary_data(
                        rng,
                        &key.primary_key,
                        &password,
                        HashAlgorithm::Sha256,
                        payload,
                    ),
                }
                .map_err(|e| SignError(e.to_string()))?;
                sig.to_armored_string(Default::default())
                    .map_err(|e| SignError(e.to_string()))
            }
            Signer::Ssh(key) => {
                let sig = key
                    .sign("git", ssh_key::HashAlg::Sha512, payload)
                    .map_err(|e| SignError(e.to_string()))?;
                sig.to_pem(ssh_key::LineEnding::LF)
                    .map_err(|e| SignError(e.to_string()))
            }
        }
    }
}

/// The subkey that signs, when the primary key may not: the last subkey whose binding says it
/// signs (OpenPGP implementations prefer the newest).
fn signing_subkey(key: &SignedSecretKey) -> Option<usize> {
    let primary_signs = key.details.users.iter().all(|u| {
        u.signatures.iter().all(|s| {
            let f = s.key_flags();
            let none = !(f.certify()
                || f.sign()
                || f.encrypt_comms()
                || f.encrypt_storage()
                || f.authentication());
            none || f.sign()
        })
    });
    if primary_signs {
        return None;
    }
    key.secret_subkeys
        .iter()
        .enumerate()
        .filter(|(_, s)| s.signatures.iter().any(|sig| sig.key_flags().sign()))
        .map(|(i, _)| i)
        .next_back()
}
