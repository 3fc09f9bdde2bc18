//! The GitRepository reconciler (Flux's source-controller).
//!
//! Watches GitRepositories (reconciling on a new generation, a `requestedAt` annotation or a
//! deletion, not on status writes), fetches the selected commit, verifies it, packs it into the
//! artifact store and reports the artifact, conditions, events and metrics.

mod artifact;
mod reconcile;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, ResourceExt};
use tidegate_api::GitRepository;
use tidegate_source::storage::Storage;

use crate::events::Recorder;
use crate::metrics::Metrics;
use crate::timing::Backoff;

/// Settings of the reconciler (Flux's source-controller flags).
#[derive(Debug, Clone)]
pub struct Options {
    /// Reconciles running at once (`--concurrent`, default 2).
    pub concurrent: u16,
    /// Interval jitter in percent (`--interval-jitter-percentage`, default 5).
    pub jitter_percent: u8,
    /// Retry delay while an included repository has no artifact (`--requeue-dependency`).
    pub requeue_dependency: Duration,
    /// Watch only this namespace (`--watch-all-namespaces=false`).
    pub namespace: Option<String>,
    /// Reconcile only the GitRepositories matching this label selector (`--watch-label-selector`,
    /// Flux's sharding: `sharding.fluxcd.io/key in (shard1)`, `!sharding.fluxcd.io/key`).
    pub watch_label_selector: Option<String>,
    /// Accept `file://` URLs (off by default: a tenant could otherwise publish any repository on
    /// the controller's filesystem; `tidegate up` turns it on for local paths).
    pub allow_file_urls: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            concurrent: 2,
            jitter_percent: 5,
            requeue_dependency: Duration::from_secs(30),
            namespace: None,
            watch_label_selector: None,
            allow_file_urls: false,
        }
    }
}

/// Shared state of the reconciles.
pub struct Context {
    client: Client,
    storage: Arc<Storage>,
    recorder: Recorder,
    metrics: Arc<Metrics>,
    backoff: Backoff,
    options: Options,
    http: reqwest::Client,
    /// The newest resourceVersion of each GitRepository written or read (read-your-writes).
    versions: crate::fresh::Versions,
}

pub use crate::source::ReconcileError;

/// Runs the GitRepository controller until `shutdown` resolves.
pub async fn run(
    client: Client,
    storage: Arc<Storage>,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let api: Api<GitRepository> = match &options.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let concurrency = options.concurrent.max(1);
    let watch = crate::shared::watch_config(&options.watch_label_selector);
    let ctx = Arc::new(Context {
        recorder: Recorder::new(client.clone(), "source-controller"),
        client,
        storage,
        metrics,
        backoff: Backoff::default(),
        options,
        http: tidegate_source::tls::http_client(),
        versions: crate::fresh::Versions::default(),
    });
    let (reader, writer) = reflector::store();
    // Reconcile on what Flux reconciles on: a new generation, a changed requestedAt annotation,
    // or a deletion; never on our own status writes.
    let trigger = reflector::reflector(writer, watcher(api, watch))
        .applied_objects()
        .predicate_filter(
            crate::shared::trigger_hash,
            kube::runtime::PredicateConfig::default(),
        );
    Controller::for_stream(trigger, reader)
        .with_config(kube::runtime::controller::Config::default().concurrency(concurrency))
        .graceful_shutdown_on(shutdown)
        .run(reconcile_one, error_policy, ctx)
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "gitrepository controller");
            }
        })
        .await;
}

async fn reconcile_one(
    obj: Arc<GitRepository>,
    ctx: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<GitRepository> = Api::namespaced(ctx.client.clone(), &ns);
    let obj = match ctx.versions.fresh(&api, obj.clone()).await {
        Ok(Some(fresh)) => fresh,
        Ok(None) => return Ok(Action::await_change()),
        Err(message) => {
            return Err(ReconcileError {
                retry: ctx.backoff.failed(&format!("{ns}/{}", obj.name_any())),
                message,
            });
        }
    };
    crate::shared::timed(obj.as_ref(), &ctx.metrics, reconcile::reconcile(&obj, &ctx)).await
}

fn error_policy(_obj: Arc<GitRepository>, err: &ReconcileError, _ctx: Arc<Context>) -> Action {
    Action::requeue(err.retry)
}
