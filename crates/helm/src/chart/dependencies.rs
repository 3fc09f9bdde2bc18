//! Helm's dependency processing before a render: aliases, `condition` and `tags` deciding
//! which subcharts are enabled, and `import-values` copying a subchart's values up.

use crate::log::Warning;
use crate::template::value::{MapKind, Value};
use crate::values::{self, MapRefExt, coalesce, new_map, table};

use super::{Chart, Dependency};

/// Masterminds semver's check of `version` against the constraint `range` (false when either
/// does not parse), as Helm's `IsCompatibleRange`.
pub fn is_compatible_range(range: &str, version: &str) -> bool {
    let Ok(c) = tidegate_core::semver::Constraints::parse(range) else {
        return false;
    };
    let Ok(v) = tidegate_core::semver::Version::parse(version) else {
        return false;
    };
    c.check(&v)
}

/// Helm's `ProcessDependencies` (with merge): disables subcharts by condition and tags, applies
/// aliases, then imports values. `user` are the user's values.
pub fn process_dependencies(
    chart: &mut Chart,
    user: &values::Values,
    warnings: &mut Vec<Warning>,
) -> Result<(), String> {
    process_enabled(chart, user, "", warnings)?;
    process_import_values(chart, warnings)
}

fn alias_dependency(charts: &[Chart], dep: &Dependency) -> Option<Chart> {
    for c in charts {
        if c.name() != dep.name || !is_compatible_range(&dep.version, &c.metadata.version) {
            continue;
        }
        let mut out = c.clone();
        if !dep.alias.is_empty() {
            out.metadata.name = dep.alias.clone();
        }
        return Some(out);
    }
    None
}

fn process_enabled(
    chart: &mut Chart,
    v: &values::Values,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Result<(), String> {
    let Some(mut reqs) = chart.metadata.dependencies.take() else {
        return Ok(());
    };
    // Subcharts no dependency names stay; those named are replaced by their aliased copies.
    let mut deps: Vec<Chart> = chart
        .dependencies
        .iter()
        .filter(|existing| {
            !reqs.iter().any(|r| {
                existing.name() == r.name
                    && is_compatible_range(&r.version, &existing.metadata.version)
            })
        })
        .cloned()
        .collect();
    for req in reqs.iter_mut() {
        if let Some(c) = alias_dependency(&chart.dependencies, req) {
            deps.push(c);
        }
        if !req.alias.is_empty() {
            req.name = req.alias.clone();
        }
    }
    chart.dependencies = deps;
    for r in reqs.iter_mut() {
        r.enabled = true;
    }
    chart.metadata.dependencies = Some(reqs);
    let cvals = coalesce(chart, v, false, warnings)?;
    let reqs = chart
        .metadata
        .dependencies
        .as_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    let mut reqs = reqs;
    process_tags(&mut reqs, &cvals, warnings);
    process_conditions(&mut reqs, &cvals, path, warnings);
    let disabled: Vec<String> = reqs
        .iter()
        .filter(|r| !r.enabled)
        .map(|r| r.name.clone())
        .collect();
    let mut kept: Vec<Chart> = std::mem::take(&mut chart.dependencies)
        .into_iter()
        .filter(|c| !disabled.contains(&c.metadata.name))
        .collect();
    let kept_reqs: Vec<Dependency> = reqs
        .into_iter()
        .filter(|r| !disabled.contains(&r.name))
        .collect();
    for sub in kept.iter_mut() {
        let subpath = format!("{path}{}.", sub.metadata.name);
        process_enabled(sub, &cvals, &subpath, warnings)?;
    }
    chart.metadata.dependencies = Some(kept_reqs);
    chart.dependencies = kept;
    Ok(())
}

fn process_tags(reqs: &mut [Dependency], cvals: &values::Values, warnings: &mut Vec<Warning>) {
    let Some(tags) = table(cvals, "tags") else {
        return;
    };
    for r in reqs {
        let (mut has_true, mut has_false) = (false, false);
        for k in &r.tags {
            match tags.borrow().get(k) {
                Some(Value::Bool(true)) => has_true = true,
                Some(Value::Bool(false)) => has_false = true,
                Some(_) => warnings.push(Warning::warn(
                    "returned non-bool value",
                    vec![("tag", k.clone()), ("chart", r.name.clone())],
                )),
                None => {}
            }
        }
        if !has_true && has_false {
            r.enabled = false;
        } else if has_true || !has_false {
            r.enabled = true;
        }
    }
}

fn process_conditions(
    reqs: &mut [Dependency],
    cvals: &values::Values,
    path: &str,
    warnings: &mut Vec<Warning>,
) {
    for r in reqs {
        for c in r.condition.trim().split(',') {
            if c.is_empty() {
                continue;
            }
            match values::path_value(cvals, &format!("{path}{c}")) {
                Some(Value::Bool(b)) => {
                    r.enabled = b;
                    break;
                }
                // A null or a string is no answer: the next condition, or enabled.
                Some(_) => warnings.push(Warning::warn(
                    "returned non-bool value",
                    vec![("path", c.to_string()), ("chart", r.name.clone())],
                )),
                None => {}
            }
        }
    }
}

/// `a.b` as nested tables around `data`; `.` is `data` itself.
fn path_to_map(path: &str, data: values::Values) -> values::Values {
    if path == "." {
        return data;
    }
    let mut cur = data;
    for part in path.split('.').rev() {
        let m = new_map();
        m.borrow_mut()
            .insert(part.to_string(), Value::Map(cur, MapKind::Any));
        cur = m;
    }
    cur
}

fn process_import_values(chart: &mut Chart, warnings: &mut Vec<Warning>) -> Result<(), String> {
    for d in chart.dependencies.iter_mut() {
        process_import_values(d, warnings)?;
    }
    let Some(reqs) = chart.metadata.dependencies.as_mut() else {
        return Ok(());
    };
    if reqs.iter().all(|r| r.import_values.is_empty()) {
        return Ok(());
    }
    let reqs = reqs.clone();
    let cvals = coalesce(chart, &new_map(), true, warnings)?;
    let b = new_map();
    let mut rewritten = Vec::new();
    for r in &reqs {
        let mut out = Vec::new();
        for iv in &r.import_values {
            let (child, parent) = match iv {
                serde_json::Value::Object(m) => {
                    let text = |k: &str| {
                        crate::sprig::strval(&m.get(k).map(Value::from_json).unwrap_or(Value::Nil))
                    };
                    (text("child"), text("parent"))
                }
                serde_json::Value::String(s) => (format!("exports.{s}"), ".".to_string()),
                _ => continue,
            };
            out.push(serde_json::json!({"child": child, "parent": parent}));
            let vv = match values::lookup_table(&cvals, &format!("{}.{child}", r.name)) {
                Ok(vv) => vv,
                Err(e) => {
                    warnings.push(if iv.is_string() {
                        Warning::warn("ImportValues missing table", vec![("error", e)])
                    } else {
                        Warning::warn(
                            "ImportValues missing table from chart",
                            vec![("chart", r.name.clone()), ("error", e)],
                        )
                    });
                    continue;
                }
            };
            let imported = path_to_map(&parent, vv.deep_clone());
            values::coalesce_tables(&b, &imported, "", true, warnings);
        }
        rewritten.push(out);
    }
    if let Some(reqs) = chart.metadata.dependencies.as_mut() {
        for (r, out) in reqs.iter_mut().zip(rewritten) {
            r.import_values = out;
        }
    }
    // MergeTables(copy of cvals, b): the imports are the defaults, cvals wins.
    let merged = cvals.deep_clone();
    values::coalesce_tables(&merged, &b, "", true, warnings);
    let json = Value::Map(merged, MapKind::Any)
        .to_json_value()
        .map_err(|e| format!("importing values: {e}"))?;
    if let serde_json::Value::Object(m) = json {
        chart.values = m;
    }
    Ok(())
}
