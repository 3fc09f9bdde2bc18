//! SOPS decryption, in memory, as `sops -d` and Flux's kustomize-controller do it.
//!
//! [`decrypt`] takes a file's bytes, the format it is stored in and the format to write, and
//! the [`Keys`] at hand; it loads the tree with the input store, takes out the metadata,
//! recovers the data key, decrypts every value under its path, checks the MAC and writes the
//! plaintext with the output store. [`decrypt_object`] decrypts a JSON object that carries its
//! own `sops` field (a whole Kubernetes resource).

pub mod cipher;
pub mod keys;
pub mod metadata;
mod shamir;
pub mod store;
pub mod tree;
pub mod walk;

use zeroize::Zeroizing;

pub use keys::{DataKeyError, KeyError, Keys};
pub use store::StoreError;

use crate::tree::{Branch, Value};

/// A sops store format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// YAML documents.
    Yaml,
    /// A JSON object.
    Json,
    /// `KEY=value` lines.
    Dotenv,
    /// INI sections.
    Ini,
    /// Any bytes (a JSON envelope when encrypted).
    Binary,
}

impl Format {
    /// The format Flux infers from a file or key name: `.yaml`/`.yml`, `.json` (and a name
    /// ending in `.dockerconfigjson`), `.env`, `.ini`, and binary for anything else.
    pub fn from_path(name: &str) -> Format {
        if name.ends_with(".dockerconfigjson") {
            return Format::Json;
        }
        let ext = std::path::Path::new(name)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("");
        match ext {
            "yaml" | "yml" => Format::Yaml,
            "json" => Format::Json,
            "env" => Format::Dotenv,
            "ini" => Format::Ini,
            _ => Format::Binary,
        }
    }

    /// The name Flux's messages use.
    pub fn name(self) -> &'static str {
        match self {
            Format::Yaml => "YAML",
            Format::Json => "JSON",
            Format::Dotenv => "dotenv",
            Format::Ini => "INI",
            Format::Binary => "binary",
        }
    }

    /// The bytes whose presence marks a file of this format as sops-encrypted (Flux's test).
    pub fn marker(self) -> &'static [u8] {
        match self {
            Format::Yaml => b"mac: ENC[",
            Format::Json | Format::Binary => b"\"mac\": \"ENC[",
            Format::Dotenv => b"sops_mac=ENC[",
            Format::Ini => b"[sops]",
        }
    }

    /// Whether `data` carries this format's marker.
    pub fn is_encrypted(self, data: &[u8]) -> bool {
        let m = self.marker();
        data.windows(m.len()).any(|w| w == m)
    }

    /// The format whose marker `data` carries, tried in the order JSON, YAML, dotenv, INI.
    pub fn detect(data: &[u8]) -> Option<Format> {
        [Format::Json, Format::Yaml, Format::Dotenv, Format::Ini]
            .into_iter()
            .find(|f| f.is_encrypted(data))
    }
}

/// Why a decryption failed; the messages are Flux's.
#[derive(Debug, thiserror::Error)]
pub enum DecryptError {
    /// The input does not load in its format, or its metadata is unusable.
    #[error("failed to load encrypted {format} data: {message}")]
    Load {
        /// The input format's name.
        format: &'static str,
        /// What went wrong.
        message: String,
    },
    /// No key recovered the data key.
    #[error("cannot get sops data key: {0}")]
    DataKey(#[from] DataKeyError),
    /// A value did not decrypt.
    #[error("error decrypting sops tree: Error walking tree: {0}")]
    Tree(#[from] walk::WalkError),
    /// The MAC does not match: the file was changed after it was encrypted.
    #[error("failed to verify sops data integrity: expected mac '{expected}', got '{computed}'")]
    Mac {
        /// The MAC stored in the file (`no MAC` when it has none).
        expected: String,
        /// The MAC of the decrypted values.
        computed: String,
    },
    /// The stored MAC itself did not decrypt.
    #[error("failed to verify sops data integrity: {0}")]
    MacUnreadable(String),
    /// The plaintext cannot be written in the output format.
    #[error("failed to emit encrypted {input} file as decrypted {output}: {message}")]
    Emit {
        /// The input format's name.
        input: &'static str,
        /// The output format's name.
        output: &'static str,
        /// What went wrong.
        message: String,
    },
}

/// Decrypts `data` stored as `input` and writes the plaintext as `output`, checking the MAC.
pub fn decrypt(
    data: &[u8],
    input: Format,
    output: Format,
    keys: &Keys,
) -> Result<Zeroizing<Vec<u8>>, DecryptError> {
    let load_err = |message: String| DecryptError::Load {
        format: input.name(),
        message,
    };
    let branches = match input {
        Format::Yaml => store::load_yaml(data),
        Format::Json | Format::Binary => store::json::load(data),
        Format::Dotenv => store::dotenv::load(data),
        Format::Ini => store::ini::load(data),
    }
    .map_err(|e| load_err(e.to_string()))?;
    decrypt_loaded(branches, input, output, keys)
}

/// Takes the metadata out of loaded `branches`, decrypts them and writes them as `output`.
fn decrypt_loaded(
    mut branches: Vec<Branch>,
    input: Format,
    output: Format,
    keys: &Keys,
) -> Result<Zeroizing<Vec<u8>>, DecryptError> {
    let load_err = |message: String| DecryptError::Load {
        format: input.name(),
        message,
    };
    let meta_json = match input {
        Format::Yaml | Format::Json | Format::Binary => metadata::take(&mut branches),
        Format::Dotenv => flat(store::dotenv::take_metadata(&mut branches)),
        Format::Ini => flat(store::ini::take_metadata(&mut branches)),
    }
    .map_err(|e| load_err(e.to_string()))?;
    let meta = metadata::parse(&meta_json).map_err(|e| load_err(e.to_string()))?;
    decrypt_branches(&mut branches, &meta, keys, true)?;
    let out = match output {
        Format::Yaml => store::emit_yaml(&branches),
        Format::Json => store::json::emit(&branches),
        Format::Dotenv => store::dotenv::emit(&branches),
        Format::Ini => store::ini::emit(&branches),
        Format::Binary => store::json::emit_binary(&branches),
    }
    .map_err(|e| DecryptError::Emit {
        input: input.name(),
        output: output.name(),
        message: e.to_string(),
    })?;
    drop_tree(branches);
    Ok(Zeroizing::new(out))
}

/// Decrypts a YAML stream of resources. A file sops encrypted as a whole (metadata in the
/// first document only, the others encrypted too) is decrypted as `sops -d` would; a stream of
/// documents each encrypted on its own (each with its own `sops`) has each one decrypted with
/// its own metadata and MAC, and plain documents among them left as they are. A document for
/// which `include` (given the document without `sops`) says no stays encrypted.
pub fn decrypt_stream(
    data: &[u8],
    keys: &Keys,
    include: &dyn Fn(&serde_json::Value) -> bool,
) -> Result<Zeroizing<Vec<u8>>, DecryptError> {
    let load_err = |message: String| DecryptError::Load {
        format: "YAML",
        message,
    };
    let mut branches = store::load_yaml(data).map_err(|e| load_err(e.to_string()))?;
    let has_meta = |b: &Branch| b.iter().any(|it| it.key_str() == Some("sops"));
    let with_meta: Vec<usize> = (0..branches.len())
        .filter(|&i| has_meta(&branches[i]))
        .collect();
    let plain_json = |b: &Branch| {
        let rest: Branch = b
            .iter()
            .filter(|it| it.key_str() != Some("sops"))
            .cloned()
            .collect();
        store::json::to_json(&Value::Branch(rest))
    };
    let whole =
        with_meta == [0] && (branches.len() == 1 || branches[1..].iter().any(holds_ciphertext));
    if whole {
        if !include(&plain_json(&branches[0])) {
            return Ok(Zeroizing::new(data.to_vec()));
        }
        // The stream was loaded once already: decrypt what was read.
        return decrypt_loaded(branches, Format::Yaml, Format::Yaml, keys);
    }
    for i in with_meta {
        if !include(&plain_json(&branches[i])) {
            continue;
        }
        let one = std::slice::from_mut(&mut branches[i]);
        let meta_json = metadata::take(one).map_err(|e| load_err(e.to_string()))?;
        let meta = metadata::parse(&meta_json).map_err(|e| load_err(e.to_string()))?;
        decrypt_branches(one, &meta, keys, true)?;
    }
    let out = store::emit_yaml(&branches).map_err(|e| DecryptError::Emit {
        input: "YAML",
        output: "YAML",
        message: e.to_string(),
    })?;
    drop_tree(branches);
    Ok(Zeroizing::new(out))
}

/// Whether a document holds an encrypted value anywhere.
fn holds_ciphertext(b: &Branch) -> bool {
    fn value(v: &Value) -> bool {
        match v {
            Value::Str(s) => cipher::is_encrypted(s),
            Value::Branch(b) => holds_ciphertext(b),
            Value::List(l) => l.iter().any(value),
            _ => false,
        }
    }
    b.iter().any(|it| value(&it.value))
}

fn flat(pairs: Vec<(String, String)>) -> Result<serde_json::Value, metadata::MetadataError> {
    if pairs.is_empty() {
        return Err(metadata::MetadataError::NotFound);
    }
    metadata::unflatten(&pairs)
}

/// Decrypts a JSON object with a top-level `sops` field in place of itself (the `sops` field
/// removed). `verify_mac` is off for objects a build has changed since they were encrypted.
pub fn decrypt_object(
    object: &serde_json::Value,
    keys: &Keys,
    verify_mac: bool,
) -> Result<serde_json::Value, DecryptError> {
    let load_err = |message: String| DecryptError::Load {
        format: "JSON",
        message,
    };
    let mut branches = match store::json::from_json(object.clone()) {
        Value::Branch(b) => vec![b],
        _ => return Err(load_err("expected a JSON object".into())),
    };
    let meta_json = metadata::take(&mut branches).map_err(|e| load_err(e.to_string()))?;
    let meta = metadata::parse(&meta_json).map_err(|e| load_err(e.to_string()))?;
    decrypt_branches(&mut branches, &meta, keys, verify_mac)?;
    let out = branches
        .pop()
        .map(|b| store::json::to_json(&Value::Branch(b)))
        .unwrap_or(serde_json::Value::Null);
    Ok(out)
}

fn decrypt_branches(
    branches: &mut [Branch],
    meta: &metadata::Metadata,
    keys: &Keys,
    verify_mac: bool,
) -> Result<(), DecryptError> {
    let key = keys::data_key(meta, keys)?;
    let computed = walk::decrypt(branches, &key, &meta.rule, meta.mac_only_encrypted)?;
    if verify_mac {
        let stored = match cipher::decrypt(&meta.mac, &key, &meta.last_modified) {
            Ok(Value::Str(s)) => s,
            Ok(other) => String::from_utf8_lossy(&other.mac_bytes()).into_owned(),
            Err(e) => return Err(DecryptError::MacUnreadable(e.to_string())),
        };
        if stored != computed {
            return Err(DecryptError::Mac {
                expected: if stored.is_empty() {
                    "no MAC".into()
                } else {
                    stored
                },
                computed,
            });
        }
    }
    Ok(())
}

/// Drops a decrypted tree after overwriting its strings, so plaintext does not linger.
fn drop_tree(branches: Vec<Branch>) {
    use zeroize::Zeroize;
    fn value(v: Value) {
        match v {
            Value::Str(mut s) | Value::Time(mut s) => s.zeroize(),
            Value::Bytes(mut b) => b.zeroize(),
            Value::Comment(mut c) => c.text.zeroize(),
            Value::Branch(b) => branch(b),
            Value::List(l) => l.into_iter().for_each(value),
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {}
        }
    }
    fn branch(b: Branch) {
        for it in b {
            value(it.value);
        }
    }
    branches.into_iter().for_each(branch);
}
