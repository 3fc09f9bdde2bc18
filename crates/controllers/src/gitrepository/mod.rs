//! The GitRepository reconciler (Flux's source-controller).
//!
//! Watches GitRepositories (reconciling on a new generation, a `requestedAt` annotation or a
//! deletion, not on status writes), fetches the selected commit, verifies it, packs it into the
//! artifact store and reports the artifact, conditions, events and metrics.

mod artifact;
mod reconcile;

use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use tidegate_api::GitRepository;
use tidegate_source::storage::Storage;

use crate::metrics::Metrics;

/// Settings of the reconciler (Flux's source-controller flags).
#[derive(Debug, Clone)]
pub struct Options {
    /// Where events are also POSTed in Flux's format (`--events-addr`).
    pub events: Option<std::sync::Arc<crate::notification::webhook::EventWebhook>>,
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
    /// Which objects may use `file://` URLs (none by default: a tenant could otherwise publish
    /// any repository on the controller's filesystem; `tidegate up` allows its bootstrap
    /// object, `--allow-file-urls` every object).
    pub file_urls: crate::file_urls::FileUrls,
    /// Chart indexes kept between HelmChart reconciles (`--helm-cache-max-size`; 0 keeps
    /// none). Bounded in bytes too (`helmchart` cache's `MAX_BYTES`).
    pub helm_cache_max_size: usize,
    /// How long a kept index lives without use (`--helm-cache-ttl`).
    pub helm_cache_ttl: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            events: None,
            concurrent: 2,
            jitter_percent: 5,
            requeue_dependency: Duration::from_secs(30),
            namespace: None,
            watch_label_selector: None,
            file_urls: Default::default(),
            helm_cache_max_size: 10,
            helm_cache_ttl: Duration::from_secs(15 * 60),
        }
    }
}

/// Shared state of the reconciles.
pub use crate::source::Context;
pub use crate::source::ReconcileError;

/// Runs the GitRepository controller until `shutdown` resolves.
pub async fn run(
    client: Client,
    storage: Arc<Storage>,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    crate::source::run::<GitRepository>(
        client,
        storage,
        metrics,
        options,
        shutdown,
        |obj, ctx| Box::pin(async move { reconcile::reconcile(&obj, &ctx).await }),
        None,
    )
    .await;
}
