//! The functions every Go template has (`text/template`'s `funcs.go`): `and`, `or`, `not`,
//! `len`, `index`, `slice`, `call`, `print`, `printf`, `println`, `html`, `js`, `urlquery`
//! and the comparisons, with Go's kind rules and messages.

use std::rc::Rc;

use super::exec::State;
use super::fmt;
use super::func::{Func, FuncMap, Special, Ty};
use super::value::{ListKind, MapKind, UintKind, Value};

/// Go's builtin functions.
pub fn builtins() -> FuncMap {
    let mut m = FuncMap::new();
    let mut and = Func::new("and", &[Ty::Reflect], Some(Ty::Reflect), |_, _| {
        Ok(Value::Invalid)
    });
    and.special = Some(Special::And);
    m.insert(and);
    let mut or = Func::new("or", &[Ty::Reflect], Some(Ty::Reflect), |_, _| {
        Ok(Value::Invalid)
    });
    or.special = Some(Special::Or);
    m.insert(or);
    m.insert(Func::new("call", &[Ty::Reflect], Some(Ty::Reflect), call));
    m.insert(Func::new("html", &[], Some(Ty::Any), |_, a| {
        Ok(Value::str(&html_escape(&eval_args(&a))))
    }));
    m.insert(Func::new("js", &[], Some(Ty::Any), |_, a| {
        Ok(Value::str(&js_escape(&eval_args(&a))))
    }));
    m.insert(Func::new("urlquery", &[], Some(Ty::Any), |_, a| {
        Ok(Value::str(&query_escape(&eval_args(&a))))
    }));
    m.insert(Func::new(
        "index",
        &[Ty::Reflect],
        Some(Ty::Reflect),
        |_, a| index(a),
    ));
    m.insert(Func::new(
        "slice",
        &[Ty::Reflect],
        Some(Ty::Reflect),
        |_, a| slice(a),
    ));
    m.insert(Func::new("len", &[Ty::Reflect], None, |_, a| {
        length(&a[0]).map(|n| Value::int(n as i64))
    }));
    m.insert(Func::new("not", &[Ty::Reflect], None, |_, a| {
        Ok(Value::Bool(!a[0].truth()))
    }));
    m.insert(Func::new("print", &[], Some(Ty::Any), |_, a| {
        Ok(Value::str(&fmt::sprint(&a)))
    }));
    m.insert(Func::new("println", &[], Some(Ty::Any), |_, a| {
        Ok(Value::str(&fmt::sprintln(&a)))
    }));
    m.insert(Func::new("printf", &[Ty::String], Some(Ty::Any), |_, a| {
        let format = a[0].as_str().unwrap_or_default().to_string();
        Ok(Value::str(&fmt::sprintf(&format, &a[1..])))
    }));
    m.insert(Func::new(
        "eq",
        &[Ty::Reflect],
        Some(Ty::Reflect),
        |_, a| {
            if a.len() < 2 {
                return Err("missing argument for comparison".into());
            }
            eq(&a[0], &a[1..]).map(Value::Bool)
        },
    ));
    m.insert(Func::new(
        "ne",
        &[Ty::Reflect, Ty::Reflect],
        None,
        |_, a| eq(&a[0], &a[1..]).map(|e| Value::Bool(!e)),
    ));
    m.insert(Func::new(
        "lt",
        &[Ty::Reflect, Ty::Reflect],
        None,
        |_, a| lt(&a[0], &a[1]).map(Value::Bool),
    ));
    m.insert(Func::new(
        "le",
        &[Ty::Reflect, Ty::Reflect],
        None,
        |_, a| le(&a[0], &a[1]).map(Value::Bool),
    ));
    m.insert(Func::new(
        "gt",
        &[Ty::Reflect, Ty::Reflect],
        None,
        |_, a| le(&a[0], &a[1]).map(|le| Value::Bool(!le)),
    ));
    m.insert(Func::new(
        "ge",
        &[Ty::Reflect, Ty::Reflect],
        None,
        |_, a| lt(&a[0], &a[1]).map(|lt| Value::Bool(!lt)),
    ));
    m
}

/// Go's `indirectInterface`: a nil interface is no value.
fn indirect_interface(v: &Value) -> Value {
    match v {
        Value::Nil => Value::Invalid,
        v => v.clone(),
    }
}

/// `evalArgs`: the arguments printed as `fmt.Sprint` would, a nil one as `<no value>`.
fn eval_args(args: &[Value]) -> String {
    if let [Value::String(s)] = args {
        return s.to_string();
    }
    let printable: Vec<Value> = args
        .iter()
        .map(|a| match a {
            Value::Invalid | Value::Nil => Value::str("<no value>"),
            a => a.clone(),
        })
        .collect();
    fmt::sprint(&printable)
}

/// Go's `HTMLEscapeString`.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Go's `JSEscapeString`.
pub fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u00{:02X}", c as u32)),
            c if c.is_ascii() => out.push(c),
            c if super::quote::is_print(c) => out.push(c),
            c => out.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    out
}

/// Go's `url.QueryEscape`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn call(state: &mut State, args: Vec<Value>) -> Result<Value, String> {
    let f = indirect_interface(&args[0]);
    let f = match f {
        Value::Invalid => return Err("call of nil".into()),
        Value::Func(f) => f,
        other => {
            return Err(format!(
                "non-function {} of type {}",
                fmt::print_value(&other),
                other.type_name()
            ));
        }
    };
    let rest = &args[1..];
    let fixed = f.params.len();
    if f.variadic.is_some() {
        if rest.len() < fixed {
            return Err(format!(
                "wrong number of args for {}: got {} want at least {fixed}",
                f.name,
                rest.len()
            ));
        }
    } else if rest.len() != fixed {
        return Err(format!(
            "wrong number of args for {}: got {} want {fixed}",
            f.name,
            rest.len()
        ));
    }
    let mut argv = Vec::with_capacity(rest.len());
    for (i, a) in rest.iter().enumerate() {
        let a = indirect_interface(a);
        let ty = f.params.get(i).copied().or(f.variadic).unwrap_or(Ty::Any);
        argv.push(prepare_arg(a, ty).map_err(|e| format!("arg {i}: {e}"))?);
    }
    let body = f.body.clone();
    body(state, argv)
}

/// Go's `prepareArg`: checks a value against a parameter type.
fn prepare_arg(v: Value, ty: Ty) -> Result<Value, String> {
    if matches!(v, Value::Invalid) {
        if !ty.can_be_nil() {
            return Err(format!("value is nil; should be of type {}", ty.name()));
        }
        return Ok(ty.nil());
    }
    if ty.accepts(&v) {
        return Ok(v);
    }
    match (&v, ty) {
        (Value::Int(i, _), Ty::Int) => Ok(Value::int(*i)),
        (Value::Int(i, _), Ty::Int64) => Ok(Value::int64(*i)),
        (Value::Uint(u, _), Ty::Int) => Ok(Value::int(*u as i64)),
        (Value::Uint(u, _), Ty::Int64) => Ok(Value::int64(*u as i64)),
        _ => Err(format!(
            "value has type {}; should be {}",
            v.type_name(),
            ty.name()
        )),
    }
}

/// Go's `indexArg`.
fn index_arg(index: &Value, cap: usize) -> Result<usize, String> {
    let x: i128 = match index {
        Value::Int(i, _) => i128::from(*i),
        Value::Uint(u, _) => i128::from(*u),
        Value::Invalid | Value::Nil => return Err("cannot index slice/array with nil".into()),
        other => {
            return Err(format!(
                "cannot index slice/array with type {}",
                other.type_name()
            ));
        }
    };
    if x < 0 || x > cap as i128 {
        return Err(format!("index out of range: {x}"));
    }
    Ok(x as usize)
}

fn index(args: Vec<Value>) -> Result<Value, String> {
    let mut item = indirect_interface(&args[0]);
    if matches!(item, Value::Invalid) {
        return Err("index of untyped nil".into());
    }
    for index in &args[1..] {
        let index = indirect_interface(index);
        item = match &item {
            Value::Invalid | Value::Nil => return Err("index of nil pointer".into()),
            Value::List(items, _) => {
                let x = index_arg(&index, items.len())?;
                items
                    .get(x)
                    .cloned()
                    .ok_or("reflect: slice index out of range")?
            }
            Value::NilList(_) => {
                index_arg(&index, 0)?;
                return Err("reflect: slice index out of range".into());
            }
            Value::String(s) => {
                let x = index_arg(&index, s.len())?;
                let b = s
                    .as_bytes()
                    .get(x)
                    .ok_or("reflect: string index out of range")?;
                Value::Uint(u64::from(*b), UintKind::Uint8)
            }
            Value::Bytes(b) => {
                let x = index_arg(&index, b.len())?;
                let b = b.get(x).ok_or("reflect: slice index out of range")?;
                Value::Uint(u64::from(*b), UintKind::Uint8)
            }
            Value::Map(_, kind) | Value::NilMap(kind) => {
                let key = match &index {
                    Value::String(s) => s.clone(),
                    Value::Invalid => return Err("value is nil; should be of type string".into()),
                    other => {
                        return Err(format!(
                            "value has type {}; should be string",
                            other.type_name()
                        ));
                    }
                };
                let found = match &item {
                    Value::Map(m, _) => m.borrow().get(&*key).cloned(),
                    _ => None,
                };
                match found {
                    Some(v) => v,
                    None if *kind == MapKind::String => Value::str(""),
                    None => Value::Nil,
                }
            }
            other => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

fn slice(args: Vec<Value>) -> Result<Value, String> {
    let item = indirect_interface(&args[0]);
    if matches!(item, Value::Invalid) {
        return Err("slice of untyped nil".into());
    }
    let indexes = &args[1..];
    if indexes.len() > 3 {
        return Err(format!("too many slice indexes: {}", indexes.len()));
    }
    let len = match &item {
        Value::String(s) => {
            if indexes.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            s.len()
        }
        Value::List(l, _) => l.len(),
        Value::NilList(_) => 0,
        Value::Bytes(b) => b.len(),
        other => return Err(format!("can't slice item of type {}", other.type_name())),
    };
    let mut idx = [0, len, len];
    for (i, index) in indexes.iter().enumerate() {
        idx[i] = index_arg(&indirect_interface(index), len)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    Ok(match &item {
        Value::String(s) => Value::str(&String::from_utf8_lossy(&s.as_bytes()[idx[0]..idx[1]])),
        Value::List(l, kind) => Value::List(Rc::new(l[idx[0]..idx[1]].to_vec()), *kind),
        Value::Bytes(b) => Value::Bytes(Rc::from(&b[idx[0]..idx[1]])),
        _ => Value::NilList(ListKind::Any),
    })
}

fn length(item: &Value) -> Result<usize, String> {
    match item {
        Value::Invalid => Err("reflect: call of reflect.Value.Type on zero Value".into()),
        Value::Nil => Err("len of nil pointer".into()),
        Value::String(s) => Ok(s.len()),
        Value::Bytes(b) => Ok(b.len()),
        Value::List(l, _) => Ok(l.len()),
        Value::Map(m, _) => Ok(m.borrow().len()),
        Value::NilList(_) | Value::NilMap(_) => Ok(0),
        Value::Object(o) if o.keyed_entries().is_some() => {
            Ok(o.keyed_entries().map(|e| e.len()).unwrap_or(0))
        }
        Value::Object(o) if o.map_entries().is_some() => {
            Ok(o.map_entries().map(|e| e.len()).unwrap_or(0))
        }
        Value::Object(o) if o.list_items().is_some() => {
            Ok(o.list_items().map(|e| e.len()).unwrap_or(0))
        }
        other => Err(format!("len of type {}", other.type_name())),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Invalid,
    Bool,
    Complex,
    Int,
    Float,
    String,
    Uint,
}

fn basic_kind(v: &Value) -> Kind {
    match v {
        Value::Bool(_) => Kind::Bool,
        Value::Int(..) => Kind::Int,
        Value::Uint(..) => Kind::Uint,
        Value::Float(_) => Kind::Float,
        Value::Complex(..) => Kind::Complex,
        Value::String(_) => Kind::String,
        _ => Kind::Invalid,
    }
}

/// Go's reflect kind of a non-basic value, for "same kind" checks.
fn reflect_kind(v: &Value) -> &'static str {
    match v {
        Value::Invalid | Value::Nil => "invalid",
        Value::List(..) | Value::NilList(_) | Value::Bytes(_) => "slice",
        Value::Map(..) | Value::NilMap(_) => "map",
        Value::Object(o) if o.is_pointer() => "ptr",
        Value::Object(_) => "struct",
        Value::Func(_) => "func",
        _ => "basic",
    }
}

fn int_of(v: &Value) -> i64 {
    match v {
        Value::Int(i, _) => *i,
        _ => 0,
    }
}

fn uint_of(v: &Value) -> u64 {
    match v {
        Value::Uint(u, _) => *u,
        _ => 0,
    }
}

fn eq(arg1: &Value, rest: &[Value]) -> Result<bool, String> {
    let arg1 = indirect_interface(arg1);
    let k1 = basic_kind(&arg1);
    for arg in rest {
        let arg = indirect_interface(arg);
        let k2 = basic_kind(&arg);
        let truth = if k1 != k2 {
            match (k1, k2) {
                (Kind::Int, Kind::Uint) => {
                    int_of(&arg1) >= 0 && int_of(&arg1) as u64 == uint_of(&arg)
                }
                (Kind::Uint, Kind::Int) => {
                    int_of(&arg) >= 0 && uint_of(&arg1) == int_of(&arg) as u64
                }
                _ => {
                    if !matches!(arg1, Value::Invalid) && !matches!(arg, Value::Invalid) {
                        return Err(format!(
                            "incompatible types for comparison: {} and {}",
                            arg1.type_name(),
                            arg.type_name()
                        ));
                    }
                    false
                }
            }
        } else {
            match (&arg1, &arg) {
                (Value::Bool(a), Value::Bool(b)) => a == b,
                (Value::Complex(a, b), Value::Complex(c, d)) => a == c && b == d,
                (Value::Float(a), Value::Float(b)) => a == b,
                (Value::Int(a, _), Value::Int(b, _)) => a == b,
                (Value::String(a), Value::String(b)) => a == b,
                (Value::Uint(a, _), Value::Uint(b, _)) => a == b,
                _ => {
                    let (r1, r2) = (reflect_kind(&arg1), reflect_kind(&arg));
                    if r1 != r2 && r1 != "invalid" && r2 != "invalid" {
                        return Err(format!(
                            "non-comparable types {}: {}, {}: {}",
                            fmt::print_value(&arg1),
                            arg1.type_name(),
                            arg.type_name(),
                            fmt::print_value(&arg)
                        ));
                    }
                    if arg1.is_nil() || arg.is_nil() {
                        arg1.is_nil() == arg.is_nil()
                    } else {
                        match (&arg1, &arg) {
                            (Value::Object(a), Value::Object(b)) => Rc::ptr_eq(a, b),
                            _ => {
                                return Err(format!(
                                    "non-comparable type {}: {}",
                                    fmt::print_value(&arg),
                                    arg.type_name()
                                ));
                            }
                        }
                    }
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

fn lt(arg1: &Value, arg2: &Value) -> Result<bool, String> {
    let arg1 = indirect_interface(arg1);
    let k1 = basic_kind(&arg1);
    if k1 == Kind::Invalid {
        return Err("invalid type for comparison".into());
    }
    let arg2 = indirect_interface(arg2);
    let k2 = basic_kind(&arg2);
    if k2 == Kind::Invalid {
        return Err("invalid type for comparison".into());
    }
    if k1 != k2 {
        return match (k1, k2) {
            (Kind::Int, Kind::Uint) => {
                Ok(int_of(&arg1) < 0 || (int_of(&arg1) as u64) < uint_of(&arg2))
            }
            (Kind::Uint, Kind::Int) => {
                Ok(int_of(&arg2) >= 0 && uint_of(&arg1) < int_of(&arg2) as u64)
            }
            _ => Err(format!(
                "incompatible types for comparison: {} and {}",
                arg1.type_name(),
                arg2.type_name()
            )),
        };
    }
    Ok(match (&arg1, &arg2) {
        (Value::Float(a), Value::Float(b)) => a < b,
        (Value::Int(a, _), Value::Int(b, _)) => a < b,
        (Value::String(a), Value::String(b)) => a < b,
        (Value::Uint(a, _), Value::Uint(b, _)) => a < b,
        _ => return Err("invalid type for comparison".into()),
    })
}

fn le(arg1: &Value, arg2: &Value) -> Result<bool, String> {
    if lt(arg1, arg2)? {
        return Ok(true);
    }
    eq(arg1, std::slice::from_ref(arg2))
}
