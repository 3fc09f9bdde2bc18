//! The HelmChart reconciler (Flux's source-controller): builds a chart from a HelmRepository
//! (its stored index, or an OCI registry) or from a GitRepository's artifact, by Flux's
//! rules (version selection, values files, version metadata, dependencies), and stores it as
//! the artifact `<name>-<version>.tgz`.
//!
//! Charts from Buckets and `spec.verify` stall with a clear message.

mod build;
mod cache;
mod local;
mod reconcile;
mod remote;
mod repository;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tidegate_api::{Bucket, GitRepository, HelmChart, HelmRepository};
use tidegate_source::storage::Storage;

use crate::gitrepository::Options;
use crate::metrics::Metrics;

/// HelmCharts of source `kind` to reconcile when an object of that kind gets a new artifact
/// revision (`revision` reads it), as Flux's HelmChart controller watches its sources.
fn on_new_artifact<S>(
    api: Api<S>,
    kind: &'static str,
    revision: fn(&S) -> Option<String>,
    charts: Store<HelmChart>,
) -> futures::stream::BoxStream<'static, ObjectRef<HelmChart>>
where
    S: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    let seen: Mutex<HashMap<(String, String), String>> = Mutex::default();
    watcher(api, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .filter_map(move |res| {
            let out = res.ok().map(|source| {
                let ns = source.namespace().unwrap_or_default();
                let name = source.name_any();
                let rev = revision(&source).unwrap_or_default();
                let changed = {
                    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
                    seen.insert((ns.clone(), name.clone()), rev.clone())
                        .is_none_or(|old| old != rev)
                };
                if !changed || rev.is_empty() {
                    return Vec::new();
                }
                charts
                    .state()
                    .iter()
                    .filter(|c| {
                        c.spec.source_ref.kind == kind
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
}

/// Runs the HelmChart controller until `shutdown` resolves. It takes the source-controller's
/// settings ([`Options`]).
pub async fn run(
    client: Client,
    storage: Arc<Storage>,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    cache::init(options.helm_cache_max_size, options.helm_cache_ttl);
    let (helm_repos, git_repos, buckets): (Api<HelmRepository>, Api<GitRepository>, Api<Bucket>) =
        match &options.namespace {
            Some(ns) => (
                Api::namespaced(client.clone(), ns),
                Api::namespaced(client.clone(), ns),
                Api::namespaced(client.clone(), ns),
            ),
            None => (
                Api::all(client.clone()),
                Api::all(client.clone()),
                Api::all(client.clone()),
            ),
        };
    let triggers: crate::source::ExtraTriggers<HelmChart> = Box::new(move |charts| {
        let helm = on_new_artifact(
            helm_repos,
            "HelmRepository",
            |r: &HelmRepository| Some(r.status.as_ref()?.artifact.as_ref()?.revision.clone()),
            charts.clone(),
        );
        let git = on_new_artifact(
            git_repos,
            "GitRepository",
            |r: &GitRepository| Some(r.status.as_ref()?.artifact.as_ref()?.revision.clone()),
            charts.clone(),
        );
        let bucket = on_new_artifact(
            buckets,
            "Bucket",
            |r: &Bucket| Some(r.status.as_ref()?.artifact.as_ref()?.revision.clone()),
            charts,
        );
        futures::stream::select(futures::stream::select(helm, git), bucket).boxed()
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
