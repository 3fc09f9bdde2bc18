//! Encodings: base64 and base32 (`b64enc` …), JSON as Go's `encoding/json` writes and reads
//! it (`toJson`, `toPrettyJson`, `toRawJson`, `fromJson`), and URLs as `net/url` splits them.

use std::collections::BTreeMap;

use base64::Engine;

use super::s;
use crate::template::func::{Func, Ty};
use crate::template::value::{ListKind, Value};
use crate::template::{FuncMap, fmt};

pub(super) fn register(m: &mut FuncMap) {
    use Ty::{Any, String as Str};
    m.insert(Func::new("b64enc", &[Str], None, |_, a| {
        Ok(Value::str(
            &base64::engine::general_purpose::STANDARD.encode(s(&a[0])),
        ))
    }));
    m.insert(Func::new("b64dec", &[Str], None, |_, a| {
        Ok(Value::str(&match base64_decode(s(&a[0])) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => e,
        }))
    }));
    m.insert(Func::new("b32enc", &[Str], None, |_, a| {
        Ok(Value::str(&base32_encode(s(&a[0]).as_bytes())))
    }));
    m.insert(Func::new("b32dec", &[Str], None, |_, a| {
        Ok(Value::str(&match base32_decode(s(&a[0])) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => e,
        }))
    }));
    m.insert(Func::new("toJson", &[Any], None, |_, a| {
        Ok(Value::str(
            &to_json(&a[0], JsonStyle::Compact).unwrap_or_default(),
        ))
    }));
    m.insert(Func::new("mustToJson", &[Any], None, |_, a| {
        Ok(Value::str(&to_json(&a[0], JsonStyle::Compact)?))
    }));
    m.insert(Func::new("toPrettyJson", &[Any], None, |_, a| {
        Ok(Value::str(
            &to_json(&a[0], JsonStyle::Pretty).unwrap_or_default(),
        ))
    }));
    m.insert(Func::new("mustToPrettyJson", &[Any], None, |_, a| {
        Ok(Value::str(&to_json(&a[0], JsonStyle::Pretty)?))
    }));
    m.insert(Func::new("toRawJson", &[Any], None, |_, a| {
        Ok(Value::str(&to_json(&a[0], JsonStyle::Raw)?))
    }));
    m.insert(Func::new("mustToRawJson", &[Any], None, |_, a| {
        Ok(Value::str(&to_json(&a[0], JsonStyle::Raw)?))
    }));
    m.insert(Func::new("fromJson", &[Str], None, |_, a| {
        Ok(from_json_text(s(&a[0])).unwrap_or(Value::Nil))
    }));
    m.insert(Func::new("mustFromJson", &[Str], None, |_, a| {
        from_json_text(s(&a[0]))
    }));
}

/// Go's `base64.StdEncoding.DecodeString`, with its error text.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let cleaned: String = text.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    base64::engine::general_purpose::STANDARD
        .decode(cleaned.as_bytes())
        .map_err(|e| {
            let at = match e {
                base64::DecodeError::InvalidByte(at, _) => at,
                base64::DecodeError::InvalidLength(len) => len - len % 4,
                base64::DecodeError::InvalidLastSymbol(at, _) => at,
                base64::DecodeError::InvalidPadding => cleaned.len().saturating_sub(1),
            };
            format!("illegal base64 data at input byte {at}")
        })
}

const B32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn base32_encode(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let bits = buf.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        let chars = match chunk.len() {
            1 => 2,
            2 => 4,
            3 => 5,
            4 => 7,
            _ => 8,
        };
        for i in 0..8 {
            if i < chars {
                out.push(B32[((bits >> (35 - i * 5)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base32_decode(text: &str) -> Result<Vec<u8>, String> {
    let cleaned: Vec<u8> = text
        .bytes()
        .filter(|c| *c != b'\r' && *c != b'\n')
        .collect();
    if !cleaned.len().is_multiple_of(8) {
        return Err(format!(
            "illegal base32 data at input byte {}",
            cleaned.len() / 8 * 8
        ));
    }
    let mut out = Vec::new();
    for (n, chunk) in cleaned.chunks(8).enumerate() {
        let mut bits = 0u64;
        let mut count = 0;
        for (i, c) in chunk.iter().enumerate() {
            if *c == b'=' {
                break;
            }
            let v = B32
                .iter()
                .position(|b| b == c)
                .ok_or_else(|| format!("illegal base32 data at input byte {}", n * 8 + i))?;
            bits = (bits << 5) | v as u64;
            count += 1;
        }
        bits <<= 5 * (8 - count);
        let bytes = match count {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            2 => 1,
            _ => {
                return Err(format!(
                    "illegal base32 data at input byte {}",
                    n * 8 + count
                ));
            }
        };
        for i in 0..bytes {
            out.push((bits >> (32 - i * 8)) as u8);
        }
    }
    Ok(out)
}

/// How to write JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonStyle {
    /// `json.Marshal`: compact, `<`, `>` and `&` escaped.
    Compact,
    /// `json.MarshalIndent(v, "", "  ")`.
    Pretty,
    /// An encoder without HTML escaping (Sprig's `toRawJson`).
    Raw,
}

/// Go's `encoding/json` for a template value; `Err` carries Go's message for values JSON
/// cannot hold (NaN, infinities, functions, complex numbers).
pub fn to_json(v: &Value, style: JsonStyle) -> Result<String, String> {
    json_cycle_check(v)?;
    let mut out = String::new();
    write_json(&mut out, v, style, 0)?;
    Ok(out)
}

/// Go's `encoding/json` on a value that contains itself (a map set into itself with Sprig's
/// `set`): past 1000 nested maps and slices it notes each one it enters, and fails on
/// meeting one it is still inside. Walking such a value further would never end.
pub fn json_cycle_check(v: &Value) -> Result<(), String> {
    const START_DETECTING_CYCLES_AFTER: usize = 1000;
    fn walk(v: &Value, level: usize, seen: &mut Vec<*const ()>) -> Result<(), String> {
        let ptr = match v {
            Value::Map(m, _) => std::rc::Rc::as_ptr(m) as *const (),
            Value::List(l, _) => std::rc::Rc::as_ptr(l) as *const (),
            _ => return Ok(()),
        };
        let level = level + 1;
        let tracked = level > START_DETECTING_CYCLES_AFTER;
        if tracked {
            if seen.contains(&ptr) {
                return Err(format!(
                    "json: unsupported value: encountered a cycle via {}",
                    v.type_name()
                ));
            }
            seen.push(ptr);
        }
        match v {
            Value::Map(m, _) => {
                for item in m.borrow().values() {
                    walk(item, level, seen)?;
                }
            }
            Value::List(l, _) => {
                for item in l.iter() {
                    walk(item, level, seen)?;
                }
            }
            _ => {}
        }
        if tracked {
            seen.pop();
        }
        Ok(())
    }
    walk(v, 0, &mut Vec::new())
}

fn newline(out: &mut String, style: JsonStyle, depth: usize) {
    if style == JsonStyle::Pretty {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
}

fn write_json(out: &mut String, v: &Value, style: JsonStyle, depth: usize) -> Result<(), String> {
    match v {
        Value::Invalid | Value::Nil | Value::NilList(_) | Value::NilMap(_) => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i, _) => out.push_str(&i.to_string()),
        Value::Uint(u, _) => out.push_str(&u.to_string()),
        Value::Float(f) => out.push_str(&json_float(*f)?),
        Value::Complex(..) => return Err("json: unsupported type: complex128".into()),
        Value::String(s) => json_string(out, s, style != JsonStyle::Raw),
        Value::Bytes(b) => {
            json_string(
                out,
                &base64::engine::general_purpose::STANDARD.encode(b),
                false,
            );
        }
        Value::List(items, _) => {
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, style, depth + 1);
                write_json(out, item, style, depth + 1)?;
            }
            newline(out, style, depth);
            out.push(']');
        }
        Value::Map(m, _) => {
            let m = m.borrow();
            if m.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, style, depth + 1);
                json_string(out, k, style != JsonStyle::Raw);
                out.push(':');
                if style == JsonStyle::Pretty {
                    out.push(' ');
                }
                write_json(out, v, style, depth + 1)?;
            }
            newline(out, style, depth);
            out.push('}');
        }
        Value::Object(o) => {
            if let Some(s) = o.json_text() {
                out.push_str(&s);
            } else if let Some(items) = o.list_items() {
                write_json(
                    out,
                    &Value::List(std::rc::Rc::new(items), ListKind::Any),
                    style,
                    depth,
                )?;
            } else if let Some(entries) = o.map_entries() {
                write_json(
                    out,
                    &Value::map(entries.into_iter().collect()),
                    style,
                    depth,
                )?;
            } else {
                let fields = o.json_fields();
                if fields.is_empty() {
                    out.push_str("{}");
                    return Ok(());
                }
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, style, depth + 1);
                    json_string(out, k, style != JsonStyle::Raw);
                    out.push(':');
                    if style == JsonStyle::Pretty {
                        out.push(' ');
                    }
                    write_json(out, v, style, depth + 1)?;
                }
                newline(out, style, depth);
                out.push('}');
            }
        }
        Value::Func(f) => return Err(format!("json: unsupported type: {}", f.type_name())),
    }
    Ok(())
}

/// A float as `encoding/json` writes it.
pub fn json_float(f: f64) -> Result<String, String> {
    if !f.is_finite() {
        return Err(format!(
            "json: unsupported value: {}",
            fmt::format_float(f, 'g', None)
        ));
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let mut s = fmt::format_float(f, 'e', None);
        // e-09 becomes e-9.
        let n = s.len();
        if n >= 4 && &s[n - 4..n - 2] == "e-" && s.as_bytes()[n - 2] == b'0' {
            s.remove(n - 2);
        }
        return Ok(s);
    }
    Ok(fmt::format_float(f, 'f', None))
}

/// A JSON string as Go writes it (`<`, `>`, `&` escaped when `escape_html`).
pub fn json_string(out: &mut String, s: &str, escape_html: bool) {
    tidegate_core::gojson::write_string(out, s, escape_html)
}

/// JSON text read as Go's `json.Unmarshal` into `interface {}` reads it (numbers as
/// `float64`); `Err` has Go's message.
pub fn from_json_text(text: &str) -> Result<Value, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| go_json_error(text, &e))?;
    Ok(Value::from_json(&v))
}

/// Go's wording of a JSON syntax error, as near as the parser's report allows.
pub fn go_json_error(text: &str, e: &serde_json::Error) -> String {
    if text.trim().is_empty() || e.is_eof() {
        return "unexpected end of JSON input".into();
    }
    // The offending character, at the parser's position.
    let line = e.line().saturating_sub(1);
    let col = e.column().saturating_sub(1);
    let c = text.lines().nth(line).and_then(|l| l.chars().nth(col));
    match c {
        Some(c) => format!(
            "invalid character {} looking for beginning of value",
            crate::template::quote::quote_rune(c)
        ),
        None => e.to_string(),
    }
}

/// Go's `url.Parse`, as the fields Sprig's `urlParse` reports.
pub fn parse_url(v: &str) -> Result<Vec<(&'static str, String)>, String> {
    let (rest, fragment) = match v.split_once('#') {
        Some((r, f)) => (r, unescape(f)?),
        None => (v, String::new()),
    };
    let mut scheme = String::new();
    let mut rest = rest;
    if let Some(i) = rest.find(':') {
        let candidate = &rest[..i];
        if !candidate.is_empty()
            && candidate
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
            && candidate
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            scheme = candidate.to_ascii_lowercase();
            rest = &rest[i + 1..];
        } else if i == 0 {
            return Err(format!(
                "parse {}: missing protocol scheme",
                super::strings::go_quote(v)
            ));
        }
    }
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, q.to_string()),
        None => (rest, String::new()),
    };
    let mut host = String::new();
    let mut userinfo = String::new();
    let mut opaque = String::new();
    let mut path = String::new();
    if !scheme.is_empty() && !rest.starts_with('/') {
        opaque = rest.to_string();
    } else if let Some(after) = rest.strip_prefix("//") {
        let end = after.find('/').unwrap_or(after.len());
        let authority = &after[..end];
        path = unescape(&after[end..])?;
        match authority.rsplit_once('@') {
            Some((u, h)) => {
                userinfo = u.to_string();
                host = h.to_string();
            }
            None => host = authority.to_string(),
        }
    } else {
        path = unescape(rest)?;
    }
    let hostname = if let Some(inner) = host.strip_prefix('[') {
        inner.split(']').next().unwrap_or_default().to_string()
    } else {
        host.rsplit_once(':')
            .map(|(h, _)| h.to_string())
            .unwrap_or_else(|| host.clone())
    };
    Ok(vec![
        ("scheme", scheme),
        ("host", host),
        ("hostname", hostname),
        ("path", path),
        ("query", query),
        ("opaque", opaque),
        ("fragment", fragment),
        ("userinfo", userinfo),
    ])
}

fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3).ok_or_else(|| {
                format!("invalid URL escape {}", super::strings::go_quote(&s[i..]))
            })?;
            let v = u8::from_str_radix(hex, 16).map_err(|_| {
                format!(
                    "invalid URL escape {}",
                    super::strings::go_quote(&s[i..i + 3])
                )
            })?;
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn escape_path(p: &str) -> String {
    let mut out = String::new();
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Go's `url.URL.String()` of the parts.
pub fn url_string(
    scheme: &str,
    host: &str,
    path: &str,
    query: &str,
    opaque: &str,
    fragment: &str,
    user: &str,
) -> String {
    let mut out = String::new();
    if !scheme.is_empty() {
        out.push_str(scheme);
        out.push(':');
    }
    if !opaque.is_empty() {
        out.push_str(opaque);
    } else {
        if !scheme.is_empty() || !host.is_empty() || !user.is_empty() {
            if !host.is_empty() || !path.is_empty() || !user.is_empty() {
                out.push_str("//");
            }
            if !user.is_empty() {
                out.push_str(user);
                out.push('@');
            }
            out.push_str(host);
        }
        if !path.is_empty() && !path.starts_with('/') && !host.is_empty() {
            out.push('/');
        }
        out.push_str(&escape_path(path));
    }
    if !query.is_empty() {
        out.push('?');
        out.push_str(query);
    }
    if !fragment.is_empty() {
        out.push('#');
        out.push_str(&escape_path(fragment));
    }
    out
}

/// An empty `[]interface {}` (what `fromJsonArray` and friends start from).
pub fn empty_list() -> Value {
    Value::List(std::rc::Rc::new(Vec::new()), ListKind::Any)
}

/// A map with one entry, `Error`, as Helm's lenient parsers report failures.
pub fn error_map(message: String) -> Value {
    let mut m = BTreeMap::new();
    m.insert("Error".to_string(), Value::str(&message));
    Value::map(m)
}
