//! The source controllers (and a Kustomization controller) against the embedded API server,
//! with helpers to read objects and wait for conditions.
#![allow(dead_code)]

use std::time::Duration;

use serde_json::Value;
use tidegate_controllers::metrics::Metrics;
use tidegate_controllers::{
    artifactgenerator, bucket, gitrepository, helmchart, helmrelease, helmrepository,
    imageautomation, imagereflector, kustomization, ocirepository,
};

#[path = "../../../apiserver/tests/common/mod.rs"]
pub mod common;
#[path = "../../../source/tests/support/mod.rs"]
pub mod git_support;

pub struct Env {
    pub server: common::TestServer,
    /// The controllers' metrics.
    pub metrics: std::sync::Arc<Metrics>,
    _storage_dir: tempfile::TempDir,
    stop: Option<tokio::sync::watch::Sender<bool>>,
}

impl Drop for Env {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(true);
        }
    }
}

/// The server with every CRD, the source controllers, the Kustomization and the HelmRelease
/// controllers.
pub async fn start() -> Env {
    start_on(common::start().await).await
}

/// As [`start`], on a server whose workload simulator settles rollouts, Jobs and Pods after
/// `millis` milliseconds.
pub async fn start_simulated(millis: u64) -> Env {
    start_on(common::start_simulated(millis).await).await
}

async fn start_on(server: common::TestServer) -> Env {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    let mut wait = vec!["wait", "--for=condition=Established"];
    let names: Vec<String> = tidegate_api::crds::names()
        .iter()
        .map(|n| format!("crd/{n}"))
        .collect();
    wait.extend(names.iter().map(String::as_str));
    server.ok(&wait);
    let (storage, storage_dir) = git_support::artifact_server().await;
    let (tx, rx) = tokio::sync::watch::channel(false);
    let stop = move || {
        let mut rx = rx.clone();
        async move {
            let _ = rx.wait_for(|v| *v).await;
        }
    };
    let kc = kube::config::Kubeconfig::from_yaml(&server.server.kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config.clone()).unwrap();
    let metrics = Metrics::new();
    tokio::spawn(gitrepository::run(
        client.clone(),
        storage.clone(),
        metrics.clone(),
        gitrepository::Options::default(),
        stop(),
    ));
    tokio::spawn(ocirepository::run(
        client.clone(),
        storage.clone(),
        metrics.clone(),
        gitrepository::Options::default(),
        stop(),
    ));
    tokio::spawn(helmchart::run(
        client.clone(),
        storage.clone(),
        metrics.clone(),
        gitrepository::Options::default(),
        stop(),
    ));
    tokio::spawn(artifactgenerator::run(
        client.clone(),
        storage.clone(),
        metrics.clone(),
        artifactgenerator::Options {
            requeue_dependency: Duration::from_secs(1),
            ..Default::default()
        },
        stop(),
    ));
    tokio::spawn(bucket::run(
        client.clone(),
        storage.clone(),
        metrics.clone(),
        gitrepository::Options::default(),
        stop(),
    ));
    tokio::spawn(helmrepository::run(
        client.clone(),
        storage,
        metrics.clone(),
        gitrepository::Options::default(),
        stop(),
    ));
    tokio::spawn(helmrelease::run(
        client.clone(),
        config.clone(),
        metrics.clone(),
        helmrelease::Options {
            requeue_dependency: Duration::from_secs(2),
            ..Default::default()
        },
        stop(),
    ));
    tokio::spawn(imagereflector::run(
        client.clone(),
        metrics.clone(),
        imagereflector::Options {
            storage_path: storage_dir.path().join("image-reflector"),
            requeue_dependency: Duration::from_secs(1),
            ..Default::default()
        },
        stop(),
    ));
    tokio::spawn(imageautomation::run(
        client.clone(),
        metrics.clone(),
        imageautomation::Options {
            file_urls: tidegate_controllers::file_urls::FileUrls::All,
            ..Default::default()
        },
        stop(),
    ));
    tokio::spawn(kustomization::run(
        client,
        config,
        metrics.clone(),
        kustomization::Options::default(),
        stop(),
    ));
    Env {
        server,
        metrics,
        _storage_dir: storage_dir,
        stop: Some(tx),
    }
}

/// `kubectl get <what> -o json`; `what` may carry more arguments (`kind/name -n ns`).
pub fn get(env: &Env, what: &str) -> Value {
    let mut args = vec!["get"];
    args.extend(what.split_whitespace());
    args.extend(["-o", "json"]);
    let out = env.server.ok(&args);
    serde_json::from_str(&out).unwrap()
}

pub fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// Waits until the object `what` exists and passes `check` (objects a controller creates may
/// not exist yet when the wait starts).
pub async fn wait_for(env: &Env, what: &str, desc: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let mut args = vec!["get"];
        args.extend(what.split_whitespace());
        args.extend(["-o", "json"]);
        let out = env.server.kubectl(&args);
        let obj: Value = if out.status.success() {
            serde_json::from_slice(&out.stdout).unwrap()
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("NotFound"), "kubectl {args:?}: {err}");
            Value::Null
        };
        if !obj.is_null() && check(&obj) {
            return obj;
        }
        if std::time::Instant::now() > deadline {
            panic!(
                "{what}: timed out waiting for {desc}: {}",
                serde_json::to_string_pretty(&obj["status"]).unwrap()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub fn ready(o: &Value) -> bool {
    condition(o, "Ready").is_some_and(|c| c["status"] == "True")
}

pub fn ready_false(o: &Value) -> bool {
    condition(o, "Ready").is_some_and(|c| c["status"] == "False")
}

/// GET over plain HTTP/1.0: the status line's code and the body.
pub async fn http_get(url: &str) -> (u16, Vec<u8>) {
    let url = url.to_string();
    tokio::task::spawn_blocking(move || {
        let (host, path) = url
            .strip_prefix("http://")
            .unwrap()
            .split_once('/')
            .unwrap();
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(host).unwrap();
        write!(s, "GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).unwrap();
        let at = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let code = String::from_utf8_lossy(&buf[9..12]).parse().unwrap_or(0);
        (code, buf[at + 4..].to_vec())
    })
    .await
    .unwrap()
}

/// Signs manifest `digest` in the repository at `repo_url` (`oci://host/path`) as `cosign sign --key` stores a signature: a simple-signing
/// payload claiming the digest, its ECDSA P-256 (SHA-256, ASN.1 DER) signature in the
/// `dev.cosignproject.cosign/signature` annotation of a
/// `application/vnd.dev.cosign.simplesigning.v1+json` layer, under the tag
/// `sha256-<hex>.sig`. (No sanctioned test tool signs: Debian's skopeo is built with sigstore
/// signing disabled, and cosign is not among the test tools; the format follows cosign's
/// signature spec and published `.sig` manifests.)
pub async fn cosign_sign(repo_url: &str, digest: &str, key: &p256::ecdsa::SigningKey) {
    use base64::Engine;
    use p256::ecdsa::signature::Signer;
    let payload = format!(
        r#"{{"critical":{{"identity":{{"docker-reference":"{}"}},"image":{{"docker-manifest-digest":"{digest}"}},"type":"cosign container image signature"}},"optional":null}}"#,
        repo_url.trim_start_matches("oci://")
    );
    let signature: p256::ecdsa::DerSignature = key.sign(payload.as_bytes());
    let mut annotations = std::collections::BTreeMap::new();
    annotations.insert(
        "dev.cosignproject.cosign/signature".to_string(),
        base64::engine::general_purpose::STANDARD.encode(signature.as_bytes()),
    );
    let config = format!(
        r#"{{"architecture":"","created":"0001-01-01T00:00:00Z","history":[{{"created":"0001-01-01T00:00:00Z"}}],"os":"","rootfs":{{"type":"layers","diff_ids":["sha256:{:x}"]}},"config":{{}}}}"#,
        <sha2::Sha256 as sha2::Digest>::digest(payload.as_bytes())
    );
    let (_, registry) = anonymous_registry(repo_url).await;
    registry
        .push_image(
            &format!("{}.sig", digest.replacen(':', "-", 1)),
            ("application/vnd.oci.image.config.v1+json", config.into()),
            vec![(
                "application/vnd.dev.cosign.simplesigning.v1+json".to_string(),
                annotations,
                payload.into(),
            )],
            &Default::default(),
        )
        .await
        .unwrap();
}

/// The repository at `oci://` URL `repo_url` and an anonymous connection to it.
async fn anonymous_registry(
    repo_url: &str,
) -> (
    tidegate_source::oci::Repository,
    tidegate_source::oci::Registry,
) {
    let (repository, _) = tidegate_source::oci::parse_artifact_url(repo_url).unwrap();
    let registry = tidegate_source::oci::Registry::connect(
        &repository,
        &tidegate_source::oci::Options::default(),
    )
    .await
    .unwrap();
    (repository, registry)
}

/// Signs manifest `digest` in the repository at `repo_url` as cosign v3's `sign --key` stores a
/// signature: a Sigstore bundle (v0.3) holding a DSSE envelope of an in-toto statement
/// (predicate `https://sigstore.dev/cosign/sign/v1`, subject the digest), signed with ECDSA
/// P-256 over DSSE's pre-authentication encoding, pushed as an OCI 1.1 artifact whose
/// `subject` is the signed manifest, and listed under the referrers tag schema
/// (`sha256-<hex>`), since Debian's docker-registry has no referrers API. (No sanctioned test
/// tool signs; the layout follows cosign's `specs/BUNDLE_SPEC.md` and the Sigstore bundle
/// and DSSE specifications.)
pub async fn cosign_sign_bundle(repo_url: &str, digest: &str, key: &p256::ecdsa::SigningKey) {
    use base64::Engine;
    use p256::ecdsa::signature::Signer;
    let b64 = base64::engine::general_purpose::STANDARD;
    let (algorithm, hex) = digest.split_once(':').unwrap();
    let statement = format!(
        r#"{{"_type":"https://in-toto.io/Statement/v1","subject":[{{"digest":{{"{algorithm}":"{hex}"}}}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{{}}}}"#
    );
    let pae =
        tidegate_source::oci::cosign::pae("application/vnd.in-toto+json", statement.as_bytes());
    let signature: p256::ecdsa::DerSignature = key.sign(&pae);
    let bundle = serde_json::json!({
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {"publicKey": {"hint": ""}, "tlogEntries": []},
        "dsseEnvelope": {
            "payload": b64.encode(statement.as_bytes()),
            "payloadType": "application/vnd.in-toto+json",
            "signatures": [{"sig": b64.encode(signature.as_bytes())}]
        }
    })
    .to_string();
    let (repository, registry) = anonymous_registry(repo_url).await;
    let signed = registry.manifest(&repository.digest(digest)).await.unwrap();
    let bundle_digest = registry.push_blob(bundle.clone().into()).await.unwrap();
    let empty = registry
        .push_blob(bytes::Bytes::from_static(b"{}"))
        .await
        .unwrap();
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": empty, "size": 2},
        "layers": [{"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json", "digest": bundle_digest, "size": bundle.len()}],
        "subject": {"mediaType": signed.media_type, "digest": digest, "size": signed.raw.len()}
    })
    .to_string();
    let manifest_digest = registry
        .push_manifest_bytes(
            None,
            manifest.clone().into(),
            "application/vnd.oci.image.manifest.v1+json",
        )
        .await
        .unwrap();
    let index = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": manifest_digest,
            "size": manifest.len(),
            "artifactType": "application/vnd.dev.sigstore.bundle.v0.3+json"
        }]
    })
    .to_string();
    registry
        .push_manifest_bytes(
            Some(&format!("{algorithm}-{hex}")),
            index.into(),
            "application/vnd.oci.image.index.v1+json",
        )
        .await
        .unwrap();
}

pub fn public_pem(key: &p256::ecdsa::SigningKey) -> String {
    use p256::pkcs8::EncodePublicKey;
    key.verifying_key()
        .to_public_key_pem(p256::pkcs8::LineEnding::LF)
        .unwrap()
}

/// The files of a stored artifact, downloaded from the artifact server, sorted.
pub async fn artifact_files(url: &str) -> Vec<String> {
    let (code, bytes) = http_get(url).await;
    assert_eq!(code, 200, "{url}");
    let mut names = Vec::new();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
    for e in archive.entries().unwrap() {
        let e = e.unwrap();
        if e.header().entry_type().is_file() {
            names.push(e.path().unwrap().to_string_lossy().into_owned());
        }
    }
    names.sort();
    names
}

/// A Secret of `data` (key, PEM text) in `default`.
pub fn pem_secret(name: &str, data: &[(&str, &str)]) -> String {
    let mut out = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: default\nstringData:\n"
    );
    for (key, pem) in data {
        out.push_str(&format!("  {key}: |\n"));
        for line in pem.lines() {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out
}
