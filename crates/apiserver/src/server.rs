//! The server: configuration, start-up, the accept loop (TLS, HTTP/1.1 and HTTP/2), bearer
//! authentication and routing.

use crate::error::ApiError;
use crate::http::{self, negotiate, respond};
use crate::registry::Registry;
use crate::route::{self, Route};
use crate::store::{Key, Store, StoreError};
use crate::tls::{self, Credentials, TlsError};
use axum::body::Body;
use axum::http::{HeaderValue, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// The Kubernetes version this server presents.
pub const GIT_VERSION: &str = "v1.35.0";

/// How to run the server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where state, credentials and the kubeconfig live; `None` keeps everything in memory.
    pub data_dir: Option<PathBuf>,
    /// Address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Serve HTTPS (the default) or plain HTTP.
    pub tls: bool,
    /// How much recent history watches can resume from (events and bytes); older
    /// resourceVersions get 410 Gone.
    pub watch_history: crate::store::LogLimits,
    /// Run the workload simulator (see [`crate::simulator`]) with this rollout delay.
    pub workload_simulator: Option<std::time::Duration>,
    /// How many connections are held at once (see [`crate::listen`]).
    pub connections: crate::listen::Limits,
    /// How requests are authorized.
    pub authorization: crate::auth::AuthorizationMode,
    /// Static bearer tokens of users (`--token-auth-file`, kube's CSV format).
    pub token_auth_file: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: None,
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            tls: true,
            watch_history: crate::store::LogLimits::default(),
            workload_simulator: None,
            connections: crate::listen::Limits::from_process(),
            authorization: Default::default(),
            token_auth_file: None,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The store could not be opened.
    #[error("opening the store: {0}")]
    Store(#[from] StoreError),
    /// Credentials could not be made.
    #[error("{0}")]
    Tls(#[from] TlsError),
    /// The service account signing key could not be loaded or made.
    #[error("{0}")]
    Issuer(#[from] crate::auth::tokens::IssuerError),
    /// The static token file could not be used.
    #[error("{0}")]
    TokenFile(#[from] crate::auth::tokenfile::TokenFileError),
    /// Another process holds the data directory.
    #[error("{0}")]
    Locked(#[from] crate::lock::LockError),
    /// Listening or the data directory failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// State shared by every request and the server's own controllers.
pub struct ServerState {
    /// The object store.
    pub store: Arc<Store>,
    /// What is served.
    pub registry: Registry,
    token: String,
    /// Signs and verifies service account tokens.
    pub issuer: crate::auth::tokens::Issuer,
    /// The cluster CA certificate (PEM), published in every namespace's `kube-root-ca.crt`.
    pub ca_pem: String,
    /// Requests served, for benchmarks and `/metrics`.
    pub requests: AtomicU64,
    /// Structured-merge schemas per resource version.
    pub types: crate::fieldmanager::TypeCache,
    /// Serializes changes to what CRDs serve.
    crd_sync: std::sync::Mutex<()>,
    /// The RBAC index decisions read.
    rbac: crate::auth::rbac::Cache,
    /// Users of the static token file, by token.
    pub static_tokens: std::collections::HashMap<String, crate::auth::UserInfo>,
    /// How requests are authorized.
    pub authorization: crate::auth::AuthorizationMode,
}

impl ServerState {
    /// Decides a request: `Err` carries the authorizer's reason for a refusal.
    pub fn authorize(&self, a: &crate::auth::attributes::Attributes) -> Result<(), String> {
        match self.authorization {
            crate::auth::AuthorizationMode::AlwaysAllow => Ok(()),
            crate::auth::AuthorizationMode::Rbac => {
                let d = crate::auth::rbac::authorize(&self.rbac_index(), a);
                if d.allowed { Ok(()) } else { Err(d.reason) }
            }
        }
    }

    /// The RBAC objects as of now, indexed for decisions.
    pub fn rbac_index(&self) -> Arc<crate::auth::rbac::RbacIndex> {
        self.rbac.index(&self.store)
    }

    /// The admin bearer token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Serves the resources the stored CRD `name` declares, or stops serving them when it is
    /// gone. Reads the store under a lock, so a caller holding a stale copy (a request handler
    /// finishing after the CRD's finalizer controller) cannot serve again a deleted resource.
    pub fn sync_crd(&self, name: &str) {
        let _serial = self.crd_sync.lock().unwrap_or_else(|p| p.into_inner());
        self.sync_crd_locked(name);
    }

    fn sync_crd_locked(&self, name: &str) {
        let key = Key::new(crate::controllers::CRDS, "", name);
        match self.store.get(&key) {
            None => self.registry.set_crd(name, Vec::new()),
            Some(crd) => match tidegate_schema::crd::resources_from_crd(&crd) {
                Ok(res) => self.registry.set_crd(name, res),
                Err(e) => tracing::warn!(crd = name, error = %e, "CRD not served"),
            },
        }
    }

    /// Stops serving the resources of CRD `name`, runs `finish` (which removes its last
    /// finalizer, deleting it), then serves them again only if the CRD is still stored. No
    /// other sync runs in between: a client that saw the CRD go never finds it served.
    pub fn finish_crd<T>(&self, name: &str, finish: impl FnOnce() -> T) -> T {
        let _serial = self.crd_sync.lock().unwrap_or_else(|p| p.into_inner());
        self.registry.set_crd(name, Vec::new());
        let out = finish();
        self.sync_crd_locked(name);
        out
    }
}

/// A running server.
pub struct ApiServer {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// `https://127.0.0.1:<port>` (or `http://`).
    pub url: String,
    /// The admin kubeconfig's text.
    pub kubeconfig: String,
    /// Where the kubeconfig was written (with a data directory).
    pub kubeconfig_path: Option<PathBuf>,
    /// The serving credentials (CA for clients, admin token).
    pub credentials: Credentials,
    state: Arc<ServerState>,
    shutdown: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    /// Held while the server lives: one process per data directory.
    _lock: Option<crate::lock::DataDirLock>,
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServeError {
    let what = what.into();
    move |source| ServeError::Io { what, source }
}

/// Creates `dir` (and its parents) and makes it private to its owner (0700): the store holds
/// every Secret in clear, the directory the credentials.
pub fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

impl ApiServer {
    /// Opens the store, writes credentials and kubeconfig, and starts serving.
    pub async fn start(config: Config) -> Result<ApiServer, ServeError> {
        let lock = match &config.data_dir {
            Some(dir) => {
                private_dir(dir)
                    .map_err(io_err(format!("creating data directory {}", dir.display())))?;
                Some(crate::lock::DataDirLock::acquire(dir)?)
            }
            None => None,
        };
        let store = Arc::new(
            Store::open(config.data_dir.as_deref())?.with_log_limits(config.watch_history),
        );
        let credentials = tls::load_or_create(config.data_dir.as_deref())?;
        let issuer = crate::auth::tokens::Issuer::load_or_create(config.data_dir.as_deref())?;
        let static_tokens = match &config.token_auth_file {
            Some(p) => crate::auth::tokenfile::load(p)?,
            None => Default::default(),
        };
        let state = Arc::new(ServerState {
            static_tokens,
            store,
            registry: Registry::new(),
            token: credentials.token.clone(),
            issuer,
            ca_pem: credentials.ca_pem.clone(),
            requests: AtomicU64::new(0),
            types: Default::default(),
            crd_sync: Default::default(),
            rbac: Default::default(),
            authorization: config.authorization,
        });
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(io_err(format!("listening on {}", config.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(io_err("reading the bound address"))?;
        // Nothing is served before the accept loop starts: the bootstrap objects are written
        // first, with the port the server listens on.
        bootstrap(&state, addr.port());
        if config.authorization == crate::auth::AuthorizationMode::Rbac {
            crate::auth::bootstrap::ensure(&state);
        }
        state.store.start_history();
        let scheme = if config.tls { "https" } else { "http" };
        let url = format!("{scheme}://{addr}");
        let kubeconfig = tls::kubeconfig(&url, &credentials, config.tls);
        let kubeconfig_path = match &config.data_dir {
            Some(dir) => {
                let p = dir.join("kubeconfig");
                tls::write_kubeconfig(&p, &kubeconfig)?;
                Some(p)
            }
            None => None,
        };
        let acceptor = if config.tls {
            Some(tokio_rustls::TlsAcceptor::from(tls::server_config(
                &credentials,
            )?))
        } else {
            None
        };
        let (shutdown, shutdown_rx) = watch::channel(false);
        tokio::spawn(crate::controllers::run(state.clone()));
        if let Some(delay) = config.workload_simulator {
            tokio::spawn(crate::simulator::run(state.clone(), delay));
        }
        let serve_state = state.clone();
        let task = tokio::spawn(crate::listen::serve(
            listener,
            acceptor,
            config.connections,
            shutdown_rx,
            move |req| handle(serve_state.clone(), req),
        ));
        Ok(ApiServer {
            addr,
            url,
            kubeconfig,
            kubeconfig_path,
            credentials,
            state,
            shutdown,
            task,
            _lock: lock,
        })
    }

    /// The shared state (for tests and the embedding binary; controllers use HTTP).
    pub fn state(&self) -> Arc<ServerState> {
        self.state.clone()
    }

    /// Stops accepting and closes open connections.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        let _ = self.task.await;
    }
}

/// The namespaces every cluster starts with, and the CRDs already stored.
fn bootstrap(state: &ServerState, port: u16) {
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let namespace = json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        });
        let key = Key::new("/namespaces", "", ns);
        if let Err(e) = crate::objects::create_if_missing(&state.store, &key, namespace) {
            tracing::warn!(error = %e, namespace = ns, "bootstrap");
        }
        crate::controllers::namespace_defaults(state, ns);
    }
    let ip = crate::allocate::KUBERNETES_SERVICE_IP;
    let node = crate::simulator::NODE_NAME;
    let created = crate::objects::now();
    let objects = [
        (
            Key::new("/services", "default", "kubernetes"),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kubernetes",
                "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
                "spec": {"clusterIP": ip, "clusterIPs": [ip], "internalTrafficPolicy": "Cluster",
                    "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                    "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
                    "sessionAffinity": "None", "type": "ClusterIP"},
                "status": {"loadBalancer": {}}}),
        ),
        (
            Key::new("/nodes", "", node),
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {
                    "kubernetes.io/hostname": node, "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": std::env::consts::ARCH.replace("x86_64", "amd64").replace("aarch64", "arm64"),
                    "node-role.kubernetes.io/control-plane": ""}},
                "spec": {"podCIDR": "10.42.0.0/16", "podCIDRs": ["10.42.0.0/16"]},
                "status": {
                    "addresses": [{"type": "InternalIP", "address": "10.0.0.2"},
                        {"type": "Hostname", "address": node}],
                    "capacity": {"cpu": "8", "memory": "32Gi", "pods": "1100", "ephemeral-storage": "100Gi"},
                    "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "1100", "ephemeral-storage": "100Gi"},
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "kubelet is posting ready status",
                        "lastHeartbeatTime": created, "lastTransitionTime": created}],
                    "nodeInfo": {"kubeletVersion": crate::GIT_VERSION, "kubeProxyVersion": crate::GIT_VERSION,
                        "containerRuntimeVersion": "tidegate://simulated", "operatingSystem": "linux",
                        "architecture": std::env::consts::ARCH, "osImage": "Tidegate workload simulator",
                        "kernelVersion": "", "machineID": "", "systemUUID": "", "bootID": ""}}}),
        ),
    ];
    for (key, obj) in objects {
        if let Err(e) = crate::objects::create_if_missing(&state.store, &key, obj) {
            tracing::warn!(error = %e, object = %key.name, "bootstrap");
        }
    }
    for (name, value, description) in crate::admission::SYSTEM_PRIORITY_CLASSES {
        let class = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name, "generation": 1}, "value": value,
            "description": description, "preemptionPolicy": "PreemptLowerPriority"});
        let key = Key::new("scheduling.k8s.io/priorityclasses", "", name);
        if let Err(e) = crate::objects::create_if_missing(&state.store, &key, class) {
            tracing::warn!(error = %e, object = name, "bootstrap");
        }
    }
    // The `kubernetes` Service points at the port this run listens on, as kube-apiserver's
    // bootstrap controller keeps it.
    let key = Key::new("/services", "default", "kubernetes");
    let repointed = state.store.mutate::<crate::store::StoreError>(&key, |cur| {
        let Some(cur) = cur else {
            return Ok(crate::store::Change::Keep);
        };
        if cur.pointer("/spec/ports/0/targetPort") == Some(&json!(port)) {
            return Ok(crate::store::Change::Keep);
        }
        let mut next = (**cur).clone();
        next["spec"]["ports"][0]["targetPort"] = json!(port);
        Ok(crate::store::Change::Put(next))
    });
    if let Err(e) = repointed {
        tracing::warn!(error = %e, "bootstrap: the kubernetes Service's port");
    }
    let (crds, _) = state.store.list(crate::controllers::CRDS, None, None);
    for (_, crd) in crds {
        if let Some(name) = crd.pointer("/metadata/name").and_then(Value::as_str) {
            state.sync_crd(name);
        }
    }
}

fn version_body() -> Value {
    json!({
        "major": "1",
        "minor": "35",
        "emulationMajor": "1",
        "emulationMinor": "35",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "34",
        "gitVersion": GIT_VERSION,
        "gitCommit": "tidegate",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "n/a (tidegate, Rust)",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, if std::env::consts::ARCH == "x86_64" { "amd64" } else { std::env::consts::ARCH }),
    })
}

async fn handle(state: Arc<ServerState>, req: Request<Body>) -> Response {
    state.requests.fetch_add(1, Ordering::Relaxed);
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let resp = match route(&state, req).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    tracing::debug!(%method, %path, status = resp.status().as_u16(), "request");
    resp
}

async fn route(state: &Arc<ServerState>, req: Request<Body>) -> Result<Response, ApiError> {
    let route = route::parse(req.uri().path());
    match route {
        Some(Route::Health) => return Ok(crate::health::answer(req.uri())),
        Some(Route::Version) => {
            return Ok(respond(StatusCode::OK, &version_body(), http::Format::Json));
        }
        _ => {}
    }
    let rbac = state.authorization == crate::auth::AuthorizationMode::Rbac;
    let user = match crate::auth::authenticate(state, req.headers(), req.extensions()) {
        Some(user) => user,
        // No credentials at all: kube-apiserver's anonymous user, whom RBAC then judges (it
        // turns anonymous requests off when everything is allowed, as kube-apiserver does).
        None if rbac && crate::auth::presents_no_credentials(req.headers(), req.extensions()) => {
            crate::auth::UserInfo::anonymous()
        }
        None => return Err(ApiError::unauthorized()),
    };
    let user = crate::auth::impersonate::impersonate(user, req.headers(), |a| state.authorize(a))?;
    if state.authorization == crate::auth::AuthorizationMode::Rbac {
        let attrs = crate::auth::attributes::Attributes::of_request(
            &user,
            req.method(),
            req.uri().path(),
            req.uri().query().unwrap_or(""),
            route.as_ref(),
        );
        state
            .authorize(&attrs)
            .map_err(|reason| attrs.forbidden(&reason))?;
    }
    if let Some(Route::Metrics) = route {
        let text = format!(
            "# HELP apiserver_request_total Requests served since the server started.\n# TYPE apiserver_request_total counter\napiserver_request_total {}\n",
            state.requests.load(Ordering::Relaxed)
        );
        return Ok((StatusCode::OK, text).into_response());
    }
    let neg = negotiate(req.headers());
    let cat = state.registry.snapshot();
    let Some(route) = route else {
        return Err(ApiError::not_found_path());
    };
    // Discovery and OpenAPI documents carry an ETag of their content; a client that sends it
    // back (`If-None-Match`) gets 304 and keeps its copy. Hashed OpenAPI v3 documents
    // (`?hash=`) may be cached for good, as kube-apiserver lets them.
    let if_none_match = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let immutable = req.uri().query().is_some_and(|q| q.contains("hash="));
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let discovery_json = |v: &Value| {
        let body = v.to_string();
        let digest = ring::digest::digest(&ring::digest::SHA512, body.as_bytes());
        let etag: String = digest.as_ref()[..16]
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        let etag = format!("\"{etag}\"");
        let mut resp = if if_none_match.as_deref() == Some(etag.as_str()) {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            let mut r = (StatusCode::OK, body).into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            r
        };
        if let Ok(v) = HeaderValue::from_str(&etag) {
            resp.headers_mut().insert(header::ETAG, v);
        }
        let cache = if immutable {
            "public, immutable"
        } else {
            "no-cache, private"
        };
        resp.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
        resp
    };
    match route {
        Route::CoreVersions | Route::Groups => {
            let core = route == Route::CoreVersions;
            if let Some(ver) = neg.aggregated {
                let body = crate::discovery::aggregated(&cat, core, ver);
                let mut resp = discovery_json(&body);
                let ct = format!(
                    "application/json;g=apidiscovery.k8s.io;v={ver};as=APIGroupDiscoveryList"
                );
                if let Ok(v) = HeaderValue::from_str(&ct) {
                    resp.headers_mut().insert(header::CONTENT_TYPE, v);
                }
                resp.headers_mut()
                    .insert(header::VARY, HeaderValue::from_static("Accept"));
                return Ok(resp);
            }
            let body = if core {
                crate::discovery::core_versions()
            } else {
                crate::discovery::group_list(&cat)
            };
            Ok(discovery_json(&body))
        }
        Route::Group(g) => crate::discovery::group(&cat, &g)
            .map(|v| discovery_json(&v))
            .ok_or_else(ApiError::not_found_path),
        Route::ResourceList { group, version } => {
            crate::discovery::resource_list(&cat, &group, &version)
                .map(|v| discovery_json(&v))
                .ok_or_else(ApiError::not_found_path)
        }
        Route::OidcDiscovery => Ok(discovery_json(&state.issuer.discovery())),
        Route::Jwks => {
            let mut resp = discovery_json(&state.issuer.jwks());
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/jwk-set+json"),
            );
            Ok(resp)
        }
        Route::OpenApiV2 => {
            if accept.contains("proto-openapi.spec.v2") {
                let body = crate::openapi_proto::encode(&crate::openapi::v2(&cat));
                let mut resp = (StatusCode::OK, body).into_response();
                resp.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(crate::openapi_proto::CONTENT_TYPE),
                );
                return Ok(resp);
            }
            if neg.unacceptable {
                return Err(ApiError::not_acceptable(&accept));
            }
            Ok(discovery_json(&crate::openapi::v2(&cat)))
        }
        Route::OpenApiV3Root => {
            let hash = format!(
                "{:016X}",
                cat.resources.len() as u64 * 1_000_003 + state.registry.generation()
            );
            Ok(discovery_json(&crate::openapi::v3_root(&cat, &hash)))
        }
        Route::OpenApiV3 { group, version } => crate::openapi::v3(&cat, &group, &version)
            .map(|v| discovery_json(&v))
            .ok_or_else(ApiError::not_found_path),
        Route::Resource(path) => {
            let Some(res) = cat.lookup(&path.group, &path.version, &path.plural) else {
                return Err(ApiError::not_found_path());
            };
            if neg.unacceptable {
                return Err(ApiError::not_acceptable(&accept));
            }
            let (parts, body) = req.into_parts();
            let r = crate::rest::Req {
                state: state.clone(),
                res,
                path,
                query: http::query(&parts.uri),
                headers: parts.headers,
                warnings: Default::default(),
                neg,
                user,
            };
            crate::rest::handle(r, parts.method, body).await
        }
        Route::Health | Route::Version | Route::Metrics => Err(ApiError::not_found_path()),
    }
}
