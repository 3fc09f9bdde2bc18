//! Flux's substitution language, row by row against Flux's Go package.
//!
//! `data/flux-envsubst.json` holds the rows of Flux's envsubst test tables (TestExpand,
//! TestExpandStrict, TestParse, the funcs tests written as expansions) and a seeded random
//! corpus of about 3,000 inputs, each with what `github.com/fluxcd/pkg/envsubst` made of it:
//! its parse tree, its output or its error. `scripts/envsubst-corpus/` produces the file.
//! Rows where Go panics (a negative substring length) or writes invalid UTF-8 are not in it.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tidegate_kustomize::envsubst::{Node, expand, parse};

fn tree(nodes: &[Node]) -> Value {
    Value::Array(nodes.iter().map(node).collect())
}

fn node(n: &Node) -> Value {
    match n {
        Node::Text(t) => json!({ "text": t }),
        Node::Func { param, op, args } => {
            json!({ "param": param, "op": op, "args": tree(args) })
        }
    }
}

#[test]
fn flux_envsubst_tables_and_corpus() {
    let doc: Value =
        serde_json::from_str(include_str!("data/flux-envsubst.json")).expect("valid test data");
    let generated: BTreeMap<String, String> =
        serde_json::from_value(doc["_meta"]["generated_vars"].clone()).expect("vars");
    let rows = doc["rows"].as_array().expect("rows");
    let mut per_table: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for row in rows {
        let table = row["table"].as_str().expect("table");
        let input = row["input"].as_str().expect("input");
        let strict = row["strict"].as_bool().expect("strict");
        let vars: BTreeMap<String, String> = match row.get("vars") {
            Some(v) => serde_json::from_value(v.clone()).expect("vars"),
            None => generated.clone(),
        };
        *per_table.entry(table).or_default() += 1;

        let want_tree = row.get("tree");
        match (parse(input), want_tree) {
            (Ok(nodes), Some(want)) if tree(&nodes) != *want => failures.push(format!(
                "{table} {input:?}: tree {} want {want}",
                tree(&nodes)
            )),
            (Err(e), Some(_)) => failures.push(format!("{table} {input:?}: parse error {e}")),
            (Ok(nodes), None) => failures.push(format!(
                "{table} {input:?}: parsed as {} but Flux fails to parse it",
                tree(&nodes)
            )),
            _ => {}
        }

        let got = expand(input, &|k| vars.get(k).cloned(), strict).map_err(|e| e.to_string());
        let want = match (row.get("output"), row.get("error")) {
            (Some(o), None) => Ok(o.as_str().expect("output").to_string()),
            (None, Some(e)) => Err(e.as_str().expect("error").to_string()),
            _ => panic!("row {input:?} has neither output nor error"),
        };
        if got != want {
            failures.push(format!(
                "{table} {input:?} strict={strict}: got {got:?}, want {want:?}"
            ));
        }
    }
    // The file holds what it says: every upstream table, and the corpus.
    for (table, at_least) in [
        ("TestExpand", 34),
        ("TestExpandStrict", 23),
        ("TestParse", 44),
        ("funcs_test", 18),
        ("generated", 2900),
    ] {
        let n = per_table.get(table).copied().unwrap_or(0);
        assert!(n >= at_least, "{table}: {n} rows, expected {at_least}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows differ from Flux:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}
