//! Flux's setter golden trees (image-automation-controller's `internal/update/testdata`) as data:
//! every original file run through the setters, the changed files compared byte for byte with
//! the expected tree, unchanged files absent from it, and the change record as Flux's test
//! expects it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use tidegate_source::image::setters::{LatestRef, Setters, update_text};

fn data() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/image/setters"
    ))
}

fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).expect("read dir") {
        let e = e.expect("entry");
        let name = e.file_name().to_string_lossy().to_string();
        out.insert(name, std::fs::read_to_string(e.path()).expect("read"));
    }
    out
}

#[test]
fn setters_golden_tree() {
    let spec: Value =
        serde_json::from_str(&std::fs::read_to_string(data().join("result.json")).expect("read"))
            .expect("json");
    let mut setters = Setters::new();
    for p in spec["policies"].as_array().expect("policies") {
        let l = &p["latestRef"];
        let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
        setters.add_policy(
            p["namespace"].as_str().expect("ns"),
            p["name"].as_str().expect("name"),
            &LatestRef {
                name: s(&l["name"]),
                tag: s(&l["tag"]),
                digest: s(&l["digest"]),
            },
        );
    }
    let original = files(&data().join("original"));
    let expected = files(&data().join("expected"));
    let mut changed = BTreeMap::new();
    let mut record = serde_json::Map::new();
    for (name, text) in &original {
        if let Some(out) = update_text(text, &setters) {
            changed.insert(name.clone(), out.text);
            let objects: Vec<Value> = out
                .changes
                .iter()
                .map(|(id, changes)| {
                    let mut object = serde_json::Map::new();
                    for (k, v) in [
                        ("apiVersion", &id.api_version),
                        ("kind", &id.kind),
                        ("namespace", &id.namespace),
                        ("name", &id.name),
                    ] {
                        if !v.is_empty() {
                            object.insert(k.into(), json!(v));
                        }
                    }
                    json!({
                        "object": object,
                        "changes": changes.iter().map(|c| json!({
                            "oldValue": c.old_value,
                            "newValue": c.new_value,
                            "setter": c.setter,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            record.insert(name.clone(), Value::Array(objects));
        }
    }
    assert_eq!(
        changed.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the files rewritten"
    );
    for (name, text) in &expected {
        assert_eq!(&changed[name], text, "{name}");
    }
    assert_eq!(Value::Object(record), spec["fileChanges"]);
}

#[test]
fn appconfig_and_pathconfig() {
    let mut setters = Setters::new();
    setters.add_policy(
        "ns",
        "policy1",
        &LatestRef {
            name: "helloworld".into(),
            tag: "1.0.1".into(),
            digest: String::new(),
        },
    );
    let marker = r#"{"$imagepolicy": "ns:policy1"}"#;
    let read = |p: &str| std::fs::read_to_string(data().join(p)).expect("read");
    let input = read("appconfig/deploy.yaml").replace("SETTER_SITE", marker);
    let out = update_text(&input, &setters).expect("changed");
    assert_eq!(
        out.text,
        read("appconfig-setters-expected/deploy.yaml").replace("SETTER_SITE", marker)
    );
    // A policy the marker does not name changes nothing.
    let other = input.replace("ns:policy1", "ns:policy2");
    assert!(update_text(&other, &setters).is_none());
    for side in ["yes", "no"] {
        let input = read(&format!("pathconfig/{side}/deploy.yaml")).replace("SETTER_SITE", marker);
        let out = update_text(&input, &setters)
            .map(|o| o.text)
            .unwrap_or(input);
        assert_eq!(
            out,
            read(&format!("pathconfig-expected/{side}/deploy.yaml"))
                .replace("SETTER_SITE", marker)
                // Flux only runs the setters under `./yes`.
                .replace("helloworld:1.0.0", "helloworld:1.0.1")
        );
    }
}
