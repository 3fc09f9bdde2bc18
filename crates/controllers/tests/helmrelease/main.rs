//! The HelmRelease controller against the embedded API server, with charts the real helm
//! (v4.1.4) packaged and indexed on a loopback chart server. The releases Tidegate writes are
//! read back by the real helm (`list`, `history`, `get manifest`, `get values`).
//!
//! One test binary in several files: the lifecycle (install, upgrade, remediation, values,
//! post-renderers, tests and requests), drift and health expressions, and the real helm and
//! remote clusters.

#[path = "../chart_support/mod.rs"]
mod chart_support;
#[path = "../source_support/mod.rs"]
mod source_support;

mod drift;
mod helm_cli;
mod lifecycle;

use std::path::Path;
use std::process::Command;

use chart_support::*;
use serde_json::Value;
use source_support::*;

/// A chart with a Deployment, a Service, a ConfigMap of `.Values.message`, a pre-install and
/// pre-upgrade Job hook and a test Pod.
pub(crate) fn write_chart(root: &Path, version: &str) -> std::path::PathBuf {
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

pub(crate) fn publish(server: &ChartServer, version: &str) {
    publish_with(server, version, "");
}

/// Publishes webapp at `version` with `deprecated: true` in its Chart.yaml.
pub(crate) fn publish_deprecated(server: &ChartServer, version: &str) {
    publish_with(server, version, "deprecated: true\n");
}

/// Packages webapp at `version`, `chart_yaml` appended to its Chart.yaml, and indexes it.
fn publish_with(server: &ChartServer, version: &str, chart_yaml: &str) {
    let src = tempfile::tempdir().unwrap();
    let chart = write_chart(src.path(), version);
    if !chart_yaml.is_empty() {
        let meta = chart.join("Chart.yaml");
        let text = std::fs::read_to_string(&meta).unwrap();
        std::fs::write(&meta, format!("{text}{chart_yaml}")).unwrap();
    }
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

pub(crate) fn helm_release(name: &str, extra: &str) -> String {
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: webapp\n      version: \"*\"\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n{extra}"
    )
}

/// The real helm against the embedded server.
pub(crate) fn helm_cli(env: &Env, args: &[&str]) -> String {
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

pub(crate) fn helm_json(env: &Env, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&helm_cli(env, &all)).unwrap()
}

pub(crate) fn released(reason: &'static str) -> impl Fn(&Value) -> bool {
    move |o: &Value| {
        ready(o)
            && condition(o, "Released").is_some_and(|c| c["reason"] == reason)
            && o["status"]["observedGeneration"] == o["metadata"]["generation"]
    }
}

pub(crate) async fn start_with_repo(versions: &[&str]) -> (Env, ChartServer, tempfile::TempDir) {
    start_with_charts(|server| {
        for v in versions {
            publish(server, v);
        }
    })
    .await
}

/// The controllers, a chart server `publish` fills, and a Ready HelmRepository `charts`.
pub(crate) async fn start_with_charts(
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

/// Asks for a reconcile (`reconcile.fluxcd.io/requestedAt`) and waits until it was handled.
pub(crate) async fn reconcile_now(env: &Env, what: &str, token: &str) -> Value {
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

pub(crate) fn events_of(env: &Env, name: &str) -> Vec<(String, String)> {
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
