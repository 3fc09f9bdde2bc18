//! Values read through a schema: validation, field sets, and the shape rules shared by the
//! compare, merge and remove walkers.

use std::fmt;

use serde_json::Value;

use crate::fieldpath::PathElement;
use crate::schema::{ListType, MapType, Relationship, Resolved, Scalar, Schema, TypeRef};
use crate::set::Set;

/// One validation problem at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    /// Path in `.a[name="x"].b` form; empty for the root.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// Validation problems, displayed as structured-merge-diff displays them.
#[derive(Clone, Debug, Default, PartialEq, Eq, thiserror::Error)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.len() == 1 {
            return write!(f, "{}", self.0[0]);
        }
        write!(f, "errors:")?;
        for e in &self.0 {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

impl ValidationErrors {
    pub(crate) fn one(message: impl Into<String>) -> ValidationErrors {
        ValidationErrors(vec![ValidationError {
            path: String::new(),
            message: message.into(),
        }])
    }

    pub(crate) fn prefixed(mut self, prefix: &str) -> ValidationErrors {
        for e in &mut self.0 {
            e.path = format!("{prefix}{}", e.path);
        }
        self
    }

    pub(crate) fn extend(&mut self, other: ValidationErrors) {
        self.0.extend(other.0);
    }

    /// Whether there are no errors.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The part of a type a value is handled as.
#[derive(Clone, Copy)]
pub(crate) enum Shape<'a> {
    Scalar(Scalar),
    List(&'a ListType, Relationship),
    Map(&'a MapType, Relationship),
}

impl Shape<'_> {
    pub(crate) fn same_kind(&self, other: &Shape<'_>) -> bool {
        matches!(
            (self, other),
            (Shape::Scalar(_), Shape::Scalar(_))
                | (Shape::List(..), Shape::List(..))
                | (Shape::Map(..), Shape::Map(..))
        )
    }
}

/// Picks the part of the atom matching the value's shape, falling back to map, scalar, list.
pub(crate) fn shape_of<'a>(r: Resolved<'a>, v: Option<&Value>) -> Option<Shape<'a>> {
    let scalar = r.scalar().map(Shape::Scalar);
    let list = r.list().map(|(l, rel)| Shape::List(l, rel));
    let map = r.map().map(|(m, rel)| Shape::Map(m, rel));
    let deduced = match v {
        Some(Value::Number(_)) | Some(Value::String(_)) | Some(Value::Bool(_)) => scalar,
        Some(Value::Array(_)) => list,
        Some(Value::Object(_)) => map,
        _ => None,
    };
    deduced.or(map).or(scalar).or(list)
}

pub(crate) fn resolve<'a>(
    schema: &'a Schema,
    tr: &'a TypeRef,
) -> Result<Resolved<'a>, ValidationErrors> {
    schema
        .resolve(tr)
        .ok_or_else(|| ValidationErrors::one("schema error: no type found matching the reference"))
}

pub(crate) fn validate_scalar(t: Scalar, v: &Value) -> Result<(), String> {
    match (t, v) {
        (_, Value::Null) => Ok(()),
        (Scalar::Numeric, Value::Number(_)) => Ok(()),
        (Scalar::Numeric, other) => Err(format!(
            "expected numeric (int or float), got {}",
            go_type(other)
        )),
        (Scalar::String, Value::String(_)) => Ok(()),
        (Scalar::String, other) => Err(format!("expected string, got {}", show(other))),
        (Scalar::Boolean, Value::Bool(_)) => Ok(()),
        (Scalar::Boolean, other) => Err(format!("expected boolean, got {}", show(other))),
        (Scalar::Untyped, Value::Number(_) | Value::String(_) | Value::Bool(_)) => Ok(()),
        (Scalar::Untyped, other) => Err(format!("expected any scalar, got {}", show(other))),
    }
}

fn go_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        _ => "<nil>",
    }
}

fn show(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The path element identifying an item of an associative list.
pub(crate) fn list_item_element(
    schema: &Schema,
    list: &ListType,
    rel: Relationship,
    item: &Value,
) -> Result<PathElement, String> {
    if rel != Relationship::Associative {
        return Err("invalid indexing of non-associative list".to_string());
    }
    if list.keys.is_empty() {
        return match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".to_string())
            }
            Value::Array(_) => {
                Err("not supported: associative list with lists as elements".to_string())
            }
            Value::Null => Err(
                "associative list without keys has an element that's an explicit null".to_string(),
            ),
            v => Ok(PathElement::Value(v.clone())),
        };
    }
    let m = match item {
        Value::Null => {
            return Err("associative list with keys may not have a null element".to_string());
        }
        Value::Object(m) => m,
        _ => {
            return Err("associative list with keys may not have non-map elements".to_string());
        }
    };
    let element_map = schema
        .resolve(&list.element)
        .and_then(|r| r.atom.map.as_ref());
    let mut fields = Vec::new();
    for key in &list.keys {
        if let Some(v) = m.get(key) {
            fields.push((key.clone(), v.clone()));
        } else {
            let Some(em) = element_map else {
                return Err(format!(
                    "couldn't find default value for {key}: associative list may not have non-map types"
                ));
            };
            if let Some(d) = em.field(key).and_then(|f| f.default.clone()) {
                fields.push((key.clone(), d));
            }
        }
    }
    if fields.is_empty() {
        let keys: Vec<String> = list.keys.iter().map(|k| format!("{k:?}")).collect();
        return Err(format!(
            "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
            keys.join(" ")
        ));
    }
    Ok(PathElement::key(fields))
}

/// Checks a value against a type: scalar kinds, undeclared fields, list keys and (unless
/// `allow_duplicates`) duplicate items in associative lists.
pub fn validate(
    schema: &Schema,
    tr: &TypeRef,
    v: &Value,
    allow_duplicates: bool,
) -> Result<(), ValidationErrors> {
    let mut errs = ValidationErrors::default();
    validate_into(schema, tr, v, allow_duplicates, &mut errs);
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}

fn validate_into(
    schema: &Schema,
    tr: &TypeRef,
    v: &Value,
    allow_dups: bool,
    errs: &mut ValidationErrors,
) {
    let r = match resolve(schema, tr) {
        Ok(r) => r,
        Err(e) => return errs.extend(e),
    };
    match shape_of(r, Some(v)) {
        None => errs.extend(ValidationErrors::one("schema error: invalid atom")),
        Some(Shape::Scalar(t)) => {
            if let Err(m) = validate_scalar(t, v) {
                errs.extend(ValidationErrors::one(m));
            }
        }
        Some(Shape::List(list, rel)) => {
            let items = match v {
                Value::Null => return,
                Value::Array(items) => items,
                other => {
                    return errs.extend(ValidationErrors::one(format!(
                        "expected list, got {}",
                        show(other)
                    )));
                }
            };
            let mut seen = std::collections::BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                let prefix = if rel != Relationship::Associative {
                    format!("[{i}]")
                } else {
                    match list_item_element(schema, list, rel, item) {
                        Ok(pe) => {
                            let s = pe.to_string();
                            if !seen.insert(pe) && !allow_dups {
                                errs.extend(ValidationErrors::one(format!(
                                    "duplicate entries for key {s}"
                                )));
                            }
                            s
                        }
                        Err(e) => {
                            errs.extend(ValidationErrors::one(format!("element {i}: {e}")));
                            return;
                        }
                    }
                };
                let mut sub = ValidationErrors::default();
                validate_into(schema, &list.element, item, allow_dups, &mut sub);
                errs.extend(sub.prefixed(&prefix));
            }
        }
        Some(Shape::Map(map, _)) => {
            let m = match v {
                Value::Null => return,
                Value::Object(m) => m,
                other => {
                    return errs.extend(ValidationErrors::one(format!(
                        "expected map, got {}",
                        show(other)
                    )));
                }
            };
            for (key, val) in m {
                let prefix = format!(".{key}");
                let Some(t) = map.type_of(key) else {
                    errs.extend(
                        ValidationErrors::one("field not declared in schema").prefixed(&prefix),
                    );
                    return;
                };
                let mut sub = ValidationErrors::default();
                validate_into(schema, t, val, allow_dups, &mut sub);
                errs.extend(sub.prefixed(&prefix));
            }
        }
    }
}

/// The set of fields a value sets: leaves, associative list items, undeclared map keys, empty maps
/// and atomic containers.
pub fn to_field_set(schema: &Schema, tr: &TypeRef, v: &Value) -> Result<Set, ValidationErrors> {
    let mut set = Set::new();
    let mut path = Vec::new();
    field_set_into(schema, tr, v, &mut path, &mut set)?;
    Ok(set)
}

fn field_set_into(
    schema: &Schema,
    tr: &TypeRef,
    v: &Value,
    path: &mut Vec<PathElement>,
    set: &mut Set,
) -> Result<(), ValidationErrors> {
    let r = resolve(schema, tr)?;
    match shape_of(r, Some(v)) {
        None => return Err(ValidationErrors::one("schema error: invalid atom")),
        Some(Shape::Scalar(_)) => set.insert(path),
        Some(Shape::List(list, rel)) => {
            if rel == Relationship::Atomic {
                set.insert(path);
                return Ok(());
            }
            let Value::Array(items) = v else {
                return Ok(());
            };
            for item in items {
                // As structured-merge-diff does, an item without a valid key (only possible in
                // intermediate values, e.g. an item emptied by removal) is passed over.
                let Ok(pe) = list_item_element(schema, list, rel, item) else {
                    continue;
                };
                path.push(pe);
                field_set_into(schema, &list.element, item, path, set)?;
                set.insert(path);
                path.pop();
            }
        }
        Some(Shape::Map(map, rel)) => {
            if rel == Relationship::Atomic {
                set.insert(path);
                return Ok(());
            }
            let Value::Object(m) = v else {
                return Ok(());
            };
            for (key, val) in m {
                let declared = map.field(key).is_some();
                let Some(t) = map.type_of(key) else {
                    return Err(ValidationErrors::one("field not declared in schema")
                        .prefixed(&format!(".{key}")));
                };
                path.push(PathElement::Field(key.clone()));
                field_set_into(schema, t, val, path, set)?;
                let empty = match val {
                    Value::Null => true,
                    Value::Object(o) => o.is_empty(),
                    _ => false,
                };
                if empty || !declared {
                    set.insert(path);
                }
                path.pop();
            }
        }
    }
    Ok(())
}

/// The keys of two maps: the left's in order, then the right's that the left lacks.
pub(crate) fn union_keys<'v>(
    lhs: Option<&'v serde_json::Map<String, Value>>,
    rhs: Option<&'v serde_json::Map<String, Value>>,
) -> Vec<&'v String> {
    let mut keys: Vec<&String> = Vec::new();
    if let Some(l) = lhs {
        keys.extend(l.keys());
    }
    if let Some(r) = rhs {
        keys.extend(r.keys().filter(|k| lhs.is_none_or(|l| !l.contains_key(*k))));
    }
    keys
}

/// The error for a map key that is neither a declared field nor allowed by an element type.
pub(crate) fn undeclared(key: &str) -> ValidationErrors {
    ValidationErrors::one("field not declared in schema").prefixed(&format!(".{key}"))
}
