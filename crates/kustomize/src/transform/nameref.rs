//! Name references: after prefixes, suffixes and hashes renamed objects, every field that names
//! one of them (the `nameReference` configuration) is updated to the new name.
//!
//! A reference matches an object of the referenced kind that had the referenced name at some
//! point of the build, in a compatible namespace. Maps holding `name` (and `namespace`), such as
//! RBAC subjects and webhook services, get both updated.

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use std::collections::HashMap;

use crate::fieldspec::{Config, FieldSpec, NameBackRef};
use crate::resmap::ResMap;
use crate::resource::Gvk;

struct Candidate {
    index: usize,
    gvk: Gvk,
    previous_names: Vec<String>,
    original_namespace: String,
    name: String,
    namespace: String,
    cluster_scoped: bool,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
}

fn effective(ns: &str) -> &str {
    if ns.is_empty() { "default" } else { ns }
}

/// Fixes every back reference.
pub fn fix(res: &mut ResMap, config: &Config) -> Result<()> {
    let candidates: Vec<Candidate> = res
        .resources
        .iter()
        .enumerate()
        .map(|(index, r)| Candidate {
            index,
            gvk: r.gvk(),
            previous_names: r.previous_names().map(str::to_string).collect(),
            original_namespace: r.original_id().namespace,
            name: r.name().to_string(),
            namespace: r.namespace().to_string(),
            cluster_scoped: r.gvk().is_cluster_scoped(),
            prefixes: r.prefixes.clone(),
            suffixes: r.suffixes.clone(),
        })
        .collect();
    // Per referenced kind: its candidates, indexed by every earlier name they had.
    let tables: Vec<(&NameBackRef, HashMap<&str, Vec<&Candidate>>)> = config
        .name_reference
        .iter()
        .filter_map(|backref| {
            let target = FieldSpec {
                group: backref.gvk.group.clone(),
                version: backref.gvk.version.clone(),
                kind: backref.gvk.kind.clone(),
                path: String::new(),
                segments: Vec::new(),
                create: false,
            };
            let mut by_name: HashMap<&str, Vec<&Candidate>> = HashMap::new();
            for c in candidates.iter().filter(|c| target.applies_to(&c.gvk)) {
                for n in &c.previous_names {
                    let bucket = by_name.entry(n.as_str()).or_default();
                    if !bucket.iter().any(|x| x.index == c.index) {
                        bucket.push(c);
                    }
                }
            }
            (!by_name.is_empty()).then_some((backref, by_name))
        })
        .collect();
    if tables.is_empty() {
        return Ok(());
    }
    for i in 0..res.resources.len() {
        let r = &res.resources[i];
        let gvk = r.gvk();
        if !tables
            .iter()
            .any(|(b, _)| b.referrers.iter().any(|s| s.applies_to(&gvk)))
        {
            continue;
        }
        let referrer_cluster = gvk.is_cluster_scoped();
        let referrer_current_ns = r.namespace().to_string();
        let describe = r.describe();
        let prefixes = r.prefixes.clone();
        let suffixes = r.suffixes.clone();
        let mut extra_ns: Vec<String> = Vec::new();
        if gvk.kind == "RoleBinding"
            && let Some(Value::Array(subjects)) = r.obj.get("subjects")
        {
            for s in subjects {
                if s.get("kind").and_then(Value::as_str) == Some("ServiceAccount")
                    && let Some(ns) = s.get("namespace").and_then(Value::as_str)
                {
                    extra_ns.push(ns.to_string());
                }
            }
        }
        let role_ref = r.obj.get("roleRef").and_then(Value::as_object).map(|m| {
            (
                m.get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                m.get("apiGroup")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            )
        });
        for (backref, by_name) in &tables {
            for spec in backref.referrers.iter().filter(|s| s.applies_to(&gvk)) {
                let Some((leaf, parent)) = spec.segments.split_last() else {
                    continue;
                };
                let ctx = Ctx {
                    kind: &backref.gvk.kind,
                    by_name,
                    self_index: i,
                    referrer_cluster,
                    referrer_current_ns: &referrer_current_ns,
                    extra_ns: &extra_ns,
                    prefixes: &prefixes,
                    suffixes: &suffixes,
                    role_ref: if spec.path.starts_with("roleRef") {
                        role_ref.as_ref()
                    } else {
                        None
                    },
                    describe: &describe,
                };
                let obj = &mut res.resources[i].obj;
                if parent.is_empty() {
                    fix_in_map(obj, leaf, &ctx)?;
                    continue;
                }
                let parent_spec = FieldSpec {
                    segments: parent.to_vec(),
                    create: false,
                    ..spec.clone()
                };
                parent_spec.visit(obj, &mut |v| fix_in_value(v, leaf, &ctx))?;
            }
        }
    }
    Ok(())
}

struct Ctx<'a> {
    kind: &'a str,
    by_name: &'a HashMap<&'a str, Vec<&'a Candidate>>,
    self_index: usize,
    referrer_cluster: bool,
    referrer_current_ns: &'a str,
    extra_ns: &'a [String],
    prefixes: &'a [String],
    suffixes: &'a [String],
    role_ref: Option<&'a (String, Option<String>)>,
    describe: &'a str,
}

fn fix_in_value(v: &mut Value, leaf: &str, ctx: &Ctx) -> Result<()> {
    match v {
        Value::Object(m) => fix_in_map(m, leaf, ctx),
        Value::Array(items) => {
            for item in items.iter_mut() {
                fix_in_value(item, leaf, ctx)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn fix_in_map(m: &mut Map<String, Value>, leaf: &str, ctx: &Ctx) -> Result<()> {
    let leaf = leaf.strip_suffix("[]").unwrap_or(leaf);
    let Some(field) = m.get_mut(leaf) else {
        return Ok(());
    };
    match field {
        Value::String(s) => {
            if let Some(c) = pick(s, None, ctx)? {
                *s = c.name.clone();
            }
        }
        Value::Array(items) => {
            for item in items.iter_mut() {
                match item {
                    Value::String(s) => {
                        if let Some(c) = pick(s, None, ctx)? {
                            *s = c.name.clone();
                        }
                    }
                    Value::Object(sub) => fix_named_map(sub, ctx)?,
                    _ => {}
                }
            }
        }
        Value::Object(sub) => fix_named_map(sub, ctx)?,
        _ => {}
    }
    Ok(())
}

/// A map naming an object with `name` and maybe `namespace` (RBAC subjects, services).
fn fix_named_map(m: &mut Map<String, Value>, ctx: &Ctx) -> Result<()> {
    let Some(name) = m.get("name").and_then(Value::as_str).map(str::to_string) else {
        return Ok(());
    };
    let ns = m
        .get("namespace")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(c) = pick(&name, ns.as_deref(), ctx)? {
        m.insert("name".into(), Value::String(c.name.clone()));
        if !c.namespace.is_empty() {
            m.insert("namespace".into(), Value::String(c.namespace.clone()));
        }
    }
    Ok(())
}

fn ends_with(a: &[String], b: &[String]) -> bool {
    a.len() >= b.len() && a[a.len() - b.len()..] == *b
}

fn pick<'a>(name: &str, explicit_ns: Option<&str>, ctx: &'a Ctx) -> Result<Option<&'a Candidate>> {
    let Some(named) = ctx.by_name.get(name) else {
        return Ok(None);
    };
    let mut pool: Vec<&Candidate> = named
        .iter()
        .copied()
        .filter(|c| c.index != ctx.self_index)
        .filter(|c| {
            ctx.referrer_cluster
                || c.cluster_scoped
                || effective(&c.namespace) == effective(ctx.referrer_current_ns)
                || ctx.extra_ns.iter().any(|n| n == &c.namespace)
        })
        .collect();
    if let Some(ns) = explicit_ns {
        let original: Vec<&Candidate> = pool
            .iter()
            .copied()
            .filter(|c| effective(&c.original_namespace) == effective(ns))
            .collect();
        pool = if original.is_empty() {
            pool.into_iter()
                .filter(|c| effective(&c.namespace) == effective(ns))
                .collect()
        } else {
            original
        };
    }
    if let Some((kind, group)) = ctx.role_ref {
        pool.retain(|c| &c.gvk.kind == kind && group.as_ref().is_none_or(|g| g == &c.gvk.group));
    }
    if !ctx.referrer_cluster {
        pool.retain(|c| {
            c.cluster_scoped
                || c.gvk.kind == "ServiceAccount"
                || effective(&c.namespace) == effective(ctx.referrer_current_ns)
        });
    }
    if pool.len() > 1 {
        let loose = |a: &[String], b: &[String]| {
            a.is_empty() || b.is_empty() || ends_with(a, b) || ends_with(b, a)
        };
        pool.retain(|c| loose(&c.prefixes, ctx.prefixes) && loose(&c.suffixes, ctx.suffixes));
        if pool.len() > 1 {
            let exact = |a: &[String], b: &[String]| {
                (a.is_empty() && b.is_empty())
                    || (!a.is_empty() && !b.is_empty() && (ends_with(a, b) || ends_with(b, a)))
            };
            let narrowed: Vec<&Candidate> = pool
                .iter()
                .copied()
                .filter(|c| exact(&c.prefixes, ctx.prefixes) && exact(&c.suffixes, ctx.suffixes))
                .collect();
            if !narrowed.is_empty() {
                pool = narrowed;
            }
        }
    }
    match pool.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => {
            let first = many[0];
            let same = many.iter().all(|c| {
                c.name == first.name && (explicit_ns.is_none() || c.namespace == first.namespace)
            });
            if same {
                return Ok(Some(first));
            }
            let names: Vec<String> = many
                .iter()
                .map(|c| {
                    if c.namespace.is_empty() {
                        c.name.clone()
                    } else {
                        format!("{}/{}", c.namespace, c.name)
                    }
                })
                .collect();
            Err(Error::new(
                ErrorKind::Invalid,
                format!(
                    "found multiple possible referrals for {} {name:?} in {}: {}",
                    ctx.kind,
                    ctx.describe,
                    names.join(", ")
                ),
            ))
        }
    }
}
