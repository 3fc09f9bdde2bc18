//! Rendering a chart's templates as Helm's engine does: every template of the chart and its
//! subcharts parsed into one set (deepest paths first, so a parent's `define` wins), each
//! non-partial executed with its chart's `.Values`, `.Chart`, `.Release`, `.Capabilities`,
//! `.Files`, `.Template` and `.Subcharts`, `<no value>` removed, errors worded as Helm words
//! them.

pub mod funcs;
pub mod objects;
mod toml;
mod values_methods;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::chart::Chart;
use crate::template::value::{ListKind, MapKind, Value};
use crate::template::{MissingKey, Set};
use crate::values::{self, Values, new_map};

pub use funcs::{Context, Lookup};
pub use objects::{Capabilities, KubeVersion};

/// `.Release`.
#[derive(Debug, Clone)]
pub struct ReleaseOptions {
    pub name: String,
    pub namespace: String,
    pub revision: i64,
    pub is_upgrade: bool,
    pub is_install: bool,
}

/// One template to render and the data it sees.
struct Renderable {
    text: bytes::Bytes,
    vals: Values,
    base_path: String,
}

/// Helm's `MetadataAsMap` plus `IsRoot`: `.Chart` as a map keyed by Go field names.
fn chart_map(chart: &Chart, is_root: bool) -> Value {
    let md = &chart.metadata;
    let strings = |v: &Option<Vec<String>>| -> Value {
        Value::List(
            Rc::new(v.iter().flatten().map(|s| Value::str(s)).collect()),
            ListKind::Any,
        )
    };
    let mut m = BTreeMap::new();
    m.insert("Name".into(), Value::str(&md.name));
    m.insert("Home".into(), Value::str(&md.home));
    m.insert("Sources".into(), strings(&md.sources));
    m.insert("Version".into(), Value::str(&md.version));
    m.insert("Description".into(), Value::str(&md.description));
    m.insert("Keywords".into(), strings(&md.keywords));
    m.insert(
        "Maintainers".into(),
        Value::List(
            Rc::new(
                md.maintainers
                    .iter()
                    .flatten()
                    .map(|mt| {
                        let mut x = BTreeMap::new();
                        x.insert("Name".into(), Value::str(&mt.name));
                        x.insert("Email".into(), Value::str(&mt.email));
                        x.insert("URL".into(), Value::str(&mt.url));
                        Value::map(x)
                    })
                    .collect(),
            ),
            ListKind::Any,
        ),
    );
    m.insert("Icon".into(), Value::str(&md.icon));
    m.insert("APIVersion".into(), Value::str(&md.api_version));
    m.insert("Condition".into(), Value::str(&md.condition));
    m.insert("Tags".into(), Value::str(&md.tags));
    m.insert("AppVersion".into(), Value::str(&md.app_version));
    m.insert("Deprecated".into(), Value::Bool(md.deprecated));
    m.insert(
        "Annotations".into(),
        match &md.annotations {
            None => Value::NilMap(MapKind::String),
            Some(a) => Value::Map(
                Rc::new(RefCell::new(
                    a.iter().map(|(k, v)| (k.clone(), Value::str(v))).collect(),
                )),
                MapKind::String,
            ),
        },
    );
    m.insert("KubeVersion".into(), Value::str(&md.kube_version));
    m.insert(
        "Dependencies".into(),
        Value::List(
            Rc::new(
                md.dependencies
                    .iter()
                    .flatten()
                    .map(|d| {
                        let mut x = BTreeMap::new();
                        x.insert("Name".into(), Value::str(&d.name));
                        x.insert("Version".into(), Value::str(&d.version));
                        x.insert("Repository".into(), Value::str(&d.repository));
                        x.insert("Condition".into(), Value::str(&d.condition));
                        x.insert(
                            "Tags".into(),
                            Value::List(
                                Rc::new(d.tags.iter().map(|t| Value::str(t)).collect()),
                                ListKind::Any,
                            ),
                        );
                        x.insert("Enabled".into(), Value::Bool(d.enabled));
                        x.insert(
                            "ImportValues".into(),
                            Value::List(
                                Rc::new(d.import_values.iter().map(Value::from_json).collect()),
                                ListKind::Any,
                            ),
                        );
                        x.insert("Alias".into(), Value::str(&d.alias));
                        Value::map(x)
                    })
                    .collect(),
            ),
            ListKind::Any,
        ),
    );
    m.insert("Type".into(), Value::str(&md.chart_type));
    m.insert("IsRoot".into(), Value::Bool(is_root));
    Value::map(m)
}

/// The render values of the top chart: Helm's `ToRenderValues`.
pub fn render_values(
    chart: &Chart,
    values: &Values,
    release: &ReleaseOptions,
    caps: &Capabilities,
) -> Values {
    let top = new_map();
    {
        let mut t = top.borrow_mut();
        t.insert("Chart".into(), chart_map(chart, true));
        t.insert("Capabilities".into(), Value::Object(Rc::new(caps.clone())));
        let mut r = BTreeMap::new();
        r.insert("Name".into(), Value::str(&release.name));
        r.insert("Namespace".into(), Value::str(&release.namespace));
        r.insert("IsUpgrade".into(), Value::Bool(release.is_upgrade));
        r.insert("IsInstall".into(), Value::Bool(release.is_install));
        r.insert("Revision".into(), Value::int(release.revision));
        r.insert("Service".into(), Value::str("Helm"));
        t.insert("Release".into(), Value::map(r));
        t.insert("Values".into(), Value::Map(values.clone(), MapKind::Values));
    }
    top
}

/// Helm's `recAllTpls`: every template of `chart` and its subcharts with the data it sees.
fn all_templates(
    chart: &Chart,
    parent: &Values,
    full_path: &str,
    is_root: bool,
    out: &mut Vec<(String, Renderable)>,
) -> Values {
    let vals = parent.borrow();
    let sub_charts = new_map();
    let next = new_map();
    {
        let mut n = next.borrow_mut();
        n.insert("Chart".into(), chart_map(chart, is_root));
        n.insert(
            "Files".into(),
            Value::Object(Rc::new(objects::Files::new(&chart.files))),
        );
        n.insert(
            "Release".into(),
            vals.get("Release").cloned().unwrap_or(Value::Nil),
        );
        n.insert(
            "Capabilities".into(),
            vals.get("Capabilities").cloned().unwrap_or(Value::Nil),
        );
        let chart_values = if is_root {
            vals.get("Values").cloned().unwrap_or(Value::Nil)
        } else {
            match vals.get("Values") {
                Some(Value::Map(v, _)) => match values::table(v, chart.name()) {
                    Some(t) => Value::Map(t, MapKind::Values),
                    None => Value::Map(new_map(), MapKind::Values),
                },
                _ => Value::Map(new_map(), MapKind::Values),
            }
        };
        n.insert("Values".into(), chart_values);
        n.insert(
            "Subcharts".into(),
            Value::Map(sub_charts.clone(), MapKind::Any),
        );
    }
    drop(vals);
    for dep in &chart.dependencies {
        let sub_path = format!("{full_path}/charts/{}", dep.name());
        let sub_next = all_templates(dep, &next, &sub_path, false, out);
        sub_charts
            .borrow_mut()
            .insert(dep.name().to_string(), Value::Map(sub_next, MapKind::Any));
    }
    for t in &chart.templates {
        if chart.is_library() && !crate::sprig::path_base(&t.name).starts_with('_') {
            continue;
        }
        out.push((
            format!("{full_path}/{}", t.name),
            Renderable {
                text: t.data.clone(),
                vals: next.clone(),
                base_path: format!("{full_path}/templates"),
            },
        ));
    }
    next
}

/// Helm's `sortTemplates`: by depth, deepest first, then by name, last first.
fn sort_templates(names: &mut [String]) {
    names.sort_by(|a, b| {
        let (ca, cb) = (a.matches('/').count(), b.matches('/').count());
        cb.cmp(&ca).then_with(|| b.cmp(a))
    });
}

/// Helm's `cleanupParseError`.
fn cleanup_parse_error(filename: &str, err: &str) -> String {
    let tokens: Vec<&str> = err.split(": ").collect();
    if tokens.len() == 1 {
        return format!("parse error in ({filename}): {err}");
    }
    format!(
        "parse error at ({}): {}",
        tokens[1],
        tokens[tokens.len() - 1]
    )
}

/// One `template: LOC: executing "NAME" at <CTX>: MSG` level of an error.
#[derive(PartialEq)]
struct Traceable {
    location: String,
    executed: String,
    message: String,
}

fn parse_traceable(text: &str) -> Option<(Traceable, Option<&str>)> {
    let rest = text.strip_prefix("template: ")?;
    if rest.starts_with("no template ") {
        return Some((
            Traceable {
                location: String::new(),
                executed: String::new(),
                message: text.to_string(),
            },
            None,
        ));
    }
    let Some(idx) = rest.find(": executing ") else {
        let sep = rest.rfind(": ")?;
        let mut msg = &rest[sep + 2..];
        if let Some(cut) = msg.find(" template:") {
            msg = &msg[..cut];
        }
        return Some((
            Traceable {
                location: rest[..sep].to_string(),
                executed: String::new(),
                message: msg.to_string(),
            },
            None,
        ));
    };
    let location = &rest[..idx];
    let after = rest[idx + ": executing ".len()..].strip_prefix('"')?;
    let end_quote = after.find('"')?;
    let function = &after[..end_quote];
    let after_at = after[end_quote + 1..].strip_prefix(" at <")?;
    let end_loc = after_at.find(">: ")?;
    let context = &after_at[..end_loc];
    let full_msg = &after_at[end_loc + 3..];
    let (msg, nested) = match full_msg.find(" template:") {
        Some(cut) => (&full_msg[..cut], Some(&full_msg[cut + 1..])),
        None => (full_msg, None),
    };
    Some((
        Traceable {
            location: location.to_string(),
            executed: format!("executing \"{function}\" at <{context}>:"),
            message: msg.to_string(),
        },
        nested,
    ))
}

/// Helm's `reformatExecErrorMsg`: `required`/`fail` messages as `execution error at (LOC):
/// MSG`; errors that are template errors all the way down as Helm's traceback; anything
/// else unchanged.
fn reformat_exec_error(filename: &str, err: &str) -> String {
    let tokens: Vec<&str> = err.splitn(3, ": ").collect();
    if tokens.len() != 3 {
        return format!("execution error in ({filename}): {err}");
    }
    if let Some(message) = funcs::warn_message(tokens[2]) {
        return format!("execution error at ({}): {message}", tokens[1]);
    }
    let mut levels: Vec<Traceable> = Vec::new();
    let mut current = Some(err);
    while let Some(text) = current {
        let Some((t, nested)) = parse_traceable(text) else {
            return err.to_string();
        };
        // A level whose message wraps another error that is not a template error is shown
        // by Helm as the original error: only `error calling NAME:` directly followed by a
        // template error is a chain of template errors.
        let wraps_template = t.message.starts_with("error calling ")
            && t.message.ends_with(':')
            && !t.message["error calling ".len()..t.message.len() - 1].contains(' ');
        if t.message.starts_with("error calling ") && (nested.is_none() || !wraps_template) {
            return err.to_string();
        }
        if levels.last() != Some(&t) {
            levels.push(t);
        }
        current = nested;
    }
    let mut out = String::new();
    for t in levels {
        if !t.location.is_empty() {
            out.push_str(&format!("{}\n  ", t.location));
        }
        if !t.executed.is_empty() {
            out.push_str(&format!("{}\n    ", t.executed));
        }
        if !t.message.is_empty() {
            out.push_str(&format!("{}\n", t.message));
        }
    }
    out.trim().to_string()
}

/// Parses each `(name, text)` as Go's parser would in a set with these functions, on up to
/// as many threads as there are cores.
fn parse_all(
    texts: &[(&str, std::borrow::Cow<'_, str>)],
    functions: &std::collections::HashSet<String>,
) -> Vec<Result<Vec<crate::template::parse::Tree>, String>> {
    let parse_one = |(name, text): &(&str, std::borrow::Cow<'_, str>)| {
        let has = |n: &str| functions.contains(n);
        let options = crate::template::parse::ParseOptions {
            left: "",
            right: "",
            has_function: &has,
            skip_func_check: false,
            parse_comments: false,
        };
        crate::template::parse::parse(name, text, options)
    };
    crate::parallel::map_weighted(texts, |(_, t)| t.len(), parse_one)
}

/// How to render.
pub struct RenderOptions {
    /// `missingkey=error` (lint's strict mode); Helm's default is `zero`.
    pub strict: bool,
    pub lookup: Option<Rc<dyn Lookup>>,
}

/// Renders every template of `chart` with `top` (from [`render_values`]); returns file
/// names and their output, or Helm's error.
pub fn render(
    chart: &Chart,
    top: &Values,
    options: &RenderOptions,
) -> Result<BTreeMap<String, String>, String> {
    render_each(chart, top, options, &mut |_, _| {})
}

/// [`render`], handing each file's output to `on_file` as soon as it is rendered (so that
/// another thread can start reading it while the next template executes).
pub fn render_each(
    chart: &Chart,
    top: &Values,
    options: &RenderOptions,
    on_file: &mut dyn FnMut(&str, &str),
) -> Result<BTreeMap<String, String>, String> {
    let mut templates = Vec::new();
    all_templates(chart, top, chart.name(), true, &mut templates);
    render_all(templates.into_iter().collect(), options, on_file)
}

/// Helm's engine on templates given by name, each with the data it is executed with (its
/// `.Template` set as it runs, base path empty): the step of [`render`] after the chart's
/// templates are collected, with the same parsing order, partials and error wording.
pub fn render_templates(
    templates: Vec<(String, String, Values)>,
    options: &RenderOptions,
) -> Result<BTreeMap<String, String>, String> {
    let by_name = templates
        .into_iter()
        .map(|(name, text, vals)| {
            let r = Renderable {
                text: bytes::Bytes::from(text.into_bytes()),
                vals,
                base_path: String::new(),
            };
            (name, r)
        })
        .collect();
    render_all(by_name, options, &mut |_, _| {})
}

fn render_all(
    mut by_name: BTreeMap<String, Renderable>,
    options: &RenderOptions,
    on_file: &mut dyn FnMut(&str, &str),
) -> Result<BTreeMap<String, String>, String> {
    let mut keys: Vec<String> = by_name.keys().cloned().collect();
    sort_templates(&mut keys);

    let mut fm = crate::sprig::funcs();
    fm.remove("env");
    fm.remove("expandenv");
    fm.extend(&funcs::funcs());
    let mut set = Set::new("gotpl", fm);
    set.map_methods = Some(Rc::new(values_methods::find));
    set.missing_key = if options.strict {
        MissingKey::Error
    } else {
        MissingKey::Zero
    };
    // Templates parse independently: on several threads for big charts, then added in
    // Helm's order (the first error in that order is the one reported).
    let texts: Vec<(&str, std::borrow::Cow<'_, str>)> = keys
        .iter()
        .map(|name| (name.as_str(), crate::chart::text(&by_name[name].text)))
        .collect();
    let parsed = parse_all(&texts, &set.function_names());
    for ((name, text), trees) in texts.iter().zip(parsed) {
        let trees = trees.map_err(|e| cleanup_parse_error(name, &e))?;
        set.add_trees(name, text, trees);
    }
    let set = Rc::new(set);
    let ctx: Rc<dyn std::any::Any> = Rc::new(Context {
        included: RefCell::new(Default::default()),
        strict: options.strict,
        lookup: options.lookup.clone(),
    });
    let mut rendered = BTreeMap::new();
    for name in &keys {
        if crate::sprig::path_base(name).starts_with('_') {
            continue;
        }
        let Some(r) = by_name.remove(name) else {
            continue;
        };
        let mut template = BTreeMap::new();
        template.insert("Name".into(), Value::str(name));
        template.insert("BasePath".into(), Value::str(&r.base_path));
        r.vals.borrow_mut().insert(
            "Template".into(),
            Value::Map(Rc::new(RefCell::new(template)), MapKind::Values),
        );
        let data = Value::Map(r.vals.clone(), MapKind::Any);
        let out = set
            .execute(name, data, Some(ctx.clone()))
            .map_err(|e| reformat_exec_error(name, &e))?;
        let out = if out.contains("<no value>") {
            out.replace("<no value>", "")
        } else {
            out
        };
        on_file(name, &out);
        rendered.insert(name.clone(), out);
    }
    crate::parallel::dispose((set, ctx, by_name));
    Ok(rendered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_sort_deepest_first() {
        let mut names: Vec<String> = [
            "a/templates/x.yaml",
            "a/charts/b/templates/y.yaml",
            "a/templates/_h.tpl",
            "a/templates/z.yaml",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        sort_templates(&mut names);
        assert_eq!(
            names,
            [
                "a/charts/b/templates/y.yaml",
                "a/templates/z.yaml",
                "a/templates/x.yaml",
                "a/templates/_h.tpl"
            ]
        );
    }

    #[test]
    fn errors_as_helm_words_them() {
        assert_eq!(
            cleanup_parse_error(
                "t/templates/t.yaml",
                "template: t/templates/t.yaml:1: missing value for if"
            ),
            "parse error at (t/templates/t.yaml:1): missing value for if"
        );
        assert_eq!(
            reformat_exec_error(
                "t/templates/t.yaml",
                "template: t/templates/t.yaml:3:4: executing \"t/templates/t.yaml\" at <required \"x\" .Values.x>: error calling required: HELM_ERR_STARTx is requiredHELM_ERR_END"
            ),
            "execution error at (t/templates/t.yaml:3:4): x is required"
        );
        assert_eq!(
            reformat_exec_error(
                "t/templates/t.yaml",
                "template: t/templates/t.yaml:1:9: executing \"t/templates/t.yaml\" at <.Values.foo.bar>: nil pointer evaluating interface {}.bar"
            ),
            "t/templates/t.yaml:1:9\n  executing \"t/templates/t.yaml\" at <.Values.foo.bar>:\n    nil pointer evaluating interface {}.bar"
        );
        let plain = "template: t/templates/t.yaml:2:3: executing \"t/templates/t.yaml\" at <index .Values.list 10>: error calling index: index out of range: 10";
        assert_eq!(reformat_exec_error("t/templates/t.yaml", plain), plain);
    }
}
