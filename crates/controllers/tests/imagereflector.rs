//! The image-reflector-controller (ImageRepository and ImagePolicy) against the embedded API
//! server (through kube-rs) and Debian's docker-registry on loopback, plain and behind
//! htpasswd basic auth: tags scanned, excluded and stored; policies choosing, following a new
//! tag, reflecting digests; Flux's refusals.

#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;
mod source_support;

use std::collections::BTreeMap;

use registry_support::{Mode, Registry};
use source_support::*;
use tidegate_source::oci::{self, Credentials};

/// Pushes a small artifact as `repo:tag`; returns its manifest digest.
async fn push(reg: &Registry, repo: &str, tag: &str, credentials: Credentials) -> String {
    let (repository, _) = oci::parse_artifact_url(&reg.url(repo)).unwrap();
    let registry = oci::Registry::connect(
        &repository,
        &oci::Options {
            credentials,
            ca_pem: reg.ca_pem.clone().map(String::into_bytes),
            client_pem: reg.client_pem().map(String::into_bytes),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let layer = format!("content of {tag}").into_bytes();
    registry
        .push_artifact(
            tag,
            layer.into(),
            oci::registry::FLUX_CONTENT,
            &BTreeMap::new(),
        )
        .await
        .unwrap()
}

fn image_repository(name: &str, image: &str, extra: &str) -> String {
    format!(
        "apiVersion: image.toolkit.fluxcd.io/v1\nkind: ImageRepository\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  image: {image}\n  interval: 1h\n{extra}"
    )
}

fn image_policy(name: &str, repo: &str, spec: &str) -> String {
    format!(
        "apiVersion: image.toolkit.fluxcd.io/v1\nkind: ImagePolicy\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  imageRepositoryRef:\n    name: {repo}\n{spec}"
    )
}

fn message(o: &serde_json::Value, type_: &str) -> (String, String) {
    let c = condition(o, type_).unwrap_or(&serde_json::Value::Null);
    (
        c["reason"].as_str().unwrap_or("").to_string(),
        c["message"].as_str().unwrap_or("").to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_are_scanned_and_policies_choose_follow_and_reflect_digests() {
    let reg = Registry::start(Mode::Plain);
    let env = start().await;
    let mut digests = BTreeMap::new();
    for tag in [
        "1.0.0",
        "1.0.1",
        "1.1.0",
        "2.0.0-rc.1",
        "latest",
        "sha256-0a1b.sig",
    ] {
        digests.insert(
            tag,
            push(&reg, "team/app", tag, Credentials::Anonymous).await,
        );
    }
    let image = format!("{}/team/app", reg.host);
    env.server
        .ok_stdin(&["apply", "-f", "-"], &image_repository("app", &image, ""));
    let o = wait_for(&env, "imagerepository/app", "Ready", ready).await;
    // The cosign signature is excluded by default; the rest sorted as Flux stores them.
    let mut stored: Vec<String> = ["1.0.0", "1.0.1", "1.1.0", "2.0.0-rc.1", "latest"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    tidegate_source::image::tags::sort_descending(&mut stored);
    let checksum = tidegate_source::image::tags::revision(&stored);
    assert_eq!(
        message(&o, "Ready"),
        (
            "Succeeded".into(),
            format!("successful scan: found 5 tags with checksum {checksum}")
        )
    );
    let st = &o["status"];
    assert_eq!(st["canonicalImageName"], image.as_str());
    assert_eq!(st["lastScanResult"]["tagCount"], 5);
    assert_eq!(st["lastScanResult"]["revision"], checksum.as_str());
    assert_eq!(
        st["lastScanResult"]["latestTags"],
        serde_json::json!(["latest", "2.0.0-rc.1", "1.1.0", "1.0.1", "1.0.0"])
    );
    assert_eq!(
        st["observedExclusionList"],
        serde_json::json!(["^.*\\.sig$"])
    );
    assert!(st["lastScanResult"]["scanTime"].is_string());

    // Policies: semver, alphabetical over an extracted part, digests reflected.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &[
            image_policy("patch", "app", "  policy:\n    semver:\n      range: '~1.0'\n"),
            image_policy(
                "minor",
                "app",
                "  digestReflectionPolicy: IfNotPresent\n  policy:\n    semver:\n      range: '>=1.0.0 <2.0.0'\n",
            ),
            image_policy(
                "pre",
                "app",
                "  filterTags:\n    pattern: '^(?P<v>[0-9.]+)-rc\\.[0-9]+$'\n    extract: '$v'\n  policy:\n    alphabetical:\n      order: asc\n",
            ),
        ]
        .join("---\n"),
    );
    let p = wait_for(&env, "imagepolicy/patch", "Ready", ready).await;
    assert_eq!(
        message(&p, "Ready").1,
        format!("Latest image tag for {image} resolved to 1.0.1")
    );
    assert_eq!(
        p["status"]["latestRef"],
        serde_json::json!({"name": image, "tag": "1.0.1"})
    );
    let m = wait_for(&env, "imagepolicy/minor", "Ready", ready).await;
    assert_eq!(m["status"]["latestRef"]["tag"], "1.1.0");
    assert_eq!(
        m["status"]["latestRef"]["digest"],
        digests["1.1.0"].as_str()
    );
    assert_eq!(
        message(&m, "Ready").1,
        format!(
            "Latest image tag for {image} resolved to 1.1.0 with digest {}",
            digests["1.1.0"]
        )
    );
    let pre = wait_for(&env, "imagepolicy/pre", "Ready", ready).await;
    assert_eq!(
        pre["status"]["latestRef"]["tag"], "2.0.0-rc.1",
        "the original tag"
    );

    // A new tag, a requested scan: the policy follows and remembers the previous one.
    push(&reg, "team/app", "1.0.2", Credentials::Anonymous).await;
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "imagerepository/app",
        "reconcile.fluxcd.io/requestedAt=now",
    ]);
    let p = wait_for(&env, "imagepolicy/patch", "resolved to 1.0.2", |o| {
        o["status"]["latestRef"]["tag"] == "1.0.2"
    })
    .await;
    assert_eq!(
        message(&p, "Ready").1,
        format!("Latest image tag for {image} resolved to 1.0.2 (previously {image}:1.0.1)")
    );
    assert_eq!(p["status"]["observedPreviousRef"]["tag"], "1.0.1");
    let r = get(&env, "imagerepository/app");
    assert_eq!(r["status"]["lastScanResult"]["tagCount"], 6);
    assert_eq!(r["status"]["lastHandledReconcileAt"], "now");

    // Refusals, as Flux words them.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &[
            image_repository("scheme", &format!("https://{image}"), ""),
            image_policy(
                "nothing",
                "app",
                "  policy:\n    semver:\n      range: '>=5.0.0'\n",
            ),
            image_policy(
                "orphan",
                "missing",
                "  policy:\n    semver:\n      range: '1.x'\n",
            ),
            image_policy(
                "badregex",
                "app",
                "  filterTags:\n    pattern: '[='\n  policy:\n    alphabetical: {}\n",
            ),
            image_policy("nopolicy", "app", "  policy: {}\n"),
        ]
        .join("---\n"),
    );
    let s = wait_for(&env, "imagerepository/scheme", "Stalled", |o| {
        condition(o, "Stalled").is_some()
    })
    .await;
    assert_eq!(
        message(&s, "Stalled"),
        (
            "ImageURLInvalid".into(),
            format!("image 'https://{image}' should not include URL scheme; remove 'https://'")
        )
    );
    let n = wait_for(&env, "imagepolicy/nothing", "Ready=False", ready_false).await;
    assert_eq!(
        message(&n, "Ready"),
        (
            "Failure".into(),
            "unable to determine latest version from provided list".into()
        )
    );
    let o = wait_for(&env, "imagepolicy/orphan", "Ready=False", ready_false).await;
    assert_eq!(
        message(&o, "Ready"),
        (
            "DependencyNotReady".into(),
            "failed to get the referred ImageRepository: referenced ImageRepository does not exist: ImageRepository.image.toolkit.fluxcd.io \"missing\" not found".into()
        )
    );
    let b = wait_for(&env, "imagepolicy/badregex", "Stalled", |o| {
        condition(o, "Stalled").is_some()
    })
    .await;
    let (reason, text) = message(&b, "Stalled");
    assert_eq!(reason, "InvalidPolicy");
    assert!(
        text.starts_with("failed to filter tags: invalid regular expression pattern '[=': "),
        "{text}"
    );
    let np = wait_for(&env, "imagepolicy/nopolicy", "Stalled", |o| {
        condition(o, "Stalled").is_some()
    })
    .await;
    assert_eq!(
        message(&np, "Stalled"),
        (
            "InvalidPolicy".into(),
            "invalid policy: given ImagePolicyChoice object is invalid".into()
        )
    );

    // Another namespace's repository needs its accessFrom.
    env.server.ok(&["create", "namespace", "other"]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: image.toolkit.fluxcd.io/v1\nkind: ImagePolicy\nmetadata:\n  name: borrowed\n  namespace: other\nspec:\n  imageRepositoryRef:\n    name: app\n    namespace: default\n  policy:\n    semver:\n      range: '1.x'\n",
    );
    let d = wait_for(
        &env,
        "imagepolicy/borrowed -n other",
        "Ready=False",
        ready_false,
    )
    .await;
    assert_eq!(
        message(&d, "Ready"),
        (
            "AccessDenied".into(),
            "failed to get the referred ImageRepository: access denied: 'default/app' can't be accessed due to missing ACL labels on 'accessFrom'".into()
        )
    );
    env.server.ok(&["label", "namespace", "other", "team=b"]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &image_repository(
            "app",
            &image,
            "  accessFrom:\n    namespaceSelectors:\n    - matchLabels:\n        team: b\n",
        ),
    );
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "-n",
        "other",
        "imagepolicy/borrowed",
        "reconcile.fluxcd.io/requestedAt=again",
    ]);
    let d = wait_for(&env, "imagepolicy/borrowed -n other", "Ready", ready).await;
    assert_eq!(d["status"]["latestRef"]["tag"], "1.1.0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_come_from_a_docker_config_secret_and_an_exclusion_list() {
    let reg = Registry::start(Mode::Htpasswd("robot", "s3cret"));
    let env = start().await;
    let creds = Credentials::Basic {
        username: "robot".into(),
        password: "s3cret".into(),
    };
    for tag in ["v1", "v2", "v2-debug"] {
        push(&reg, "private/app", tag, creds.clone()).await;
    }
    let image = format!("{}/private/app", reg.host);
    env.server
        .ok_stdin(&["apply", "-f", "-"], &image_repository("anon", &image, ""));
    let a = wait_for(&env, "imagerepository/anon", "Ready=False", ready_false).await;
    let (reason, text) = message(&a, "Ready");
    assert_eq!(reason, "ReadOperationFailed", "{text}");
    assert!(text.starts_with("scan failed: "), "{text}");
    let config = format!(
        r#"{{"auths":{{"{}":{{"username":"robot","password":"s3cret"}}}}}}"#,
        reg.host
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: default\ntype: kubernetes.io/dockerconfigjson\nstringData:\n  .dockerconfigjson: '{config}'\n"
        ),
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &[
            image_repository(
                "private",
                &image,
                "  secretRef:\n    name: creds\n  exclusionList:\n  - '-debug$'\n",
            ),
            image_repository("nosecret", &image, "  secretRef:\n    name: absent\n"),
        ]
        .join("---\n"),
    );
    let p = wait_for(&env, "imagerepository/private", "Ready", ready).await;
    assert_eq!(p["status"]["lastScanResult"]["tagCount"], 2);
    assert_eq!(
        p["status"]["observedExclusionList"],
        serde_json::json!(["-debug$"])
    );
    let text = serde_json::to_string(&p["status"]).unwrap();
    assert!(!text.contains("s3cret"), "no credentials in the status");
    let n = wait_for(&env, "imagerepository/nosecret", "Ready=False", ready_false).await;
    let (reason, text) = message(&n, "Ready");
    assert_eq!(reason, "AuthenticationFailed");
    assert!(
        text.starts_with(
            "failed to configure authentication options: failed to get secret 'default/absent'"
        ),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_requiring_client_certificates_is_scanned_with_them() {
    let reg = Registry::start(Mode::MutualTls);
    let env = start().await;
    for tag in ["1.0.0", "1.1.0"] {
        push(&reg, "fleet/app", tag, Credentials::Anonymous).await;
    }
    let (cert, key) = reg.client.clone().unwrap();
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &pem_secret(
            "mtls",
            &[
                ("ca.crt", reg.ca_pem.as_ref().unwrap()),
                ("tls.crt", &cert),
                ("tls.key", &key),
            ],
        ),
    );
    let image = format!("{}/fleet/app", reg.host);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &image_repository("mtls", &image, "  certSecretRef:\n    name: mtls\n"),
    );
    let o = wait_for(&env, "imagerepository/mtls", "Ready", ready).await;
    assert_eq!(o["status"]["lastScanResult"]["tagCount"], 2);
}

/// More tags than one page of the tag list: Debian's docker-registry ignores `n` and `last`
/// and answers every tag at once, which once made the listing repeat itself until it timed
/// out. Every tag is counted once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_than_a_page_of_tags_is_listed_once() {
    let reg = Registry::start(Mode::Plain);
    let env = start().await;
    push(&reg, "big/app", "seed", Credentials::Anonymous).await;
    let (repository, _) = oci::parse_artifact_url(&reg.url("big/app")).unwrap();
    let registry = oci::Registry::connect(&repository, &oci::Options::default())
        .await
        .unwrap();
    let seed = repository.tag("seed");
    for i in 0..1_100 {
        registry
            .tag(&seed, &format!("1.{}.{}", i / 100, i % 100))
            .await
            .unwrap();
    }
    let image = format!("{}/big/app", reg.host);
    env.server
        .ok_stdin(&["apply", "-f", "-"], &image_repository("big", &image, ""));
    let o = wait_for(&env, "imagerepository/big", "Ready", ready).await;
    assert_eq!(o["status"]["lastScanResult"]["tagCount"], 1_101);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &image_policy("big", "big", "  policy:\n    semver:\n      range: '1.x'\n"),
    );
    let p = wait_for(&env, "imagepolicy/big", "Ready", ready).await;
    assert_eq!(p["status"]["latestRef"]["tag"], "1.10.99");
}

/// A registry that starts answering 500: the scan fails with the registry's status, and
/// nothing is lost — the stored tags, the last scan result and the policy's choice stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_answering_500_loses_no_tags() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU8, Ordering};
    // 0: healthy; 1: the tag list answers 500; 2: everything answers 500.
    let broken = Arc::new(AtomicU8::new(0));
    let flag = broken.clone();
    let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
        let flag = flag.clone();
        async move {
            use axum::http::StatusCode;
            use axum::response::IntoResponse;
            let path = req.uri().path().to_string();
            let mode = flag.load(Ordering::Relaxed);
            if mode == 2 || (mode == 1 && path.ends_with("/tags/list")) {
                return (StatusCode::INTERNAL_SERVER_ERROR, "storage backend down").into_response();
            }
            match path.as_str() {
                "/v2/" => (StatusCode::OK, "{}").into_response(),
                "/v2/team/app/tags/list" => (
                    StatusCode::OK,
                    [("content-type", "application/json")],
                    r#"{"name":"team/app","tags":["1.0.0","1.1.0","2.0.0"]}"#,
                )
                    .into_response(),
                _ => StatusCode::NOT_FOUND.into_response(),
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let host = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let env = start().await;
    let image = format!("{host}/team/app");
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &[
            image_repository("flaky", &image, ""),
            image_policy(
                "flaky",
                "flaky",
                "  policy:\n    semver:\n      range: '1.x'\n",
            ),
        ]
        .join("---\n"),
    );
    let before = wait_for(&env, "imagerepository/flaky", "Ready", ready).await;
    assert_eq!(before["status"]["lastScanResult"]["tagCount"], 3);
    wait_for(&env, "imagepolicy/flaky", "Ready", |o| {
        ready(o) && o["status"]["latestRef"]["tag"] == "1.1.0"
    })
    .await;
    for (mode, at) in [(1u8, "tags"), (2, "all")] {
        broken.store(mode, Ordering::Relaxed);
        env.server.ok(&[
            "annotate",
            "--overwrite",
            "imagerepository/flaky",
            &format!("reconcile.fluxcd.io/requestedAt=outage-{at}"),
        ]);
        let after = wait_for(&env, "imagerepository/flaky", "Ready=False", |o| {
            ready_false(o)
                && o["status"]["lastHandledReconcileAt"] == format!("outage-{at}").as_str()
        })
        .await;
        let (reason, text) = message(&after, "Ready");
        assert_eq!(reason, "ReadOperationFailed", "{text}");
        assert!(
            text.starts_with("scan failed: ") && text.contains("500"),
            "{at}: {text}"
        );
        assert_eq!(
            after["status"]["lastScanResult"], before["status"]["lastScanResult"],
            "the last good scan stays"
        );
    }
    // The stored tags are still there: a policy reading them now still chooses.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &image_policy(
            "later",
            "flaky",
            "  policy:\n    semver:\n      range: '2.x'\n",
        ),
    );
    wait_for(&env, "imagepolicy/later", "Ready", |o| {
        ready(o) && o["status"]["latestRef"]["tag"] == "2.0.0"
    })
    .await;
    assert_eq!(
        get(&env, "imagepolicy/flaky")["status"]["latestRef"]["tag"],
        "1.1.0"
    );
}
