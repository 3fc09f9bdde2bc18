//! Helm's engine tests (Helm v4.1.4 pkg/engine/funcs_test.go and engine_test.go), ported as
//! data in `tests/data/engine.json` and run against `tidegate_helm::engine`: Helm's template
//! functions, rendering chart trees (values, subcharts, `.Template`, `.Files`,
//! `.Subcharts`, include/tpl/required/fail, lookup against a fake cluster) and the engine's
//! error messages. Cases marked `known_failure` are expected to fail still; the test fails
//! when one starts passing, so the mark gets removed.

mod common;

use std::collections::BTreeMap;
use std::rc::Rc;

use tidegate_helm::chart::{Chart, File, Metadata, load_values_text};
use tidegate_helm::engine::{Lookup, RenderOptions, render, render_templates};
use tidegate_helm::template::value::{IntKind, ListKind, MapKind};
use tidegate_helm::template::{FuncMap, Set, Value};
use tidegate_helm::values::{self, Values, new_map};

#[derive(serde::Deserialize)]
struct Data {
    source: String,
    funcs: Vec<FuncCase>,
    function_map: FunctionMap,
    render: Vec<RenderCase>,
    render_templates: Vec<TemplatesCase>,
}

#[derive(serde::Deserialize)]
struct FuncCase {
    test: String,
    tpl: String,
    vars: serde_json::Value,
    #[serde(default)]
    vars_loop: bool,
    #[serde(default)]
    expect_vars: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(flatten)]
    want: Want,
}

#[derive(serde::Deserialize)]
struct FunctionMap {
    forbidden: Vec<String>,
    defined: Vec<String>,
}

/// A text, or a text repeated.
#[derive(serde::Deserialize, Clone)]
#[serde(untagged)]
enum Text {
    Plain(String),
    Repeat { repeat: String, times: usize },
}

impl Text {
    fn text(&self) -> String {
        match self {
            Text::Plain(s) => s.clone(),
            Text::Repeat { repeat, times } => repeat.repeat(*times),
        }
    }
}

#[derive(serde::Deserialize)]
struct ChartSpec {
    name: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    templates: Vec<(String, Text)>,
    #[serde(default)]
    files: Vec<(String, String)>,
    #[serde(default)]
    values: String,
    #[serde(default)]
    dependencies: Vec<ChartSpec>,
}

/// What a case expects; fields absent are not checked.
#[derive(serde::Deserialize, Default)]
struct Want {
    #[serde(default)]
    expect: Option<serde_json::Value>,
    #[serde(default)]
    expect_count: Option<usize>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    error_contains: Option<String>,
    #[serde(default)]
    error_suffix: Option<String>,
    #[serde(default)]
    err: bool,
    #[serde(default)]
    known_failure: Option<String>,
}

#[derive(serde::Deserialize)]
struct RenderCase {
    test: String,
    chart: ChartSpec,
    #[serde(default)]
    top: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    coalesce: Option<String>,
    #[serde(default)]
    strict: bool,
    #[serde(default)]
    lookup: Option<FakeCluster>,
    #[serde(default)]
    repeat: Option<usize>,
    #[serde(flatten)]
    want: Want,
}

#[derive(serde::Deserialize)]
struct TemplatesCase {
    test: String,
    templates: Vec<(String, String)>,
    vals: serde_json::Map<String, serde_json::Value>,
    #[serde(flatten)]
    want: Want,
}

#[derive(serde::Deserialize, Clone)]
struct KindSpec {
    #[serde(default)]
    namespaced: bool,
    #[serde(default)]
    error: Option<String>,
}

/// A cluster for `lookup`, as Helm's test builds with client-go's fake dynamic client: a
/// name gets one object (in the namespace when the kind is namespaced and one is given),
/// no name lists them (across namespaces when none is given).
#[derive(serde::Deserialize, Clone)]
struct FakeCluster {
    kinds: BTreeMap<String, KindSpec>,
    objects: Vec<serde_json::Value>,
}

impl Lookup for FakeCluster {
    fn lookup(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<serde_json::Value>, String> {
        let spec = self.kinds.get(&format!("{api_version}/{kind}"));
        if let Some(e) = spec.and_then(|s| s.error.clone()) {
            return Err(e);
        }
        let namespaced = spec.is_some_and(|s| s.namespaced);
        let scope = if namespaced && !namespace.is_empty() {
            Some(namespace)
        } else {
            None
        };
        let field = |o: &serde_json::Value, path: &[&str]| -> String {
            let mut v = o;
            for p in path {
                v = &v[*p];
            }
            v.as_str().unwrap_or_default().to_string()
        };
        let mut matching = self
            .objects
            .iter()
            .filter(|o| field(o, &["apiVersion"]) == api_version && field(o, &["kind"]) == kind);
        if !name.is_empty() {
            let ns = scope.unwrap_or("");
            return Ok(matching
                .find(|o| {
                    field(o, &["metadata", "name"]) == name
                        && field(o, &["metadata", "namespace"]) == ns
                })
                .cloned());
        }
        let items: Vec<serde_json::Value> = matching
            .filter(|o| scope.is_none_or(|ns| field(o, &["metadata", "namespace"]) == ns))
            .cloned()
            .collect();
        Ok(Some(serde_json::json!({
            "apiVersion": api_version,
            "kind": format!("{kind}List"),
            "metadata": {"resourceVersion": ""},
            "items": items,
        })))
    }
}

/// JSON into values as a Go test literal holds them (integers `int`).
fn to_value(v: &serde_json::Value) -> Value {
    common::go_value(v, IntKind::Int)
}

fn to_table(m: &serde_json::Map<String, serde_json::Value>) -> Values {
    common::go_table(m, IntKind::Int)
}

fn file(name: &str, text: &str) -> File {
    File {
        name: name.to_string(),
        data: bytes::Bytes::copy_from_slice(text.as_bytes()),
    }
}

fn build_chart(spec: &ChartSpec) -> Result<Chart, String> {
    Ok(Chart {
        metadata: Metadata {
            name: spec.name.clone(),
            version: spec.version.clone(),
            api_version: spec.api_version.clone(),
            ..Metadata::default()
        },
        values: load_values_text(&spec.values)
            .map_err(|e| format!("values of {}: {e}", spec.name))?,
        templates: spec
            .templates
            .iter()
            .map(|(n, t)| file(n, &t.text()))
            .collect(),
        files: spec.files.iter().map(|(n, t)| file(n, t)).collect(),
        dependencies: spec
            .dependencies
            .iter()
            .map(build_chart)
            .collect::<Result<_, _>>()?,
        ..Chart::default()
    })
}

/// Helm's engine function map (Sprig without `env`/`expandenv`, Helm's functions over it).
fn helm_funcs() -> FuncMap {
    let mut fm = tidegate_helm::sprig::funcs();
    fm.remove("env");
    fm.remove("expandenv");
    fm.extend(&tidegate_helm::engine::funcs::funcs());
    fm
}

/// Checks a result against what is wanted; `None` when it matches.
fn mismatch(want: &Want, got: &Result<BTreeMap<String, String>, String>) -> Option<String> {
    let wants_error = want.err
        || want.error.is_some()
        || want.error_contains.is_some()
        || want.error_suffix.is_some();
    let out = match got {
        Err(e) => {
            if !wants_error {
                return Some(format!("error {e}"));
            }
            if let Some(w) = &want.error
                && w != e
            {
                return Some(format!("want error\n{w}\ngot error\n{e}"));
            }
            if let Some(w) = &want.error_contains
                && !e.contains(w.as_str())
            {
                return Some(format!("want an error containing {w:?}, got {e:?}"));
            }
            if let Some(w) = &want.error_suffix
                && !e.ends_with(w.as_str())
            {
                return Some(format!("want an error ending {w:?}, got {e:?}"));
            }
            return None;
        }
        Ok(out) => out,
    };
    if wants_error {
        return Some(format!("want an error, got {out:?}"));
    }
    if let Some(n) = want.expect_count
        && out.len() != n
    {
        return Some(format!(
            "want {n} outputs, got {}: {:?}",
            out.len(),
            out.keys()
        ));
    }
    if let Some(serde_json::Value::Object(expect)) = &want.expect {
        let mut wrong = Vec::new();
        for (name, text) in expect {
            let text = serde_json::from_value::<Text>(text.clone())
                .map(|t| t.text())
                .unwrap_or_default();
            match out.get(name) {
                Some(o) if *o == text => {}
                other => wrong.push(format!("{name}: want {text:?}, got {other:?}")),
            }
        }
        if !wrong.is_empty() {
            return Some(wrong.join("\n  "));
        }
    }
    None
}

/// Records the outcome of a case, turned around for known failures.
fn record(test: &str, want: &Want, problem: Option<String>, failures: &mut Vec<String>) {
    match (&want.known_failure, problem) {
        (None, None) => {}
        (None, Some(p)) => failures.push(format!("{test}: {p}")),
        (Some(_), Some(_)) => {}
        (Some(reason), None) => failures.push(format!(
            "{test}: passes now, but is marked known_failure ({reason}); remove the mark"
        )),
    }
}

fn run_func(c: &FuncCase) -> Result<(String, Value), String> {
    let vars = if c.vars_loop {
        let m = new_map();
        m.borrow_mut().insert("foo".into(), Value::str("bar"));
        let again = Value::Map(m.clone(), MapKind::Any);
        m.borrow_mut().insert(
            "loop".into(),
            Value::List(Rc::new(vec![again]), ListKind::Any),
        );
        Value::Map(m, MapKind::Any)
    } else {
        to_value(&c.vars)
    };
    let mut set = Set::new("test", helm_funcs());
    set.parse("test", &c.tpl)?;
    let out = Rc::new(set).execute("test", vars.clone(), None)?;
    Ok((out, vars))
}

fn check_func(c: &FuncCase, failures: &mut Vec<String>) {
    let got = run_func(c);
    let label = format!("{} {:?}", c.test, c.tpl);
    let problem = match (&got, c.want.err) {
        (Err(_), true) => None,
        (Ok((out, _)), true) => Some(format!("want an error, got {out:?}")),
        (Err(e), false) => Some(format!("error {e}")),
        (Ok((out, vars)), false) => {
            let want = c.want.expect.as_ref().and_then(|v| v.as_str());
            if want.is_some_and(|w| w != out) {
                Some(format!("want {:?}, got {out:?}", want.unwrap_or_default()))
            } else {
                c.expect_vars.as_ref().and_then(|ev| {
                    let got = vars.to_json_value().unwrap_or_default();
                    let wrong: Vec<String> = ev
                        .iter()
                        .filter(|(k, v)| got.get(k.as_str()) != Some(v))
                        .map(|(k, v)| format!("{k}: want {v}, got {:?}", got.get(k.as_str())))
                        .collect();
                    (!wrong.is_empty()).then(|| wrong.join("; "))
                })
            }
        }
    };
    record(&label, &c.want, problem, failures);
}

fn run_render(c: &RenderCase) -> Result<BTreeMap<String, String>, String> {
    let chart = build_chart(&c.chart)?;
    let mut top = to_table(&c.top);
    let mut warnings = Vec::new();
    match c.coalesce.as_deref() {
        None => {}
        Some("top") => top = values::coalesce(&chart, &top, false, &mut warnings)?,
        Some("values") => {
            let user = top
                .borrow()
                .get("Values")
                .and_then(values::table_of)
                .unwrap_or_else(new_map);
            let coalesced = values::coalesce(&chart, &user, false, &mut warnings)?;
            top.borrow_mut()
                .insert("Values".into(), Value::Map(coalesced, MapKind::Values));
        }
        Some(other) => return Err(format!("unknown coalesce mode {other}")),
    }
    let lookup = c
        .lookup
        .as_ref()
        .map(|l| Rc::new(l.clone()) as Rc<dyn Lookup>);
    let options = RenderOptions {
        strict: c.strict,
        lookup,
    };
    let mut result = render(&chart, &top, &options);
    for _ in 1..c.repeat.unwrap_or(1) {
        let again = render(&chart, &top, &options);
        if again != result {
            return Err(format!("renders differ: {again:?} and {result:?}"));
        }
        result = again;
    }
    result
}

fn run_templates(c: &TemplatesCase) -> Result<BTreeMap<String, String>, String> {
    let vals = to_table(&c.vals);
    let templates = c
        .templates
        .iter()
        .map(|(name, text)| (name.clone(), text.clone(), vals.clone()))
        .collect();
    let options = RenderOptions {
        strict: false,
        lookup: None,
    };
    render_templates(templates, &options)
}

/// Helm's function map: defined functions parse, forbidden ones do not.
fn check_function_map(fm: &FunctionMap, failures: &mut Vec<String>) {
    let options = RenderOptions {
        strict: false,
        lookup: None,
    };
    let parse = |name: &str| {
        let t = (
            "t".to_string(),
            format!("{{{{if false}}}}{{{{{name}}}}}{{{{end}}}}"),
            new_map(),
        );
        render_templates(vec![t], &options)
    };
    for name in &fm.defined {
        if let Err(e) = parse(name) {
            failures.push(format!("TestFuncMap: {name} should be defined: {e}"));
        }
    }
    for name in &fm.forbidden {
        match parse(name) {
            Err(e) if e.contains(&format!("function \"{name}\" not defined")) => {}
            other => failures.push(format!(
                "TestFuncMap: {name} should not be defined, got {other:?}"
            )),
        }
    }
}

#[test]
fn helm_engine_cases() {
    let data: Data =
        serde_json::from_str(include_str!("data/engine.json")).expect("engine.json parses");
    assert!(data.source.contains("v4.1.4"), "source names Helm's tag");
    let total = data.funcs.len()
        + data.render.len()
        + data.render_templates.len()
        + data.function_map.defined.len()
        + data.function_map.forbidden.len();
    assert!(
        data.funcs.len() >= 25 && data.render.len() >= 25 && data.render_templates.len() >= 8,
        "only {total} cases: the data is missing"
    );
    let mut failures = Vec::new();
    for c in &data.funcs {
        check_func(c, &mut failures);
    }
    check_function_map(&data.function_map, &mut failures);
    for c in &data.render {
        let got = run_render(c);
        record(&c.test, &c.want, mismatch(&c.want, &got), &mut failures);
    }
    for c in &data.render_templates {
        let got = run_templates(c);
        record(&c.test, &c.want, mismatch(&c.want, &got), &mut failures);
    }
    let known = data
        .funcs
        .iter()
        .filter(|c| c.want.known_failure.is_some())
        .count()
        + data
            .render
            .iter()
            .filter(|c| c.want.known_failure.is_some())
            .count()
        + data
            .render_templates
            .iter()
            .filter(|c| c.want.known_failure.is_some())
            .count();
    assert!(
        failures.is_empty(),
        "{} of {total} engine cases failed ({known} known failures expected to fail):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
