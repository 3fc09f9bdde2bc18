//! The Bucket reconciler (Flux's source-controller): lists an S3-compatible bucket, computes
//! Flux's revision over the keys and ETags, and — only when that revision is new — downloads
//! the objects and stores them as an artifact.

mod reconcile;

use std::sync::Arc;

use kube::Client;
use tidegate_api::Bucket;
use tidegate_source::storage::Storage;

use crate::gitrepository::Options;
use crate::metrics::Metrics;

/// Runs the Bucket controller until `shutdown` resolves. It takes the source-controller's
/// settings ([`Options`]).
pub async fn run(
    client: Client,
    storage: Arc<Storage>,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    crate::source::run::<Bucket>(
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
