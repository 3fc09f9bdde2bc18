//! The HelmRelease controller against the embedded API server, with charts the real helm
//! (v4.1.4) packaged and indexed on a loopback chart server. The releases Tidegate writes are
//! read back by the real helm (`list`, `history`, `get manifest`, `get values`).

mod chart_support;
mod source_support;

use std::path::Path;
use std::process::Command;

use chart_support::*;
use serde_json::Value;
use source_support::*;

/// A chart with a Deployment, a Service, a ConfigMap of `.Values.message`, a pre-install and
/// pre-upgrade Job hook and a test Pod.
fn write_chart(root: &Path, version: &str) -> std::path::PathBuf {
    let chart = root.join("webapp");
    std::fs::create_dir_all(chart.join("templates/tests")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: webapp\nversion: {version}\nappVersion: \"{version}\"\ndescription: test web app\n"),
    )
    .unwrap();
    std::fs::write(
        chart.join("values.yaml"),
        "message: hello\nreplicas: 1\nsimulate: \"\"\nextra: false\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/deployment.yaml"),
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  {{- with .Values.simulate }}
  annotations:
    tidegate.dev/simulate: {{ . }}
  {{- end }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      app: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}
      annotations:
        simulated: {{ .Values.simulate | quote }}
    spec:
      containers:
      - name: web
        image: "nginx:{{ .Chart.AppVersion }}"
"#,
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/service.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  selector:\n    app: {{ .Release.Name }}\n  ports:\n  - port: 80\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  message: {{ .Values.message | quote }}\n  revision: {{ .Release.Revision | quote }}\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/extra.yaml"),
        "{{- if .Values.extra }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\ndata:\n  a: b\n{{- end }}\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/hook.yaml"),
        r#"apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: busybox
"#,
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/tests/test.yaml"),
        r#"apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
    {{- with .Values.testSimulate }}
    tidegate.dev/simulate: {{ . }}
    {{- end }}
spec:
  restartPolicy: Never
  containers:
  - name: test
    image: busybox
"#,
    )
    .unwrap();
    chart
}

fn publish(server: &ChartServer, version: &str) {
    let src = tempfile::tempdir().unwrap();
    let chart = write_chart(src.path(), version);
    run_helm(&[
        "package",
        chart.to_str().unwrap(),
        "-d",
        server.dir.to_str().unwrap(),
    ]);
    run_helm(&[
        "repo",
        "index",
        server.dir.to_str().unwrap(),
        "--url",
        &server.url,
    ]);
}

fn helm_release(name: &str, extra: &str) -> String {
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: webapp\n      version: \"*\"\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n{extra}"
    )
}

/// The real helm against the embedded server.
fn helm_cli(env: &Env, args: &[&str]) -> String {
    let out = Command::new(helm())
        .args(args)
        .arg("--kubeconfig")
        .arg(&env.server.kubeconfig)
        .output()
        .expect("helm runs");
    assert!(
        out.status.success(),
        "helm {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn helm_json(env: &Env, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&helm_cli(env, &all)).unwrap()
}

fn released(reason: &'static str) -> impl Fn(&Value) -> bool {
    move |o: &Value| {
        ready(o)
            && condition(o, "Released").is_some_and(|c| c["reason"] == reason)
            && o["status"]["observedGeneration"] == o["metadata"]["generation"]
    }
}

async fn start_with_repo(versions: &[&str]) -> (Env, ChartServer, tempfile::TempDir) {
    start_with_charts(|server| {
        for v in versions {
            publish(server, v);
        }
    })
    .await
}

/// The controllers, a chart server `publish` fills, and a Ready HelmRepository `charts`.
async fn start_with_charts(
    publish: impl FnOnce(&ChartServer),
) -> (Env, ChartServer, tempfile::TempDir) {
    let env = start_simulated(200).await;
    let charts = tempfile::tempdir().unwrap();
    let server = serve(charts.path().to_path_buf(), None).await;
    publish(&server);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_repository("charts", &format!("{}/", server.url), ""),
    );
    wait_for(&env, "helmrepository/charts", "Ready", ready).await;
    (env, server, charts)
}

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

/// Asks for a reconcile (`reconcile.fluxcd.io/requestedAt`) and waits until it was handled.
async fn reconcile_now(env: &Env, what: &str, token: &str) -> Value {
    env.server.ok(&[
        "annotate",
        "--overwrite",
        what,
        &format!("reconcile.fluxcd.io/requestedAt={token}"),
    ]);
    wait_for(env, what, "the request handled", |o| {
        o["status"]["lastHandledReconcileAt"] == token
    })
    .await
}

fn events_of(env: &Env, name: &str) -> Vec<(String, String)> {
    let list: Value = serde_json::from_str(&env.server.ok(&[
        "get",
        "events",
        "-n",
        "default",
        "--field-selector",
        &format!("involvedObject.name={name},involvedObject.kind=HelmRelease"),
        "-o",
        "json",
    ]))
    .unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["reason"].as_str().unwrap_or("").to_string(),
                e["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_made_with_kubectl_is_corrected_or_reported() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "{}---\n{}",
            helm_release("fix", "  driftDetection:\n    mode: enabled\n"),
            helm_release(
                "watch",
                "  driftDetection:\n    mode: warn\n    ignore:\n    - paths: [\"/spec/replicas\"]\n      target:\n        kind: Deployment\n    - paths: [\"\"]\n      target:\n        kind: Service\n",
            )
        ),
    );
    for name in ["fix", "watch"] {
        let hr = wait_for(
            &env,
            &format!("helmrelease/{name}"),
            "installed and checked for drift",
            |o| {
                released("InstallSucceeded")(o)
                    && condition(o, "Drifted").is_some_and(|c| c["reason"] == "NoDriftDetected")
            },
        )
        .await;
        assert_eq!(
            condition(&hr, "Drifted").unwrap()["status"],
            "False",
            "{}",
            hr["status"]
        );
    }

    // Drift made by hand: `kubectl edit` (with a non-interactive editor), a patch and a delete.
    env.server.ok_env(
        &["edit", "deployment/fix"],
        &[("KUBE_EDITOR", "sed -i s/replicas:\\ 1$/replicas:\\ 5/")],
    );
    assert_eq!(get(&env, "deployment/fix")["spec"]["replicas"], 5);
    env.server.ok(&["delete", "configmap/fix-config"]);
    env.server.ok(&[
        "patch",
        "service/fix",
        "--type=merge",
        "-p",
        r#"{"spec":{"selector":{"app":"other"}}}"#,
    ]);
    let hr = reconcile_now(&env, "helmrelease/fix", "drift").await;
    assert!(ready(&hr), "{}", hr["status"]);
    assert_eq!(
        condition(&hr, "Drifted").unwrap()["reason"],
        "NoDriftDetected"
    );
    assert_eq!(hr["status"]["lastReleaseRevision"], 1, "no upgrade");
    assert_eq!(get(&env, "deployment/fix")["spec"]["replicas"], 1);
    assert_eq!(get(&env, "service/fix")["spec"]["selector"]["app"], "fix");
    let cm = get(&env, "configmap/fix-config");
    assert_eq!(cm["data"]["message"], "hello");
    assert_eq!(
        cm["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "Helm"
    );
    let events = events_of(&env, "fix");
    let detected = events
        .iter()
        .find(|(r, _)| r == "DriftDetected")
        .expect("a DriftDetected event");
    assert_eq!(
        detected.1,
        "Cluster state of release default/fix.v1 has drifted from the desired state:\n\
         ConfigMap/default/fix-config removed\n\
         Service/default/fix changed (0 additions, 1 changes, 0 removals)\n\
         Deployment/default/fix changed (0 additions, 1 changes, 0 removals)"
    );
    let corrected = events
        .iter()
        .find(|(r, _)| r == "DriftCorrected")
        .expect("a DriftCorrected event");
    assert_eq!(
        corrected.1,
        "Cluster state of release default/fix.v1 has been corrected:\n\
         ConfigMap/default/fix-config created\n\
         Service/default/fix configured\n\
         Deployment/default/fix configured"
    );
    // The real helm still sees one revision.
    let history = helm_json(&env, &["history", "fix", "-n", "default"]);
    assert_eq!(history.as_array().unwrap().len(), 1, "{history}");

    // Warn mode reports and leaves the cluster alone; ignored paths and objects are not drift.
    env.server
        .ok(&["scale", "deployment/watch", "--replicas=4"]);
    env.server.ok(&[
        "patch",
        "service/watch",
        "--type=merge",
        "-p",
        r#"{"spec":{"selector":{"app":"other"}}}"#,
    ]);
    let hr = reconcile_now(&env, "helmrelease/watch", "ignored").await;
    assert_eq!(
        condition(&hr, "Drifted").unwrap()["reason"],
        "NoDriftDetected",
        "{}",
        hr["status"]
    );
    env.server.ok(&[
        "patch",
        "configmap/watch-config",
        "--type=merge",
        "-p",
        r#"{"data":{"message":"edited"}}"#,
    ]);
    let hr = reconcile_now(&env, "helmrelease/watch", "warn").await;
    let drifted = condition(&hr, "Drifted").unwrap();
    assert_eq!(drifted["status"], "True", "{}", hr["status"]);
    assert_eq!(drifted["reason"], "DriftDetected");
    assert_eq!(
        drifted["message"],
        "Cluster state of release default/watch.v1 has drifted from the desired state:\n\
         ConfigMap/default/watch-config changed (0 additions, 1 changes, 0 removals)\n\
         Service/default/watch excluded"
    );
    assert!(ready(&hr), "warn mode stays Ready: {}", hr["status"]);
    assert_eq!(
        get(&env, "configmap/watch-config")["data"]["message"],
        "edited"
    );
    assert_eq!(get(&env, "deployment/watch")["spec"]["replicas"], 4);
    assert!(
        !events_of(&env, "watch")
            .iter()
            .any(|(r, _)| r == "DriftCorrected")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_check_exprs_decide_when_a_release_is_healthy() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    let exprs = |current: &str| {
        format!(
            "  install:\n    timeout: 4s\n  healthCheckExprs:\n  - apiVersion: apps/v1\n    kind: Deployment\n    current: \"{current}\"\n"
        )
    };
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "{}---\n{}---\n{}",
            helm_release("cel-bad", &exprs("status.(")),
            helm_release("cel-never", &exprs("status.readyReplicas > 5")),
            helm_release(
                "cel-ok",
                &exprs("status.readyReplicas == 1 && metadata.name == 'cel-ok'")
            ),
        ),
    );
    let bad = wait_for(&env, "helmrelease/cel-bad", "stalled", |o| {
        condition(o, "Stalled").is_some_and(|c| c["status"] == "True")
    })
    .await;
    let ready = condition(&bad, "Ready").unwrap();
    assert_eq!(ready["reason"], "InvalidCELExpression");
    assert!(
        ready["message"].as_str().unwrap().starts_with(
            "Reconciliation failed terminally due to configuration error: failed to create custom \
             status evaluator for healthchecks[0]: failed to parse the expression Current: "
        ),
        "{ready}"
    );
    let never = wait_for(&env, "helmrelease/cel-never", "install failed", |o| {
        condition(o, "Released").is_some_and(|c| c["reason"] == "InstallFailed")
    })
    .await;
    let failed = condition(&never, "Released").unwrap();
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("Deployment/default/cel-never status: 'InProgress'"),
        "{failed}"
    );
    wait_for(
        &env,
        "helmrelease/cel-ok",
        "installed",
        released("InstallSucceeded"),
    )
    .await;
    let releases = helm_json(&env, &["list", "-n", "default"]);
    let names: Vec<&str> = releases
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(!names.contains(&"cel-bad"), "nothing installed: {names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_helm_reads_rolls_back_and_uninstalls_what_tidegate_released() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release("app", "  values:\n    message: first\n"),
    );
    wait_for(
        &env,
        "helmrelease/app",
        "installed",
        released("InstallSucceeded"),
    )
    .await;
    env.server.ok(&[
        "patch",
        "helmrelease/app",
        "--type=merge",
        "-p",
        r#"{"spec":{"values":{"message":"second"}}}"#,
    ]);
    wait_for(
        &env,
        "helmrelease/app",
        "upgraded",
        released("UpgradeSucceeded"),
    )
    .await;
    assert_eq!(
        get(&env, "configmap/app-config")["data"]["message"],
        "second"
    );

    // Helm 3 users read the Helm 4 records too.
    let out = Command::new(helm3())
        .args([
            "history",
            "app",
            "-n",
            "default",
            "-o",
            "json",
            "--kubeconfig",
        ])
        .arg(&env.server.kubeconfig)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let history3: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(history3.as_array().unwrap().len(), 2, "{history3}");
    assert_eq!(history3[1]["status"], "deployed");
    assert_eq!(history3[1]["chart"], "webapp-1.0.0");
    assert_eq!(history3[0]["status"], "superseded");
    let out = Command::new(helm3())
        .args([
            "get",
            "values",
            "app",
            "-n",
            "default",
            "-o",
            "json",
            "--kubeconfig",
        ])
        .arg(&env.server.kubeconfig)
        .output()
        .unwrap();
    let values3: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(values3["message"], "second");

    // A rollback by hand, with the controller suspended: helm reads our records, re-applies
    // revision 1 and writes revision 3. The fields belong to `helm-controller`, so Helm 4's
    // server-side rollback needs `--force-conflicts`, as against Flux.
    env.server.ok(&[
        "patch",
        "helmrelease/app",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":true}}"#,
    ]);
    helm_cli(
        &env,
        &["rollback", "app", "1", "-n", "default", "--force-conflicts"],
    );
    assert_eq!(
        get(&env, "configmap/app-config")["data"]["message"],
        "first"
    );
    let history = helm_json(&env, &["history", "app", "-n", "default"]);
    let last = history.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["revision"], 3, "{history}");
    assert_eq!(last["status"], "deployed");
    assert_eq!(last["description"], "Rollback to 1");

    // Resumed, the controller sees a release changed outside it and upgrades to its spec.
    env.server.ok(&[
        "patch",
        "helmrelease/app",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":false}}"#,
    ]);
    let hr = wait_for(&env, "helmrelease/app", "taken back", |o| {
        released("UpgradeSucceeded")(o) && o["status"]["lastReleaseRevision"] == 4
    })
    .await;
    assert_eq!(hr["status"]["history"][0]["version"], 4);
    assert_eq!(
        get(&env, "configmap/app-config")["data"]["message"],
        "second"
    );

    // Uninstalled by hand: helm deletes the objects and the records.
    env.server.ok(&[
        "patch",
        "helmrelease/app",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":true}}"#,
    ]);
    helm_cli(&env, &["uninstall", "app", "-n", "default", "--wait"]);
    assert!(
        env.server
            .kubectl(&["get", "configmap/app-config", "-n", "default"])
            .status
            .code()
            != Some(0)
    );
    let records = env.server.ok(&[
        "get",
        "secrets",
        "-n",
        "default",
        "-l",
        "owner=helm,name=app",
        "-o",
        "name",
    ]);
    assert_eq!(records.trim(), "", "records left: {records}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_config_releases_into_a_remote_cluster() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    let remote = common::start_simulated(200).await;
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "remote-kubeconfig",
        &format!("--from-file=value={}", remote.kubeconfig.display()),
    ]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "far",
            "  kubeConfig:\n    secretRef:\n      name: remote-kubeconfig\n  values:\n    message: remote\n",
        ),
    );
    wait_for(
        &env,
        "helmrelease/far",
        "installed remotely",
        released("InstallSucceeded"),
    )
    .await;
    // The objects and the release records are in the remote cluster only.
    let cm: Value = serde_json::from_str(&remote.ok(&[
        "get",
        "configmap",
        "far-config",
        "-n",
        "default",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(cm["data"]["message"], "remote");
    assert_eq!(
        cm["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"],
        "far"
    );
    let list = Command::new(helm())
        .args(["list", "-n", "default", "-o", "json", "--kubeconfig"])
        .arg(&remote.kubeconfig)
        .output()
        .unwrap();
    let releases: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(releases[0]["name"], "far", "{releases}");
    assert_eq!(releases[0]["status"], "deployed");
    assert!(
        env.server
            .kubectl(&["get", "configmap/far-config", "-n", "default"])
            .status
            .code()
            != Some(0),
        "not in the local cluster"
    );
    let local = env.server.ok(&[
        "get",
        "secrets",
        "-n",
        "default",
        "-l",
        "owner=helm",
        "-o",
        "name",
    ]);
    assert_eq!(local.trim(), "", "no local release records: {local}");

    // Deleting the HelmRelease uninstalls from the remote cluster.
    env.server.ok(&["delete", "helmrelease/far", "--wait=true"]);
    let gone = remote.kubectl(&["get", "configmap/far-config", "-n", "default"]);
    assert!(gone.status.code() != Some(0), "uninstalled remotely");
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
