//! In the shape of fluxcd/flux-benchmark: N Kustomizations (`wait: true`, `prune: true`), each
//! deploying a small app (ServiceAccount, ConfigMap, Service, Deployment) into its own
//! namespace from one GitRepository, reconciled by `tidegate up` (embedded API server with its
//! workload simulator, artifact server and both controllers in one process).
//!
//! Measured per N: time from creating the GitRepository and the Kustomizations until every
//! Kustomization is `Ready=True`; peak RSS of the whole `tidegate up` process (API server
//! included); then a window of no-op reconciles (interval 60s, nothing changed) with the API
//! requests the server served and the reconciles the controller ran in it.
//!
//! The peer is Flux v2.9's published flux-benchmark figure: 1,000 Kustomizations in 4m13s with
//! 223 MiB for kustomize-controller alone (on a kind cluster; not runnable on this offline
//! machine), so the ratio compares with a published number, not a same-run measurement.
//!
//! Run with `cargo bench -p tidegate --bench kustomizations` (`TIDEGATE_BENCH_N=100,500` to
//! choose sizes, `TIDEGATE_BENCH_NOOP_SECS` for the no-op windows, `TIDEGATE_BENCH_SPLIT=1` to
//! run the API server and the controllers as two processes and measure the controllers' memory
//! alone); figures go to docs/benchmarks.md.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

struct Up(Child);

impl Drop for Up {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

fn peak_rss_kib(pid: u32) -> u64 {
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

const APP: &[(&str, &str)] = &[
    (
        "app/kustomization.yaml",
        "resources:\n- serviceaccount.yaml\n- configmap.yaml\n- service.yaml\n- deployment.yaml\n",
    ),
    (
        "app/serviceaccount.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: podinfo\n",
    ),
    (
        "app/configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: podinfo\ndata:\n  PODINFO_UI_MESSAGE: hello\n",
    ),
    (
        "app/service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: podinfo\nspec:\n  selector:\n    app: podinfo\n  ports:\n  - name: http\n    port: 9898\n    targetPort: 9898\n",
    ),
    (
        "app/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: podinfo\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: podinfo\n  template:\n    metadata:\n      labels:\n        app: podinfo\n    spec:\n      serviceAccountName: podinfo\n      containers:\n      - name: podinfod\n        image: ghcr.io/stefanprodan/podinfo:6.7.1\n        ports:\n        - containerPort: 9898\n        envFrom:\n        - configMapRef:\n            name: podinfo\n",
    ),
];

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// A counter of the API server's `/metrics`; a read that fails three times is reported and
/// counts as NaN (a bogus 0 would make the window's difference negative).
async fn counter(client: &kube::Client, path: &str, metric: &str) -> f64 {
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

fn sum_metric(text: &str, metric: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(metric))
        .filter_map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()))
        .sum()
}

async fn reconciles(metrics_url: &str) -> f64 {
    let text = reqwest_get(metrics_url).await;
    text.lines()
        .filter(|l| {
            l.starts_with("gotk_reconcile_duration_seconds_count")
                && l.contains("kind=\"Kustomization\"")
        })
        .filter_map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()))
        .sum()
}

async fn reqwest_get(url: &str) -> String {
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

async fn run_one(n: usize, noop_window: Duration, split: bool) {
    let dir = tempfile::tempdir().unwrap();
    let repo = git_support::Repo::new();
    for (p, c) in APP {
        repo.write(p, c);
    }
    repo.commit("app");
    let port = git_support::free_port();
    let metrics_port = git_support::free_port();
    let data = dir.path().join("data");
    let kubeconfig = data.join("kubeconfig");
    let spawn = |args: Vec<String>| {
        Command::new(env!("CARGO_BIN_EXE_tidegate"))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tidegate runs")
    };
    // Split: the API server and the controllers as two processes, so the controllers' memory
    // can be compared with Flux's kustomize-controller; else one `tidegate up`.
    let server = if split {
        spawn(vec![
            "apiserver".into(),
            "--data-dir".into(),
            data.display().to_string(),
            "--listen".into(),
            format!("127.0.0.1:{port}"),
        ])
    } else {
        spawn(vec![
            "up".into(),
            "--data-dir".into(),
            data.display().to_string(),
            "--listen".into(),
            format!("127.0.0.1:{port}"),
            "--metrics-addr".into(),
            format!("127.0.0.1:{metrics_port}"),
            "--concurrent".into(),
            "10".into(),
        ])
    };
    let server_pid = server.id();
    let _server = Up(server);
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
        let c = spawn(vec![
            "controllers".into(),
            "--kubeconfig".into(),
            kubeconfig.display().to_string(),
            "--storage-path".into(),
            data.join("artifacts").display().to_string(),
            "--storage-addr".into(),
            format!("127.0.0.1:{}", git_support::free_port()),
            "--metrics-addr".into(),
            format!("127.0.0.1:{metrics_port}"),
            "--health-addr".into(),
            format!("127.0.0.1:{}", git_support::free_port()),
            "--allow-file-urls".into(),
            "--kustomize-concurrent".into(),
            "10".into(),
        ]);
        controllers = Some((c.id(), Up(c)));
    }
    let ks_res = resource(
        "kustomize.toolkit.fluxcd.io",
        "v1",
        "Kustomization",
        "kustomizations",
    );
    let git_res = resource(
        "source.toolkit.fluxcd.io",
        "v1",
        "GitRepository",
        "gitrepositories",
    );
    let ns_res = resource("", "v1", "Namespace", "namespaces");
    // The CRDs are installed by `up` once it serves; wait for them.
    let ks_all: Api<DynamicObject> = Api::all_with(client.clone(), &ks_res);
    while ks_all.list(&Default::default()).await.is_err() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let namespaces: Api<DynamicObject> = Api::all_with(client.clone(), &ns_res);
    let mut names = vec!["bench".to_string()];
    names.extend((0..n).map(|i| format!("app-{i}")));
    futures::stream::iter(names.iter().map(|name| {
        let api = namespaces.clone();
        async move {
            let obj: DynamicObject = serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
            .unwrap();
            api.create(&PostParams::default(), &obj).await.unwrap();
        }
    }))
    .buffer_unordered(16)
    .collect::<Vec<_>>()
    .await;

    let started = Instant::now();
    let git: Api<DynamicObject> = Api::namespaced_with(client.clone(), "bench", &git_res);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
        "metadata": {"name": "podinfo", "namespace": "bench"},
        "spec": {"interval": "1h", "url": repo.file_url(), "ref": {"branch": "main"}}}))
    .unwrap();
    git.create(&PostParams::default(), &obj).await.unwrap();
    let ks: Api<DynamicObject> = Api::namespaced_with(client.clone(), "bench", &ks_res);
    futures::stream::iter((0..n).map(|i| {
        let api = ks.clone();
        async move {
            let obj: DynamicObject = serde_json::from_value(json!({
                "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                "metadata": {"name": format!("app-{i}"), "namespace": "bench"},
                "spec": {"interval": "60s", "path": "./app", "prune": true, "wait": true,
                    "timeout": "5m", "targetNamespace": format!("app-{i}"),
                    "sourceRef": {"kind": "GitRepository", "name": "podinfo"}}}))
            .unwrap();
            api.create(&PostParams::default(), &obj).await.unwrap();
        }
    }))
    .buffer_unordered(16)
    .collect::<Vec<_>>()
    .await;
    let created = started.elapsed();
    loop {
        let list = ks.list(&Default::default()).await.unwrap();
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
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(1800),
            "only {ready}/{n} ready after 30 minutes"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let all_ready = started.elapsed();
    let rss_at_ready = peak_rss_kib(server_pid);
    let controllers_rss_at_ready = controllers.as_ref().map(|(pid, _)| peak_rss_kib(*pid));

    // No-op windows: nothing changes; every Kustomization comes due about once a minute. The
    // first no-op of each still catches up with what the rollout changed after its apply
    // (status updates); the second window is the steady state.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let metrics_url = format!("http://127.0.0.1:{metrics_port}/metrics");
    let mut windows = Vec::new();
    for _ in 0..2 {
        let r0 = reconciles(&metrics_url).await;
        let q0 = counter(&client, "/metrics", "apiserver_request_total").await;
        tokio::time::sleep(noop_window).await;
        let q1 = counter(&client, "/metrics", "apiserver_request_total").await;
        let r1 = reconciles(&metrics_url).await;
        windows.push((r1 - r0, q1 - q0 - 1.0)); // minus the second /metrics GET itself
    }
    let rss_after = peak_rss_kib(server_pid);
    let controllers_rss = controllers.as_ref().map(|(pid, _)| peak_rss_kib(*pid));
    drop(controllers);
    let mib = |k: u64| k as f64 / 1024.0;
    let memory = match controllers_rss {
        Some(c) => format!(
            "controllers {:.0} MiB at Ready / {:.0} MiB after the no-op windows, API server {:.0} / {:.0} MiB",
            mib(controllers_rss_at_ready.unwrap_or(0)),
            mib(c),
            mib(rss_at_ready),
            mib(rss_after)
        ),
        None => format!(
            "{:.0} MiB at Ready / {:.0} MiB after the no-op windows (API server included)",
            mib(rss_at_ready),
            mib(rss_after)
        ),
    };
    println!(
        "N={n} ({}): created in {:.1}s, all Ready after {:.1}s; peak RSS {memory}",
        if split {
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
            noop_window.as_secs(),
        );
    }
    if n == 1000 {
        let ours = controllers_rss.unwrap_or(rss_after);
        println!(
            "  vs Flux v2.9 published (1,000 in 253s; kustomize-controller 223 MiB): {:.2}x the speed, {:.2}x less memory ({})",
            253.0 / all_ready.as_secs_f64(),
            223.0 / mib(ours),
            if split {
                "both controllers"
            } else {
                "whole process, API server included"
            }
        );
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::var("TIDEGATE_BENCH_N")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![100, 500, 1000]);
    let window = std::env::var("TIDEGATE_BENCH_NOOP_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(75);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let split = std::env::var("TIDEGATE_BENCH_SPLIT").is_ok_and(|v| v == "1");
        for n in sizes {
            run_one(n, Duration::from_secs(window), split).await;
        }
    });
}
