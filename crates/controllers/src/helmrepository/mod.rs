//! The HelmRepository reconciler (Flux's source-controller). `type: default`: fetches
//! `<url>/index.yaml`, whose sha256 is the revision, and stores the index (as JSON, as Flux
//! stores it) when it changed. `type: oci` is static, as in Flux: nothing is fetched or stored,
//! the HelmChart controller talks to the registry.

mod reconcile;

pub(crate) use reconcile::MAX_INDEX_SIZE;

use std::sync::Arc;

use kube::Client;
use tidegate_api::HelmRepository;
use tidegate_source::storage::Storage;

use crate::gitrepository::Options;
use crate::metrics::Metrics;

/// Runs the HelmRepository controller until `shutdown` resolves. It takes the
/// source-controller's settings ([`Options`]).
pub async fn run(
    client: Client,
    storage: Arc<Storage>,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    crate::source::run::<HelmRepository>(
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
