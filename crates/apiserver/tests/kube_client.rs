//! kube-rs against the embedded server: CRUD, paging, watch and reflector ordering, conflicts
//! and expired watches.

mod common;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{
    Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use std::collections::BTreeMap;

fn cm(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([("app".to_string(), "demo".to_string())])),
            ..Default::default()
        },
        data: Some(BTreeMap::from([("k".to_string(), value.to_string())])),
        ..Default::default()
    }
}

#[tokio::test]
async fn crud_round_trip() {
    let t = common::start().await;
    let client = t.client().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let created = api
        .create(&PostParams::default(), &cm("one", "1"))
        .await
        .expect("create");
    let rv1: u64 = created
        .metadata
        .resource_version
        .clone()
        .expect("rv")
        .parse()
        .expect("numeric rv");
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.creation_timestamp.is_some());
    let got = api.get("one").await.expect("get");
    assert_eq!(
        got.data
            .as_ref()
            .and_then(|d| d.get("k"))
            .map(String::as_str),
        Some("1")
    );

    let mut changed = got.clone();
    changed.data = Some(BTreeMap::from([("k".to_string(), "2".to_string())]));
    let updated = api
        .replace("one", &PostParams::default(), &changed)
        .await
        .expect("replace");
    let rv2: u64 = updated
        .metadata
        .resource_version
        .clone()
        .expect("rv")
        .parse()
        .expect("rv");
    assert!(rv2 > rv1, "resourceVersion grows: {rv1} -> {rv2}");

    let patched = api
        .patch(
            "one",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"data": {"extra": "x"}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(patched.data.as_ref().map(|d| d.len()), Some(2));

    // A write with a stale resourceVersion is a 409 Conflict.
    let err = api
        .replace("one", &PostParams::default(), &changed)
        .await
        .expect_err("stale");
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 409);
            assert_eq!(s.reason, "Conflict");
            assert!(
                s.message.contains("the object has been modified"),
                "{}",
                s.message
            );
        }
        other => panic!("unexpected error {other:?}"),
    }
    // Creating it again is AlreadyExists.
    match api.create(&PostParams::default(), &cm("one", "1")).await {
        Err(kube::Error::Api(s)) => assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists")),
        other => panic!("expected AlreadyExists, got {other:?}"),
    }
    api.delete("one", &DeleteParams::default())
        .await
        .expect("delete");
    match api.get("one").await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 404);
            assert_eq!(s.message, "configmaps \"one\" not found");
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[tokio::test]
async fn paging_and_selectors() {
    let t = common::start().await;
    let client = t.client().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for i in 0..7 {
        let mut c = cm(&format!("cm-{i}"), "v");
        if i % 2 == 0 {
            c.metadata.labels = Some(BTreeMap::from([("parity".to_string(), "even".to_string())]));
        }
        api.create(&PostParams::default(), &c)
            .await
            .expect("create");
    }
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut lp = ListParams::default().limit(3);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = api.list(&lp).await.expect("page");
        pages += 1;
        names.extend(
            page.items
                .iter()
                .filter_map(|c| c.metadata.name.clone())
                .filter(|n| n != common::ROOT_CA),
        );
        match page.metadata.continue_ {
            Some(t) if !t.is_empty() => token = Some(t),
            _ => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, (0..7).map(|i| format!("cm-{i}")).collect::<Vec<_>>());
    let even = api
        .list(&ListParams::default().labels("parity=even"))
        .await
        .expect("labels");
    assert_eq!(even.items.len(), 4);
    let set = api
        .list(&ListParams::default().labels("parity notin (even),app=demo"))
        .await
        .expect("set");
    assert_eq!(set.items.len(), 3);
    let by_name = api
        .list(&ListParams::default().fields("metadata.name=cm-3"))
        .await
        .expect("fields");
    assert_eq!(by_name.items.len(), 1);
    // Across namespaces: the 7, and each namespace's kube-root-ca.crt.
    let all: Api<ConfigMap> = Api::all(client);
    let everything = all.list(&ListParams::default()).await.expect("all").items;
    let ours = everything
        .iter()
        .filter(|c| c.metadata.name.as_deref() != Some(common::ROOT_CA))
        .count();
    assert_eq!(ours, 7);
    assert_eq!(everything.len() - ours, 4, "one per namespace");
}

#[tokio::test]
async fn watch_sees_every_change_in_order() {
    let t = common::start().await;
    let client = t.client().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let list = api.list(&ListParams::default()).await.expect("list");
    let rv = list.metadata.resource_version.expect("list rv");
    let mut stream = api
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    api.create(&PostParams::default(), &cm("w", "1"))
        .await
        .expect("create");
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"data": {"k": "2"}})),
    )
    .await
    .expect("patch");
    api.delete("w", &DeleteParams::default())
        .await
        .expect("delete");
    let mut seen = Vec::new();
    let mut last_rv = 0u64;
    while seen.len() < 3 {
        let ev = tokio::time::timeout(std::time::Duration::from_secs(5), stream.try_next())
            .await
            .expect("event in time")
            .expect("stream ok")
            .expect("stream open");
        let (kind, obj) = match ev {
            WatchEvent::Added(o) => ("ADDED", o),
            WatchEvent::Modified(o) => ("MODIFIED", o),
            WatchEvent::Deleted(o) => ("DELETED", o),
            WatchEvent::Bookmark(_) => continue,
            WatchEvent::Error(e) => panic!("watch error {e:?}"),
        };
        let rv: u64 = obj
            .metadata
            .resource_version
            .expect("rv")
            .parse()
            .expect("rv");
        assert!(rv > last_rv, "resourceVersions increase");
        last_rv = rv;
        seen.push(kind);
    }
    assert_eq!(seen, vec!["ADDED", "MODIFIED", "DELETED"]);
}

#[tokio::test]
async fn reflector_tracks_the_collection() {
    let t = common::start().await;
    let client = t.client().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    api.create(&PostParams::default(), &cm("before", "1"))
        .await
        .expect("create");
    let (reader, writer) = reflector::store::<ConfigMap>();
    let stream = reflector(writer, watcher(api.clone(), watcher::Config::default()))
        .applied_objects()
        .boxed();
    let handle = tokio::spawn(async move {
        let mut s = stream;
        while s.next().await.is_some() {}
    });
    reader.wait_until_ready().await.expect("ready");
    for i in 0..20 {
        api.create(&PostParams::default(), &cm(&format!("r{i}"), "x"))
            .await
            .expect("create");
    }
    api.delete("before", &DeleteParams::default())
        .await
        .expect("delete");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let mut names: Vec<String> = reader
            .state()
            .iter()
            .filter_map(|c| c.metadata.name.clone())
            .filter(|n| n != common::ROOT_CA)
            .collect();
        names.sort();
        if names.len() == 20 && !names.contains(&"before".to_string()) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "reflector did not converge: {names:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    handle.abort();
}

#[tokio::test]
async fn expired_watch_is_410_gone() {
    let t = common::start_with(tidegate_apiserver::Config {
        watch_history: tidegate_apiserver::store::LogLimits {
            events: 5,
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let client = t.client().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let first = api
        .create(&PostParams::default(), &cm("g0", "1"))
        .await
        .expect("create");
    let old_rv = first.metadata.resource_version.expect("rv");
    for i in 1..20 {
        api.create(&PostParams::default(), &cm(&format!("g{i}"), "1"))
            .await
            .expect("create");
    }
    let result = api.watch(&WatchParams::default(), &old_rv).await;
    match result {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 410);
            assert!(
                s.message.starts_with("too old resource version"),
                "{}",
                s.message
            );
        }
        Ok(s) => match s.boxed().try_next().await {
            Ok(Some(WatchEvent::Error(e))) => assert_eq!(e.code, 410),
            other => panic!("expected 410, got {other:?}"),
        },
        Err(other) => panic!("expected 410, got {other:?}"),
    }
}

#[tokio::test]
async fn namespaces_gate_and_cascade() {
    let t = common::start().await;
    let client = t.client().await;
    let missing: Api<ConfigMap> = Api::namespaced(client.clone(), "nope");
    match missing.create(&PostParams::default(), &cm("x", "1")).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 404);
            assert_eq!(s.message, "namespaces \"nope\" not found");
        }
        other => panic!("expected 404, got {other:?}"),
    }
    let nss: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("team".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    nss.create(&PostParams::default(), &ns)
        .await
        .expect("create ns");
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "team");
    for i in 0..3 {
        api.create(&PostParams::default(), &cm(&format!("c{i}"), "1"))
            .await
            .expect("create");
    }
    nss.delete("team", &DeleteParams::default())
        .await
        .expect("delete ns");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match nss.get_opt("team").await.expect("get") {
            None => break,
            Some(n) => {
                assert_eq!(
                    n.status.and_then(|s| s.phase).as_deref(),
                    Some("Terminating")
                );
                // New content is refused while the namespace terminates.
                if let Err(kube::Error::Api(s)) =
                    api.create(&PostParams::default(), &cm("late", "1")).await
                {
                    assert!(s.code == 403 || s.code == 404, "{s:?}");
                }
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "namespace not removed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let left = Api::<ConfigMap>::all(client)
        .list(&ListParams::default())
        .await
        .expect("list");
    assert!(
        left.items
            .iter()
            .all(|c| c.metadata.namespace.as_deref() != Some("team"))
    );
}

#[tokio::test]
async fn owner_references_are_garbage_collected() {
    let t = common::start().await;
    let client = t.client().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = api
        .create(&PostParams::default(), &cm("owner", "1"))
        .await
        .expect("owner");
    let owner_ref = k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: "owner".into(),
        uid: owner.metadata.uid.clone().expect("uid"),
        ..Default::default()
    };
    for name in ["dep-a", "dep-b"] {
        let mut c = cm(name, "1");
        c.metadata.owner_references = Some(vec![owner_ref.clone()]);
        api.create(&PostParams::default(), &c)
            .await
            .expect("dependent");
    }
    // Foreground: the owner waits for its dependents.
    api.delete("owner", &DeleteParams::foreground())
        .await
        .expect("delete owner");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let left: Vec<String> = api
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .filter(|n| n != common::ROOT_CA)
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not collected: {left:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn bad_requests_get_kube_status_codes_and_store_nothing() {
    let t = common::start().await;
    let client = t.client().await;
    let before = t.server.state().store.revision();
    let post = |path: &str, body: Vec<u8>, ct: &str| {
        axum::http::Request::builder()
            .method("POST")
            .uri(path)
            .header("content-type", ct)
            .body(body)
            .expect("request")
    };
    let cases: Vec<(axum::http::Request<Vec<u8>>, u16, &str)> = vec![
        (
            post(
                "/api/v1/namespaces/default/configmaps",
                b"{\"metadata\": ".to_vec(),
                "application/json",
            ),
            400,
            "json parse error",
        ),
        (
            post(
                "/api/v1/namespaces/default/configmaps",
                b"metadata: [\n".to_vec(),
                "application/yaml",
            ),
            400,
            "error converting YAML to JSON",
        ),
        (
            post(
                "/api/v1/namespaces/default/configmaps",
                br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Not_Valid"}}"#
                    .to_vec(),
                "application/json",
            ),
            422,
            "ConfigMap \"Not_Valid\" is invalid: metadata.name",
        ),
        (
            post(
                "/api/v1/namespaces/nowhere/configmaps",
                br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok"}}"#.to_vec(),
                "application/json",
            ),
            404,
            "namespaces \"nowhere\" not found",
        ),
        (
            post(
                "/apis/example.com/v1/namespaces/default/gizmos",
                b"{}".to_vec(),
                "application/json",
            ),
            404,
            "the server could not find the requested resource",
        ),
        (
            post(
                "/api/v1/namespaces/default/configmaps",
                vec![b' '; 4 * 1024 * 1024],
                "application/json",
            ),
            413,
            "Request entity too large",
        ),
        (
            post(
                "/api/v1/namespaces/default/configmaps",
                br#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"ok"}}"#.to_vec(),
                "application/json",
            ),
            400,
            "does not match the expected kind",
        ),
    ];
    common::expect_statuses(&client, cases).await;
    assert_eq!(
        t.server.state().store.revision(),
        before,
        "nothing was stored"
    );
}
