//! Values: coalescing a chart's defaults with user values as Helm does (`null` deletes,
//! tables merge, `global` flows down to subcharts, each subchart sees its own table),
//! Helm's `Values` lookups (`Table`, `PathValue`), and `--set` parsing ([`strvals`]).

pub mod schema;
pub mod schema_load;
pub mod strvals;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::chart::Chart;
use crate::template::value::{MapKind, MapRef, Value};

/// A values table: a shared `map[string]interface {}`.
pub type Values = MapRef;

/// Deep copies of values tables.
pub trait MapRefExt {
    /// `copystructure.Copy`.
    fn deep_clone(&self) -> MapRef;
}

impl MapRefExt for MapRef {
    fn deep_clone(&self) -> MapRef {
        deep_copy(self)
    }
}

/// The key whose table flows into every subchart.
pub const GLOBAL_KEY: &str = "global";

/// A new, empty `map[string]interface {}`.
pub fn new_map() -> MapRef {
    Rc::new(RefCell::new(BTreeMap::new()))
}

/// The map of a `map[string]interface {}` value (Helm's `istable`).
pub fn table_of(v: &Value) -> Option<MapRef> {
    match v {
        Value::Map(m, MapKind::Any) => Some(m.clone()),
        _ => None,
    }
}

fn is_table(v: &Value) -> bool {
    matches!(v, Value::Map(_, MapKind::Any))
}

/// `copystructure.Copy` of a values map.
pub fn deep_copy(m: &MapRef) -> MapRef {
    match crate::sprig::deep_copy(&Value::Map(m.clone(), MapKind::Any)) {
        Value::Map(m, _) => m,
        _ => new_map(),
    }
}

/// A chart's `values.yaml` as template values (numbers as `float64`, as Helm reads them).
pub fn chart_values(chart: &Chart) -> MapRef {
    match Value::from_json(&serde_json::Value::Object(chart.values.clone())) {
        Value::Map(m, _) => m,
        _ => new_map(),
    }
}

/// Helm's `Values.Table`: the table at a dotted path.
pub fn table(values: &MapRef, path: &str) -> Option<MapRef> {
    lookup_table(values, path).ok()
}

/// Helm's `Values.Table` with its error: `"b" is not a table` names the first part of the
/// path that is missing or not a table.
pub fn lookup_table(values: &MapRef, path: &str) -> Result<MapRef, String> {
    let mut t = values.clone();
    for part in path.split('.') {
        let next = t.borrow().get(part).and_then(table_of);
        t = next.ok_or_else(|| format!("{part:?} is not a table"))?;
    }
    Ok(t)
}

/// Helm's `Values.PathValue`: the non-table value at a dotted path.
pub fn path_value(values: &MapRef, path: &str) -> Option<Value> {
    if path.is_empty() {
        return None;
    }
    let parts: Vec<&str> = path.split('.').collect();
    let (key, parent) = parts.split_last()?;
    let t = if parent.is_empty() {
        values.clone()
    } else {
        table(values, &parent.join("."))?
    };
    let v = t.borrow().get(*key).cloned()?;
    if is_table(&v) { None } else { Some(v) }
}

fn concat_prefix(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

/// Helm's `CoalesceValues` (`merge` false) and `MergeValues` (`merge` true): the user's
/// values over the chart's defaults, recursively through subcharts. Warnings Helm logs are
/// pushed to `warnings`.
pub fn coalesce(
    chart: &Chart,
    user: &MapRef,
    merge: bool,
    warnings: &mut Vec<crate::log::Warning>,
) -> Result<MapRef, String> {
    let dest = deep_copy(user);
    coalesce_chart(chart, &dest, "", merge, warnings)?;
    Ok(dest)
}

fn coalesce_chart(
    chart: &Chart,
    dest: &MapRef,
    prefix: &str,
    merge: bool,
    warnings: &mut Vec<crate::log::Warning>,
) -> Result<(), String> {
    coalesce_values(chart, dest, prefix, merge, warnings);
    coalesce_deps(chart, dest, prefix, merge, warnings)
}

fn coalesce_deps(
    chart: &Chart,
    dest: &MapRef,
    prefix: &str,
    merge: bool,
    warnings: &mut Vec<crate::log::Warning>,
) -> Result<(), String> {
    for sub in &chart.dependencies {
        let existing = dest.borrow().get(sub.name()).cloned();
        let sub_map = match existing {
            None => {
                let m = new_map();
                dest.borrow_mut()
                    .insert(sub.name().to_string(), Value::Map(m.clone(), MapKind::Any));
                m
            }
            Some(v) => match table_of(&v) {
                Some(m) => m,
                None => {
                    return Err(format!(
                        "type mismatch on {}: %!t({}={})",
                        sub.name(),
                        v.type_name(),
                        crate::template::fmt::print_value(&v)
                    ));
                }
            },
        };
        let sub_prefix = concat_prefix(prefix, chart.name());
        coalesce_globals(&sub_map, dest, &sub_prefix, warnings);
        coalesce_chart(sub, &sub_map, &sub_prefix, merge, warnings)?;
    }
    Ok(())
}

/// Copies the parent's `global` table into a subchart's values.
fn coalesce_globals(
    dest: &MapRef,
    src: &MapRef,
    prefix: &str,
    warnings: &mut Vec<crate::log::Warning>,
) {
    let dg = match dest.borrow().get(GLOBAL_KEY).cloned() {
        None => new_map(),
        Some(v) => match table_of(&v) {
            Some(m) => m,
            None => {
                warnings.push(crate::log::Warning::info(format!(
                    "warning: skipping globals because destination {GLOBAL_KEY} is not a table."
                )));
                return;
            }
        },
    };
    let sg = match src.borrow().get(GLOBAL_KEY).cloned() {
        None => new_map(),
        Some(v) => match table_of(&v) {
            Some(m) => m,
            None => {
                warnings.push(crate::log::Warning::info(format!(
                    "warning: skipping globals because source {GLOBAL_KEY} is not a table."
                )));
                return;
            }
        },
    };
    let entries: Vec<(String, Value)> = sg
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (key, val) in entries {
        if let Some(vm) = table_of(&val) {
            // A shallow copy, as Helm's copyMap.
            let vv: MapRef = Rc::new(RefCell::new(vm.borrow().clone()));
            let existing = dg.borrow().get(&key).cloned();
            match existing {
                None => {
                    dg.borrow_mut().insert(key, Value::Map(vv, MapKind::Any));
                }
                Some(destv) => match table_of(&destv) {
                    None => warnings.push(crate::log::Warning::info(format!(
                        "Conflict: cannot merge map onto non-map for {}. Skipping.",
                        crate::template::quote::quote(&key)
                    ))),
                    Some(destvmap) => {
                        coalesce_tables(
                            &vv,
                            &destvmap,
                            &concat_prefix(prefix, &key),
                            true,
                            warnings,
                        );
                        dg.borrow_mut().insert(key, Value::Map(vv, MapKind::Any));
                    }
                },
            }
        } else if dg.borrow().get(&key).is_some_and(is_table) {
            warnings.push(crate::log::Warning::info(format!(
                "key {key} is table. Skipping"
            )));
        } else {
            dg.borrow_mut().insert(key, val);
        }
    }
    dest.borrow_mut()
        .insert(GLOBAL_KEY.to_string(), Value::Map(dg, MapKind::Any));
}

fn coalesce_values(
    chart: &Chart,
    v: &MapRef,
    prefix: &str,
    merge: bool,
    warnings: &mut Vec<crate::log::Warning>,
) {
    let sub_prefix = concat_prefix(prefix, chart.name());
    let vc = chart_values(chart);
    let entries: Vec<(String, Value)> = vc
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (key, val) in entries {
        let existing = v.borrow().get(&key).cloned();
        match existing {
            Some(value) => {
                if matches!(value, Value::Nil) && !merge {
                    v.borrow_mut().remove(&key);
                } else if let Some(dest) = table_of(&value) {
                    match table_of(&val) {
                        None => {
                            if !matches!(val, Value::Nil) {
                                warnings.push(crate::log::Warning::info(format!(
                                    "warning: skipped value for {sub_prefix}.{key}: Not a table."
                                )));
                            }
                        }
                        Some(src) => {
                            let merge = merge || chart.dependencies.iter().any(|d| d.name() == key);
                            coalesce_tables(
                                &dest,
                                &src,
                                &concat_prefix(&sub_prefix, &key),
                                merge,
                                warnings,
                            );
                        }
                    }
                }
            }
            None => {
                v.borrow_mut().insert(key, val);
            }
        }
    }
}

/// Helm's `coalesceTablesFullKey`: `src` (defaults) into `dst` (overrides).
pub fn coalesce_tables(
    dst: &MapRef,
    src: &MapRef,
    prefix: &str,
    merge: bool,
    warnings: &mut Vec<crate::log::Warning>,
) {
    if Rc::ptr_eq(dst, src) {
        return;
    }
    let src_non_nil: Vec<String> = src
        .borrow()
        .iter()
        .filter(|(_, v)| !matches!(v, Value::Nil))
        .map(|(k, _)| k.clone())
        .collect();
    let dst_nils: Vec<String> = dst
        .borrow()
        .iter()
        .filter(|(_, v)| matches!(v, Value::Nil))
        .map(|(k, _)| k.clone())
        .collect();
    for k in dst_nils {
        src.borrow_mut().insert(k, Value::Nil);
    }
    let entries: Vec<(String, Value)> = src
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (key, val) in entries {
        let full = concat_prefix(prefix, &key);
        let dv = dst.borrow().get(&key).cloned();
        match dv {
            Some(Value::Nil) if !merge && src_non_nil.contains(&key) => {
                dst.borrow_mut().remove(&key);
            }
            None => {
                dst.borrow_mut().insert(key, val);
            }
            Some(dv) => {
                if let Some(src_table) = table_of(&val) {
                    match table_of(&dv) {
                        Some(dst_table) => {
                            coalesce_tables(&dst_table, &src_table, &full, merge, warnings)
                        }
                        None => warnings.push(crate::log::Warning::info(format!(
                            "warning: cannot overwrite table with non table for {full} ({})",
                            crate::template::fmt::print_value(&val)
                        ))),
                    }
                } else if is_table(&dv) && !matches!(val, Value::Nil) {
                    warnings.push(crate::log::Warning::info(format!(
                        "warning: destination for {full} is a table. Ignoring non-table value ({})",
                        crate::template::fmt::print_value(&val)
                    )));
                }
            }
        }
    }
}
