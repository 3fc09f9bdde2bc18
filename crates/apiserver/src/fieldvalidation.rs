//! Field validation (`fieldValidation=Strict|Warn|Ignore`): unknown fields are dropped, and
//! reported as an error (Strict) or a `Warning` header (Warn, the default); duplicate fields in
//! JSON bodies likewise.

use serde_json::Value;
use tidegate_merge::schema::Relationship;

use crate::error::{ApiError, ApiResult};
use crate::fieldmanager::Typed;

/// What to do with unknown and duplicate fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Directive {
    /// Reject the request.
    Strict,
    /// Accept it with warnings.
    Warn,
    /// Accept it silently.
    Ignore,
}

/// The request's directive; kube-apiserver's default is `Warn`.
pub fn directive(value: Option<&str>) -> ApiResult<Directive> {
    match value {
        None | Some("") | Some("Warn") => Ok(Directive::Warn),
        Some("Strict") => Ok(Directive::Strict),
        Some("Ignore") => Ok(Directive::Ignore),
        Some(other) => Err(ApiError::bad_request(format!(
            "fieldValidation: Unsupported value: \"{other}\": supported values: \"Ignore\", \"Strict\", \"Warn\""
        ))),
    }
}

/// Removes fields the schema does not declare; returns their paths (`spec.foo`,
/// `spec.containers[0].bar`).
pub fn drop_unknown(typed: &Typed, v: &mut Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(typed, typed.root(), v, String::new(), &mut out);
    out
}

fn walk(
    typed: &Typed,
    tr: &tidegate_merge::TypeRef,
    v: &mut Value,
    path: String,
    out: &mut Vec<String>,
) {
    let Some(r) = typed.schema().resolve(tr) else {
        return;
    };
    match v {
        Value::Object(m) => {
            let Some((map, rel)) = r.map() else {
                return;
            };
            if rel == Relationship::Atomic && map.fields.is_empty() {
                return;
            }
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                let child = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match map.type_of(&k) {
                    None => {
                        m.remove(&k);
                        out.push(child);
                    }
                    Some(t) => {
                        if let Some(val) = m.get_mut(&k) {
                            walk(typed, t, val, child, out);
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            let Some((list, _)) = r.list() else {
                return;
            };
            for (i, item) in items.iter_mut().enumerate() {
                walk(typed, &list.element, item, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Nesting the duplicate scanner follows; the JSON decoder refuses deeper bodies anyway.
const MAX_DEPTH: usize = 128;

/// Paths of keys that appear twice in one JSON object of `body` (empty for invalid JSON, which
/// the decoder reports itself, and for bodies nested deeper than the decoder accepts).
pub fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut s = Scanner {
        b: body,
        i: 0,
        out: Vec::new(),
    };
    if s.value("", 0).is_none() {
        return Vec::new();
    }
    s.out
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    out: Vec<String>,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn string(&mut self) -> Option<String> {
        let start = self.i;
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return serde_json::from_slice(&self.b[start..self.i]).ok();
                }
                _ => self.i += 1,
            }
        }
        None
    }

    fn value(&mut self, path: &str, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match *self.b.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut seen = std::collections::HashSet::new();
                loop {
                    self.ws();
                    match *self.b.get(self.i)? {
                        b'}' => {
                            self.i += 1;
                            return Some(());
                        }
                        b',' => {
                            self.i += 1;
                            continue;
                        }
                        b'"' => {}
                        _ => return None,
                    }
                    let key = self.string()?;
                    let child = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    if !seen.insert(key) {
                        self.out.push(child.clone());
                    }
                    self.ws();
                    if *self.b.get(self.i)? != b':' {
                        return None;
                    }
                    self.i += 1;
                    self.value(&child, depth + 1)?;
                }
            }
            b'[' => {
                self.i += 1;
                let mut n = 0;
                loop {
                    self.ws();
                    match *self.b.get(self.i)? {
                        b']' => {
                            self.i += 1;
                            return Some(());
                        }
                        b',' => {
                            self.i += 1;
                            continue;
                        }
                        _ => {
                            self.value(&format!("{path}[{n}]"), depth + 1)?;
                            n += 1;
                        }
                    }
                }
            }
            b'"' => self.string().map(|_| ()),
            _ => {
                while self.i < self.b.len() && !b",}] \t\r\n".contains(&self.b[self.i]) {
                    self.i += 1;
                }
                Some(())
            }
        }
    }
}

/// The first duplicate key of a YAML `text`, as kube-apiserver words it
/// (`line 5: key "a" already set in map`).
pub fn yaml_duplicate(text: &str) -> Option<String> {
    // The body was decoded already (the last value wins); read again refusing duplicates:
    // the first one is the error.
    let message = tidegate_core::yaml::parse_one(text).err()?.message;
    let key = message
        .split_once("mapping key ")
        .and_then(|(_, rest)| rest.split_once(" already defined"))
        .map(|(k, _)| k.to_string())?;
    let line = message
        .split_once(" at line ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .unwrap_or("?");
    Some(format!("line {line}: key {key} already set in map"))
}

/// Problems as kube-apiserver words them (`unknown field "spec.foo"`, `duplicate field "a"`).
pub fn problems(unknown: &[String], duplicate: &[String]) -> Vec<String> {
    let mut out: Vec<String> = duplicate
        .iter()
        .map(|p| format!("duplicate field \"{p}\""))
        .collect();
    out.extend(unknown.iter().map(|p| format!("unknown field \"{p}\"")));
    out
}
