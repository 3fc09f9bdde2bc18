use super::*;
use serde_json::json;

fn run_cases(file: &str, rationalize: bool) {
    let path = format!("{}/tests/data/jsondiff/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("case file");
    let cases: Vec<Value> = serde_json::from_str(&text).expect("cases parse");
    assert!(!cases.is_empty());
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?");
        let got = patch_json(&compare(&case["before"], &case["after"], rationalize));
        let want = case.get("patch").cloned().unwrap_or(Value::Null);
        let want = if want.is_null() { json!([]) } else { want };
        assert_eq!(got, want, "{file}: {name}");
    }
}

#[test]
fn upstream_array_cases() {
    run_cases("array.json", false);
}

#[test]
fn upstream_object_cases() {
    run_cases("object.json", false);
}

#[test]
fn upstream_root_cases() {
    run_cases("root.json", false);
}

#[test]
fn upstream_rationalization_cases() {
    run_cases("rationalization.json", true);
}

fn deployment(replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "apps", "resourceVersion": "7",
                     "labels": {"app": "web", "pod-template-hash": "x"},
                     "managedFields": [{"manager": "helm-controller"}]},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1"}]}}},
        "status": {"readyReplicas": 1}
    })
}

#[test]
fn object_patch_compares_spec_and_label_additions_only() {
    let live = deployment(3);
    let mut dry = deployment(1);
    // The dry-run drops a label a controller added: not drift.
    dry["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("pod-template-hash");
    dry["status"] = json!({});
    let got = patch_json(&object_patch(&live, &dry, &[]));
    assert_eq!(
        got,
        json!([{"op": "replace", "path": "/spec/replicas", "value": 1}])
    );
    // A label added next to that removal: the labels are replaced whole when that is the
    // shorter patch, as Flux's rationalized diff does.
    dry["metadata"]["labels"]["team"] = json!("a");
    let got = patch_json(&object_patch(&live, &dry, &[]));
    assert_eq!(
        got,
        json!([
            {"op": "replace", "path": "/metadata/labels", "value": {"app": "web", "team": "a"}},
            {"op": "replace", "path": "/spec/replicas", "value": 1}
        ])
    );
    let mut short = deployment(1);
    short["metadata"]["labels"]["team"] = json!("a");
    let got = patch_json(&object_patch(&deployment(1), &short, &[]));
    assert_eq!(
        got,
        json!([{"op": "add", "path": "/metadata/labels/team", "value": "a"}])
    );
    // Ignored paths leave both sides.
    let ops = object_patch(
        &live,
        &dry,
        &["/spec/replicas".into(), "/metadata/labels".into()],
    );
    assert!(ops.is_empty(), "{ops:?}");
    // Numbers compare as numbers.
    let mut live = deployment(1);
    live["spec"]["replicas"] = json!(1.0);
    assert!(object_patch(&live, &deployment(1), &[]).is_empty());
}

#[test]
fn remove_pointer_is_lenient() {
    let mut v = json!({"a": {"b/c": [1, 2, 3]}, "d~e": 1});
    remove_pointer(&mut v, "/a/b~1c/-1");
    remove_pointer(&mut v, "/d~0e");
    remove_pointer(&mut v, "/missing/x");
    remove_pointer(&mut v, "/a/b~1c/9");
    assert_eq!(v, json!({"a": {"b/c": [1, 2]}}));
}

#[test]
fn ignore_rules_select_by_kind_name_and_labels() {
    let rules = IgnoreRules::compile(&[
        IgnoreRule {
            paths: vec!["/spec/replicas".into()],
            selector: Some(Selector {
                kind: "Deploy.*".into(),
                label_selector: "app in (web)".into(),
                ..Default::default()
            }),
        },
        IgnoreRule {
            paths: vec!["/data".into()],
            selector: None,
        },
    ])
    .unwrap();
    assert_eq!(
        rules.paths_for(&deployment(1)),
        vec!["/spec/replicas".to_string(), "/data".to_string()]
    );
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    assert_eq!(rules.paths_for(&cm), vec!["/data".to_string()]);
    let bad = IgnoreRules::compile(&[IgnoreRule {
        paths: vec![],
        selector: Some(Selector {
            name: "(".into(),
            ..Default::default()
        }),
    }]);
    assert!(bad.err().unwrap().contains("invalid name regex"));
}

#[test]
fn secret_patches_are_masked() {
    let mut ops = compare(
        &json!({"data": {"a": "MQ==", "b": "Mg=="}}),
        &json!({"data": {"a": "Mw==", "c": "NA=="}}),
        false,
    );
    mask_secret_patch(&mut ops);
    let got: Vec<(String, Option<Value>, Option<Value>)> = ops
        .iter()
        .map(|o| (o.path.clone(), o.old_value.clone(), o.value.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "/data/a".into(),
                Some(json!("*** (before)")),
                Some(json!("*** (after)"))
            ),
            ("/data/b".into(), Some(json!("***")), None),
            ("/data/c".into(), None, Some(json!("***"))),
        ]
    );
    let mut whole = compare(&json!({}), &json!({"data": {"k": "secret"}}), false);
    mask_secret_patch(&mut whole);
    assert_eq!(whole[0].value, Some(json!({"k": "***"})));
}

#[test]
fn summaries_as_flux_writes_them() {
    let d = |kind, patch: Vec<Operation>, name: &str| Diff {
        kind,
        desired: json!({"kind": "Deployment", "metadata": {"name": name, "namespace": "default"}}),
        patch,
    };
    let update = compare(
        &json!({"a": 1, "b": 2, "x": [1]}),
        &json!({"a": 2, "c": 3, "x": [1]}),
        false,
    );
    let set = vec![
        d(DiffType::Update, update, "hello-world"),
        d(DiffType::Create, vec![], "hello-world2"),
        d(DiffType::Exclude, vec![], "hello-world3"),
        d(DiffType::None, vec![], "hello-world4"),
    ];
    assert_eq!(
        summarize(&set),
        "Deployment/default/hello-world changed (1 additions, 1 changes, 1 removals)\n\
         Deployment/default/hello-world2 removed\n\
         Deployment/default/hello-world3 excluded"
    );
    assert_eq!(summarize_brief(&set), "removed: 1, changed: 1, excluded: 1");
    assert!(has_changes(&set));
    assert!(!has_changes(&set[2..]));
}
