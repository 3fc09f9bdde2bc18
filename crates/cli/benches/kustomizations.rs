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
//! alone, `TIDEGATE_BENCH_SHAPE=shared` to put every app into one namespace); figures go to
//! docs/benchmarks.md.

mod fleet;
#[path = "../../source/tests/support/mod.rs"]
mod git_support;

use fleet::*;

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, PostParams};
use serde_json::json;

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

async fn run_one(n: usize, noop_window: Duration, split: bool) {
    let repo = git_support::Repo::new();
    for (p, c) in APP {
        repo.write(p, c);
    }
    repo.commit("app");
    let fleet = fleet::start(split, "10", git_support::free_port).await;
    let client = fleet.client.clone();
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
    // `TIDEGATE_BENCH_SHAPE=shared`: every app in one namespace (`targetNamespace: shared`,
    // `namePrefix: k<i>-`), so every Service selects every Pod, as in issue 54's report.
    let shared = std::env::var("TIDEGATE_BENCH_SHAPE").is_ok_and(|v| v == "shared");
    let mut names = vec!["bench".to_string()];
    if shared {
        names.push("shared".to_string());
    } else {
        names.extend((0..n).map(|i| format!("app-{i}")));
    }
    fleet.namespaces(&names).await;

    let started = Instant::now();
    let git: Api<DynamicObject> = Api::namespaced_with(client.clone(), "bench", &git_res);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
        "metadata": {"name": "podinfo", "namespace": "bench"},
        "spec": {"interval": "1h", "url": repo.file_url(), "ref": {"branch": "main"}}}))
    .unwrap();
    git.create(&PostParams::default(), &obj).await.unwrap();
    let ks: Api<DynamicObject> = Api::namespaced_with(client.clone(), "bench", &ks_res);
    let objects = (0..n)
        .map(|i| {
            let mut k = json!({
                "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                "metadata": {"name": format!("app-{i}"), "namespace": "bench"},
                "spec": {"interval": "60s", "path": "./app", "prune": true, "wait": true,
                    "timeout": "5m", "targetNamespace": format!("app-{i}"),
                    "sourceRef": {"kind": "GitRepository", "name": "podinfo"}}});
            if shared {
                k["spec"]["targetNamespace"] = json!("shared");
                k["spec"]["namePrefix"] = json!(format!("k{i}-"));
            }
            k
        })
        .collect();
    fleet.create_all(&ks, objects).await;
    let created = started.elapsed();
    fleet.wait_ready(&ks, n, started).await;
    let all_ready = started.elapsed();
    let at_ready = fleet.rss();
    // No-op windows: nothing changes; every Kustomization comes due about once a minute.
    let windows = fleet.noop_windows("Kustomization", noop_window).await;
    fleet.report(n, created, all_ready, at_ready, &windows, noop_window);
    if n == 1000 {
        println!(
            "  vs Flux v2.9 published (1,000 in 253s; kustomize-controller 223 MiB): {:.2}x the speed, {:.2}x less memory ({})",
            253.0 / all_ready.as_secs_f64(),
            223.0 / fleet.compared_mib(),
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
