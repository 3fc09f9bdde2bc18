//! Receivers against the embedded API server: the reconciler publishes each Receiver's webhook
//! path, and the receiver server answers signed, unsigned, wrongly signed, replayed and
//! oversized requests with Flux's status codes, annotating the named objects only when the
//! request is genuine.

#[path = "../source_support/mod.rs"]
mod source_support;

mod tokens;

use std::time::Duration;

use hmac::{Hmac, Mac};
use serde_json::Value;
use source_support::common;

fn hmac_hex<M: Mac + hmac::digest::KeyInit>(key: &str, body: &[u8]) -> String {
    let mut m = <M as hmac::digest::KeyInit>::new_from_slice(key.as_bytes()).unwrap();
    m.update(body);
    m.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const TOKEN: &str = "s3cr3t-t0ken";

struct Env {
    server: common::TestServer,
    base: String,
    http: reqwest::Client,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Env {
    fn get(&self, what: &[&str]) -> Value {
        let mut args = vec!["get"];
        args.extend_from_slice(what);
        args.extend(["-o", "json"]);
        serde_json::from_str(&self.server.ok(&args)).unwrap()
    }

    fn requested_at(&self, what: &[&str]) -> Option<String> {
        self.get(what)["metadata"]["annotations"]["reconcile.fluxcd.io/requestedAt"]
            .as_str()
            .map(str::to_string)
    }

    async fn path(&self, receiver: &str) -> String {
        for _ in 0..200 {
            let r = self.get(&["receiver", receiver]);
            if let Some(p) = r["status"]["webhookPath"].as_str() {
                return p.to_string();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("receiver {receiver} has no webhook path");
    }

    async fn post(&self, path: &str, headers: &[(&str, &str)], body: Vec<u8>) -> u16 {
        let mut req = self.http.post(format!("{}{path}", self.base)).body(body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send().await.unwrap().status().as_u16()
    }
}

async fn start() -> Env {
    start_with(Default::default()).await
}

async fn start_with(options: tidegate_controllers::receiver::Options) -> Env {
    let server = common::start().await;
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/receivers.notification.toolkit.fluxcd.io",
        "crd/gitrepositories.source.toolkit.fluxcd.io",
        "crd/kustomizations.kustomize.toolkit.fluxcd.io",
    ]);
    server.ok(&[
        "create",
        "secret",
        "generic",
        "webhook-token",
        &format!("--from-literal=token={TOKEN}"),
    ]);
    server.ok(&[
        "create",
        "secret",
        "generic",
        "no-token",
        "--from-literal=other=x",
    ]);
    server.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: app, namespace: default}
spec: {interval: 1h, url: "https://example.com/app.git", suspend: true}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: team-a, namespace: default, labels: {team: a}}
spec: {interval: 1h, url: "https://example.com/a.git", suspend: true}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: team-b, namespace: default, labels: {team: a}}
spec: {interval: 1h, url: "https://example.com/b.git", suspend: true}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: default}
spec: {interval: 1h, path: ./, prune: true, suspend: true, sourceRef: {kind: GitRepository, name: app}}
"#,
    );
    let kc = kube::config::Kubeconfig::from_yaml(&server.server.kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(tidegate_controllers::receiver::run(
        client,
        tidegate_controllers::metrics::Metrics::new(),
        options,
        Some(listener),
        async {
            let _ = rx.await;
        },
    ));
    Env {
        server,
        base,
        http: tidegate_source::tls::http_client(),
        _stop: tx,
    }
}

fn receiver(name: &str, type_: &str, extra: &str, resources: &str) -> String {
    format!(
        "---\napiVersion: notification.toolkit.fluxcd.io/v1\nkind: Receiver\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  type: {type_}\n  secretRef: {{name: webhook-token}}\n{extra}  resources:\n{resources}"
    )
}

const APP: &str = "  - {kind: GitRepository, name: app}\n  - {apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, name: app}\n";

#[tokio::test(flavor = "multi_thread")]
async fn receivers_reconcile_only_on_genuine_requests() {
    let env = start().await;
    let mut all = String::new();
    all.push_str(&receiver(
        "github",
        "github",
        "  events: [push, ping]\n",
        APP,
    ));
    all.push_str(&receiver("hmac", "generic-hmac", "", APP));
    all.push_str(&receiver(
        "gitlab",
        "gitlab",
        "  events: [Push Hook]\n",
        APP,
    ));
    all.push_str(&receiver("bitbucket", "bitbucket", "", APP));
    all.push_str(&receiver("harbor", "harbor", "", APP));
    all.push_str(&receiver("nexus", "nexus", "", APP));
    all.push_str(&receiver("quay", "quay", "", APP));
    all.push_str(&receiver("generic", "generic", "", APP));
    env.server.ok_stdin(&["apply", "-f", "-"], &all);

    // Flux's path: sha256 of token, name and namespace.
    let github = env.path("github").await;
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(format!("{TOKEN}githubdefault").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(github, format!("/hook/{hex}"));
    let r = env.get(&["receiver", "github"]);
    let ready = r["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap();
    assert_eq!(ready["status"], "True");
    assert_eq!(
        ready["message"],
        format!("Receiver initialized for path: {github}")
    );

    let push = br#"{"ref":"refs/heads/main","after":"0123"}"#.to_vec();
    let sig256 = format!("sha256={}", hmac_hex::<Hmac<sha2::Sha256>>(TOKEN, &push));
    let json = ("Content-Type", "application/json");
    let ev = ("X-GitHub-Event", "push");
    let before = env.requested_at(&["gitrepository", "app"]);

    // Refused: wrong token, unsigned, a signature replayed with another body, an event not
    // allowed, an unknown path; nothing is annotated.
    let wrong = format!("sha256={}", hmac_hex::<Hmac<sha2::Sha256>>("other", &push));
    for (headers, body, code) in [
        (
            vec![json, ev, ("X-Hub-Signature-256", wrong.as_str())],
            push.clone(),
            400,
        ),
        (vec![json, ev], push.clone(), 400),
        (
            vec![json, ev, ("X-Hub-Signature-256", sig256.as_str())],
            br#"{"ref":"refs/heads/evil"}"#.to_vec(),
            400,
        ),
        (
            vec![
                json,
                ("X-GitHub-Event", "issues"),
                ("X-Hub-Signature-256", sig256.as_str()),
            ],
            push.clone(),
            400,
        ),
        (
            vec![
                ("Content-Type", "text/plain"),
                ev,
                ("X-Hub-Signature-256", sig256.as_str()),
            ],
            push.clone(),
            400,
        ),
    ] {
        assert_eq!(env.post(&github, &headers, body).await, code, "{headers:?}");
    }
    assert_eq!(env.post("/hook/0000", &[json], push.clone()).await, 404);
    let oversized = vec![b' '; 3 * 1024 * 1024 + 1];
    assert_eq!(env.post(&github, &[json, ev], oversized).await, 413);
    assert_eq!(
        env.requested_at(&["gitrepository", "app"]),
        before,
        "nothing was triggered"
    );

    // Genuine: JSON with sha256, the legacy sha1 header, and a form body (MAC over the raw body).
    assert_eq!(
        env.post(
            &github,
            &[json, ev, ("X-Hub-Signature-256", sig256.as_str())],
            push.clone()
        )
        .await,
        200
    );
    let first = env.requested_at(&["gitrepository", "app"]);
    assert!(first.is_some() && first != before);
    assert!(env.requested_at(&["kustomization", "app"]).is_some());
    let sig1 = format!("sha1={}", hmac_hex::<Hmac<sha1::Sha1>>(TOKEN, &push));
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(
        env.post(
            &github,
            &[
                json,
                ("X-GitHub-Event", "ping"),
                ("X-Hub-Signature", sig1.as_str())
            ],
            push.clone()
        )
        .await,
        200
    );
    assert_ne!(env.requested_at(&["gitrepository", "app"]), first);
    let form = b"payload=%7B%22zen%22%3A%22hi%22%7D".to_vec();
    let form_sig = format!("sha256={}", hmac_hex::<Hmac<sha2::Sha256>>(TOKEN, &form));
    assert_eq!(
        env.post(
            &github,
            &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ev,
                ("X-Hub-Signature-256", form_sig.as_str())
            ],
            form
        )
        .await,
        200
    );

    // generic-hmac: X-Signature with any of sha1/sha256/sha512.
    let hmac_path = env.path("hmac").await;
    let sig512 = format!("sha512={}", hmac_hex::<Hmac<sha2::Sha512>>(TOKEN, &push));
    assert_eq!(
        env.post(
            &hmac_path,
            &[("X-Signature", sig512.as_str())],
            push.clone()
        )
        .await,
        200
    );
    assert_eq!(
        env.post(&hmac_path, &[("X-Signature", wrong.as_str())], push.clone())
            .await,
        400
    );
    assert_eq!(env.post(&hmac_path, &[], push.clone()).await, 400);

    // gitlab: the token header and the event allow-list.
    let gitlab = env.path("gitlab").await;
    assert_eq!(
        env.post(
            &gitlab,
            &[("X-Gitlab-Token", TOKEN), ("X-Gitlab-Event", "Push Hook")],
            push.clone()
        )
        .await,
        200
    );
    assert_eq!(
        env.post(
            &gitlab,
            &[("X-Gitlab-Token", "nope"), ("X-Gitlab-Event", "Push Hook")],
            push.clone()
        )
        .await,
        400
    );
    assert_eq!(
        env.post(
            &gitlab,
            &[
                ("X-Gitlab-Token", TOKEN),
                ("X-Gitlab-Event", "Tag Push Hook")
            ],
            push.clone()
        )
        .await,
        400
    );

    // bitbucket server: GitHub-style signatures, X-Event-Key.
    let bitbucket = env.path("bitbucket").await;
    assert_eq!(
        env.post(
            &bitbucket,
            &[
                json,
                ("X-Event-Key", "repo:refs_changed"),
                ("X-Hub-Signature", sig256.as_str())
            ],
            push.clone()
        )
        .await,
        200
    );
    assert_eq!(
        env.post(
            &bitbucket,
            &[json, ("X-Event-Key", "repo:refs_changed")],
            push.clone()
        )
        .await,
        400
    );

    // harbor: the Authorization header is the token.
    let harbor = env.path("harbor").await;
    assert_eq!(
        env.post(&harbor, &[("Authorization", TOKEN)], push.clone())
            .await,
        200
    );
    assert_eq!(
        env.post(&harbor, &[("Authorization", "Bearer x")], push.clone())
            .await,
        400
    );

    // nexus: HMAC-SHA1 hex in X-Nexus-Webhook-Signature.
    let nexus = env.path("nexus").await;
    let nexus_body = br#"{"action":"CREATED","repositoryName":"docker"}"#.to_vec();
    let nexus_sig = hmac_hex::<Hmac<sha1::Sha1>>(TOKEN, &nexus_body);
    assert_eq!(
        env.post(
            &nexus,
            &[("X-Nexus-Webhook-Signature", nexus_sig.as_str())],
            nexus_body.clone()
        )
        .await,
        200
    );
    assert_eq!(
        env.post(
            &nexus,
            &[("X-Nexus-Webhook-Signature", nexus_sig.as_str())],
            push.clone()
        )
        .await,
        400
    );
    assert_eq!(env.post(&nexus, &[], nexus_body).await, 400);

    // quay: no signature, but the payload must decode.
    let quay = env.path("quay").await;
    assert_eq!(
        env.post(
            &quay,
            &[],
            br#"{"docker_url":"quay.io/a/b","updated_tags":["1"]}"#.to_vec()
        )
        .await,
        200
    );
    assert_eq!(env.post(&quay, &[], b"not json".to_vec()).await, 400);

    // generic: the secret path is the only protection.
    let generic = env.path("generic").await;
    assert_eq!(env.post(&generic, &[], Vec::new()).await, 200);

    // Suspended: 503.
    env.server.ok(&[
        "patch",
        "receiver",
        "generic",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":true}}"#,
    ]);
    let mut code = 0;
    for _ in 0..100 {
        code = env.post(&generic, &[], Vec::new()).await;
        if code == 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(code, 503);
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_labels_filters_and_failures() {
    let env = start().await;
    let mut all = String::new();
    all.push_str(&receiver(
        "labels",
        "generic",
        "",
        "  - kind: GitRepository\n    name: \"*\"\n    matchLabels: {team: a}\n    filter: res.metadata.name == 'team-b'\n",
    ));
    all.push_str(&receiver(
        "missing",
        "generic",
        "",
        "  - {kind: GitRepository, name: nowhere}\n",
    ));
    all.push_str(&receiver(
        "no-version",
        "generic",
        "",
        "  - {kind: Kustomization, name: app}\n",
    ));
    all.push_str(&receiver(
        "by-body",
        "generic",
        "  resourceFilter: req.ref == 'refs/heads/main'\n",
        "  - {kind: GitRepository, name: app}\n",
    ));
    env.server.ok_stdin(&["apply", "-f", "-"], &all);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: notification.toolkit.fluxcd.io/v1\nkind: Receiver\nmetadata: {name: tokenless, namespace: default}\nspec:\n  type: generic\n  secretRef: {name: no-token}\n  resources: [{kind: GitRepository, name: app}]\n",
    );

    // A wildcard with labels, narrowed by a CEL filter over the object.
    let labels = env.path("labels").await;
    assert_eq!(env.post(&labels, &[], Vec::new()).await, 200);
    assert!(env.requested_at(&["gitrepository", "team-b"]).is_some());
    assert!(env.requested_at(&["gitrepository", "team-a"]).is_none());
    // An object that does not exist, a kind without its apiVersion: 500.
    let missing = env.path("missing").await;
    assert_eq!(env.post(&missing, &[], Vec::new()).await, 500);
    let no_version = env.path("no-version").await;
    assert_eq!(env.post(&no_version, &[], Vec::new()).await, 500);
    // A filter over the JSON body.
    let by_body = env.path("by-body").await;
    let json = ("Content-Type", "application/json");
    assert_eq!(
        env.post(&by_body, &[json], br#"{"ref":"refs/heads/dev"}"#.to_vec())
            .await,
        200
    );
    assert!(env.requested_at(&["gitrepository", "app"]).is_none());
    assert_eq!(
        env.post(&by_body, &[json], br#"{"ref":"refs/heads/main"}"#.to_vec())
            .await,
        200
    );
    assert!(env.requested_at(&["gitrepository", "app"]).is_some());

    // A Secret without `token`: not ready, no path, Flux's message.
    let mut last = Value::Null;
    for _ in 0..100 {
        last = env.get(&["receiver", "tokenless"]);
        let ready = last["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready").cloned());
        if ready.is_some_and(|r| r["reason"] == "TokenNotFound") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ready = last["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap()
        .clone();
    assert_eq!(ready["status"], "False");
    assert_eq!(
        ready["message"],
        "invalid 'default/no-token' secret data: required fields 'token'"
    );
    assert!(last["status"].get("webhookPath").is_none(), "{last}");

    // An invalid CEL filter stalls the Receiver.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &receiver(
            "bad-cel",
            "generic",
            "  resourceFilter: \"res.metadata.name ==\"\n",
            APP,
        ),
    );
    let mut stalled = false;
    for _ in 0..100 {
        let r = env.get(&["receiver", "bad-cel"]);
        stalled = r["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter().any(|c| {
                c["type"] == "Stalled"
                    && c["reason"] == "InvalidCELExpression"
                    && c["message"]
                        .as_str()
                        .unwrap_or("")
                        .starts_with("Reconciliation failed terminally due to configuration error: invalid resourceFilter expression")
            })
        });
        if stalled {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(stalled);
}
