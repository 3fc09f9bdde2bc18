//! Removing (or extracting) the fields of a set from a value.

use serde_json::{Map, Value};

use crate::fieldpath::PathElement;
use crate::schema::{Relationship, Schema, TypeRef};
use crate::set::Set;
use crate::typed::{Shape, list_item_element, shape_of};

/// The value without the fields in `set`.
pub fn remove_items(schema: &Schema, tr: &TypeRef, v: &Value, set: &Set) -> Value {
    walk(schema, tr, v, set, false)
}

/// Only the fields in `set` (and what lies below them).
pub fn extract_items(schema: &Schema, tr: &TypeRef, v: &Value, set: &Set) -> Value {
    walk(schema, tr, v, set, true)
}

fn walk(schema: &Schema, tr: &TypeRef, v: &Value, set: &Set, extract: bool) -> Value {
    let Some(r) = schema.resolve(tr) else {
        return Value::Null;
    };
    match shape_of(r, Some(v)) {
        None => Value::Null,
        Some(Shape::Scalar(_)) => v.clone(),
        Some(Shape::List(list, rel)) => {
            let Value::Array(items) = v else {
                return Value::Null;
            };
            if items.is_empty() || rel == Relationship::Atomic {
                return if extract { v.clone() } else { Value::Null };
            }
            let mut out = Vec::new();
            for item in items {
                let Ok(pe) = list_item_element(schema, list, rel, item) else {
                    // unreachable for validated values; keep the item untouched
                    if !extract {
                        out.push(item.clone());
                    }
                    continue;
                };
                let exact = set.has_member(&pe);
                let sub = set.with_prefix(&pe);
                if extract {
                    let item = match sub {
                        Some(s) => walk(schema, &list.element, item, s, extract),
                        None => item.clone(),
                    };
                    if exact || sub.is_some() {
                        out.push(item);
                    }
                } else {
                    if exact {
                        continue;
                    }
                    match sub {
                        Some(s) => out.push(walk(schema, &list.element, item, s, extract)),
                        None => out.push(item.clone()),
                    }
                }
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Array(out)
            }
        }
        Some(Shape::Map(map, rel)) => {
            let Value::Object(m) = v else {
                return Value::Null;
            };
            if m.is_empty() || rel == Relationship::Atomic {
                return if extract { v.clone() } else { Value::Null };
            }
            let mut out = Map::new();
            for (k, val) in m {
                let pe = PathElement::Field(k.clone());
                let Some(ft) = map.type_of(k) else {
                    if !extract {
                        out.insert(k.clone(), val.clone());
                    }
                    continue;
                };
                if set.has_member(&pe) {
                    if extract {
                        // As structured-merge-diff does, the value below an extracted member is
                        // walked with the parent's whole set.
                        out.insert(k.clone(), walk(schema, ft, val, set, true));
                    }
                    continue;
                }
                match set.with_prefix(&pe) {
                    Some(sub) => {
                        out.insert(k.clone(), walk(schema, ft, val, sub, extract));
                    }
                    None => {
                        if !extract {
                            out.insert(k.clone(), val.clone());
                        }
                    }
                }
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Object(out)
            }
        }
    }
}
