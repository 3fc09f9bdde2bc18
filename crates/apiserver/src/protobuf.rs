//! Decoding of the Kubernetes protobuf encoding (`application/vnd.kubernetes.protobuf`) of
//! built-in kinds into JSON, as kubectl's typed commands (`kubectl create namespace`, `…
//! configmap`, `… deployment`) send it.
//!
//! The envelope is the magic `k8s\0` followed by a `runtime.Unknown` message whose `raw` field
//! holds the object. Go's protobuf encoding writes non-pointer zero values (empty strings, `0`,
//! `false`) that its JSON encoding omits; they are dropped here unless the generated table says
//! Go's JSON writes them (pointer fields, fields without `omitempty`).

use base64::Engine;
use serde_json::{Map, Value, json};
use tidegate_schema::protobuf::{ProtoKind, protobuf_fields};

const MAGIC: &[u8] = b"k8s\0";
const MAX_DEPTH: usize = 64;

/// Why a protobuf body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProtobufError(pub String);

fn err(msg: impl Into<String>) -> ProtobufError {
    ProtobufError(msg.into())
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self
                .buf
                .get(self.pos)
                .ok_or_else(|| err("truncated varint"))?;
            self.pos += 1;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(err("varint too long"))
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], ProtobufError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or_else(|| err("truncated field"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Len(&'a [u8]),
    Fixed32(u32),
}

fn fields(buf: &[u8]) -> Result<Vec<(u32, Wire<'_>)>, ProtobufError> {
    let mut r = Reader { buf, pos: 0 };
    let mut out = Vec::new();
    while !r.done() {
        let key = r.varint()?;
        let num = u32::try_from(key >> 3).map_err(|_| err("field number out of range"))?;
        let w = match key & 7 {
            0 => Wire::Varint(r.varint()?),
            1 => {
                let b = r.bytes(8)?;
                Wire::Fixed64(u64::from_le_bytes(
                    b.try_into().map_err(|_| err("bad fixed64"))?,
                ))
            }
            2 => {
                let n = usize::try_from(r.varint()?).map_err(|_| err("length out of range"))?;
                Wire::Len(r.bytes(n)?)
            }
            5 => {
                let b = r.bytes(4)?;
                Wire::Fixed32(u32::from_le_bytes(
                    b.try_into().map_err(|_| err("bad fixed32"))?,
                ))
            }
            t => return Err(err(format!("unsupported wire type {t}"))),
        };
        out.push((num, w));
    }
    Ok(out)
}

/// Decodes an enveloped object; returns its `apiVersion`, `kind` and JSON form.
/// `definition_of` maps `(apiVersion, kind)` to the OpenAPI definition name.
pub fn decode(
    body: &[u8],
    definition_of: impl Fn(&str, &str) -> Option<String>,
) -> Result<Value, ProtobufError> {
    let rest = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| err("protobuf body does not start with the Kubernetes magic prefix"))?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    for (num, w) in fields(rest)? {
        match (num, w) {
            (1, Wire::Len(tm)) => {
                for (n, w) in fields(tm)? {
                    if let Wire::Len(s) = w {
                        let s = String::from_utf8_lossy(s).into_owned();
                        match n {
                            1 => api_version = s,
                            2 => kind = s,
                            _ => {}
                        }
                    }
                }
            }
            (2, Wire::Len(r)) => raw = r,
            _ => {}
        }
    }
    let def = definition_of(&api_version, &kind).ok_or_else(|| {
        err(format!(
            "no protobuf encoding is known for {kind} in {api_version}"
        ))
    })?;
    let body = message(&def, raw, 0)?;
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!(api_version));
    out.insert("kind".into(), json!(kind));
    if let Value::Object(m) = body {
        out.extend(m);
    }
    Ok(Value::Object(out))
}

fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let neg = nanos < 0;
    let n = nanos.unsigned_abs();
    let mut s = String::new();
    if n < 1_000_000_000 {
        // Sub-second durations use the largest fitting unit.
        s = if n < 1_000 {
            format!("{n}ns")
        } else if n < 1_000_000 {
            format!("{}µs", trim_float(n as f64 / 1e3))
        } else {
            format!("{}ms", trim_float(n as f64 / 1e6))
        };
    } else {
        let h = n / 3_600_000_000_000;
        let m = (n / 60_000_000_000) % 60;
        let sec = (n % 60_000_000_000) as f64 / 1e9;
        if h > 0 {
            s.push_str(&format!("{h}h{m}m"));
        } else if m > 0 {
            s.push_str(&format!("{m}m"));
        }
        s.push_str(&format!("{}s", trim_float(sec)));
    }
    if neg { format!("-{s}") } else { s }
}

fn trim_float(f: f64) -> String {
    let s = format!("{f:.9}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

fn time(raw: &[u8], micro: bool) -> Result<Value, ProtobufError> {
    let mut secs = 0i64;
    let mut nanos = 0i64;
    for (n, w) in fields(raw)? {
        if let Wire::Varint(v) = w {
            match n {
                1 => secs = v as i64,
                2 => nanos = i64::from(v as i32),
                _ => {}
            }
        }
    }
    if secs == 0 && nanos == 0 {
        return Ok(Value::Null);
    }
    let t = chrono::DateTime::from_timestamp(secs, u32::try_from(nanos).unwrap_or(0))
        .ok_or_else(|| err("timestamp out of range"))?;
    Ok(json!(if micro {
        t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
    } else {
        t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
    }))
}

/// Decodes one message of definition `def`.
fn message(def: &str, raw: &[u8], depth: usize) -> Result<Value, ProtobufError> {
    if depth > MAX_DEPTH {
        return Err(err("message nesting too deep"));
    }
    match def {
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => return time(raw, false),
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => return time(raw, true),
        "io.k8s.apimachinery.pkg.apis.meta.v1.Duration" => {
            let mut d = 0i64;
            for (n, w) in fields(raw)? {
                if let (1, Wire::Varint(v)) = (n, w) {
                    d = v as i64;
                }
            }
            return Ok(json!(go_duration(d)));
        }
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => {
            for (n, w) in fields(raw)? {
                if let (1, Wire::Len(s)) = (n, w) {
                    return Ok(json!(String::from_utf8_lossy(s)));
                }
            }
            return Ok(json!("0"));
        }
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => {
            let (mut t, mut i, mut s) = (0u64, 0i64, String::new());
            for (n, w) in fields(raw)? {
                match (n, w) {
                    (1, Wire::Varint(v)) => t = v,
                    (2, Wire::Varint(v)) => i = i64::from(v as i32),
                    (3, Wire::Len(b)) => s = String::from_utf8_lossy(b).into_owned(),
                    _ => {}
                }
            }
            return Ok(if t == 1 { json!(s) } else { json!(i) });
        }
        "io.k8s.apimachinery.pkg.runtime.RawExtension"
        | "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"
        | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON" => {
            for (n, w) in fields(raw)? {
                if let (1, Wire::Len(b)) = (n, w) {
                    return serde_json::from_slice(b)
                        .map_err(|e| err(format!("embedded JSON in {def}: {e}")));
                }
            }
            return Ok(json!({}));
        }
        _ => {}
    }
    let table = protobuf_fields(def).ok_or_else(|| err(format!("no protobuf table for {def}")))?;
    if let Some(items) = table.get(&1).filter(|f| f.named_slice) {
        let mut list = Vec::new();
        for (num, w) in fields(raw)? {
            if num == 1 {
                list.push(scalar_or_message(&items.kind, w, depth)?);
            }
        }
        return Ok(Value::Array(list));
    }
    let mut out = Map::new();
    for (num, w) in fields(raw)? {
        let Some(f) = table.get(&num) else { continue };
        match &f.kind {
            ProtoKind::Map(value_kind) => {
                let Wire::Len(entry) = w else {
                    return Err(err(format!(
                        "{}: map entry is not length-delimited",
                        f.json_name
                    )));
                };
                let (mut k, mut v) = (String::new(), Value::Null);
                for (n, ew) in fields(entry)? {
                    match n {
                        1 => {
                            if let Wire::Len(b) = ew {
                                k = String::from_utf8_lossy(b).into_owned();
                            }
                        }
                        2 => v = scalar_or_message(value_kind, ew, depth)?,
                        _ => {}
                    }
                }
                if v.is_null() {
                    v = match value_kind.as_ref() {
                        ProtoKind::String | ProtoKind::Bytes => json!(""),
                        _ => json!({}),
                    };
                }
                let map = out.entry(f.json_name.clone()).or_insert_with(|| json!({}));
                if let Some(m) = map.as_object_mut() {
                    m.insert(k, v);
                }
            }
            kind if f.repeated => {
                let arr = out.entry(f.json_name.clone()).or_insert_with(|| json!([]));
                let Some(a) = arr.as_array_mut() else {
                    continue;
                };
                match (kind, w) {
                    // Packed repeated varints.
                    (ProtoKind::Int32 | ProtoKind::Int64 | ProtoKind::Bool, Wire::Len(b)) => {
                        let mut r = Reader { buf: b, pos: 0 };
                        while !r.done() {
                            a.push(scalar_or_message(kind, Wire::Varint(r.varint()?), depth)?);
                        }
                    }
                    (kind, w) => a.push(scalar_or_message(kind, w, depth)?),
                }
            }
            kind => match scalar_or_message(kind, w, depth)? {
                // An embedded struct: its fields are the parent's.
                Value::Object(m) if f.inline => out.extend(m),
                // Go's JSON omits zero values of `omitempty` fields that are not pointers.
                v if is_zero(&v) && !f.keeps_zero => {}
                v => {
                    out.insert(f.json_name.clone(), v);
                }
            },
        }
    }
    out.retain(|_, v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()));
    Ok(Value::Object(out))
}

/// Whether a decoded scalar is Go's zero value. Nested structs are never zero: Go's JSON writes
/// `{}` for them.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !*b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Object(_) | Value::Array(_) => false,
    }
}

fn scalar_or_message(kind: &ProtoKind, w: Wire<'_>, depth: usize) -> Result<Value, ProtobufError> {
    Ok(match (kind, w) {
        (ProtoKind::String, Wire::Len(b)) => json!(String::from_utf8_lossy(b)),
        (ProtoKind::Bytes, Wire::Len(b)) => {
            json!(base64::engine::general_purpose::STANDARD.encode(b))
        }
        (ProtoKind::Bool, Wire::Varint(v)) => json!(v != 0),
        (ProtoKind::Int32, Wire::Varint(v)) => json!(i64::from(v as i32)),
        (ProtoKind::Int64, Wire::Varint(v)) => json!(v as i64),
        (ProtoKind::Double, Wire::Fixed64(v)) => json!(f64::from_bits(v)),
        (ProtoKind::Float, Wire::Fixed32(v)) => json!(f32::from_bits(v)),
        (ProtoKind::Message(def), Wire::Len(b)) => message(def, b, depth + 1)?,
        _ => return Err(err("field has an unexpected wire type")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_durations_like_go() {
        assert_eq!(go_duration(3_600_000_000_000), "1h0m0s");
        assert_eq!(go_duration(90_000_000_000), "1m30s");
        assert_eq!(go_duration(1_500_000_000), "1.5s");
        assert_eq!(go_duration(5_000_000), "5ms");
    }
}
