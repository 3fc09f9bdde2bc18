//! Throughput of the embedded API server next to a trivial loopback HTTP handler (the
//! physical limit of this machine's loopback + HTTP stack), in one run.
//!
//! `cargo bench -p tidegate-apiserver --bench apiserver` (add `-- N` for N objects, default
//! 10,000; add `rbac` to run only the RBAC comparison). Both servers speak plain HTTP/1.1 so TLS cost is out of both sides; the client is the
//! same hyper client with 16 concurrent keep-alive connections.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

type HttpClient = Client<HttpConnector, Full<Bytes>>;
const CONCURRENCY: usize = 16;

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

async fn trivial_server(body: Bytes) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let body = body.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let body = body.clone();
                    async move {
                        let _ = req.into_body().collect().await;
                        Ok::<_, std::convert::Infallible>(
                            Response::builder()
                                .header("content-type", "application/json")
                                .body(Full::new(body))
                                .expect("response"),
                        )
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    format!("http://{addr}")
}

async fn send(client: &HttpClient, method: Method, url: &str, token: &str, body: Bytes) -> Bytes {
    let content_type = if method == Method::PATCH {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    let req = Request::builder()
        .method(method)
        .uri(url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", content_type)
        .body(Full::new(body))
        .expect("request");
    let resp = client.request(req).await.expect("response");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    assert!(
        status.is_success(),
        "{status}: {}",
        String::from_utf8_lossy(&bytes)
    );
    bytes
}

/// Runs `n` requests built by `make` with CONCURRENCY workers; returns requests per second.
async fn run<F>(client: &HttpClient, n: usize, make: F) -> f64
where
    F: Fn(usize) -> (Method, String, Bytes) + Send + Sync + 'static,
{
    let make = Arc::new(make);
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENCY {
        let (client, make, next) = (client.clone(), make.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let (m, url, body) = make(i);
                send(&client, m, &url, &token(), body).await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("worker");
    }
    n as f64 / start.elapsed().as_secs_f64()
}

/// The bearer token of the server under test.
static TOKEN: std::sync::RwLock<String> = std::sync::RwLock::new(String::new());

fn token() -> String {
    TOKEN.read().map(|t| t.clone()).unwrap_or_default()
}

/// A server on plain HTTP with a data directory (kept alive by the returned guard), its token
/// made the one requests carry.
async fn server(simulator: Option<Duration>) -> (tidegate_apiserver::ApiServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = tidegate_apiserver::ApiServer::start(tidegate_apiserver::Config {
        data_dir: Some(dir.path().to_path_buf()),
        tls: false,
        workload_simulator: simulator,
        ..Default::default()
    })
    .await
    .expect("server");
    if let Ok(mut t) = TOKEN.write() {
        t.clone_from(&server.credentials.token);
    }
    (server, dir)
}

fn cm_body(i: usize) -> Bytes {
    Bytes::from(format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{i}","labels":{{"app":"bench","shard":"s{}"}}}},"data":{{"key":"value-{i}","other":"some longer configuration text to make the object realistic"}}}}"#,
        i % 10
    ))
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(10_000);
    if std::env::args().any(|a| a == "rbac") {
        let client: HttpClient = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(CONCURRENCY)
            .build_http();
        rbac(&client, n).await;
        return;
    }
    let rss0 = rss_bytes();
    let (server, _dir) = server(None).await;
    let base = server.url.clone();
    let client: HttpClient = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(CONCURRENCY)
        .build_http();

    // Baseline handler answering with a ConfigMap-sized body.
    let sample = send(
        &client,
        Method::POST,
        &format!("{base}/api/v1/namespaces/default/configmaps"),
        &server.credentials.token,
        cm_body(usize::MAX),
    )
    .await;
    let trivial = trivial_server(sample.clone()).await;

    let rss_before = rss_bytes();
    let b = base.clone();
    let creates = run(&client, n, move |i| {
        (
            Method::POST,
            format!("{b}/api/v1/namespaces/default/configmaps"),
            cm_body(i),
        )
    })
    .await;
    let rss_after = rss_bytes();
    let t = trivial.clone();
    let trivial_posts = run(&client, n, move |i| {
        (Method::POST, format!("{t}/post"), cm_body(i))
    })
    .await;

    let b = base.clone();
    let gets = run(&client, n, move |i| {
        (
            Method::GET,
            format!("{b}/api/v1/namespaces/default/configmaps/cm-{i}"),
            Bytes::new(),
        )
    })
    .await;
    let t = trivial.clone();
    let trivial_gets = run(&client, n, move |_| {
        (Method::GET, format!("{t}/get"), Bytes::new())
    })
    .await;

    // Lists of the whole collection, against the trivial handler serving a body of the same size.
    let list_body = send(
        &client,
        Method::GET,
        &format!("{base}/api/v1/namespaces/default/configmaps"),
        &server.credentials.token,
        Bytes::new(),
    )
    .await;
    let lists_n: usize = std::env::var("BENCH_LISTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let b = base.clone();
    let lists = run(&client, lists_n, move |_| {
        (
            Method::GET,
            format!("{b}/api/v1/namespaces/default/configmaps"),
            Bytes::new(),
        )
    })
    .await;
    let big = trivial_server(list_body.clone()).await;
    let trivial_lists = run(&client, lists_n, move |_| {
        (Method::GET, format!("{big}/list"), Bytes::new())
    })
    .await;

    // Watch fan-out: W watchers, E updates; events delivered per second.
    let watchers = 50usize;
    let events = 1_000usize;
    let rv = serde_json::from_slice::<serde_json::Value>(&list_body)
        .ok()
        .and_then(|v| {
            v["metadata"]["resourceVersion"]
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_default();
    let received = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for _ in 0..watchers {
        let url =
            format!("{base}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}");
        let token = server.credentials.token.clone();
        let received = received.clone();
        let wclient: HttpClient = Client::builder(TokioExecutor::new()).build_http();
        handles.push(tokio::spawn(async move {
            let req = Request::builder()
                .uri(url)
                .header("authorization", format!("Bearer {token}"))
                .body(Full::new(Bytes::new()))
                .expect("req");
            let mut body = wclient.request(req).await.expect("watch").into_body();
            let mut seen = 0;
            while let Some(Ok(frame)) = body.frame().await {
                if let Some(d) = frame.data_ref() {
                    let lines = d.iter().filter(|b| **b == b'\n').count();
                    seen += lines;
                    received.fetch_add(lines, Ordering::Relaxed);
                    if seen >= events {
                        return;
                    }
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let start = Instant::now();
    let b = base.clone();
    run(&client, events, move |i| {
        (
            Method::PATCH,
            format!("{b}/api/v1/namespaces/default/configmaps/cm-{}", i % n),
            Bytes::from(format!(r#"{{"data":{{"tick":"{i}"}}}}"#)),
        )
    })
    .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while received.load(Ordering::Relaxed) < watchers * events && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let fanout_secs = start.elapsed().as_secs_f64();
    let delivered = received.load(Ordering::Relaxed);
    for h in handles {
        h.abort();
    }

    let per_obj = (rss_after.saturating_sub(rss_before)) as f64 / n as f64;
    println!("objects: {n} ConfigMaps, concurrency {CONCURRENCY}, plain HTTP/1.1 on loopback");
    println!(
        "{:<28} {:>12} {:>14} {:>8}",
        "operation", "tidegate/s", "trivial/s", "ratio"
    );
    for (name, ours, theirs) in [
        ("create (POST)", creates, trivial_posts),
        ("get (GET by name)", gets, trivial_gets),
        ("list (all objects)", lists, trivial_lists),
    ] {
        println!(
            "{name:<28} {ours:>12.0} {theirs:>14.0} {:>8.2}",
            ours / theirs
        );
    }
    println!(
        "watch fan-out: {watchers} watchers x {events} updates: {delivered} events in {fanout_secs:.2}s = {:.0} events/s",
        delivered as f64 / fanout_secs
    );
    println!(
        "memory: RSS +{:.1} MiB for {n} objects = {:.0} bytes/object (process RSS {:.1} MiB at start)",
        (rss_after.saturating_sub(rss_before)) as f64 / 1048576.0,
        per_obj,
        rss0 as f64 / 1048576.0
    );
    println!("list body: {} bytes", list_body.len());
    server.shutdown().await;
    deployments(&client, n).await;
    rbac(&client, n).await;
}

fn deployment_body(i: usize) -> Bytes {
    Bytes::from(format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web-{i}","labels":{{"app":"web-{i}"}}}},"spec":{{"replicas":1,"selector":{{"matchLabels":{{"app":"web-{i}"}}}},"template":{{"metadata":{{"labels":{{"app":"web-{i}"}}}},"spec":{{"containers":[{{"name":"web","image":"nginx:1.27","ports":[{{"containerPort":80}}]}}]}}}}}}}}"#
    ))
}

/// Memory of `n` Deployments with the workload simulator on: what each costs once its rollout
/// has settled (with whatever the simulator creates for it). Settled means no write for 3 s.
async fn deployments(client: &HttpClient, n: usize) {
    let (server, _dir) = server(Some(Duration::from_millis(20))).await;
    let base = server.url.clone();
    let revision = |body: &Bytes| {
        serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|v| {
                v["metadata"]["resourceVersion"]
                    .as_str()
                    .map(str::to_string)
            })
            .unwrap_or_default()
    };
    let settle = || async {
        let url = format!("{base}/api/v1/namespaces?limit=1");
        let mut last = String::new();
        let mut since = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let rv = revision(&send(client, Method::GET, &url, &token(), Bytes::new()).await);
            if rv != last {
                last = rv;
                since = Instant::now();
            } else if since.elapsed() > Duration::from_secs(3) {
                return;
            }
        }
    };
    settle().await;
    let before = rss_bytes();
    let start = Instant::now();
    let b = base.clone();
    run(client, n, move |i| {
        (
            Method::POST,
            format!("{b}/apis/apps/v1/namespaces/default/deployments"),
            deployment_body(i),
        )
    })
    .await;
    settle().await;
    let after = rss_bytes();
    let count = |path: &str| {
        let url = format!("{base}{path}?limit=1");
        async move {
            let body = send(client, Method::GET, &url, &token(), Bytes::new()).await;
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            v["items"].as_array().map_or(0, Vec::len) as u64
                + v["metadata"]["remainingItemCount"].as_u64().unwrap_or(0)
        }
    };
    println!(
        "deployments: {n} created and settled in {:.1}s (simulator delay 20 ms); the store then held {} ReplicaSets, {} Pods, {} Events",
        start.elapsed().as_secs_f64() - 3.0,
        count("/apis/apps/v1/replicasets").await,
        count("/api/v1/pods").await,
        count("/api/v1/events").await,
    );
    println!(
        "memory: RSS +{:.1} MiB for {n} Deployments = {:.0} bytes/Deployment",
        (after.saturating_sub(before)) as f64 / 1048576.0,
        after.saturating_sub(before) as f64 / n as f64
    );
    server.shutdown().await;
}

/// GETs under `--authorization-mode RBAC` with 1,000 bindings in the cluster: a service
/// account (allowed by a RoleBinding to `view`) against the admin token (`system:masters`,
/// allowed before RBAC is consulted), rounds alternated, the best of each kept.
async fn rbac(client: &HttpClient, n: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = tidegate_apiserver::ApiServer::start(tidegate_apiserver::Config {
        data_dir: Some(dir.path().to_path_buf()),
        tls: false,
        authorization: tidegate_apiserver::AuthorizationMode::Rbac,
        ..Default::default()
    })
    .await
    .expect("server");
    let admin = server.credentials.token.clone();
    if let Ok(mut t) = TOKEN.write() {
        t.clone_from(&admin);
    }
    let base = server.url.clone();
    let post = |path: &str, body: String| {
        let url = format!("{base}{path}");
        let admin = admin.clone();
        async move { send(client, Method::POST, &url, &admin, Bytes::from(body)).await }
    };
    for i in 0..10 {
        post(
            "/api/v1/namespaces",
            format!(r#"{{"metadata":{{"name":"team-{i}"}}}}"#),
        )
        .await;
    }
    // 1,000 bindings: 300 ClusterRoleBindings to users and groups, 700 RoleBindings spread over
    // ten namespaces and default, one of them the service account's.
    let b = base.clone();
    run(client, 1_000, move |i| {
        let subject = if i % 2 == 0 {
            format!(r#"{{"kind":"User","name":"user-{i}"}}"#)
        } else {
            format!(r#"{{"kind":"Group","name":"group-{i}"}}"#)
        };
        let (path, ns) = match i {
            0..300 => ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings".to_string(), String::new()),
            _ => {
                let ns = if i % 11 == 0 { "default".to_string() } else { format!("team-{}", i % 10) };
                (format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings"), ns)
            }
        };
        let ns_field = if ns.is_empty() { String::new() } else { format!(r#","namespace":"{ns}""#) };
        let role = if i == 999 { "view".to_string() } else { ["view", "edit", "admin"][i % 3].to_string() };
        let subjects = if i == 999 {
            r#"{"kind":"ServiceAccount","name":"bench","namespace":"default"}"#.to_string()
        } else {
            subject
        };
        let kind = if ns.is_empty() { "ClusterRoleBinding" } else { "RoleBinding" };
        let name = if i == 999 { "bench-view".to_string() } else { format!("binding-{i}") };
        let path = if i == 999 { "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings".to_string() } else { path };
        let ns_field = if i == 999 { r#","namespace":"default""#.to_string() } else { ns_field };
        (
            Method::POST,
            format!("{b}{path}"),
            Bytes::from(format!(
                r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"{kind}","metadata":{{"name":"{name}"{ns_field}}},"roleRef":{{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"{role}"}},"subjects":[{subjects}]}}"#
            )),
        )
    })
    .await;
    post(
        "/api/v1/namespaces/default/serviceaccounts",
        r#"{"metadata":{"name":"bench"}}"#.into(),
    )
    .await;
    let issued = post(
        "/api/v1/namespaces/default/serviceaccounts/bench/token",
        r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}"#.into(),
    )
    .await;
    let sa: String = serde_json::from_slice::<serde_json::Value>(&issued)
        .ok()
        .and_then(|v| v["status"]["token"].as_str().map(str::to_string))
        .expect("service account token");
    let objects = n.min(1_000);
    let b = base.clone();
    run(client, objects, move |i| {
        (
            Method::POST,
            format!("{b}/api/v1/namespaces/default/configmaps"),
            cm_body(i),
        )
    })
    .await;
    let gets = |token: String| {
        if let Ok(mut t) = TOKEN.write() {
            *t = token;
        }
        let b = base.clone();
        run(client, n, move |i| {
            (
                Method::GET,
                format!(
                    "{b}/api/v1/namespaces/default/configmaps/cm-{}",
                    i % objects
                ),
                Bytes::new(),
            )
        })
    };
    let (mut best_admin, mut best_sa) = (0f64, 0f64);
    for _ in 0..3 {
        best_admin = best_admin.max(gets(admin.clone()).await);
        best_sa = best_sa.max(gets(sa.clone()).await);
    }
    println!(
        "rbac: 1,000 bindings, {n} GETs x 3 rounds each: admin {best_admin:.0}/s, service account {best_sa:.0}/s, ratio {:.2} (cost {:.1} %)",
        best_sa / best_admin,
        (1.0 - best_sa / best_admin) * 100.0
    );
    server.shutdown().await;
}
