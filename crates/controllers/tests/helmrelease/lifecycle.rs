//! Install, upgrade, test, remediation, values, post-renderers and requests.

use serde_json::Value;

use crate::chart_support::*;
use crate::source_support::*;
use crate::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_upgrade_test_and_uninstall_as_helm_records_them() {
    let (env, server, _dir) = start_with_repo(&["1.0.0"]).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "web",
            "  values:\n    message: first\n  test:\n    enable: true\n",
        ),
    );
    let hr = wait_for(&env, "helmrelease/web", "installed", |o| {
        released("InstallSucceeded")(o)
            && condition(o, "TestSuccess").is_some_and(|c| c["status"] == "True")
    })
    .await;
    assert_eq!(
        condition(&hr, "Released").unwrap()["message"],
        "Helm install succeeded for release default/web.v1 with chart webapp@1.0.0"
    );
    assert_eq!(
        condition(&hr, "TestSuccess").unwrap()["message"],
        "Helm test succeeded for release default/web.v1 with chart webapp@1.0.0: 1 test hooks completed successfully"
    );
    assert_eq!(hr["status"]["helmChart"], "default/default-web");
    let snap = &hr["status"]["history"][0];
    assert_eq!(snap["version"], 1);
    assert_eq!(snap["status"], "deployed");
    assert_eq!(snap["chartVersion"], "1.0.0");
    assert_eq!(snap["testHooks"]["web-test"]["phase"], "Succeeded");
    // The chart template made a HelmChart owned by the release.
    let chart = get(&env, "helmchart/default-web");
    assert_eq!(
        chart["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"],
        "web"
    );

    // What the release applied, with Helm's and Flux's metadata.
    let cm = get(&env, "configmap/web-config");
    assert_eq!(cm["data"]["message"], "first");
    assert_eq!(cm["data"]["revision"], "1");
    assert_eq!(
        cm["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "Helm"
    );
    assert_eq!(
        cm["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"],
        "web"
    );
    assert_eq!(
        cm["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "web"
    );
    let full: Value = serde_json::from_str(&env.server.ok(&[
        "get",
        "configmap/web-config",
        "-o",
        "json",
        "--show-managed-fields",
    ]))
    .unwrap();
    let managers: Vec<String> = full["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["manager"].as_str().unwrap().to_string())
        .collect();
    assert!(
        managers.contains(&"helm-controller".to_string()),
        "{managers:?}"
    );
    // The hook Job ran and was deleted (hook-succeeded).
    env.server.fails(&["get", "job/web-migrate"]);

    // The real helm reads the release.
    let list = helm_json(&env, &["list", "-n", "default"]);
    assert_eq!(list[0]["name"], "web");
    assert_eq!(list[0]["revision"], "1");
    assert_eq!(list[0]["status"], "deployed");
    assert_eq!(list[0]["chart"], "webapp-1.0.0");
    let manifest = helm_cli(&env, &["get", "manifest", "web", "-n", "default"]);
    assert!(
        manifest.contains("# Source: webapp/templates/configmap.yaml"),
        "{manifest}"
    );
    assert!(
        manifest.contains("helm.toolkit.fluxcd.io/name: web"),
        "{manifest}"
    );
    let values = helm_json(&env, &["get", "values", "web", "-n", "default"]);
    assert_eq!(values, serde_json::json!({"message": "first"}));
    let cm_uid = cm["metadata"]["uid"].clone();

    // A values change upgrades; an extra object appears.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "web",
            "  values:\n    message: second\n    extra: true\n  test:\n    enable: true\n",
        ),
    );
    let hr = wait_for(
        &env,
        "helmrelease/web",
        "upgraded",
        released("UpgradeSucceeded"),
    )
    .await;
    assert_eq!(
        condition(&hr, "Released").unwrap()["message"],
        "Helm upgrade succeeded for release default/web.v2 with chart webapp@1.0.0"
    );
    let cm = get(&env, "configmap/web-config");
    assert_eq!(cm["data"]["message"], "second");
    assert_eq!(cm["data"]["revision"], "2");
    assert_eq!(
        cm["metadata"]["uid"], cm_uid,
        "updated in place, not recreated"
    );
    get(&env, "configmap/web-extra");

    // A new chart version upgrades; the extra object leaves with the values that made it.
    publish(&server, "1.1.0");
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "helmrepository/charts",
        "reconcile.fluxcd.io/requestedAt=one",
    ]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "web",
            "  values:\n    message: third\n  test:\n    enable: true\n",
        ),
    );
    let hr = wait_for(&env, "helmrelease/web", "upgraded to 1.1.0", |o| {
        released("UpgradeSucceeded")(o) && o["status"]["history"][0]["chartVersion"] == "1.1.0"
    })
    .await;
    // The values change and the new chart may land as one upgrade or as two.
    let version = hr["status"]["history"][0]["version"].as_i64().unwrap();
    assert!(version == 3 || version == 4, "{version}");
    env.server.fails(&["get", "configmap/web-extra"]);
    let history = helm_json(&env, &["history", "web", "-n", "default"]);
    let statuses: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.len() as i64, version);
    assert_eq!(statuses.last(), Some(&"deployed"));
    assert!(
        statuses[..statuses.len() - 1]
            .iter()
            .all(|s| *s == "superseded"),
        "{statuses:?}"
    );
    let deploy = get(&env, "deployment/web");
    assert_eq!(
        deploy["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.1.0"
    );

    // Deleting the HelmRelease uninstalls: objects and records go, and the HelmChart.
    env.server
        .ok(&["delete", "helmrelease/web", "--wait=true", "--timeout=60s"]);
    env.server.fails(&["get", "configmap/web-config"]);
    env.server.fails(&["get", "deployment/web"]);
    env.server.fails(&["get", "helmchart/default-web"]);
    let secrets = env
        .server
        .ok(&["get", "secrets", "-l", "owner=helm,name=web", "-o", "name"]);
    assert_eq!(secrets.trim(), "", "release records deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_installs_are_remediated_then_stall_when_retries_run_out() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "broken",
            "  timeout: 20s\n  install:\n    remediation:\n      retries: 1\n  values:\n    simulate: fail\n",
        ),
    );
    let hr = wait_for(&env, "helmrelease/broken", "stalled", |o| {
        condition(o, "Stalled").is_some_and(|c| c["status"] == "True")
    })
    .await;
    let stalled = condition(&hr, "Stalled").unwrap();
    assert_eq!(stalled["reason"], "RetriesExceeded");
    assert_eq!(stalled["message"], "Failed to install after 2 attempt(s)");
    assert_eq!(condition(&hr, "Ready").unwrap()["status"], "False");
    let released = condition(&hr, "Released").unwrap();
    assert_eq!(released["reason"], "InstallFailed");
    assert!(
        released["message"].as_str().unwrap().starts_with(
            "Helm install failed for release default/broken with chart webapp@1.0.0: "
        ),
        "{released}"
    );
    assert_eq!(hr["status"]["installFailures"], 2);
    // The first failure was remediated by uninstalling: its objects went with it.
    let events = env.server.ok(&[
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=broken",
        "-o",
        "json",
    ]);
    assert!(events.contains("UninstallSucceeded"), "{events}");
    assert!(events.contains("InstallFailed"), "{events}");
    // The real helm sees the last failed attempt.
    let list = helm_json(&env, &["list", "-n", "default", "--failed"]);
    assert_eq!(list[0]["status"], "failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_helm_installed_is_taken_over_without_recreating_its_objects() {
    let (env, server, _dir) = start_with_repo(&["1.0.0"]).await;
    let tgz = server.dir.join("webapp-1.0.0.tgz");
    helm_cli(
        &env,
        &[
            "install",
            "adopted",
            tgz.to_str().unwrap(),
            "-n",
            "default",
            "--set",
            "message=by-helm",
        ],
    );
    let before = get(&env, "configmap/adopted-config");
    assert_eq!(before["data"]["message"], "by-helm");
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release("adopted", "  values:\n    message: by-tidegate\n"),
    );
    let hr = wait_for(
        &env,
        "helmrelease/adopted",
        "upgraded",
        released("UpgradeSucceeded"),
    )
    .await;
    assert_eq!(hr["status"]["history"][0]["version"], 2);
    let after = get(&env, "configmap/adopted-config");
    assert_eq!(after["data"]["message"], "by-tidegate");
    assert_eq!(after["metadata"]["uid"], before["metadata"]["uid"]);
    let history = helm_json(&env, &["history", "adopted", "-n", "default"]);
    assert_eq!(history.as_array().unwrap().len(), 2);
    assert_eq!(history[1]["status"], "deployed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_from_config_maps_and_secrets() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "vals",
            "  valuesFrom:\n  - kind: ConfigMap\n    name: base\n  - kind: Secret\n    name: msg\n    valuesKey: text\n    targetPath: message\n  - kind: ConfigMap\n    name: absent\n    optional: true\n  values:\n    replicas: 2\n",
        ),
    );
    let hr = wait_for(&env, "helmrelease/vals", "a values error", |o| {
        condition(o, "Ready").is_some_and(|c| c["reason"] == "ValuesError")
    })
    .await;
    assert_eq!(
        condition(&hr, "Ready").unwrap()["message"],
        "could not resolve ConfigMap chart values reference 'default/base' with key 'values.yaml': resource not found"
    );
    env.server.fails(&["get", "configmap/vals-config"]);
    env.server.ok(&[
        "create",
        "configmap",
        "base",
        "--from-literal=values.yaml=message: from-configmap\nreplicas: 3\n",
    ]);
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "msg",
        "--from-literal=text=from-secret",
    ]);
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "helmrelease/vals",
        "reconcile.fluxcd.io/requestedAt=now",
    ]);
    wait_for(
        &env,
        "helmrelease/vals",
        "installed",
        released("InstallSucceeded"),
    )
    .await;
    let cm = get(&env, "configmap/vals-config");
    assert_eq!(cm["data"]["message"], "from-secret");
    let deploy = get(&env, "deployment/vals");
    assert_eq!(
        deploy["spec"]["replicas"], 2,
        "inline values win over valuesFrom"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chart_that_fails_to_render_applies_nothing() {
    let (env, _server, _dir) = start_with_charts(|server| {
        let src = tempfile::tempdir().unwrap();
        let chart = write_chart(src.path(), "1.0.0");
        std::fs::write(
            chart.join("templates/broken.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata:\n  x: {{ .Values.nope.deeper }}\n",
        )
        .unwrap();
        run_helm(&["package", chart.to_str().unwrap(), "-d", server.dir.to_str().unwrap()]);
        run_helm(&["repo", "index", server.dir.to_str().unwrap(), "--url", &server.url]);
    })
    .await;
    env.server
        .ok_stdin(&["apply", "-f", "-"], &helm_release("bad", ""));
    let hr = wait_for(&env, "helmrelease/bad", "an install failure", |o| {
        condition(o, "Ready").is_some_and(|c| c["reason"] == "InstallFailed")
    })
    .await;
    let message = condition(&hr, "Ready").unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("Helm install failed for release default/bad with chart webapp@1.0.0: webapp/templates/broken.yaml:6:15\n  executing \"webapp/templates/broken.yaml\" at <.Values.nope.deeper>:"),
        "{message}"
    );
    assert!(
        message.contains("nil pointer evaluating interface {}.deeper"),
        "{message}"
    );
    env.server.fails(&["get", "configmap/bad-config"]);
    let secrets = env
        .server
        .ok(&["get", "secrets", "-l", "owner=helm", "-o", "name"]);
    assert_eq!(
        secrets.trim(),
        "",
        "no release record for a render that failed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_upgrades_are_rolled_back() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release("roll", "  timeout: 20s\n  values:\n    message: good\n"),
    );
    wait_for(
        &env,
        "helmrelease/roll",
        "installed",
        released("InstallSucceeded"),
    )
    .await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "roll",
            "  timeout: 20s\n  upgrade:\n    remediation:\n      retries: 1\n  values:\n    message: bad\n    simulate: fail\n",
        ),
    );
    let hr = wait_for(&env, "helmrelease/roll", "stalled", |o| {
        condition(o, "Stalled").is_some_and(|c| c["status"] == "True")
    })
    .await;
    assert_eq!(
        condition(&hr, "Stalled").unwrap()["message"],
        "Failed to upgrade after 2 attempt(s)"
    );
    let remediated = condition(&hr, "Remediated").unwrap();
    assert_eq!(remediated["reason"], "RollbackSucceeded");
    assert!(
        remediated["message"]
            .as_str()
            .unwrap()
            .starts_with("Helm rollback to previous release default/roll.v"),
        "{remediated}"
    );
    assert_eq!(condition(&hr, "Ready").unwrap()["status"], "False");
    assert_eq!(
        condition(&hr, "Released").unwrap()["reason"],
        "UpgradeFailed"
    );
    // The cluster is back at the good values.
    assert_eq!(
        get(&env, "configmap/roll-config")["data"]["message"],
        "good"
    );
    let history = helm_json(&env, &["history", "roll", "-n", "default"]);
    let last = history.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["status"], "deployed");
    // v2 failed and rolled back to v1 as v3; v4 failed and rolled back to v3 as v5.
    assert_eq!(history.as_array().unwrap().len(), 5, "{history}");
    assert_eq!(last["description"], "Rollback to 3");
    // A rollback supersedes the failed release, as Helm's does.
    let failed = history
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| {
            h["status"] == "superseded"
                && h["description"]
                    .as_str()
                    .unwrap()
                    .starts_with("Upgrade \"roll\" failed: ")
        })
        .count();
    assert_eq!(failed, 2, "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kustomize_post_renderers_patch_the_release() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "post",
            "  commonMetadata:\n    labels:\n      team: web\n  postRenderers:\n  - kustomize:\n      patches:\n      - target:\n          kind: Deployment\n        patch: |\n          - op: replace\n            path: /spec/replicas\n            value: 3\n      - patch: |\n          apiVersion: apps/v1\n          kind: Deployment\n          metadata:\n            name: post\n            labels:\n              patched: \"yes\"\n      images:\n      - name: nginx\n        newName: registry.example/nginx\n        newTag: \"9.9\"\n",
        ),
    );
    wait_for(
        &env,
        "helmrelease/post",
        "installed",
        released("InstallSucceeded"),
    )
    .await;
    // Post-renderers are part of the release, not a reason to upgrade it again and again.
    let hr = reconcile_now(&env, "helmrelease/post", "again").await;
    assert_eq!(hr["status"]["lastReleaseRevision"], 1, "{}", hr["status"]);
    let deploy = get(&env, "deployment/post");
    assert_eq!(deploy["metadata"]["labels"]["patched"], "yes");
    assert_eq!(deploy["spec"]["replicas"], 3);
    assert_eq!(deploy["metadata"]["labels"]["team"], "web");
    assert_eq!(
        deploy["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"],
        "post"
    );
    assert_eq!(
        deploy["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.example/nginx:9.9"
    );
    assert!(
        deploy["metadata"]["annotations"]
            .get("postrenderer.helm.sh/postrender-filename")
            .is_none(),
        "{}",
        deploy["metadata"]
    );
    // The stored manifest is the post-rendered one, still under each template's name; hooks
    // went through the post-renderer too and stayed hooks.
    let manifest = helm_cli(&env, &["get", "manifest", "post", "-n", "default"]);
    assert!(
        manifest.contains("# Source: webapp/templates/deployment.yaml\n"),
        "{manifest}"
    );
    assert!(
        manifest.contains("image: registry.example/nginx:9.9"),
        "{manifest}"
    );
    assert!(!manifest.contains("postrender-filename"), "{manifest}");
    let hooks = helm_cli(&env, &["get", "hooks", "post", "-n", "default"]);
    assert!(hooks.contains("name: post-migrate"), "{hooks}");
    assert!(hooks.contains("team: web"), "{hooks}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_tests_force_and_reset_requests() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    // A test hook that fails, its failures ignored: Ready, TestSuccess=False.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "tested",
            "  test:\n    enable: true\n    ignoreFailures: true\n  values:\n    testSimulate: fail\n",
        ),
    );
    let hr = wait_for(&env, "helmrelease/tested", "tested", |o| {
        condition(o, "TestSuccess").is_some_and(|c| c["status"] == "False")
    })
    .await;
    let test = condition(&hr, "TestSuccess").unwrap();
    assert_eq!(test["reason"], "TestFailed", "{test}");
    assert!(
        test["message"].as_str().unwrap().starts_with(
            "Helm test failed for release default/tested.v1 with chart webapp@1.0.0: "
        ),
        "{test}"
    );
    assert_eq!(
        hr["status"]["history"][0]["testHooks"]["tested-test"]["phase"],
        "Failed"
    );
    let hr = wait_for(&env, "helmrelease/tested", "ready", ready).await;
    assert_eq!(hr["status"]["lastReleaseRevision"], 1);

    // forceAt (with requestedAt): an upgrade of a release in sync.
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "helmrelease/tested",
        "reconcile.fluxcd.io/requestedAt=f1",
        "reconcile.fluxcd.io/forceAt=f1",
    ]);
    let hr = wait_for(&env, "helmrelease/tested", "forced upgrade", |o| {
        o["status"]["lastHandledForceAt"] == "f1" && released("UpgradeSucceeded")(o)
    })
    .await;
    assert_eq!(hr["status"]["lastReleaseRevision"], 2, "{}", hr["status"]);

    // resetAt (with requestedAt): a release out of retries gets another attempt.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "broken",
            "  timeout: 4s\n  install:\n    remediation:\n      retries: 0\n  values:\n    simulate: fail\n",
        ),
    );
    let hr = wait_for(&env, "helmrelease/broken", "stalled", |o| {
        condition(o, "Stalled").is_some_and(|c| c["status"] == "True")
    })
    .await;
    assert_eq!(hr["status"]["installFailures"], 1, "{}", hr["status"]);
    let revisions = |env: &Env| {
        helm_json(env, &["history", "broken", "-n", "default"])
            .as_array()
            .map(Vec::len)
            .unwrap_or(0)
    };
    assert_eq!(revisions(&env), 1);
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "helmrelease/broken",
        "reconcile.fluxcd.io/requestedAt=r1",
        "reconcile.fluxcd.io/resetAt=r1",
    ]);
    wait_for(&env, "helmrelease/broken", "reset handled", |o| {
        o["status"]["lastHandledResetAt"] == "r1"
    })
    .await;
    // Its counters reset, the failed release is tried again (an upgrade, as Flux does for a
    // release in the failed state): a second revision.
    for _ in 0..300 {
        if revisions(&env) >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(revisions(&env), 2, "another attempt after the reset");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deprecated_chart_is_released_with_a_warning_event() {
    let (env, server, _dir) = start_with_repo(&["1.0.0"]).await;
    env.server
        .ok_stdin(&["apply", "-f", "-"], &helm_release("plain", ""));
    wait_for(
        &env,
        "helmrelease/plain",
        "installed",
        released("InstallSucceeded"),
    )
    .await;
    assert!(
        !events_of(&env, "plain")
            .iter()
            .any(|(reason, _)| reason == "ChartDeprecated"),
        "a chart that is not deprecated says nothing"
    );
    publish_deprecated(&server, "2.0.0");
    reconcile_now(&env, "helmrepository/charts", "deprecated").await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release("old", "").replace("version: \"*\"", "version: \"2.0.0\""),
    );
    wait_for(
        &env,
        "helmrelease/old",
        "installed",
        released("InstallSucceeded"),
    )
    .await;
    let events = events_of(&env, "old");
    assert!(
        events
            .iter()
            .any(|(reason, message)| reason == "ChartDeprecated"
                && message == "chart webapp@2.0.0: this chart is deprecated"),
        "{events:?}"
    );
}
