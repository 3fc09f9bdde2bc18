//! A forward HTTP proxy for the tests (source tests only: it needs reqwest).
#![allow(dead_code)]

use std::net::TcpListener;

/// A forward HTTP proxy on loopback (absolute-form requests, plain HTTP targets), requiring
/// `Proxy-Authorization` basic credentials when given; counts what it forwarded.
pub struct HttpProxy {
    pub port: u16,
    pub forwarded: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HttpProxy {
    pub fn start(credentials: Option<(&str, &str)>) -> HttpProxy {
        use base64::Engine as _;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let expected = credentials.map(|(u, p)| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )
        });
        let forwarded = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = forwarded.clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                tidegate_source::tls::ensure_provider();
                let client = reqwest::Client::builder().no_proxy().build().unwrap();
                let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
                    let (client, expected, count) =
                        (client.clone(), expected.clone(), count.clone());
                    async move { forward(req, &client, expected.as_deref(), &count).await }
                });
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = rx.await;
                    })
                    .await
                    .unwrap();
            });
        });
        HttpProxy {
            port,
            forwarded,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// `http://[user:password@]127.0.0.1:<port>`.
    pub fn url(&self, credentials: Option<(&str, &str)>) -> String {
        match credentials {
            Some((u, p)) => format!("http://{u}:{p}@127.0.0.1:{}", self.port),
            None => format!("http://127.0.0.1:{}", self.port),
        }
    }
}

impl Drop for HttpProxy {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn forward(
    req: axum::extract::Request,
    client: &reqwest::Client,
    expected: Option<&str>,
    count: &std::sync::atomic::AtomicUsize,
) -> axum::response::Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let (parts, body) = req.into_parts();
    if let Some(expected) = expected {
        let given = parts
            .headers
            .get("proxy-authorization")
            .and_then(|v| v.to_str().ok());
        if given != Some(expected) {
            let mut resp =
                (StatusCode::PROXY_AUTHENTICATION_REQUIRED, "proxy auth").into_response();
            resp.headers_mut().insert(
                "proxy-authenticate",
                axum::http::HeaderValue::from_static("Basic realm=\"proxy\""),
            );
            return resp;
        }
    }
    if parts.uri.scheme().is_none() {
        return (StatusCode::BAD_REQUEST, "absolute-form requests only").into_response();
    }
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let mut out = client.request(parts.method.clone(), parts.uri.to_string());
    for (k, v) in &parts.headers {
        let name = k.as_str();
        if name.starts_with("proxy-") || name == "host" || name == "connection" {
            continue;
        }
        out = out.header(k, v);
    }
    let Ok(answer) = out.body(body).send().await else {
        return (StatusCode::BAD_GATEWAY, "upstream failed").into_response();
    };
    count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let status = answer.status();
    let headers = answer.headers().clone();
    let bytes = answer.bytes().await.unwrap_or_default();
    let mut resp = axum::response::Response::new(axum::body::Body::from(bytes));
    *resp.status_mut() = status;
    for (k, v) in &headers {
        if k == "transfer-encoding" || k == "connection" || k == "content-length" {
            continue;
        }
        resp.headers_mut().insert(k, v.clone());
    }
    resp
}
