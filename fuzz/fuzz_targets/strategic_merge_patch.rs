//! Strategic merge patch of built-in kinds: a Deployment-shaped original and an arbitrary JSON
//! patch (from the input) merge or fail, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

const DEFINITION: &str = "io.k8s.api.apps.v1.Deployment";

fuzz_target!(|data: &[u8]| {
    let Ok(patch) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let original = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a"]},
        "spec": {"replicas": 1, "template": {"spec": {
            "containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}],
                            "env": [{"name": "A", "value": "1"}]}],
            "volumes": [{"name": "v", "emptyDir": {}}]}}}
    });
    let _ = tidegate_merge::smp::apply_builtin(&original, &patch, DEFINITION);
});
