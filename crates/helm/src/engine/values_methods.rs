//! The methods of Helm's `Values` type, callable from templates as Go's reflection finds
//! them, ahead of the map's keys: `.Values.YAML`, `.Values.Table "a.b"`, `.Values.AsMap`,
//! `.Values.PathValue "a.b.c"`.

use std::rc::Rc;

use crate::template::func::{Func, Ty};
use crate::template::value::{MapKind, MapRef, Value};

/// The method `name` of a `Values` receiver, bound to it; `None` for other map types and
/// for names that are not methods (they are then looked up as keys).
pub fn find(receiver: &MapRef, kind: MapKind, name: &str) -> Option<Rc<Func>> {
    if kind != MapKind::Values {
        return None;
    }
    let values = receiver.clone();
    let func = match name {
        "YAML" => Func::new(name, &[], None, move |_, _| {
            super::funcs::to_yaml_document(&Value::Map(values.clone(), MapKind::Values))
                .map(|text| Value::str(&text))
        }),
        "AsMap" => Func::new(name, &[], None, move |_, _| {
            Ok(Value::Map(values.clone(), MapKind::Any))
        }),
        "Table" => Func::new(name, &[Ty::String], None, move |_, a| {
            crate::values::lookup_table(&values, crate::sprig::s(&a[0]))
                .map(|t| Value::Map(t, MapKind::Values))
        }),
        "PathValue" => Func::new(name, &[Ty::String], None, move |_, a| {
            let path = crate::sprig::s(&a[0]);
            if path.is_empty() {
                return Err("YAML path cannot be empty".into());
            }
            let key = path.rsplit('.').next().unwrap_or(path);
            crate::values::path_value(&values, path)
                .ok_or_else(|| format!("{key:?} is not a value"))
        }),
        _ => return None,
    };
    Some(Rc::new(func))
}
