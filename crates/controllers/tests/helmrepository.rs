//! The HelmRepository and HelmChart controllers against the embedded API server and a static chart repository
//! on loopback whose `index.yaml` the real helm (v4.1.4) made with `helm package` and
//! `helm repo index`, with and without basic auth.

mod chart_support;
mod source_support;

use chart_support::*;
use source_support::*;

fn sha256_of(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{:x}", sha2::Sha256::digest(bytes))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_made_by_helm_are_stored_and_followed() {
    let env = start().await;
    let charts = tempfile::tempdir().unwrap();
    let server = serve(charts.path().to_path_buf(), None).await;
    package(&server.dir, "podinfo", "6.5.0");
    package(&server.dir, "podinfo", "6.5.1");
    package(&server.dir, "redis", "1.0.0");
    run_helm(&[
        "repo",
        "index",
        server.dir.to_str().unwrap(),
        "--url",
        &server.url,
    ]);
    let raw = std::fs::read(server.dir.join("index.yaml")).unwrap();
    let revision = sha256_of(&raw);

    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_repository("charts", &format!("{}/", server.url), ""),
    );
    let o = wait_for(&env, "helmrepository/charts", "Ready", ready).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(
        c["message"],
        format!("stored artifact: revision '{revision}'")
    );
    let a = &o["status"]["artifact"];
    assert_eq!(a["revision"], revision.as_str());
    let hex = revision.trim_start_matches("sha256:");
    assert!(
        a["path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("helmrepository/default/charts/index-{hex}.yaml")),
        "{a}"
    );
    assert!(
        o["status"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/helmrepository/default/charts/index.yaml")
    );
    // The stored index is JSON, newest version first, every chart there.
    let (code, body) = http_get(o["status"]["url"].as_str().unwrap()).await;
    assert_eq!(code, 200);
    assert_eq!(sha256_of(&body), a["digest"].as_str().unwrap());
    let index: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(index["apiVersion"], "v1");
    assert_eq!(index["entries"]["podinfo"][0]["version"], "6.5.1");
    assert_eq!(index["entries"]["podinfo"][1]["version"], "6.5.0");
    assert_eq!(
        index["entries"]["redis"][0]["urls"][0],
        format!("{}/redis-1.0.0.tgz", server.url)
    );
    let events = env.server.ok(&[
        "get",
        "events",
        "--field-selector",
        "reason=NewArtifact",
        "-o",
        "jsonpath={.items[*].message}",
    ]);
    assert!(
        events.contains("stored fetched index of size ")
            && events.contains(&format!("from '{}/'", server.url)),
        "{events}"
    );

    // A new chart version changes the index; a requested reconcile stores it.
    package(&server.dir, "podinfo", "6.6.0");
    run_helm(&[
        "repo",
        "index",
        server.dir.to_str().unwrap(),
        "--url",
        &server.url,
    ]);
    let revision2 = sha256_of(&std::fs::read(server.dir.join("index.yaml")).unwrap());
    assert_ne!(revision, revision2);
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "helmrepository",
        "charts",
        "reconcile.fluxcd.io/requestedAt=1",
    ]);
    let o = wait_for(&env, "helmrepository/charts", "the new index", |o| {
        ready(o) && o["status"]["artifact"]["revision"] == revision2.as_str()
    })
    .await;
    assert_eq!(o["status"]["lastHandledReconcileAt"], "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_auth_bad_indexes_and_oci_repositories() {
    let env = start().await;
    let charts = tempfile::tempdir().unwrap();
    let server = serve(charts.path().to_path_buf(), Some(("fleet", "pa55word"))).await;
    package(&server.dir, "podinfo", "6.5.0");
    run_helm(&[
        "repo",
        "index",
        server.dir.to_str().unwrap(),
        "--url",
        &server.url,
    ]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_repository("anonymous", &server.url, ""),
    );
    let o = wait_for(&env, "helmrepository/anonymous", "Ready=False", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(
        c["message"],
        format!(
            "failed to fetch Helm repository index: failed to cache index to temporary file: failed to fetch {}/index.yaml : 401 Unauthorized",
            server.url
        )
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: default\nstringData:\n  username: fleet\n  password: pa55word\n",
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_repository("private", &server.url, "  secretRef:\n    name: creds\n"),
    );
    wait_for(&env, "helmrepository/private", "Ready", ready).await;
    // An index helm could not load.
    let bad = tempfile::tempdir().unwrap();
    std::fs::write(bad.path().join("index.yaml"), "entries:\n  podinfo: []\n").unwrap();
    let bad_server = serve(bad.path().to_path_buf(), None).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_repository("bad", &bad_server.url, ""),
    );
    let o = wait_for(&env, "helmrepository/bad", "Ready=False", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "IndexationFailed", "{c}");
    assert_eq!(
        c["message"],
        "failed to load Helm repository from index YAML: no API version specified"
    );
    assert!(o["status"]["artifact"].is_null());
    // An index over Helm's 50 MiB limit is refused before it is all read.
    let huge = tempfile::tempdir().unwrap();
    let mut text = String::from("apiVersion: v1\nentries:\n  big:\n");
    let entry = format!(
        "  - name: big\n    version: 1.0.0\n    description: {}\n",
        "x".repeat(1000)
    );
    while text.len() <= 50 << 20 {
        text.push_str(&entry);
    }
    std::fs::write(huge.path().join("index.yaml"), text).unwrap();
    let huge_server = serve(huge.path().to_path_buf(), None).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_repository("huge", &huge_server.url, ""),
    );
    let o = wait_for(&env, "helmrepository/huge", "Ready=False", ready_false).await;
    assert_eq!(
        condition(&o, "Ready").unwrap()["message"],
        "failed to fetch Helm repository index: failed to cache index to temporary file: index exceeds the maximum index file size of 52428800 bytes"
    );
    assert!(o["status"]["artifact"].is_null(), "nothing stored: {o}");
    // type: oci is static: no finalizer, no artifact, no conditions.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_repository("oci", "oci://ghcr.io/stefanprodan/charts", "  type: oci\n"),
    );
    let o = wait_for(&env, "helmrepository/oci", "observed", |o| {
        o["status"]["observedGeneration"] == 1
    })
    .await;
    assert!(o["metadata"]["finalizers"].is_null(), "{o}");
    assert!(
        o["status"]["conditions"].is_null() && o["status"]["artifact"].is_null(),
        "{o}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charts_are_pulled_from_the_stored_index() {
    let env = start().await;
    let charts = tempfile::tempdir().unwrap();
    let server = serve(charts.path().to_path_buf(), Some(("fleet", "pa55word"))).await;
    package(&server.dir, "podinfo", "6.5.0");
    package(&server.dir, "podinfo", "6.5.1");
    package(&server.dir, "podinfo", "7.0.0-rc.1");
    // Relative URLs in the index, as `helm repo index` writes without --url.
    run_helm(&["repo", "index", server.dir.to_str().unwrap()]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: default\nstringData:\n  username: fleet\n  password: pa55word\n",
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_repository("charts", &server.url, "  secretRef:\n    name: creds\n"),
    );
    for (name, version, want) in [
        ("latest", "*", "6.5.1"),
        ("exact", "6.5.0", "6.5.0"),
        ("range", ">=6.0.0-0", "7.0.0-rc.1"),
    ] {
        env.server.ok_stdin(
            &["apply", "-f", "-"],
            &helm_chart(name, "podinfo", "charts", version),
        );
        let o = wait_for(&env, &format!("helmchart/{name}"), "Ready", ready).await;
        let c = condition(&o, "Ready").unwrap();
        assert_eq!(c["reason"], "ChartPullSucceeded", "{name}: {c}");
        assert_eq!(
            c["message"],
            format!("pulled 'podinfo' chart with version '{want}'")
        );
        let a = &o["status"]["artifact"];
        assert_eq!(a["revision"], want);
        assert!(
            a["path"]
                .as_str()
                .unwrap()
                .ends_with(&format!("helmchart/default/{name}/podinfo-{want}.tgz")),
            "{a}"
        );
        let (code, body) = http_get(a["url"].as_str().unwrap()).await;
        assert_eq!(code, 200);
        assert_eq!(
            body,
            std::fs::read(server.dir.join(format!("podinfo-{want}.tgz"))).unwrap(),
            "{name}: the package as published"
        );
        assert_eq!(o["status"]["observedChartName"], "podinfo");
        assert!(
            o["status"]["url"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/helmchart/default/{name}/latest.tar.gz"))
        );
    }
    // The stored index was read once and then served from the index cache.
    let metrics = env.metrics.encode();
    let hits = metrics
        .lines()
        .find(|l| {
            l.starts_with("gotk_cache_events_total{")
                && l.contains("event_type=\"cache_hit\"")
                && l.contains("name=\"charts\"")
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(hits >= 2, "{metrics}");
    // Bad references.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_chart("missing", "nginx", "charts", "*"),
    );
    let o = wait_for(&env, "helmchart/missing", "Ready=False", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "InvalidChartReference", "{c}");
    assert_eq!(
        c["message"],
        "invalid chart reference: failed to get chart version for remote reference: no chart name found"
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_chart("too-new", "podinfo", "charts", ">=8.0.0"),
    );
    let o = wait_for(&env, "helmchart/too-new", "Ready=False", ready_false).await;
    assert_eq!(
        condition(&o, "Ready").unwrap()["message"],
        "invalid chart reference: failed to get chart version for remote reference: no 'podinfo' chart with version matching '>=8.0.0' found"
    );
}
