//! The tree walk: every leaf that the file's rule says is encrypted is decrypted under its path,
//! and every leaf (or only the encrypted ones, with `mac_only_encrypted`) is hashed into the MAC,
//! in document order, as sops' `Tree.Decrypt` does.

use regex::Regex;
use sha2::{Digest, Sha512};

use crate::cipher::{self, CipherError};
use crate::tree::{Branch, Comment, Key, Value};

/// SHA-256 of `sops`: what the MAC starts from when it covers only encrypted values.
const MAC_ONLY_ENCRYPTED_INIT: [u8; 32] = [
    0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47, 0xbe, 0x0b,
    0x0b, 0x97, 0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69,
];

/// Which values a file holds encrypted: at most one rule is set (the default is the
/// `_unencrypted` suffix).
#[derive(Debug, Clone)]
pub enum Rule {
    /// Encrypted unless a key on the path ends with this.
    UnencryptedSuffix(String),
    /// Encrypted only when a key on the path ends with this.
    EncryptedSuffix(String),
    /// Encrypted unless a key on the path matches.
    UnencryptedRegex(Option<Regex>),
    /// Encrypted only when a key on the path matches.
    EncryptedRegex(Option<Regex>),
    /// Encrypted unless a comment above it matches.
    UnencryptedCommentRegex(Option<Regex>),
    /// Encrypted only when a comment above it matches.
    EncryptedCommentRegex(Option<Regex>),
}

/// Why the walk stopped.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// A value could not be decrypted.
    #[error("Could not decrypt value: {0}")]
    Value(#[from] CipherError),
    /// A plaintext where ciphertext was expected.
    #[error("Expected encrypted value as string, but got {0}")]
    NotString(&'static str),
    /// A key that is not a string.
    #[error("Tree contains a non-string key (type {0}): {1}. Only string keys are supported")]
    NonStringKey(&'static str, String),
}

fn matches(re: &Option<Regex>, s: &str) -> bool {
    re.as_ref().is_some_and(|re| re.is_match(s))
}

impl Rule {
    fn encrypted(&self, path: &[String], comments: &[Vec<String>], is_comment: bool) -> bool {
        match self {
            Rule::UnencryptedSuffix(s) => !path.iter().any(|p| p.ends_with(s.as_str())),
            Rule::EncryptedSuffix(s) => path.iter().any(|p| p.ends_with(s.as_str())),
            Rule::UnencryptedRegex(re) => !path.iter().any(|p| matches(re, p)),
            Rule::EncryptedRegex(re) => path.iter().any(|p| matches(re, p)),
            Rule::UnencryptedCommentRegex(re) => !comments.iter().flatten().any(|c| matches(re, c)),
            Rule::EncryptedCommentRegex(re) => {
                let last = comments.len().saturating_sub(1);
                let last_len = comments.last().map_or(0, Vec::len);
                comments.iter().enumerate().any(|(i, cs)| {
                    cs.iter().enumerate().any(|(j, c)| {
                        // The matching comment line itself stays in clear.
                        !(is_comment && i == last && j + 1 == last_len) && matches(re, c)
                    })
                })
            }
        }
    }
}

/// Decrypts `branches` in place with `key` and returns the MAC sops computes over them
/// (upper-case hex of SHA-512).
pub fn decrypt(
    branches: &mut [Branch],
    key: &[u8; 32],
    rule: &Rule,
    mac_only_encrypted: bool,
) -> Result<String, WalkError> {
    let mut w = Walker {
        key,
        rule,
        mac_only_encrypted,
        hash: Sha512::new(),
        path: Vec::new(),
        comments: Vec::new(),
    };
    if mac_only_encrypted {
        w.hash.update(MAC_ONLY_ENCRYPTED_INIT);
    }
    for branch in branches.iter_mut() {
        w.branch(branch)?;
    }
    Ok(w.hash
        .finalize()
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect())
}

struct Walker<'a> {
    key: &'a [u8; 32],
    rule: &'a Rule,
    mac_only_encrypted: bool,
    hash: Sha512,
    path: Vec<String>,
    comments: Vec<Vec<String>>,
}

impl Walker<'_> {
    fn branch(&mut self, branch: &mut Branch) -> Result<(), WalkError> {
        self.comments.push(Vec::new());
        let res = self.branch_items(branch);
        self.comments.pop();
        res
    }

    fn branch_items(&mut self, branch: &mut Branch) -> Result<(), WalkError> {
        for item in branch.iter_mut() {
            match &mut item.key {
                Key::Comment(c) => {
                    self.push_comment(&c.text);
                    let decrypted = self.leaf(Value::Comment(c.clone()))?;
                    match decrypted {
                        Value::Comment(d) => c.text = d.text,
                        Value::Str(s) => c.text = s,
                        other => c.text = String::from_utf8_lossy(&other.mac_bytes()).into(),
                    }
                    continue;
                }
                Key::Other(kind, text) => {
                    return Err(WalkError::NonStringKey(kind, text.clone()));
                }
                Key::Str(k) => {
                    let value_is_comment = matches!(item.value, Value::Comment(_));
                    if let Value::Comment(c) = &item.value {
                        let text = c.text.clone();
                        self.push_comment(&text);
                    }
                    self.path.push(k.clone());
                    let res = self.value(&mut item.value);
                    self.path.pop();
                    res?;
                    if !value_is_comment && let Some(top) = self.comments.last_mut() {
                        top.clear();
                    }
                }
            }
        }
        Ok(())
    }

    fn push_comment(&mut self, text: &str) {
        if let Some(top) = self.comments.last_mut() {
            top.push(text.to_string());
        }
    }

    fn list(&mut self, list: &mut [Value]) -> Result<(), WalkError> {
        self.comments.push(Vec::new());
        let mut res = Ok(());
        for v in list.iter_mut() {
            let is_comment = matches!(v, Value::Comment(_));
            if let Value::Comment(c) = v {
                let text = c.text.clone();
                self.push_comment(&text);
            }
            res = self.value(v);
            if res.is_err() {
                break;
            }
            if !is_comment && let Some(top) = self.comments.last_mut() {
                top.clear();
            }
        }
        self.comments.pop();
        res
    }

    fn value(&mut self, v: &mut Value) -> Result<(), WalkError> {
        match v {
            Value::Null => Ok(()),
            Value::Branch(b) => self.branch(b),
            Value::List(l) => self.list(l),
            leaf => {
                let taken = std::mem::replace(leaf, Value::Null);
                *leaf = self.leaf(taken)?;
                Ok(())
            }
        }
    }

    fn leaf(&mut self, v: Value) -> Result<Value, WalkError> {
        let is_comment = matches!(v, Value::Comment(_));
        let encrypted = self.rule.encrypted(&self.path, &self.comments, is_comment);
        let out = if encrypted {
            let aad = format!("{}:", self.path.join(":"));
            match v {
                // A comment that does not decrypt was never encrypted (older sops).
                Value::Comment(c) => match cipher::decrypt(&c.text, self.key, &aad) {
                    Ok(Value::Comment(d)) => Value::Comment(Comment {
                        text: d.text,
                        inline: c.inline,
                    }),
                    Ok(Value::Str(s)) if c.text.is_empty() => Value::Comment(Comment {
                        text: s,
                        inline: c.inline,
                    }),
                    Ok(other) => other,
                    Err(_) => Value::Comment(c),
                },
                Value::Str(s) => cipher::decrypt(&s, self.key, &aad)?,
                other => return Err(WalkError::NotString(other.go_type())),
            }
        } else {
            v
        };
        // Comments are never hashed, also those that were list elements (encrypted comments in
        // a list are stored as strings), as sops 3.11 decides on the decrypted value.
        if (!self.mac_only_encrypted || encrypted) && !matches!(out, Value::Comment(_)) {
            self.hash.update(out.mac_bytes());
        }
        Ok(out)
    }
}
