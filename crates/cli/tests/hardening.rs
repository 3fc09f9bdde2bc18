//! The binary under what a new user and an attacker try (issue 45): output closed early, two
//! servers on one data directory, idle connections at a common open-file limit, deeply nested
//! YAML bodies, malformed list and watch parameters, and a namespace that cannot be one.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn tidegate() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tidegate"))
}

struct Server {
    child: Child,
    kubeconfig: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tidegate apiserver` on a free port, its open-file limit set to `soft`/`hard` when given.
fn start(data: &Path, nofile: Option<(u64, u64)>) -> Server {
    let mut cmd = tidegate();
    cmd.args(["apiserver", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some((soft, hard)) = nofile {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe; it runs in the child between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let limit = libc::rlimit {
                    rlim_cur: soft,
                    rlim_max: hard,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().expect("tidegate apiserver starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let _address = lines.next().expect("address line").expect("read");
    let second = lines.next().expect("kubeconfig line").expect("read");
    let kubeconfig = PathBuf::from(second.strip_prefix("kubeconfig: ").expect("kubeconfig"));
    std::thread::spawn(move || for _ in lines {});
    Server { child, kubeconfig }
}

async fn config(kubeconfig: &Path) -> kube::Config {
    let text = std::fs::read_to_string(kubeconfig).expect("kubeconfig");
    let kc = kube::config::Kubeconfig::from_yaml(&text).expect("parses");
    kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("config")
}

/// The status code and body of a request made on a new connection, or why there is none.
async fn try_request(
    config: &kube::Config,
    method: &str,
    path_and_query: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Result<(u16, String), String> {
    let client = kube::Client::try_from(config.clone()).map_err(|e| e.to_string())?;
    let req = http::Request::builder()
        .method(method)
        .uri(path_and_query)
        .header("content-type", content_type)
        .body(body)
        .map_err(|e| e.to_string())?;
    let resp = client
        .send(req.map(kube::client::Body::from))
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let bytes = http_body_util::BodyExt::collect(resp.into_body())
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

async fn request(
    config: &kube::Config,
    method: &str,
    path_and_query: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (u16, String) {
    try_request(config, method, path_and_query, content_type, body)
        .await
        .expect("an answer")
}

fn message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body).expect("a Status")["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// `tidegate … | head -c 100`: the command ends when its output is closed, quietly, instead
/// of panicking with a backtrace and exit 101.
#[test]
fn closed_output_pipes_end_quietly() {
    for args in [vec!["install", "--export"], vec!["completion", "bash"]] {
        let mut child = tidegate()
            .args(&args)
            .env("RUST_BACKTRACE", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starts");
        let mut stdout = child.stdout.take().expect("stdout");
        let mut first = [0u8; 100];
        stdout.read_exact(&mut first).expect("some output");
        drop(stdout);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr)
            .expect("stderr");
        let status = child.wait().expect("exits");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
        assert_ne!(status.code(), Some(101), "{args:?}");
    }
}

/// A second server on a data directory in use fails at once, names the first, and leaves
/// its kubeconfig alone.
#[test]
fn a_second_server_on_the_same_data_directory_fails_fast() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let first = start(&data, None);
    let before = std::fs::read_to_string(&first.kubeconfig).expect("kubeconfig");
    let started = Instant::now();
    let out = tidegate()
        .args(["apiserver", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .output()
        .expect("runs");
    assert!(started.elapsed() < Duration::from_secs(20), "it waited");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].starts_with("✗ "), "{stderr}");
    assert!(
        lines[0].contains(&format!(
            "is in use by another tidegate (pid {})",
            first.child.id()
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&first.kubeconfig).expect("kubeconfig"),
        before,
        "the first server's kubeconfig was rewritten"
    );
    // The same for `up`.
    let out = tidegate()
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is in use by another tidegate (pid"),
        "{stderr}"
    );
}

/// With a soft limit of 1,024 open files, one process holding 800 idle connections must not
/// lock authenticated clients out: the limit is raised to the hard limit at start, and
/// connections still in their TLS handshake hold at most half of the slots.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_do_not_lock_clients_out_at_common_file_limits() {
    // This test holds 800 connections itself.
    // SAFETY: reading and raising this process's own limit.
    unsafe {
        let mut own = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut own);
        own.rlim_cur = own.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &own);
    }
    // A hard limit above the soft one (raised at start), and both at 1,024 (the reserve).
    for (soft, hard) in [(1024, 8192), (1024, 1024)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let server = start(&dir.path().join("data"), Some((soft, hard)));
        let config = config(&server.kubeconfig).await;
        let addr = config
            .cluster_url
            .authority()
            .expect("authority")
            .as_str()
            .to_string();
        let mut idle = Vec::new();
        for _ in 0..800 {
            // Connections the server accepts and closes (refused past a limit) are fine; the
            // ones it keeps stay idle in their handshake.
            if let Ok(s) = tokio::net::TcpStream::connect(&addr).await {
                idle.push(s);
            }
        }
        let mut failed = Vec::new();
        for _ in 0..116 {
            match try_request(
                &config,
                "GET",
                "/api/v1/namespaces/default",
                "application/json",
                Vec::new(),
            )
            .await
            {
                Ok((200, _)) => {}
                other => failed.push(format!("{other:?}")),
            }
        }
        assert!(
            failed.is_empty(),
            "soft {soft}, hard {hard}: {} of 116 failed: {:?}",
            failed.len(),
            failed.first()
        );
        drop(idle);
    }
}

/// `[[[…]]]` 100,000 deep in an apply body is refused at once with the reader's words, and
/// the server goes on answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_yaml_bodies_are_refused_before_parsing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(&dir.path().join("data"), None);
    let config = config(&server.kubeconfig).await;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for (method, path, ctype) in [
        (
            "PATCH",
            "/api/v1/namespaces/default/configmaps/x?fieldManager=t",
            "application/apply-patch+yaml",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            "application/yaml",
        ),
    ] {
        let (status, body) = request(&config, method, path, ctype, deep.clone().into_bytes()).await;
        assert_eq!(status, 400, "{body}");
        assert!(
            message(&body).contains("recursion limit exceeded"),
            "{body}"
        );
    }
    let (status, _) = request(
        &config,
        "GET",
        "/api/v1/namespaces",
        "application/json",
        Vec::new(),
    )
    .await;
    assert_eq!(status, 200);
}

/// List and watch parameters decoded and validated as kube-apiserver does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_watch_parameters_are_checked_as_kube_checks_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(&dir.path().join("data"), None);
    let config = config(&server.kubeconfig).await;
    let get = |q: &str| {
        let path = format!("/api/v1/namespaces/default/configmaps?{q}");
        let config = config.clone();
        async move { request(&config, "GET", &path, "application/json", Vec::new()).await }
    };
    for (query, status, expected) in [
        (
            "watch=true&timeoutSeconds=abc",
            400,
            "strconv.ParseInt: parsing \"abc\": invalid syntax",
        ),
        (
            "limit=abc",
            400,
            "strconv.ParseInt: parsing \"abc\": invalid syntax",
        ),
        (
            "timeoutSeconds=1.5",
            400,
            "strconv.ParseInt: parsing \"1.5\": invalid syntax",
        ),
        (
            "resourceVersionMatch=Garbage",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Unsupported value: \"Garbage\": supported values: \"Exact\", \"NotOlderThan\", \"\"]",
        ),
        (
            "resourceVersion=0&resourceVersionMatch=Garbage",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"Garbage\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
        ),
        (
            "watch=true&resourceVersionMatch=Garbage",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: \"Garbage\": supported values: \"NotOlderThan\"]",
        ),
    ] {
        let (got, body) = get(query).await;
        assert_eq!(got, status, "{query}: {body}");
        assert_eq!(message(&body), expected, "{query}");
    }
    // apimachinery reads any boolean other than 0 and false as true, and never refuses one.
    let (got, body) = get("watch=1&allowWatchBookmarks=maybe&timeoutSeconds=1").await;
    assert_eq!(got, 200, "{body}");
    let (got, body) = get("resourceVersion=0&resourceVersionMatch=NotOlderThan&limit=5").await;
    assert_eq!(got, 200, "{body}");
}

/// A namespace that cannot be one is refused by the CLI with kube's message, before any
/// request is made.
#[test]
fn invalid_namespaces_are_refused_with_kubes_message() {
    for args in [
        vec!["get", "kustomizations", "-n", "Bad NS!"],
        vec![
            "create",
            "source",
            "git",
            "x",
            "--url",
            "https://x",
            "-n",
            "Bad NS!",
        ],
    ] {
        let out = tidegate()
            .args(&args)
            .env("KUBECONFIG", "/nonexistent")
            .output()
            .expect("runs");
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("invalid uri character"), "{stderr}");
    }
}

/// `create source git` refuses what `flux create source git` refuses, with its words.
#[test]
fn create_source_git_refuses_a_url_that_is_not_one() {
    let out = tidegate()
        .args([
            "create",
            "source",
            "git",
            "x",
            "--url",
            "not a url",
            "--branch",
            "main",
            "--export",
        ])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "✗ git URL scheme '' not supported, can be: ssh, http, https, git and file"
    );
    assert!(out.stdout.is_empty());
}
