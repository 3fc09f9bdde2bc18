//! A HelmRelease's values, composed as Flux's `ChartValuesFromReferences` does: every
//! `valuesFrom` reference in order (merged at the root, or written at `targetPath` with Helm's
//! `--set` parser), the inline `values` last; and their digest (`DigestValues`).

use std::collections::HashMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tidegate_api::helmrelease::ValuesReference;
use tidegate_helm::template::value::{MapKind, Value as TValue};
use tidegate_helm::values::strvals;

/// Helm's `MergeMaps`: maps merge into maps, anything else overwrites.
pub fn merge_maps(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for (k, v) in from {
        if let (Value::Object(src), Some(Value::Object(dst))) = (v, into.get_mut(k)) {
            merge_maps(dst, src);
            continue;
        }
        into.insert(k.clone(), v.clone());
    }
}

/// One fetched ConfigMap's or Secret's data, keys to bytes; `None` when it does not exist.
type Data = Option<HashMap<String, Vec<u8>>>;

/// `could not resolve [optional] <Kind> chart values reference '<ns>/<name>' with key '<k>': …`.
fn reference_error(namespace: &str, r: &ValuesReference, reason: &str) -> String {
    format!(
        "could not resolve{} {} chart values reference '{namespace}/{}' with key '{}': {reason}",
        if r.optional { " optional" } else { "" },
        r.kind,
        r.name,
        r.values_key()
    )
}

async fn fetch(client: &Client, namespace: &str, r: &ValuesReference) -> Result<Data, String> {
    let not_found = |e: &kube::Error| matches!(e, kube::Error::Api(s) if s.code == 404);
    match r.kind.as_str() {
        "ConfigMap" => {
            let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
            match api.get(&r.name).await {
                Ok(cm) => Ok(Some(
                    cm.data
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(k, v)| (k, v.into_bytes()))
                        .chain(
                            cm.binary_data
                                .unwrap_or_default()
                                .into_iter()
                                .map(|(k, v)| (k, v.0)),
                        )
                        .collect(),
                )),
                Err(e) if not_found(&e) => Ok(None),
                Err(e) => Err(reference_error(
                    namespace,
                    r,
                    &tidegate_apply::error::describe(&e),
                )),
            }
        }
        "Secret" => {
            let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
            match api.get(&r.name).await {
                Ok(s) => Ok(Some(
                    s.data
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(k, v)| (k, v.0))
                        .chain(
                            s.string_data
                                .unwrap_or_default()
                                .into_iter()
                                .map(|(k, v)| (k, v.into_bytes())),
                        )
                        .collect(),
                )),
                Err(e) if not_found(&e) => Ok(None),
                Err(e) => Err(reference_error(
                    namespace,
                    r,
                    &tidegate_apply::error::describe(&e),
                )),
            }
        }
        _ => Err(reference_error(
            namespace,
            r,
            "unsupported values reference kind",
        )),
    }
}

/// The values of a HelmRelease in `namespace`: references resolved through `client` (each
/// object read once), `inline` merged last. The error is Flux's message.
pub async fn compose(
    client: &Client,
    namespace: &str,
    refs: &[ValuesReference],
    inline: Option<&Value>,
) -> Result<Map<String, Value>, String> {
    let inline = match inline {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let mut objects: HashMap<String, Data> = HashMap::new();
    let mut result = Map::new();
    for r in refs {
        let index = format!("{}/{}", r.kind, r.name);
        if !objects.contains_key(&index) {
            let data = fetch(client, namespace, r).await?;
            objects.insert(index.clone(), data);
        }
        let Some(data) = objects.get(&index).and_then(Option::as_ref) else {
            if r.optional {
                tracing::info!("{}", reference_error(namespace, r, "resource not found"));
                continue;
            }
            return Err(reference_error(namespace, r, "resource not found"));
        };
        let Some(bytes) = data.get(r.values_key()) else {
            if r.optional {
                tracing::info!("{}", reference_error(namespace, r, "key not found"));
                continue;
            }
            return Err(reference_error(namespace, r, "key not found"));
        };
        let text = String::from_utf8_lossy(bytes);
        match r.target_path.as_deref().filter(|p| !p.is_empty()) {
            Some(path) => {
                merge_maps(&mut result, &inline);
                result = replace_path_value(&result, path, &text, r.literal)
                    .map_err(|e| reference_error(namespace, r, &e))?;
            }
            None => {
                let values = tidegate_helm::chart::load_values_text(&text).map_err(|e| {
                    reference_error(namespace, r, &format!("failed to read values data: {e}"))
                })?;
                merge_maps(&mut result, &values);
            }
        }
    }
    merge_maps(&mut result, &inline);
    Ok(result)
}

/// Writes `value` at `path` as Flux's `ReplacePathValue`: `--set` rules, quoted values as
/// strings (`--set-string`), `literal` values as `--set-literal`.
pub fn replace_path_value(
    values: &Map<String, Value>,
    path: &str,
    value: &str,
    literal: bool,
) -> Result<Map<String, Value>, String> {
    let dest = match TValue::from_json(&Value::Object(values.clone())) {
        TValue::Map(m, _) => m,
        _ => tidegate_helm::values::new_map(),
    };
    let quoted = value.len() >= 2
        && ((value.starts_with('\'') && value.ends_with('\''))
            || (value.starts_with('"') && value.ends_with('"')));
    if literal {
        strvals::parse_literal_into(&format!("{path}={value}"), &dest)
    } else if quoted {
        let trimmed = value.trim_matches(|c| c == '\'' || c == '"');
        strvals::parse_into_string(&format!("{path}={trimmed}"), &dest)
    } else {
        strvals::parse_into(&format!("{path}={value}"), &dest)
    }
    .map_err(|e| format!("failed to merge value: {e}"))?;
    match TValue::Map(dest, MapKind::Any).to_json_value()? {
        Value::Object(mut m) => {
            m.values_mut().for_each(integral_numbers);
            Ok(m)
        }
        _ => Ok(Map::new()),
    }
}

/// Whole floats back to integers, as Go's JSON writes a float64 of 1 (`1`, not `1.0`).
fn integral_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < 1e15
            {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(integral_numbers),
        Value::Object(m) => m.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// Flux's `DigestValues` with SHA-256: the values as go-yaml v2 writes them (keys sorted),
/// nothing at all for empty values.
pub fn digest(values: &Map<String, Value>) -> String {
    let mut h = Sha256::new();
    if !values.is_empty() {
        h.update(tidegate_core::yaml::gov2::to_yaml(&Value::Object(values.clone())).as_bytes());
    }
    format!("sha256:{:x}", h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn merge_maps_as_helm() {
        let mut a = obj(json!({"a": {"b": 1, "c": 2}, "l": [1]}));
        merge_maps(&mut a, &obj(json!({"a": {"c": 3}, "l": [2], "n": null})));
        assert_eq!(
            Value::Object(a),
            json!({"a": {"b": 1, "c": 3}, "l": [2], "n": null})
        );
    }

    #[test]
    fn target_paths_as_set_flags() {
        let base = obj(json!({"a": {"x": 1}}));
        let r = replace_path_value(&base, "a.b[1]", "true", false).unwrap();
        assert_eq!(Value::Object(r), json!({"a": {"x": 1, "b": [null, true]}}));
        let r = replace_path_value(&base, "a.s", "'007'", false).unwrap();
        assert_eq!(r["a"]["s"], json!("007"));
        let r = replace_path_value(&base, "a.n", "7", false).unwrap();
        assert_eq!(r["a"]["n"], json!(7));
        // Helm's parser keeps leading zeros as text.
        let r = replace_path_value(&base, "a.n", "007", false).unwrap();
        assert_eq!(r["a"]["n"], json!("007"));
        let r = replace_path_value(&base, "a.l", "x,y", true).unwrap();
        assert_eq!(r["a"]["l"], json!("x,y"));
    }

    #[test]
    fn digest_of_nothing_is_the_empty_hash() {
        assert_eq!(
            digest(&Map::new()),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    /// Cases of fluxcd/pkg's `TestDigestValues`, with their exact digests.
    #[test]
    fn digests_equal_fluxs() {
        let v = obj(
            json!({"replicas": 3, "image": {"tag": "latest", "repository": "nginx"},
            "ports": [{"protocol": "TCP", "port": 8080}, {"port": 9090, "protocol": "UDP"}]}),
        );
        assert_eq!(
            digest(&v),
            "sha256:fcdc2b0de1581a3633ada4afee3f918f6eaa5b5ab38c3fef03d5b48d3f85d9f6"
        );
        let v = obj(json!({"replicas": 3, "test": {
            "632bd80235a05f4192aefade": "value1", "632bd80ddf416cf32fd50679": "value2",
            "632bd817c559818a52307da2": "value3", "632bd82398e71231a98004b6": "value4"}}));
        assert_eq!(
            digest(&v),
            "sha256:8a980fcbeadd6f05818f07e8aec14070c22250ca3d96af1fcd5f93b3e85b4d70"
        );
    }

    #[test]
    fn digest_ignores_key_order() {
        let a = obj(json!({"b": 1, "a": {"d": true, "c": "x"}}));
        let b = obj(json!({"a": {"c": "x", "d": true}, "b": 1}));
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&obj(json!({"b": 2}))));
    }
}
