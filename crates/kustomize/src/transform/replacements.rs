//! `replacements`: copy a value from one field of a source object into fields of target objects.
//!
//! Field paths use dots; a segment may be `[key=value]` (or `name[key=value]`) to pick list
//! items, a number to index a list, and `*` for every item.

use serde_json::{Map, Value};

use super::select::Matcher;
use crate::error::{Error, ErrorKind, Result};
use crate::kustomization::{FieldOptions, Replacement, ReplacementField, Selector, SourceSelector};
use crate::resmap::ResMap;
use crate::resource::Resource;
use crate::target::{Builder, Level};

/// One step of a field path.
#[derive(Debug, Clone, PartialEq)]
pub enum PathSeg {
    /// A map key.
    Key(String),
    /// List items whose `key` equals `value` (`*` matches any).
    Select(String, String),
    /// A list index.
    Index(usize),
    /// Every list item.
    All,
}

/// Splits a dotted field path; dots inside `[...]` do not split.
pub fn parse_path(path: &str) -> Vec<PathSeg> {
    let mut raw = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'.') => {
                cur.push('.');
                chars.next();
            }
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth -= 1;
                cur.push(c);
            }
            '.' if depth == 0 => raw.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    raw.push(cur);
    let mut out = Vec::new();
    for seg in raw.into_iter().filter(|s| !s.is_empty()) {
        if let Some(open) = seg.find('[') {
            let field = &seg[..open];
            if !field.is_empty() {
                out.push(PathSeg::Key(field.to_string()));
            }
            let inner = seg[open + 1..].trim_end_matches(']');
            match inner.split_once('=') {
                Some((k, v)) => out.push(PathSeg::Select(k.to_string(), v.to_string())),
                None => match inner.parse::<usize>() {
                    Ok(n) => out.push(PathSeg::Index(n)),
                    Err(_) => out.push(PathSeg::Key(inner.to_string())),
                },
            }
        } else if seg == "*" {
            out.push(PathSeg::All);
        } else if let Ok(n) = seg.parse::<usize>() {
            out.push(PathSeg::Index(n));
        } else {
            out.push(PathSeg::Key(seg));
        }
    }
    out
}

/// The value at a path (the first one, for selections).
pub fn lookup<'a>(v: &'a Value, path: &[PathSeg]) -> Option<&'a Value> {
    let Some((seg, rest)) = path.split_first() else {
        return Some(v);
    };
    match (seg, v) {
        (PathSeg::Key(k), Value::Object(m)) => lookup(m.get(k)?, rest),
        (PathSeg::Index(n), Value::Array(a)) => lookup(a.get(*n)?, rest),
        (PathSeg::Key(k), Value::Array(a)) => {
            let n: usize = k.parse().ok()?;
            lookup(a.get(n)?, rest)
        }
        (PathSeg::Select(k, val), Value::Array(a)) => a
            .iter()
            .filter(|i| item_matches(i, k, val))
            .find_map(|i| lookup(i, rest)),
        (PathSeg::All, Value::Array(a)) => a.iter().find_map(|i| lookup(i, rest)),
        _ => None,
    }
}

fn item_matches(item: &Value, key: &str, val: &str) -> bool {
    match item.get(key) {
        Some(Value::String(s)) => val == "*" || s == val,
        Some(Value::Number(n)) => val == "*" || n.to_string() == val,
        Some(Value::Bool(b)) => val == "*" || b.to_string() == val,
        _ => false,
    }
}

/// Sets `value` at every place the path reaches; returns how many were set.
fn set_all(v: &mut Value, path: &[PathSeg], value: &Value, opts: &FieldOptions) -> Result<usize> {
    let Some((seg, rest)) = path.split_first() else {
        apply_value(v, value, opts)?;
        return Ok(1);
    };
    match (seg, v) {
        (PathSeg::Key(k), Value::Object(m)) => {
            if !m.contains_key(k) || m.get(k).is_some_and(Value::is_null) {
                if !opts.create {
                    return Ok(0);
                }
                let fresh = match rest.first() {
                    None => Value::Null,
                    Some(PathSeg::Key(_)) => Value::Object(Map::new()),
                    Some(_) => Value::Array(Vec::new()),
                };
                m.insert(k.clone(), fresh);
            }
            match m.get_mut(k) {
                Some(child) => set_all(child, rest, value, opts),
                None => Ok(0),
            }
        }
        (PathSeg::Index(n), Value::Array(a)) => match a.get_mut(*n) {
            Some(x) => set_all(x, rest, value, opts),
            None => Ok(0),
        },
        (PathSeg::Select(k, val), Value::Array(a)) => {
            let mut count = 0;
            let re = regex::Regex::new(val).ok();
            let hit = |i: &Value| match (&re, i.get(k.as_str())) {
                (Some(re), Some(Value::String(s))) => re.is_match(s),
                _ => item_matches(i, k, val),
            };
            for item in a.iter_mut().filter(|i| hit(i)) {
                count += set_all(item, rest, value, opts)?;
            }
            if count == 0 && opts.create && val != "*" {
                let mut fresh = Map::new();
                fresh.insert(k.clone(), Value::String(val.clone()));
                let mut item = Value::Object(fresh);
                count += set_all(&mut item, rest, value, opts)?;
                a.push(item);
            }
            Ok(count)
        }
        (PathSeg::All, Value::Array(a)) => {
            let mut count = 0;
            for item in a.iter_mut() {
                count += set_all(item, rest, value, opts)?;
            }
            Ok(count)
        }
        _ => Ok(0),
    }
}

fn apply_value(target: &mut Value, value: &Value, opts: &FieldOptions) -> Result<()> {
    if opts.delimiter.is_empty() {
        *target = value.clone();
        return Ok(());
    }
    let current = match &*target {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let new = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut parts: Vec<String> = current
        .split(opts.delimiter.as_str())
        .map(str::to_string)
        .collect();
    if opts.index < 0 {
        parts.insert(0, new);
    } else if (opts.index as usize) < parts.len() {
        parts[opts.index as usize] = new;
    } else {
        parts.push(new);
    }
    *target = Value::String(parts.join(&opts.delimiter));
    Ok(())
}

fn source_value(res: &ResMap, src: &SourceSelector) -> Result<Value> {
    let sel = Selector {
        group: src.group.clone(),
        version: src.version.clone(),
        kind: src.kind.clone(),
        name: src.name.clone(),
        namespace: src.namespace.clone(),
        ..Selector::default()
    };
    let m = Matcher::exact(&sel)?;
    let found: Vec<&Resource> = res.resources.iter().filter(|r| m.matches(r)).collect();
    let r = match found.as_slice() {
        [r] => *r,
        [] => {
            return Err(Error::new(
                ErrorKind::NoMatch,
                format!(
                    "replacements: nothing selected by source {}",
                    describe(&sel)
                ),
            ));
        }
        _ => {
            return Err(Error::new(
                ErrorKind::NoMatch,
                format!(
                    "replacements: multiple matches for source selector {}",
                    describe(&sel)
                ),
            ));
        }
    };
    let path = if src.field_path.is_empty() {
        "metadata.name"
    } else {
        src.field_path.as_str()
    };
    let obj = Value::Object(r.obj.clone());
    let v = lookup(&obj, &parse_path(path)).cloned().ok_or_else(|| {
        Error::new(
            ErrorKind::NoMatch,
            format!(
                "replacements: source field {path:?} not found in {}",
                r.describe()
            ),
        )
    })?;
    match &src.options {
        Some(o) if !o.delimiter.is_empty() => {
            let s = match &v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let parts: Vec<&str> = s.split(o.delimiter.as_str()).collect();
            let idx = o.index.max(0) as usize;
            parts.get(idx).map(|p| Value::String(p.to_string())).ok_or_else(|| {
                Error::new(
                    ErrorKind::Invalid,
                    format!("replacements: options.index {} is out of bounds for value {s:?} of {path:?}", o.index),
                )
            })
        }
        _ => Ok(v),
    }
}

fn describe(s: &Selector) -> String {
    let mut parts = Vec::new();
    for (k, v) in [
        ("group", &s.group),
        ("version", &s.version),
        ("kind", &s.kind),
        ("name", &s.name),
        ("namespace", &s.namespace),
    ] {
        if !v.is_empty() {
            parts.push(format!("{k}={v}"));
        }
    }
    format!("[{}]", parts.join(" "))
}

/// Runs a level's replacements in order.
pub fn run(b: &Builder, level: &Level, res: &mut ResMap) -> Result<()> {
    run_list(b, level, &level.k.replacements, res)
}

/// Runs replacements (inline, or files of them named relative to `level`) in order.
pub fn run_list(
    b: &Builder,
    level: &Level,
    list: &[ReplacementField],
    res: &mut ResMap,
) -> Result<()> {
    let mut all: Vec<Replacement> = Vec::new();
    for r in list {
        match r {
            ReplacementField::Inline(r) => all.push((**r).clone()),
            ReplacementField::Path { path } => {
                let (text, file) = b.read_text(level, path)?;
                let docs = crate::yaml::parse_stream(&text, &file)?;
                for d in docs {
                    let list = match d.value {
                        Value::Array(items) => items,
                        other => vec![other],
                    };
                    for item in list {
                        let item = crate::kustomization::field_names::canonical_replacement(item);
                        let rep: Replacement = serde_json::from_value(item).map_err(|e| {
                            Error::in_file(
                                ErrorKind::Invalid,
                                file.clone(),
                                format!("invalid replacement: {e}"),
                            )
                            .at_line(Some(d.line))
                        })?;
                        all.push(rep);
                    }
                }
            }
        }
    }
    for rep in &all {
        let Some(src) = &rep.source else {
            return Err(Error::new(
                ErrorKind::Invalid,
                "replacements: an entry needs a source",
            ));
        };
        let value = source_value(res, src)?;
        for t in &rep.targets {
            let Some(select) = &t.select else {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    "replacements: a target needs select",
                ));
            };
            let m = Matcher::exact(select)?;
            let rejects: Vec<Matcher> =
                t.reject.iter().map(Matcher::exact).collect::<Result<_>>()?;
            let opts = t.options.clone().unwrap_or_default();
            for r in res.resources.iter_mut() {
                if !m.matches(r) || rejects.iter().any(|x| x.matches(r)) {
                    continue;
                }
                let mut obj = Value::Object(std::mem::take(&mut r.obj));
                let mut outcome = Ok(());
                for fp in &t.field_paths {
                    let path = parse_path(fp);
                    match set_all(&mut obj, &path, &value, &opts) {
                        Ok(0) if !opts.create => {
                            outcome = Err(Error::new(
                                ErrorKind::NoMatch,
                                format!(
                                    "replacements: unable to find field {fp:?} in replacement target"
                                ),
                            ));
                            break;
                        }
                        Ok(_) => {}
                        Err(e) => {
                            outcome = Err(e);
                            break;
                        }
                    }
                }
                r.obj = match obj {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                outcome.map_err(|e| Error {
                    message: format!("{} ({})", e.message, r.describe()),
                    ..e
                })?;
            }
        }
    }
    Ok(())
}
