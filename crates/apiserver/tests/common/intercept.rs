//! A kube client whose requests pass through the test first: a hook awaited before each request
//! is sent (to make another client act at exactly that moment), and a lag added to chosen
//! streaming responses (a watch whose events arrive late, as a slow watch cache sees them).
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, StreamBody};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::TokioExecutor;
use kube::client::ConfigExt;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the test sees of a request: method and path with query.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub uri: String,
}

/// Awaited before a request is sent.
pub type Hook = Arc<dyn Fn(Seen) -> BoxFuture<'static, ()> + Send + Sync>;
/// How late the response body of a request arrives (`None`: on time).
pub type Lag = Arc<dyn Fn(&Seen) -> Option<Duration> + Send + Sync>;

/// A client for `config` whose requests await `hook` first and whose response bodies arrive
/// `lag` late.
pub fn client(config: &kube::Config, hook: Option<Hook>, lag: Option<Lag>) -> kube::Client {
    let https = config.rustls_https_connector().expect("https connector");
    let hyper: HyperClient<_, kube::client::Body> =
        HyperClient::builder(TokioExecutor::new()).build(https);
    let inner = tower::ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer().expect("auth layer"))
        .map_err(|e: hyper_util::client::legacy::Error| Box::new(e) as BoxError)
        .service(hyper);
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let mut inner = inner.clone();
        let hook = hook.clone();
        let lag = lag.clone();
        async move {
            let seen = Seen {
                method: req.method().to_string(),
                uri: req
                    .uri()
                    .path_and_query()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
            };
            if let Some(h) = &hook {
                h(seen.clone()).await;
            }
            let delay = lag.as_ref().and_then(|l| l(&seen));
            let resp = tower::Service::call(&mut inner, req).await?;
            let (parts, body) = resp.into_parts();
            let body: BoxBody<Bytes, BoxError> = match delay {
                None => body.map_err(|e| Box::new(e) as BoxError).boxed(),
                Some(d) => lagged(body, d),
            };
            Ok::<_, BoxError>(http::Response::from_parts(parts, body))
        }
    });
    kube::Client::new(service, config.default_namespace.clone())
}

/// `body` with every frame delivered `delay` after it arrived.
fn lagged<B>(body: B, delay: Duration) -> BoxBody<Bytes, BoxError>
where
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut body = body;
        while let Some(frame) = body.frame().await {
            let due = tokio::time::Instant::now() + delay;
            let frame = frame.map_err(|e| Box::new(e) as BoxError);
            if tx.send((due, frame)).is_err() {
                return;
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        let (due, frame) = rx.recv().await?;
        tokio::time::sleep_until(due).await;
        Some((frame, rx))
    });
    BodyExt::boxed(StreamBody::new(stream))
}
