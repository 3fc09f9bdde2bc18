//! Server-side apply throughput next to plain PUT updates of the same objects, in one run:
//! a 3-container Deployment applied by 1 and by 3 managers, and a 200-entry ConfigMap.
//!
//! `cargo bench -p tidegate-apiserver --bench apply` (add `-- N` for N writes per case, default
//! 2,000). Every write changes the object. 8 objects per case, one worker each, plain HTTP/1.1.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

type HttpClient = Client<HttpConnector, Full<Bytes>>;
const OBJECTS: usize = 8;

struct Ctx {
    client: HttpClient,
    base: String,
    token: String,
}

async fn send(ctx: &Ctx, method: Method, path: &str, ct: &str, body: Vec<u8>) {
    let req = Request::builder()
        .method(method)
        .uri(format!("{}{path}", ctx.base))
        .header("authorization", format!("Bearer {}", ctx.token))
        .header("content-type", ct)
        .body(Full::new(Bytes::from(body)))
        .expect("request");
    let resp = ctx.client.request(req).await.expect("response");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    assert!(
        status.is_success(),
        "{status}: {}",
        String::from_utf8_lossy(&bytes)
    );
}

fn deployment(name: &str, images: [&str; 3], replicas: usize) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": (0..3).map(|c| json!({
                    "name": format!("c{c}"), "image": images[c],
                    "ports": [{"containerPort": 8080 + c, "protocol": "TCP"}],
                    "env": [{"name": "MODE", "value": "bench"}, {"name": "INDEX", "value": c.to_string()}],
                    "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}
                })).collect::<Vec<_>>()}
            }
        }
    })
}

/// One container's image, as manager `c` of three declares it.
fn deployment_part(name: &str, c: usize, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"spec": {"containers": [{"name": format!("c{c}"), "image": image}]}}}
    })
}

fn configmap(name: &str, version: usize) -> Value {
    let data: serde_json::Map<String, Value> = (0..200)
        .map(|k| {
            let v = if k == version % 200 {
                format!("changed-{version}")
            } else {
                format!("value-{k}-with-some-configuration-text")
            };
            (format!("key-{k:03}"), Value::String(v))
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"}, "data": data})
}

/// One write: method, path, content type, body.
type Write = (Method, String, &'static str, Vec<u8>);
/// Builds the write number `i` to object `obj`.
type MakeWrite = Arc<dyn Fn(usize, usize) -> Write + Send + Sync>;

/// Runs `n` writes over OBJECTS objects (one worker per object); returns writes per second.
async fn run(ctx: Arc<Ctx>, n: usize, make: MakeWrite) -> f64 {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for obj in 0..OBJECTS {
        let (ctx, make) = (ctx.clone(), make.clone());
        tasks.push(tokio::spawn(async move {
            for i in (obj..n).step_by(OBJECTS) {
                let (m, path, ct, body) = make(obj, i);
                send(&ctx, m, &path, ct, body).await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("worker");
    }
    n as f64 / start.elapsed().as_secs_f64()
}

const APPLY: &str = "application/apply-patch+yaml";
const JSON: &str = "application/json";

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(2_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let server = tidegate_apiserver::ApiServer::start(tidegate_apiserver::Config {
        data_dir: Some(dir.path().to_path_buf()),
        tls: false,
        ..Default::default()
    })
    .await
    .expect("server");
    let ctx = Arc::new(Ctx {
        client: Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(OBJECTS)
            .build_http(),
        base: server.url.clone(),
        token: server.credentials.token.clone(),
    });
    let deploy_path = |name: &str| format!("/apis/apps/v1/namespaces/default/deployments/{name}");
    let cm_path = |name: &str| format!("/api/v1/namespaces/default/configmaps/{name}");
    // Seed: each case gets its own objects, created by apply.
    for o in 0..OBJECTS {
        for prefix in ["a1", "a3", "p1"] {
            let name = format!("{prefix}-{o}");
            let body = deployment(&name, ["img:0", "img:0", "img:0"], 1).to_string();
            send(
                &ctx,
                Method::PATCH,
                &format!("{}?fieldManager=seed&force=true", deploy_path(&name)),
                APPLY,
                body.into_bytes(),
            )
            .await;
        }
        for prefix in ["ca", "cp"] {
            let name = format!("{prefix}-{o}");
            let body = configmap(&name, 0).to_string();
            send(
                &ctx,
                Method::PATCH,
                &format!("{}?fieldManager=seed&force=true", cm_path(&name)),
                APPLY,
                body.into_bytes(),
            )
            .await;
        }
    }
    let apply1 = run(
        ctx.clone(),
        n,
        Arc::new(move |o, i| {
            let name = format!("a1-{o}");
            let tag = format!("img:{i}");
            let body = deployment(&name, [&tag, "img:0", "img:0"], 1 + i % 5).to_string();
            (
                Method::PATCH,
                format!("{}?fieldManager=ci&force=true", deploy_path(&name)),
                APPLY,
                body.into_bytes(),
            )
        }),
    )
    .await;
    let apply3 = run(
        ctx.clone(),
        n,
        Arc::new(move |o, i| {
            let name = format!("a3-{o}");
            let c = i % 3;
            let body = deployment_part(&name, c, &format!("img:{i}")).to_string();
            (
                Method::PATCH,
                format!("{}?fieldManager=team-{c}&force=true", deploy_path(&name)),
                APPLY,
                body.into_bytes(),
            )
        }),
    )
    .await;
    let put_deploy = run(
        ctx.clone(),
        n,
        Arc::new(move |o, i| {
            let name = format!("p1-{o}");
            let tag = format!("img:{i}");
            let body = deployment(&name, [&tag, "img:0", "img:0"], 1 + i % 5).to_string();
            (Method::PUT, deploy_path(&name), JSON, body.into_bytes())
        }),
    )
    .await;
    let apply_cm = run(
        ctx.clone(),
        n,
        Arc::new(move |o, i| {
            let name = format!("ca-{o}");
            (
                Method::PATCH,
                format!("{}?fieldManager=ci&force=true", cm_path(&name)),
                APPLY,
                configmap(&name, i + 1).to_string().into_bytes(),
            )
        }),
    )
    .await;
    let put_cm = run(
        ctx.clone(),
        n,
        Arc::new(move |o, i| {
            let name = format!("cp-{o}");
            (
                Method::PUT,
                cm_path(&name),
                JSON,
                configmap(&name, i + 1).to_string().into_bytes(),
            )
        }),
    )
    .await;
    println!("writes per case: {n} over {OBJECTS} objects, one worker per object, plain HTTP/1.1");
    println!("deployment (3 containers) PUT update:        {put_deploy:>8.0}/s");
    println!(
        "deployment apply, 1 manager:                  {apply1:>8.0}/s  ({:.2}x PUT)",
        apply1 / put_deploy
    );
    println!(
        "deployment apply, 3 managers (one container each): {apply3:>8.0}/s  ({:.2}x PUT)",
        apply3 / put_deploy
    );
    println!("configmap (200 entries) PUT update:           {put_cm:>8.0}/s");
    println!(
        "configmap apply:                              {apply_cm:>8.0}/s  ({:.2}x PUT)",
        apply_cm / put_cm
    );
    server.shutdown().await;
}
