//! Hostile and malformed requests: each gets a clear answer (status and message), none stores
//! anything, none takes the server down, and other clients are served while they run.

mod common;

use serde_json::{Value, json};

fn request(method: &str, path: &str, ct: &str, body: Vec<u8>) -> axum::http::Request<Vec<u8>> {
    axum::http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", ct)
        .body(body)
        .expect("request")
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const CM: &str = "/api/v1/namespaces/default/configmaps/target";

fn nested(open: &str, close: &str, depth: usize, inner: &str) -> Vec<u8> {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth)).into_bytes()
}

fn json_patch(ops: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(&Value::Array(ops)).expect("json")
}

fn alias_bomb() -> String {
    common::alias_bomb(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\n",
        "",
    )
}

fn cases() -> Vec<(axum::http::Request<Vec<u8>>, u16, &'static str)> {
    let cm = |name: &str| {
        serde_json::to_vec(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
        )
        .expect("json")
    };
    let doubling: Vec<Value> = (0..40)
        .map(|i| json!({"op": "copy", "from": "/data", "path": format!("/data/k{i}")}))
        .collect();
    let mut deepening = vec![json!({"op": "add", "path": "/x", "value": 1})];
    for _ in 0..150 {
        deepening.push(json!({"op": "add", "path": "/n", "value": {}}));
        deepening.push(json!({"op": "move", "from": "/x", "path": "/n/x"}));
        deepening.push(json!({"op": "move", "from": "/n", "path": "/x"}));
    }
    let dup_yaml =
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\ndata:\n  a: '1'\n  a: '2'\n";
    vec![
        // Names: multi-byte characters around the length limits (a byte slice panicked here).
        (request("POST", CMS, "application/json", cm(&"é".repeat(200))), 422, "must be no more than 253 characters"),
        (request("POST", CMS, "application/json", cm(&format!("a{}", "€".repeat(100)))), 422, "RFC 1123 subdomain"),
        (request("POST", "/api/v1/namespaces", "application/json", serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ü".repeat(40)}})).expect("json")), 422, "must be no more than 63 characters"),
        (request("POST", CMS, "application/json", cm("a/b")), 422, "metadata.name"),
        // Nesting: far deeper than any decoder accepts, in JSON and flow-style YAML.
        (request("POST", CMS, "application/json", nested("[", "]", 100_000, "1")), 400, "json parse error"),
        (request("POST", CMS, "application/yaml", nested("{a: ", "}", 50_000, "1")), 400, "recursion limit exceeded"),
        // Brackets inside a quoted YAML string (the duplicate-key scanner recursed on them).
        (request("POST", CMS, "application/yaml", [b"{\"a\": ['x ".as_slice(), &vec![b'['; 200_000], b"']}"].concat()), 422, "name or generateName is required"),
        (request("PATCH", &format!("{CM}?fieldManager=m"), "application/apply-patch+yaml", nested("[", "]", 100_000, "1")), 400, "error decoding YAML"),
        (request("PATCH", CM, "application/merge-patch+json", nested("{\"a\":", "}", 100_000, "1")), 400, "error decoding merge patch"),
        (request("PATCH", CM, "application/json-patch+json", nested("[", "]", 100_000, "1")), 400, "error decoding json patch"),
        // Alias expansion.
        (request("POST", CMS, "application/yaml", alias_bomb().into_bytes()), 400, "document contains excessive aliasing"),
        (request("PATCH", &format!("{CM}?fieldManager=m"), "application/apply-patch+yaml", alias_bomb().into_bytes()), 400, "document contains excessive aliasing"),
        // JSON patches that would grow without bound, nest too deep, or replace the object.
        (request("PATCH", CM, "application/json-patch+json", json_patch(doubling)), 422, "accumulated size increase of copy"),
        (request("PATCH", CM, "application/json-patch+json", json_patch(vec![json!({"op": "test", "path": "/data", "value": 1}); 10_001])), 413, "The allowed maximum operations in a JSON patch is 10000, got 10001"),
        (request("PATCH", CM, "application/json-patch+json", json_patch(deepening)), 422, "nests deeper than 100 levels"),
        (request("PATCH", CM, "application/json-patch+json", json_patch(vec![json!({"op": "move", "from": "/metadata/name", "path": "/metadata"}), json!({"op": "test", "path": "/nope", "value": 1})])), 422, "operation '/1' failed"),
        (request("PATCH", CM, "application/json-patch+json", json_patch(vec![json!({"op": "replace", "path": "", "value": 1})])), 400, "not a JSON object"),
        (request("PATCH", CM, "application/json-patch+json", json_patch(vec![json!({"op": "replace", "path": "", "value": [1]})])), 400, "not a JSON object"),
        (request("PATCH", CM, "application/merge-patch+json", b"[1]".to_vec()), 400, "the patch must be a JSON object"),
        (request("PATCH", CM, "application/strategic-merge-patch+json", b"\"x\"".to_vec()), 422, "invalid JSON document"),
        // Duplicate keys, refused under Strict as kube-apiserver words them.
        (request("POST", &format!("{CMS}?fieldValidation=Strict"), "application/yaml", dup_yaml.to_vec()), 400, "line 6: key \"a\" already set in map"),
        (request("PATCH", "/api/v1/namespaces/default/configmaps/dup?fieldManager=m&fieldValidation=Strict", "application/apply-patch+yaml", dup_yaml.to_vec()), 400, "line 6: key \"a\" already set in map"),
        (request("POST", &format!("{CMS}?fieldValidation=Strict"), "application/json", br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup"}}"#.to_vec()), 400, "duplicate field \"metadata.name\""),
        // Sizes.
        (request("POST", CMS, "application/json", vec![b' '; 3 * 1024 * 1024 + 1]), 413, "Request entity too large: limit is 3145728"),
        (request("PATCH", CM, "application/merge-patch+json", vec![b' '; 4 * 1024 * 1024]), 413, "Request entity too large"),
        // Bodies of the wrong type or form.
        (request("POST", CMS, "application/json", b"[]".to_vec()), 400, "the object provided is unrecognized"),
        (request("POST", CMS, "application/json", b"\xff\xfe".to_vec()), 400, "json parse error"),
        (request("POST", CMS, "application/yaml", b"\xff\xfe".to_vec()), 400, "not valid UTF-8"),
        (request("PATCH", &format!("{CM}?fieldManager=m"), "application/apply-patch+yaml", b"- a\n- b\n".to_vec()), 400, "must be a YAML or JSON object"),
        (request("PATCH", &format!("{CM}?fieldManager={}", "m".repeat(200)), "application/apply-patch+yaml", b"{}".to_vec()), 400, "may not be more than 128 bytes"),
        (request("DELETE", CM, "application/json", b"{\"propagationPolicy\": \"Sideways\"}".to_vec()), 400, "Sideways"),
        (request("DELETE", CM, "application/json", b"{\"preconditions\": {\"uid\": \"nope\"}}".to_vec()), 409, "Precondition failed: UID in precondition: nope"),
        // Query parameters.
        (request("GET", &format!("{CMS}?labelSelector=a%20in%20(b"), "application/json", vec![]), 400, "unable to parse requirement: found '', expected: ',' or ')'"),
        (request("GET", &format!("{CMS}?fieldSelector=spec.nope%3Dx"), "application/json", vec![]), 400, "field label not supported"),
        (request("GET", &format!("{CMS}?watch=true&resourceVersion=abc"), "application/json", vec![]), 400, "must be an integer"),
        (request("GET", &format!("{CMS}?dryRun=Sometimes"), "application/json", vec![]), 0, ""),
        (request("POST", &format!("{CMS}?dryRun=Sometimes"), "application/json", cm("dry")), 400, "Invalid dryRun value"),
    ]
    .into_iter()
    .filter(|(_, code, _)| *code != 0)
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_requests_get_clear_answers_and_store_nothing() {
    let t = common::start().await;
    let client = t.client().await;
    t.ok(&["create", "configmap", "target", "--from-literal=k=v"]);
    let before = t.server.state().store.revision();

    // Every other client is served while the hostile requests run.
    let probe = {
        let client = client.clone();
        tokio::spawn(async move {
            let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
                kube::Api::namespaced(client, "default");
            let mut served = 0;
            for _ in 0..50 {
                cms.get("target").await.expect("a plain read is served");
                served += 1;
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            served
        })
    };
    let cases = cases();
    let n = cases.len();
    let mut wrong = Vec::new();
    for (req, code, text) in cases {
        let uri = req.uri().to_string();
        match client.request_text(req).await {
            Err(kube::Error::Api(s)) if s.code == code && s.message.contains(text) => {}
            Err(kube::Error::Api(s)) => wrong.push(format!(
                "{uri}: want {code} {text:?}, got {} {:?}",
                s.code, s.message
            )),
            other => wrong.push(format!("{uri}: want {code}, got {other:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(probe.await.expect("probe"), 50);
    assert!(n >= 35, "{n} cases");
    assert_eq!(
        t.server.state().store.revision(),
        before,
        "nothing was stored"
    );
    let target = t.ok(&["get", "configmap", "target", "-o", "jsonpath={.data.k}"]);
    assert_eq!(target, "v");
}

/// A watch asking for more seconds than a clock holds streams like any other (the deadline
/// overflowed and panicked the request task); past what Go's `strconv.ParseInt` reads, it is
/// kube-apiserver's 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_with_an_enormous_timeout_streams() {
    let t = common::start().await;
    let client = t.client().await;
    let req = axum::http::Request::builder()
        .uri(format!(
            "{CMS}?watch=true&timeoutSeconds=18446744073709551615"
        ))
        .body(Vec::new())
        .expect("request");
    let resp = client
        .send(req.map(kube::client::Body::from))
        .await
        .expect("an answer");
    assert_eq!(resp.status(), 400);
    let req = axum::http::Request::builder()
        .uri(format!(
            "{CMS}?watch=true&timeoutSeconds=9223372036854775807"
        ))
        .body(Vec::new())
        .expect("request");
    let resp = client
        .send(req.map(kube::client::Body::from))
        .await
        .expect("watch starts");
    assert_eq!(resp.status(), 200);
    t.ok(&["create", "configmap", "seen", "--from-literal=k=v"]);
    use http_body_util::BodyExt;
    let mut body = resp.into_body();
    // The namespace's own objects (kube-root-ca.crt) come first, as initial events.
    let mut seen = String::new();
    while !seen.contains("\"seen\"") {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(60), body.frame())
            .await
            .expect("an event arrives")
            .expect("a frame")
            .expect("no error");
        seen.push_str(&String::from_utf8_lossy(frame.data_ref().expect("data")));
    }
    let line = seen
        .lines()
        .find(|l| l.contains("\"seen\""))
        .unwrap_or_default();
    assert!(line.contains("\"ADDED\""), "{line}");
    // The server still answers.
    t.ok(&["get", "configmap", "seen"]);
}

/// Namespaces whose spec or status is not an object no longer panic the update or the delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_with_non_object_spec_or_status_are_handled() {
    let t = common::start().await;
    let client = t.client().await;
    t.ok(&["create", "namespace", "odd"]);
    let ns = "/api/v1/namespaces/odd";
    for (path, body) in [
        (
            format!("{ns}/status"),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "odd"}, "status": "x"}),
        ),
        (
            ns.to_string(),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "odd"}, "spec": "x"}),
        ),
    ] {
        let req = request(
            "PUT",
            &path,
            "application/json",
            serde_json::to_vec(&body).expect("json"),
        );
        match client.request_text(req).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) => assert!(s.code < 500, "{path}: {s:?}"),
            Err(e) => panic!("{path}: {e}"),
        }
    }
    t.ok(&["delete", "namespace", "odd", "--wait=false"]);
    t.ok(&["get", "namespaces"]);
}

/// The data directory and the store are private to their owner.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_and_its_directory_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let t = common::start().await;
    t.ok(&[
        "create",
        "secret",
        "generic",
        "s",
        "--from-literal=password=hunter2",
    ]);
    let dir = t.dir.path().join("data");
    let mode = |p: &std::path::Path| {
        std::fs::metadata(p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&dir), 0o700, "data directory");
    for f in ["state.db", "state.db-wal", "state.db-shm"] {
        let p = dir.join(f);
        if p.exists() {
            assert_eq!(mode(&p), 0o600, "{f}");
        }
    }
    assert_eq!(mode(&dir.join("state.db")), 0o600);
}

/// Hundreds of connections that never start TLS neither lock out a client with a token nor
/// stay open: the server closes them once the handshake timeout has passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_strangers_neither_lock_out_clients_nor_stay() {
    use tokio::io::AsyncReadExt;
    let t = common::start().await;
    let mut idle = Vec::new();
    for _ in 0..500 {
        idle.push(
            tokio::net::TcpStream::connect(t.server.addr)
                .await
                .expect("connect"),
        );
    }
    // A client with a token is served meanwhile.
    t.ok(&["create", "configmap", "served", "--from-literal=k=v"]);
    let client = t.client().await;
    let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(client, "default");
    cms.get("served").await.expect("served");
    // Each idle connection is closed by the server (EOF) after the handshake timeout.
    let deadline = tidegate_apiserver::listen::HANDSHAKE_TIMEOUT * 6;
    for conn in &mut idle {
        let mut buf = [0u8; 1];
        let n = tokio::time::timeout(deadline, conn.read(&mut buf))
            .await
            .expect("the server closes an idle connection")
            .unwrap_or(0);
        assert_eq!(n, 0);
    }
}

/// Strategic merge patches with long lists take time in proportion to their length: 200,000
/// finalizers, and 50,000 containers with their `$setElementOrder`, answer at once (the list
/// merge searched the order list linearly for every comparison: minutes on one CPU).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_lists_in_strategic_merge_patches_merge_in_linear_time() {
    let t = common::start().await;
    let client = t.client().await;
    t.ok(&["create", "configmap", "target", "--from-literal=k=v"]);
    let finalizers: Vec<String> = (0..200_000).map(|i| format!("f{i}")).collect();
    let body = serde_json::to_vec(&json!({"metadata": {"finalizers": finalizers}})).expect("json");
    let req = request(
        "PATCH",
        &format!("{CM}?dryRun=All"),
        "application/strategic-merge-patch+json",
        body,
    );
    let out = client.request_text(req).await.expect("merged");
    let merged: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        merged["metadata"]["finalizers"].as_array().map(Vec::len),
        Some(200_000)
    );
    t.ok(&["create", "deployment", "web", "--image=nginx"]);
    let names: Vec<String> = (0..50_000).map(|i| format!("c{i}")).collect();
    let containers: Vec<Value> = names
        .iter()
        .rev()
        .map(|n| json!({"name": n, "image": "busybox"}))
        .collect();
    let order: Vec<Value> = names.iter().rev().map(|n| json!({"name": n})).collect();
    let body = serde_json::to_vec(&json!({"spec": {"template": {"spec": {
        "containers": containers, "$setElementOrder/containers": order}}}}))
    .expect("json");
    let req = request(
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/web?dryRun=All",
        "application/strategic-merge-patch+json",
        body,
    );
    let out = client.request_text(req).await.expect("merged");
    let merged: Value = serde_json::from_str(&out).expect("json");
    let got = merged["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers");
    // The patch's 50,000 and the Deployment's own container (`nginx`, server-only).
    assert_eq!(got.len(), 50_001);
    let ours: Vec<&str> = got
        .iter()
        .filter_map(|c| c["name"].as_str())
        .filter(|n| n.starts_with('c'))
        .collect();
    let want: Vec<&str> = names.iter().rev().map(String::as_str).collect();
    assert_eq!(ours, want, "ordered as $setElementOrder says");
}
