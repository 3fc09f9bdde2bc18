//! The JSON store (and the binary store, whose encrypted form is a JSON envelope): objects in
//! key order, numbers as int when they fit, output as Go's `encoding/json` and `json.Indent`
//! with a tab.

use serde_json::Value as Json;

use super::StoreError;
use crate::tree::{Branch, Item, Key, Value};

/// Reads a JSON document; the top level must be an object.
pub fn load(text: &[u8]) -> Result<Vec<Branch>, StoreError> {
    let json: Json = serde_json::from_slice(text)
        .map_err(|e| StoreError::Parse(format!("Error unmarshalling input json: {e}")))?;
    match json {
        Json::Object(_) => match from_json(json) {
            Value::Branch(b) => Ok(vec![b]),
            _ => Err(StoreError::Parse("expected a JSON object".into())),
        },
        _ => Err(StoreError::Parse(
            "Error unmarshalling input json: expected a JSON object at the top level".into(),
        )),
    }
}

/// A JSON value as a tree value.
pub fn from_json(json: Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(0.0)),
        },
        Json::String(s) => Value::Str(s),
        Json::Array(a) => Value::List(a.into_iter().map(from_json).collect()),
        Json::Object(m) => Value::Branch(
            m.into_iter()
                .map(|(k, v)| Item::new(k, from_json(v)))
                .collect(),
        ),
    }
}

/// A tree value as JSON (comments dropped).
pub fn to_json(v: &Value) -> Json {
    match v {
        Value::Null | Value::Comment(_) => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::Str(s) | Value::Time(s) => Json::String(s.clone()),
        Value::Bytes(b) => {
            use base64::Engine;
            Json::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        Value::List(l) => Json::Array(
            l.iter()
                .filter(|v| !matches!(v, Value::Comment(_)))
                .map(to_json)
                .collect(),
        ),
        Value::Branch(b) => Json::Object(
            b.iter()
                .filter_map(|it| match &it.key {
                    Key::Str(k) => Some((k.clone(), to_json(&it.value))),
                    _ => None,
                })
                .collect(),
        ),
    }
}

/// Writes the first document as sops does: Go's encoder, re-indented with a tab, and a final
/// newline.
pub fn emit(branches: &[Branch]) -> Result<Vec<u8>, StoreError> {
    let mut out = String::new();
    let empty = Vec::new();
    let first = branches.first().unwrap_or(&empty);
    write_branch(&mut out, first, 0);
    out.push('\n');
    Ok(out.into_bytes())
}

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push('\t');
    }
}

fn write_branch(out: &mut String, b: &Branch, depth: usize) {
    let items: Vec<&Item> = b
        .iter()
        .filter(|it| matches!(it.key, Key::Str(_)))
        .collect();
    if items.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push('{');
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(out, depth + 1);
        if let Key::Str(k) = &it.key {
            write_string(out, k);
        }
        out.push_str(": ");
        write_value(out, &it.value, depth + 1);
    }
    newline(out, depth);
    out.push('}');
}

fn write_value(out: &mut String, v: &Value, depth: usize) {
    match v {
        Value::Branch(b) => write_branch(out, b, depth),
        Value::List(l) => {
            let items: Vec<&Value> = l
                .iter()
                .filter(|v| !matches!(v, Value::Comment(_)))
                .collect();
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_value(out, v, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Null | Value::Comment(_) => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&go_json_float(*f)),
        Value::Str(s) | Value::Time(s) => write_string(out, s),
        Value::Bytes(b) => {
            use base64::Engine;
            write_string(out, &base64::engine::general_purpose::STANDARD.encode(b))
        }
    }
}

/// Go's `encoding/json` float64: `'f'` form, or `'e'` (with a two-digit-free exponent) below
/// 1e-6 and from 1e21.
fn go_json_float(f: f64) -> String {
    if !f.is_finite() {
        return "null".into();
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        // Rust writes `1e21` / `1e-7`; Go writes `1e+21` / `1e-07` then trims to `1e-7`.
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
            _ => s,
        }
    } else {
        crate::tree::format_float_f(f)
    }
}

/// A JSON string as Go's encoder writes it (HTML-safe: `<`, `>`, `&` escaped).
fn write_string(out: &mut String, s: &str) {
    tidegate_core::gojson::write_string(out, s, true)
}

/// The binary store's plaintext: the `data` string of the envelope.
pub fn emit_binary(branches: &[Branch]) -> Result<Vec<u8>, StoreError> {
    let [branch] = branches else {
        return Err(StoreError::Emit(
            "error emitting binary store: there must be exactly one tree branch".into(),
        ));
    };
    for it in branch {
        if it.key_str() == Some("data") {
            return match &it.value {
                Value::Str(s) => Ok(s.clone().into_bytes()),
                _ => Err(StoreError::Emit(
                    "error emitting binary store: 'data' key in tree does not have a string value"
                        .into(),
                )),
            };
        }
    }
    Err(StoreError::Emit(
        "error emitting binary store: no binary data found in tree".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_written_as_go_indents_it() {
        let b = load(br#"{"foo":"bar","n":[1,2.5,{}],"e":{},"h":"<&>"}"#).unwrap();
        assert_eq!(
            String::from_utf8(emit(&b).unwrap()).unwrap(),
            "{\n\t\"foo\": \"bar\",\n\t\"n\": [\n\t\t1,\n\t\t2.5,\n\t\t{}\n\t],\n\t\"e\": {},\n\t\"h\": \"\\u003c\\u0026\\u003e\"\n}\n"
        );
        assert_eq!(go_json_float(1e21), "1e+21");
        assert_eq!(go_json_float(1e-7), "1e-7");
        assert_eq!(go_json_float(0.5), "0.5");
    }
}
