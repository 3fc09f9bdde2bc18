//! Conformance: structured-merge-diff's merge test tables (rewritten as data in `tests/smd/`)
//! run against this crate's updater. Cases that cannot run here are listed in `SKIPPED` with the
//! reason; every other case must pass.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path as FsPath;

use serde_json::{Map, Value};
use tidegate_merge::fieldpath::{Path, PathElement};
use tidegate_merge::schema::Schema;
use tidegate_merge::smd_format::schema_from_smd_yaml;
use tidegate_merge::{
    ConvertError, Converter, Filter, Identity, ManagedFields, MergeError, Roots, Set, TypeRef,
    Updater, extract_items, merge, validate,
};

/// Cases not run, with the reason. Everything else must pass.
const SKIPPED: &[(&str, &str)] = &[
    (
        "real.yaml",
        "benchmark inputs live in upstream files (k8s schema, pod, node, endpoints) not copied here",
    ),
    (
        "repeating",
        "the repeating converter rewrites YAML text line by line; an artefact of the Go test, not a Kubernetes conversion",
    ),
];

fn parse_yaml(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Null;
    }
    yaml_serde::from_str(text).unwrap_or_else(|e| panic!("invalid YAML in data: {e}\n{text}"))
}

fn path_of(v: &Value) -> Path {
    let items = v.as_array().expect("path is a list");
    Path::new(
        items
            .iter()
            .map(|e| match e {
                Value::String(s) => PathElement::Field(s.clone()),
                Value::Object(m) => {
                    if let Some(k) = m.get("k") {
                        PathElement::key(
                            k.as_object()
                                .expect("key fields")
                                .iter()
                                .map(|(a, b)| (a.clone(), b.clone()))
                                .collect(),
                        )
                    } else if let Some(v) = m.get("v") {
                        PathElement::Value(v.clone())
                    } else if let Some(i) = m.get("i") {
                        PathElement::Index(i.as_i64().expect("index"))
                    } else {
                        panic!("unknown path element {e}")
                    }
                }
                other => panic!("unknown path element {other}"),
            })
            .collect(),
    )
}

fn set_of(paths: &Value) -> Set {
    Set::from_paths(paths.as_array().into_iter().flatten().map(path_of))
}

/// The converters of the Go tests that express real version conversions.
enum TestConverter {
    Renaming,
    ReliantFields,
    SpecificVersion {
        accepted: std::cell::RefCell<Vec<String>>,
    },
}

impl Converter for TestConverter {
    fn convert(&self, v: &Value, from: &str, to: &str) -> Result<Value, ConvertError> {
        match self {
            TestConverter::Renaming => Ok(rename_keys(v, from, to)),
            TestConverter::ReliantFields => {
                if from == to {
                    return Ok(v.clone());
                }
                let text = serde_json::to_string(v).unwrap_or_default();
                let out = match to {
                    "v1" => {
                        if !text.contains("required_field_bar") {
                            return Err(ConvertError {
                                missing_version: false,
                                message: "missing requried field bar".into(),
                            });
                        }
                        text.replace("required_field_bar", "field_foo_rely_on_bar")
                    }
                    "v2" => text.replace("field_foo_rely_on_bar", "required_field_bar"),
                    _ => {
                        return Err(ConvertError {
                            missing_version: true,
                            message: format!("missing version {to}"),
                        });
                    }
                };
                Ok(serde_json::from_str(&out).unwrap_or(Value::Null))
            }
            TestConverter::SpecificVersion { accepted } => {
                if accepted.borrow().iter().any(|a| a == to) {
                    Ok(v.clone())
                } else {
                    Err(ConvertError {
                        missing_version: true,
                        message: format!("Unknown version: {to}"),
                    })
                }
            }
        }
    }
}

fn rename_keys(v: &Value, from: &str, to: &str) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, val) in m {
                let key = match k.strip_suffix(from) {
                    Some(stem) => format!("{stem}{to}"),
                    None => k.clone(),
                };
                out.insert(key, rename_keys(val, from, to));
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| rename_keys(i, from, to)).collect())
        }
        other => other.clone(),
    }
}

struct State<'a> {
    schema: Schema,
    roots: Roots<'a>,
    converter: &'a dyn Converter,
    ignore: BTreeMap<String, Filter>,
    return_input_on_noop: bool,
    live: Option<(Value, String)>,
    managers: ManagedFields,
}

impl State<'_> {
    fn updater(&self) -> Updater<'_> {
        Updater {
            schema: &self.schema,
            roots: self.roots,
            converter: self.converter,
            ignore: self.ignore.clone(),
            return_input_on_noop: self.return_input_on_noop,
        }
    }

    fn tr(&self, version: &str) -> Result<TypeRef, String> {
        match self.roots {
            Roots::Same(t) => Ok(t.clone()),
            Roots::ByVersion(m) => m
                .get(version)
                .cloned()
                .ok_or_else(|| format!("no type for version {version}")),
        }
    }

    fn live_at(&mut self, version: &str) -> Result<Value, String> {
        let (v, from) = match self.live.take() {
            Some(l) => l,
            None => (Value::Null, version.to_string()),
        };
        let converted = self
            .converter
            .convert(&v, &from, version)
            .map_err(|e| e.message)?;
        Ok(converted)
    }

    fn parse(&self, version: &str, text: &str, allow_duplicates: bool) -> Result<Value, String> {
        let v = parse_yaml(text);
        let tr = self.tr(version)?;
        validate(&self.schema, &tr, &v, allow_duplicates).map_err(|e| e.to_string())?;
        Ok(v)
    }
}

fn run_op(
    state: &mut State<'_>,
    op: &Value,
    schemas: &BTreeMap<String, Schema>,
) -> Result<(), String> {
    let (kind, body) = op
        .as_object()
        .and_then(|m| m.iter().next())
        .ok_or("empty op")?;
    let manager = body.get("manager").and_then(Value::as_str).unwrap_or("");
    let version = body.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let text = body.get("object").and_then(Value::as_str).unwrap_or("");
    match kind.as_str() {
        "apply" | "forceApply" => {
            let force = kind == "forceApply";
            let config = state.parse(version, text, false)?;
            let live = state.live_at(version)?;
            let managers = std::mem::take(&mut state.managers);
            let result =
                state
                    .updater()
                    .apply(&live, &config, version, managers.clone(), manager, force);
            let expected = body.get("conflicts");
            match result {
                Ok((new, m)) => {
                    if let Some(exp) = expected
                        && exp.as_array().is_some_and(|a| !a.is_empty())
                    {
                        return Err(format!("expected conflicts {exp}, got none"));
                    }
                    state.managers = m;
                    state.live = Some((new.unwrap_or(live), version.to_string()));
                }
                Err(MergeError::Conflicts(c)) => {
                    let Some(exp) = expected else {
                        return Err(format!("unexpected conflicts: {c}"));
                    };
                    let mut want: Vec<(String, Path)> = exp
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|c| {
                            (
                                c["manager"].as_str().unwrap_or("").to_string(),
                                path_of(&c["path"]),
                            )
                        })
                        .collect();
                    let mut got: Vec<(String, Path)> =
                        c.0.iter()
                            .map(|c| (c.manager.clone(), c.path.clone()))
                            .collect();
                    want.sort();
                    got.sort();
                    if want != got {
                        return Err(format!("conflicts differ: want {want:?}, got {got:?}"));
                    }
                    state.managers = managers;
                    state.live = Some((live, version.to_string()));
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        "update" => {
            let new = state.parse(version, text, true)?;
            let live = state.live_at(version)?;
            let managers = std::mem::take(&mut state.managers);
            let m = state
                .updater()
                .update(&live, &new, version, managers, manager)
                .map_err(|e| e.to_string())?;
            state.managers = m;
            state.live = Some((new, version.to_string()));
        }
        "extractApply" => {
            let config = state.parse(version, text, false)?;
            let Some(_) = state.live else {
                let live = state.live_at(version)?;
                let managers = std::mem::take(&mut state.managers);
                let (new, m) = state
                    .updater()
                    .apply(&live, &config, version, managers, manager, true)
                    .map_err(|e| e.to_string())?;
                state.managers = m;
                state.live = Some((new.unwrap_or(live), version.to_string()));
                return Ok(());
            };
            let current = state.live_at(version)?;
            let tr = state.tr(version)?;
            let set = match state.managers.get(manager) {
                Some(vs) => {
                    if vs.api_version != version {
                        return Err("managed set version differs; unable to extract".into());
                    }
                    vs.set.leaves()
                }
                None => Set::new(),
            };
            let extracted = extract_items(&state.schema, &tr, &current, &set);
            let obj = merge(&state.schema, &tr, &extracted, &config).map_err(|e| e.to_string())?;
            let managers = std::mem::take(&mut state.managers);
            let (new, m) = state
                .updater()
                .apply(&current, &obj, version, managers, manager, true)
                .map_err(|e| e.to_string())?;
            state.managers = m;
            state.live = Some((new.unwrap_or(current), version.to_string()));
        }
        "changeParser" => {
            let name = body
                .get("schema")
                .and_then(Value::as_str)
                .ok_or("schema name")?;
            state.schema = schemas.get(name).ok_or("unknown schema")?.clone();
        }
        "setAcceptedVersions" => {
            return Err("setAcceptedVersions needs the obsolete-version harness".into());
        }
        other => return Err(format!("unknown op {other}")),
    }
    Ok(())
}

fn check_case(case: &Value, schemas: &BTreeMap<String, Schema>) -> Result<(), String> {
    let schema_name = case["schema"].as_str().unwrap_or("deduced");
    let schema = if schema_name == "deduced" {
        Schema::new()
    } else {
        schemas.get(schema_name).ok_or("unknown schema")?.clone()
    };
    let converter: Box<dyn Converter> = match case.get("converter").and_then(Value::as_str) {
        None => Box::new(Identity),
        Some("renaming") => Box::new(TestConverter::Renaming),
        Some("reliantFields") => Box::new(TestConverter::ReliantFields),
        Some("versionDoesntMatchTypename") => Box::new(TestConverter::ReliantFields),
        Some("specificVersion") => Box::new(TestConverter::SpecificVersion {
            accepted: std::cell::RefCell::new(Vec::new()),
        }),
        Some(other) => return Err(format!("converter {other} not supported")),
    };
    // Version -> type.
    let mut by_version: BTreeMap<String, TypeRef> = BTreeMap::new();
    let same = if let Some(vt) = case.get("versionTypes").and_then(Value::as_object) {
        for (v, t) in vt {
            let tr = schema
                .type_ref(t.as_str().unwrap_or(""))
                .ok_or("unknown type")?;
            by_version.insert(v.clone(), tr);
        }
        None
    } else if case.get("typeFromVersion") == Some(&Value::Bool(true)) {
        for n in schema.names() {
            by_version.insert(n.to_string(), schema.type_ref(n).ok_or("type")?);
        }
        None
    } else if let Some(rt) = case.get("rootType").and_then(Value::as_str) {
        Some(schema.type_ref(rt).ok_or("unknown root type")?)
    } else {
        Some(schema.deduced())
    };
    let roots = match &same {
        Some(t) => Roots::Same(t),
        None => Roots::ByVersion(&by_version),
    };
    let mut ignore = BTreeMap::new();
    for key in ["ignoreFilter", "ignoredFields"] {
        if let Some(m) = case.get(key).and_then(Value::as_object) {
            for (v, f) in m {
                let paths = if key == "ignoreFilter" {
                    if f["kind"] != "exclude" {
                        return Err("only exclude filters are supported".into());
                    }
                    &f["paths"]
                } else {
                    f
                };
                ignore.insert(v.clone(), Filter::Exclude(set_of(paths)));
            }
        }
    }
    let mut state = State {
        schema,
        roots,
        converter: converter.as_ref(),
        ignore,
        return_input_on_noop: case.get("returnInputOnNoop") == Some(&Value::Bool(true)),
        live: None,
        managers: ManagedFields::new(),
    };
    if case.get("versionTypes").is_some() {
        state.live = Some((Value::Object(Map::new()), "v2".to_string()));
    }
    let expect_error = case.get("expectError") == Some(&Value::Bool(true));
    for (i, op) in case["ops"].as_array().into_iter().flatten().enumerate() {
        if let Err(e) = run_op(&mut state, op, schemas) {
            if expect_error {
                return Ok(());
            }
            return Err(format!("operation {i} failed: {e}"));
        }
    }
    if expect_error {
        return Err("expected an error, all operations succeeded".into());
    }
    if let Some(text) = case.get("object").and_then(Value::as_str) {
        let version = case["apiVersion"].as_str().unwrap_or("");
        let want = parse_yaml(text);
        let got = state.live_at(version)?;
        if !json_equal(&want, &got) {
            return Err(format!("object differs:\nwant {want}\ngot  {got}"));
        }
        state.live = Some((got, version.to_string()));
    }
    if let Some(m) = case.get("managed").and_then(Value::as_object) {
        let mut want = BTreeMap::new();
        for (name, vs) in m {
            let set = set_of(&vs["fields"]);
            if !set.is_empty() {
                want.insert(
                    name.clone(),
                    (vs["apiVersion"].as_str().unwrap_or("").to_string(), set),
                );
            }
        }
        let got: BTreeMap<String, (String, Set)> = state
            .managers
            .iter()
            .filter(|(_, vs)| !vs.set.is_empty())
            .map(|(n, vs)| (n.clone(), (vs.api_version.clone(), vs.set.clone())))
            .collect();
        if want != got {
            let show = |m: &BTreeMap<String, (String, Set)>| {
                m.iter()
                    .map(|(n, (v, s))| {
                        let paths: Vec<String> = s.paths().iter().map(|p| p.to_string()).collect();
                        format!("{n}@{v}: {}", paths.join(" "))
                    })
                    .collect::<Vec<_>>()
                    .join("\n    ")
            };
            return Err(format!(
                "managed fields differ:\n  want {}\n  got  {}",
                show(&want),
                show(&got)
            ));
        }
    }
    if let Some((n, _)) = state.managers.iter().find(|(_, vs)| vs.set.is_empty()) {
        return Err(format!("manager {n} has an empty set"));
    }
    Ok(())
}

/// Equality of unstructured values as the Go harness compares them: map order ignored, list order
/// and number kinds significant.
fn json_equal(a: &Value, b: &Value) -> bool {
    a == b
}

fn skip_reason(file: &str, case: &Value) -> Option<&'static str> {
    for (what, why) in SKIPPED {
        if *what == file || case.get("converter").and_then(Value::as_str) == Some(what) {
            return Some(why);
        }
    }
    if case
        .get("ops")
        .and_then(Value::as_array)
        .is_some_and(|ops| ops.iter().any(|o| o.get("setAcceptedVersions").is_some()))
    {
        return Some("obsolete-version harness (mutable accepted versions) not reproduced");
    }
    None
}

#[test]
fn structured_merge_diff_conformance() {
    let dir = FsPath::new(env!("CARGO_MANIFEST_DIR")).join("tests/smd");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .expect("tests/smd exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let (mut passed, mut skipped) = (0, 0);
    let mut failures = Vec::new();
    for file in files {
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let doc = parse_yaml(&fs::read_to_string(&file).expect("readable"));
        let mut schemas = BTreeMap::new();
        for (k, v) in doc
            .get("schemas")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let text = v.as_str().expect("schema text");
            schemas.insert(
                k.clone(),
                schema_from_smd_yaml(text).unwrap_or_else(|e| panic!("{name}: schema {k}: {e}")),
            );
        }
        for case in doc
            .get("cases")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let cname = case["name"].as_str().unwrap_or("?");
            if skip_reason(&name, case).is_some() {
                skipped += 1;
                continue;
            }
            match check_case(case, &schemas) {
                Ok(()) => passed += 1,
                Err(e) => failures.push(format!("{name} {cname}: {e}")),
            }
        }
    }
    println!(
        "structured-merge-diff conformance: {passed} passed, {} failed, {skipped} not run",
        failures.len()
    );
    for (what, why) in SKIPPED {
        println!("  not run: {what}: {why}");
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(passed >= 120, "only {passed} cases passed");
    assert!(failures.is_empty(), "{} cases failed", failures.len());
}

#[test]
fn conflict_messages() {
    let file = FsPath::new(env!("CARGO_MANIFEST_DIR")).join("tests/smd/conflict.yaml");
    let doc = parse_yaml(&fs::read_to_string(file).expect("readable"));
    let cases = doc["conflictMessages"].as_array().expect("cases");
    assert_eq!(cases.len(), 3);
    for case in cases {
        let sets: BTreeMap<String, Set> = case["managers"]
            .as_object()
            .expect("managers")
            .iter()
            .map(|(m, vs)| (m.clone(), set_of(&vs["fields"])))
            .collect();
        let conflicts = tidegate_merge::Conflicts::from_managers(&sets);
        if let Some(want) = case.get("expectedError").and_then(Value::as_str) {
            assert_eq!(conflicts.to_string(), want, "{}", case["name"]);
        }
        if let Some(want) = case.get("expectedSet") {
            assert_eq!(conflicts.to_set(), set_of(want), "{}", case["name"]);
        }
    }
}
