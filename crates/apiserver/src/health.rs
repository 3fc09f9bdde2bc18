//! `/healthz`, `/livez` and `/readyz` as kube-apiserver answers them: `ok`, or with `?verbose`
//! the list of checks (`[+]ping ok` …) and `<endpoint> check passed`; each check also on its
//! own path (`/readyz/etcd`); `?exclude=<check>` reported as excluded.

use crate::error::ApiError;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};

/// The checks every endpoint runs (the store answers under etcd's name, as k3s's does).
const LIVE: &[&str] = &[
    "ping",
    "log",
    "etcd",
    "poststarthook/bootstrap-controller",
    "poststarthook/crd-informer-synced",
    "poststarthook/rbac/bootstrap-roles",
];

/// What `/readyz` adds.
const READY_ONLY: &[&str] = &["etcd-readiness", "informer-sync", "shutdown"];

/// The answer for a health path: the server answers only once it is serving, so every check
/// passes.
pub fn answer(uri: &Uri) -> Response {
    let mut segments = uri.path().trim_matches('/').splitn(2, '/');
    let endpoint = segments.next().unwrap_or("healthz");
    let checks: Vec<&str> = match endpoint {
        "readyz" => LIVE[..3]
            .iter()
            .chain(READY_ONLY[..2].iter())
            .chain(LIVE[3..].iter())
            .chain(READY_ONLY[2..].iter())
            .copied()
            .collect(),
        _ => LIVE.to_vec(),
    };
    if let Some(one) = segments.next().filter(|s| !s.is_empty()) {
        return if checks.contains(&one) {
            (StatusCode::OK, "ok").into_response()
        } else {
            ApiError::not_found_path().into_response()
        };
    }
    let query: Vec<(String, String)> = uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let verbose = query.iter().any(|(k, _)| k == "verbose");
    let excluded: Vec<&str> = query
        .iter()
        .filter(|(k, _)| k == "exclude")
        .map(|(_, v)| v.as_str())
        .collect();
    if !verbose {
        return (StatusCode::OK, "ok").into_response();
    }
    let mut body = String::new();
    for check in &checks {
        if excluded.contains(check) {
            body.push_str(&format!("[+]{check} excluded: ok\n"));
        } else {
            body.push_str(&format!("[+]{check} ok\n"));
        }
    }
    let unknown: Vec<&str> = excluded
        .iter()
        .filter(|e| !checks.contains(e))
        .copied()
        .collect();
    if !unknown.is_empty() {
        body.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            unknown
                .iter()
                .map(|u| format!("\"{u}\""))
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    body.push_str(&format!("{endpoint} check passed\n"));
    (StatusCode::OK, body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn text(uri: &str) -> (u16, String) {
        let resp = answer(&uri.parse::<Uri>().expect("uri"));
        let code = resp.status().as_u16();
        let body = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .expect("body");
        (code, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn verbose_lists_checks_and_the_verdict() {
        assert_eq!(text("/readyz").await, (200, "ok".into()));
        let (code, body) = text("/readyz?verbose").await;
        assert_eq!(code, 200);
        assert!(
            body.starts_with("[+]ping ok\n[+]log ok\n[+]etcd ok\n"),
            "{body}"
        );
        assert!(body.contains("[+]informer-sync ok\n"), "{body}");
        assert!(
            body.ends_with("[+]shutdown ok\nreadyz check passed\n"),
            "{body}"
        );
        let (_, live) = text("/livez?verbose&exclude=etcd&exclude=nope").await;
        assert!(live.contains("[+]etcd excluded: ok\n"), "{live}");
        assert!(!live.contains("shutdown"), "{live}");
        assert!(
            live.ends_with(
                "warn: some health checks cannot be excluded: no matches for \"nope\"\nlivez check passed\n"
            ),
            "{live}"
        );
        assert_eq!(text("/healthz/etcd").await, (200, "ok".into()));
        assert_eq!(text("/healthz/nothing").await.0, 404);
    }
}
