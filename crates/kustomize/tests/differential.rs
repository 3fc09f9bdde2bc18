//! Differential test: every fixture directory is built by `kubectl kustomize` (the reference,
//! kustomize v5.5) and by this engine; the outputs must be identical byte for byte (the
//! difference reported document by document, parsed). Cases known to differ are listed in `fixtures/KNOWN_DIFFERENCES` with
//! the reason; such a case that starts matching fails the test too, so the list stays true.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::Value;
use tidegate_kustomize::{Builder, LoadRestrictions, Options};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// One build to compare.
struct Case {
    name: String,
    /// The build root (the fixture directory).
    root: PathBuf,
    /// The kustomization directory built.
    dir: PathBuf,
    restrictions: LoadRestrictions,
    /// kubectl's output recorded when the fixture was taken (real-repository corpus only).
    expected: Option<PathBuf>,
}

fn subdirs(dir: &Path) -> Vec<std::fs::DirEntry> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    entries
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for group in ["features", "krusty"] {
        for e in subdirs(&fixtures().join(group)) {
            out.push(Case {
                name: format!("{group}/{}", e.file_name().to_string_lossy()),
                root: e.path(),
                dir: build_path(&e.path()),
                restrictions: LoadRestrictions::RootOnly,
                expected: None,
            });
        }
    }
    // The corpus of real repositories: every listed build path, under both load restrictors.
    for e in subdirs(&fixtures().join("corpus")) {
        let list = e.path().join("build-paths");
        let text = std::fs::read_to_string(&list)
            .unwrap_or_else(|err| panic!("reading {}: {err}", list.display()));
        for path in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let flat = path.replace('/', "__");
            for (restrictions, suffix) in [
                (LoadRestrictions::RootOnly, ""),
                (LoadRestrictions::None, " (LoadRestrictionsNone)"),
            ] {
                let none = e.path().join(format!("expected/{flat}.none.yaml"));
                let expected = if restrictions == LoadRestrictions::None && none.exists() {
                    none
                } else {
                    e.path().join(format!("expected/{flat}.yaml"))
                };
                out.push(Case {
                    name: format!("corpus/{}/{path}{suffix}", e.file_name().to_string_lossy()),
                    root: e.path(),
                    dir: e.path().join(path),
                    restrictions,
                    expected: Some(expected),
                });
            }
        }
    }
    out
}

fn build_path(case: &Path) -> PathBuf {
    match std::fs::read_to_string(case.join("build-path")) {
        Ok(p) => case.join(p.trim()),
        Err(_) => case.to_path_buf(),
    }
}

fn parse(text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for doc in yaml_serde::Deserializer::from_str(text) {
        let v = Value::deserialize(doc).map_err(|e| e.to_string())?;
        if !v.is_null() {
            out.push(v);
        }
    }
    Ok(out)
}

fn known_differences() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(fixtures().join("KNOWN_DIFFERENCES")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.split_once(' ')
                .map(|(c, r)| (c.to_string(), r.trim().to_string()))
        })
        .collect()
}

enum Outcome {
    Same { bytes_equal: bool },
    Different(String),
}

fn run_case(case: &Case) -> Outcome {
    let dir = &case.dir;
    let mut kubectl = Command::new("kubectl");
    kubectl.arg("kustomize");
    if case.restrictions == LoadRestrictions::None {
        kubectl.arg("--load-restrictor=LoadRestrictionsNone");
    }
    let kubectl = kubectl
        .arg(dir)
        .env_remove("TIDEGATE_FIXTURE_SURELY_UNSET_VAR")
        .output()
        .unwrap_or_else(|e| panic!("kubectl must be installed for this test: {e}"));
    if !kubectl.status.success() {
        return Outcome::Different(format!(
            "kubectl kustomize failed: {}",
            String::from_utf8_lossy(&kubectl.stderr).trim()
        ));
    }
    let expected_text = String::from_utf8_lossy(&kubectl.stdout).to_string();
    if let Some(recorded) = &case.expected {
        let text = std::fs::read_to_string(recorded)
            .unwrap_or_else(|e| panic!("reading {}: {e}", recorded.display()));
        if text != expected_text {
            return Outcome::Different(format!(
                "kubectl's output differs from the recorded {}",
                recorded.display()
            ));
        }
    }
    let options = Options {
        load_restrictions: case.restrictions,
        ..Options::default()
    };
    let built = Builder::new(&case.root, options).and_then(|b| b.build(dir));
    let ours = match built {
        Ok(r) => r.to_yaml(),
        Err(e) => return Outcome::Different(format!("tidegate failed: {e}")),
    };
    let expected = match parse(&expected_text) {
        Ok(v) => v,
        Err(e) => return Outcome::Different(format!("kubectl output does not parse: {e}")),
    };
    let actual = match parse(&ours) {
        Ok(v) => v,
        Err(e) => return Outcome::Different(format!("our output does not parse: {e}\n{ours}")),
    };
    if expected == actual {
        return Outcome::Same {
            bytes_equal: expected_text == ours,
        };
    }
    let mut detail = format!(
        "{} documents from kubectl, {} from tidegate\n",
        expected.len(),
        actual.len()
    );
    for i in 0..expected.len().max(actual.len()) {
        if expected.get(i) != actual.get(i) {
            let e = expected
                .get(i)
                .map(|v| serde_json::to_string(v).unwrap_or_default())
                .unwrap_or_default();
            let a = actual
                .get(i)
                .map(|v| serde_json::to_string(v).unwrap_or_default())
                .unwrap_or_default();
            detail.push_str(&format!(
                "first difference at document {i}:\n  kubectl:  {e}\n  tidegate: {a}\n"
            ));
            break;
        }
    }
    Outcome::Different(detail)
}

#[test]
fn kubectl_kustomize_and_tidegate_agree() {
    let cases = cases();
    assert!(
        cases.len() >= 150,
        "expected at least 150 fixture directories, found {}",
        cases.len()
    );
    let known = known_differences();
    let results: Mutex<Vec<(String, Outcome)>> = Mutex::new(Vec::new());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().expect("lock");
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some(case) = cases.get(i) else {
                        break;
                    };
                    let outcome = run_case(case);
                    results
                        .lock()
                        .expect("lock")
                        .push((case.name.clone(), outcome));
                }
            });
        }
    });
    let mut results = results.into_inner().expect("lock");
    results.sort_by(|a, b| a.0.cmp(&b.0));
    let mut same = 0;
    let mut bytes = 0;
    let mut failures = Vec::new();
    let mut expected_diff = 0;
    for (name, outcome) in &results {
        match (outcome, known.get(name)) {
            (Outcome::Same { bytes_equal }, None) => {
                same += 1;
                if *bytes_equal {
                    bytes += 1;
                } else {
                    // Flux applies and prints what it builds: the text must be kubectl's too
                    // (quoting, escapes, folding), not only the values.
                    failures.push(format!(
                        "{name}: the same objects, but not the same bytes as kubectl prints"
                    ));
                }
            }
            (Outcome::Same { .. }, Some(reason)) => failures.push(format!(
                "{name}: listed in KNOWN_DIFFERENCES ({reason}) but now matches; remove it from the list"
            )),
            (Outcome::Different(_), Some(_)) => expected_diff += 1,
            (Outcome::Different(detail), None) => failures.push(format!("{name}: {detail}")),
        }
    }
    for name in known.keys() {
        if !results.iter().any(|(n, _)| n == name) {
            failures.push(format!(
                "{name}: listed in KNOWN_DIFFERENCES but no such fixture"
            ));
        }
    }
    println!(
        "differential: {} cases, {same} identical when parsed ({bytes} byte-identical), {expected_diff} known differences, {} failures",
        results.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
