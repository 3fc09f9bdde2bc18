//! Sprig's dictionary functions: `dict`, `get`, `set`, `unset`, `hasKey`, `pluck`, `keys`,
//! `values`, `pick`, `omit`, `dig`, `deepCopy`, and `merge`/`mergeOverwrite` with
//! dario.cat/mergo v1.0.1's rules. Go iterates maps in random order; `keys` and `values`
//! answer in key order here, which is one of the orders Helm can give.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::{any_list, empty, map_ref, s, strval};
use crate::template::FuncMap;
use crate::template::func::{Func, Ty};
use crate::template::value::{ListKind, MapKind, MapRef, Value};

fn map_of(v: &Value) -> MapRef {
    map_ref(v).unwrap_or_else(|| Rc::new(RefCell::new(BTreeMap::new())))
}

pub(super) fn register(m: &mut FuncMap) {
    use Ty::{Any, Map, String as Str};
    m.insert(Func::new("dict", &[], Some(Any), |_, a| {
        let mut d = BTreeMap::new();
        for pair in a.chunks(2) {
            let key = strval(&pair[0]);
            d.insert(key, pair.get(1).cloned().unwrap_or_else(|| Value::str("")));
        }
        Ok(Value::map(d))
    }));
    m.insert(Func::new("get", &[Map, Str], None, |_, a| {
        Ok(map_of(&a[0])
            .borrow()
            .get(s(&a[1]))
            .cloned()
            .unwrap_or_else(|| Value::str("")))
    }));
    m.insert(Func::new("set", &[Map, Str, Any], None, |_, a| {
        let d = map_ref(&a[0]).ok_or("assignment to entry in nil map")?;
        d.borrow_mut().insert(s(&a[1]).to_string(), a[2].clone());
        Ok(Value::Map(d, MapKind::Any))
    }));
    m.insert(Func::new(
        "unset",
        &[Map, Str],
        None,
        |_, a| match map_ref(&a[0]) {
            Some(d) => {
                d.borrow_mut().remove(s(&a[1]));
                Ok(Value::Map(d, MapKind::Any))
            }
            None => Ok(Value::NilMap(MapKind::Any)),
        },
    ));
    m.insert(Func::new("hasKey", &[Map, Str], None, |_, a| {
        Ok(Value::Bool(map_of(&a[0]).borrow().contains_key(s(&a[1]))))
    }));
    m.insert(Func::new("pluck", &[Str], Some(Map), |_, a| {
        let key = s(&a[0]);
        Ok(any_list(
            a[1..]
                .iter()
                .filter_map(|d| map_of(d).borrow().get(key).cloned())
                .collect(),
        ))
    }));
    m.insert(Func::new("keys", &[], Some(Map), |_, a| {
        let mut out = Vec::new();
        for d in &a {
            out.extend(map_of(d).borrow().keys().cloned());
        }
        Ok(Value::string_list(out))
    }));
    m.insert(Func::new("values", &[Map], None, |_, a| {
        Ok(any_list(map_of(&a[0]).borrow().values().cloned().collect()))
    }));
    m.insert(Func::new("pick", &[Map], Some(Str), |_, a| {
        let d = map_of(&a[0]);
        let d = d.borrow();
        let out: BTreeMap<String, Value> = a[1..]
            .iter()
            .filter_map(|k| d.get(s(k)).map(|v| (s(k).to_string(), v.clone())))
            .collect();
        Ok(Value::map(out))
    }));
    m.insert(Func::new("omit", &[Map], Some(Str), |_, a| {
        let omit: Vec<&str> = a[1..].iter().map(s).collect();
        let out: BTreeMap<String, Value> = map_of(&a[0])
            .borrow()
            .iter()
            .filter(|(k, _)| !omit.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Value::map(out))
    }));
    for (name, overwrite) in [
        ("merge", false),
        ("mustMerge", false),
        ("mergeOverwrite", true),
        ("mustMergeOverwrite", true),
    ] {
        m.insert(Func::new(name, &[Map], Some(Map), move |_, a| {
            let dst = match map_ref(&a[0]) {
                Some(d) => d,
                None => Rc::new(RefCell::new(BTreeMap::new())),
            };
            for src in &a[1..] {
                if let Some(src) = map_ref(src) {
                    merge_into(&dst, &src, overwrite);
                }
            }
            Ok(Value::Map(dst, MapKind::Any))
        }));
    }
    m.insert(Func::new("deepCopy", &[Any], None, |_, a| {
        Ok(deep_copy(&a[0]))
    }));
    m.insert(Func::new("mustDeepCopy", &[Any], None, |_, a| {
        Ok(deep_copy(&a[0]))
    }));
    m.insert(Func::new("dig", &[], Some(Any), |_, a| dig(&a)));
}

/// mergo's map merge: missing or empty destination entries take the source's; maps merge
/// recursively in place; with `overwrite`, source entries (even empty ones, and nulls) win.
pub fn merge_into(dst: &MapRef, src: &MapRef, overwrite: bool) {
    if Rc::ptr_eq(dst, src) {
        return;
    }
    let entries: Vec<(String, Value)> = src
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (key, sv) in entries {
        let dv = dst.borrow().get(&key).cloned();
        if sv.is_nil() {
            if overwrite {
                dst.borrow_mut().insert(key, sv);
            }
            continue;
        }
        if let (Value::Map(sm, _), Some(Value::Map(dm, _))) = (&sv, &dv) {
            merge_into(dm, sm, overwrite);
        }
        if let Some(d) = &dv
            && !empty(d)
        {
            if matches!(sv, Value::List(..) | Value::Bytes(_)) {
                if overwrite {
                    dst.borrow_mut().insert(key, sv);
                }
                continue;
            }
            if matches!(sv, Value::Map(..)) && matches!(d, Value::Map(..)) {
                continue;
            }
        }
        if overwrite || dv.as_ref().is_none_or(empty) {
            dst.borrow_mut().insert(key, sv);
        }
    }
}

/// copystructure's deep copy: maps and lists copied all the way down.
pub fn deep_copy(v: &Value) -> Value {
    match v {
        Value::Map(m, kind) => Value::Map(
            Rc::new(RefCell::new(
                m.borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), deep_copy(v)))
                    .collect(),
            )),
            *kind,
        ),
        Value::List(l, kind) => Value::List(Rc::new(l.iter().map(deep_copy).collect()), *kind),
        other => other.clone(),
    }
}

/// Go's message when a type assertion to `map[string]interface {}` fails.
fn not_a_map(v: &Value) -> String {
    let got = match v {
        Value::Invalid | Value::Nil => "nil".to_string(),
        other => other.type_name(),
    };
    format!("interface conversion: interface {{}} is {got}, not map[string]interface {{}}")
}

fn dig(ps: &[Value]) -> Result<Value, String> {
    if ps.len() < 3 {
        return Err("dig needs at least three arguments".into());
    }
    let mut dict = match &ps[ps.len() - 1] {
        Value::Map(m, MapKind::Any) => m.clone(),
        Value::NilMap(MapKind::Any) => Rc::new(RefCell::new(BTreeMap::new())),
        other => return Err(not_a_map(other)),
    };
    let default = ps[ps.len() - 2].clone();
    let keys = &ps[..ps.len() - 2];
    for (i, k) in keys.iter().enumerate() {
        let Value::String(k) = k else {
            let got = match k {
                Value::Invalid | Value::Nil => "nil".to_string(),
                other => other.type_name(),
            };
            return Err(format!(
                "interface conversion: interface {{}} is {got}, not string"
            ));
        };
        let step = dict.borrow().get(&**k).cloned();
        let Some(step) = step else {
            return Ok(default);
        };
        if i == keys.len() - 1 {
            return Ok(step);
        }
        dict = match &step {
            Value::Map(m, MapKind::Any) => m.clone(),
            Value::NilMap(MapKind::Any) => Rc::new(RefCell::new(BTreeMap::new())),
            other => return Err(not_a_map(other)),
        };
    }
    Ok(Value::NilList(ListKind::Any))
}
