//! The updater: applies and updates with field ownership, conflicts and pruning of fields an
//! applier stopped declaring, as structured-merge-diff's `merge.Updater` does.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::compare::{Comparison, compare};
use crate::fieldpath::{Path, PathElement};
use crate::merge::merge;
use crate::remove::remove_items;
use crate::schema::{Relationship, Schema, Target, TypeRef, UNTYPED_DEDUCED};
use crate::set::{Set, SetMatcher};
use crate::typed::{ValidationErrors, to_field_set};

/// What one manager owns, at which API version, and whether it came from an apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionedSet {
    /// The owned fields.
    pub set: Set,
    /// API version the set is expressed in.
    pub api_version: String,
    /// Whether the manager applied (as opposed to updated).
    pub applied: bool,
}

/// Managers by name.
pub type ManagedFields = BTreeMap<String, VersionedSet>;

/// One conflicting field: who owns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The manager owning the field.
    pub manager: String,
    /// The field.
    pub path: Path,
}

/// Conflicts of an apply without force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflicts(pub Vec<Conflict>);

impl Conflicts {
    /// One conflict per path of each manager's set.
    pub fn from_managers(sets: &BTreeMap<String, Set>) -> Conflicts {
        let mut list = Vec::new();
        for (m, set) in sets {
            for p in set.paths() {
                list.push(Conflict {
                    manager: m.clone(),
                    path: p,
                });
            }
        }
        Conflicts(list)
    }

    /// The conflicting paths as a set.
    pub fn to_set(&self) -> Set {
        Set::from_paths(self.0.iter().map(|c| c.path.clone()))
    }
}

impl fmt::Display for Conflicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.len() == 1 {
            return write!(
                f,
                "conflict with {:?}: {}",
                self.0[0].manager, self.0[0].path
            );
        }
        let mut by_manager: BTreeMap<&str, Vec<&Path>> = BTreeMap::new();
        for c in &self.0 {
            by_manager.entry(&c.manager).or_default().push(&c.path);
        }
        let mut lines = Vec::new();
        for (m, paths) in by_manager {
            lines.push(format!("conflicts with {m:?}:"));
            for p in paths {
                lines.push(format!("- {p}"));
            }
        }
        write!(f, "{}", lines.join("\n"))
    }
}

/// Errors of the updater.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// The applied configuration conflicts with other managers.
    #[error("{0}")]
    Conflicts(Conflicts),
    /// A value does not fit the schema.
    #[error("{context}: {errors}")]
    Invalid {
        /// What was being done.
        context: &'static str,
        /// The problems.
        errors: ValidationErrors,
    },
    /// Conversion between versions failed.
    #[error("{0}")]
    Convert(String),
}

/// Why a conversion failed.
#[derive(Clone, Debug)]
pub struct ConvertError {
    /// The target version does not exist (any more); managers at it are dropped.
    pub missing_version: bool,
    /// Description.
    pub message: String,
}

/// Converts an object between API versions.
pub trait Converter {
    /// `v`, an object at version `from`, converted to version `to`.
    fn convert(&self, v: &Value, from: &str, to: &str) -> Result<Value, ConvertError>;
}

/// The converter for objects whose versions share one representation.
pub struct Identity;

impl Converter for Identity {
    fn convert(&self, v: &Value, _from: &str, _to: &str) -> Result<Value, ConvertError> {
        Ok(v.clone())
    }
}

/// The type of the object at each version.
#[derive(Clone, Copy)]
pub enum Roots<'a> {
    /// Every version has the same type.
    Same(&'a TypeRef),
    /// One type per version.
    ByVersion(&'a BTreeMap<String, TypeRef>),
}

/// Fields left out of ownership per version: exact paths (and what lies below) or include
/// patterns.
#[derive(Clone, Debug)]
pub enum Filter {
    /// Removes these paths and everything below them.
    Exclude(Set),
    /// Keeps only what the matcher matches.
    Include(SetMatcher),
}

impl Filter {
    /// Applies the filter.
    pub fn filter(&self, set: &Set) -> Set {
        match self {
            Filter::Exclude(ex) => set.recursive_difference(ex),
            Filter::Include(m) => set.filter_include(m),
        }
    }
}

/// Applies and updates objects of one type.
pub struct Updater<'a> {
    /// The schema.
    pub schema: &'a Schema,
    /// The object's type per version.
    pub roots: Roots<'a>,
    /// Version conversion.
    pub converter: &'a dyn Converter,
    /// Ignored fields per version.
    pub ignore: BTreeMap<String, Filter>,
    /// Return the merged object even when nothing changed.
    pub return_input_on_noop: bool,
}

fn invalid(context: &'static str) -> impl Fn(ValidationErrors) -> MergeError {
    move |errors| MergeError::Invalid { context, errors }
}

enum Conv {
    Ok(Value),
    Missing,
}

impl Updater<'_> {
    fn tr(&self, version: &str) -> Result<&TypeRef, MergeError> {
        match self.roots {
            Roots::Same(t) => Ok(t),
            Roots::ByVersion(m) => m
                .get(version)
                .ok_or_else(|| MergeError::Convert(format!("no type for version {version:?}"))),
        }
    }

    fn conv_opt(&self, v: &Value, from: &str, to: &str) -> Result<Conv, MergeError> {
        match self.converter.convert(v, from, to) {
            Ok(v) => Ok(Conv::Ok(v)),
            Err(e) if e.missing_version => Ok(Conv::Missing),
            Err(e) => Err(MergeError::Convert(e.message)),
        }
    }

    fn conv(&self, v: &Value, from: &str, to: &str) -> Result<Value, MergeError> {
        match self.conv_opt(v, from, to)? {
            Conv::Ok(v) => Ok(v),
            Conv::Missing => Err(MergeError::Convert(format!("missing version {to:?}"))),
        }
    }

    fn filtered(&self, version: &str, mut c: Comparison) -> Comparison {
        if let Some(f) = self.ignore.get(version) {
            c.removed = f.filter(&c.removed);
            c.modified = f.filter(&c.modified);
            c.added = f.filter(&c.added);
        }
        c
    }

    fn update_managers(
        &self,
        old: &Value,
        new: &Value,
        version: &str,
        mut managers: ManagedFields,
        workflow: &str,
        force: bool,
    ) -> Result<(ManagedFields, Comparison), MergeError> {
        let cmp = compare(self.schema, self.tr(version)?, old, new)
            .map_err(invalid("failed to compare objects"))?;
        let cmp = self.filtered(version, cmp);
        let mut versions: BTreeMap<String, Comparison> = BTreeMap::new();
        let mut conflicts: BTreeMap<String, Set> = BTreeMap::new();
        let mut removed: BTreeMap<String, Set> = BTreeMap::new();
        let mut dropped = Vec::new();
        for (name, vs) in &managers {
            if name == workflow {
                continue;
            }
            let mv = vs.api_version.as_str();
            let c = if mv == version {
                &cmp
            } else {
                if !versions.contains_key(mv) {
                    let o = self.conv_opt(old, version, mv)?;
                    let n = self.conv_opt(new, version, mv)?;
                    let (Conv::Ok(o), Conv::Ok(n)) = (o, n) else {
                        dropped.push(name.clone());
                        continue;
                    };
                    let c = compare(self.schema, self.tr(mv)?, &o, &n)
                        .map_err(invalid("failed to compare objects"))?;
                    versions.insert(mv.to_string(), self.filtered(mv, c));
                }
                &versions[mv]
            };
            let conflict = vs.set.intersection(&c.modified.union(&c.added));
            if !conflict.is_empty() {
                conflicts.insert(name.clone(), conflict);
            }
            if !c.removed.is_empty() {
                removed.insert(name.clone(), c.removed.clone());
            }
        }
        for name in dropped {
            managers.remove(&name);
        }
        if !force && !conflicts.is_empty() {
            return Err(MergeError::Conflicts(Conflicts::from_managers(&conflicts)));
        }
        for (m, set) in conflicts.iter().chain(removed.iter()) {
            if let Some(vs) = managers.get_mut(m) {
                vs.set = vs.set.difference(set);
            }
        }
        managers.retain(|_, vs| !vs.set.is_empty());
        Ok((managers, cmp))
    }

    /// Records a non-apply write of `new` over `live` (both at `version`) by `manager`.
    pub fn update(
        &self,
        live: &Value,
        new: &Value,
        version: &str,
        managers: ManagedFields,
        manager: &str,
    ) -> Result<ManagedFields, MergeError> {
        let managers = self.reconcile_with_schema(live, version, managers)?;
        let (mut managers, cmp) =
            self.update_managers(live, new, version, managers, manager, true)?;
        let previous = managers
            .remove(manager)
            .map(|vs| vs.set)
            .unwrap_or_default();
        let mut set = previous
            .difference(&cmp.removed)
            .union(&cmp.modified)
            .union(&cmp.added);
        if let Some(f) = self.ignore.get(version) {
            set = f.filter(&set);
        }
        if !set.is_empty() {
            managers.insert(
                manager.to_string(),
                VersionedSet {
                    set,
                    api_version: version.to_string(),
                    applied: false,
                },
            );
        }
        Ok(managers)
    }

    /// Applies `config` over `live` (both at `version`) as `manager`. Returns the new object
    /// (`None` when nothing changed) and the managers.
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        version: &str,
        managers: ManagedFields,
        manager: &str,
        force: bool,
    ) -> Result<(Option<Value>, ManagedFields), MergeError> {
        let mut managers = self.reconcile_with_schema(live, version, managers)?;
        let tr = self.tr(version)?;
        let merged =
            merge(self.schema, tr, live, config).map_err(invalid("failed to merge config"))?;
        let last = managers.get(manager).cloned();
        let mut set =
            to_field_set(self.schema, tr, config).map_err(invalid("failed to get field set"))?;
        if let Some(f) = self.ignore.get(version) {
            set = f.filter(&set);
        }
        managers.insert(
            manager.to_string(),
            VersionedSet {
                set,
                api_version: version.to_string(),
                applied: true,
            },
        );
        let new = self.prune(merged, version, &managers, manager, last.as_ref())?;
        let (managers, _) = self.update_managers(live, &new, version, managers, manager, force)?;
        if !self.return_input_on_noop && crate::value::equals(live, &new) {
            return Ok((None, managers));
        }
        Ok((Some(new), managers))
    }

    fn prune(
        &self,
        merged: Value,
        version: &str,
        managers: &ManagedFields,
        applying: &str,
        last: Option<&VersionedSet>,
    ) -> Result<Value, MergeError> {
        let Some(last) = last.filter(|l| !l.set.is_empty()) else {
            return Ok(merged);
        };
        let lv = last.api_version.as_str();
        let converted = match self.conv_opt(&merged, version, lv)? {
            Conv::Ok(v) => v,
            Conv::Missing => return Ok(merged),
        };
        let tr = self.tr(lv)?;
        let s = self.schema;
        let pruned = remove_items(
            s,
            tr,
            &converted,
            &last.set.ensure_named_fields_are_members(s, tr),
        );
        let (pruned, pv) = self.add_back_owned(&converted, pruned, lv, managers)?;
        let pruned = self.add_back_dangling(&converted, pruned, &pv, last)?;
        let target = managers
            .get(applying)
            .map(|v| v.api_version.clone())
            .unwrap_or_else(|| version.to_string());
        self.conv(&pruned, lv, &target)
    }

    fn add_back_owned(
        &self,
        merged: &Value,
        pruned: Value,
        pruned_version: &str,
        managers: &ManagedFields,
    ) -> Result<(Value, String), MergeError> {
        let mut at_version: BTreeMap<&str, Set> = BTreeMap::new();
        for vs in managers.values() {
            at_version
                .entry(&vs.api_version)
                .or_default()
                .union_in_place(&vs.set);
        }
        let mut merged = merged.clone();
        let mut merged_v = pruned_version.to_string();
        let mut pruned = pruned;
        let mut pruned_v = pruned_version.to_string();
        let mut order: Vec<&str> = Vec::new();
        if at_version.contains_key(pruned_version) {
            order.push(pruned_version);
        }
        order.extend(at_version.keys().filter(|v| **v != pruned_version));
        for version in order {
            let managed = &at_version[version];
            let m = self.conv_opt(&merged, &merged_v, version)?;
            let Conv::Ok(m) = m else { continue };
            merged = m;
            merged_v = version.to_string();
            let p = self.conv_opt(&pruned, &pruned_v, version)?;
            let Conv::Ok(p) = p else { continue };
            let s = self.schema;
            let tr = self.tr(version)?;
            let merged_set = to_field_set(s, tr, &merged)
                .map_err(invalid("failed to create field set from merged object"))?;
            let pruned_set = to_field_set(s, tr, &p)
                .map_err(invalid("failed to create field set from pruned object"))?;
            let keep = pruned_set
                .ensure_named_fields_are_members(s, tr)
                .union(&managed.ensure_named_fields_are_members(s, tr));
            let drop = merged_set
                .ensure_named_fields_are_members(s, tr)
                .difference(&keep);
            pruned = remove_items(s, tr, &merged, &drop);
            pruned_v = version.to_string();
        }
        Ok((pruned, pruned_v))
    }

    fn add_back_dangling(
        &self,
        merged: &Value,
        pruned: Value,
        pruned_version: &str,
        last: &VersionedSet,
    ) -> Result<Value, MergeError> {
        let lv = last.api_version.as_str();
        let converted = match self.conv_opt(&pruned, pruned_version, lv)? {
            Conv::Ok(v) => v,
            Conv::Missing => return Ok(merged.clone()),
        };
        let s = self.schema;
        let tr = self.tr(lv)?;
        let pruned_set = to_field_set(s, tr, &converted)
            .map_err(invalid("failed to create field set from pruned object"))?
            .ensure_named_fields_are_members(s, tr);
        let merged_set = to_field_set(s, tr, merged)
            .map_err(invalid("failed to create field set from merged object"))?
            .ensure_named_fields_are_members(s, tr);
        let last_set = last.set.ensure_named_fields_are_members(s, tr);
        let drop = merged_set.difference(&pruned_set).intersection(&last_set);
        Ok(remove_items(s, tr, merged, &drop))
    }

    /// Adjusts owned sets to the current schema: paths reaching inside what is now atomic are cut
    /// back to the atomic field.
    pub fn reconcile_with_schema(
        &self,
        live: &Value,
        version: &str,
        managers: ManagedFields,
    ) -> Result<ManagedFields, MergeError> {
        let mut out = ManagedFields::new();
        for (m, mut vs) in managers {
            if let Conv::Missing = self.conv_opt(live, version, &vs.api_version)? {
                continue;
            }
            let tr = self.tr(&vs.api_version)?;
            let mut remove = Set::new();
            let mut add = Set::new();
            let mut path = Vec::new();
            reconcile_walk(
                self.schema,
                tr,
                Some(&vs.set),
                false,
                &mut path,
                &mut remove,
                &mut add,
            );
            if !remove.is_empty() || !add.is_empty() {
                vs.set = vs.set.recursive_difference(&remove).union(&add);
            }
            out.insert(m, vs);
        }
        Ok(out)
    }
}

fn is_untyped_deduced(schema: &Schema, m: &crate::schema::MapType) -> bool {
    if !m.fields.is_empty() {
        return false;
    }
    match m.element.as_ref().map(|t| &t.target) {
        Some(Target::Named(i)) => schema.lookup(UNTYPED_DEDUCED) == Some(*i),
        Some(Target::Inline(a)) => a.scalar == Some(crate::schema::Scalar::Untyped),
        None => false,
    }
}

fn reconcile_walk(
    schema: &Schema,
    tr: &TypeRef,
    set: Option<&Set>,
    is_atomic: bool,
    path: &mut Vec<PathElement>,
    remove: &mut Set,
    add: &mut Set,
) {
    let Some(r) = schema.resolve(tr) else {
        return;
    };
    if let Some((m, rel)) = r.map() {
        if is_untyped_deduced(schema, m) {
            return;
        }
        if !is_atomic && rel == Relationship::Atomic {
            if set.is_some_and(|s| !s.is_empty()) {
                remove.insert(path);
                add.insert(path);
            }
            return;
        }
        if let Some(set) = set {
            visit(
                set,
                path,
                remove,
                add,
                |pe| match pe {
                    PathElement::Field(name) => m.type_of(name),
                    _ => m.element.as_ref(),
                },
                schema,
            );
        }
    } else if r.scalar().is_some() {
    } else if let Some((l, rel)) = r.list() {
        if !is_atomic && rel == Relationship::Atomic {
            remove.insert(path);
            add.insert(path);
            return;
        }
        if let Some(set) = set {
            visit(set, path, remove, add, |_| Some(&l.element), schema);
        }
    }
}

fn visit<'t>(
    set: &Set,
    path: &mut Vec<PathElement>,
    remove: &mut Set,
    add: &mut Set,
    type_of: impl Fn(&PathElement) -> Option<&'t TypeRef>,
    schema: &Schema,
) {
    let mut handle = |pe: &PathElement, is_member: bool| {
        if let Some(t) = type_of(pe) {
            let child = set.with_prefix(pe);
            path.push(pe.clone());
            reconcile_walk(
                schema,
                t,
                child,
                is_member && child.is_none(),
                path,
                remove,
                add,
            );
            path.pop();
        }
    };
    for (pe, _) in set.children() {
        if !set.has_member(pe) {
            handle(pe, false);
        }
    }
    for pe in set.members() {
        handle(pe, true);
    }
}
