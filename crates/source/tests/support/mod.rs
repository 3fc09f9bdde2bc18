//! Real Git servers for the tests, started on loopback: `git daemon`, `git http-backend` behind a
//! small CGI host with basic auth, and OpenSSH's sshd with key authentication. Working
//! repositories are made with the git CLI (a test oracle, never used by the product).
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Runs a command and returns its trimmed stdout; panics with stderr on failure.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16, child: &mut Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what} did not listen on port {port}");
}

/// An empty GnuPG home (0700, as gpg wants it).
pub fn gnupg_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    home
}

/// A working repository plus a bare "server" copy it pushes to.
pub struct Repo {
    pub dir: tempfile::TempDir,
    /// Directory holding bare repositories (`<base>/repo.git`), served by the servers.
    pub base: PathBuf,
    env: Vec<(String, String)>,
}

impl Repo {
    /// A new repository on branch `main` with a bare remote `origin`.
    pub fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("srv");
        std::fs::create_dir_all(base.join("repo.git")).unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let repo = Repo {
            dir,
            base,
            env: Vec::new(),
        };
        repo.git(&[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            repo.bare().to_str().unwrap(),
        ]);
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.name", "Test Author"]);
        repo.git(&["config", "user.email", "author@tidegate.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo.git(&["config", "tag.gpgsign", "false"]);
        repo.git(&["remote", "add", "origin", repo.bare().to_str().unwrap()]);
        repo
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    pub fn bare(&self) -> PathBuf {
        self.base.join("repo.git")
    }

    /// `file://` URL of the bare repository.
    pub fn file_url(&self) -> String {
        format!("file://{}", self.bare().display())
    }

    /// Sets an environment variable for every later git command (GNUPGHOME, …).
    pub fn set_env(&mut self, k: &str, v: &str) {
        self.env.push((k.into(), v.into()));
    }

    pub fn git(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(self.work());
        cmd.env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.dir.path());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        run(&mut cmd)
    }

    pub fn write(&self, path: &str, content: &str) {
        let p = self.work().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    /// Commits everything and pushes every branch and tag; returns the commit SHA.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.push();
        self.git(&["rev-parse", "HEAD"])
    }

    pub fn push(&self) {
        self.git(&["push", "-q", "--force", "--all", "origin"]);
        self.git(&["push", "-q", "--force", "--tags", "origin"]);
    }
}

/// `git daemon` serving `base` on a loopback port.
pub struct GitDaemon {
    child: Child,
    pub port: u16,
}

impl GitDaemon {
    pub fn start(base: &Path) -> GitDaemon {
        let port = free_port();
        let mut child = Command::new("git")
            .args([
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--listen=127.0.0.1",
                &format!("--port={port}"),
                &format!("--base-path={}", base.display()),
                base.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("git daemon must be installed (git's daemon command)");
        wait_for_port(port, &mut child, "git daemon");
        GitDaemon { child, port }
    }

    pub fn url(&self, repo: &str) -> String {
        format!("git://127.0.0.1:{}/{repo}", self.port)
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// sshd on a loopback port, accepting one public key for root, with git's commands on PATH.
pub struct Sshd {
    child: Child,
    pub port: u16,
    pub known_hosts: String,
    authorized_keys: PathBuf,
    _dir: tempfile::TempDir,
}

pub fn sshd_path() -> PathBuf {
    for p in ["/usr/sbin/sshd", "/usr/bin/sshd"] {
        if Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    panic!("sshd is required by this test (Debian package openssh-server; .ci/run installs it)");
}

/// Generates an ed25519 key pair; returns (private key path, public key line).
pub fn ssh_keygen(dir: &Path, name: &str) -> (PathBuf, String) {
    let key = dir.join(name);
    run(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key));
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    (key, public.trim().to_string())
}

impl Sshd {
    pub fn start(authorized_key: &str) -> Sshd {
        let sshd = sshd_path();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        let (host_key, host_pub) = ssh_keygen(dir.path(), "host_key");
        let auth = dir.path().join("authorized_keys");
        std::fs::write(&auth, format!("{authorized_key}\n")).unwrap();
        let port = free_port();
        let config = dir.path().join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile {}\n\
                 SetEnv PATH=/usr/local/bin:/usr/bin:/bin\n",
                host_key.display(),
                auth.display(),
                dir.path().join("sshd.pid").display()
            ),
        )
        .unwrap();
        let mut child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sshd starts");
        wait_for_port(port, &mut child, "sshd");
        let known_hosts = format!("[127.0.0.1]:{port} {host_pub}\n");
        Sshd {
            child,
            port,
            known_hosts,
            authorized_keys: auth,
            _dir: dir,
        }
    }

    /// Adds a public key (one authorized_keys line) to the keys the server accepts, as a
    /// repository host does with a deploy key; sshd reads the file on each connection.
    pub fn authorize(&self, public_key: &str) {
        let mut keys = std::fs::read_to_string(&self.authorized_keys).unwrap();
        keys.push_str(public_key.trim_end());
        keys.push('\n');
        std::fs::write(&self.authorized_keys, keys).unwrap();
    }

    pub fn url(&self, path: &Path) -> String {
        format!("ssh://root@127.0.0.1:{}{}", self.port, path.display())
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `git http-backend` behind a minimal CGI host, on a loopback port: plain HTTP or HTTPS (a
/// certificate from a test CA), with basic auth or a bearer token required when given.
pub struct HttpBackend {
    pub port: u16,
    /// The CA that signed the HTTPS certificate (PEM), when serving HTTPS.
    pub ca_pem: Option<String>,
    scheme: &'static str,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the HTTP server asks clients for.
pub enum Required<'a> {
    Nothing,
    Basic(&'a str, &'a str),
    Bearer(&'a str),
}

impl HttpBackend {
    /// Serves the bare repositories in `base` over HTTP, requiring `user`/`password` when given.
    pub fn start(base: &Path, credentials: Option<(&str, &str)>) -> HttpBackend {
        let required = match credentials {
            Some((u, p)) => Required::Basic(u, p),
            None => Required::Nothing,
        };
        Self::start_with(base, required, false)
    }

    /// Serves `base` with the given authentication, over HTTPS when `tls`.
    pub fn start_with(base: &Path, required: Required<'_>, tls: bool) -> HttpBackend {
        Self::start_tls(base, required, tls, false).0
    }

    /// Serves `base` over HTTPS requiring a client certificate from the test client CA;
    /// returns the server and a client certificate and key (PEM) it accepts.
    pub fn start_mtls(base: &Path) -> (HttpBackend, String, String) {
        let (server, creds) = Self::start_tls(base, Required::Nothing, true, true);
        let creds = creds.unwrap();
        let (cert, key) =
            tidegate_apiserver::client_cert::client_certificate(&creds, "git-client", &[], 1)
                .unwrap();
        (server, cert, key)
    }

    fn start_tls(
        base: &Path,
        required: Required<'_>,
        tls: bool,
        require_client_certificate: bool,
    ) -> (HttpBackend, Option<tidegate_apiserver::tls::Credentials>) {
        use base64::Engine as _;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let expected = match required {
            Required::Nothing => None,
            Required::Basic(u, p) => Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )),
            Required::Bearer(t) => Some(format!("Bearer {t}")),
        };
        let creds = tls.then(|| tidegate_apiserver::tls::load_or_create(None).unwrap());
        let ca_pem = creds.as_ref().map(|c| c.ca_pem.clone());
        let tls_config = creds.as_ref().map(|c| {
            tidegate_apiserver::tls::server_config_with(c, require_client_certificate).unwrap()
        });
        let base = base.to_path_buf();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
                    let base = base.clone();
                    let expected = expected.clone();
                    async move { cgi(req, &base, expected.as_deref()).await }
                });
                match tls_config {
                    None => axum::serve(listener, app)
                        .with_graceful_shutdown(async {
                            let _ = rx.await;
                        })
                        .await
                        .unwrap(),
                    Some(config) => serve_tls(listener, app, config, rx).await,
                }
            });
        });
        (
            HttpBackend {
                port,
                ca_pem,
                scheme: if tls { "https" } else { "http" },
                shutdown: Some(tx),
                thread: Some(thread),
            },
            creds,
        )
    }

    pub fn url(&self, repo: &str) -> String {
        format!("{}://127.0.0.1:{}/{repo}", self.scheme, self.port)
    }
}

async fn serve_tls(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    config: std::sync::Arc<rustls::ServerConfig>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use tower::Service as _;
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    loop {
        let (tcp, _) = tokio::select! {
            r = listener.accept() => match r { Ok(c) => c, Err(_) => continue },
            _ = &mut stop => return,
        };
        let acceptor = acceptor.clone();
        let app = app.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let svc =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let mut app = app.clone();
                    async move { app.call(req.map(axum::body::Body::new)).await }
                });
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tls), svc)
                .await;
        });
    }
}

impl Drop for HttpBackend {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn cgi(
    req: axum::extract::Request,
    base: &Path,
    expected: Option<&str>,
) -> axum::response::Response {
    use axum::http::{HeaderValue, StatusCode};
    use axum::response::IntoResponse;
    let (parts, body) = req.into_parts();
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    if let Some(expected) = expected
        && header("authorization") != expected
    {
        let mut resp = (StatusCode::UNAUTHORIZED, "authentication required").into_response();
        resp.headers_mut().insert(
            "www-authenticate",
            HeaderValue::from_static("Basic realm=\"git\""),
        );
        return resp;
    }
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let mut cmd = tokio::process::Command::new("git");
    cmd.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", base)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", parts.method.as_str())
        .env("PATH_INFO", parts.uri.path())
        .env("QUERY_STRING", parts.uri.query().unwrap_or(""))
        .env("CONTENT_TYPE", header("content-type"))
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("GIT_PROTOCOL", header("git-protocol"))
        .env("HTTP_CONTENT_ENCODING", header("content-encoding"))
        .env("REMOTE_USER", "tester")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let _ = stdin.write_all(&body).await;
    });
    let out = child.wait_with_output().await.unwrap();
    // CGI output: headers, a blank line, the body.
    let raw = out.stdout;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| raw.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
    let Some((at, sep)) = split else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "bad CGI output").into_response();
    };
    let head = String::from_utf8_lossy(&raw[..at]).to_string();
    let mut resp = axum::response::Response::new(axum::body::Body::from(raw[at + sep..].to_vec()));
    for line in head.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        if k.eq_ignore_ascii_case("status") {
            let code = v
                .split_whitespace()
                .next()
                .and_then(|c| c.parse().ok())
                .unwrap_or(500);
            *resp.status_mut() =
                StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        } else if let (Ok(name), Ok(value)) = (
            axum::http::HeaderName::try_from(k.trim()),
            HeaderValue::from_str(v),
        ) {
            resp.headers_mut().insert(name, value);
        }
    }
    resp
}

/// Downloads `url`; returns the bytes and their `sha256:<hex>`.
pub async fn download(url: &str) -> (Vec<u8>, String) {
    use sha2::Digest as _;
    let response = tidegate_source::tls::http_client()
        .get(url)
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "GET {url}: {}",
        response.status()
    );
    let bytes = response.bytes().await.unwrap().to_vec();
    let digest = format!(
        "sha256:{}",
        tidegate_source::archive::hex(&sha2::Sha256::digest(&bytes))
    );
    (bytes, digest)
}

/// An artifact store in a temporary directory, served over HTTP on a loopback port as the
/// source controller serves it (retention: one hour, two records). The directory lives as long
/// as the returned guard.
pub async fn artifact_server() -> (
    std::sync::Arc<tidegate_source::storage::Storage>,
    tempfile::TempDir,
) {
    use tidegate_source::storage::{Retention, Storage};
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let storage = std::sync::Arc::new(
        Storage::new(
            dir.path(),
            &addr.to_string(),
            Retention {
                ttl: Duration::from_secs(3600),
                records: 2,
            },
        )
        .unwrap(),
    );
    let app = tidegate_source::server::router(storage.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (storage, dir)
}
