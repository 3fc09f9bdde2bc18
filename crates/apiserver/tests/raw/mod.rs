//! Raw requests for tests that check answers byte for byte, whatever their status code.
#![allow(dead_code)]

use super::common::TestServer;
use http_body_util::BodyExt;
use serde_json::Value;

/// A raw request through the test client: status and body, whatever the code.
pub async fn raw(
    client: &kube::Client,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, String) {
    let ct = if method == "PATCH" {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    let req = axum::http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", ct)
        .body(kube::client::Body::from(
            body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
        ))
        .expect("request");
    let resp = client.send(req).await.expect("request sent");
    let code = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (code, String::from_utf8_lossy(&bytes).into_owned())
}

pub async fn raw_json(
    client: &kube::Client,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let (code, text) = raw(client, method, path, body).await;
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}"));
    (code, v)
}

/// A GET without any client's retries (kube-rs and client-go retry a 504 or 503): Python's
/// urllib, trusting the server's CA, with the admin token.
pub fn get_once(t: &TestServer, path: &str) -> (u16, Value) {
    let kc: Value = yaml_serde::from_str(&t.server.kubeconfig).expect("kubeconfig");
    let ca = kc["clusters"][0]["cluster"]["certificate-authority-data"]
        .as_str()
        .expect("ca");
    let token = kc["users"][0]["user"]["token"].as_str().expect("token");
    let script = r#"
import base64, json, ssl, sys, urllib.request, urllib.error
url, ca, token = sys.argv[1], sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cadata=base64.b64decode(ca).decode())
req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
try:
    resp = urllib.request.urlopen(req, context=ctx)
    print(resp.status); print(resp.read().decode())
except urllib.error.HTTPError as e:
    print(e.code); print(e.read().decode())
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script, &format!("{}{path}", t.server.url), ca, token])
        .output()
        .expect("python3 runs (CI installs it)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (code, body) = text
        .split_once('\n')
        .unwrap_or_else(|| panic!("python3: {text}{}", String::from_utf8_lossy(&out.stderr)));
    (
        code.trim().parse().expect("status code"),
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}")),
    )
}
