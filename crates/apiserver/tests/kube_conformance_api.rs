//! Answers recorded from a real kube-apiserver 1.36 about the API's mechanics: status shapes,
//! watches and lists at a revision, health, anonymous requests, connect subresources, patches
//! that do not decode, custom resources. Each is kept as data; the embedded server must answer
//! the same.

mod common;
mod raw;

use raw::{get_once, raw, raw_json};
use serde_json::{Value, json};
use std::time::Duration;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn cm(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
}

/// A merge patch whose result does not decode, or (Strict) holds an unknown field, is kube's
/// 422 on `patch` carrying the patched object.
#[tokio::test(flavor = "multi_thread")]
async fn patches_that_do_not_decode() {
    let t = common::start().await;
    let client = t.client().await;
    t.ok(&["create", "deployment", "web", "--image=nginx"]);
    let (code, body) = raw_json(
        &client,
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/web",
        Some(json!({"spec": {"replicas": "two"}})),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    let message = body["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with(" \"\" is invalid: patch: Invalid value: \"{"),
        "{message}"
    );
    assert!(
        message.ends_with("json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
        "{message}"
    );
    assert_eq!(body["details"]["causes"][0]["field"], "patch");
    let (code, body) = raw_json(
        &client,
        "PATCH",
        &format!("{CMS}/kube-root-ca.crt?fieldValidation=Strict"),
        Some(json!({"bogus": 1})),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("strict decoding error: unknown field \"bogus\"")),
        "{body}"
    );
}

/// Status and review answers in kube's shape: every 404 has `details`, reviews have metadata.
#[tokio::test(flavor = "multi_thread")]
async fn status_and_review_shapes() {
    let t = common::start().await;
    let client = t.client().await;
    let (code, body) = raw_json(&client, "GET", "/api/v1/namespaces/default/nothings", None).await;
    assert_eq!(code, 404);
    assert_eq!(body["details"], json!({}), "{body}");
    let (code, body) = raw_json(
        &client,
        "GET",
        "/api/v1/namespaces/default/pods/none/ephemeralcontainers",
        None,
    )
    .await;
    assert_eq!(code, 404);
    assert_eq!(
        body["details"],
        json!({"name": "none", "kind": "pods"}),
        "{body}"
    );

    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}});
    let (code, body) = raw_json(
        &client,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        Some(review),
    )
    .await;
    assert_eq!(code, 201);
    assert_eq!(body["metadata"], json!({}), "{body}");
    assert_eq!(body["status"]["allowed"], true, "{body}");
}

/// Watches: history older than the server's window is a watch ERROR event carrying 410
/// Expired; bookmarks come two seconds before the deadline; an object leaving the selector is
/// reported DELETED with the last state that matched.
#[tokio::test(flavor = "multi_thread")]
async fn watch_semantics_client_go_relies_on() {
    let t = common::start().await;
    let client = t.client().await;
    let (code, body) = raw(
        &client,
        "GET",
        &format!("{CMS}?watch=true&resourceVersion=1"),
        None,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let event: Value = serde_json::from_str(body.trim()).expect("one event");
    assert_eq!(event["type"], "ERROR", "{body}");
    assert_eq!(event["object"]["code"], 410);
    assert_eq!(event["object"]["reason"], "Expired");
    assert!(
        event["object"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("too old resource version: 1 (")),
        "{body}"
    );

    // A bookmark before a five-second watch ends.
    let (_, list) = raw_json(&client, "GET", CMS, None).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let started = std::time::Instant::now();
    let (code, body) = raw(
        &client,
        "GET",
        &format!("{CMS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=5"),
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert!(
        started.elapsed() >= Duration::from_secs(4),
        "the watch ran its course"
    );
    assert!(body.contains("\"type\":\"BOOKMARK\""), "{body}");

    // Leaving the selector: DELETED with the labels that matched, at the change's revision.
    assert_eq!(
        raw(
            &client,
            "POST",
            CMS,
            Some(cm("leaver", json!({"team": "a"})))
        )
        .await
        .0,
        201
    );
    let (_, list) = raw_json(&client, "GET", CMS, None).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let watch = {
        let client = client.clone();
        tokio::spawn(async move {
            raw(
                &client,
                "GET",
                &format!(
                    "{CMS}?watch=true&resourceVersion={rv}&labelSelector=team%3Da&timeoutSeconds=2"
                ),
                None,
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (code, patched) = raw_json(
        &client,
        "PATCH",
        &format!("{CMS}/leaver"),
        Some(json!({"metadata": {"labels": {"team": "b"}}})),
    )
    .await;
    assert_eq!(code, 200);
    let (_, body) = watch.await.expect("watch");
    let deleted: Value = body
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("event"))
        .find(|e| e["type"] == "DELETED")
        .unwrap_or_else(|| panic!("no DELETED event: {body}"));
    assert_eq!(
        deleted["object"]["metadata"]["labels"]["team"], "a",
        "{deleted}"
    );
    assert_eq!(
        deleted["object"]["metadata"]["resourceVersion"],
        patched["metadata"]["resourceVersion"]
    );
}

/// Lists at a revision: `Exact` reads the past; a continue token's pages are one snapshot;
/// `resourceVersion=0` ignores `limit`; a full page with more keys after it hands out a token
/// even when the rest does not match the selector.
#[tokio::test(flavor = "multi_thread")]
async fn lists_at_a_revision_as_kube_serves_them() {
    let t = common::start().await;
    let client = t.client().await;
    for (name, team) in [("a", "x"), ("b", "x"), ("c", "y")] {
        assert_eq!(
            raw(&client, "POST", CMS, Some(cm(name, json!({"team": team}))))
                .await
                .0,
            201
        );
    }
    let (_, list) = raw_json(&client, "GET", CMS, None).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let names = |l: &Value| -> Vec<String> {
        l["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
            .filter(|n| n != common::ROOT_CA)
            .collect()
    };
    assert_eq!(names(&list), ["a", "b", "c"]);

    // Paged at rv, then the data changes: the next page is still the list at rv.
    let (_, page) = raw_json(&client, "GET", &format!("{CMS}?limit=2"), None).await;
    let token = page["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    assert_eq!(
        raw(&client, "DELETE", &format!("{CMS}/c"), None).await.0,
        200
    );
    assert_eq!(
        raw(
            &client,
            "PATCH",
            &format!("{CMS}/kube-root-ca.crt"),
            Some(json!({"metadata": {"labels": {"touched": "yes"}}}))
        )
        .await
        .0,
        200
    );
    let (code, next) = raw_json(
        &client,
        "GET",
        &format!("{CMS}?limit=2&continue={token}"),
        None,
    )
    .await;
    assert_eq!(code, 200, "{next}");
    assert!(
        names(&next).contains(&"c".to_string()),
        "the deleted object is still in the snapshot: {next}"
    );
    assert_eq!(
        next["metadata"]["resourceVersion"],
        page["metadata"]["resourceVersion"]
    );

    // Exact at the old revision: the state then, with c; now c is gone.
    let (code, then) = raw_json(
        &client,
        "GET",
        &format!("{CMS}?resourceVersion={rv}&resourceVersionMatch=Exact"),
        None,
    )
    .await;
    assert_eq!(code, 200, "{then}");
    assert_eq!(names(&then), ["a", "b", "c"]);
    assert_eq!(then["metadata"]["resourceVersion"], json!(rv));
    let (_, now) = raw_json(&client, "GET", CMS, None).await;
    assert_eq!(names(&now), ["a", "b"]);
    // Before the server's history: 410.
    let (code, body) = raw_json(
        &client,
        "GET",
        &format!("{CMS}?resourceVersion=1&resourceVersionMatch=Exact"),
        None,
    )
    .await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (410, Some("Expired")),
        "{body}"
    );
    // Ahead of the store: kube's 504 asking to retry.
    let (code, body) = get_once(
        &t,
        &format!("{CMS}?resourceVersion=999999999&resourceVersionMatch=NotOlderThan"),
    );
    assert_eq!(code, 504, "{body}");
    assert!(
        body["message"].as_str().is_some_and(
            |m| m.starts_with("Timeout: Too large resource version: 999999999, current: ")
        ),
        "{body}"
    );
    assert_eq!(
        body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    assert_eq!(body["details"]["retryAfterSeconds"], 1);
    // resourceVersionMatch without resourceVersion: 422.
    assert_eq!(
        raw(
            &client,
            "GET",
            &format!("{CMS}?resourceVersionMatch=NotOlderThan"),
            None
        )
        .await
        .0,
        422
    );

    // resourceVersion=0 is served whole, limit or not.
    let (_, all) = raw_json(
        &client,
        "GET",
        &format!("{CMS}?resourceVersion=0&limit=1"),
        None,
    )
    .await;
    assert_eq!(names(&all), ["a", "b"]);
    assert!(all["metadata"].get("continue").is_none(), "{all}");

    // A full page of matches with keys after it: a continue token (the next page is empty).
    let (_, page) = raw_json(
        &client,
        "GET",
        &format!("{CMS}?limit=2&labelSelector=team%3Dx"),
        None,
    )
    .await;
    assert_eq!(names(&page), ["a", "b"]);
    let token = page["metadata"]["continue"]
        .as_str()
        .expect("kube hands out a token on the last full page");
    let (_, rest) = raw_json(
        &client,
        "GET",
        &format!("{CMS}?limit=2&labelSelector=team%3Dx&continue={token}"),
        None,
    )
    .await;
    assert!(names(&rest).is_empty(), "{rest}");
    assert!(rest["metadata"].get("continue").is_none(), "{rest}");
}

/// `/readyz?verbose` and friends list their checks as kube does.
#[tokio::test(flavor = "multi_thread")]
async fn health_endpoints_list_checks() {
    let t = common::start().await;
    let out = t.ok(&["get", "--raw", "/readyz?verbose"]);
    assert!(
        out.starts_with("[+]ping ok\n[+]log ok\n[+]etcd ok\n"),
        "{out}"
    );
    assert!(out.trim_end().ends_with("readyz check passed"), "{out}");
    let out = t.ok(&["get", "--raw", "/livez?verbose"]);
    assert!(out.trim_end().ends_with("livez check passed"), "{out}");
    assert_eq!(t.ok(&["get", "--raw", "/healthz/etcd"]), "ok");
}

/// Without credentials a request is `system:anonymous` (RBAC then answers 403), and
/// `/metrics` needs rights.
#[tokio::test(flavor = "multi_thread")]
async fn anonymous_requests_are_judged_by_rbac() {
    let t = common::start_with(tidegate_apiserver::Config {
        authorization: tidegate_apiserver::AuthorizationMode::Rbac,
        ..Default::default()
    })
    .await;
    // A client of the admin kubeconfig with its credentials removed (kube-rs sends nothing;
    // kubectl would prompt for a password instead).
    let mut kc = kube::config::Kubeconfig::from_yaml(&t.server.kubeconfig).expect("kubeconfig");
    for user in kc.auth_infos.iter_mut() {
        user.auth_info = Some(Default::default());
    }
    let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .expect("config");
    let anon = kube::Client::try_from(cfg).expect("client");
    let (code, body) = raw_json(&anon, "GET", "/api", None).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/api\""
    );
    let (code, body) = raw_json(&anon, "GET", "/metrics", None).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/metrics\""
    );
    // Health and version stay public (system:public-info-viewer).
    assert_eq!(
        raw(&anon, "GET", "/readyz", None).await,
        (200, "ok".to_string())
    );
    assert_eq!(raw(&anon, "GET", "/version", None).await.0, 200);
    // The admin still reads metrics.
    assert!(
        t.ok(&["get", "--raw", "/metrics"])
            .contains("apiserver_request_total")
    );
}

/// Subresources that need a kubelet answer as kube does without one; ephemeral containers are
/// served, so `kubectl debug` works (it crashed on our bare 404).
#[tokio::test(flavor = "multi_thread")]
async fn connect_subresources_and_kubectl_debug() {
    let t = common::start_simulated(50).await;
    let client = t.client().await;
    t.ok(&["run", "bare", "--image=nginx"]);
    t.ok(&["create", "deployment", "web", "--image=nginx"]);
    t.ok(&["create", "service", "clusterip", "lonely", "--tcp=80:8080"]);
    let resources = t.ok(&["get", "--raw", "/api/v1"]);
    for sub in [
        "pods/exec",
        "pods/ephemeralcontainers",
        "services/proxy",
        "namespaces/finalize",
    ] {
        assert!(
            resources.contains(&format!("\"{sub}\"")),
            "{sub} advertised"
        );
    }
    // A pod nothing scheduled.
    let (code, body) = raw_json(
        &client,
        "POST",
        "/api/v1/namespaces/default/pods/bare/exec?command=ls&stdout=true",
        None,
    )
    .await;
    assert_eq!(
        (code, body["message"].as_str()),
        (400, Some("pod bare does not have a host assigned")),
        "{body}"
    );
    // The Deployment's pod is placed on the simulated node, where nothing listens.
    let mut pod = String::new();
    for _ in 0..100 {
        pod = t.ok(&[
            "get",
            "pod",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ]);
        if !pod.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!pod.is_empty(), "the simulator makes the pod");
    let (code, body) = raw_json(
        &client,
        "POST",
        &format!("/api/v1/namespaces/default/pods/{pod}/exec?command=ls&stdout=true"),
        None,
    )
    .await;
    assert_eq!(code, 500, "{body}");
    assert!(body.get("reason").is_none(), "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("error dialing backend: dial tcp ")
                && m.ends_with(":10250: connect: connection refused")),
        "{body}"
    );
    // (kubectl: kube-rs retries a 503.)
    let out = t.kubectl(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/services/lonely/proxy/",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (ServiceUnavailable): no endpoints available for service \"lonely\""
    );

    let out = t.kubectl(&["debug", "pod/bare", "--image=busybox", "--container=dbg"]);
    assert!(
        out.status.success(),
        "kubectl debug: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        t.ok(&[
            "get",
            "pod",
            "bare",
            "-o",
            "jsonpath={.spec.ephemeralContainers[0].name}"
        ]),
        "dbg"
    );
    // Once added, an ephemeral container stays as it is.
    let (code, body) = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/pods/bare/ephemeralcontainers",
        Some(json!({"spec": {"ephemeralContainers": null}})),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body.contains("existing ephemeral containers \\\"dbg\\\" may not be removed"),
        "{body}"
    );
}

/// Custom resources: nulls where the schema allows none are dropped (and defaulted); a
/// blocking schema error skips the validation rules, saying so; a CRD gets its cleanup
/// finalizer only when its deletion starts.
#[tokio::test(flavor = "multi_thread")]
async fn custom_resources_as_kube_treats_them() {
    let t = common::start().await;
    let client = t.client().await;
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "selectableFields": [{"jsonPath": ".spec.color"}],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object",
                        "x-kubernetes-validations": [{"rule": "self.size < 10", "message": "too big"}],
                        "properties": {
                            "color": {"type": "string", "default": "red"},
                            "note": {"type": "string"},
                            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["name"],
                                "items": {"type": "object", "required": ["name"],
                                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
                            "size": {"type": "integer"}}}}}}}]}});
    let (code, body) = raw_json(
        &client,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        Some(crd),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert!(
        body["metadata"].get("finalizers").is_none(),
        "no finalizer at creation: {body}"
    );
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let mut served = false;
    for _ in 0..100 {
        if raw(&client, "GET", widgets, None).await.0 == 200 {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(served, "the CRD is served");
    let w = |name: &str, spec: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": spec})
    };
    let (code, body) = raw_json(
        &client,
        "POST",
        widgets,
        Some(w("nulls", json!({"color": null, "note": null, "size": 3}))),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["spec"], json!({"color": "red", "size": 3}), "{body}");

    // selectableFields serve field selectors.
    let (code, body) = raw_json(
        &client,
        "GET",
        &format!("{widgets}?fieldSelector=spec.color%3Dred"),
        None,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["items"].as_array().map(Vec::len), Some(1), "{body}");
    let (code, body) = raw_json(
        &client,
        "GET",
        &format!("{widgets}?fieldSelector=spec.color%3Dblue"),
        None,
    )
    .await;
    assert_eq!(
        (code, body["items"].as_array().map(Vec::len)),
        (200, Some(0)),
        "{body}"
    );
    let (code, _) = raw_json(
        &client,
        "GET",
        &format!("{widgets}?fieldSelector=spec.size%3D3"),
        None,
    )
    .await;
    assert_eq!(code, 400, "only the selectable fields");

    let (code, body) = raw_json(
        &client,
        "POST",
        widgets,
        Some(w("bad", json!({"size": "x"}))),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    let message = body["message"].as_str().unwrap_or("");
    assert!(
        message.ends_with("<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"),
        "{message}"
    );
    assert!(!message.contains("too big"), "{message}");
    // A list-map key twice.
    let (code, body) = raw_json(
        &client,
        "POST",
        widgets,
        Some(w(
            "dup",
            json!({"size": 1, "ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]}),
        )),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Widget.example.com \"dup\" is invalid: spec.ports[1]: Duplicate value: {\"name\":\"a\"}"
    );
    // A custom resource's completed delete answers a Status.
    let (code, body) = raw_json(&client, "DELETE", &format!("{widgets}/nulls"), None).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        (body["kind"].as_str(), body["status"].as_str()),
        (Some("Status"), Some("Success")),
        "{body}"
    );
    // Without a blocking error the rule runs.
    let (code, body) = raw_json(
        &client,
        "POST",
        widgets,
        Some(w("big", json!({"size": 12}))),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("too big")),
        "{body}"
    );
}

/// A deprecated CRD version warns every request, in kube's default words.
#[tokio::test(flavor = "multi_thread")]
async fn deprecated_crd_versions_warn() {
    let t = common::start().await;
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": false, "deprecated": true, "schema": schema},
                {"name": "v1", "served": true, "storage": true, "schema": schema}]}});
    t.ok_stdin(&["apply", "-f", "-"], &crd.to_string());
    t.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/gadgets.example.com",
    ]);
    let out = t.kubectl(&["get", "gadgets.v1beta1.example.com"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "Warning: example.com/v1beta1 Gadget is deprecated; use example.com/v1 Gadget"
        ),
        "{err}"
    );
    let out = t.kubectl(&["get", "gadgets.v1.example.com"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("deprecated"));
    // The OpenAPI document has the list type beside the kind.
    let doc: Value = serde_json::from_str(&t.ok(&["get", "--raw", "/openapi/v2"])).expect("json");
    assert_eq!(
        doc["definitions"]["com.example.v1.GadgetList"]["x-kubernetes-group-version-kind"][0]["kind"],
        "GadgetList"
    );
    assert_eq!(
        doc["definitions"]["com.example.v1.GadgetList"]["properties"]["items"]["items"]["$ref"],
        "#/definitions/com.example.v1.Gadget"
    );
}
