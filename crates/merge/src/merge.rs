//! Structured merge of two values of one type: the applied configuration (right) over the live
//! object (left), granular where the schema says so.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::fieldpath::PathElement;
use crate::schema::{ListType, MapType, Relationship, Schema, TypeRef};
use crate::typed::{
    Shape, ValidationErrors, list_item_element, resolve, shape_of, undeclared, union_keys,
};

static NULL: Value = Value::Null;

/// Merges `rhs` over `lhs`; `None` when the result is empty.
pub fn merge(
    schema: &Schema,
    tr: &TypeRef,
    lhs: &Value,
    rhs: &Value,
) -> Result<Value, ValidationErrors> {
    let mut w = Walker {
        schema,
        errs: ValidationErrors::default(),
    };
    let out = w.merge(tr, Some(lhs), Some(rhs));
    if !w.errs.is_empty() {
        return Err(w.errs);
    }
    Ok(out.unwrap_or(Value::Null))
}

struct Walker<'a> {
    schema: &'a Schema,
    errs: ValidationErrors,
}

impl Walker<'_> {
    fn merge(&mut self, tr: &TypeRef, lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
        let r = match resolve(self.schema, tr) {
            Ok(r) => r,
            Err(e) => {
                self.errs.extend(e);
                return None;
            }
        };
        let ls = shape_of(r, lhs.or(rhs));
        let rs = shape_of(r, rhs.or(lhs));
        let (Some(ls), Some(rs)) = (ls, rs) else {
            self.errs
                .extend(ValidationErrors::one("schema error: invalid atom"));
            return None;
        };
        if rhs.is_none() {
            self.handle(ls, lhs, rhs)
        } else if lhs.is_none() || ls.same_kind(&rs) {
            self.handle(rs, lhs, rhs)
        } else {
            // Different shapes: the right side's handler decides, the left value does not fit it.
            self.handle(rs, None, rhs)
        }
    }

    fn handle(
        &mut self,
        shape: Shape<'_>,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
    ) -> Option<Value> {
        match shape {
            Shape::Scalar(_) => rhs.or(lhs).cloned(),
            Shape::List(list, rel) => {
                let l = lhs.and_then(|v| v.as_array());
                let r = rhs.and_then(|v| v.as_array());
                let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
                if rel == Relationship::Atomic || empty {
                    return rhs.or(lhs).cloned();
                }
                self.list_items(list, rel, l, r)
            }
            Shape::Map(map, rel) => {
                let l = lhs.and_then(|v| v.as_object());
                let r = rhs.and_then(|v| v.as_object());
                let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
                if rel == Relationship::Atomic || empty {
                    return rhs.or(lhs).cloned();
                }
                self.map_items(map, l, r)
            }
        }
    }

    fn map_items(
        &mut self,
        map: &MapType,
        lhs: Option<&Map<String, Value>>,
        rhs: Option<&Map<String, Value>>,
    ) -> Option<Value> {
        let mut out = Map::new();
        for key in union_keys(lhs, rhs) {
            let Some(t) = map.type_of(key) else {
                self.errs.extend(undeclared(key));
                continue;
            };
            let merged = self.merge(
                t,
                lhs.and_then(|m| m.get(key)),
                rhs.and_then(|m| m.get(key)),
            );
            if let Some(v) = merged {
                out.insert(key.clone(), v);
            }
        }
        if out.is_empty() {
            None
        } else {
            Some(Value::Object(out))
        }
    }

    #[allow(clippy::type_complexity)]
    fn index<'v>(
        &mut self,
        list: &ListType,
        rel: Relationship,
        items: Option<&'v Vec<Value>>,
        allow_duplicates: bool,
    ) -> (Vec<PathElement>, BTreeMap<PathElement, &'v Value>) {
        let mut pes = Vec::new();
        let mut observed: BTreeMap<PathElement, &Value> = BTreeMap::new();
        for (i, item) in items.into_iter().flatten().enumerate() {
            match list_item_element(self.schema, list, rel, item) {
                Ok(pe) => {
                    if observed.contains_key(&pe) {
                        if !allow_duplicates {
                            self.errs.extend(ValidationErrors::one(format!(
                                "duplicate entries for key {pe}"
                            )));
                            continue;
                        }
                        observed.insert(pe.clone(), &NULL);
                    } else {
                        observed.insert(pe.clone(), item);
                    }
                    pes.push(pe);
                }
                Err(e) => self
                    .errs
                    .extend(ValidationErrors::one(format!("element {i}: {e}"))),
            }
        }
        (pes, observed)
    }

    fn list_items(
        &mut self,
        list: &ListType,
        rel: Relationship,
        lhs: Option<&Vec<Value>>,
        rhs: Option<&Vec<Value>>,
    ) -> Option<Value> {
        let before = self.errs.0.len();
        let (rpes, robs) = self.index(list, rel, rhs, false);
        let (lpes, lobs) = self.index(list, rel, lhs, true);
        if self.errs.0.len() != before {
            return None;
        }
        let shared: Vec<&PathElement> = rpes.iter().filter(|pe| lobs.contains_key(*pe)).collect();
        let mut shared_iter = shared.into_iter();
        let mut next_shared = shared_iter.next();
        let mut merged_rhs: BTreeSet<PathElement> = BTreeSet::new();
        let mut out = Vec::new();
        let (llen, rlen) = (lpes.len(), rpes.len());
        let (mut li, mut ri) = (0, 0);
        while li < llen || ri < rlen {
            if li < llen && ri < rlen {
                let pe = &lpes[li];
                if *pe == rpes[ri] {
                    merged_rhs.insert(pe.clone());
                    let v = self.merge(&list.element, lobs.get(pe).copied(), robs.get(pe).copied());
                    out.extend(v);
                    li += 1;
                    ri += 1;
                    next_shared = shared_iter.next();
                    continue;
                }
                if robs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                    li += 1;
                    continue;
                }
            }
            if li < llen {
                let pe = &lpes[li];
                if !robs.contains_key(pe) {
                    let item = lhs.and_then(|l| l.get(li));
                    let v = self.merge(&list.element, item, None);
                    out.extend(v);
                    li += 1;
                    continue;
                } else if merged_rhs.contains(pe) {
                    li += 1;
                }
            }
            if ri < rlen {
                let pe = &rpes[ri];
                merged_rhs.insert(pe.clone());
                let v = self.merge(&list.element, lobs.get(pe).copied(), robs.get(pe).copied());
                out.extend(v);
                ri += 1;
                if next_shared.is_some_and(|n| n == pe) {
                    next_shared = shared_iter.next();
                }
            }
        }
        if out.is_empty() {
            None
        } else {
            Some(Value::Array(out))
        }
    }
}
