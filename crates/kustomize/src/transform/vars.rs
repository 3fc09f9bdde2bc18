//! `vars`: values read from objects at the end of the build and substituted for `$(NAME)` in
//! the fields of the `varReference` configuration.

use std::collections::BTreeMap;

use serde_json::Value;

use super::replacements::{PathSeg, lookup, parse_path};
use crate::error::{Error, ErrorKind, Result};
use crate::fieldspec::Config;
use crate::kustomization::Var;
use crate::resmap::ResMap;
use crate::resource::Gvk;

/// Finds the resource a var declared at this level reads (current or earlier id).
pub fn attach(res: &ResMap, v: &Var) -> Result<Option<u64>> {
    let o = &v.objref;
    let want = if !o.api_version.is_empty() {
        Some(Gvk::from_api_version(&o.api_version, &o.kind))
    } else {
        None
    };
    let found: Vec<u64> = res
        .resources
        .iter()
        .filter(|r| {
            let gvk = r.gvk();
            gvk.kind == o.kind
                && want
                    .as_ref()
                    .is_none_or(|w| w.group == gvk.group && w.version == gvk.version)
                && (o.group.is_empty() || o.group == gvk.group)
                && (o.version.is_empty() || o.version == gvk.version)
                && r.any_id(|id| {
                    id.name == o.name && (o.namespace.is_empty() || id.namespace == o.namespace)
                })
        })
        .map(|r| r.uid)
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [uid] => Ok(Some(*uid)),
        many => Err(Error::new(
            ErrorKind::Invalid,
            format!(
                "found {} resId matches for var {:?} (unable to disambiguate)",
                many.len(),
                v.name
            ),
        )),
    }
}

/// Resolves every var and substitutes it.
pub fn resolve(res: &mut ResMap, vars: &[(Var, Option<u64>)], config: &Config) -> Result<()> {
    if vars.is_empty() {
        return Ok(());
    }
    let mut values: BTreeMap<String, Value> = BTreeMap::new();
    for (v, uid) in vars {
        let Some(r) = uid.and_then(|u| res.resources.iter().find(|r| r.uid == u)) else {
            return Err(Error::new(
                ErrorKind::NoMatch,
                format!(
                    "var {:?} cannot be mapped to a field in the set of known resources (no {} named {:?})",
                    v.name, v.objref.kind, v.objref.name
                ),
            ));
        };
        let path = v
            .fieldref
            .as_ref()
            .map(|f| f.fieldpath.as_str())
            .filter(|p| !p.is_empty())
            .unwrap_or("metadata.name");
        let segs: Vec<PathSeg> = parse_path(path);
        let obj = Value::Object(r.obj.clone());
        let value = lookup(&obj, &segs).ok_or_else(|| {
            Error::new(
                ErrorKind::NoMatch,
                format!(
                    "field specified in var {:?} ({path}) not found in {}",
                    v.name,
                    r.describe()
                ),
            )
        })?;
        values.insert(v.name.clone(), value.clone());
    }
    for r in &mut res.resources {
        let gvk = r.gvk();
        for spec in config.var_reference.iter().filter(|s| s.applies_to(&gvk)) {
            spec.visit(&mut r.obj, &mut |v| {
                substitute(v, &values);
                Ok(())
            })?;
        }
    }
    Ok(())
}

fn substitute(v: &mut Value, values: &BTreeMap<String, Value>) {
    match v {
        Value::String(s) => {
            // A string that is exactly one var takes the var's typed value.
            if let Some(name) = s.strip_prefix("$(").and_then(|r| r.strip_suffix(')'))
                && let Some(val) = values.get(name)
                && !val.is_object()
                && !val.is_array()
            {
                *v = val.clone();
                return;
            }
            let texts: BTreeMap<String, String> = values
                .iter()
                .filter_map(|(k, v)| match v {
                    Value::String(s) => Some((k.clone(), s.clone())),
                    Value::Number(n) => Some((k.clone(), n.to_string())),
                    Value::Bool(b) => Some((k.clone(), b.to_string())),
                    _ => None,
                })
                .collect();
            *s = expand(s, &texts);
        }
        Value::Array(items) => {
            for i in items.iter_mut() {
                substitute(i, values);
            }
        }
        Value::Object(m) => {
            for (_, x) in m.iter_mut() {
                substitute(x, values);
            }
        }
        _ => {}
    }
}

/// Kubernetes' `$(VAR)` expansion: defined vars replaced, `$$` escapes, others kept.
pub fn expand(s: &str, values: &BTreeMap<String, String>) -> String {
    let b: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == '$' && i + 1 < b.len() {
            if b[i + 1] == '$' {
                out.push('$');
                i += 2;
                continue;
            }
            if b[i + 1] == '('
                && let Some(close) = b[i + 2..].iter().position(|&c| c == ')')
            {
                let name: String = b[i + 2..i + 2 + close].iter().collect();
                match values.get(&name) {
                    Some(v) => out.push_str(v),
                    None => {
                        out.push_str("$(");
                        out.push_str(&name);
                        out.push(')');
                    }
                }
                i += close + 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}
