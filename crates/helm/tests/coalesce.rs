//! Helm's values coalescing tests (Helm v4.1.4 pkg/chart/common/util/coalesce_test.go),
//! ported as data in `tests/data/coalesce.json` and run against `tidegate_helm::values`:
//! `CoalesceValues` and `MergeValues` over chart trees with subcharts and globals, null
//! deletion, `CoalesceTables`/`MergeTables`, and the warnings coalescing reports.

mod common;

use std::rc::Rc;

use tidegate_helm::chart::{Chart, Metadata, load_values_text};
use tidegate_helm::template::value::{IntKind, MapKind};
use tidegate_helm::template::{FuncMap, Set, Value};
use tidegate_helm::values::{self, Values, new_map};

#[derive(serde::Deserialize)]
struct Data {
    source: String,
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct ChartSpec {
    name: String,
    #[serde(default)]
    values: String,
    #[serde(default)]
    dependencies: Vec<ChartSpec>,
}

#[derive(serde::Deserialize)]
struct Case {
    test: String,
    func: String,
    chart: Option<ChartSpec>,
    values: Option<serde_json::Map<String, serde_json::Value>>,
    values_yaml: Option<String>,
    dst: Option<serde_json::Map<String, serde_json::Value>>,
    /// `null`: Helm's nil table.
    #[serde(default)]
    src: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default)]
    templates: Vec<(String, String)>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default)]
    null: Vec<String>,
    #[serde(default)]
    present: Vec<String>,
    #[serde(default)]
    equals: Vec<(String, serde_json::Value)>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    input_unchanged: bool,
}

impl Case {
    fn checks(&self) -> usize {
        self.templates.len()
            + self.absent.len()
            + self.null.len()
            + self.present.len()
            + self.equals.len()
            + self.warnings.len()
            + usize::from(self.input_unchanged)
    }
}

fn build_chart(spec: &ChartSpec) -> Result<Chart, String> {
    Ok(Chart {
        metadata: Metadata {
            name: spec.name.clone(),
            api_version: "v2".into(),
            version: "0.1.0".into(),
            ..Metadata::default()
        },
        values: load_values_text(&spec.values)
            .map_err(|e| format!("values of {}: {e}", spec.name))?,
        dependencies: spec
            .dependencies
            .iter()
            .map(build_chart)
            .collect::<Result<_, _>>()?,
        ..Chart::default()
    })
}

fn to_table(m: &serde_json::Map<String, serde_json::Value>) -> Values {
    common::go_table(m, IntKind::Int)
}

fn table_json(t: &Values) -> serde_json::Value {
    Value::Map(t.clone(), MapKind::Any)
        .to_json_value()
        .unwrap_or(serde_json::Value::Null)
}

/// The user's values of a case.
fn user_values(c: &Case) -> Result<Values, String> {
    if let Some(text) = &c.values_yaml {
        let m = load_values_text(text)?;
        return match Value::from_json(&serde_json::Value::Object(m)) {
            Value::Map(t, _) => Ok(t),
            _ => Err("values are not a table".into()),
        };
    }
    Ok(c.values.as_ref().map(to_table).unwrap_or_else(new_map))
}

/// What a dotted path leads to: `Err` when a parent is not a table, `Ok(None)` when the key
/// is missing.
fn lookup(t: &Values, path: &str) -> Result<Option<Value>, String> {
    let parts: Vec<&str> = path.split('.').collect();
    let Some((key, parents)) = parts.split_last() else {
        return Err("empty path".into());
    };
    let mut table = t.clone();
    for p in parents {
        let next = table.borrow().get(*p).cloned();
        table = match next.as_ref().and_then(values::table_of) {
            Some(m) => m,
            None => return Err(format!("{p} is not a table: {next:?}")),
        };
    }
    let v = table.borrow().get(*key).cloned();
    Ok(v)
}

fn run_case(c: &Case, failures: &mut Vec<String>) -> Result<(), String> {
    let mut warnings = Vec::new();
    let result = match c.func.as_str() {
        "coalesce_values" | "merge_values" => {
            let spec = c.chart.as_ref().ok_or("no chart")?;
            let chart = build_chart(spec)?;
            let user = user_values(c)?;
            let before = table_json(&user);
            let merge = c.func == "merge_values";
            let out = values::coalesce(&chart, &user, merge, &mut warnings)?;
            if c.input_unchanged && table_json(&user) != before {
                failures.push(format!(
                    "{}: the user's values changed:\n  before {before}\n  after  {}",
                    c.test,
                    table_json(&user)
                ));
            }
            out
        }
        "coalesce_tables" | "merge_tables" => {
            let dst = to_table(c.dst.as_ref().ok_or("no dst")?);
            let src = c.src.as_ref().map(to_table).unwrap_or_else(new_map);
            let merge = c.func == "merge_tables";
            values::coalesce_tables(&dst, &src, "", merge, &mut warnings);
            dst
        }
        other => return Err(format!("unknown func {other}")),
    };
    let label = &c.test;
    for (tpl, want) in &c.templates {
        let mut set = Set::new("t", FuncMap::new());
        let got = set.parse("t", tpl).and_then(|_| {
            Rc::new(set).execute("t", Value::Map(result.clone(), MapKind::Any), None)
        });
        match got {
            Ok(out) if out == *want => {}
            other => failures.push(format!("{label} {tpl}: want {want:?}, got {other:?}")),
        }
    }
    for path in &c.absent {
        match lookup(&result, path) {
            Ok(None) => {}
            other => failures.push(format!("{label}: {path} should be absent, got {other:?}")),
        }
    }
    for path in &c.null {
        match lookup(&result, path) {
            Ok(Some(Value::Nil)) => {}
            other => failures.push(format!("{label}: {path} should be null, got {other:?}")),
        }
    }
    for path in &c.present {
        match lookup(&result, path) {
            Ok(Some(_)) => {}
            other => failures.push(format!("{label}: {path} should be present, got {other:?}")),
        }
    }
    for (path, want) in &c.equals {
        let got = lookup(&result, path).map(|v| v.map(|v| v.to_json_value()));
        match got {
            Ok(Some(Ok(v))) if v == *want => {}
            other => failures.push(format!("{label}: {path} should be {want}, got {other:?}")),
        }
    }
    for w in &c.warnings {
        if !warnings
            .iter()
            .any(|x: &tidegate_helm::log::Warning| &x.message == w)
        {
            failures.push(format!(
                "{label}: missing warning {w:?}; warnings were {warnings:#?}"
            ));
        }
    }
    Ok(())
}

#[test]
fn helm_coalesce_cases() {
    let data: Data =
        serde_json::from_str(include_str!("data/coalesce.json")).expect("coalesce.json parses");
    assert!(data.source.contains("v4.1.4"), "source names Helm's tag");
    let checks: usize = data.cases.iter().map(Case::checks).sum();
    assert!(
        data.cases.len() >= 8 && checks >= 120,
        "only {} cases with {checks} checks: the data is missing",
        data.cases.len()
    );
    let mut failures = Vec::new();
    for c in &data.cases {
        if let Err(e) = run_case(c, &mut failures) {
            failures.push(format!("{}: error {e}", c.test));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checks} coalesce checks failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
