//! Sprig's reflection functions: `typeOf`, `typeIs`, `typeIsLike`, `kindOf`, `kindIs`,
//! `deepEqual`, and the conditional helpers `default`, `empty`, `coalesce`, `all`, `any`,
//! `ternary`.

use super::{deep_equal, empty, s};
use crate::template::func::{Func, Ty};
use crate::template::value::Value;
use crate::template::{FuncMap, fmt};

fn type_of(v: &Value) -> String {
    fmt::sprintf("%T", std::slice::from_ref(v))
}

fn kind_of(v: &Value) -> &'static str {
    super::kind(v).unwrap_or("invalid")
}

pub(super) fn register(m: &mut FuncMap) {
    use Ty::{Any, String as Str};
    m.insert(Func::new("typeOf", &[Any], None, |_, a| {
        Ok(Value::str(&type_of(&a[0])))
    }));
    m.insert(Func::new("typeIs", &[Str, Any], None, |_, a| {
        Ok(Value::Bool(s(&a[0]) == type_of(&a[1])))
    }));
    m.insert(Func::new("typeIsLike", &[Str, Any], None, |_, a| {
        let t = type_of(&a[1]);
        let target = s(&a[0]);
        Ok(Value::Bool(target == t || format!("*{target}") == t))
    }));
    m.insert(Func::new("kindOf", &[Any], None, |_, a| {
        Ok(Value::str(kind_of(&a[0])))
    }));
    m.insert(Func::new("kindIs", &[Str, Any], None, |_, a| {
        Ok(Value::Bool(s(&a[0]) == kind_of(&a[1])))
    }));
    m.insert(Func::new("deepEqual", &[Any, Any], None, |_, a| {
        Ok(Value::Bool(deep_equal(&a[0], &a[1])))
    }));
    m.insert(Func::new("default", &[Any], Some(Any), |_, a| {
        match a.get(1) {
            Some(given) if !empty(given) => Ok(given.clone()),
            _ => Ok(a[0].clone()),
        }
    }));
    m.insert(Func::new("empty", &[Any], None, |_, a| {
        Ok(Value::Bool(empty(&a[0])))
    }));
    m.insert(Func::new("coalesce", &[], Some(Any), |_, a| {
        Ok(a.into_iter().find(|v| !empty(v)).unwrap_or(Value::Nil))
    }));
    m.insert(Func::new("all", &[], Some(Any), |_, a| {
        Ok(Value::Bool(a.iter().all(|v| !empty(v))))
    }));
    m.insert(Func::new("any", &[], Some(Any), |_, a| {
        Ok(Value::Bool(a.iter().any(|v| !empty(v))))
    }));
    m.insert(Func::new("ternary", &[Any, Any, Ty::Bool], None, |_, a| {
        Ok(if a[2].truth() {
            a[0].clone()
        } else {
            a[1].clone()
        })
    }));
}
