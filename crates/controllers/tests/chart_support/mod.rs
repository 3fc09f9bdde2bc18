//! Chart helpers for the HelmRepository and HelmChart tests: the real helm (v4.1.4) to
//! package charts, and a static chart server on loopback, optionally behind basic auth.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

pub fn helm() -> PathBuf {
    helm_version("v4.1.4", "TIDEGATE_HELM4")
}

/// The real helm v3.17.2 (Helm 3 users reading Helm 4 records).
pub fn helm3() -> PathBuf {
    helm_version("v3.17.2", "TIDEGATE_HELM3")
}

fn helm_version(version: &str, env: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env) {
        return PathBuf::from(p);
    }
    let tools = std::env::var("TIDEGATE_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/tidegate-tools")
        });
    let helm = tools.join(format!("helm-{version}/helm"));
    assert!(
        helm.exists(),
        "helm {version} is needed at {} (.ci/run installs it)",
        helm.display()
    );
    helm
}

pub fn run_helm(args: &[&str]) {
    let out = Command::new(helm()).args(args).output().expect("helm runs");
    assert!(
        out.status.success(),
        "helm {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Packages chart `name` at `version` into `dir`.
pub fn package(dir: &Path, name: &str, version: &str) {
    let src = tempfile::tempdir().unwrap();
    let chart = src.path().join(name);
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"{version}\"\ndescription: test chart\n"),
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
    )
    .unwrap();
    run_helm(&[
        "package",
        chart.to_str().unwrap(),
        "-d",
        dir.to_str().unwrap(),
    ]);
}

/// A static file server on loopback, optionally behind basic auth.
pub struct ChartServer {
    pub url: String,
    pub dir: PathBuf,
}

pub async fn serve(dir: PathBuf, credentials: Option<(&'static str, &'static str)>) -> ChartServer {
    use axum::extract::{Path as UrlPath, State};
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let expected = credentials.map(|(u, p)| {
        use base64::Engine;
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
        )
    });
    let state = Arc::new((dir.clone(), expected));
    let app = axum::Router::new()
        .route(
            "/{*path}",
            axum::routing::get(
                |State(state): State<Arc<(PathBuf, Option<String>)>>,
                 UrlPath(path): UrlPath<String>,
                 headers: HeaderMap| async move {
                    if let Some(want) = &state.1
                        && headers.get("authorization").and_then(|v| v.to_str().ok())
                            != Some(want.as_str())
                    {
                        return StatusCode::UNAUTHORIZED.into_response();
                    }
                    match std::fs::read(state.0.join(&path)) {
                        Ok(bytes) => bytes.into_response(),
                        Err(_) => StatusCode::NOT_FOUND.into_response(),
                    }
                },
            ),
        )
        .with_state(state);
    tokio::spawn(async move { axum::serve(listener, app).await });
    ChartServer { url, dir }
}

pub fn helm_repository(name: &str, url: &str, extra: &str) -> String {
    format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 10m\n  url: {url}\n{extra}"
    )
}

pub fn helm_chart(name: &str, chart: &str, repo: &str, version: &str) -> String {
    format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 10m\n  chart: {chart}\n  version: \"{version}\"\n  sourceRef:\n    kind: HelmRepository\n    name: {repo}\n"
    )
}
