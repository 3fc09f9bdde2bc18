//! Helm's manifest and hook sorting tests (Helm v4.1.4 pkg/release/v1/util/
//! manifest_sorter_test.go, kind_sorter_test.go and manifest_test.go), ported as data in
//! `tests/data/sorter.json` and run against `tidegate_helm::release`.

use std::collections::BTreeMap;

use tidegate_helm::release::{
    INSTALL_ORDER, UNINSTALL_ORDER, sort_by_kind, sort_manifests, split_manifests,
};

#[derive(serde::Deserialize)]
struct Data {
    source: String,
    sort_manifests: Vec<SortCase>,
    split_manifests: Vec<SplitCase>,
    kind_sort: Vec<KindCase>,
}

#[derive(serde::Deserialize)]
struct SortCase {
    test: String,
    files: BTreeMap<String, String>,
    hooks: Vec<HookSpec>,
    manifests: Vec<ManifestSpec>,
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct HookSpec {
    name: String,
    kind: String,
    path: String,
    events: Vec<String>,
    weight: i64,
    delete_policies: Vec<String>,
    output_log_policies: Vec<String>,
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct ManifestSpec {
    path: String,
    kind: String,
    content: String,
}

#[derive(serde::Deserialize)]
struct SplitCase {
    test: String,
    input: String,
    expect: Vec<String>,
}

#[derive(serde::Deserialize)]
struct KindCase {
    test: String,
    order: String,
    items: Vec<(String, String)>,
    expect: String,
}

fn check_sort(c: &SortCase, failures: &mut Vec<String>) {
    let (hooks, manifests) = match sort_manifests(&c.files) {
        Ok(r) => r,
        Err(e) => {
            failures.push(format!("{}: error {e}", c.test));
            return;
        }
    };
    let got_hooks: Vec<HookSpec> = hooks
        .into_iter()
        .map(|h| HookSpec {
            name: h.name,
            kind: h.kind,
            path: h.path,
            events: h.events,
            weight: h.weight,
            delete_policies: h.delete_policies,
            output_log_policies: h.output_log_policies,
        })
        .collect();
    if got_hooks != c.hooks {
        failures.push(format!(
            "{}: hooks\n  want {:#?}\n  got  {got_hooks:#?}",
            c.test, c.hooks
        ));
    }
    let got_manifests: Vec<ManifestSpec> = manifests
        .into_iter()
        .map(|m| ManifestSpec {
            path: m.name,
            kind: m.kind,
            content: m.content,
        })
        .collect();
    if got_manifests != c.manifests {
        failures.push(format!(
            "{}: manifests\n  want {:#?}\n  got  {got_manifests:#?}",
            c.test, c.manifests
        ));
    }
}

#[test]
fn helm_sorter_cases() {
    let data: Data =
        serde_json::from_str(include_str!("data/sorter.json")).expect("sorter.json parses");
    assert!(data.source.contains("v4.1.4"), "source names Helm's tag");
    let total = data.sort_manifests.len() + data.split_manifests.len() + data.kind_sort.len();
    assert!(
        data.sort_manifests.len() >= 2
            && !data.split_manifests.is_empty()
            && data.kind_sort.len() >= 6,
        "only {total} cases: the data is missing"
    );
    let mut failures = Vec::new();
    for c in &data.sort_manifests {
        check_sort(c, &mut failures);
    }
    for c in &data.split_manifests {
        let got = split_manifests(&c.input);
        if got != c.expect {
            failures.push(format!("{}: want {:?}, got {got:?}", c.test, c.expect));
        }
    }
    for c in &data.kind_sort {
        let order = match c.order.as_str() {
            "install" => INSTALL_ORDER,
            "uninstall" => UNINSTALL_ORDER,
            other => {
                failures.push(format!("{}: unknown order {other}", c.test));
                continue;
            }
        };
        let mut items = c.items.clone();
        sort_by_kind(&mut items, order, |(_, kind)| kind.as_str());
        let got: String = items.iter().map(|(name, _)| name.as_str()).collect();
        if got != c.expect {
            failures.push(format!("{}: want {:?}, got {got:?}", c.test, c.expect));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} sorter cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
