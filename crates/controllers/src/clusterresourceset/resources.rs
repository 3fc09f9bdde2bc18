//! What a ClusterResourceSet's ConfigMap or Secret holds, read as Cluster API reads it: the
//! `data` values in sorted-key order (Secret values decoded), each a JSON list of objects or a
//! YAML/JSON stream, sorted for creation within the value; and the hash that says whether the
//! data changed.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// A resource's `data` values, in sorted-key order, as bytes.
///
/// `data` is the ConfigMap's `data` or the Secret's decoded `data`; `None` when the object has
/// no `data` field (an error, as in Cluster API: `binaryData` is not read).
pub fn normalize_data(
    data: Option<&std::collections::BTreeMap<String, Vec<u8>>>,
    object: &str,
) -> Result<Vec<Vec<u8>>, String> {
    let Some(data) = data else {
        return Err(format!("failed to get data field from resource {object}"));
    };
    // A BTreeMap iterates in key order: Go's sort.Strings on the keys.
    Ok(data.values().cloned().collect())
}

/// `sha256:<hex>` over the values concatenated, no separators (keys, names and metadata are
/// not part of it).
pub fn compute_hash(values: &[Vec<u8>]) -> String {
    let mut h = Sha256::new();
    for v in values {
        h.update(v);
    }
    format!("sha256:{:x}", h.finalize())
}

/// How far into a value Cluster API looks for the `[` of a JSON list.
const PEEK: usize = 32;

/// Whether a value is a JSON list: its first non-space byte within the first 32 is `[`. As in
/// Cluster API, a value shorter than 32 bytes cannot be peeked at and is an error (`EOF`).
fn is_json_list(value: &[u8]) -> Result<bool, String> {
    if value.len() < PEEK {
        return Err("EOF".into());
    }
    let head = &value[..PEEK];
    let first = head.iter().position(|b| !is_space(*b));
    Ok(first.is_some_and(|i| head[i] == b'['))
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// The objects of every value, in value order, each value's objects sorted for creation.
pub fn objects_from_data(values: &[Vec<u8>]) -> Result<Vec<Map<String, Value>>, String> {
    let mut all = Vec::new();
    for value in values {
        let mut objects = if is_json_list(value)? {
            // A list that does not parse gives no objects (Cluster API ignores the error).
            serde_json::from_slice::<Vec<Map<String, Value>>>(value).unwrap_or_default()
        } else {
            from_yaml(value)
                .map_err(|e| format!("failed converting data to unstructured objects: {e}"))?
        };
        sort_for_create(&mut objects);
        all.extend(objects);
    }
    Ok(all)
}

/// A YAML (or JSON) stream as objects; documents that hold nothing are skipped, any other
/// document must be a mapping.
fn from_yaml(value: &[u8]) -> Result<Vec<Map<String, Value>>, String> {
    let text = String::from_utf8_lossy(value);
    let docs = tidegate_core::yaml::parse_stream(&text).map_err(|e| {
        format!(
            "failed to unmarshal the {} yaml document: {}",
            ordinal(e.document),
            e.message
        )
    })?;
    let mut out = Vec::new();
    for (i, doc) in docs.into_iter().enumerate() {
        match doc {
            Value::Object(m) => out.push(m),
            other => {
                return Err(format!(
                    "failed to unmarshal the {} yaml document: cannot unmarshal {} into an object",
                    ordinal(i + 1),
                    tidegate_core::gojson::kind(&other)
                ));
            }
        }
    }
    Ok(out)
}

/// `1st`, `2nd`, `3rd`, `4th`, `11th`, `21st`, … (Cluster API's `util.Ordinalize`).
pub fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Cluster API's creation priority of a kind (lower first; unlisted kinds 0).
fn priority(kind: &str) -> i32 {
    match kind {
        "Namespace" => -100,
        "CustomResourceDefinition" => -99,
        "StorageClass" => -98,
        "PersistentVolume" => -97,
        "PersistentVolumeClaim" => -96,
        "Secret" => -95,
        "ConfigMap" => -94,
        "ServiceAccount" => -93,
        "LimitRange" => -92,
        "Pod" => -91,
        "ReplicaSet" => -90,
        "Endpoint" => -89,
        _ => 0,
    }
}

/// Stable sort by creation priority (`SortForCreate`).
pub fn sort_for_create(objects: &mut [Map<String, Value>]) {
    objects.sort_by_key(|o| priority(o.get("kind").and_then(Value::as_str).unwrap_or("")));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn values_in_key_order_and_the_hash_has_no_separators() {
        let d = data(&[("b", "second"), ("a", "first")]);
        let values = normalize_data(Some(&d), "ns/cm").unwrap();
        assert_eq!(values, vec![b"first".to_vec(), b"second".to_vec()]);
        // Keys do not count, and nothing separates the values.
        let moved = data(&[("x", "firs"), ("y", "tsecond")]);
        assert_eq!(
            compute_hash(&values),
            compute_hash(&normalize_data(Some(&moved), "ns/cm").unwrap())
        );
        assert_eq!(
            compute_hash(&values),
            // sha256("firstsecond"), computed by Python's hashlib
            "sha256:da83f63e1a473003712c18f5afc5a79044221943d1083c7c5a7ac7236d85e8d2"
        );
        assert_eq!(
            normalize_data(None, "ns/cm").unwrap_err(),
            "failed to get data field from resource ns/cm"
        );
    }

    // Cluster API's clusterresourceset_helpers_test.go: the hash of known data.
    #[test]
    fn hash_of_an_empty_set() {
        assert_eq!(
            compute_hash(&[]),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn yaml_streams_json_lists_and_the_create_order() {
        let yaml = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n# only a comment\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: c}\n";
        let list = r#"  [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b"}}]"#;
        let objects =
            objects_from_data(&[yaml.as_bytes().to_vec(), list.as_bytes().to_vec()]).unwrap();
        let kinds: Vec<&str> = objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        // Sorted within each value, never across values.
        assert_eq!(
            kinds,
            [
                "Namespace",
                "CustomResourceDefinition",
                "Service",
                "Namespace",
                "ConfigMap"
            ]
        );
    }

    #[test]
    fn broken_values() {
        // A JSON list that does not parse gives nothing.
        let bad_list = b"[{\"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}".to_vec();
        assert!(objects_from_data(&[bad_list]).unwrap().is_empty());
        // Cluster API cannot peek 32 bytes into a shorter value.
        assert_eq!(
            objects_from_data(&[b"kind: x".to_vec()]).unwrap_err(),
            "EOF"
        );
        let err = objects_from_data(&[
            b"apiVersion: v1\nkind: ConfigMap\n---\nkind: [unclosed\nmetadata: {}\n".to_vec(),
        ])
        .unwrap_err();
        assert!(
            err.starts_with(
                "failed converting data to unstructured objects: failed to unmarshal the 2nd yaml document"
            ),
            "{err}"
        );
        let err =
            objects_from_data(&[b"- a list item that is not an object\n".to_vec()]).unwrap_err();
        assert!(err.contains("the 1st yaml document"), "{err}");
    }

    #[test]
    fn ordinals() {
        for (n, s) in [
            (1, "1st"),
            (2, "2nd"),
            (3, "3rd"),
            (4, "4th"),
            (11, "11th"),
            (12, "12th"),
            (13, "13th"),
            (21, "21st"),
            (102, "102nd"),
            (111, "111th"),
        ] {
            assert_eq!(ordinal(n), s);
        }
    }
}
