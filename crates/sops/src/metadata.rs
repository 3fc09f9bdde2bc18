//! The `sops` metadata: when the file was written, its encrypted MAC, which values are
//! encrypted, and the master keys (in key groups) that each hold the data key.

use regex::Regex;
use serde_json::{Map, Value as Json};

use crate::tree::{Branch, Value};
use crate::walk::Rule;

/// Why the metadata is unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetadataError {
    /// The document has no `sops` section.
    #[error("sops metadata not found")]
    NotFound,
    /// `lastmodified` does not parse.
    #[error("parsing time {0:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {0:?} as \"2006\"")]
    LastModified(String),
    /// A key's `created_at` does not parse.
    #[error("parsing time {0:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {0:?} as \"2006\"")]
    CreatedAt(String),
    /// More than one rule says which values are encrypted.
    #[error(
        "Cannot use more than one of encrypted_suffix, unencrypted_suffix, encrypted_regex, unencrypted_regex, encrypted_comment_regex, or unencrypted_comment_regex in the same file"
    )]
    Rules,
    /// No master key at all.
    #[error("No keys found in file")]
    NoKeys,
    /// A field of the wrong shape.
    #[error("invalid sops metadata: {0}")]
    Invalid(String),
}

/// One master key entry: something that holds the data key (or a Shamir part of it).
#[derive(Debug, Clone, PartialEq)]
pub enum MasterKey {
    /// An age recipient; `enc` is an armored age file.
    Age {
        /// The recipient (informational; every identity is tried).
        recipient: String,
        /// The armored age file holding the key.
        enc: String,
    },
    /// An OpenPGP key; `enc` is an armored OpenPGP message.
    Pgp {
        /// The key's fingerprint.
        fingerprint: String,
        /// The armored message holding the key.
        enc: String,
    },
    /// A key service Tidegate cannot reach offline (cloud KMS, Vault).
    Remote {
        /// `AWS KMS`, `GCP KMS`, `Azure Key Vault`, `HashiCorp Vault`, `HuaweiCloud KMS`.
        provider: &'static str,
        /// The key's identifier as sops prints it.
        id: String,
    },
}

impl MasterKey {
    /// The key's name in sops' messages.
    pub fn id(&self) -> &str {
        match self {
            MasterKey::Age { recipient, .. } => recipient,
            MasterKey::Pgp { fingerprint, .. } => fingerprint,
            MasterKey::Remote { id, .. } => id,
        }
    }

    fn order(&self) -> u8 {
        match self {
            MasterKey::Age { .. } => 0,
            MasterKey::Pgp { .. } => 1,
            MasterKey::Remote { .. } => 2,
        }
    }
}

/// The parsed metadata.
#[derive(Debug, Clone)]
pub struct Metadata {
    /// `lastmodified` as Go formats RFC 3339 (the MAC's additional data).
    pub last_modified: String,
    /// The encrypted MAC (`""` when the file has none).
    pub mac: String,
    /// Which values are encrypted.
    pub rule: Rule,
    /// The MAC covers only encrypted values.
    pub mac_only_encrypted: bool,
    /// Groups needed to rebuild the key (0 when unset).
    pub shamir_threshold: usize,
    /// Key groups, each in the order its keys are tried (age, then PGP, then the rest).
    pub groups: Vec<Vec<MasterKey>>,
}

/// Takes the `sops` item out of the first document (and out of every other document).
pub fn take(branches: &mut [Branch]) -> Result<Json, MetadataError> {
    let mut found = None;
    for (i, branch) in branches.iter_mut().enumerate() {
        let mut at = Vec::new();
        for (j, item) in branch.iter().enumerate() {
            if item.key_str() == Some("sops") {
                at.push(j);
            }
        }
        if i == 0 {
            if at.len() > 1 {
                return Err(MetadataError::Invalid("Found duplicate sops entry".into()));
            }
            if let Some(&j) = at.first() {
                let item = branch.remove(j);
                match item.value {
                    Value::Branch(b) => {
                        found = Some(crate::store::json::to_json(&Value::Branch(b)))
                    }
                    _ => {
                        return Err(MetadataError::Invalid(
                            "Found sops entry that is not a mapping".into(),
                        ));
                    }
                }
            }
        } else {
            for j in at.into_iter().rev() {
                branch.remove(j);
            }
        }
    }
    found.ok_or(MetadataError::NotFound)
}

/// Takes flattened metadata (`sops_`-prefixed dotenv lines, or the `[sops]` INI section's keys
/// without prefix) and rebuilds the nested form.
pub fn unflatten(flat: &[(String, String)]) -> Result<Json, MetadataError> {
    let mut root = Json::Object(Map::new());
    let mut sorted: Vec<&(String, String)> = flat.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (key, value) in sorted {
        let tokens = tokens(key);
        insert(&mut root, &tokens, Json::String(value.replace("\\n", "\n")))?;
    }
    lists(&mut root)?;
    Ok(root)
}

#[derive(Debug)]
enum Token {
    Map(String),
    List(usize),
}

fn tokens(key: &str) -> Vec<Token> {
    let next_marker = |from: usize| {
        [key[from..].find("__map_"), key[from..].find("__list_")]
            .into_iter()
            .flatten()
            .min()
            .map(|i| i + from)
    };
    let first_end = next_marker(0).unwrap_or(key.len());
    let mut out = vec![Token::Map(key[..first_end].to_string())];
    let mut pos = first_end;
    while pos < key.len() {
        let list = key[pos..].starts_with("__list_");
        let start = pos + if list { 7 } else { 6 };
        let end = next_marker(start).unwrap_or(key.len());
        let segment = &key[start..end];
        out.push(match (list, segment.parse()) {
            (true, Ok(n)) => Token::List(n),
            _ => Token::Map(segment.to_string()),
        });
        pos = end;
    }
    out
}

/// Lists are built as objects keyed `#<index>` and turned into arrays afterwards.
fn insert(node: &mut Json, tokens: &[Token], value: Json) -> Result<(), MetadataError> {
    let Some((first, rest)) = tokens.split_first() else {
        return Ok(());
    };
    let key = match first {
        Token::Map(k) => k.clone(),
        Token::List(i) => format!("#{i:010}"),
    };
    let Json::Object(map) = node else {
        return Err(MetadataError::Invalid("Type mismatch".into()));
    };
    if rest.is_empty() {
        if map.get(&key).is_some_and(Json::is_object) {
            return Err(MetadataError::Invalid("Type mismatch".into()));
        }
        map.insert(key, value);
        return Ok(());
    }
    let child = map.entry(key).or_insert_with(|| Json::Object(Map::new()));
    if !child.is_object() {
        return Err(MetadataError::Invalid("Type mismatch".into()));
    }
    insert(child, rest, value)
}

fn lists(node: &mut Json) -> Result<(), MetadataError> {
    if let Json::Object(map) = node {
        for v in map.values_mut() {
            lists(v)?;
        }
        if !map.is_empty() && map.keys().all(|k| k.starts_with('#')) {
            let mut entries: Vec<(usize, Json)> = std::mem::take(map)
                .into_iter()
                .map(|(k, v)| (k[1..].parse().unwrap_or(usize::MAX), v))
                .collect();
            entries.sort_by_key(|(i, _)| *i);
            if entries.iter().enumerate().any(|(n, (i, _))| n != *i) {
                return Err(MetadataError::Invalid("Incomplete list".into()));
            }
            *node = Json::Array(entries.into_iter().map(|(_, v)| v).collect());
        }
    }
    Ok(())
}

fn string(v: Option<&Json>) -> String {
    match v {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Number(n)) => n.to_string(),
        Some(Json::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

/// Go's RFC 3339 re-formatting: whole seconds, `Z` for UTC.
fn rfc3339(s: &str) -> Option<String> {
    let t = chrono::DateTime::parse_from_rfc3339(s).ok()?;
    let offset = t.offset().local_minus_utc();
    let base = t.format("%Y-%m-%dT%H:%M:%S").to_string();
    if offset == 0 {
        Some(format!("{base}Z"))
    } else {
        let sign = if offset < 0 { '-' } else { '+' };
        let o = offset.abs();
        Some(format!(
            "{base}{sign}{:02}:{:02}",
            o / 3600,
            (o % 3600) / 60
        ))
    }
}

fn regex(s: &str) -> Option<Regex> {
    Regex::new(s).ok()
}

/// Reads the metadata taken out of a document.
pub fn parse(json: &Json) -> Result<Metadata, MetadataError> {
    let get = |k: &str| json.get(k);
    let last = string(get("lastmodified"));
    let last_modified = rfc3339(&last).ok_or(MetadataError::LastModified(last))?;
    let rules: Vec<(&str, String)> = [
        "unencrypted_suffix",
        "encrypted_suffix",
        "unencrypted_regex",
        "encrypted_regex",
        "unencrypted_comment_regex",
        "encrypted_comment_regex",
    ]
    .into_iter()
    .map(|k| (k, string(get(k))))
    .filter(|(_, v)| !v.is_empty())
    .collect();
    if rules.len() > 1 {
        return Err(MetadataError::Rules);
    }
    let rule = match rules.first() {
        None => Rule::UnencryptedSuffix("_unencrypted".into()),
        Some((k, v)) => match *k {
            "unencrypted_suffix" => Rule::UnencryptedSuffix(v.clone()),
            "encrypted_suffix" => Rule::EncryptedSuffix(v.clone()),
            "unencrypted_regex" => Rule::UnencryptedRegex(regex(v)),
            "encrypted_regex" => Rule::EncryptedRegex(regex(v)),
            "unencrypted_comment_regex" => Rule::UnencryptedCommentRegex(regex(v)),
            _ => Rule::EncryptedCommentRegex(regex(v)),
        },
    };
    let mac_only_encrypted = match get("mac_only_encrypted") {
        Some(Json::Bool(b)) => *b,
        Some(Json::String(s)) => matches!(s.as_str(), "true" | "True" | "TRUE" | "1" | "t" | "T"),
        _ => false,
    };
    let shamir_threshold = match get("shamir_threshold") {
        Some(Json::Number(n)) => n.as_u64().unwrap_or(0) as usize,
        Some(Json::String(s)) => s.parse().unwrap_or(0),
        _ => 0,
    };
    let top = group(json)?;
    let groups = if !top.is_empty() {
        vec![top]
    } else {
        match get("key_groups") {
            Some(Json::Array(gs)) => gs.iter().map(group).collect::<Result<Vec<_>, _>>()?,
            _ => Vec::new(),
        }
    };
    if groups.iter().all(Vec::is_empty) {
        return Err(MetadataError::NoKeys);
    }
    Ok(Metadata {
        last_modified,
        mac: string(get("mac")),
        rule,
        mac_only_encrypted,
        shamir_threshold,
        groups,
    })
}

/// One key group's keys, in the order sops tries them.
fn group(json: &Json) -> Result<Vec<MasterKey>, MetadataError> {
    let list = |k: &str| -> Vec<&Json> {
        match json.get(k) {
            Some(Json::Array(a)) => a.iter().collect(),
            _ => Vec::new(),
        }
    };
    let created = |e: &Json| -> Result<(), MetadataError> {
        let c = string(e.get("created_at"));
        rfc3339(&c).map(|_| ()).ok_or(MetadataError::CreatedAt(c))
    };
    let s = |e: &Json, k: &str| string(e.get(k));
    let mut keys = Vec::new();
    // Keys only a network service can open, in sops' order, with how sops names them.
    type Id<'a> = &'a dyn Fn(&Json) -> String;
    let remote: [(&str, &'static str, Id); 5] = [
        ("kms", "AWS KMS", &|e| s(e, "arn")),
        ("gcp_kms", "GCP KMS", &|e| s(e, "resource_id")),
        ("hckms", "HuaweiCloud KMS", &|e| s(e, "key_id")),
        ("azure_kv", "Azure Key Vault", &|e| {
            format!(
                "{}/keys/{}/{}",
                s(e, "vault_url"),
                s(e, "name"),
                s(e, "version")
            )
        }),
        ("hc_vault", "HashiCorp Vault", &|e| {
            format!(
                "{}/v1/{}/keys/{}",
                s(e, "vault_address"),
                s(e, "engine_path"),
                s(e, "key_name")
            )
        }),
    ];
    for (field, provider, id) in remote {
        for e in list(field) {
            created(e)?;
            keys.push(MasterKey::Remote {
                provider,
                id: id(e),
            });
        }
    }
    for e in list("pgp") {
        created(e)?;
        keys.push(MasterKey::Pgp {
            fingerprint: s(e, "fp"),
            enc: s(e, "enc"),
        });
    }
    for e in list("age") {
        keys.push(MasterKey::Age {
            recipient: s(e, "recipient"),
            enc: s(e, "enc"),
        });
    }
    keys.sort_by_key(MasterKey::order);
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattened_metadata_unflattens() {
        let flat = vec![
            (
                "age__list_0__map_recipient".to_string(),
                "age1x".to_string(),
            ),
            ("age__list_0__map_enc".to_string(), "a\\nb".to_string()),
            (
                "key_groups__list_1__map_pgp__list_0__map_fp".to_string(),
                "F".to_string(),
            ),
            (
                "key_groups__list_0__map_age__list_0__map_recipient".to_string(),
                "r".to_string(),
            ),
            (
                "lastmodified".to_string(),
                "2024-01-01T00:00:00Z".to_string(),
            ),
        ];
        let j = unflatten(&flat).unwrap();
        assert_eq!(j["age"][0]["recipient"], "age1x");
        assert_eq!(j["age"][0]["enc"], "a\nb");
        assert_eq!(j["key_groups"][1]["pgp"][0]["fp"], "F");
        assert_eq!(j["key_groups"][0]["age"][0]["recipient"], "r");
        let gap = vec![("age__list_1__map_recipient".to_string(), "x".to_string())];
        assert!(unflatten(&gap).is_err());
    }

    #[test]
    fn lastmodified_is_reformatted_as_go_does() {
        assert_eq!(
            rfc3339("2024-01-01T00:00:00.123Z").unwrap(),
            "2024-01-01T00:00:00Z"
        );
        assert_eq!(
            rfc3339("2024-01-01T02:00:00+02:00").unwrap(),
            "2024-01-01T02:00:00+02:00"
        );
    }
}
