//! image-reflector-controller's policy table tests (`internal/policy/*_test.go` and the
//! controller's `applyPolicy` cases), ported as data in `tests/data/image/policy_cases.json`,
//! run against Tidegate's ImagePolicy engine.

use serde_json::Value;
use tidegate_source::image::policy::{Policy, PolicyError, RegexFilter, select};

fn cases() -> Value {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/image/policy_cases.json");
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json")
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string"))
        .collect()
}

fn check(kind: &str, case: &Value, policy: Result<Policy, PolicyError>) {
    let name = case["name"].as_str().unwrap_or("?");
    let versions = strs(&case["versions"]);
    let got = policy.and_then(|p| p.latest(&versions).map(str::to_string));
    match case["expected"].as_str() {
        Some(want) if case["error"] != true => {
            assert_eq!(got.as_deref(), Ok(want), "{kind} {name:?}")
        }
        _ => assert!(got.is_err(), "{kind} {name:?}: {got:?}"),
    }
}

#[test]
fn flux_policy_tables() {
    let data = cases();
    let mut ran = 0;
    for c in data["semver"].as_array().expect("semver") {
        check(
            "semver",
            c,
            Policy::from_spec(c["range"].as_str(), None, None),
        );
        ran += 1;
    }
    for c in data["alphabetical"].as_array().expect("alphabetical") {
        check(
            "alphabetical",
            c,
            Policy::from_spec(None, Some(c["order"].as_str()), None),
        );
        ran += 1;
    }
    for c in data["numerical"].as_array().expect("numerical") {
        check(
            "numerical",
            c,
            Policy::from_spec(None, None, Some(c["order"].as_str())),
        );
        ran += 1;
    }
    // Numerical results do not depend on the order (Flux's test shuffles).
    for c in data["numerical"].as_array().expect("numerical") {
        if c["error"] == true {
            continue;
        }
        let mut versions = strs(&c["versions"]);
        versions.reverse();
        let p = Policy::from_spec(None, None, Some(c["order"].as_str())).expect("policy");
        assert_eq!(p.latest(&versions).ok(), c["expected"].as_str(), "{c}");
    }
    for c in data["filter"].as_array().expect("filter") {
        let f = RegexFilter::new(
            c["pattern"].as_str().expect("pattern"),
            c["extract"].as_str().expect("extract"),
        )
        .expect("compiles");
        let tags = strs(&c["tags"]);
        let pairs = f.apply(&tags);
        let mut values: Vec<&str> = pairs.iter().map(|(v, _)| v.as_str()).collect();
        values.sort();
        assert_eq!(values, strs(&c["expected"]), "filter {}", c["name"]);
        for (v, original) in &pairs {
            assert_eq!(
                c["expected_mapping"][v.as_str()].as_str(),
                Some(*original),
                "filter {} mapping",
                c["name"]
            );
        }
        ran += 1;
    }
    for c in data["constructor_errors"].as_array().expect("constructors") {
        let input = &c["input"];
        let made = match c["policy"].as_str().expect("policy") {
            "semver" => Policy::from_spec(input.as_str(), None, None),
            "alphabetical" => Policy::from_spec(None, Some(input.as_str()), None),
            "numerical" => Policy::from_spec(None, None, Some(input.as_str())),
            _ => Policy::from_spec(
                input.pointer("/semver/range").and_then(Value::as_str),
                input
                    .get("alphabetical")
                    .map(|a| a.get("order").and_then(Value::as_str)),
                input
                    .get("numerical")
                    .map(|a| a.get("order").and_then(Value::as_str)),
            ),
        };
        assert_eq!(made.is_err(), c["error"] == true, "{c}");
        ran += 1;
    }
    // The controller's applyPolicy cases: filter, then policy, the original tag returned.
    for c in data["extras"]["applyPolicy"]["cases"]
        .as_array()
        .expect("applyPolicy")
    {
        let Some(db) = c["db"].as_array() else {
            continue;
        };
        if db.is_empty() {
            continue;
        }
        let p = &c["policy"];
        let policy = Policy::from_spec(
            p.pointer("/semver/range").and_then(Value::as_str),
            p.get("alphabetical")
                .map(|a| a.get("order").and_then(Value::as_str)),
            p.get("numerical")
                .map(|a| a.get("order").and_then(Value::as_str)),
        );
        let filter = c["filter"].as_object().map(|f| {
            RegexFilter::new(
                f["pattern"].as_str().unwrap_or(""),
                f["extract"].as_str().unwrap_or(""),
            )
        });
        let tags = strs(&c["db"]);
        let got = match (policy, filter.transpose()) {
            (Ok(p), Ok(f)) => select(&p, f.as_ref(), &tags).map(str::to_string),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        match c["expected"].as_str() {
            Some(want) => assert_eq!(got.as_deref(), Ok(want), "{}", c["name"]),
            None => assert!(got.is_err(), "{}: {got:?}", c["name"]),
        }
        ran += 1;
    }
    assert!(ran >= 60, "ran {ran} cases");
}

#[test]
fn messages_as_flux_words_them() {
    let p = Policy::from_spec(Some("1.0.x"), None, None).expect("policy");
    assert_eq!(
        p.latest(&[]).unwrap_err().to_string(),
        "version list argument cannot be empty"
    );
    assert_eq!(
        p.latest(&["2.0.0"]).unwrap_err().to_string(),
        "unable to determine latest version from provided list"
    );
    let n = Policy::from_spec(None, None, Some(None)).expect("policy");
    assert_eq!(
        n.latest(&["0", "1a", "b"]).unwrap_err().to_string(),
        "failed to parse invalid numeric value '1a'"
    );
    assert_eq!(
        Policy::from_spec(None, Some(Some("sideways")), None)
            .unwrap_err()
            .to_string(),
        "invalid order argument provided: 'SIDEWAYS', must be one of: ASC, DESC"
    );
    assert_eq!(
        Policy::from_spec(None, None, None).unwrap_err().to_string(),
        "given ImagePolicyChoice object is invalid"
    );
    let e = RegexFilter::new("[=", "").unwrap_err().to_string();
    assert!(
        e.starts_with("invalid regular expression pattern '[=': "),
        "{e}"
    );
}
