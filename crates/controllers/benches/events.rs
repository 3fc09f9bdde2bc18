//! Event-server throughput against the embedded API server, in one run: 100 Alerts and one
//! generic Provider pointing at a local sink (Rust, so the sink is not what is measured);
//! 16 concurrent clients POST distinct Flux events.
//!
//! - one match: each event is about one of 100 Kustomizations and matches one Alert;
//! - fan-out: every Alert matches every event (100 notifications per event).
//!
//! Reports events accepted (202) per second and notifications delivered per second.
//!
//!   cargo bench -p tidegate-controllers --bench events [-- EVENTS FANOUT_EVENTS]

#[path = "../../apiserver/tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

const CLIENTS: usize = 16;

async fn sink() -> (String, Arc<AtomicU64>) {
    let count = Arc::new(AtomicU64::new(0));
    let c = count.clone();
    let app = axum::Router::new().fallback(move |_body: axum::body::Bytes| {
        let c = c.clone();
        async move {
            c.fetch_add(1, Ordering::Relaxed);
            "ok"
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await });
    (url, count)
}

/// A `List` of the objects, for `kubectl apply`.
fn list(items: Vec<serde_json::Value>) -> String {
    json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

fn alerts(fanout: bool) -> Vec<serde_json::Value> {
    (0..100)
        .map(|i| {
            let name = if fanout {
                "*".to_string()
            } else {
                format!("app-{i}")
            };
            json!({"apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Alert",
                "metadata": {"name": format!("alert-{i}"), "namespace": "flux-system"},
                "spec": {"providerRef": {"name": "sink"},
                         "eventSources": [{"kind": "Kustomization", "name": name}]}})
        })
        .collect()
}

async fn round(http: &reqwest::Client, url: &str, count: usize, tag: &str) -> (usize, Duration) {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let (http, url, tag) = (http.clone(), url.to_string(), tag.to_string());
        tasks.push(tokio::spawn(async move {
            let mut ok = 0;
            for i in (c..count).step_by(CLIENTS) {
                let e = json!({
                    "involvedObject": {"kind": "Kustomization", "namespace": "flux-system",
                        "name": format!("app-{}", i % 100), "apiVersion": "kustomize.toolkit.fluxcd.io/v1"},
                    "severity": "info", "timestamp": "2026-11-27T00:00:00Z",
                    "message": format!("{tag} event {i}"), "reason": "ReconciliationSucceeded",
                    "metadata": {"kustomize.toolkit.fluxcd.io/revision": format!("main@sha1:{i:040x}")},
                    "reportingController": "kustomize-controller"});
                let r = http
                    .post(&url)
                    .header("Content-Type", "application/json")
                    .body(e.to_string())
                    .send()
                    .await;
                if r.is_ok_and(|r| r.status().as_u16() == 202) {
                    ok += 1;
                }
            }
            ok
        }));
    }
    let mut accepted = 0;
    for t in tasks {
        accepted += t.await.unwrap_or(0);
    }
    (accepted, start.elapsed())
}

async fn delivered(count: &AtomicU64, want: u64, start: Instant) -> (u64, Duration) {
    while count.load(Ordering::Relaxed) < want && start.elapsed() < Duration::from_secs(300) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    (count.load(Ordering::Relaxed), start.elapsed())
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let events: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let fanout_events: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1_000);
    let server = common::start().await;
    server.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &tidegate_api::crds::stream(),
    );
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/alerts.notification.toolkit.fluxcd.io",
        "crd/providers.notification.toolkit.fluxcd.io",
    ]);
    server.ok(&["create", "namespace", "flux-system"]);
    let kc = kube::config::Kubeconfig::from_yaml(&server.server.kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let events_url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(tidegate_controllers::notification::run_event_server(
        client,
        tidegate_controllers::notification::Options::default(),
        listener,
        std::future::pending(),
    ));
    let (sink_url, count) = sink().await;
    let provider = json!({"apiVersion": "notification.toolkit.fluxcd.io/v1beta3",
        "kind": "Provider", "metadata": {"name": "sink", "namespace": "flux-system"},
        "spec": {"type": "generic", "address": sink_url}});
    let mut objects = alerts(false);
    objects.insert(0, provider);
    server.ok_stdin(&["apply", "-f", "-"], &list(objects));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let http = tidegate_source::tls::http_client();
    let report = |what: &str,
                  accepted: usize,
                  asked: usize,
                  took: Duration,
                  sent: u64,
                  all: Duration| {
        println!(
            "{what}: {accepted}/{asked} accepted in {:.2} s = {:.0} events/s; {sent} notifications delivered in {:.2} s = {:.0}/s",
            took.as_secs_f64(),
            accepted as f64 / took.as_secs_f64(),
            all.as_secs_f64(),
            sent as f64 / all.as_secs_f64()
        )
    };
    let start = Instant::now();
    let (accepted, took) = round(&http, &events_url, events, "one").await;
    let (sent, all) = delivered(&count, accepted as u64, start).await;
    report(
        "100 Alerts, one match per event",
        accepted,
        events,
        took,
        sent,
        all,
    );
    server.ok_stdin(&["apply", "-f", "-"], &list(alerts(true)));
    tokio::time::sleep(Duration::from_secs(1)).await;
    count.store(0, Ordering::Relaxed);
    let start = Instant::now();
    let (accepted, took) = round(&http, &events_url, fanout_events, "fan").await;
    let (sent, all) = delivered(&count, accepted as u64 * 100, start).await;
    report(
        "100 Alerts, all matching (fan-out 100)",
        accepted,
        fanout_events,
        took,
        sent,
        all,
    );
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(rss) = status.lines().find(|l| l.starts_with("VmHWM")) {
        println!(
            "peak RSS of the bench process (API server, event server, sink, clients): {}",
            rss.trim_start_matches("VmHWM:").trim()
        );
    }
}
