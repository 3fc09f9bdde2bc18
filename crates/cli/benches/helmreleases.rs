//! In the shape of fluxcd/flux-benchmark's HelmRelease run: N HelmReleases of one small chart
//! (ServiceAccount, ConfigMap, Service, Deployment; packaged and indexed by the real helm on a
//! loopback chart server) from one source (a HelmRepository and one HelmChart every release
//! references with `chartRef`), each installing into its own namespace, reconciled by
//! `tidegate up` (embedded API server with its workload simulator, artifact server and the
//! controllers in one process; `TIDEGATE_BENCH_SPLIT=1`: API server and controllers as two
//! processes, to measure the controllers alone).
//!
//! Measured per N: time from creating the source and the HelmReleases until every HelmRelease
//! is `Ready=True`; peak RSS; then no-op windows (interval 60s, nothing changed) with the API
//! requests served and the reconciles run.
//!
//! The peer is Flux v2.6's published flux-benchmark figure for 1,000 HelmReleases: 8m12s and
//! 400 MiB for helm-controller alone (on a kind cluster, not runnable on this offline machine),
//! so the ratio compares with a published number.
//!
//! Run with `cargo bench -p tidegate --bench helmreleases` (`TIDEGATE_BENCH_N=100,500`,
//! `TIDEGATE_BENCH_NOOP_SECS`, `TIDEGATE_BENCH_SPLIT=1`, `TIDEGATE_BENCH_CONCURRENT` (default
//! 10), `TIDEGATE_BENCH_DETAIL=1` for when each release became ready, `TIDEGATE_BENCH_LOG=<file>`
//! for the processes' logs); figures go to docs/benchmarks.md.

#[path = "../../controllers/tests/chart_support/mod.rs"]
mod chart_support;
mod fleet;
#[path = "../../source/tests/support/mod.rs"]
mod git_support;

use std::time::{Duration, Instant};

use fleet::*;
use kube::api::{Api, DynamicObject};
use serde_json::json;

const TEMPLATES: &[(&str, &str)] = &[
    (
        "serviceaccount.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ .Release.Name }}\n",
    ),
    (
        "configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  PODINFO_UI_MESSAGE: {{ .Values.message | quote }}\n",
    ),
    (
        "service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  selector:\n    app: {{ .Release.Name }}\n  ports:\n  - name: http\n    port: 9898\n    targetPort: 9898\n",
    ),
    (
        "deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicaCount }}\n  selector:\n    matchLabels:\n      app: {{ .Release.Name }}\n  template:\n    metadata:\n      labels:\n        app: {{ .Release.Name }}\n    spec:\n      serviceAccountName: {{ .Release.Name }}\n      containers:\n      - name: podinfod\n        image: ghcr.io/stefanprodan/podinfo:{{ .Chart.AppVersion }}\n        ports:\n        - containerPort: 9898\n        envFrom:\n        - configMapRef:\n            name: {{ .Release.Name }}\n",
    ),
];

/// Packages the chart with the real helm and indexes the directory.
fn chart_repository(dir: &std::path::Path) {
    let src = tempfile::tempdir().unwrap();
    let chart = src.path().join("podinfo");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: podinfo\nversion: 6.7.1\nappVersion: 6.7.1\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("values.yaml"),
        "replicaCount: 1\nmessage: hello\n",
    )
    .unwrap();
    for (f, t) in TEMPLATES {
        std::fs::write(chart.join("templates").join(f), t).unwrap();
    }
    chart_support::run_helm(&[
        "package",
        chart.to_str().unwrap(),
        "-d",
        dir.to_str().unwrap(),
    ]);
}

async fn run_one(n: usize, noop_window: Duration, split: bool) {
    let charts = tempfile::tempdir().unwrap();
    chart_repository(charts.path());
    let server = chart_support::serve(charts.path().to_path_buf(), None).await;
    chart_support::run_helm(&[
        "repo",
        "index",
        charts.path().to_str().unwrap(),
        "--url",
        &server.url,
    ]);
    let concurrent = std::env::var("TIDEGATE_BENCH_CONCURRENT").unwrap_or_else(|_| "10".into());
    let fleet = fleet::start(split, &concurrent, git_support::free_port).await;
    let client = fleet.client.clone();
    let mut names = vec!["bench".to_string()];
    names.extend((0..n).map(|i| format!("app-{i}")));
    fleet.namespaces(&names).await;

    let started = Instant::now();
    let repo: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "bench",
        &resource(
            "source.toolkit.fluxcd.io",
            "v1",
            "HelmRepository",
            "helmrepositories",
        ),
    );
    fleet
        .create_all(
            &repo,
            vec![json!({
                "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
                "metadata": {"name": "podinfo", "namespace": "bench"},
                "spec": {"interval": "1h", "url": format!("{}/", server.url)}})],
        )
        .await;
    let chart: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "bench",
        &resource("source.toolkit.fluxcd.io", "v1", "HelmChart", "helmcharts"),
    );
    fleet
        .create_all(
            &chart,
            vec![json!({
                "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart",
                "metadata": {"name": "podinfo", "namespace": "bench"},
                "spec": {"interval": "1h", "chart": "podinfo", "version": "*",
                    "sourceRef": {"kind": "HelmRepository", "name": "podinfo"}}})],
        )
        .await;
    let hr: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "bench",
        &resource(
            "helm.toolkit.fluxcd.io",
            "v2",
            "HelmRelease",
            "helmreleases",
        ),
    );
    let objects = (0..n)
        .map(|i| {
            json!({
                "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": format!("app-{i}"), "namespace": "bench"},
                "spec": {"interval": "60s", "targetNamespace": format!("app-{i}"),
                    "releaseName": "podinfo", "storageNamespace": format!("app-{i}"),
                    "chartRef": {"kind": "HelmChart", "name": "podinfo"},
                    "values": {"message": format!("app {i}")}}})
        })
        .collect();
    fleet.create_all(&hr, objects).await;
    let created = started.elapsed();
    fleet.wait_ready(&hr, n, started).await;
    let all_ready = started.elapsed();
    let at_ready = fleet.rss();
    if std::env::var("TIDEGATE_BENCH_DETAIL").is_ok() {
        // When each release became Ready, and how long its install took.
        let list = hr.list(&Default::default()).await.unwrap();
        let mut times: Vec<(String, String)> = list
            .items
            .iter()
            .map(|o| {
                let ready = o.data["status"]["conditions"]
                    .as_array()
                    .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
                    .map(|c| c["lastTransitionTime"].as_str().unwrap_or("").to_string())
                    .unwrap_or_default();
                let took = o.data["status"]["lastAttemptedReleaseActionDuration"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                (ready, took)
            })
            .collect();
        times.sort();
        for (ready, took) in times.iter().step_by((n / 10).max(1)) {
            println!("  ready at {ready}, install took {took}");
        }
    }
    let windows = fleet.noop_windows("HelmRelease", noop_window).await;
    fleet.report(n, created, all_ready, at_ready, &windows, noop_window);
    if n == 1000 {
        println!(
            "  vs Flux v2.6 published (1,000 in 492s; helm-controller 400 MiB): {:.2}x the time, {:.2}x the memory ({})",
            all_ready.as_secs_f64() / 492.0,
            fleet.compared_mib() / 400.0,
            if split {
                "the controllers' process"
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
