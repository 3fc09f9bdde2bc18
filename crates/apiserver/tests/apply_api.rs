//! Server-side apply, strategic merge patch, dry-run and field validation through kube-rs and raw
//! requests: status codes and messages as kube-apiserver answers them, nothing stored on errors.

mod common;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

fn request(method: &str, path: &str, ct: &str, body: &[u8]) -> axum::http::Request<Vec<u8>> {
    axum::http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", ct)
        .body(body.to_vec())
        .expect("request")
}

#[tokio::test]
async fn apply_records_managers_and_resets() {
    let t = common::start().await;
    let client = t.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    // Apply creates.
    let applied = cms
        .patch(
            "app",
            &PatchParams::apply("flux"),
            &Patch::Apply(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "app", "labels": {"a": "1"}},
                "data": {"k1": "v1", "k2": "v2"}
            })),
        )
        .await
        .expect("apply creates");
    let mf = applied
        .metadata
        .managed_fields
        .clone()
        .expect("managedFields");
    assert_eq!(mf.len(), 1);
    assert_eq!(mf[0].manager.as_deref(), Some("flux"));
    assert_eq!(mf[0].operation.as_deref(), Some("Apply"));
    assert_eq!(mf[0].api_version.as_deref(), Some("v1"));
    assert!(mf[0].time.is_some());
    assert_eq!(
        serde_json::to_value(&mf[0].fields_v1).expect("json"),
        // Applied sets name declared struct fields only through their children (no ".").
        json!({"f:data": {"f:k1": {}, "f:k2": {}}, "f:metadata": {"f:labels": {"f:a": {}}}})
    );
    // Re-applying the same configuration writes nothing.
    let rv = applied.metadata.resource_version.clone();
    let again = cms
        .patch(
            "app",
            &PatchParams::apply("flux"),
            &Patch::Apply(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "app", "labels": {"a": "1"}},
                "data": {"k1": "v1", "k2": "v2"}
            })),
        )
        .await
        .expect("no-op apply");
    assert_eq!(again.metadata.resource_version, rv);
    // Dropping k2 removes it: nobody else owns it.
    let dropped = cms
        .patch(
            "app",
            &PatchParams::apply("flux"),
            &Patch::Apply(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "app", "labels": {"a": "1"}},
                "data": {"k1": "v1"}
            })),
        )
        .await
        .expect("apply");
    assert_eq!(
        dropped
            .data
            .as_ref()
            .map(|d| d.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["k1".to_string()])
    );
    // An update by another manager records an Update entry.
    let mut cm = dropped.clone();
    cm.data
        .get_or_insert_default()
        .insert("k3".into(), "v3".into());
    let updated = cms
        .replace(
            "app",
            &PostParams {
                field_manager: Some("editor".into()),
                ..Default::default()
            },
            &cm,
        )
        .await
        .expect("update");
    let managers: Vec<(String, String)> = updated
        .metadata
        .managed_fields
        .clone()
        .unwrap_or_default()
        .iter()
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.operation.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        managers,
        vec![
            ("flux".to_string(), "Apply".to_string()),
            ("editor".to_string(), "Update".to_string())
        ]
    );
    // A client sending an empty managedFields list resets them.
    let reset = cms
        .patch(
            "app",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"managedFields": []}})),
        )
        .await
        .expect("reset");
    assert!(reset.metadata.managed_fields.is_none(), "{reset:?}");
    // The next apply finds an unmanaged object: everything goes to before-first-apply.
    let next = cms
        .patch(
            "app",
            &PatchParams::apply("flux"),
            &Patch::Apply(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "app"},
                "data": {"k1": "v1"}
            })),
        )
        .await
        .expect("apply");
    let names: Vec<String> = next
        .metadata
        .managed_fields
        .unwrap_or_default()
        .iter()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(
        names.contains(&"before-first-apply".to_string()),
        "{names:?}"
    );
    // k3 is owned by before-first-apply, so it survives flux's apply that never declared it.
    assert_eq!(
        next.data
            .as_ref()
            .and_then(|d| d.get("k3"))
            .map(String::as_str),
        Some("v3")
    );
}

#[tokio::test]
async fn dry_run_patches_and_deletes_store_nothing() {
    let t = common::start().await;
    let client = t.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "d"}, "data": {"a": "1"}}))
            .expect("cm"),
    )
    .await
    .expect("create");
    let before = t.server.state().store.revision();
    let mut pp = PatchParams::apply("x").force();
    pp.dry_run = true;
    let out = cms
        .patch(
            "d",
            &pp,
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}, "data": {"a": "2"}})),
        )
        .await
        .expect("dry-run apply");
    assert_eq!(
        out.data.and_then(|d| d.get("a").cloned()).as_deref(),
        Some("2")
    );
    let pp = PatchParams {
        dry_run: true,
        ..Default::default()
    };
    for patch in [
        Patch::Merge(json!({"data": {"a": "3"}})),
        Patch::Strategic(json!({"data": {"a": "4"}})),
        Patch::Json(
            serde_json::from_value(json!([{"op": "replace", "path": "/data/a", "value": "5"}]))
                .expect("patch"),
        ),
    ] {
        cms.patch("d", &pp, &patch).await.expect("dry-run patch");
    }
    let dp = DeleteParams {
        dry_run: true,
        ..Default::default()
    };
    cms.delete("d", &dp).await.expect("dry-run delete");
    assert_eq!(t.server.state().store.revision(), before, "nothing stored");
    let live = cms.get("d").await.expect("still there");
    assert_eq!(
        live.data.and_then(|d| d.get("a").cloned()).as_deref(),
        Some("1")
    );
}

#[tokio::test]
async fn bad_patches_and_applies() {
    let t = common::start().await;
    let client = t.client().await;
    let crd: Value = serde_json::from_str(
        r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
        "metadata":{"name":"gadgets.example.com"},
        "spec":{"group":"example.com","scope":"Namespaced",
        "names":{"plural":"gadgets","singular":"gadget","kind":"Gadget"},
        "versions":[{"name":"v1","served":true,"storage":true,
        "schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
        "properties":{"items":{"type":"array","items":{"type":"string"}}}}}}}}]}}"#,
    )
    .expect("crd");
    client
        .request_text(request(
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "application/json",
            crd.to_string().as_bytes(),
        ))
        .await
        .expect("crd created");
    for _ in 0..100 {
        if t.server
            .state()
            .registry
            .snapshot()
            .lookup("example.com", "v1", "gadgets")
            .is_some()
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    client
        .request_text(request(
            "POST",
            "/apis/example.com/v1/namespaces/default/gadgets",
            "application/json",
            br#"{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"items":["a"]}}"#,
        ))
        .await
        .expect("gadget created");
    client
        .request_text(request(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            "application/json",
            br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}"#,
        ))
        .await
        .expect("configmap created");
    let before = t.server.state().store.revision();
    let cm = "/api/v1/namespaces/default/configmaps/c";
    let cases: Vec<(axum::http::Request<Vec<u8>>, u16, &str)> = vec![
        (
            request("PATCH", cm, "application/apply-patch+yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"),
            422,
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
        ),
        (
            request("PATCH", &format!("{cm}?fieldManager=m"), "application/apply-patch+yaml", b"apiVersion: v1\nkind: Secret\nmetadata: {name: c}\n"),
            400,
            "invalid object type: /v1, Kind=Secret",
        ),
        (
            request("PATCH", &format!("{cm}?fieldManager=m"), "application/apply-patch+yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, managedFields: [{manager: x}]}\n"),
            400,
            "metadata.managedFields must be nil",
        ),
        (
            request("PATCH", &format!("{cm}?fieldManager=m"), "application/apply-patch+yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c\n"),
            400,
            "error decoding YAML",
        ),
        (
            request("PATCH", &format!("{cm}?fieldManager=m&fieldValidation=Strict"), "application/apply-patch+yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbogus: 1\n"),
            400,
            "strict decoding error: unknown field \"bogus\"",
        ),
        (
            request("PATCH", &format!("{cm}?force=true"), "application/merge-patch+json", b"{}"),
            422,
            "force: Forbidden: may not be specified for non-apply patch",
        ),
        (
            request("PATCH", cm, "application/merge-patch+json", b"{\"data\": "),
            400,
            "error decoding merge patch",
        ),
        (
            request("PATCH", cm, "application/strategic-merge-patch+json", b"[1]"),
            422,
            "invalid JSON document",
        ),
        (
            request("PATCH", "/api/v1/namespaces/default/configmaps/missing", "application/strategic-merge-patch+json", b"{\"data\":{\"a\":\"2\"}}"),
            404,
            "configmaps \"missing\" not found",
        ),
        (
            request("PUT", &format!("{cm}?fieldValidation=Strict"), "application/json", br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1","a":"2"}}"#),
            400,
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: duplicate field \"data.a\"",
        ),
        (
            request("PUT", &format!("{cm}?fieldValidation=Bogus"), "application/json", br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}"#),
            400,
            "fieldValidation: Unsupported value: \"Bogus\"",
        ),
        (
            request("PATCH", "/apis/example.com/v1/namespaces/default/gadgets/g", "application/strategic-merge-patch+json", b"{\"spec\":{\"items\":[\"b\"]}}"),
            415,
            "the body of the request was in an unknown format",
        ),
        (
            request("PATCH", &format!("{cm}?fieldManager=m"), "application/apply-patch+yaml", b"apiVersion: v1\nkind: Pod\nmetadata: {name: c}\nspec:\n  containers:\n  - {name: a, image: x}\n  - {name: a, image: y}\n"),
            400,
            "invalid object type: /v1, Kind=Pod",
        ),
    ];
    common::expect_statuses(&client, cases).await;
    assert_eq!(t.server.state().store.revision(), before, "nothing stored");
    // Apply conflicts answer 409 with FieldManagerConflict causes.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.patch(
        "c",
        &PatchParams::apply("one"),
        &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "1"}})),
    )
    .await
    .expect("first apply");
    let err = cms
        .patch(
            "c",
            &PatchParams::apply("two"),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "2", "b": "2"}})),
        )
        .await
        .expect_err("conflict");
    let kube::Error::Api(s) = err else {
        panic!("expected an API error, got {err:?}")
    };
    assert_eq!(s.code, 409);
    assert_eq!(s.reason, "Conflict");
    // The creator (a raw request without a user agent) owns .data.a as manager "".
    assert_eq!(
        s.message,
        "Apply failed with 3 conflicts: conflicts with \"\" using v1:\n- .data.a\nconflicts with \"one\":\n- .data.a\n- .data.b"
    );
    assert_eq!(s.details.as_ref().map(|d| d.causes.len()), Some(3));
}

/// Server-side apply creates when the object is gone, whatever a concurrent delete does: the
/// existence check and the write are one step, so no apply may answer 404 (kube-apiserver
/// creates in that case).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn apply_racing_a_delete_creates_instead_of_answering_not_found() {
    let t = common::start().await;
    let client = t.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut deleters = Vec::new();
    for _ in 0..2 {
        let cms = cms.clone();
        let stop = stop.clone();
        deleters.push(tokio::spawn(async move {
            let mut deleted = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if cms.delete("race", &DeleteParams::default()).await.is_ok() {
                    deleted += 1;
                }
            }
            deleted
        }));
    }
    let mut appliers = Vec::new();
    for a in 0..3 {
        let cms = cms.clone();
        appliers.push(tokio::spawn(async move {
            let mut failures = Vec::new();
            for i in 0..150 {
                let result = cms
                    .patch(
                        "race",
                        &PatchParams::apply(&format!("applier-{a}")).force(),
                        &Patch::Apply(json!({
                            "apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "race"},
                            "data": {format!("k{a}"): format!("{i}")}
                        })),
                    )
                    .await;
                if let Err(e) = result {
                    failures.push(e.to_string());
                }
            }
            failures
        }));
    }
    let mut failures = Vec::new();
    for a in appliers {
        failures.extend(a.await.expect("applier"));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut deleted = 0;
    for d in deleters {
        deleted += d.await.expect("deleter");
    }
    assert!(failures.is_empty(), "applies failed: {failures:?}");
    assert!(
        deleted > 10,
        "the deletes raced the applies ({deleted} deleted)"
    );
}
