//! The `Merge` copy strategy: a YAML file deep-merged over the one already in the artifact,
//! with Helm's values semantics (maps merge, everything else — lists included — replaces),
//! written back as sigs.k8s.io/yaml writes it (keys sorted, comments dropped).

use serde_json::{Map, Value};

/// Every document of `text` deep-merged into one map.
fn documents(text: &str) -> Result<Map<String, Value>, String> {
    let docs = tidegate_core::yaml::parse_stream(text)
        .map_err(|e| format!("error reading YAML document: {e}"))?;
    let mut out = Map::new();
    for doc in docs {
        match doc {
            Value::Object(m) => merge_into(&mut out, m),
            Value::Null => {}
            other => {
                return Err(format!(
                    "cannot unmarshal YAML document: expected a map, got {}",
                    type_name(&other)
                ));
            }
        }
    }
    Ok(out)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

fn merge_into(base: &mut Map<String, Value>, overlay: Map<String, Value>) {
    for (k, v) in overlay {
        match (base.get_mut(&k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => merge_into(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// `overlay` merged over `base` (both YAML texts), as YAML.
pub(super) fn merge(base: &str, overlay: &str) -> Result<String, String> {
    let mut merged = documents(base)?;
    merge_into(&mut merged, documents(overlay)?);
    let sorted = sort_keys(Value::Object(merged));
    Ok(tidegate_core::yaml::to_yaml(&sorted))
}

fn sort_keys(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sort_keys(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// source-watcher's merge tests.
    #[test]
    fn helm_values_semantics() {
        let base = "name: app\nports: [80, 443]\nlabels:\n  env: dev\n  keep: me\nversion: 1.0.0\nreplicas: 3\n";
        let overlay = "replicas: 5\nports: [8080]\nlabels:\n  env: prod\nenv: production\n";
        let got = tidegate_core::yaml::parse_one(&merge(base, overlay).unwrap()).unwrap();
        assert_eq!(
            got,
            serde_json::json!({"name": "app", "ports": [8080], "labels": {"env": "prod", "keep": "me"},
                "version": "1.0.0", "replicas": 5, "env": "production"})
        );
        let got = merge("a: b\n", "{\"c\": {\"d\": \"e\"}, \"a\": \"override\"}").unwrap();
        assert_eq!(got, "a: override\nc:\n  d: e\n");
        let err = merge("A=B\n", "a: b\n").unwrap_err();
        assert!(err.starts_with("cannot unmarshal YAML document"), "{err}");
        let err = merge("a: b\n", "A=B\n").unwrap_err();
        assert!(err.starts_with("cannot unmarshal YAML document"), "{err}");
    }
}
