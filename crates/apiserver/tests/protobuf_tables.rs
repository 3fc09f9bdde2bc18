//! Walks the protobuf table of every served built-in kind: for each kind, an object with every
//! property its OpenAPI schema declares (nested types included, to a depth) is encoded as
//! Kubernetes protobuf from the table, the way Go's generated marshallers lay it out, then decoded
//! by the server's decoder, and must come back equal. A property with no protobuf field, a
//! message with no table, or a field whose JSON name differs fails the test with its path.

use base64::Engine;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use tidegate_schema::protobuf::{ProtoField, ProtoKind, protobuf_fields};
use tidegate_schema::{builtin_definitions, builtin_resources};

const MAX_DEPTH: usize = 7;

const TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";
const DURATION: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Duration";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const RAW: [&str; 3] = [
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
];

/// A sample value for a schema: every property present, non-zero.
fn sample(schema: &Value, depth: usize, seen: &mut Vec<String>) -> Option<Value> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let def = r.trim_start_matches("#/definitions/");
        return sample_def(def, depth, seen);
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        return all.first().and_then(|s| sample(s, depth, seen));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") if schema.get("format").and_then(Value::as_str) == Some("byte") => {
            Some(json!("aGVsbG8="))
        }
        Some("string") => Some(json!("s1")),
        Some("integer") => Some(json!(7)),
        Some("number") => Some(json!(1.5)),
        Some("boolean") => Some(json!(true)),
        Some("array") => {
            let item = sample(schema.get("items")?, depth, seen)?;
            Some(json!([item]))
        }
        Some("object") | None => {
            if let Some(extra) = schema.get("additionalProperties").filter(|v| v.is_object()) {
                let v = sample(extra, depth, seen)?;
                return Some(json!({ "k1": v }));
            }
            let props = schema.get("properties").and_then(Value::as_object)?;
            let mut out = Map::new();
            for (name, prop) in props {
                if name == "apiVersion" || name == "kind" {
                    continue;
                }
                if let Some(v) = sample(prop, depth + 1, seen) {
                    out.insert(name.clone(), v);
                }
            }
            Some(Value::Object(out))
        }
        Some(_) => None,
    }
}

fn sample_def(def: &str, depth: usize, seen: &mut Vec<String>) -> Option<Value> {
    match def {
        TIME => return Some(json!("2024-05-06T07:08:09Z")),
        MICRO_TIME => return Some(json!("2024-05-06T07:08:09.123456Z")),
        DURATION => return Some(json!("1m30s")),
        QUANTITY => return Some(json!("250m")),
        INT_OR_STRING => {
            return Some(json!(if depth.is_multiple_of(2) {
                json!(8080)
            } else {
                json!("http")
            }));
        }
        d if RAW.contains(&d) => return Some(json!({"f:a": {}})),
        _ => {}
    }
    if depth > MAX_DEPTH || seen.iter().any(|s| s == def) {
        return None;
    }
    let schema = builtin_definitions().get(def)?;
    seen.push(def.to_string());
    let v = sample(schema, depth, seen);
    seen.pop();
    v
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn key(num: u32, wire: u64, out: &mut Vec<u8>) {
    varint(u64::from(num) << 3 | wire, out);
}

fn len_field(num: u32, data: &[u8], out: &mut Vec<u8>) {
    key(num, 2, out);
    varint(data.len() as u64, out);
    out.extend_from_slice(data);
}

fn time_message(text: &str) -> Vec<u8> {
    let t = chrono::DateTime::parse_from_rfc3339(text).expect("sample time");
    let mut out = Vec::new();
    key(1, 0, &mut out);
    varint(t.timestamp() as u64, &mut out);
    key(2, 0, &mut out);
    varint(u64::from(t.timestamp_subsec_nanos()), &mut out);
    out
}

/// Encodes `value` as a message of definition `def`; `path` names it in failures.
fn encode(def: &str, value: &Value, path: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    match def {
        TIME | MICRO_TIME => return Ok(time_message(value.as_str().unwrap_or_default())),
        DURATION => {
            assert_eq!(value, "1m30s");
            key(1, 0, &mut out);
            varint(90_000_000_000, &mut out);
            return Ok(out);
        }
        QUANTITY => {
            len_field(1, value.as_str().unwrap_or_default().as_bytes(), &mut out);
            return Ok(out);
        }
        INT_OR_STRING => {
            match value {
                Value::Number(n) => {
                    key(1, 0, &mut out);
                    varint(0, &mut out);
                    key(2, 0, &mut out);
                    varint(n.as_u64().unwrap_or_default(), &mut out);
                }
                _ => {
                    key(1, 0, &mut out);
                    varint(1, &mut out);
                    len_field(3, value.as_str().unwrap_or_default().as_bytes(), &mut out);
                }
            }
            return Ok(out);
        }
        d if RAW.contains(&d) => {
            len_field(1, value.to_string().as_bytes(), &mut out);
            return Ok(out);
        }
        _ => {}
    }
    let table =
        protobuf_fields(def).ok_or_else(|| format!("{path}: no protobuf table for {def}"))?;
    if let Some(items) = table.get(&1).filter(|f| f.named_slice) {
        for item in value
            .as_array()
            .ok_or_else(|| format!("{path}: {def} is a list"))?
        {
            scalar(1, &items.kind, item, path, &mut out)?;
        }
        return Ok(out);
    }
    let obj = value
        .as_object()
        .ok_or_else(|| format!("{path}: {def} sample is not an object"))?;
    let mut used = BTreeSet::new();
    let mut nums: Vec<_> = table.iter().collect();
    nums.sort_by_key(|(n, _)| **n);
    for (num, f) in nums {
        if f.inline {
            let ProtoKind::Message(target) = &f.kind else {
                return Err(format!(
                    "{path}: inline field {} is not a message",
                    f.json_name
                ));
            };
            let inner = protobuf_fields(target)
                .ok_or_else(|| format!("{path}: no protobuf table for inline {target}"))?;
            let names = json_names(inner);
            let part: Map<String, Value> = obj
                .iter()
                .filter(|(k, _)| names.contains(k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            used.extend(part.keys().cloned());
            len_field(*num, &encode(target, &Value::Object(part), path)?, &mut out);
            continue;
        }
        let Some(v) = obj.get(&f.json_name) else {
            continue;
        };
        used.insert(f.json_name.clone());
        let here = format!("{path}.{}", f.json_name);
        match (&f.kind, v) {
            (ProtoKind::Map(value_kind), Value::Object(m)) => {
                for (k, item) in m {
                    let mut entry = Vec::new();
                    len_field(1, k.as_bytes(), &mut entry);
                    scalar(2, value_kind, item, &here, &mut entry)?;
                    len_field(*num, &entry, &mut out);
                }
            }
            (kind, Value::Array(items)) if f.repeated => {
                for item in items {
                    scalar(*num, kind, item, &here, &mut out)?;
                }
            }
            (kind, v) => scalar(*num, kind, v, &here, &mut out)?,
        }
    }
    for k in obj.keys() {
        if !used.contains(k) {
            return Err(format!(
                "{path}.{k}: no protobuf field in the table of {def}"
            ));
        }
    }
    Ok(out)
}

/// The JSON names a message's fields take in its parent, through nested inline messages.
fn json_names(table: &std::collections::HashMap<u32, ProtoField>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in table.values() {
        match (&f.kind, f.inline) {
            (ProtoKind::Message(target), true) => {
                out.extend(protobuf_fields(target).map(json_names).unwrap_or_default());
            }
            _ => {
                out.insert(f.json_name.clone());
            }
        }
    }
    out
}

fn scalar(
    num: u32,
    kind: &ProtoKind,
    v: &Value,
    path: &str,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match kind {
        ProtoKind::String => len_field(num, v.as_str().unwrap_or_default().as_bytes(), out),
        ProtoKind::Bytes => {
            let b = base64::engine::general_purpose::STANDARD
                .decode(v.as_str().unwrap_or_default())
                .map_err(|e| format!("{path}: {e}"))?;
            len_field(num, &b, out);
        }
        ProtoKind::Bool => {
            key(num, 0, out);
            varint(u64::from(v == &json!(true)), out);
        }
        ProtoKind::Int32 | ProtoKind::Int64 => {
            key(num, 0, out);
            varint(
                v.as_i64()
                    .ok_or_else(|| format!("{path}: {v} is not an integer"))?
                    as u64,
                out,
            );
        }
        ProtoKind::Double => {
            key(num, 1, out);
            out.extend_from_slice(&v.as_f64().unwrap_or_default().to_le_bytes());
        }
        ProtoKind::Float => {
            key(num, 5, out);
            out.extend_from_slice(&(v.as_f64().unwrap_or_default() as f32).to_le_bytes());
        }
        ProtoKind::Message(def) => len_field(num, &encode(def, v, path)?, out),
        ProtoKind::Map(_) => return Err(format!("{path}: a map inside a list")),
    }
    Ok(())
}

fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut tm = Vec::new();
    len_field(1, api_version.as_bytes(), &mut tm);
    len_field(2, kind.as_bytes(), &mut tm);
    let mut body = b"k8s\0".to_vec();
    len_field(1, &tm, &mut body);
    len_field(2, raw, &mut body);
    body
}

#[test]
fn every_served_kind_round_trips_through_its_protobuf_table() {
    let mut failures = Vec::new();
    let mut kinds = 0;
    let mut properties = 0;
    for res in builtin_resources() {
        let Some(def) = res.definition.as_deref() else {
            continue;
        };
        let api_version = if res.group.is_empty() {
            res.version.clone()
        } else {
            format!("{}/{}", res.group, res.version)
        };
        let Some(sample) = sample_def(def, 0, &mut Vec::new()) else {
            failures.push(format!("{def}: no sample"));
            continue;
        };
        properties += count(&sample);
        kinds += 1;
        let raw = match encode(def, &sample, &res.kind) {
            Ok(raw) => raw,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let body = envelope(&api_version, &res.kind, &raw);
        let decoded = tidegate_apiserver::protobuf::decode(&body, |_, _| Some(def.to_string()));
        let mut expected = json!({"apiVersion": api_version, "kind": res.kind});
        if let (Some(e), Some(s)) = (expected.as_object_mut(), sample.as_object()) {
            e.extend(s.clone());
        }
        match decoded {
            Ok(v) if v == expected => {}
            Ok(v) => failures.push(format!(
                "{}: decoded differently:\n  sent    {expected}\n  decoded {v}",
                res.kind
            )),
            Err(e) => failures.push(format!("{}: {e}", res.kind)),
        }
    }
    assert!(kinds > 60, "only {kinds} kinds walked");
    assert!(properties > 5_000, "only {properties} properties walked");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn count(v: &Value) -> usize {
    match v {
        Value::Object(m) => m.len() + m.values().map(count).sum::<usize>(),
        Value::Array(a) => a.iter().map(count).sum(),
        _ => 0,
    }
}

#[test]
fn option_bodies_decode() {
    // client-go's DeleteOptions for a background delete with a uid precondition.
    let mut pre = Vec::new();
    len_field(1, b"u-1", &mut pre);
    let mut opts = Vec::new();
    len_field(2, &pre, &mut opts);
    len_field(4, b"Background", &mut opts);
    key(1, 0, &mut opts);
    varint(0, &mut opts);
    let body = envelope("v1", "DeleteOptions", &opts);
    let def = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
    let v = tidegate_apiserver::protobuf::decode(&body, |_, k| {
        (k == "DeleteOptions").then(|| def.to_string())
    })
    .expect("decodes");
    assert_eq!(
        v,
        json!({"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
               "preconditions": {"uid": "u-1"}, "propagationPolicy": "Background"}),
        "an explicit gracePeriodSeconds: 0 (a pointer in Go) is kept"
    );
}

#[test]
fn go_zero_values_of_omitempty_fields_are_dropped() {
    // ObjectMeta{name: "c1", namespace: "", creationTimestamp: {}} plus data {a: b}, as Go
    // writes it: the empty namespace and the zero time are present on the wire.
    let mut meta = Vec::new();
    len_field(1, b"c1", &mut meta);
    len_field(3, b"", &mut meta);
    len_field(8, b"", &mut meta);
    let mut entry = Vec::new();
    len_field(1, b"a", &mut entry);
    len_field(2, b"b", &mut entry);
    let mut cm = Vec::new();
    len_field(1, &meta, &mut cm);
    len_field(2, &entry, &mut cm);
    let body = envelope("v1", "ConfigMap", &cm);
    let v = tidegate_apiserver::protobuf::decode(&body, |av, k| {
        (av == "v1" && k == "ConfigMap").then(|| "io.k8s.api.core.v1.ConfigMap".to_string())
    })
    .expect("decodes");
    assert_eq!(
        v,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "data": {"a": "b"}})
    );
}

#[test]
fn garbage_is_refused() {
    use tidegate_apiserver::protobuf::decode;
    assert!(decode(b"nope", |_, _| None).is_err());
    assert!(decode(b"k8s\0\x0a\xff", |_, _| None).is_err());
    let unknown_kind = envelope("v1", "Nope", b"");
    let e = decode(&unknown_kind, |_, _| None).expect_err("no table");
    assert!(e.to_string().contains("Nope"), "{e}");
}
