//! The HelmChart reconciler (Flux's source-controller): selects a chart version from a
//! HelmRepository's stored index, downloads the chart package and stores it as the artifact
//! `<name>-<version>.tgz`.
//!
//! So far only charts from `type: default` HelmRepositories, without `valuesFiles`; charts
//! from OCI repositories, GitRepositories and Buckets stall with a clear message.

mod reconcile;

use std::sync::Arc;

use kube::Client;
use tidegate_api::HelmChart;
use tidegate_source::storage::Storage;

use crate::gitrepository::Options;
use crate::metrics::Metrics;

/// Runs the HelmChart controller until `shutdown` resolves. It takes the source-controller's
/// settings ([`Options`]).
pub async fn run(
    client: Client,
    storage: Arc<Storage>,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    crate::source::run::<HelmChart>(client, storage, metrics, options, shutdown, |obj, ctx| {
        Box::pin(async move { reconcile::reconcile(&obj, &ctx).await })
    })
    .await;
}
