//! The type errors kube-apiserver's typed JSON decoding reports for built-in kinds: a value of
//! the wrong JSON type for its Go field is a 400 `<Kind> in version "<v>" cannot be handled as
//! a <Kind>: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of
//! type int32`. The walk follows the OpenAPI definitions: the struct named is the innermost
//! definition owning the field, the path the JSON names from the root without indices or map
//! keys, the Go type read off the schema. Only the first error is reported, as Go's decoder
//! does.

use serde_json::Value;
use tidegate_schema::builtin_definitions;

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const FREE_FORM: [&str; 4] = [
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
];

/// The first type error of `obj` against definition `def`, as Go's decoder words it (without
/// the `<Kind> in version …` prefix).
pub fn first_error(def: &str, obj: &Value) -> Option<String> {
    let schema = builtin_definitions().get(def)?;
    walk(obj, schema, short(def), "", 0)
}

/// `io.k8s.api.apps.v1.DeploymentSpec` → `DeploymentSpec`.
fn short(def: &str) -> &str {
    def.rsplit('.').next().unwrap_or(def)
}

/// The Go type a schema decodes into (`int32`, `[]v1.Container`, `map[string]string`, …).
fn go_type(schema: &Value) -> String {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let def = r.trim_start_matches("#/definitions/");
        let mut parts = def.rsplit('.');
        let name = parts.next().unwrap_or(def);
        let package = parts.next().unwrap_or("");
        return match def {
            QUANTITY => "resource.Quantity".into(),
            INT_OR_STRING => "intstr.IntOrString".into(),
            _ => format!("{package}.{name}"),
        };
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => match schema.get("format").and_then(Value::as_str) {
            Some("int64") => "int64".into(),
            _ => "int32".into(),
        },
        Some("number") => "float64".into(),
        Some("boolean") => "bool".into(),
        Some("string") if schema.get("format") == Some(&Value::from("byte")) => "[]uint8".into(),
        Some("string") => "string".into(),
        Some("array") => format!("[]{}", go_type(schema.get("items").unwrap_or(&Value::Null))),
        Some("object") => match schema.get("additionalProperties") {
            Some(v) => format!("map[string]{}", go_type(v)),
            None => "map[string]interface {}".into(),
        },
        _ => "interface {}".into(),
    }
}

/// The JSON kind Go names in its error: `string`, `number` (`number 1.5` when the number does
/// not fit an integer field), `bool`, `array`, `object`.
fn json_kind(v: &Value, integer_target: bool) -> String {
    match v {
        Value::String(_) => "string".into(),
        Value::Number(n) if integer_target => format!("number {n}"),
        Value::Number(_) => "number".into(),
        Value::Bool(_) => "bool".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
        Value::Null => "null".into(),
    }
}

fn mismatch(v: &Value, schema: &Value, owner: &str, path: &str) -> String {
    let integer = schema.get("type").and_then(Value::as_str) == Some("integer");
    format!(
        "json: cannot unmarshal {} into Go struct field {owner}.{path} of type {}",
        json_kind(v, integer),
        go_type(schema)
    )
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

fn walk(v: &Value, schema: &Value, owner: &str, path: &str, depth: usize) -> Option<String> {
    if v.is_null() || depth > 64 {
        return None;
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let def = r.trim_start_matches("#/definitions/");
        return match def {
            QUANTITY => match v {
                Value::String(_) | Value::Number(_) => None,
                _ => Some("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'".into()),
            },
            INT_OR_STRING => match v {
                Value::String(_) => None,
                Value::Number(n) if n.is_i64() => None,
                other => Some(format!(
                    "json: cannot unmarshal {} into Go value of type int32",
                    json_kind(other, false)
                )),
            },
            d if FREE_FORM.contains(&d) => None,
            _ => {
                let inner = builtin_definitions().get(def)?;
                if !v.is_object() && inner.get("type").and_then(Value::as_str) == Some("object") {
                    return Some(mismatch(v, schema, owner, path));
                }
                walk(v, inner, short(def), path, depth + 1)
            }
        };
    }
    let ok = match (schema.get("type").and_then(Value::as_str), v) {
        (Some("string"), Value::String(_)) => true,
        (Some("integer"), Value::Number(n)) => {
            let bits = if schema.get("format").and_then(Value::as_str) == Some("int64") {
                i64::MAX
            } else {
                i64::from(i32::MAX)
            };
            n.as_i64().is_some_and(|i| i.abs() <= bits)
        }
        (Some("number"), Value::Number(_)) => true,
        (Some("boolean"), Value::Bool(_)) => true,
        (Some("array"), Value::Array(items)) => {
            let item_schema = schema.get("items").unwrap_or(&Value::Null);
            return items
                .iter()
                .find_map(|item| walk(item, item_schema, owner, path, depth + 1));
        }
        (Some("object"), Value::Object(m)) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                return m.iter().find_map(|(k, child)| {
                    props
                        .get(k)
                        .and_then(|s| walk(child, s, owner, &join(path, k), depth + 1))
                });
            }
            if let Some(extra) = schema.get("additionalProperties") {
                return m
                    .values()
                    .find_map(|child| walk(child, extra, owner, path, depth + 1));
            }
            true
        }
        (None, _) => true,
        _ => false,
    };
    if ok {
        None
    } else {
        Some(mismatch(v, schema, owner, path))
    }
}

/// Rewrites every `format: byte` field of `obj` (Secret `data`, ConfigMap `binaryData`, …) as
/// kube-apiserver stores it: Go's decoder reads base64 skipping line breaks (kustomize wraps
/// generated Secret values at 70 columns), and the value is written back without them. Invalid
/// base64 is Go's error, `illegal base64 data at input byte N`.
pub fn normalize_bytes(def: &str, obj: &mut Value) -> Result<(), String> {
    match builtin_definitions().get(def) {
        Some(schema) => bytes(obj, schema, 0),
        None => Ok(()),
    }
}

fn bytes(v: &mut Value, schema: &Value, depth: usize) -> Result<(), String> {
    use base64::Engine;
    if depth > 64 || v.is_null() {
        return Ok(());
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let def = r.trim_start_matches("#/definitions/");
        if def == QUANTITY || def == INT_OR_STRING || FREE_FORM.contains(&def) {
            return Ok(());
        }
        return match builtin_definitions().get(def) {
            Some(inner) => bytes(v, inner, depth + 1),
            None => Ok(()),
        };
    }
    match (schema.get("type").and_then(Value::as_str), v) {
        (Some("string"), Value::String(s))
            if schema.get("format").and_then(Value::as_str) == Some("byte") =>
        {
            if !s.contains(['\r', '\n']) {
                // Already one line: only checked.
                return base64::engine::general_purpose::STANDARD
                    .decode(s.as_bytes())
                    .map(|_| ())
                    .map_err(|e| go_base64_error(s, &e));
            }
            let joined: String = s.chars().filter(|c| *c != '\r' && *c != '\n').collect();
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(joined.as_bytes())
                .map_err(|e| go_base64_error(&joined, &e))?;
            *s = base64::engine::general_purpose::STANDARD.encode(decoded);
            Ok(())
        }
        (Some("array"), Value::Array(items)) => {
            let item_schema = schema.get("items").unwrap_or(&Value::Null);
            items
                .iter_mut()
                .try_for_each(|item| bytes(item, item_schema, depth + 1))
        }
        (Some("object"), Value::Object(m)) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, child) in m.iter_mut() {
                    if let Some(s) = props.get(k) {
                        bytes(child, s, depth + 1)?;
                    }
                }
            } else if let Some(extra) = schema.get("additionalProperties") {
                for child in m.values_mut() {
                    bytes(child, extra, depth + 1)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn go_base64_error(s: &str, e: &base64::DecodeError) -> String {
    let at = match e {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => {
            *at
        }
        _ => s.len(),
    };
    format!("illegal base64 data at input byte {at}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn byte_fields_are_read_as_go_reads_them() {
        let d = "io.k8s.api.core.v1.Secret";
        let mut s =
            json!({"data": {"a": "aGVs\nbG8=", "b": "aGVsbG8="}, "stringData": {"c": "x\ny"}});
        normalize_bytes(d, &mut s).unwrap();
        assert_eq!(s["data"]["a"], "aGVsbG8=");
        assert_eq!(s["stringData"]["c"], "x\ny");
        let mut bad = json!({"data": {"a": "a!b="}});
        assert_eq!(
            normalize_bytes(d, &mut bad).unwrap_err(),
            "illegal base64 data at input byte 1"
        );
        let mut cm = json!({"binaryData": {"k": "AA\r\nAA"}});
        normalize_bytes("io.k8s.api.core.v1.ConfigMap", &mut cm).unwrap();
        assert_eq!(cm["binaryData"]["k"], "AAAA");
    }

    #[test]
    fn go_decoding_errors() {
        let d = "io.k8s.api.apps.v1.Deployment";
        let err = |v: Value| first_error(d, &v);
        assert_eq!(
            err(json!({"spec": {"replicas": "two"}})).as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
        );
        assert_eq!(
            err(json!({"spec": {"replicas": 1.5}})).as_deref(),
            Some(
                "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
        );
        assert_eq!(
            err(json!({"spec": {"template": {"spec": {"containers": {"name": "a"}}}}})).as_deref(),
            Some(
                "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"
            )
        );
        assert_eq!(
            err(json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "env": [{"name": "X", "value": 8080}]}]}}}})).as_deref(),
            Some("json: cannot unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value of type string")
        );
        assert_eq!(
            err(json!({"metadata": {"labels": {"enabled": true}}})).as_deref(),
            Some(
                "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
            )
        );
        assert_eq!(
            first_error(
                "io.k8s.api.core.v1.ConfigMap",
                &json!({"data": {"k": {"a": "b"}}})
            )
            .as_deref(),
            Some(
                "json: cannot unmarshal object into Go struct field ConfigMap.data of type string"
            )
        );
        assert_eq!(err(json!({"spec": {"replicas": 3}})), None);
    }
}
