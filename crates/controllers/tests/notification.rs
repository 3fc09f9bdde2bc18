//! The notification-controller's event side against the embedded API server: Flux's
//! event-server cases (source matching, inclusion and exclusion lists, wildcards, labels,
//! cross-namespace refusal), its status codes (202, 400, 413, 429), what providers receive
//! (generic with metadata combined and cleaned, HMAC-signed, Slack-shaped), failed sends
//! recorded as `NotificationDispatchFailed` with the token masked, and events posted by a
//! controller's recorder arriving at a sink.

mod source_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use source_support::common;

const NS: &str = "foo-ns";

/// What the sink received: path, headers, body.
type Seen = Arc<Mutex<Vec<(String, HeaderMap, Bytes)>>>;

/// An HTTP server recording every request; `/fail` answers 400 with the request's
/// Authorization header as body.
async fn sink() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let rec = seen.clone();
    let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
        let rec = rec.clone();
        async move {
            let auth = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            rec.lock()
                .unwrap()
                .push((uri.path().to_string(), headers, body));
            if uri.path() == "/fail" {
                (StatusCode::BAD_REQUEST, format!("denied for {auth}"))
            } else {
                (StatusCode::OK, String::new())
            }
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await });
    (url, seen)
}

struct Env {
    server: common::TestServer,
    events: String,
    client: kube::Client,
    http: reqwest::Client,
    sink: String,
    seen: Seen,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Env {
    fn apply(&self, yaml: &str) {
        self.server.ok_stdin(&["apply", "-f", "-"], yaml);
    }

    async fn post(&self, body: impl Into<reqwest::Body>) -> u16 {
        self.http
            .post(&self.events)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    async fn post_event(&self, e: &Value) -> u16 {
        self.post(serde_json::to_vec(e).unwrap()).await
    }

    fn take(&self) -> Vec<(String, HeaderMap, Bytes)> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }

    /// Waits up to `max` for a request to reach the sink.
    async fn received(&self, max: Duration) -> Vec<(String, HeaderMap, Bytes)> {
        let deadline = tokio::time::Instant::now() + max;
        while tokio::time::Instant::now() < deadline {
            if !self.seen.lock().unwrap().is_empty() {
                // Give concurrent sends a moment to land too.
                tokio::time::sleep(Duration::from_millis(100)).await;
                return self.take();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Vec::new()
    }

    /// Warning events recorded on an Alert.
    fn alert_events(&self, alert: &str) -> Vec<(String, String)> {
        let list: Value = serde_json::from_str(&self.server.ok(&[
            "get",
            "events",
            "-n",
            NS,
            "--field-selector",
            &format!("involvedObject.name={alert},involvedObject.kind=Alert"),
            "-o",
            "json",
        ]))
        .unwrap();
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["reason"].as_str().unwrap_or_default().to_string(),
                    e["message"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// Applies an Alert and waits until the server's cache has it (an event it matches then
    /// reaches the sink).
    async fn settle(&self) {
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
}

async fn start(options: tidegate_controllers::notification::Options) -> Env {
    let server = common::start().await;
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/alerts.notification.toolkit.fluxcd.io",
        "crd/providers.notification.toolkit.fluxcd.io",
        "crd/gitrepositories.source.toolkit.fluxcd.io",
    ]);
    server.ok(&["create", "namespace", NS]);
    let kc = kube::config::Kubeconfig::from_yaml(&server.server.kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let events = format!("http://{}/", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(tidegate_controllers::notification::run_event_server(
        client.clone(),
        options,
        listener,
        async {
            let _ = rx.await;
        },
    ));
    let (sink, seen) = sink().await;
    Env {
        server,
        events,
        client,
        http: tidegate_source::tls::http_client(),
        sink,
        seen,
        _stop: tx,
    }
}

fn base_event() -> Value {
    json!({
        "involvedObject": {"kind": "Bucket", "name": "hyacinth", "namespace": NS},
        "severity": "info",
        "timestamp": "2026-11-27T00:00:00Z",
        "message": "well that happened",
        "reason": "event-happened",
        "reportingController": "source-controller",
    })
}

/// Flux's `TestEventServer` cases, with its Alert, Provider and GitRepositories, and the
/// cross-namespace lockdown on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_server_cases_as_flux() {
    let env = start(tidegate_controllers::notification::Options {
        no_cross_namespace_refs: true,
        ..Default::default()
    })
    .await;
    env.apply(&format!(
        r#"apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {{name: provider-foo, namespace: {NS}}}
spec: {{type: generic, address: "{}/hook"}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: podinfo, namespace: {NS}, labels: {{app: podinfo}}}}
spec: {{interval: 1h, url: "https://example.com/podinfo.git", suspend: true}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: podinfo-two, namespace: {NS}, labels: {{app: other}}}}
spec: {{interval: 1h, url: "https://example.com/podinfo.git", suspend: true}}
"#,
        env.sink
    ));
    // (name, inclusion, exclusion, changes to the base event, forwarded)
    type Case = (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
        Value,
        bool,
    );
    let cases: Vec<Case> = vec![
        ("forwards when source is a match", &[], &[], json!({}), true),
        (
            "drops event when source Kind does not match",
            &[],
            &[],
            json!({"kind": "GitRepository"}),
            false,
        ),
        (
            "drops event when source name does not match",
            &[],
            &[],
            json!({"name": "slop"}),
            false,
        ),
        (
            "drops event when source namespace does not match",
            &[],
            &[],
            json!({"namespace": "all-buckets"}),
            false,
        ),
        (
            "forwards when message matches inclusion list",
            &["^included"],
            &[],
            json!({"message": "included"}),
            true,
        ),
        (
            "drops when message does not match inclusion list",
            &["^included"],
            &[],
            json!({"message": "not included"}),
            false,
        ),
        (
            "drops event that is matched by exclusion",
            &[],
            &["doesnotoccur", "excluded"],
            json!({"message": "this is excluded"}),
            false,
        ),
        (
            "drops when message matches inclusion and exclusion list",
            &["^included"],
            &["excluded"],
            json!({"message": "included excluded"}),
            false,
        ),
        (
            "forwards events when name wildcard is used",
            &[],
            &[],
            json!({"kind": "Kustomization", "name": "test", "message": "test"}),
            true,
        ),
        (
            "forwards events when the label matches",
            &[],
            &[],
            json!({"kind": "GitRepository", "name": "podinfo", "apiVersion": "source.toolkit.fluxcd.io/v1", "message": "test"}),
            true,
        ),
        (
            "drops events when the labels don't match",
            &[],
            &[],
            json!({"kind": "GitRepository", "name": "podinfo-two", "apiVersion": "source.toolkit.fluxcd.io/v1", "message": "test"}),
            false,
        ),
        (
            "drops events for cross-namespace sources",
            &[],
            &[],
            json!({"kind": "Kustomization", "name": "test", "namespace": "test", "message": "test"}),
            false,
        ),
    ];
    for (name, inclusion, exclusion, change, forwarded) in cases {
        let alert = json!({
            "apiVersion": "notification.toolkit.fluxcd.io/v1beta3",
            "kind": "Alert",
            "metadata": {"name": "alert-foo", "namespace": NS},
            "spec": {
                "providerRef": {"name": "provider-foo"},
                "eventSeverity": "info",
                "eventSources": [
                    {"kind": "Bucket", "name": "hyacinth", "namespace": NS},
                    {"kind": "Kustomization", "name": "*"},
                    {"kind": "GitRepository", "name": "*", "matchLabels": {"app": "podinfo"}},
                    {"kind": "Kustomization", "name": "*", "namespace": "test"},
                ],
                "inclusionList": inclusion,
                "exclusionList": exclusion,
            }
        });
        env.apply(&alert.to_string());
        env.settle().await;
        env.take();
        let mut event = base_event();
        for (k, v) in change.as_object().unwrap() {
            if k == "message" {
                event["message"] = v.clone();
            } else {
                event["involvedObject"][k] = v.clone();
            }
        }
        assert_eq!(env.post_event(&event).await, 202, "{name}");
        let got = env
            .received(Duration::from_secs(if forwarded { 3 } else { 1 }))
            .await;
        assert_eq!(!got.is_empty(), forwarded, "{name}: {got:?}");
        if forwarded {
            let body: Value = serde_json::from_slice(&got[0].2).unwrap();
            assert_eq!(body["message"], event["message"], "{name}");
            assert_eq!(got[0].1["gotk-component"], "source-controller", "{name}");
        }
        env.server.ok(&["delete", "alert", "alert-foo", "-n", NS]);
    }
}

/// Status codes: 400 for a body that is not an event, 413 over 3 MiB, 429 for a duplicate
/// (same object, message and revision) within the interval, 202 otherwise — also when no
/// Alert matches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_codes_and_rate_limit() {
    let env = start(Default::default()).await;
    assert_eq!(env.post("not json").await, 400);
    assert_eq!(
        env.post(r#"{"involvedObject":{"kind":"Bucket","name":"b","namespace":"x"},"message":"no timestamp"}"#)
            .await,
        202,
        "missing fields read as empty, as Go's decoder reads them"
    );
    assert_eq!(env.post(vec![b' '; 3 * 1024 * 1024 + 1]).await, 413);
    let mut e = base_event();
    e["involvedObject"]["apiVersion"] = json!("source.toolkit.fluxcd.io/v1");
    e["metadata"] = json!({"source.toolkit.fluxcd.io/revision": "main@sha1:1"});
    assert_eq!(env.post_event(&e).await, 202);
    assert_eq!(env.post_event(&e).await, 429, "a duplicate is refused");
    e["metadata"]["source.toolkit.fluxcd.io/revision"] = json!("main@sha1:2");
    assert_eq!(
        env.post_event(&e).await,
        202,
        "another revision is another event"
    );
    // Keys outside the object's group do not count (they are cleaned away first).
    e["metadata"]["other.example.com/x"] = json!("y");
    assert_eq!(env.post_event(&e).await, 429);
    e["message"] = json!("something else");
    assert_eq!(env.post_event(&e).await, 202);
}

/// What a generic provider receives: the event with the Alert's metadata combined, token,
/// checksum and foreign keys removed, prefixes stripped; a `generic-hmac` provider signs the
/// exact bytes it sends; the Secret's headers and address are used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_receive_flux_payloads() {
    let env = start(Default::default()).await;
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "hmac",
        "-n",
        NS,
        "--from-literal=token=sekrit",
        &format!("--from-literal=address={}/signed", env.sink),
        "--from-literal=headers=X-Team: platform\nX-Other: 1",
    ]);
    env.apply(&format!(
        r#"apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {{name: signed, namespace: {NS}}}
spec: {{type: generic-hmac, address: "http://wrong.invalid", secretRef: {{name: hmac}}}}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {{name: all, namespace: {NS}}}
spec:
  providerRef: {{name: signed}}
  eventMetadata: {{env: prod, cluster: "a<b>"}}
  eventSources: [{{kind: GitRepository, name: "*"}}]
"#
    ));
    env.settle().await;
    let e = json!({
        "involvedObject": {"kind": "GitRepository", "name": "app", "namespace": NS,
                           "apiVersion": "source.toolkit.fluxcd.io/v1", "uid": "u-1"},
        "severity": "error",
        "timestamp": "2026-11-27T00:00:00Z",
        "message": "fetch failed: <timeout> & more",
        "reason": "GitOperationFailed",
        "metadata": {
            "source.toolkit.fluxcd.io/revision": "main@sha1:abc",
            "source.toolkit.fluxcd.io/token": "t",
            "source.toolkit.fluxcd.io/checksum": "c",
            "event.toolkit.fluxcd.io/team": "apps",
            "unrelated/key": "x",
        },
        "reportingController": "source-controller",
        "reportingInstance": "host-1",
    });
    assert_eq!(env.post_event(&e).await, 202);
    let got = env.received(Duration::from_secs(3)).await;
    assert_eq!(got.len(), 1, "{got:?}");
    let (path, headers, body) = &got[0];
    assert_eq!(path, "/signed", "the Secret's address wins");
    assert_eq!(headers["x-team"], "platform");
    assert_eq!(headers["content-type"], "application/json");
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(b"sekrit").unwrap();
    mac.update(body);
    let want: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(headers["x-signature"], format!("sha256={want}").as_str());
    let text = std::str::from_utf8(body).unwrap();
    assert!(
        text.contains(r#""message":"fetch failed: \u003ctimeout\u003e \u0026 more""#),
        "Go's HTML escaping: {text}"
    );
    let sent: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(
        sent["metadata"],
        json!({"cluster": "a<b>", "env": "prod", "revision": "main@sha1:abc", "team": "apps"})
    );
    assert_eq!(sent["involvedObject"]["uid"], "u-1");
    assert_eq!(sent["reportingInstance"], "host-1");
}

/// A Slack provider gets Slack's attachment; a send that fails is recorded on the Alert as
/// `NotificationDispatchFailed` with the token masked; a missing Provider too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_payload_and_dispatch_failures() {
    let env = start(Default::default()).await;
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "slack-token",
        "-n",
        NS,
        "--from-literal=token=xoxb-very-secret",
    ]);
    env.apply(&format!(
        r#"apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {{name: slack, namespace: {NS}}}
spec: {{type: slack, channel: general, address: "{0}/slack"}}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {{name: failing, namespace: {NS}}}
spec: {{type: slack, address: "{0}/fail", secretRef: {{name: slack-token}}}}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {{name: to-slack, namespace: {NS}}}
spec:
  providerRef: {{name: slack}}
  eventSeverity: error
  eventSources: [{{kind: Kustomization, name: apps}}]
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {{name: to-failing, namespace: {NS}}}
spec:
  providerRef: {{name: failing}}
  eventSources: [{{kind: Kustomization, name: failing}}]
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {{name: to-nowhere, namespace: {NS}}}
spec:
  providerRef: {{name: missing}}
  eventSources: [{{kind: Kustomization, name: nowhere}}]
"#,
        env.sink
    ));
    env.settle().await;
    let mut e = json!({
        "involvedObject": {"kind": "Kustomization", "name": "apps", "namespace": NS,
                           "apiVersion": "kustomize.toolkit.fluxcd.io/v1"},
        "severity": "info",
        "timestamp": "2026-11-27T00:00:00Z",
        "message": "Reconciliation finished",
        "reason": "ReconciliationSucceeded",
        "metadata": {"kustomize.toolkit.fluxcd.io/revision": "main@sha1:abc"},
        "reportingController": "kustomize-controller",
    });
    assert_eq!(env.post_event(&e).await, 202);
    assert!(
        env.received(Duration::from_secs(1)).await.is_empty(),
        "an error-only Alert skips info events"
    );
    e["severity"] = json!("error");
    e["message"] = json!("Deployment/apps/web dry-run failed\nsecond line");
    assert_eq!(env.post_event(&e).await, 202);
    let got = env.received(Duration::from_secs(3)).await;
    assert_eq!(got.len(), 1);
    let slack: Value = serde_json::from_slice(&got[0].2).unwrap();
    assert_eq!(
        slack,
        json!({
            "channel": "general",
            "username": "kustomize-controller",
            "icon_url": "",
            "icon_emoji": "",
            "attachments": [{
                "fallback": "kustomization/apps.foo-ns: Deployment/apps/web dry-run failed",
                "color": "danger",
                "author_name": "kustomization/apps.foo-ns",
                "text": "Deployment/apps/web dry-run failed\nsecond line",
                "mrkdwn_in": ["text"],
                "fields": [{"title": "revision", "value": "main@sha1:abc", "short": false}],
            }]
        })
    );
    assert!(got[0].1.get("authorization").is_none());

    e["involvedObject"]["name"] = json!("failing");
    assert_eq!(env.post_event(&e).await, 202);
    let got = env.received(Duration::from_secs(3)).await;
    assert_eq!(got[0].1["authorization"], "Bearer xoxb-very-secret");
    e["involvedObject"]["name"] = json!("nowhere");
    assert_eq!(env.post_event(&e).await, 202);
    let mut failing = Vec::new();
    let mut nowhere = Vec::new();
    for _ in 0..100 {
        failing = env.alert_events("to-failing");
        nowhere = env.alert_events("to-nowhere");
        if !failing.is_empty() && !nowhere.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        failing,
        vec![(
            "NotificationDispatchFailed".to_string(),
            "failed to send notification for Kustomization/foo-ns/failing: postMessage failed: request failed: request failed with status code 400: denied for Bearer *****".to_string()
        )]
    );
    assert_eq!(
        nowhere,
        vec![(
            "NotificationDispatchFailed".to_string(),
            "failed to dispatch notification for Kustomization/foo-ns/nowhere: failed to read provider: providers.notification.toolkit.fluxcd.io \"missing\" not found".to_string()
        )]
    );
}

/// A controller's recorder posts Flux's event format to the event server, which routes it:
/// the object's `event.toolkit.fluxcd.io/` annotations ride along.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorder_events_reach_providers() {
    let env = start(Default::default()).await;
    env.apply(&format!(
        r#"apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {{name: hook, namespace: {NS}}}
spec: {{type: generic, address: "{}/recorded"}}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {{name: repos, namespace: {NS}}}
spec:
  providerRef: {{name: hook}}
  eventSources: [{{kind: GitRepository, name: app}}]
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: app
  namespace: {NS}
  annotations: {{event.toolkit.fluxcd.io/owner: team-a, other: ignored}}
spec: {{interval: 1h, url: "https://example.com/app.git", suspend: true}}
"#,
        env.sink
    ));
    env.settle().await;
    let repo: tidegate_api::GitRepository = kube::Api::namespaced(env.client.clone(), NS)
        .get("app")
        .await
        .unwrap();
    let webhook =
        tidegate_controllers::notification::webhook::EventWebhook::start(&env.events).unwrap();
    let recorder =
        tidegate_controllers::events::Recorder::new(env.client.clone(), "source-controller")
            .with_webhook(Some(webhook));
    recorder
        .publish(
            &repo,
            tidegate_controllers::events::EventType::Warning,
            "GitOperationFailed",
            "failed to checkout and determine revision",
            &[(
                "source.toolkit.fluxcd.io/revision",
                "main@sha1:123".to_string(),
            )],
        )
        .await;
    let got = env.received(Duration::from_secs(5)).await;
    assert_eq!(got.len(), 1, "{got:?}");
    let sent: Value = serde_json::from_slice(&got[0].2).unwrap();
    assert_eq!(sent["severity"], "error");
    assert_eq!(sent["reason"], "GitOperationFailed");
    assert_eq!(sent["reportingController"], "source-controller");
    assert_eq!(sent["involvedObject"]["kind"], "GitRepository");
    assert_eq!(
        sent["involvedObject"]["apiVersion"],
        "source.toolkit.fluxcd.io/v1"
    );
    assert_eq!(
        sent["involvedObject"]["uid"].as_str(),
        repo.metadata.uid.as_deref()
    );
    assert_eq!(
        sent["metadata"],
        json!({"owner": "team-a", "revision": "main@sha1:123"})
    );
    assert!(!sent["reportingInstance"].as_str().unwrap().is_empty());
}

/// A CA and a server certificate for 127.0.0.1 it signed (PEM: CA, cert, key).
fn test_certificates() -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, SanType};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "tidegate test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let issuer = rcgen::Issuer::from_params(&ca_params, &ca_key);
    let cert = params.signed_by(&key, &issuer).unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

/// An HTTPS sink with the given certificate: the body of every request that completes a TLS
/// handshake.
async fn tls_sink(cert_pem: &str, key_pem: &str) -> (String, Arc<Mutex<Vec<String>>>) {
    use rustls::pki_types::pem::PemObject;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    tidegate_source::tls::ensure_provider();
    let certs: Vec<_> = rustls::pki_types::CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .map(Result::unwrap)
        .collect();
    let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}/tls", l.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let rec = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = l.accept().await {
            let (acceptor, rec) = (acceptor.clone(), rec.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let Ok(n) = tls.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    data.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&data).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if data.len() >= end + 4 + length {
                            rec.lock()
                                .unwrap()
                                .push(String::from_utf8_lossy(&data[end + 4..]).to_string());
                            let _ = tls
                                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                                .await;
                            let _ = tls.shutdown().await;
                            return;
                        }
                    }
                }
            });
        }
    });
    (url, seen)
}

/// A Provider reaching an HTTPS endpoint signed by a private CA: with `certSecretRef`
/// (`ca.crt`) the notification arrives; without it the send fails on the certificate and the
/// failure is recorded on the Alert.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_trust_the_ca_of_cert_secret_ref() {
    let env = start(Default::default()).await;
    let (ca, cert, key) = test_certificates();
    let (url, seen) = tls_sink(&cert, &key).await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.crt");
    std::fs::write(&ca_file, &ca).unwrap();
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "sink-ca",
        "-n",
        NS,
        &format!("--from-file=ca.crt={}", ca_file.display()),
    ]);
    env.apply(&format!(
        r#"apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {{name: trusted, namespace: {NS}}}
spec: {{type: generic, address: "{url}", certSecretRef: {{name: sink-ca}}}}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {{name: untrusted, namespace: {NS}}}
spec: {{type: generic, address: "{url}", timeout: 3s}}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {{name: trusted, namespace: {NS}}}
spec:
  providerRef: {{name: trusted}}
  eventSources: [{{kind: GitRepository, name: trusted}}]
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {{name: untrusted, namespace: {NS}}}
spec:
  providerRef: {{name: untrusted}}
  eventSources: [{{kind: GitRepository, name: untrusted}}]
"#
    ));
    env.settle().await;
    let mut e = base_event();
    e["involvedObject"]["kind"] = json!("GitRepository");
    e["involvedObject"]["name"] = json!("trusted");
    assert_eq!(env.post_event(&e).await, 202);
    let mut arrived = Vec::new();
    for _ in 0..100 {
        arrived = seen.lock().unwrap().clone();
        if !arrived.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(arrived.len(), 1, "delivered over TLS with the CA");
    assert!(
        arrived[0].contains("\"name\":\"trusted\""),
        "{}",
        arrived[0]
    );

    e["involvedObject"]["name"] = json!("untrusted");
    assert_eq!(env.post_event(&e).await, 202);
    let mut failed = Vec::new();
    for _ in 0..200 {
        failed = env.alert_events("untrusted");
        if !failed.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, "NotificationDispatchFailed");
    assert!(
        failed[0].1.starts_with(&format!("failed to send notification for GitRepository/foo-ns/untrusted: postMessage failed: failed to execute request: POST {url} giving up after 1 attempt(s): ")),
        "not retried: {}",
        failed[0].1
    );
    assert!(failed[0].1.contains("certificate"), "{}", failed[0].1);
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "nothing reached the sink without the CA"
    );
}
