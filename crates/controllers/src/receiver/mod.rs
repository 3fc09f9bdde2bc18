//! Flux's notification-controller, first part: the Receiver reconciler (its webhook path from
//! the token Secret, Flux's conditions) and the receiver server, which validates each webhook
//! as the Receiver's type says and asks the named objects to reconcile now
//! (`reconcile.fluxcd.io/requestedAt`).

mod cdevents;
pub mod gcr;
mod jwt;
mod oidc;
mod reconcile;
mod server;
mod validate;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::Store;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client};
use tidegate_api::Receiver;

use crate::events::Recorder;
use crate::metrics::Metrics;

/// The controller's name: event source and field manager.
pub const CONTROLLER: &str = "notification-controller";

/// The notification-controller's settings.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only Receivers matching this label selector.
    pub watch_label_selector: Option<String>,
    /// Refuse resources in other namespaces (`--no-cross-namespace-refs`).
    pub no_cross_namespace_refs: bool,
    /// Where `gcr` Receivers read Google's signing keys (Google's own by default).
    pub google_certs: gcr::GoogleCerts,
}

/// What the reconciles and the server share.
pub struct Context {
    client: Client,
    recorder: Recorder,
    metrics: Arc<Metrics>,
    options: Options,
    receivers: Store<Receiver>,
    backoff: crate::timing::Backoff,
    versions: crate::fresh::Versions,
}

/// The reconciler's error (already in the status); carries the retry delay.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ReconcileError {
    message: String,
    retry: Duration,
}

/// Runs the Receiver reconciler, and the receiver server on `listener` when given, until
/// `shutdown`.
pub async fn run(
    client: Client,
    metrics: Arc<Metrics>,
    options: Options,
    listener: Option<tokio::net::TcpListener>,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let api: Api<Receiver> = match &options.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let (reader, writer) = reflector::store();
    let selector = options.watch_label_selector.clone();
    let ctx = Arc::new(Context {
        recorder: Recorder::new(client.clone(), CONTROLLER),
        client,
        metrics,
        options,
        receivers: reader.clone(),
        backoff: crate::timing::Backoff::default(),
        versions: crate::fresh::Versions::default(),
    });
    let server = listener.map(|l| {
        let app = server::router(ctx.clone());
        tokio::spawn(async move {
            if let Err(e) = axum::serve(l, app).await {
                tracing::error!(error = %e, "receiver server stopped");
            }
        })
    });
    let trigger = reflector::reflector(
        writer,
        watcher(api, crate::shared::watch_config(&selector)).default_backoff(),
    )
    .applied_objects()
    .predicate_filter(
        crate::shared::trigger_hash,
        kube::runtime::PredicateConfig::default(),
    );
    Controller::for_stream(trigger, reader)
        .graceful_shutdown_on(shutdown)
        .run(
            reconcile_one,
            |_r: Arc<Receiver>, err: &ReconcileError, _ctx: Arc<Context>| {
                Action::requeue(err.retry)
            },
            ctx,
        )
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "receiver controller");
            }
        })
        .await;
    if let Some(s) = server {
        s.abort();
        let _ = s.await;
    }
}

async fn reconcile_one(obj: Arc<Receiver>, ctx: Arc<Context>) -> Result<Action, ReconcileError> {
    let obj =
        match crate::shared::fresh_or_retry(&ctx.client, &ctx.versions, &ctx.backoff, obj).await {
            Ok(Some(fresh)) => fresh,
            Ok(None) => return Ok(Action::await_change()),
            Err((message, retry)) => return Err(ReconcileError { message, retry }),
        };
    crate::shared::timed(obj.as_ref(), &ctx.metrics, reconcile::reconcile(&obj, &ctx)).await
}
