//! Comparison of two values of one type: which fields were added, modified and removed.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::fieldpath::PathElement;
use crate::schema::{ListType, MapType, Relationship, Schema, TypeRef};
use crate::set::Set;
use crate::typed::{
    Shape, ValidationErrors, list_item_element, resolve, shape_of, undeclared, union_keys,
};
use crate::value;

/// The fields that differ between an old and a new value.
#[derive(Clone, Debug, Default)]
pub struct Comparison {
    /// Fields present in the old value only.
    pub removed: Set,
    /// Fields present in both with different values.
    pub modified: Set,
    /// Fields present in the new value only.
    pub added: Set,
}

impl Comparison {
    /// Whether nothing differs.
    pub fn is_same(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }
}

/// Compares `lhs` (old) with `rhs` (new).
pub fn compare(
    schema: &Schema,
    tr: &TypeRef,
    lhs: &Value,
    rhs: &Value,
) -> Result<Comparison, ValidationErrors> {
    let mut w = Walker {
        schema,
        path: Vec::new(),
        out: Comparison::default(),
        errs: ValidationErrors::default(),
    };
    w.compare(tr, Some(lhs), Some(rhs));
    if w.errs.is_empty() {
        Ok(w.out)
    } else {
        Err(w.errs)
    }
}

struct Walker<'a> {
    schema: &'a Schema,
    path: Vec<PathElement>,
    out: Comparison,
    errs: ValidationErrors,
}

impl Walker<'_> {
    fn compare(&mut self, tr: &TypeRef, lhs: Option<&Value>, rhs: Option<&Value>) {
        let r = match resolve(self.schema, tr) {
            Ok(r) => r,
            Err(e) => return self.errs.extend(e),
        };
        let (Some(ls), Some(rs)) = (shape_of(r, lhs.or(rhs)), shape_of(r, rhs.or(lhs))) else {
            return self
                .errs
                .extend(ValidationErrors::one("schema error: invalid atom"));
        };
        let in_leaf = if rhs.is_none() {
            self.handle(ls, lhs, rhs)
        } else if lhs.is_none() || ls.same_kind(&rs) {
            self.handle(rs, lhs, rhs)
        } else {
            // The shapes differ (possible with untyped types): both handlers run; only the
            // second one's leaf state counts.
            self.handle(ls, lhs, rhs);
            self.handle(rs, lhs, rhs)
        };
        if !in_leaf {
            if lhs.is_none() {
                self.out.added.insert(&self.path);
            } else if rhs.is_none() {
                self.out.removed.insert(&self.path);
            }
        }
    }

    /// Returns whether the node was treated as a leaf.
    fn handle(&mut self, shape: Shape<'_>, lhs: Option<&Value>, rhs: Option<&Value>) -> bool {
        match shape {
            Shape::Scalar(_) => {
                self.leaf(lhs, rhs);
                true
            }
            Shape::List(list, rel) => {
                let l = lhs.and_then(|v| v.as_array());
                let r = rhs.and_then(|v| v.as_array());
                let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
                if rel == Relationship::Atomic || empty {
                    self.leaf(lhs, rhs);
                    return true;
                }
                self.list_items(list, rel, l, r);
                false
            }
            Shape::Map(map, rel) => {
                let l = lhs.and_then(|v| v.as_object());
                let r = rhs.and_then(|v| v.as_object());
                let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
                if rel == Relationship::Atomic || empty {
                    self.leaf(lhs, rhs);
                    return true;
                }
                self.map_items(map, l, r);
                false
            }
        }
    }

    fn leaf(&mut self, lhs: Option<&Value>, rhs: Option<&Value>) {
        match (lhs, rhs) {
            (None, _) => self.out.added.insert(&self.path),
            (_, None) => self.out.removed.insert(&self.path),
            (Some(l), Some(r)) => {
                if !value::equals(l, r) {
                    self.out.modified.insert(&self.path);
                }
            }
        }
    }

    fn map_items(
        &mut self,
        map: &MapType,
        lhs: Option<&serde_json::Map<String, Value>>,
        rhs: Option<&serde_json::Map<String, Value>>,
    ) {
        for key in union_keys(lhs, rhs) {
            let Some(t) = map.type_of(key) else {
                self.errs.extend(undeclared(key));
                continue;
            };
            self.path.push(PathElement::Field(key.clone()));
            self.compare(
                t,
                lhs.and_then(|m| m.get(key)),
                rhs.and_then(|m| m.get(key)),
            );
            self.path.pop();
        }
    }

    fn index<'v>(
        &mut self,
        list: &ListType,
        rel: Relationship,
        items: Option<&'v Vec<Value>>,
        order: &mut Vec<PathElement>,
        known: Option<&BTreeMap<PathElement, Vec<&'v Value>>>,
    ) -> BTreeMap<PathElement, Vec<&'v Value>> {
        let mut out: BTreeMap<PathElement, Vec<&Value>> = BTreeMap::new();
        for (i, item) in items.into_iter().flatten().enumerate() {
            match list_item_element(self.schema, list, rel, item) {
                Ok(pe) => {
                    if let Some(v) = out.get_mut(&pe) {
                        v.push(item);
                    } else {
                        if known.is_none_or(|k| !k.contains_key(&pe)) {
                            order.push(pe.clone());
                        }
                        out.insert(pe, vec![item]);
                    }
                }
                Err(e) => self
                    .errs
                    .extend(ValidationErrors::one(format!("element {i}: {e}"))),
            }
        }
        out
    }

    fn list_items(
        &mut self,
        list: &ListType,
        rel: Relationship,
        lhs: Option<&Vec<Value>>,
        rhs: Option<&Vec<Value>>,
    ) {
        let mut order = Vec::new();
        let lvals = self.index(list, rel, lhs, &mut order, None);
        let rvals = self.index(list, rel, rhs, &mut order, Some(&lvals));
        for pe in order {
            let l = lvals.get(&pe).map(Vec::as_slice).unwrap_or(&[]);
            let r = rvals.get(&pe).map(Vec::as_slice).unwrap_or(&[]);
            self.path.push(pe);
            if l.len() <= 1 && r.len() <= 1 {
                self.compare(&list.element, l.first().copied(), r.first().copied());
            } else if l.len() >= 2 && r.len() >= 2 {
                let same = l.len() == r.len() && l.iter().zip(r).all(|(a, b)| value::equals(a, b));
                if !same {
                    self.out.modified.insert(&self.path);
                }
            } else if l.len() >= 2 {
                if let Some(first) = r.first() {
                    self.compare(&list.element, None, Some(first));
                }
                self.out.removed.insert(&self.path);
            } else {
                if let Some(first) = l.first() {
                    self.compare(&list.element, Some(first), None);
                }
                self.out.added.insert(&self.path);
            }
            self.path.pop();
        }
    }
}
