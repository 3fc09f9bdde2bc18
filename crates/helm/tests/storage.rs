//! Real release records written by Helm 3 (helm-controller's decode test data: a podinfo
//! release that went through a kustomize post-renderer, and istio-base as plain Helm wrote it)
//! decode, and survive a round trip through Tidegate's encoding.

use tidegate_helm::storage;

fn record(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/releases/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn podinfo_record_decodes() {
    let r = storage::decode(&record("podinfo-helm-1")).expect("decodes");
    assert_eq!(r.name, "podinfo-helmrepository");
    assert_eq!(r.chart_version(), "4.0.6");
    assert_eq!(r.version, 1);
    assert_eq!(r.namespace, "default");
    assert_eq!(r.chart_name(), "podinfo");
    assert!(!r.chart_version().is_empty());
    assert_eq!(r.info.deleted, None, "Helm 3's \"\" is no time");
    assert!(r.info.first_deployed.is_some());
    assert!(
        r.manifest.starts_with("apiVersion: v1\nkind: Service\n"),
        "{}",
        &r.manifest[..60]
    );
    assert_eq!(r.hooks.len(), 3);
    assert!(r.hooks.iter().all(|h| h.runs_on("test") && h.kind == "Pod"));
    assert!(
        r.chart
            .get("templates")
            .and_then(|t| t.as_array())
            .is_some_and(|t| !t.is_empty())
    );
}

#[test]
fn istio_record_decodes_and_round_trips() {
    let r = storage::decode(&record("istio-base-1")).expect("decodes");
    assert_eq!(r.chart_name(), "base");
    assert!(r.manifest.starts_with("---\n# Source: base/templates/"));
    let again = storage::decode(storage::encode(&r).expect("encodes").as_bytes()).expect("decodes");
    assert_eq!(again, r);
}
