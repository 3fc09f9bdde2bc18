//! Shared by the fleet benchmarks (Kustomizations, HelmReleases) in the shape of
//! fluxcd/flux-benchmark: `tidegate up` (or the API server and the controllers as two
//! processes), peak RSS, the API server's request counter and the controllers' reconcile
//! counts, and the no-op windows.
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};

/// A child process, interrupted and reaped when dropped.
pub struct Up(pub Child);

impl Drop for Up {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

/// Peak RSS (VmHWM) of a process in KiB.
pub fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The API resource of a kind.
pub fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// A counter of the API server's `/metrics`; a read that fails three times is reported and
/// counts as NaN (a bogus 0 would make the window's difference negative).
pub async fn counter(client: &kube::Client, path: &str, metric: &str) -> f64 {
    let mut last = String::new();
    for _ in 0..3 {
        let req = http::Request::get(path).body(Vec::new()).unwrap();
        match client.request_text(req).await {
            Ok(text) => return sum_metric(&text, metric),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!("reading {path} failed: {last}");
    f64::NAN
}

pub fn sum_metric(text: &str, metric: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(metric))
        .filter_map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()))
        .sum()
}

/// How many reconciles of `kind` the controllers' metrics count.
pub async fn reconciles(metrics_url: &str, kind: &str) -> f64 {
    let text = reqwest_get(metrics_url).await;
    let label = format!("kind=\"{kind}\"");
    text.lines()
        .filter(|l| l.starts_with("gotk_reconcile_duration_seconds_count") && l.contains(&label))
        .filter_map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()))
        .sum()
}

pub async fn reqwest_get(url: &str) -> String {
    // A plain HTTP GET over a TCP socket: the metrics endpoint needs nothing more.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.trim_start_matches("http://");
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let Ok(mut s) = tokio::net::TcpStream::connect(host).await else {
        return String::new();
    };
    let req = format!("GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n");
    let _ = s.write_all(req.as_bytes()).await;
    let mut out = String::new();
    let _ = s.read_to_string(&mut out).await;
    out
}

/// A running `tidegate up` (or API server plus controllers) and a client of it.
pub struct Fleet {
    pub client: kube::Client,
    /// The API server's process (the whole `tidegate up` when not split).
    pub server_pid: u32,
    /// The controllers' process when split.
    pub controllers: Option<(u32, Up)>,
    pub metrics_port: u16,
    pub split: bool,
    _server: Up,
    _dir: tempfile::TempDir,
}

/// Starts `tidegate up` (`split`: `tidegate apiserver` and `tidegate controllers`), with
/// `concurrency` for the controllers, and waits until the toolkit CRDs are served.
pub async fn start(split: bool, concurrency: &str, free_port: impl Fn() -> u16) -> Fleet {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let metrics_port = free_port();
    let data = dir.path().join("data");
    let kubeconfig = data.join("kubeconfig");
    // `TIDEGATE_BENCH_LOG=<file>`: the processes' logs go there (with `RUST_LOG`).
    let spawn = |args: Vec<String>, wrap: bool| {
        let log = std::env::var("TIDEGATE_BENCH_LOG").ok().map(|p| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .expect("log file opens")
        });
        // `TIDEGATE_BENCH_WRAPPER="heaptrack -o /tmp/ht"`: the controllers' process of a split
        // run goes under a profiler (its RSS figure is then the wrapper's).
        let wrapper = if wrap {
            std::env::var("TIDEGATE_BENCH_WRAPPER").unwrap_or_default()
        } else {
            String::new()
        };
        let mut words = wrapper.split_whitespace();
        let mut cmd = match words.next() {
            Some(program) => {
                let mut c = Command::new(program);
                c.args(words).arg(env!("CARGO_BIN_EXE_tidegate"));
                c
            }
            None => Command::new(env!("CARGO_BIN_EXE_tidegate")),
        };
        cmd.args(args)
            .stdout(Stdio::null())
            .stderr(log.map(Stdio::from).unwrap_or_else(Stdio::null))
            .spawn()
            .expect("tidegate runs")
    };
    let server = if split {
        spawn(
            vec![
                "apiserver".into(),
                "--data-dir".into(),
                data.display().to_string(),
                "--listen".into(),
                format!("127.0.0.1:{port}"),
            ],
            false,
        )
    } else {
        spawn(
            vec![
                "up".into(),
                "--data-dir".into(),
                data.display().to_string(),
                "--listen".into(),
                format!("127.0.0.1:{port}"),
                "--metrics-addr".into(),
                format!("127.0.0.1:{metrics_port}"),
                "--concurrent".into(),
                concurrency.into(),
                // The bench's GitRepository reads a local repository.
                "--allow-file-urls".into(),
            ],
            false,
        )
    };
    let server_pid = server.id();
    let server = Up(server);
    let deadline = Instant::now() + Duration::from_secs(60);
    let client = loop {
        if let Ok(text) = std::fs::read_to_string(&kubeconfig)
            && let Ok(kc) = kube::config::Kubeconfig::from_yaml(&text)
            && let Ok(cfg) = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await
            && let Ok(c) = kube::Client::try_from(cfg)
            && c.apiserver_version().await.is_ok()
        {
            break c;
        }
        assert!(Instant::now() < deadline, "tidegate did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut controllers = None;
    if split {
        let crd_res = resource(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        );
        let crds: Api<DynamicObject> = Api::all_with(client.clone(), &crd_res);
        for doc in tidegate_api::crds::all() {
            let obj: DynamicObject =
                serde_json::from_value(tidegate_core::yaml::parse_one(doc).unwrap()).unwrap();
            crds.create(&PostParams::default(), &obj).await.unwrap();
        }
        let c = spawn(
            vec![
                "controllers".into(),
                "--kubeconfig".into(),
                kubeconfig.display().to_string(),
                "--storage-path".into(),
                data.join("artifacts").display().to_string(),
                "--storage-addr".into(),
                format!("127.0.0.1:{}", free_port()),
                "--metrics-addr".into(),
                format!("127.0.0.1:{metrics_port}"),
                "--health-addr".into(),
                format!("127.0.0.1:{}", free_port()),
                "--allow-file-urls".into(),
                "--kustomize-concurrent".into(),
                concurrency.into(),
                "--helm-concurrent".into(),
                concurrency.into(),
            ],
            true,
        );
        controllers = Some((c.id(), Up(c)));
    }
    // The CRDs are installed by `up` once it serves; wait for the last of them.
    let hr = resource(
        "helm.toolkit.fluxcd.io",
        "v2",
        "HelmRelease",
        "helmreleases",
    );
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &hr);
    while all.list(&Default::default()).await.is_err() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Fleet {
        client,
        server_pid,
        controllers,
        metrics_port,
        split,
        _server: server,
        _dir: dir,
    }
}

impl Fleet {
    /// Creates the namespaces `names`.
    pub async fn namespaces(&self, names: &[String]) {
        use futures::StreamExt;
        let ns_res = resource("", "v1", "Namespace", "namespaces");
        let namespaces: Api<DynamicObject> = Api::all_with(self.client.clone(), &ns_res);
        futures::stream::iter(names.iter().map(|name| {
            let api = namespaces.clone();
            async move {
                let obj: DynamicObject = serde_json::from_value(serde_json::json!({
                    "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
                .unwrap();
                api.create(&PostParams::default(), &obj).await.unwrap();
            }
        }))
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    }

    /// Creates `objects` in `api`, 16 at a time.
    pub async fn create_all(&self, api: &Api<DynamicObject>, objects: Vec<serde_json::Value>) {
        use futures::StreamExt;
        futures::stream::iter(objects.into_iter().map(|o| {
            let api = api.clone();
            async move {
                let obj: DynamicObject = serde_json::from_value(o).unwrap();
                api.create(&PostParams::default(), &obj).await.unwrap();
            }
        }))
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    }

    /// Waits until `n` objects of `api` are `Ready=True` (30 minutes at most).
    pub async fn wait_ready(&self, api: &Api<DynamicObject>, n: usize, started: Instant) {
        loop {
            let list = api.list(&Default::default()).await.unwrap();
            let ready = list
                .items
                .iter()
                .filter(|k| {
                    k.data["status"]["conditions"].as_array().is_some_and(|cs| {
                        cs.iter()
                            .any(|c| c["type"] == "Ready" && c["status"] == "True")
                    })
                })
                .count();
            if ready == n {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(1800),
                "only {ready}/{n} ready after 30 minutes"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Peak RSS of the server and of the controllers (when split), in KiB.
    pub fn rss(&self) -> (u64, Option<u64>) {
        (
            peak_rss_kib(self.server_pid),
            self.controllers.as_ref().map(|(pid, _)| peak_rss_kib(*pid)),
        )
    }

    /// Two no-op windows of `window`: the reconciles of `kind` in each and the API requests
    /// the server served in it. The first still catches up with status changes after the
    /// rollouts; the second is the steady state.
    pub async fn noop_windows(&self, kind: &str, window: Duration) -> Vec<(f64, f64)> {
        tokio::time::sleep(Duration::from_secs(5)).await;
        let metrics_url = format!("http://127.0.0.1:{}/metrics", self.metrics_port);
        let mut windows = Vec::new();
        for _ in 0..2 {
            let r0 = reconciles(&metrics_url, kind).await;
            let q0 = counter(&self.client, "/metrics", "apiserver_request_total").await;
            tokio::time::sleep(window).await;
            let q1 = counter(&self.client, "/metrics", "apiserver_request_total").await;
            let r1 = reconciles(&metrics_url, kind).await;
            windows.push((r1 - r0, q1 - q0 - 1.0)); // minus the second /metrics GET itself
        }
        windows
    }

    /// Prints one size's figures.
    pub fn report(
        &self,
        n: usize,
        created: Duration,
        all_ready: Duration,
        at_ready: (u64, Option<u64>),
        windows: &[(f64, f64)],
        window: Duration,
    ) {
        let (rss_after, controllers_rss) = self.rss();
        let mib = |k: u64| k as f64 / 1024.0;
        let memory = match controllers_rss {
            Some(c) => format!(
                "controllers {:.0} MiB at Ready / {:.0} MiB after the no-op windows, API server {:.0} / {:.0} MiB",
                mib(at_ready.1.unwrap_or(0)),
                mib(c),
                mib(at_ready.0),
                mib(rss_after)
            ),
            None => format!(
                "{:.0} MiB at Ready / {:.0} MiB after the no-op windows (API server included)",
                mib(at_ready.0),
                mib(rss_after)
            ),
        };
        println!(
            "N={n} ({}): created in {:.1}s, all Ready after {:.1}s; peak RSS {memory}",
            if self.split {
                "apiserver + controllers processes"
            } else {
                "tidegate up"
            },
            created.as_secs_f64(),
            all_ready.as_secs_f64(),
        );
        for (i, (runs, requests)) in windows.iter().enumerate() {
            let per = if *runs > 0.0 {
                requests / runs
            } else {
                f64::NAN
            };
            println!(
                "  no-op window {} ({}s): {runs:.0} reconciles, {requests:.0} API requests ({per:.2} per reconcile)",
                i + 1,
                window.as_secs(),
            );
        }
    }

    /// The memory figure compared with Flux's controller: the controllers' process when
    /// split, else the whole process (MiB).
    pub fn compared_mib(&self) -> f64 {
        let (server, controllers) = self.rss();
        controllers.unwrap_or(server) as f64 / 1024.0
    }
}
