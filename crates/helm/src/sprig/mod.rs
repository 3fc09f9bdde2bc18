//! Sprig v3.3.0's template functions (`TxtFuncMap`), as Helm uses them: the same names,
//! Go signatures (so argument type errors read as Helm's do), results typed as Go types them,
//! and Sprig's quirks (its `cast` conversions, panics turned into `error calling …` errors).

mod crypto;
mod date;
mod dicts;
mod encoding;
mod lists;
mod numeric;
mod reflect;
mod regex;
mod semver;
mod strings;
mod x509;

use crate::template::value::{IntKind, ListKind, MapKind, Value};
use crate::template::{FuncMap, fmt};

pub use dicts::{deep_copy, merge_into};
pub use encoding::{
    JsonStyle, empty_list, error_map, from_json_text, go_json_error, json_cycle_check, json_string,
    to_json,
};
pub use strings::path_clean;
pub(crate) use strings::{is_go_space, path_base, path_ext};

/// Every Sprig function except `env` and `expandenv` (which Helm removes).
pub fn funcs() -> FuncMap {
    let mut m = FuncMap::new();
    strings::register(&mut m);
    numeric::register(&mut m);
    lists::register(&mut m);
    dicts::register(&mut m);
    encoding::register(&mut m);
    reflect::register(&mut m);
    regex::register(&mut m);
    semver::register(&mut m);
    date::register(&mut m);
    crypto::register(&mut m);
    m
}

/// The string inside a value already checked to be a Go `string`.
pub(crate) fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// The integer inside a value already checked to be a Go `int` or `int64`.
pub(crate) fn i(v: &Value) -> i64 {
    match v {
        Value::Int(i, _) => *i,
        Value::Uint(u, _) => *u as i64,
        _ => 0,
    }
}

/// Sprig's `strval`: strings as they are, bytes as text, Stringers by their `String()`,
/// anything else with `%v`.
pub fn strval(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Object(o) => o
            .string()
            .unwrap_or_else(|| fmt::sprintf("%v", std::slice::from_ref(v))),
        _ => fmt::sprintf("%v", std::slice::from_ref(v)),
    }
}

/// `cast`'s `trimZeroDecimal`: `"10.00"` reads as `"10"`.
fn trim_zero_decimal(s: &str) -> &str {
    let b = s.as_bytes();
    let mut found_zero = false;
    for i in (1..=b.len()).rev() {
        match b[i - 1] {
            b'.' => {
                if found_zero {
                    return &s[..i - 1];
                }
            }
            b'0' => found_zero = true,
            _ => return s,
        }
    }
    s
}

/// spf13/cast's `ToInt64`: numbers truncated, strings parsed as Go integer literals, booleans
/// as 1 and 0, anything else 0.
pub fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i, _) => *i,
        Value::Uint(u, _) => *u as i64,
        Value::Float(f) => *f as i64,
        Value::Bool(b) => i64::from(*b),
        Value::String(s) => crate::template::number::parse_int(trim_zero_decimal(s)).unwrap_or(0),
        _ => 0,
    }
}

/// spf13/cast's `ToFloat64`.
pub fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i, _) => *i as f64,
        Value::Uint(u, _) => *u as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::String(s) => crate::template::number::parse_float(s).unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Sprig's `empty`: the zero value of its type (nil, 0, "", false, an empty list or map).
pub fn empty(v: &Value) -> bool {
    !v.truth()
}

/// Go's reflect kind name of a value; for nil, the runtime error Go's reflection raises when
/// a Sprig function asks for the kind of nothing.
pub(crate) fn kind(v: &Value) -> Result<&'static str, String> {
    Ok(match v {
        Value::Invalid | Value::Nil => {
            return Err("runtime error: invalid memory address or nil pointer dereference".into());
        }
        Value::Bool(_) => "bool",
        Value::Int(_, k) => match k {
            IntKind::Int => "int",
            IntKind::Int8 => "int8",
            IntKind::Int16 => "int16",
            IntKind::Int32 => "int32",
            IntKind::Int64 => "int64",
        },
        Value::Uint(..) => "uint",
        Value::Float(_) => "float64",
        Value::Complex(..) => "complex128",
        Value::String(_) => "string",
        Value::Bytes(_) | Value::List(..) | Value::NilList(_) => "slice",
        Value::Map(..) | Value::NilMap(_) => "map",
        Value::Object(o) if o.is_pointer() => "ptr",
        Value::Object(_) => "struct",
        Value::Func(_) => "func",
    })
}

/// The elements of a slice, or `None` when the value is not one.
pub(crate) fn items(v: &Value) -> Option<Vec<Value>> {
    match v {
        Value::List(l, _) => Some(l.to_vec()),
        Value::NilList(_) => Some(Vec::new()),
        Value::Bytes(b) => Some(
            b.iter()
                .map(|b| Value::Uint(u64::from(*b), crate::template::value::UintKind::Uint8))
                .collect(),
        ),
        _ => None,
    }
}

/// A `map[string]interface {}` argument's entries.
pub(crate) fn map_ref(v: &Value) -> Option<crate::template::value::MapRef> {
    match v {
        Value::Map(m, MapKind::Any | MapKind::Values) => Some(m.clone()),
        _ => None,
    }
}

/// `[]interface {}` of the given values.
pub(crate) fn any_list(items: Vec<Value>) -> Value {
    Value::List(std::rc::Rc::new(items), ListKind::Any)
}

/// Go's `reflect.DeepEqual` on template values.
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Invalid | Value::Nil, Value::Invalid | Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x, k1), Value::Int(y, k2)) => x == y && k1 == k2,
        (Value::Uint(x, k1), Value::Uint(y, k2)) => x == y && k1 == k2,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Bytes(x), Value::Bytes(y)) => x == y,
        (Value::List(x, k1), Value::List(y, k2)) => {
            k1 == k2 && x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| deep_equal(a, b))
        }
        (Value::NilList(k1), Value::NilList(k2)) => k1 == k2,
        (Value::Map(x, k1), Value::Map(y, k2)) => {
            if k1 != k2 {
                return false;
            }
            let (x, y) = (x.borrow(), y.borrow());
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        (Value::NilMap(k1), Value::NilMap(k2)) => k1 == k2,
        (Value::Object(x), Value::Object(y)) => std::rc::Rc::ptr_eq(x, y),
        _ => false,
    }
}
