//! The OCIRepository controller against the embedded API server (through kube-rs) and Debian's
//! docker-registry on loopback (plain, htpasswd, mutual TLS), with artifacts pushed in Flux's
//! format;
//! and a Kustomization built from an OCIRepository.

#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;
mod source_support;

use std::collections::BTreeMap;
use std::time::Duration;

use registry_support::{Mode, Registry};
use source_support::*;
use tidegate_source::oci::{self, Credentials};

/// Pushes `files` (path, content) as a Flux artifact to `repo:tag`; returns the manifest digest.
async fn push(
    reg: &Registry,
    repo: &str,
    tag: &str,
    files: &[(&str, &str)],
    credentials: Credentials,
) -> String {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    let ignore = tidegate_source::ignore::SourceIgnore::from_patterns(
        &tidegate_source::ignore::exclude_oci(),
    );
    let (layer, _) = oci::layer::build(dir.path(), &ignore, Vec::new()).unwrap();
    push_layer(
        reg,
        repo,
        tag,
        layer,
        oci::registry::FLUX_CONTENT,
        credentials,
    )
    .await
}

async fn push_layer(
    reg: &Registry,
    repo: &str,
    tag: &str,
    layer: Vec<u8>,
    media_type: &str,
    credentials: Credentials,
) -> String {
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
    let mut annotations = BTreeMap::new();
    annotations.insert(
        "org.opencontainers.image.source".to_string(),
        "https://github.com/example/fleet".to_string(),
    );
    annotations.insert(
        "org.opencontainers.image.revision".to_string(),
        format!("{tag}@sha1:0123456789abcdef"),
    );
    registry
        .push_artifact(tag, layer.into(), media_type, &annotations)
        .await
        .unwrap()
}

fn oci_repository(name: &str, url: &str, spec: &str) -> String {
    format!(
        "apiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: OCIRepository\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 1m\n  url: {url}\n{spec}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semver_selects_stores_and_follows_new_tags_and_a_kustomization_applies_it() {
    let reg = Registry::start(Mode::Plain);
    let env = start().await;
    let cm = |v: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-oci\n  namespace: default\ndata:\n  version: \"{v}\"\n"
        )
    };
    let d1 = push(
        &reg,
        "fleet/app",
        "1.0.0",
        &[
            ("app/cm.yaml", &cm("1.0.0")),
            (".github/ci.yml", "on: push\n"),
            ("app/.sourceignore", "notes.txt\n"),
            ("app/notes.txt", "x"),
        ],
        Credentials::Anonymous,
    )
    .await;
    // A newer tag outside the range, and a tag that is no version.
    push(
        &reg,
        "fleet/app",
        "2.0.0",
        &[("app/cm.yaml", &cm("2.0.0"))],
        Credentials::Anonymous,
    )
    .await;
    push(
        &reg,
        "fleet/app",
        "latest",
        &[("app/cm.yaml", &cm("latest"))],
        Credentials::Anonymous,
    )
    .await;
    let url = reg.url("fleet/app");
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &oci_repository("app", &url, "  ref:\n    semver: \">=1.0.0 <2.0.0\"\n"),
    );
    let revision = format!("1.0.0@{d1}");
    let o = wait_for(&env, "ocirepository/app", "Ready at 1.0.0", |o| {
        ready(o) && o["status"]["artifact"]["revision"] == revision.as_str()
    })
    .await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "Succeeded");
    assert_eq!(
        c["message"],
        format!("stored artifact for digest '{revision}'")
    );
    let a = &o["status"]["artifact"];
    assert_eq!(
        a["metadata"]["org.opencontainers.image.source"],
        "https://github.com/example/fleet"
    );
    let hex = d1.trim_start_matches("sha256:");
    assert!(
        a["path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("ocirepository/default/app/sha256:{hex}.tar.gz")),
        "{a}"
    );
    assert!(
        o["status"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/ocirepository/default/app/latest.tar.gz"),
        "{o}"
    );
    // The layer's own .sourceignore holds a pattern, so Flux's default exclusions no longer
    // apply (.github stays); the pattern removes notes.txt.
    assert_eq!(
        artifact_files(a["url"].as_str().unwrap()).await,
        [".github/ci.yml", "app/.sourceignore", "app/cm.yaml"]
    );
    assert_eq!(
        artifact_files(o["status"]["url"].as_str().unwrap())
            .await
            .len(),
        3
    );

    // A Kustomization from it applies.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: app\n  namespace: default\nspec:\n  interval: 10m\n  path: ./app\n  prune: true\n  sourceRef:\n    kind: OCIRepository\n    name: app\n",
    );
    let version = || {
        let out = env.server.kubectl(&[
            "get",
            "configmap",
            "from-oci",
            "-o",
            "jsonpath={.data.version}",
        ]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while version() != "1.0.0" {
        assert!(
            std::time::Instant::now() < deadline,
            "the Kustomization applies: {}",
            get(&env, "kustomization/app")["status"]
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let k = get(&env, "kustomization/app");
    assert_eq!(k["status"]["lastAppliedRevision"], revision.as_str());

    // A new tag within the range moves the revision (on request, as a Receiver would) and
    // the Kustomization re-applies at once.
    let d2 = push(
        &reg,
        "fleet/app",
        "1.1.0",
        &[("app/cm.yaml", &cm("1.1.0"))],
        Credentials::Anonymous,
    )
    .await;
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "ocirepository",
        "app",
        "reconcile.fluxcd.io/requestedAt=1",
    ]);
    let revision2 = format!("1.1.0@{d2}");
    wait_for(&env, "ocirepository/app", "Ready at 1.1.0", |o| {
        ready(o)
            && o["status"]["artifact"]["revision"] == revision2.as_str()
            && condition(o, "ArtifactOutdated").is_none()
    })
    .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while version() != "1.1.0" {
        assert!(
            std::time::Instant::now() < deadline,
            "the Kustomization re-applies"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // NewArtifact events name the revision, the URL and the origin.
    let events = env.server.ok(&[
        "get",
        "events",
        "--field-selector",
        "reason=NewArtifact",
        "-o",
        "jsonpath={.items[*].message}",
    ]);
    assert!(
        events.contains(&format!("stored artifact with revision '{revision2}' from '{url}', origin source 'https://github.com/example/fleet', origin revision '1.1.0@sha1:0123456789abcdef'")),
        "{events}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_references_layers_and_content_get_flux_messages() {
    let reg = Registry::start(Mode::Plain);
    let env = start().await;
    push(
        &reg,
        "fleet/app",
        "v1",
        &[("cm.yaml", "a: 1\n")],
        Credentials::Anonymous,
    )
    .await;
    // A layer that is not gzip, under Flux's content media type.
    push_layer(
        &reg,
        "fleet/corrupt",
        "v1",
        b"not a tarball".to_vec(),
        oci::registry::FLUX_CONTENT,
        Credentials::Anonymous,
    )
    .await;
    let url = reg.url("fleet/app");
    let cases = [
        (
            "missing-tag",
            url.clone(),
            "  ref:\n    tag: nope\n",
            "OCIArtifactPullFailed",
            "failed to determine artifact digest: ".to_string(),
        ),
        (
            "no-semver",
            url.clone(),
            "  ref:\n    semver: \">=5.0.0\"\n",
            "ReadOperationFailed",
            format!(
                "failed to determine the artifact tag for '{url}': no match found for semver: >=5.0.0"
            ),
        ),
        (
            "media-type",
            url.clone(),
            "  ref:\n    tag: v1\n  layerSelector:\n    mediaType: application/x-none\n",
            "OCIArtifactLayerOperationFailed",
            "failed to find layer with media type 'application/x-none' in artifact".to_string(),
        ),
        (
            "corrupt",
            reg.url("fleet/corrupt"),
            "  ref:\n    tag: v1\n",
            "OCIArtifactLayerOperationFailed",
            "failed to extract layer contents from artifact: requires gzip-compressed body"
                .to_string(),
        ),
        (
            "tagged-url",
            format!("{url}:v1"),
            "",
            "URLInvalid",
            format!(
                "URL validation failed for '{url}:v1': URL must not contain a tag; remove ':v1'"
            ),
        ),
    ];
    for (name, u, spec, _, _) in &cases {
        env.server
            .ok_stdin(&["apply", "-f", "-"], &oci_repository(name, u, spec));
    }
    for (name, _, _, reason, message) in &cases {
        let o = wait_for(
            &env,
            &format!("ocirepository/{name}"),
            "Ready=False",
            ready_false,
        )
        .await;
        let c = condition(&o, "Ready").unwrap();
        assert_eq!(c["reason"], *reason, "{name}: {c}");
        assert!(
            c["message"].as_str().unwrap().starts_with(message.as_str()),
            "{name}: {c}"
        );
        assert!(o["status"]["artifact"].is_null(), "{name}: nothing stored");
    }
    // A copy of a Helm chart layer is stored as it is; the revision is the digest when the
    // reference is one.
    let chart = {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        use std::io::Write;
        gz.write_all(b"chart bytes").unwrap();
        gz.finish().unwrap()
    };
    let dc = push_layer(
        &reg,
        "charts/podinfo",
        "6.5.0",
        chart.clone(),
        oci::registry::HELM_CHART_CONTENT,
        Credentials::Anonymous,
    )
    .await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &oci_repository("chart", &reg.url("charts/podinfo"), &format!("  ref:\n    digest: {dc}\n  layerSelector:\n    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip\n    operation: copy\n")),
    );
    let o = wait_for(&env, "ocirepository/chart", "Ready", ready).await;
    assert_eq!(o["status"]["artifact"]["revision"], dc.as_str());
    use sha2::Digest as _;
    assert_eq!(
        o["status"]["artifact"]["digest"],
        format!("sha256:{:x}", sha2::Sha256::digest(&chart))
    );
    assert_eq!(
        http_get(o["status"]["artifact"]["url"].as_str().unwrap())
            .await
            .1,
        chart
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_come_from_a_docker_config_secret() {
    let reg = Registry::start(Mode::Htpasswd("fleet", "pa55word"));
    let env = start().await;
    let creds = Credentials::Basic {
        username: "fleet".into(),
        password: "pa55word".into(),
    };
    let d = push(&reg, "private/app", "v1", &[("cm.yaml", "a: 1\n")], creds).await;
    let url = reg.url("private/app");
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &oci_repository("anonymous", &url, "  ref:\n    tag: v1\n"),
    );
    let o = wait_for(&env, "ocirepository/anonymous", "Ready=False", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "OCIArtifactPullFailed", "{c}");
    let wrong = format!(
        r#"{{"auths":{{"{}":{{"username":"fleet","password":"wrong-one"}}}}}}"#,
        reg.host
    );
    let right = format!(
        r#"{{"auths":{{"{}":{{"username":"fleet","password":"pa55word"}}}}}}"#,
        reg.host
    );
    for (name, config) in [("wrong", &wrong), ("right", &right)] {
        let secret = format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}-creds\n  namespace: default\ntype: kubernetes.io/dockerconfigjson\nstringData:\n  .dockerconfigjson: '{config}'\n"
        );
        env.server.ok_stdin(&["apply", "-f", "-"], &secret);
        env.server.ok_stdin(
            &["apply", "-f", "-"],
            &oci_repository(
                name,
                &url,
                &format!("  ref:\n    tag: v1\n  secretRef:\n    name: {name}-creds\n"),
            ),
        );
    }
    let o = wait_for(&env, "ocirepository/wrong", "Ready=False", ready_false).await;
    let text = serde_json::to_string(&o["status"]).unwrap();
    assert!(
        !text.contains("wrong-one") && !text.contains("pa55word"),
        "no credentials in the status: {text}"
    );
    let o = wait_for(&env, "ocirepository/right", "Ready", ready).await;
    assert_eq!(o["status"]["artifact"]["revision"], format!("v1@{d}"));
    // A missing Secret is named.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &oci_repository(
            "no-secret",
            &url,
            "  ref:\n    tag: v1\n  secretRef:\n    name: absent\n",
        ),
    );
    let o = wait_for(&env, "ocirepository/no-secret", "Ready=False", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "AuthenticationFailed");
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .starts_with("failed to get credential: failed to get secret 'default/absent': "),
        "{c}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificates_reach_a_registry_requiring_mutual_tls() {
    let reg = Registry::start(Mode::MutualTls);
    let env = start().await;
    let d = push(
        &reg,
        "fleet/app",
        "v1",
        &[("cm.yaml", "a: 1\n")],
        Credentials::Anonymous,
    )
    .await;
    let ca = reg.ca_pem.clone().unwrap();
    let (cert, key) = reg.client.clone().unwrap();
    let url = reg.url("fleet/app");
    for (name, data) in [
        (
            "mtls",
            vec![
                ("ca.crt", ca.as_str()),
                ("tls.crt", cert.as_str()),
                ("tls.key", key.as_str()),
            ],
        ),
        ("ca-only", vec![("ca.crt", ca.as_str())]),
        (
            "no-key",
            vec![("ca.crt", ca.as_str()), ("tls.crt", cert.as_str())],
        ),
    ] {
        env.server.ok_stdin(
            &["apply", "-f", "-"],
            &pem_secret(&format!("{name}-tls"), &data),
        );
        env.server.ok_stdin(
            &["apply", "-f", "-"],
            &oci_repository(
                name,
                &url,
                &format!("  ref:\n    tag: v1\n  certSecretRef:\n    name: {name}-tls\n"),
            ),
        );
    }
    let o = wait_for(&env, "ocirepository/mtls", "Ready", ready).await;
    assert_eq!(o["status"]["artifact"]["revision"], format!("v1@{d}"));

    // Trusting the server is not enough: the registry wants a client certificate.
    let o = wait_for(&env, "ocirepository/ca-only", "Ready=False", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "OCIArtifactPullFailed", "{c}");
    assert!(
        c["message"].as_str().unwrap().starts_with(&format!(
            "failed to determine artifact digest: GET https://{}/v2/",
            reg.host
        )),
        "{c}"
    );

    // Half a key pair is named and stalls.
    let o = wait_for(&env, "ocirepository/no-key", "Ready=False", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "AuthenticationFailed", "{c}");
    assert_eq!(
        c["message"],
        format!(
            "failed to generate transport for '{url}': secret 'default/no-key-tls' must contain both 'tls.crt' and 'tls.key'"
        )
    );
    assert!(
        condition(&o, "Stalled").is_some_and(|s| s["status"] == "True"),
        "{o}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cosign_signatures_are_verified_with_public_keys() {
    let env = start().await;
    let reg = Registry::start(Mode::Plain);
    let signed = push(
        &reg,
        "fleet/app",
        "1.0.0",
        &[("cm.yaml", "kind: ConfigMap\n")],
        Credentials::Anonymous,
    )
    .await;
    let key = p256::ecdsa::SigningKey::from_slice(&[11u8; 32]).unwrap();
    let other = p256::ecdsa::SigningKey::from_slice(&[12u8; 32]).unwrap();
    let (public, other_public) = (public_pem(&key), public_pem(&other));
    cosign_sign(&reg.url("fleet/app"), &signed, &key).await;
    // An unsigned tag next to it.
    let unsigned = push(
        &reg,
        "fleet/app",
        "2.0.0",
        &[("cm.yaml", "kind: Secret\n")],
        Credentials::Anonymous,
    )
    .await;

    let indent = |pem: &str| -> String { pem.lines().map(|l| format!("    {l}\n")).collect() };
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cosign-pub\n  namespace: default\nstringData:\n  cosign.pub: |\n{}---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: other-pub\n  namespace: default\nstringData:\n  other.pub: |\n{}",
            indent(&public),
            indent(&other_public)
        ),
    );
    let url = reg.url("fleet/app");
    let verify = "  verify:\n    provider: cosign\n    secretRef:\n      name: cosign-pub\n";
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &oci_repository("signed", &url, &format!("  ref:\n    tag: 1.0.0\n{verify}")),
    );
    let o = wait_for(&env, "ocirepository/signed", "Ready", ready).await;
    let c = condition(&o, "SourceVerified").unwrap();
    assert_eq!(c["status"], "True", "{c}");
    assert_eq!(c["reason"], "Succeeded");
    assert_eq!(
        c["message"],
        format!("verified signature of revision 1.0.0@{signed}")
    );

    // The wrong key, and a tag nobody signed: no matching signatures, nothing stored.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &oci_repository(
            "wrong-key",
            &url,
            "  ref:\n    tag: 1.0.0\n  verify:\n    provider: cosign\n    secretRef:\n      name: other-pub\n",
        ),
    );
    let o = wait_for(&env, "ocirepository/wrong-key", "Ready=False", ready_false).await;
    let c = condition(&o, "SourceVerified").unwrap();
    assert_eq!(c["status"], "False", "{c}");
    assert_eq!(c["reason"], "VerificationError");
    assert_eq!(
        c["message"],
        format!(
            "failed to verify the signature using provider 'cosign': no matching signatures were found for '{}/fleet/app@{signed}'",
            reg.host
        )
    );
    assert_eq!(
        condition(&o, "Ready").unwrap()["reason"],
        "VerificationError"
    );
    assert!(o["status"]["artifact"].is_null(), "{o}");
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &oci_repository(
            "unsigned",
            &url,
            &format!("  ref:\n    tag: 2.0.0\n{verify}"),
        ),
    );
    let o = wait_for(&env, "ocirepository/unsigned", "Ready=False", ready_false).await;
    assert_eq!(
        condition(&o, "SourceVerified").unwrap()["message"],
        format!(
            "failed to verify the signature using provider 'cosign': no matching signatures were found for '{}/fleet/app@{unsigned}'",
            reg.host
        )
    );
    // A cosign v3 signature (a Sigstore bundle among the referrers) verifies as well; a
    // bundle about another digest does not.
    let v3 = push(
        &reg,
        "fleet/app",
        "3.0.0",
        &[("cm.yaml", "kind: Namespace\n")],
        Credentials::Anonymous,
    )
    .await;
    cosign_sign_bundle(&url, &v3, &key).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &oci_repository("bundle", &url, &format!("  ref:\n    tag: 3.0.0\n{verify}")),
    );
    let o = wait_for(&env, "ocirepository/bundle", "Ready", ready).await;
    assert_eq!(
        condition(&o, "SourceVerified").unwrap()["message"],
        format!("verified signature of revision 3.0.0@{v3}")
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &oci_repository(
            "bundle-wrong-key",
            &url,
            "  ref:\n    tag: 3.0.0\n  verify:\n    provider: cosign\n    secretRef:\n      name: other-pub\n",
        ),
    );
    let o = wait_for(
        &env,
        "ocirepository/bundle-wrong-key",
        "Ready=False",
        ready_false,
    )
    .await;
    assert_eq!(
        condition(&o, "SourceVerified").unwrap()["reason"],
        "VerificationError"
    );
    // Keyless is refused clearly.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &oci_repository(
            "keyless",
            &url,
            "  ref:\n    tag: 1.0.0\n  verify:\n    provider: cosign\n",
        ),
    );
    let o = wait_for(&env, "ocirepository/keyless", "Stalled", |o| {
        condition(o, "Stalled").is_some_and(|c| c["status"] == "True")
    })
    .await;
    assert!(
        condition(&o, "SourceVerified").unwrap()["message"]
            .as_str()
            .unwrap()
            .starts_with("failed to verify the signature using provider 'cosign keyless': keyless verification is not supported by Tidegate yet"),
        "{o}"
    );
}
