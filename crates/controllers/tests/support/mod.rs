//! The Kustomization controller's test set-up: the embedded API server (HTTPS, workload
//! simulator), the GitRepository and Kustomization controllers, real git and kubectl.
#![allow(dead_code)]

#[path = "../../../apiserver/tests/common/mod.rs"]
pub mod common;
#[path = "../../../source/tests/support/mod.rs"]
pub mod git_support;
#[path = "../../../apiserver/tests/common/intercept.rs"]
pub mod intercept;

use std::sync::Arc;
use std::time::Duration;

pub use git_support::Repo;
use serde_json::Value;
use tidegate_controllers::metrics::Metrics;
use tidegate_controllers::{gitrepository, kustomization};

pub struct Env {
    pub server: common::TestServer,
    /// The artifact storage the GitRepository controller (if any) writes to.
    pub storage: Arc<tidegate_source::storage::Storage>,
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

pub async fn start() -> Env {
    start_with(Route::Direct).await
}

/// How the Kustomization controller reaches the API server.
pub enum Route<'a> {
    Direct,
    /// Through a recording proxy.
    Recording(&'a mut Option<Recorded>),
    /// With these responses arriving late.
    Lagging(intercept::Lag),
}

/// Bytes the Kustomization controller sent to the API server (plain HTTP through a proxy).
pub type Recorded = Arc<std::sync::Mutex<Vec<u8>>>;

/// A plain-HTTP proxy to the HTTPS server at `target` (trusting `ca_pem`) that records what
/// clients send.
pub async fn recording_proxy(target: std::net::SocketAddr, ca_pem: &str) -> (String, Recorded) {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let tls = Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let recorded: Recorded = Arc::default();
    let rec = recorded.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let rec = rec.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let Ok(tcp) = tokio::net::TcpStream::connect(target).await else {
                    return;
                };
                let name = rustls::pki_types::ServerName::IpAddress(target.ip().into());
                let Ok(server) = tokio_rustls::TlsConnector::from(tls)
                    .connect(name, tcp)
                    .await
                else {
                    return;
                };
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = tokio::io::split(server);
                let up = async move {
                    let mut buf = vec![0u8; 16384];
                    while let Ok(n) = cr.read(&mut buf).await {
                        if n == 0 || sw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                        rec.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                };
                let down = async move {
                    let _ = tokio::io::copy(&mut sr, &mut cw).await;
                };
                tokio::join!(up, down);
            });
        }
    });
    (format!("http://{addr}"), recorded)
}

pub async fn start_with(route: Route<'_>) -> Env {
    start_full(route, true, default_options(), Default::default()).await
}

/// With an API server that keeps only `limits` of watch history.
pub async fn start_with_watch_history(limits: tidegate_apiserver::store::LogLimits) -> Env {
    let server = tidegate_apiserver::Config {
        watch_history: limits,
        ..Default::default()
    };
    start_full(Route::Direct, true, default_options(), server).await
}

/// With the API server deciding requests by RBAC (the controllers' admin kubeconfig is in
/// `system:masters`; impersonated service accounts get what RBAC gives them).
pub async fn start_rbac() -> Env {
    let server = tidegate_apiserver::Config {
        authorization: tidegate_apiserver::AuthorizationMode::Rbac,
        ..Default::default()
    };
    start_full(Route::Direct, true, default_options(), server).await
}

/// With these Kustomization controller options.
pub async fn start_with_options(options: kustomization::Options) -> Env {
    start_full(Route::Direct, true, options, Default::default()).await
}

/// The Kustomization controller options of the tests.
pub fn default_options() -> kustomization::Options {
    kustomization::Options {
        requeue_dependency: Duration::from_secs(30),
        ..Default::default()
    }
}

/// Without the GitRepository controller: the test writes sources' artifacts and status itself.
pub async fn start_without_source_controller() -> Env {
    start_full(Route::Direct, false, default_options(), Default::default()).await
}

async fn start_full(
    route: Route<'_>,
    source_controller: bool,
    options: kustomization::Options,
    server: tidegate_apiserver::Config,
) -> Env {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let server = common::start_with(tidegate_apiserver::Config {
        workload_simulator: Some(Duration::from_millis(300)),
        ..server
    })
    .await;
    let crds = tidegate_api::crds::stream();
    server.ok_stdin(&["apply", "--server-side", "-f", "-"], &crds);
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
    let metrics = Metrics::new();
    let kc = kube::config::Kubeconfig::from_yaml(&server.server.kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config.clone()).unwrap();
    let (ks_client, ks_config) = match route {
        Route::Recording(slot) => {
            let (url, recorded) =
                recording_proxy(server.server.addr, &server.server.credentials.ca_pem).await;
            *slot = Some(recorded);
            let mut c = config.clone();
            c.cluster_url = url.parse().unwrap();
            (kube::Client::try_from(c.clone()).unwrap(), c)
        }
        Route::Lagging(lag) => (intercept::client(&config, None, Some(lag)), config.clone()),
        Route::Direct => (client.clone(), config.clone()),
    };
    if source_controller {
        tokio::spawn(gitrepository::run(
            client.clone(),
            storage.clone(),
            metrics.clone(),
            gitrepository::Options {
                file_urls: tidegate_controllers::file_urls::FileUrls::All,
                ..Default::default()
            },
            stop(),
        ));
    }
    tokio::spawn(kustomization::run(
        ks_client,
        ks_config,
        metrics,
        options,
        stop(),
    ));
    Env {
        server,
        storage,
        _storage_dir: storage_dir,
        stop: Some(tx),
    }
}

/// `kubectl get WHAT -o json`; `what` may start with `-n<namespace> `.
pub fn get(env: &Env, what: &str) -> Option<Value> {
    let mut args = vec!["get"];
    args.extend(what.split(' '));
    args.extend(["-o", "json"]);
    let out = env.server.kubectl(&args);
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

pub fn ks(env: &Env, name: &str) -> Value {
    get(
        env,
        &format!("kustomization.kustomize.toolkit.fluxcd.io/{name}"),
    )
    .unwrap_or_else(|| panic!("kustomization {name} exists"))
}

pub fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

pub fn is(obj: &Value, type_: &str, status: &str) -> bool {
    condition(obj, type_).is_some_and(|c| c["status"] == status)
}

/// Polls until `check` holds; panics with `what` and the last value otherwise.
pub async fn until<T: std::fmt::Debug>(
    what: &str,
    mut probe: impl FnMut() -> T,
    check: impl Fn(&T) -> bool,
) -> T {
    // Generous: CI runs every test binary at once on two cores.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let v = probe();
        if check(&v) {
            return v;
        }
        if std::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}: {v:#?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub async fn ks_until(env: &Env, name: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    until(what, || ks(env, name), |o| check(o)).await
}

pub fn applied(revision: &str) -> impl Fn(&Value) -> bool + '_ {
    move |o| is(o, "Ready", "True") && o["status"]["lastAppliedRevision"] == revision
}

pub fn request(env: &Env, what: &str, value: &str) {
    env.server.ok(&[
        "annotate",
        "--overwrite",
        what,
        &format!("reconcile.fluxcd.io/requestedAt={value}"),
    ]);
}

pub fn source(name: &str, url: &str) -> String {
    format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 1h\n  url: {url}\n  ref:\n    branch: main\n"
    )
}

pub fn kustomization(name: &str, path: &str, extra: &str) -> String {
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 1h\n  path: {path}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: repo\n{extra}"
    )
}

/// Pushes a commit and asks the GitRepository to fetch it; returns the revision.
pub fn push(env: &Env, repo: &Repo, message: &str) -> String {
    let sha = repo.commit(message);
    if get(env, "gitrepository/repo").is_some() {
        request(env, "gitrepository/repo", &sha);
    }
    format!("main@sha1:{sha}")
}

pub fn events(env: &Env, name: &str) -> Vec<(String, String, String)> {
    let out = env.server.ok(&[
        "get",
        "events",
        "--field-selector",
        &format!("involvedObject.name={name},involvedObject.kind=Kustomization"),
        "-o",
        "json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_string(),
                e["reason"].as_str().unwrap_or("").to_string(),
                e["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

pub const NAMESPACE: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n";

pub fn config_map(name: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: apps\ndata:\n  key: \"{value}\"\n"
    )
}

/// The `web` Deployment the tests deploy; `namespace` is its metadata line (or nothing).
pub fn web_deployment(namespace: &str, replicas: &str, image: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n{namespace}spec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers: [{{name: web, image: \"{image}\"}}]\n"
    )
}

pub fn data_of(env: &Env, what: &str) -> Option<String> {
    get(env, what).map(|o| o["data"]["key"].as_str().unwrap_or("").to_string())
}
