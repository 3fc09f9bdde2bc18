//! Receivers that authenticate by token or by payload: `generic-oidc` against a local OpenID
//! Connect issuer (discovery and key set served here, ES256 and RS256 keys, a key rotated in),
//! `gcr` against Google-shaped ID tokens whose keys the test serves, and `cdevents` with the
//! spec's conformance events. Only genuine requests annotate anything.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use super::{Env, start_with};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A P-256 key: what signs and the JWK that verifies.
struct EcKey {
    encoding: EncodingKey,
    jwk: Value,
}

fn ec_key(seed: u8, kid: &str) -> EcKey {
    use p256::pkcs8::EncodePrivateKey;
    let sk = p256::SecretKey::from_slice(&[seed; 32]).unwrap();
    let point = sk.public_key().to_sec1_bytes();
    // Uncompressed SEC1: 0x04 || x || y.
    let (x, y) = point[1..].split_at(32);
    EcKey {
        encoding: EncodingKey::from_ec_der(sk.to_pkcs8_der().unwrap().as_bytes()),
        jwk: json!({"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
                    "x": B64.encode(x), "y": B64.encode(y)}),
    }
}

fn rsa_key() -> (EncodingKey, Value) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/receiver");
    let pem = std::fs::read(dir.join("rsa-test-key.pem")).unwrap();
    let jwk: Value =
        serde_json::from_slice(&std::fs::read(dir.join("rsa-test-key.jwk.json")).unwrap()).unwrap();
    (EncodingKey::from_rsa_pem(&pem).unwrap(), jwk)
}

fn sign(alg: Algorithm, kid: &str, key: &EncodingKey, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(kid.into());
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn json_body(v: Value) -> ([(&'static str, &'static str); 1], String) {
    ([("Content-Type", "application/json")], v.to_string())
}

/// The keys the stand-in serves, and how often each key set was fetched.
#[derive(Default)]
struct Keys {
    oidc: Mutex<Vec<Value>>,
    google: Mutex<Vec<Value>>,
    fetches: Mutex<u32>,
}

/// An OpenID Connect issuer and Google's certificate endpoints on a loopback port.
async fn issuer() -> (String, Arc<Keys>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let keys = Arc::new(Keys::default());
    let discovery = {
        let base = base.clone();
        move || async move {
            json_body(json!({
                "issuer": base,
                "jwks_uri": format!("{base}/keys"),
                "id_token_signing_alg_values_supported": ["ES256", "RS256"],
            }))
        }
    };
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            axum::routing::get(discovery),
        )
        .route(
            "/keys",
            axum::routing::get(|State(k): State<Arc<Keys>>| async move {
                *k.fetches.lock().unwrap() += 1;
                json_body(json!({"keys": *k.oidc.lock().unwrap()}))
            }),
        )
        .route(
            "/google/certs",
            axum::routing::get(|State(k): State<Arc<Keys>>| async move {
                json_body(json!({"keys": *k.google.lock().unwrap()}))
            }),
        )
        .with_state(keys.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, keys)
}

async fn annotated_after(
    env: &Env,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, bool) {
    let before = env.requested_at(&["gitrepository", "app"]);
    let code = env.post(path, headers, body.to_vec()).await;
    let after = env.requested_at(&["gitrepository", "app"]);
    (code, after.is_some() && after != before)
}

#[tokio::test(flavor = "multi_thread")]
async fn token_and_event_receivers_accept_only_genuine_requests() {
    let (issuer_url, keys) = issuer().await;
    let options = tidegate_controllers::receiver::Options {
        google_certs: tidegate_controllers::receiver::gcr::GoogleCerts {
            rs256: format!("{issuer_url}/google/certs"),
            es256: format!("{issuer_url}/google/certs"),
        },
        ..Default::default()
    };
    let env = start_with(options).await;
    let current = ec_key(31, "ec-1");
    let (rsa, rsa_jwk) = rsa_key();
    keys.oidc
        .lock()
        .unwrap()
        .extend([current.jwk.clone(), rsa_jwk]);

    // generic-oidc: GitHub Actions-shaped claims, the owner checked through a variable and
    // the ref through the Receiver's filter over `claims`.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            r#"apiVersion: notification.toolkit.fluxcd.io/v1
kind: Receiver
metadata: {{name: oidc, namespace: default}}
spec:
  type: generic-oidc
  oidcProviders:
  - issuerURL: {issuer_url}
    variables:
    - {{name: owner, expression: "claims.repository_owner"}}
    validations:
    - {{expression: "vars.owner == 'fluxcd'", message: "repository owner must be fluxcd"}}
  resourceFilter: "claims.ref == 'refs/heads/main'"
  resources:
  - {{kind: GitRepository, name: app}}
"#
        ),
    );
    let path = env.path("oidc").await;
    let claims = |over: Value| {
        let mut c = json!({"iss": issuer_url, "aud": "notification-controller",
                           "sub": "repo:fluxcd/flux2:ref:refs/heads/main",
                           "repository_owner": "fluxcd", "ref": "refs/heads/main",
                           "iat": now(), "exp": now() + 300});
        for (k, v) in over.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let bearer = |t: &str| format!("Bearer {t}");
    let good = sign(
        Algorithm::ES256,
        "ec-1",
        &current.encoding,
        &claims(json!({})),
    );
    assert_eq!(
        annotated_after(&env, &path, &[("Authorization", &bearer(&good))], b"{}").await,
        (200, true)
    );
    let rsa_signed = sign(
        Algorithm::RS256,
        "rsa-1",
        &rsa,
        &claims(json!({"aud": ["other", "notification-controller"]})),
    );
    assert_eq!(
        annotated_after(
            &env,
            &path,
            &[("Authorization", &bearer(&rsa_signed))],
            b"{}"
        )
        .await,
        (200, true)
    );
    let fetches = *keys.fetches.lock().unwrap();
    assert_eq!(
        fetches, 1,
        "the key set is cached while it has the token's key"
    );
    // A token the filter turns away is accepted (200) but reconciles nothing.
    let dev = sign(
        Algorithm::ES256,
        "ec-1",
        &current.encoding,
        &claims(json!({"ref": "refs/heads/dev"})),
    );
    assert_eq!(
        annotated_after(&env, &path, &[("Authorization", &bearer(&dev))], b"{}").await,
        (200, false)
    );
    let forger = ec_key(32, "ec-1");
    let mut hs_header = Header::new(Algorithm::HS256);
    hs_header.kid = Some("ec-1".into());
    let hs256 = jsonwebtoken::encode(
        &hs_header,
        &claims(json!({})),
        &EncodingKey::from_secret(b"guess"),
    )
    .unwrap();
    for (what, token) in [
        (
            "forged signature",
            sign(
                Algorithm::ES256,
                "ec-1",
                &forger.encoding,
                &claims(json!({})),
            ),
        ),
        (
            "expired",
            sign(
                Algorithm::ES256,
                "ec-1",
                &current.encoding,
                &claims(json!({"exp": now() - 10})),
            ),
        ),
        (
            "not yet valid",
            sign(
                Algorithm::ES256,
                "ec-1",
                &current.encoding,
                &claims(json!({"nbf": now() + 3600})),
            ),
        ),
        (
            "other audience",
            sign(
                Algorithm::ES256,
                "ec-1",
                &current.encoding,
                &claims(json!({"aud": "someone-else"})),
            ),
        ),
        (
            "failed validation",
            sign(
                Algorithm::ES256,
                "ec-1",
                &current.encoding,
                &claims(json!({"repository_owner": "evil"})),
            ),
        ),
        (
            "unknown issuer",
            sign(
                Algorithm::ES256,
                "ec-1",
                &current.encoding,
                &claims(json!({"iss": "https://elsewhere.example"})),
            ),
        ),
        ("HMAC", hs256),
        ("not a JWT", "abc.def".into()),
    ] {
        assert_eq!(
            annotated_after(&env, &path, &[("Authorization", &bearer(&token))], b"{}").await,
            (400, false),
            "{what}"
        );
    }
    assert_eq!(
        annotated_after(&env, &path, &[], b"{}").await,
        (400, false),
        "no token"
    );
    assert_eq!(
        annotated_after(&env, &path, &[("Authorization", &good)], b"{}").await,
        (400, false),
        "no Bearer prefix"
    );
    // A key rotated in after the set was cached: read again, then trusted.
    let rotated = ec_key(33, "ec-2");
    keys.oidc.lock().unwrap().push(rotated.jwk.clone());
    let new_key = sign(
        Algorithm::ES256,
        "ec-2",
        &rotated.encoding,
        &claims(json!({})),
    );
    assert_eq!(
        annotated_after(&env, &path, &[("Authorization", &bearer(&new_key))], b"{}").await,
        (200, true)
    );

    // gcr: a Pub/Sub push with a Google ID token for the subscription's service account.
    let google = ec_key(41, "google-1");
    keys.google.lock().unwrap().push(google.jwk.clone());
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "gcr-token",
        "--from-literal=token=t",
        "--from-literal=email=push@proj.iam.gserviceaccount.com",
        "--from-literal=audience=https://hooks.example.com/gcr",
    ]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: notification.toolkit.fluxcd.io/v1
kind: Receiver
metadata: {name: gcr, namespace: default}
spec:
  type: gcr
  secretRef: {name: gcr-token}
  resourceFilter: "req.action == 'INSERT' && req.tag.endsWith(':v1')"
  resources:
  - {kind: GitRepository, name: app}
"#,
    );
    let gcr_path = env.path("gcr").await;
    let gcr_claims = |over: Value| {
        let mut c = json!({"iss": "https://accounts.google.com", "aud": "https://hooks.example.com/gcr",
                           "email": "push@proj.iam.gserviceaccount.com", "email_verified": true,
                           "sub": "1234", "iat": now(), "exp": now() + 300});
        for (k, v) in over.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let push = |tag: &str| {
        let data = base64::engine::general_purpose::STANDARD.encode(
            json!({"action": "INSERT", "digest": "us-docker.pkg.dev/p/r/app@sha256:00", "tag": tag}).to_string(),
        );
        json!({"message": {"data": data, "messageId": "1", "publishTime": "2026-11-27T04:00:00Z"},
               "subscription": "projects/p/subscriptions/s"})
        .to_string()
        .into_bytes()
    };
    let json_type = ("Content-Type", "application/json");
    let gcr_token = sign(
        Algorithm::ES256,
        "google-1",
        &google.encoding,
        &gcr_claims(json!({})),
    );
    assert_eq!(
        annotated_after(
            &env,
            &gcr_path,
            &[("Authorization", &bearer(&gcr_token)), json_type],
            &push("us-docker.pkg.dev/p/r/app:v1")
        )
        .await,
        (200, true)
    );
    // The filter sees the unwrapped registry event: another tag reconciles nothing.
    assert_eq!(
        annotated_after(
            &env,
            &gcr_path,
            &[("Authorization", &bearer(&gcr_token)), json_type],
            &push("us-docker.pkg.dev/p/r/app:v2")
        )
        .await,
        (200, false)
    );
    for (what, token) in [
        (
            "unverified email",
            sign(
                Algorithm::ES256,
                "google-1",
                &google.encoding,
                &gcr_claims(json!({"email_verified": false})),
            ),
        ),
        (
            "other account",
            sign(
                Algorithm::ES256,
                "google-1",
                &google.encoding,
                &gcr_claims(json!({"email": "x@proj.iam.gserviceaccount.com"})),
            ),
        ),
        (
            "other audience",
            sign(
                Algorithm::ES256,
                "google-1",
                &google.encoding,
                &gcr_claims(json!({"aud": "https://elsewhere"})),
            ),
        ),
        (
            "other issuer",
            sign(
                Algorithm::ES256,
                "google-1",
                &google.encoding,
                &gcr_claims(json!({"iss": "https://evil.example"})),
            ),
        ),
        (
            "forged",
            sign(
                Algorithm::ES256,
                "google-1",
                &ec_key(42, "google-1").encoding,
                &gcr_claims(json!({})),
            ),
        ),
        (
            "expired",
            sign(
                Algorithm::ES256,
                "google-1",
                &google.encoding,
                &gcr_claims(json!({"exp": now() - 5})),
            ),
        ),
    ] {
        assert_eq!(
            annotated_after(
                &env,
                &gcr_path,
                &[("Authorization", &bearer(&token)), json_type],
                &push("us-docker.pkg.dev/p/r/app:v1")
            )
            .await,
            (400, false),
            "{what}"
        );
    }
    assert_eq!(
        annotated_after(
            &env,
            &gcr_path,
            &[json_type],
            &push("us-docker.pkg.dev/p/r/app:v1")
        )
        .await,
        (400, false),
        "unsigned"
    );

    // cdevents: a spec conformance event, with and without the type allowed.
    let event_file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cdevents-conformance/pipelinerun_finished.json");
    let mut event: Value = serde_json::from_slice(&std::fs::read(event_file).unwrap()).unwrap();
    event["context"]
        .as_object_mut()
        .unwrap()
        .remove("schemaUri");
    let ce_type = event["context"]["type"].as_str().unwrap().to_string();
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "{}{}",
            super::receiver(
                "cdevents",
                "cdevents",
                &format!("  events: [\"{ce_type}\"]\n"),
                "  - {kind: GitRepository, name: app}\n"
            ),
            super::receiver(
                "cdevents-other",
                "cdevents",
                "  events: [\"dev.cdevents.service.deployed.0.2.0\"]\n",
                "  - {kind: GitRepository, name: app}\n"
            ),
        ),
    );
    let ce_path = env.path("cdevents").await;
    let other_path = env.path("cdevents-other").await;
    let body = event.to_string().into_bytes();
    let ce = [("Ce-Type", ce_type.as_str()), json_type];
    assert_eq!(
        annotated_after(&env, &ce_path, &ce, &body).await,
        (200, true)
    );
    assert_eq!(
        annotated_after(&env, &other_path, &ce, &body).await,
        (400, false)
    );
    let mut broken = event.clone();
    broken["subject"]["type"] = json!("taskRun");
    assert_eq!(
        annotated_after(&env, &ce_path, &ce, broken.to_string().as_bytes()).await,
        (400, false)
    );
    assert_eq!(
        annotated_after(&env, &ce_path, &ce, b"not json").await,
        (400, false)
    );
}
