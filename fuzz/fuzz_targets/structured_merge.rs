//! Structured merge (server-side apply's merge and field sets) over the built-in schema: a
//! Pod-shaped live object and an arbitrary configuration merge or fail, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(config) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let schema = tidegate_merge::builtin_schema();
    let Some(tr) = schema.type_ref("io.k8s.api.core.v1.Pod") else {
        return;
    };
    let live = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}
    });
    let _ = tidegate_merge::to_field_set(schema, &tr, &config);
    let _ = tidegate_merge::merge(schema, &tr, &live, &config);
});
