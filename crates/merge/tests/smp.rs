//! Conformance: apimachinery's strategic merge patch tables (rewritten as data in `tests/smp/`)
//! applied with this crate's strategic merge patch. Only patch application is server-side
//! behaviour, so each case applies the expected two-way patch to `original` and the expected
//! three-way patch to `current` and compares with the expected results.

use std::fs;
use std::path::Path;

use serde_json::{Map, Value};
use tidegate_merge::smp::{PatchSchema, apply};

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/smp")
}

fn load(name: &str) -> Value {
    let text = fs::read_to_string(dir().join(name)).expect("data file");
    yaml_serde::from_str(&text).expect("valid YAML")
}

fn defs() -> Map<String, Value> {
    let text = fs::read_to_string(dir().join("schema.json")).expect("schema.json");
    serde_json::from_str(&text).expect("valid schema JSON")
}

fn doc(v: Option<&Value>) -> Value {
    match v {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v) => v.clone(),
    }
}

/// Runs one application; returns a failure description.
fn check(
    defs: &Map<String, Value>,
    root: &str,
    name: &str,
    target: &Value,
    patch: &Value,
    want: Option<&Value>,
    want_error: Option<&str>,
) -> Option<String> {
    let got = apply(target, patch, PatchSchema::new(defs, root));
    match (got, want_error) {
        (Err(e), Some(w)) if e.0.contains(w) => None,
        (Err(e), _) => Some(format!("{name}: unexpected error {e}")),
        (Ok(v), Some(w)) => Some(format!("{name}: expected error {w:?}, got {v}")),
        (Ok(v), None) => {
            let want = doc(want);
            if v == want {
                None
            } else {
                Some(format!("{name}:\n  want {want}\n  got  {v}"))
            }
        }
    }
}

#[test]
fn strategic_merge_patch_conformance() {
    let defs = defs();
    let mut passed = 0;
    let mut failures = Vec::new();
    for file in [
        "create_strategic_merge_patch.yaml",
        "strategic_merge_patch_raw.yaml",
        "custom_strategic_merge_patch.yaml",
        "custom_strategic_merge_patch_raw.yaml",
        "replace_raw_extension.yaml",
    ] {
        let data = load(file);
        for case in data["cases"].as_array().expect("cases") {
            let name = format!("{file} {}", case["description"].as_str().unwrap_or("?"));
            let error = case.get("expectedError").and_then(Value::as_str);
            if let Some(patch) = case.get("twoWay") {
                let want = case.get("twoWayResult").or(case.get("modified"));
                if want.is_none() && error.is_none() {
                    continue;
                }
                let r = check(
                    &defs,
                    "mergeItem",
                    &format!("{name} (two-way)"),
                    &doc(case.get("original")),
                    patch,
                    want,
                    error,
                );
                match r {
                    None => passed += 1,
                    Some(f) => failures.push(f),
                }
            }
            if let (Some(patch), Some(result)) = (case.get("threeWay"), case.get("result")) {
                if result.as_object().is_some_and(|m| m.is_empty()) {
                    continue;
                }
                let r = check(
                    &defs,
                    "mergeItem",
                    &format!("{name} (three-way)"),
                    &doc(case.get("current")),
                    patch,
                    Some(result),
                    None,
                );
                match r {
                    None => passed += 1,
                    Some(f) => failures.push(f),
                }
            }
        }
    }
    // Numbers survive application exactly (int64 max, float64 precision).
    let numbers = load("number_conversion.yaml");
    for case in numbers["cases"].as_array().expect("cases") {
        let parse = |k: &str| -> Value {
            serde_json::from_str(case[k].as_str().expect("JSON text")).expect("valid JSON")
        };
        let r = check(
            &defs,
            "precisionItem",
            &format!("number_conversion {}", case["description"]),
            &parse("old"),
            &parse("expectedPatch"),
            Some(&parse("expectedResult")),
            None,
        );
        match r {
            None => passed += 1,
            Some(f) => failures.push(f),
        }
    }
    println!(
        "strategic merge patch conformance: {passed} passed, {} failed",
        failures.len()
    );
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(
        failures.is_empty(),
        "{} applications failed",
        failures.len()
    );
}
