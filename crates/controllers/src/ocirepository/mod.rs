//! The OCIRepository reconciler (Flux's source-controller): resolves the `ref` against the
//! registry, pulls the manifest and the selected layer, and stores it as an artifact (extracted
//! and re-packed with the ignore rules, or copied as it is).

mod reconcile;

use std::sync::Arc;

use kube::Client;
use tidegate_api::OCIRepository;
use tidegate_source::storage::Storage;

use crate::gitrepository::Options;
use crate::metrics::Metrics;

/// Runs the OCIRepository controller until `shutdown` resolves. It takes the
/// source-controller's settings ([`Options`]).
pub async fn run(
    client: Client,
    storage: Arc<Storage>,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    crate::source::run::<OCIRepository>(
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
