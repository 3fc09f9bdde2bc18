//! The Git providers against a local forge stand-in that records each request and answers
//! listings with what the test sets: Flux's request shapes, deduplication and errors.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use serde_json::{Value, json};
use tidegate_api::event::{Event, ObjectReference};

use super::{Settings, build};

const SHA: &str = "69b59063470310ebbd88a9156325322a124e55a3";

/// A recorded request: method, path and query, headers, body.
type Request = (Method, String, HeaderMap, String);

#[derive(Clone, Default)]
struct Forge {
    seen: Arc<Mutex<Vec<Request>>>,
    /// GET answers by path prefix; other GETs get `listing`.
    routes: Arc<Mutex<Vec<(String, String)>>>,
    listing: Arc<Mutex<String>>,
    status: Arc<Mutex<u16>>,
}

impl Forge {
    async fn start() -> (String, Forge) {
        let forge = Forge::default();
        *forge.listing.lock().unwrap() = "[]".into();
        *forge.status.lock().unwrap() = 201;
        let f = forge.clone();
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let f = f.clone();
                async move {
                    let path = uri
                        .path_and_query()
                        .map(|p| p.to_string())
                        .unwrap_or_default();
                    f.seen.lock().unwrap().push((
                        method.clone(),
                        path,
                        headers,
                        String::from_utf8_lossy(&body).into_owned(),
                    ));
                    if method == Method::GET {
                        let routed = f
                            .routes
                            .lock()
                            .unwrap()
                            .iter()
                            .find(|(prefix, _)| uri.path().starts_with(prefix.as_str()))
                            .map(|(_, answer)| answer.clone());
                        let answer = routed.unwrap_or_else(|| f.listing.lock().unwrap().clone());
                        (StatusCode::OK, answer)
                    } else {
                        let code = *f.status.lock().unwrap();
                        (
                            StatusCode::from_u16(code).unwrap(),
                            "{\"message\":\"nope\"}".to_string(),
                        )
                    }
                }
            },
        );
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(l, app).await });
        (url, forge)
    }

    fn answer(&self, prefix: &str, body: Value) {
        self.routes
            .lock()
            .unwrap()
            .push((prefix.into(), body.to_string()));
    }

    fn take(&self) -> Vec<Request> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

fn event(severity: &str, reason: &str, revision: Option<&str>) -> Event {
    let mut metadata = BTreeMap::new();
    if let Some(r) = revision {
        metadata.insert("revision".to_string(), r.to_string());
    }
    Event {
        involved_object: ObjectReference {
            kind: "Kustomization".into(),
            namespace: "gitops-system".into(),
            name: "gitops-system".into(),
            ..Default::default()
        },
        severity: severity.into(),
        timestamp: "2022-09-30T06:40:29Z".into(),
        message: "message".into(),
        reason: reason.into(),
        metadata,
        reporting_controller: "kustomize-controller".into(),
        reporting_instance: String::new(),
    }
}

fn settings(url: String, token: &str) -> Settings {
    Settings {
        http: tidegate_source::tls::http_client(),
        url,
        token: token.into(),
        commit_status: "kustomization/gitops-system/0c9c2e41".into(),
        ..Default::default()
    }
}

fn body(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

#[tokio::test]
async fn github_sets_a_status_once() {
    let (url, forge) = Forge::start().await;
    let n = build("github", settings(format!("{url}/foo/bar"), "ghp")).unwrap();
    let rev = format!("main@sha1:{SHA}");
    n.post(&event("info", "ReconciliationSucceeded", Some(&rev)))
        .await
        .unwrap();
    let seen = forge.take();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].0, Method::GET);
    assert_eq!(
        seen[0].1,
        format!("/api/v3/repos/foo/bar/commits/{SHA}/statuses?per_page=50")
    );
    assert_eq!(seen[1].1, format!("/api/v3/repos/foo/bar/statuses/{SHA}"));
    assert_eq!(seen[1].2["authorization"], "Bearer ghp");
    assert_eq!(
        seen[1].3,
        "{\"state\":\"success\",\"description\":\"reconciliation succeeded\",\"context\":\"kustomization/gitops-system/0c9c2e41\"}\n"
    );
    // The newest status with our context says the same: nothing written.
    *forge.listing.lock().unwrap() = json!([
        {"state": "success", "description": "reconciliation succeeded", "context": "kustomization/gitops-system/0c9c2e41"},
        {"state": "failure", "description": "reconciliation failed", "context": "kustomization/gitops-system/0c9c2e41"},
    ]).to_string();
    n.post(&event("info", "ReconciliationSucceeded", Some(&rev)))
        .await
        .unwrap();
    assert_eq!(forge.take().len(), 1, "only the listing");
    // A failure differs from the newest: written.
    n.post(&event("error", "ReconciliationFailed", Some(&rev)))
        .await
        .unwrap();
    let seen = forge.take();
    assert_eq!(body(&seen[1].3)["state"], "failure");
    // Progressing events are skipped; a missing revision is an error.
    n.post(&event("info", "Progressing", Some(&rev)))
        .await
        .unwrap();
    assert!(forge.take().is_empty());
    assert_eq!(
        n.post(&event("info", "ReconciliationSucceeded", None))
            .await
            .unwrap_err(),
        "missing revision metadata"
    );
    *forge.status.lock().unwrap() = 401;
    let err = n
        .post(&event("error", "Other", Some(&rev)))
        .await
        .unwrap_err();
    assert!(
        err.starts_with("could not create commit status: POST "),
        "{err}"
    );
    assert!(err.ends_with("401 nope"), "{err}");
}

#[tokio::test]
async fn github_factory_errors() {
    let err = |s: Settings, t: &str| build(t, s).err().unwrap();
    let mut s = settings("https://github.com/foo/bar/baz".into(), "t");
    assert_eq!(
        err(s.clone(), "github"),
        "invalid repository id: 'foo/bar/baz'"
    );
    s.url = "https://github.com/foo/bar".into();
    s.token.clear();
    assert_eq!(
        err(s.clone(), "github"),
        "github token or github app details must be specified"
    );
    s.token = "t".into();
    s.commit_status.clear();
    assert_eq!(err(s.clone(), "github"), "commit status cannot be empty");
    assert!(
        build("githubdispatch", s).is_ok(),
        "dispatch needs no commit status"
    );
}

#[tokio::test]
async fn github_dispatch_sends_the_event() {
    let (url, forge) = Forge::start().await;
    *forge.status.lock().unwrap() = 204;
    let n = build("githubdispatch", settings(format!("{url}/foo/bar"), "t")).unwrap();
    let mut e = event("info", "reason", None);
    e.involved_object.kind = "GitRepository".into();
    e.involved_object.name = "webapp".into();
    e.metadata.insert("test".into(), "metadata".into());
    n.post(&e).await.unwrap();
    let seen = forge.take();
    assert_eq!(seen[0].1, "/api/v3/repos/foo/bar/dispatches");
    let sent = body(&seen[0].3);
    assert_eq!(sent["event_type"], "GitRepository/webapp.gitops-system");
    assert_eq!(sent["client_payload"]["metadata"]["test"], "metadata");
    assert_eq!(
        sent["client_payload"]["reportingController"],
        "kustomize-controller"
    );
}

#[tokio::test]
async fn gitlab_sets_a_status_unless_identical() {
    let (url, forge) = Forge::start().await;
    let n = build("gitlab", settings(format!("{url}/foo/bar.git"), "glpat")).unwrap();
    let rev = format!("main@sha1:{SHA}");
    n.post(&event("error", "HealthCheckFailed", Some(&rev)))
        .await
        .unwrap();
    let seen = forge.take();
    assert_eq!(
        seen[0].1,
        format!(
            "/api/v4/projects/foo%2Fbar/repository/commits/{SHA}/statuses?name=kustomization%2Fgitops-system%2F0c9c2e41"
        )
    );
    assert_eq!(
        seen[1].1,
        format!("/api/v4/projects/foo%2Fbar/statuses/{SHA}")
    );
    assert_eq!(seen[1].2["private-token"], "glpat");
    assert_eq!(
        seen[1].3,
        r#"{"state":"failed","name":"kustomization/gitops-system/0c9c2e41","description":"health check failed"}"#
    );
    *forge.listing.lock().unwrap() = json!([{"sha": SHA, "status": "failed", "description": "health check failed", "name": "kustomization/gitops-system/0c9c2e41"}]).to_string();
    n.post(&event("error", "HealthCheckFailed", Some(&rev)))
        .await
        .unwrap();
    assert_eq!(forge.take().len(), 1);
    assert_eq!(
        build("gitlab", settings(format!("{url}/foo/bar"), ""))
            .err()
            .unwrap(),
        "gitlab token cannot be empty"
    );
}

#[tokio::test]
async fn gitea_uses_pending_for_progress_and_the_origin_revision() {
    let (url, forge) = Forge::start().await;
    let n = build("gitea", settings(format!("{url}/foo/bar"), "tok")).unwrap();
    let mut e = event("info", "Progressing", Some(&format!("main@sha1:{SHA}")));
    e.metadata.insert(
        "originRevision".into(),
        "main@sha1:8a9156325322a124e55a369b59063470310ebbd8".into(),
    );
    n.post(&e).await.unwrap();
    let seen = forge.take();
    assert_eq!(
        seen[0].1,
        "/api/v1/repos/foo/bar/commits/8a9156325322a124e55a369b59063470310ebbd8/statuses?limit=50&page=1"
    );
    assert_eq!(seen[1].2["authorization"], "token tok");
    assert_eq!(
        seen[1].3,
        r#"{"state":"pending","target_url":"","description":"progressing","context":"kustomization/gitops-system/0c9c2e41"}"#
    );
}

#[tokio::test]
async fn bitbucket_server_builds_as_flux() {
    let (url, forge) = Forge::start().await;
    let address = format!("{url}/context1/scm/projectfoo/repobar.git");
    let mut s = settings(address.clone(), "");
    s.username = "user".into();
    s.password = "password".into();
    let n = build("bitbucketserver", s).unwrap();
    *forge.status.lock().unwrap() = 204;
    let rev = format!("main@sha1:{SHA}");
    let mut e = event("info", "reason", Some(&rev));
    e.involved_object.name = "hello-world".into();
    n.post(&e).await.unwrap();
    let seen = forge.take();
    let builds =
        format!("/context1/rest/api/latest/projects/projectfoo/repos/repobar/commits/{SHA}/builds");
    let key = super::git::sha1_hex("kustomization/gitops-system/0c9c2e41");
    assert_eq!(seen[0].1, format!("{builds}?key={key}"));
    assert_eq!(seen[1].1, builds);
    assert_eq!(seen[1].2["authorization"], "Basic dXNlcjpwYXNzd29yZA==");
    assert_eq!(seen[1].2["x-atlassian-token"], "no-check");
    assert_eq!(
        body(&seen[1].3),
        json!({"description": "reason", "key": key, "name": "kustomization/hello-world [reason]", "state": "SUCCESSFUL", "url": address})
    );
    *forge.status.lock().unwrap() = 401;
    assert_eq!(
        n.post(&e).await.unwrap_err(),
        "could not post build status: could not post build commit status: 401 - Unauthorized"
    );
    let ssh = settings(
        "ssh://git@mybitbucket:2222/ap/fluxcd-sandbox.git".into(),
        "t",
    );
    assert_eq!(
        build("bitbucketserver", ssh).err().unwrap(),
        "could not parse git address: unsupported scheme type in address: ssh. Must be http or https"
    );
}

#[tokio::test]
async fn azure_devops_uses_genre_and_error_state() {
    let (url, forge) = Forge::start().await;
    *forge.listing.lock().unwrap() = r#"{"value":[]}"#.into();
    let n = build(
        "azuredevops",
        settings(format!("{url}/Org/bar/_git/baz"), "pat"),
    )
    .unwrap();
    let mut e = event("error", "ApplyFailed", Some(&format!("main@sha1:{SHA}")));
    e.metadata.insert("summary".into(), "test summary".into());
    n.post(&e).await.unwrap();
    let seen = forge.take();
    assert_eq!(
        seen[1].1,
        format!("/org/bar/_apis/git/repositories/baz/commits/{SHA}/statuses?api-version=6.0")
    );
    assert_eq!(seen[1].2["authorization"], "Basic OnBhdA==");
    assert_eq!(
        body(&seen[1].3),
        json!({"context": {"genre": "fluxcd:test summary", "name": "kustomization/gitops-system/0c9c2e41"}, "description": "apply failed", "state": "error"})
    );
    assert_eq!(
        build("azuredevops", settings(format!("{url}/foo/bar/baz"), "pat"))
            .err()
            .unwrap(),
        "invalid repository id \"foo/bar/baz\""
    );
}

#[tokio::test]
async fn bitbucket_cloud_keys_statuses_by_name() {
    let (url, forge) = Forge::start().await;
    // Only this test reads the variable (the Go client's override of the API address).
    unsafe { std::env::set_var("BITBUCKET_API_BASE_URL", format!("{url}/2.0")) };
    let n = build(
        "bitbucket",
        settings("https://bitbucket.org/foo/bar".into(), "user:pass"),
    )
    .unwrap();
    let mut e = event("info", "ApplySucceeded", Some(&format!("main@sha1:{SHA}")));
    e.involved_object.name = "gitops-system".into();
    *forge.listing.lock().unwrap() = "{}".into();
    n.post(&e).await.unwrap();
    let seen = forge.take();
    let key = super::git::sha1_hex("kustomization/gitops-system/0c9c2e41");
    assert_eq!(key, "c99410a43c260fddd152a40c296bddfa0b8fd879");
    assert_eq!(
        seen[0].1,
        format!("/2.0/repositories/foo/bar/commit/{SHA}/statuses/build/{key}")
    );
    assert_eq!(
        seen[1].1,
        format!("/2.0/repositories/foo/bar/commit/{SHA}/statuses/build")
    );
    assert_eq!(seen[1].2["authorization"], "Basic dXNlcjpwYXNz");
    assert_eq!(
        seen[1].3,
        format!(
            r#"{{"key":"{key}","url":"https://bitbucket.org","state":"SUCCESSFUL","name":"kustomization/gitops-system","description":"apply succeeded"}}"#
        )
    );
    *forge.listing.lock().unwrap() =
        json!({"state": "SUCCESSFUL", "description": "apply succeeded"}).to_string();
    n.post(&e).await.unwrap();
    assert_eq!(
        forge.take().len(),
        1,
        "the same status is not written again"
    );
    assert_eq!(
        build(
            "bitbucket",
            settings("https://bitbucket.org/foo/bar".into(), "bar")
        )
        .err()
        .unwrap(),
        "invalid token format, expected to be <user>:<password>"
    );
}

#[tokio::test]
async fn pull_request_comments_are_created_then_updated() {
    let (url, forge) = Forge::start().await;
    let mut s = settings(format!("{url}/foo/bar"), "ghp");
    s.provider_uid = "0c9c2e41-d2f9-4f9b-9c41-bebc1984d67a".into();
    let n = build("githubpullrequestcomment", s.clone()).unwrap();
    let mut e = event("info", "ReconciliationSucceeded", None);
    e.involved_object.namespace = "default".into();
    e.involved_object.name = "test-ks".into();
    e.message = "Test event message".into();
    e.metadata.insert("change_request".into(), "42".into());
    e.metadata.insert("key1".into(), "value1".into());
    forge.answer("/api/v3/user", json!({"login": "test-user"}));
    n.post(&e).await.unwrap();
    let seen = forge.take();
    assert_eq!(seen[0].1, "/api/v3/user");
    assert_eq!(
        seen[1].1,
        "/api/v3/repos/foo/bar/issues/42/comments?direction=asc&per_page=100&sort=created"
    );
    assert_eq!(seen[2].0, Method::POST);
    assert_eq!(seen[2].1, "/api/v3/repos/foo/bar/issues/42/comments");
    let want = "<!-- flux-pr-comment-key:0c9c2e41-d2f9-4f9b-9c41-bebc1984d67a/Kustomization/default/test-ks -->\n\n## Flux Status\n\nℹ️ Kustomization/default/test-ks\n\nTest event message\n\nMetadata:\n* `key1`: value1\n";
    assert_eq!(body(&seen[2].3)["body"], want);
    assert!(seen[2].3.contains("<!--"), "go-github does not escape HTML");
    // Our comment with the marker exists (another user's is ignored): updated in place.
    *forge.listing.lock().unwrap() = json!([
        {"id": 7, "user": {"login": "someone-else"}, "body": want},
        {"id": 9, "user": {"login": "test-user"}, "body": want},
    ])
    .to_string();
    n.post(&e).await.unwrap();
    let seen = forge.take();
    assert_eq!(seen[2].0, Method::PATCH);
    assert_eq!(seen[2].1, "/api/v3/repos/foo/bar/issues/comments/9");
    e.metadata.insert("change_request".into(), "x".into());
    assert_eq!(
        n.post(&e).await.unwrap_err(),
        "invalid \"change_request\" metadata value \"x\": strconv.Atoi: parsing \"x\": invalid syntax"
    );
    s.provider_uid.clear();
    assert_eq!(
        build("gitlabmergerequestcomment", s).err().unwrap(),
        "provider UID cannot be empty"
    );
}

#[tokio::test]
async fn merge_request_notes_are_updated_with_put() {
    let (url, forge) = Forge::start().await;
    let mut s = settings(format!("{url}/foo/bar"), "glpat");
    s.provider_uid = "uid-1".into();
    let n = build("gitlabmergerequestcomment", s).unwrap();
    let mut e = event("error", "HealthCheckFailed", None);
    e.metadata.insert("change_request".into(), "5".into());
    forge.answer("/api/v4/user", json!({"id": 1, "username": "test-user"}));
    let marker = "<!-- flux-mr-comment-key:uid-1/Kustomization/gitops-system/gitops-system -->";
    *forge.listing.lock().unwrap() =
        json!([{"id": 3, "author": {"username": "test-user"}, "body": format!("{marker}\n\nold")}])
            .to_string();
    n.post(&e).await.unwrap();
    let seen = forge.take();
    assert_eq!(
        seen[1].1,
        "/api/v4/projects/foo%2Fbar/merge_requests/5/notes?order_by=created_at&per_page=100&sort=asc"
    );
    assert_eq!(seen[2].0, Method::PUT);
    assert_eq!(
        seen[2].1,
        "/api/v4/projects/foo%2Fbar/merge_requests/5/notes/3"
    );
    assert!(
        seen[2].3.contains("\\u003c!-- flux-mr-comment-key"),
        "{}",
        seen[2].3
    );
    assert!(
        body(&seen[2].3)["body"]
            .as_str()
            .unwrap()
            .contains("⚠️ Kustomization/gitops-system/gitops-system")
    );
}

/// GitHub's App endpoints on a loopback port: `/app` (the slug), installations by owner
/// (organization missing, user found) and the installation token exchange; each request's
/// path and Authorization recorded.
async fn github_app_api() -> (String, Arc<Mutex<Vec<(Method, String, String)>>>) {
    let seen: Arc<Mutex<Vec<(Method, String, String)>>> = Arc::default();
    let s = seen.clone();
    let app = axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap| {
        let s = s.clone();
        async move {
            let auth = headers
                .get("Authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            s.lock()
                .unwrap()
                .push((method.clone(), uri.path().to_string(), auth));
            let expires = k8s_openapi::jiff::Timestamp::now()
                .checked_add(k8s_openapi::jiff::SignedDuration::from_hours(1))
                .unwrap();
            match (method, uri.path()) {
                (Method::GET, "/app") => (StatusCode::OK, json!({"slug": "flux-bot"}).to_string()),
                (Method::GET, "/users/acme/installation") => {
                    (StatusCode::OK, json!({"id": 42}).to_string())
                }
                (Method::POST, "/app/installations/42/access_tokens") => (
                    StatusCode::CREATED,
                    json!({"token": "ghs_installation", "expires_at": expires.to_string()})
                        .to_string(),
                ),
                _ => (
                    StatusCode::NOT_FOUND,
                    json!({"message": "Not Found"}).to_string(),
                ),
            }
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await });
    (url, seen)
}

fn app_secret(api: &str, extra: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/receiver");
    let mut data: BTreeMap<String, Vec<u8>> = [
        ("githubAppID", "7".as_bytes().to_vec()),
        (
            "githubAppPrivateKey",
            std::fs::read(dir.join("rsa-test-key.pem")).unwrap(),
        ),
        ("githubAppBaseURL", api.as_bytes().to_vec()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (k, v) in extra {
        data.insert(k.to_string(), v.as_bytes().to_vec());
    }
    data
}

#[tokio::test]
async fn github_app_tokens_are_exchanged_and_kept() {
    let (api, seen) = github_app_api().await;
    let http = tidegate_source::tls::http_client();
    let data = app_secret(&api, &[("githubAppInstallationOwner", "acme")]);
    let t = super::github_app::token(&http, &data, true).await.unwrap();
    assert_eq!(
        (t.token.as_str(), t.slug.as_str()),
        ("ghs_installation", "flux-bot")
    );
    let calls = std::mem::take(&mut *seen.lock().unwrap());
    let paths: Vec<(&Method, &str)> = calls.iter().map(|(m, p, _)| (m, p.as_str())).collect();
    assert_eq!(
        paths,
        [
            (&Method::GET, "/app"),
            (&Method::GET, "/orgs/acme/installation"),
            (&Method::GET, "/users/acme/installation"),
            (&Method::POST, "/app/installations/42/access_tokens"),
        ]
    );
    // The App's JWT: RS256 with the App's key, issued by the App ID, two minutes long.
    let jwt = calls[3].2.strip_prefix("Bearer ").unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/receiver");
    let jwk: jsonwebtoken::jwk::Jwk =
        serde_json::from_slice(&std::fs::read(dir.join("rsa-test-key.jwk.json")).unwrap()).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.validate_aud = false;
    let claims = jsonwebtoken::decode::<Value>(
        jwt,
        &jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap(),
        &validation,
    )
    .unwrap()
    .claims;
    assert_eq!(claims["iss"], "7");
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        120
    );
    // Kept while it has more than a minute left: no second exchange.
    super::github_app::token(&http, &data, true).await.unwrap();
    assert!(seen.lock().unwrap().is_empty());
    // An installation that does not exist: both lookups' errors, as fluxcd/pkg joins them.
    let missing = app_secret(&api, &[("githubAppInstallationOwner", "nobody")]);
    let err = super::github_app::token(&http, &missing, false)
        .await
        .unwrap_err();
    assert!(
        err.starts_with("failed to find organization installation: GET ")
            && err.contains("\nfailed to find user installation: GET ")
            && err.contains("404"),
        "{err}"
    );
}

#[tokio::test]
async fn app_comments_are_found_by_the_bot_user() {
    let (url, forge) = Forge::start().await;
    let mut s = settings(format!("{url}/foo/bar"), "ghs_installation");
    s.provider_uid = "0c9c2e41-d2f9-4f9b-9c41-bebc1984d67a".into();
    s.app_slug = "flux-bot".into();
    let n = build("githubpullrequestcomment", s).unwrap();
    let mut e = event("info", "ReconciliationSucceeded", None);
    e.metadata.insert("change_request".into(), "42".into());
    let marker = "<!-- flux-pr-comment-key:0c9c2e41-d2f9-4f9b-9c41-bebc1984d67a/Kustomization/gitops-system/gitops-system -->";
    *forge.listing.lock().unwrap() = json!([
        {"id": 9, "user": {"login": "flux-bot[bot]"}, "body": format!("{marker}\n\nold")},
    ])
    .to_string();
    n.post(&e).await.unwrap();
    let seen = forge.take();
    assert!(
        !seen.iter().any(|r| r.1.ends_with("/user")),
        "an App has no /user to ask"
    );
    assert_eq!(seen[1].0, Method::PATCH);
    assert_eq!(seen[1].1, "/api/v3/repos/foo/bar/issues/comments/9");
}
