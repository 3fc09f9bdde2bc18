//! Many Kustomizations waiting for health in one namespace (the shape of issue 54's lost
//! health event: `targetNamespace` shared, `namePrefix` per Kustomization, every Service
//! selecting every Pod), with objects that became ready before the wait, that become ready
//! during it and that become ready only after it is registered, while another resource of the
//! namespace is rewritten in a flood much larger than the API server's watch history.

mod support;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use serde_json::json;
use support::*;

const GROUP: usize = 8;

fn app(hang: bool) -> [(String, String); 4] {
    let annotations = if hang {
        "      annotations: {tidegate.dev/simulate: hang}\n"
    } else {
        ""
    };
    [
        (
            "kustomization.yaml".into(),
            "resources: [configmap.yaml, service.yaml, deployment.yaml]\n".into(),
        ),
        (
            "configmap.yaml".into(),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  message: hello\n"
                .into(),
        ),
        (
            "service.yaml".into(),
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: shared}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n".into(),
        ),
        (
            "deployment.yaml".into(),
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: shared}}}}\n  template:\n    metadata:\n      labels: {{app: shared}}\n{annotations}    spec:\n      containers: [{{name: web, image: nginx, ports: [{{containerPort: 8080}}]}}]\n"
            ),
        ),
    ]
}

fn shared_kustomization(name: &str, path: &str) -> String {
    kustomization(
        name,
        path,
        &format!("  wait: true\n  timeout: 2m\n  targetNamespace: shared\n  namePrefix: {name}-\n"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_waits_sharing_a_namespace_see_every_change_through_a_flood() {
    // 256 KiB of history in all: each rewrite of the flooded ConfigMap below counts 48 KiB.
    let env = start_with_watch_history(tidegate_apiserver::store::LogLimits {
        events: 100_000,
        bytes: 256 << 10,
    })
    .await;
    let client = env.server.client().await;
    env.server.ok(&["create", "namespace", "shared"]);
    let repo = Repo::new();
    for (dir, hang) in [("app", false), ("hang", true)] {
        for (file, text) in app(hang) {
            repo.write(&format!("{dir}/{file}"), &text);
        }
    }
    let revision = push(&env, &repo, "apps");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));

    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "shared");

    // Ready before their Kustomization exists: the same objects, applied directly.
    for i in 0..GROUP {
        let name = format!("before{i}");
        let objects: String = app(false)[1..]
            .iter()
            .map(|(_, text)| {
                text.replacen("  name: web", &format!("  name: {name}-web"), 1)
                    .replacen("metadata:\n", "metadata:\n  namespace: shared\n", 1)
            })
            .collect::<Vec<_>>()
            .join("---\n");
        env.server.ok_stdin(&["apply", "-f", "-"], &objects);
    }
    for i in 0..GROUP {
        env.server.ok(&[
            "wait",
            "-n",
            "shared",
            "--for=condition=Available",
            "--timeout=60s",
            &format!("deployment/before{i}-web"),
        ]);
    }

    // The flood: a ConfigMap of the same namespace rewritten with 24 KiB, over and over.
    let flooding = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flood = {
        let flooding = flooding.clone();
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "shared");
        tokio::spawn(async move {
            let mut writes = 0u64;
            while flooding.load(std::sync::atomic::Ordering::Relaxed) {
                let data = format!("{writes:08}").repeat(3 << 10);
                let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "flood", "namespace": "shared"},
                    "data": {"blob": data}});
                cms.patch(
                    "flood",
                    &PatchParams::apply("flood").force(),
                    &Patch::Apply(&cm),
                )
                .await
                .expect("flood write");
                writes += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            writes
        })
    };

    let mut all = String::new();
    for i in 0..GROUP {
        all.push_str(&shared_kustomization(&format!("before{i}"), "./app"));
        all.push_str("---\n");
        all.push_str(&shared_kustomization(&format!("during{i}"), "./app"));
        all.push_str("---\n");
        all.push_str(&shared_kustomization(&format!("after{i}"), "./hang"));
        all.push_str("---\n");
    }
    env.server.ok_stdin(&["apply", "-f", "-"], &all);

    // Ready only once their waits are registered: the rollouts hang until released.
    for i in 0..GROUP {
        ks_until(
            &env,
            &format!("after{i}"),
            "the health check to start",
            |k| is(k, "Healthy", "Unknown"),
        )
        .await;
    }
    for i in 0..GROUP {
        env.server.ok(&[
            "patch",
            "-n",
            "shared",
            &format!("deployment/after{i}-web"),
            "--type=json",
            "-p",
            r#"[{"op": "remove", "path": "/spec/template/metadata/annotations/tidegate.dev~1simulate"}]"#,
        ]);
    }

    for group in ["before", "during", "after"] {
        for i in 0..GROUP {
            let k = ks_until(
                &env,
                &format!("{group}{i}"),
                "every Kustomization to pass its health checks",
                applied(&revision),
            )
            .await;
            assert!(is(&k, "Healthy", "True"), "{k:#}");
        }
    }
    // Every Deployment is settled: a watch resumed from now on, after more of the flood, goes
    // on where it left off (kube-apiserver keeps a watch cache per resource; a flood of one
    // resource does not expire the revisions of another).
    let quiet = deployments
        .list(&ListParams::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("a list revision");
    let flooded_from: u64 = quiet.parse().expect("a numeric revision");
    loop {
        let now: u64 = deployments
            .list(&ListParams::default().limit(1))
            .await
            .expect("list")
            .metadata
            .resource_version
            .and_then(|v| v.parse().ok())
            .expect("a numeric revision");
        // Each flood write is most of the history's budget: forty of them leave nothing of
        // the revisions before them in a history shared by all resources.
        if now > flooded_from + 40 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut resumed = deployments
        .watch(&WatchParams::default().timeout(60), &quiet)
        .await
        .expect("watch")
        .boxed();
    env.server.ok(&[
        "annotate",
        "-n",
        "shared",
        "deployment/during0-web",
        "touched=yes",
    ]);
    let touched = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(event) = resumed.next().await {
            match event.expect("a watch event") {
                WatchEvent::Modified(d) | WatchEvent::Added(d)
                    if d.metadata.name.as_deref() == Some("during0-web") =>
                {
                    let annotations = d.metadata.annotations.unwrap_or_default();
                    if annotations.get("touched").map(String::as_str) == Some("yes") {
                        return Ok(());
                    }
                }
                WatchEvent::Error(e) => return Err(format!("the resumed watch failed: {e:?}")),
                _ => {}
            }
        }
        Err("the resumed watch ended".to_string())
    })
    .await
    .expect("the resumed watch delivered the change");
    assert_eq!(touched, Ok(()));
    flooding.store(false, std::sync::atomic::Ordering::Relaxed);
    let writes = flood.await.expect("flood task");
    assert!(writes >= 20, "the flood wrote only {writes} times");
}
