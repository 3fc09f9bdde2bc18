//! Helm's `--set` parser tests (Helm v4.1.4 pkg/strvals/parser_test.go and
//! literal_parser_test.go), ported as data in `tests/data/strvals.json` and run against
//! `tidegate_helm::values::strvals`.
//!
//! Results are compared as JSON with Go's number types kept apart: an integer in the data is
//! an `int64`, a number written with a fraction (`2.0`) a `float64`. Helm's own test compares
//! YAML renderings, which cannot tell them apart; this harness is stricter.

mod common;

use tidegate_helm::template::Value;
use tidegate_helm::template::value::{IntKind, MapKind};
use tidegate_helm::values::{Values, new_map, strvals};

#[derive(serde::Deserialize)]
struct Data {
    source: String,
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    test: String,
    func: String,
    input: Input,
    #[serde(default)]
    existing: Option<serde_json::Value>,
    #[serde(default)]
    expect: Option<serde_json::Value>,
    #[serde(default)]
    err: Option<serde_json::Value>,
    #[serde(default)]
    files: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Input {
    One(String),
    Many(Vec<String>),
}

impl Input {
    fn lines(&self) -> Vec<&str> {
        match self {
            Input::One(s) => vec![s.as_str()],
            Input::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

/// JSON into values as a Go test literal holds them (integers `int64`).
fn to_value(v: &serde_json::Value) -> Value {
    common::go_value(v, IntKind::Int64)
}

fn to_table(m: &serde_json::Map<String, serde_json::Value>) -> Values {
    common::go_table(m, IntKind::Int64)
}

fn table_json(t: &Values) -> Result<serde_json::Value, String> {
    Value::Map(t.clone(), MapKind::Any).to_json_value()
}

/// Runs one case: the resulting table (or text, for `to_yaml`) as JSON, or the error.
fn run(c: &Case) -> Result<serde_json::Value, String> {
    let files = c.files.clone().unwrap_or_default();
    let reader = move |path: &str| -> Result<Value, String> {
        match files.get(path) {
            Some(v) => Ok(to_value(v)),
            None => Err(format!("unexpected file {path:?}")),
        }
    };
    let dest = match &c.existing {
        Some(serde_json::Value::Object(m)) => to_table(m),
        Some(other) => return Err(format!("bad existing value {other}")),
        None => new_map(),
    };
    for line in c.input.lines() {
        match c.func.as_str() {
            "parse" => {
                let t = strvals::parse(line)?;
                return table_json(&t);
            }
            "parse_string" | "parse_into_string" => strvals::parse_into_string(line, &dest)?,
            "parse_into" => strvals::parse_into(line, &dest)?,
            "parse_json" => strvals::parse_json(line, &dest)?,
            "parse_file" | "parse_into_file" => strvals::parse_into_file(line, &dest, &reader)?,
            "parse_literal" | "parse_literal_into" => strvals::parse_literal_into(line, &dest)?,
            "to_yaml" => {
                let t = strvals::parse(line)?;
                let text = tidegate_helm::engine::funcs::to_yaml(&Value::Map(t, MapKind::Any));
                return Ok(serde_json::Value::String(text));
            }
            other => return Err(format!("unknown func {other}")),
        }
    }
    table_json(&dest)
}

#[test]
fn helm_strvals_cases() {
    let data: Data =
        serde_json::from_str(include_str!("data/strvals.json")).expect("strvals.json parses");
    assert!(data.source.contains("v4.1.4"), "source names Helm's tag");
    assert!(
        data.cases.len() >= 120,
        "only {} cases: the data is missing",
        data.cases.len()
    );
    let mut failures = Vec::new();
    for c in &data.cases {
        let label = format!("{} {}({:?})", c.test, c.func, c.input.lines());
        let got = run(c);
        match (&c.err, got) {
            (Some(serde_json::Value::String(want)), Err(e)) if *want != e => {
                failures.push(format!("{label}: want error {want:?}, got error {e:?}"))
            }
            (Some(_), Err(_)) => {}
            (Some(_), Ok(v)) => failures.push(format!("{label}: want an error, got {v}")),
            (None, Err(e)) => failures.push(format!("{label}: error {e}")),
            (None, Ok(v)) => {
                let want = c.expect.clone().unwrap_or(serde_json::Value::Null);
                if v != want {
                    failures.push(format!("{label}:\n  want {want}\n  got  {v}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} strvals cases failed:\n{}",
        failures.len(),
        data.cases.len(),
        failures.join("\n")
    );
}
