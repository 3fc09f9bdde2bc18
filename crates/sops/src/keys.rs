//! The private keys a decryption may use (age identities, SSH keys for age's SSH recipients,
//! OpenPGP secret keys) and the recovery of the data key from the file's key groups, with
//! sops' report when no key works.

use std::io::Read;

use pgp::composed::{Deserializable, Message, SignedSecretKey};
use pgp::types::Password;
use zeroize::Zeroizing;

use crate::metadata::{MasterKey, Metadata};

/// Why a key could not be added.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// An age identity line sops would not accept.
    #[error("failed to parse and add to age identities: {0}")]
    Age(String),
    /// An OpenPGP key that does not parse.
    #[error("failed to import armored key data: {0}")]
    Pgp(String),
}

/// The private keys available to a decryption.
#[derive(Default)]
pub struct Keys {
    age: Vec<Box<dyn age::Identity + Send + Sync>>,
    pgp: Vec<SignedSecretKey>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys")
            .field("age", &self.age.len())
            .field("pgp", &self.pgp.len())
            .finish()
    }
}

impl Keys {
    /// No keys.
    pub fn new() -> Keys {
        Keys::default()
    }

    /// Whether no key was added.
    pub fn is_empty(&self) -> bool {
        self.age.is_empty() && self.pgp.is_empty()
    }

    /// Adds age identities from a key file's text, as Flux reads a `.agekey` entry: one
    /// identity per line, blank lines and `#` comments skipped, CRLF accepted. An OpenSSH
    /// private key (unencrypted ed25519 or RSA) is accepted too, for files encrypted to SSH
    /// recipients.
    pub fn add_age(&mut self, text: &str) -> Result<(), KeyError> {
        if text.trim_start().starts_with("-----BEGIN") {
            return self.add_ssh(text);
        }
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.starts_with("AGE-SECRET-KEY-PQ-1") {
                return Err(KeyError::Age(
                    "post-quantum (mlkem768x25519) identities are not supported yet".into(),
                ));
            }
            if line.starts_with("AGE-PLUGIN-") {
                return Err(KeyError::Age(
                    "age plugin identities need an external plugin binary, which is not supported"
                        .into(),
                ));
            }
            let id: age::x25519::Identity = line
                .parse()
                .map_err(|_| KeyError::Age("unknown identity type".into()))?;
            self.age.push(Box::new(id));
        }
        Ok(())
    }

    fn add_ssh(&mut self, text: &str) -> Result<(), KeyError> {
        let id = age::ssh::Identity::from_buffer(text.as_bytes(), None)
            .map_err(|e| KeyError::Age(format!("invalid SSH private key: {e}")))?;
        match id {
            age::ssh::Identity::Unencrypted(_) => {
                self.age.push(Box::new(id));
                Ok(())
            }
            age::ssh::Identity::Encrypted(_) => Err(KeyError::Age(
                "SSH private keys protected by a passphrase are not supported".into(),
            )),
            age::ssh::Identity::Unsupported(_) => Err(KeyError::Age(
                "unsupported SSH key type (age takes ssh-ed25519 and ssh-rsa)".into(),
            )),
        }
    }

    /// Adds every secret key of an armored OpenPGP key block (public keys in it are ignored).
    /// Keys protected by a passphrase are refused, as Flux's keyring cannot use them either.
    pub fn add_pgp(&mut self, armored: &str) -> Result<(), KeyError> {
        let (keys, _) = SignedSecretKey::from_armor_many(armored.as_bytes())
            .map_err(|e| KeyError::Pgp(e.to_string()))?;
        let mut added = 0;
        for key in keys {
            match key {
                Ok(k) => {
                    self.pgp.push(k);
                    added += 1;
                }
                Err(e) => return Err(KeyError::Pgp(e.to_string())),
            }
        }
        if added == 0 {
            return Err(KeyError::Pgp("no secret key in the armored data".into()));
        }
        Ok(())
    }

    fn decrypt_age(&self, enc: &str) -> Result<Zeroizing<Vec<u8>>, String> {
        const PREFIX: &str = "failed to create reader for decrypting sops data key with age";
        if self.age.is_empty() {
            return Err(
                "failed to load age identities: no age identity was given in the decryption Secret"
                    .into(),
            );
        }
        let armored = age::armor::ArmoredReader::new(enc.as_bytes());
        let decryptor = age::Decryptor::new(armored).map_err(|e| format!("{PREFIX}: {e}"))?;
        let ids = self.age.iter().map(|i| i.as_ref() as &dyn age::Identity);
        let mut reader = decryptor.decrypt(ids).map_err(|e| match e {
            age::DecryptError::NoMatchingKeys => {
                format!("{PREFIX}: no identity matched any of the recipients")
            }
            other => format!("{PREFIX}: {other}"),
        })?;
        let mut out = Zeroizing::new(Vec::new());
        reader
            .read_to_end(&mut out)
            .map_err(|e| format!("failed to read sops data key: {e}"))?;
        Ok(out)
    }

    fn decrypt_pgp(&self, enc: &str) -> Result<Zeroizing<Vec<u8>>, String> {
        const PREFIX: &str =
            "could not decrypt data key with PGP key: failed to decrypt sops data key with pgp";
        if self.pgp.is_empty() {
            return Err(format!("{PREFIX}: decryption failed: No secret key"));
        }
        let (msg, _) = Message::from_string(enc).map_err(|e| format!("{PREFIX}: {e}"))?;
        let pw = Password::empty();
        let msg = msg
            .decrypt_with_keys(vec![&pw; self.pgp.len()], self.pgp.iter().collect())
            .map_err(|e| match e {
                pgp::errors::Error::MissingKey => {
                    format!("{PREFIX}: decryption failed: No secret key")
                }
                other => format!("{PREFIX}: {other}"),
            })?;
        let mut msg = if msg.is_compressed() {
            msg.decompress().map_err(|e| format!("{PREFIX}: {e}"))?
        } else {
            msg
        };
        let data = msg.as_data_vec().map_err(|e| format!("{PREFIX}: {e}"))?;
        if data.is_empty() {
            return Err("failed to decrypt sops data key with pgp: zero bytes returned".into());
        }
        Ok(Zeroizing::new(data))
    }

    fn decrypt_key(&self, key: &MasterKey) -> Result<Zeroizing<Vec<u8>>, String> {
        match key {
            MasterKey::Age { enc, .. } => self.decrypt_age(enc),
            MasterKey::Pgp { enc, .. } => self.decrypt_pgp(enc),
            MasterKey::Remote { provider, .. } => Err(format!(
                "{provider} keys need the key service over the network, which Tidegate does not support; add an age or PGP recipient to the file"
            )),
        }
    }
}

/// No key group (or too few of them) gave its part of the data key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{report}")]
pub struct DataKeyError {
    /// sops' multi-line report (`Failed to get the data key required to decrypt the SOPS
    /// file.` and a block per group).
    pub report: String,
}

/// Recovers the 32-byte data key from the metadata's key groups.
pub fn data_key(meta: &Metadata, keys: &Keys) -> Result<Zeroizing<[u8; 32]>, DataKeyError> {
    let mut parts: Vec<Zeroizing<Vec<u8>>> = Vec::new();
    let mut results: Vec<Result<(), Vec<(String, String)>>> = Vec::new();
    for group in &meta.groups {
        let mut errors = Vec::new();
        let mut got = None;
        for key in group {
            match keys.decrypt_key(key) {
                Ok(part) => {
                    got = Some(part);
                    break;
                }
                Err(e) => errors.push((key.id().to_string(), e)),
            }
        }
        match got {
            Some(part) => {
                parts.push(part);
                results.push(Ok(()));
            }
            None => results.push(Err(errors)),
        }
    }
    let fail = |required: usize| DataKeyError {
        report: report(&results, required),
    };
    let key: Zeroizing<Vec<u8>> = if meta.groups.len() == 1 {
        parts.pop().ok_or_else(|| fail(0))?
    } else {
        if parts.len() < meta.shamir_threshold || parts.is_empty() {
            return Err(fail(meta.shamir_threshold));
        }
        crate::shamir::combine(&parts).map_err(|e| DataKeyError {
            report: format!("could not get data key from shamir parts: {e}"),
        })?
    };
    let mut out = Zeroizing::new([0u8; 32]);
    if key.len() != 32 {
        return Err(DataKeyError {
            report: format!(
                "the recovered data key is {} bytes long; sops data keys are 32 bytes",
                key.len()
            ),
        });
    }
    out.copy_from_slice(&key);
    Ok(out)
}

/// sops' user-facing report of a failed recovery.
fn report(results: &[Result<(), Vec<(String, String)>>], required: usize) -> String {
    let groups: Vec<String> = results
        .iter()
        .enumerate()
        .map(|(i, r)| match r {
            Ok(()) => format!("Group {i}: SUCCESS"),
            Err(errors) => {
                let keys: Vec<String> = errors
                    .iter()
                    .map(|(id, e)| {
                        let wrapped = wrap(e, 60);
                        let mut body = String::new();
                        for (n, line) in wrapped.split('\n').enumerate() {
                            if n > 0 {
                                body.push('\n');
                            }
                            body.push_str(if n == 0 { "- | " } else { "  | " });
                            body.push_str(line);
                        }
                        let indented: Vec<String> =
                            body.split('\n').map(|l| format!("  {l}")).collect();
                        format!("{id}: FAILED\n{}", indented.join("\n"))
                    })
                    .collect();
                let message = keys.join("\n\n");
                let indented: Vec<String> = message.split('\n').map(|l| format!("  {l}")).collect();
                format!("Group {i}: FAILED\n{}", indented.join("\n"))
            }
        })
        .collect();
    let successful = results.iter().filter(|r| r.is_ok()).count();
    let trailer = if required == 0 {
        "Recovery failed because no master key was able to decrypt the file. In order for SOPS to recover the file, at least one key has to be successful, but none were.".to_string()
    } else {
        format!(
            "Recovery failed because the file was encrypted with a Shamir threshold of {required}, but only {successful} part(s) were successfully recovered, one for each successful key group. In order for SOPS to recover the file, at least {required} groups have to be successful. In order for a group to be successful, decryption has to succeed with any of the keys in that key group."
        )
    };
    format!(
        "Failed to get the data key required to decrypt the SOPS file.\n\n{}\n\n{}",
        groups.join("\n\n"),
        wrap(&trailer, 75)
    )
}

/// go-wordwrap: breaks at spaces so lines stay within `limit` where words allow.
fn wrap(s: &str, limit: usize) -> String {
    let mut out = String::new();
    for (n, para) in s.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let mut line_len = 0;
        for (i, word) in para.split(' ').enumerate() {
            let w = word.chars().count();
            if i > 0 {
                if line_len + 1 + w > limit {
                    out.push('\n');
                    line_len = 0;
                } else {
                    out.push(' ');
                    line_len += 1;
                }
            }
            out.push_str(word);
            line_len += w;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap_as_go_wordwrap() {
        assert_eq!(wrap("aaa bbb ccc", 7), "aaa bbb\nccc");
        assert_eq!(
            wrap("averyveryverylongword b", 5),
            "averyveryverylongword\nb"
        );
    }
}
