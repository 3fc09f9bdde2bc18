//! Sprig's list functions: `list`, `append`, `first`, `rest`, `uniq`, `has`, `slice`,
//! `concat`, `chunk` …, with Sprig's messages for values that are not lists.

use std::rc::Rc;

use super::{any_list, deep_equal, empty, i, items, kind, to_int64};
use crate::template::FuncMap;
use crate::template::func::{Func, Ty};
use crate::template::value::{ListKind, Value};

/// The elements of a list argument, or Sprig's complaint naming the operation.
fn list_arg(v: &Value, what: &str) -> Result<Vec<Value>, String> {
    match items(v) {
        Some(items) => Ok(items),
        None => Err(format!("Cannot {what} type {}", kind(v)?)),
    }
}

/// A Sprig function and its `must` twin: the plain one fails the same way (Sprig panics,
/// and the template reports the panic).
fn both(
    m: &mut FuncMap,
    name: &str,
    params: &[Ty],
    variadic: Option<Ty>,
    f: fn(&[Value]) -> Result<Value, String>,
) {
    m.insert(Func::new(name, params, variadic, move |_, a| f(&a)));
    let mut upper = name.to_string();
    if let Some(first) = upper.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    m.insert(Func::new(
        &format!("must{upper}"),
        params,
        variadic,
        move |_, a| f(&a),
    ));
}

pub(super) fn register(m: &mut FuncMap) {
    use Ty::Any;
    m.insert(Func::new("list", &[], Some(Any), |_, a| Ok(any_list(a))));
    m.alias("tuple", "list");
    both(m, "push", &[Any, Any], None, |a| {
        let mut l = list_arg(&a[0], "push on")?;
        l.push(a[1].clone());
        Ok(any_list(l))
    });
    m.alias("append", "push");
    m.alias("mustAppend", "mustPush");
    both(m, "prepend", &[Any, Any], None, |a| {
        let mut l = list_arg(&a[0], "prepend on")?;
        l.insert(0, a[1].clone());
        Ok(any_list(l))
    });
    m.insert(Func::new("chunk", &[Ty::Int, Any], None, |_, a| {
        chunk(i(&a[0]), &a[1])
    }));
    m.insert(Func::new("mustChunk", &[Ty::Int, Any], None, |_, a| {
        chunk(i(&a[0]), &a[1])
    }));
    both(m, "last", &[Any], None, |a| {
        Ok(list_arg(&a[0], "find last on")?.pop().unwrap_or(Value::Nil))
    });
    both(m, "first", &[Any], None, |a| {
        Ok(list_arg(&a[0], "find first on")?
            .into_iter()
            .next()
            .unwrap_or(Value::Nil))
    });
    both(m, "rest", &[Any], None, |a| {
        let l = list_arg(&a[0], "find rest on")?;
        if l.is_empty() {
            return Ok(Value::NilList(ListKind::Any));
        }
        Ok(any_list(l[1..].to_vec()))
    });
    both(m, "initial", &[Any], None, |a| {
        let l = list_arg(&a[0], "find initial on")?;
        if l.is_empty() {
            return Ok(Value::NilList(ListKind::Any));
        }
        Ok(any_list(l[..l.len() - 1].to_vec()))
    });
    both(m, "reverse", &[Any], None, |a| {
        let mut l = list_arg(&a[0], "find reverse on")?;
        l.reverse();
        Ok(any_list(l))
    });
    both(m, "compact", &[Any], None, |a| {
        let l = list_arg(&a[0], "compact on")?;
        Ok(any_list(l.into_iter().filter(|v| !empty(v)).collect()))
    });
    both(m, "uniq", &[Any], None, |a| {
        let l = list_arg(&a[0], "find uniq on")?;
        let mut out: Vec<Value> = Vec::new();
        for v in l {
            if !out.iter().any(|o| deep_equal(o, &v)) {
                out.push(v);
            }
        }
        Ok(any_list(out))
    });
    both(m, "without", &[Any], Some(Any), |a| {
        let l = list_arg(&a[0], "find without on")?;
        let omit = &a[1..];
        Ok(any_list(
            l.into_iter()
                .filter(|v| !omit.iter().any(|o| deep_equal(o, v)))
                .collect(),
        ))
    });
    both(m, "has", &[Any, Any], None, |a| {
        if matches!(a[1], Value::Nil | Value::Invalid) {
            return Ok(Value::Bool(false));
        }
        let l = list_arg(&a[1], "find has on")?;
        Ok(Value::Bool(l.iter().any(|v| deep_equal(&a[0], v))))
    });
    both(m, "slice", &[Any], Some(Any), |a| {
        let (list_kind, l) = match &a[0] {
            Value::List(l, k) => (*k, l.to_vec()),
            other => (
                ListKind::Any,
                items(other).ok_or_else(|| {
                    format!(
                        "list should be type of slice or array but {}",
                        kind(other).unwrap_or("invalid")
                    )
                })?,
            ),
        };
        if l.is_empty() {
            return Ok(Value::Nil);
        }
        let start = a.get(1).map(to_int64).unwrap_or(0);
        let end = a.get(2).map(to_int64).unwrap_or(l.len() as i64);
        if start < 0 || end < start || end as usize > l.len() {
            return Err("reflect.Value.Slice: slice index out of bounds".into());
        }
        Ok(Value::List(
            Rc::new(l[start as usize..end as usize].to_vec()),
            list_kind,
        ))
    });
    m.insert(Func::new("concat", &[], Some(Any), |_, a| {
        let mut out = Vec::new();
        for l in &a {
            match items(l) {
                Some(items) => out.extend(items),
                None => return Err(format!("Cannot concat type {} as list", kind(l)?)),
            }
        }
        if out.is_empty() {
            return Ok(Value::NilList(ListKind::Any));
        }
        Ok(any_list(out))
    }));
}

fn chunk(size: i64, list: &Value) -> Result<Value, String> {
    let l = list_arg(list, "chunk")?;
    if size <= 0 {
        return Err("runtime error: integer divide by zero".into());
    }
    let size = size as usize;
    let chunks: Vec<Value> = l.chunks(size).map(|c| any_list(c.to_vec())).collect();
    Ok(Value::List(Rc::new(chunks), ListKind::Any))
}
