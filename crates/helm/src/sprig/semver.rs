//! Sprig's `semver` and `semverCompare`, on the Masterminds semver port in core.

use std::any::Any;
use std::rc::Rc;

use tidegate_core::semver::{Constraints, Version};

use super::s;
use crate::template::FuncMap;
use crate::template::func::{Func, Ty};
use crate::template::value::{IntKind, Object, UintKind, Value};

/// A `*semver.Version`.
#[derive(Debug)]
pub struct SemverVersion(pub Version);

impl Object for SemverVersion {
    fn type_name(&self) -> String {
        "*semver.Version".into()
    }
    fn field(&self, _: &str) -> Option<Value> {
        None
    }
    fn method(self: Rc<Self>, name: &str) -> Option<Rc<Func>> {
        let v = self.clone();
        let f = match name {
            "Major" => Func::new(name, &[], None, move |_, _| {
                Ok(Value::Uint(v.0.major(), UintKind::Uint64))
            }),
            "Minor" => Func::new(name, &[], None, move |_, _| {
                Ok(Value::Uint(v.0.minor(), UintKind::Uint64))
            }),
            "Patch" => Func::new(name, &[], None, move |_, _| {
                Ok(Value::Uint(v.0.patch(), UintKind::Uint64))
            }),
            "Prerelease" => Func::new(name, &[], None, move |_, _| {
                Ok(Value::str(v.0.prerelease()))
            }),
            "Metadata" => Func::new(name, &[], None, move |_, _| Ok(Value::str(v.0.metadata()))),
            "Original" => Func::new(name, &[], None, move |_, _| Ok(Value::str(v.0.original()))),
            "String" => Func::new(name, &[], None, move |_, _| {
                Ok(Value::str(&v.0.to_string()))
            }),
            "Compare" => Func::new(name, &[Ty::Named("*semver.Version")], None, move |_, a| {
                let other =
                    version_of(&a[0]).ok_or("invalid memory address or nil pointer dereference")?;
                Ok(Value::Int(
                    match v.0.cmp(&other) {
                        std::cmp::Ordering::Less => -1,
                        std::cmp::Ordering::Equal => 0,
                        std::cmp::Ordering::Greater => 1,
                    },
                    IntKind::Int,
                ))
            }),
            _ => return None,
        };
        Some(Rc::new(f))
    }
    fn string(&self) -> Option<String> {
        Some(self.0.to_string())
    }
    fn json_text(&self) -> Option<String> {
        Some(format!("\"{}\"", self.0))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn version_of(v: &Value) -> Option<Version> {
    match v {
        Value::Object(o) => o
            .as_any()
            .downcast_ref::<SemverVersion>()
            .map(|s| s.0.clone()),
        _ => None,
    }
}

pub(super) fn register(m: &mut FuncMap) {
    m.insert(Func::new("semver", &[Ty::String], None, |_, a| {
        let v = Version::parse(s(&a[0])).map_err(|e| e.to_string())?;
        Ok(Value::Object(Rc::new(SemverVersion(v))))
    }));
    m.insert(Func::new(
        "semverCompare",
        &[Ty::String, Ty::String],
        None,
        |_, a| {
            let c = Constraints::parse(s(&a[0])).map_err(|e| e.to_string())?;
            let v = Version::parse(s(&a[1])).map_err(|e| e.to_string())?;
            Ok(Value::Bool(c.check(&v)))
        },
    ));
}
