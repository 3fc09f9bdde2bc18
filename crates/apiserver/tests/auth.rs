//! Identity and the review APIs through real kubectl: `auth can-i`, `auth whoami`,
//! `create token` (a token the server accepts back), `TokenReview`, the issuer's discovery
//! documents; and the pod subresources kubectl uses (`logs`, eviction).

mod common;

use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn reviews_tokens_and_identity() {
    let t = common::start().await;
    assert_eq!(t.ok(&["auth", "can-i", "get", "pods"]).trim(), "yes");
    assert_eq!(
        t.ok(&["auth", "can-i", "delete", "nodes", "--all-namespaces"])
            .trim(),
        "yes"
    );
    let list = t.ok(&["auth", "can-i", "--list"]);
    assert!(list.lines().any(|l| l.starts_with("*.*")), "{list}");
    let whoami = t.ok(&["auth", "whoami", "-o", "json"]);
    let me: Value = serde_json::from_str(&whoami).expect("json");
    assert_eq!(me["status"]["userInfo"]["username"], "admin");
    assert_eq!(me["kind"], "SelfSubjectReview");

    // Every namespace has its default ServiceAccount and the CA bundle.
    t.ok(&["create", "namespace", "team"]);
    let mut ready = false;
    for _ in 0..100 {
        let out = t.ok(&["-n", "team", "get", "sa,cm", "-o", "name"]);
        if out.contains("serviceaccount/default") && out.contains("configmap/kube-root-ca.crt") {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ready, "namespace defaults");
    let ca = t.ok(&[
        "-n",
        "team",
        "get",
        "cm",
        "kube-root-ca.crt",
        "-o",
        "jsonpath={.data.ca\\.crt}",
    ]);
    assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"), "{ca}");

    // A service account token is accepted back as a bearer token.
    t.ok(&["-n", "team", "create", "serviceaccount", "robot"]);
    let token = t.ok(&["-n", "team", "create", "token", "robot", "--duration=20m"]);
    let token = token.trim();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    let as_robot = t.ok(&[
        "--token",
        token,
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
    ]);
    assert_eq!(as_robot, "system:serviceaccount:team:robot");
    let err = t.fails(&["-n", "team", "create", "token", "robot", "--duration=1m"]);
    assert!(
        err.contains("may not specify a duration less than 10 minutes"),
        "{err}"
    );
    let err = t.fails(&["-n", "team", "create", "token", "ghost"]);
    assert!(err.contains("serviceaccounts \"ghost\" not found"), "{err}");

    // TokenReview tells valid from invalid tokens.
    let review = |tok: &str| -> Value {
        let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": tok}});
        let out = t.ok_stdin(&["create", "-f", "-", "-o", "json"], &body.to_string());
        serde_json::from_str(&out).expect("json")
    };
    let ok = review(token);
    assert_eq!(ok["status"]["authenticated"], true, "{ok}");
    assert_eq!(
        ok["status"]["user"]["username"],
        "system:serviceaccount:team:robot"
    );
    let bad = review("not-a-token");
    assert_eq!(bad["status"]["authenticated"], false, "{bad}");

    // Deleting the service account revokes its tokens.
    t.ok(&["-n", "team", "delete", "serviceaccount", "robot"]);
    let err = t.fails(&["--token", token, "get", "pods"]);
    assert!(err.contains("Unauthorized"), "{err}");
    assert_eq!(review(token)["status"]["authenticated"], false);

    // The issuer's documents.
    let oidc: Value =
        serde_json::from_str(&t.ok(&["get", "--raw", "/.well-known/openid-configuration"]))
            .expect("json");
    assert_eq!(
        oidc["issuer"],
        "https://kubernetes.default.svc.cluster.local"
    );
    let jwks: Value =
        serde_json::from_str(&t.ok(&["get", "--raw", "/openid/v1/jwks"])).expect("json");
    assert_eq!(jwks["keys"][0]["alg"], "ES256");

    // Subresources nothing serves are not advertised.
    let resources = t.ok(&["get", "--raw", "/api/v1"]);
    assert!(resources.contains("\"pods/log\"") && resources.contains("\"serviceaccounts/token\""));
    assert!(
        !resources.contains("\"pods/exec\""),
        "pods/exec is not served"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn logs_eviction_and_delete_answers() {
    let t = common::start_simulated(100).await;
    t.ok(&["run", "app", "--image=nginx:1.27", "--restart=Never"]);
    let mut log = String::new();
    for _ in 0..100 {
        let out = t.kubectl(&["logs", "app"]);
        if out.status.success() {
            log = String::from_utf8_lossy(&out.stdout).into_owned();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        log.contains("container app started from image nginx:1.27"),
        "{log}"
    );
    let stamped = t.ok(&["logs", "app", "--timestamps"]);
    assert!(stamped.starts_with("20"), "{stamped}");
    let err = t.fails(&["logs", "app", "-c", "nope"]);
    assert!(
        err.contains("container nope is not valid for pod app"),
        "{err}"
    );

    // Eviction deletes the pod.
    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "app", "namespace": "default"}});
    let out = t.ok_stdin(
        &[
            "create",
            "--raw",
            "/api/v1/namespaces/default/pods/app/eviction",
            "-f",
            "-",
        ],
        &eviction.to_string(),
    );
    assert!(out.contains("\"Success\""), "{out}");
    let gone = t.fails(&["get", "pod", "app"]);
    assert!(gone.contains("not found"), "{gone}");

    // DELETE answers a Status for most kinds, the object for pods (as kube-apiserver does).
    t.ok(&["create", "configmap", "c1", "--from-literal=a=b"]);
    let status = t.ok(&[
        "delete",
        "--raw",
        "/api/v1/namespaces/default/configmaps/c1",
    ]);
    let status: Value = serde_json::from_str(&status).expect("json");
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["status"], "Success");
    assert_eq!(status["details"]["name"], "c1");
    t.ok(&["run", "p2", "--image=busybox"]);
    let pod = t.ok(&["delete", "--raw", "/api/v1/namespaces/default/pods/p2"]);
    let pod: Value = serde_json::from_str(&pod).expect("json");
    assert_eq!(pod["kind"], "Pod", "{pod}");
}

/// Discovery and OpenAPI documents carry ETags; sent back, they answer 304.
#[tokio::test(flavor = "multi_thread")]
async fn discovery_documents_have_etags() {
    let t = common::start().await;
    let client = t.client().await;
    for path in ["/apis", "/api/v1", "/openapi/v3", "/openapi/v2"] {
        let get = |etag: Option<&str>| {
            let mut b = axum::http::Request::builder().uri(path);
            if let Some(e) = etag {
                b = b.header("if-none-match", e);
            }
            b.body(Vec::new()).expect("request")
        };
        let first = client
            .send(get(None).map(kube::client::Body::from))
            .await
            .expect("first");
        assert_eq!(first.status(), 200, "{path}");
        let etag = first
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("{path} has an etag"))
            .to_string();
        let again = client
            .send(get(Some(&etag)).map(kube::client::Body::from))
            .await
            .expect("again");
        assert_eq!(again.status(), 304, "{path}");
        let stale = client
            .send(get(Some("\"old\"")).map(kube::client::Body::from))
            .await
            .expect("stale");
        assert_eq!(stale.status(), 200, "{path}");
    }
}

/// `kubectl certificate approve` goes through the `approval` subresource; the request records
/// who asked.
#[tokio::test(flavor = "multi_thread")]
async fn certificate_signing_requests_are_approved() {
    let t = common::start().await;
    // A CSR body is opaque to the server (it is not signed here); any PEM-looking request does.
    let request = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n",
    );
    let csr = json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": "alice"},
        "spec": {"request": request, "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"]}});
    t.ok_stdin(&["create", "-f", "-"], &csr.to_string());
    let row = t.ok(&["get", "csr", "alice"]);
    assert!(row.contains("admin") && row.contains("Pending"), "{row}");
    assert!(
        t.ok(&["certificate", "approve", "alice"])
            .contains("approved")
    );
    let row = t.ok(&["get", "csr", "alice"]);
    assert!(row.contains("Approved"), "{row}");
    let err = t.fails(&["certificate", "deny", "alice"]);
    assert!(err.contains("already Approved"), "{err}");
}
