//! The HelmChart reconciler (Flux's source-controller): selects a chart version from a
//! HelmRepository's stored index, downloads the chart package and stores it as the artifact
//! `<name>-<version>.tgz`.
//!
//! So far only charts from `type: default` HelmRepositories, without `valuesFiles`; charts
//! from OCI repositories, GitRepositories and Buckets stall with a clear message.

mod reconcile;

use std::sync::Arc;

use std::collections::HashMap;
use std::sync::Mutex;

use futures::StreamExt;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use tidegate_api::{HelmChart, HelmRepository};
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
    let repositories: Api<HelmRepository> = match &options.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    // A HelmRepository whose artifact changed wakes the HelmCharts built from it, as Flux's
    // HelmChart controller watches HelmRepositories.
    let triggers: crate::source::ExtraTriggers<HelmChart> = Box::new(move |charts| {
        let seen: Mutex<HashMap<(String, String), String>> = Mutex::default();
        watcher(repositories, watcher::Config::default())
            .default_backoff()
            .applied_objects()
            .filter_map(move |res| {
                let out = res.ok().map(|repo| {
                    let ns = repo.namespace().unwrap_or_default();
                    let name = repo.name_any();
                    let revision = repo
                        .status
                        .as_ref()
                        .and_then(|s| s.artifact.as_ref())
                        .map(|a| a.revision.clone())
                        .unwrap_or_default();
                    let changed = {
                        let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
                        seen.insert((ns.clone(), name.clone()), revision.clone())
                            .is_none_or(|old| old != revision)
                    };
                    if !changed || revision.is_empty() {
                        return Vec::new();
                    }
                    charts
                        .state()
                        .iter()
                        .filter(|c| {
                            c.spec.source_ref.kind == "HelmRepository"
                                && c.spec.source_ref.name == name
                                && c.namespace().as_deref() == Some(ns.as_str())
                        })
                        .map(|c| ObjectRef::from_obj(c.as_ref()))
                        .collect()
                });
                futures::future::ready(out)
            })
            .flat_map(futures::stream::iter)
            .boxed()
    });
    crate::source::run::<HelmChart>(
        client,
        storage,
        metrics,
        options,
        shutdown,
        |obj, ctx| Box::pin(async move { reconcile::reconcile(&obj, &ctx).await }),
        Some(triggers),
    )
    .await;
}
