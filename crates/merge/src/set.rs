//! Sets of field paths (what a manager owns) and their FieldsV1 encoding.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::fieldpath::{Path, PathElement, deserialize_element, serialize_element};
use crate::schema::{Schema, TypeRef};

/// A set of paths stored as a tree: members end a path here, children continue it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    /// The empty set.
    pub fn new() -> Set {
        Set::default()
    }

    /// A set of the given paths.
    pub fn from_paths<I: IntoIterator<Item = Path>>(paths: I) -> Set {
        let mut s = Set::new();
        for p in paths {
            s.insert(&p.0);
        }
        s
    }

    /// Adds a path (the empty path is ignored).
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether the path is in the set.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether the set has no paths.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Set::is_empty)
    }

    /// Number of paths.
    pub fn len(&self) -> usize {
        self.members.len() + self.children.values().map(Set::len).sum::<usize>()
    }

    /// The members directly at this level.
    pub fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    /// The children directly at this level.
    pub fn children(&self) -> impl Iterator<Item = (&PathElement, &Set)> {
        self.children.iter()
    }

    /// Whether `pe` is a member at this level.
    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// The subset of paths continuing below `pe` (relative to it).
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&Set> {
        self.children.get(pe).filter(|s| !s.is_empty())
    }

    /// Union.
    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.union_in_place(other);
        out
    }

    /// Adds every path of `other`.
    pub fn union_in_place(&mut self, other: &Set) {
        for m in &other.members {
            self.members.insert(m.clone());
        }
        for (pe, child) in &other.children {
            if child.is_empty() {
                continue;
            }
            self.children
                .entry(pe.clone())
                .or_default()
                .union_in_place(child);
        }
    }

    /// Intersection.
    pub fn intersection(&self, other: &Set) -> Set {
        let members = self
            .members
            .iter()
            .filter(|m| other.members.contains(m))
            .cloned()
            .collect();
        let mut children = BTreeMap::new();
        for (pe, child) in &self.children {
            if let Some(oc) = other.children.get(pe) {
                let i = child.intersection(oc);
                if !i.is_empty() {
                    children.insert(pe.clone(), i);
                }
            }
        }
        Set { members, children }
    }

    /// Paths of `self` not in `other` (exact paths; a member of `other` does not remove
    /// `self`'s paths below it).
    pub fn difference(&self, other: &Set) -> Set {
        self.difference_with(other, false)
    }

    /// Like [`Set::difference`], but a member of `other` also removes everything below it.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        self.difference_with(other, true)
    }

    fn difference_with(&self, other: &Set, recursive: bool) -> Set {
        let members = self
            .members
            .iter()
            .filter(|m| !other.members.contains(m))
            .cloned()
            .collect();
        let mut children = BTreeMap::new();
        for (pe, child) in &self.children {
            if recursive && other.members.contains(pe) {
                continue;
            }
            let d = match other.children.get(pe) {
                Some(oc) => child.difference_with(oc, recursive),
                None => child.clone(),
            };
            if !d.is_empty() {
                children.insert(pe.clone(), d);
            }
        }
        Set { members, children }
    }

    /// The members that have no children (the leaves), at every level.
    pub fn leaves(&self) -> Set {
        let members = self
            .members
            .iter()
            .filter(|m| self.children.get(*m).is_none_or(|c| c.is_empty()))
            .cloned()
            .collect();
        let children = self
            .children
            .iter()
            .map(|(pe, c)| (pe.clone(), c.leaves()))
            .filter(|(_, c)| !c.is_empty())
            .collect();
        Set { members, children }
    }

    /// Adds as members the named (struct) fields that appear only as parents of other paths.
    pub fn ensure_named_fields_are_members(&self, schema: &Schema, tr: &TypeRef) -> Set {
        let resolved = schema.resolve(tr);
        let map = resolved.and_then(|r| r.map()).map(|(m, _)| m);
        let list = resolved.and_then(|r| r.list()).map(|(l, _)| l);
        let mut members = self.members.clone();
        let mut children = BTreeMap::new();
        for (pe, child) in &self.children {
            let child_type = match pe {
                PathElement::Field(name) => match map {
                    Some(m) => {
                        if m.field(name).is_some() {
                            members.insert(pe.clone());
                        }
                        m.type_of(name)
                    }
                    None => None,
                },
                PathElement::Key(_) => list.map(|l| &l.element),
                _ => None,
            };
            let c = match child_type {
                Some(t) => child.ensure_named_fields_are_members(schema, t),
                // Below an element of unknown type no field is named.
                None => child.clone(),
            };
            children.insert(pe.clone(), c);
        }
        Set { members, children }
    }

    /// Every path, members before children at each level, in order.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        let mut prefix = Vec::new();
        self.collect_paths(&mut prefix, &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(Path(p));
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// Keeps only the paths matched by `matcher`.
    pub fn filter_include(&self, matcher: &SetMatcher) -> Set {
        if matcher.wildcard {
            return self.clone();
        }
        let members = self
            .members
            .iter()
            .filter(|m| matcher.members.iter().any(|(p, _)| p.matches(m)))
            .cloned()
            .collect();
        let mut children = BTreeMap::new();
        for (pe, child) in &self.children {
            if let Some((_, sub)) = matcher.members.iter().find(|(p, _)| p.matches(pe)) {
                let c = child.filter_include(sub);
                if !c.is_empty() {
                    children.insert(pe.clone(), c);
                }
            }
        }
        Set { members, children }
    }

    /// The FieldsV1 JSON encoding Kubernetes stores in `managedFields[].fieldsV1`.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false))
    }

    fn emit(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(".".to_string(), Value::Object(Map::new()));
        }
        let mut keys: BTreeSet<&PathElement> = self.members.iter().collect();
        keys.extend(
            self.children
                .iter()
                .filter(|(_, c)| !c.is_empty())
                .map(|(k, _)| k),
        );
        for pe in keys {
            let key = serialize_element(pe);
            let member = self.members.contains(pe);
            let value = match self.children.get(pe).filter(|c| !c.is_empty()) {
                Some(child) => child.emit(member),
                None => Map::new(),
            };
            out.insert(key, Value::Object(value));
        }
        out
    }

    /// Decodes a FieldsV1 JSON value.
    pub fn from_fields_v1(v: &Value) -> Result<Set, String> {
        match v {
            Value::Object(m) => Ok(Set::read(m)?.0),
            _ => Err("fieldsV1 must be a JSON object".to_string()),
        }
    }

    fn read(m: &Map<String, Value>) -> Result<(Set, bool), String> {
        let mut set = Set::new();
        let mut is_member = false;
        let mut any_child = false;
        for (key, value) in m {
            if key == "." {
                is_member = true;
                continue;
            }
            let pe = deserialize_element(key)?;
            let inner = match value {
                Value::Object(inner) => inner,
                _ => return Err(format!("value of {key:?} must be a JSON object")),
            };
            let (grandchildren, child_member) = Set::read(inner)?;
            any_child = true;
            if child_member {
                set.members.insert(pe.clone());
            }
            if !grandchildren.is_empty() {
                set.children.insert(pe, grandchildren);
            }
        }
        if !any_child {
            is_member = true;
        }
        Ok((set, is_member))
    }
}

/// A pattern over path elements for include filters.
#[derive(Clone, Debug)]
pub enum ElementMatcher {
    /// Matches any element.
    Any,
    /// Matches one element exactly.
    Exact(PathElement),
}

impl ElementMatcher {
    fn matches(&self, pe: &PathElement) -> bool {
        match self {
            ElementMatcher::Any => true,
            ElementMatcher::Exact(e) => e == pe,
        }
    }
}

/// A tree of element matchers; `wildcard` matches every set.
#[derive(Clone, Debug, Default)]
pub struct SetMatcher {
    /// Matches everything below this point.
    pub wildcard: bool,
    /// Element patterns with the matcher for what lies below them.
    pub members: Vec<(ElementMatcher, SetMatcher)>,
}

impl SetMatcher {
    /// A matcher for paths that start with `prefix` (anything below it).
    pub fn prefix(prefix: Vec<ElementMatcher>) -> SetMatcher {
        let mut m = SetMatcher {
            wildcard: true,
            members: Vec::new(),
        };
        for e in prefix.into_iter().rev() {
            m = SetMatcher {
                wildcard: false,
                members: vec![(e, m)],
            };
        }
        m
    }
}
