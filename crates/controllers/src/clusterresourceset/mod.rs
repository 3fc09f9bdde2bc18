//! Cluster API's ClusterResourceSet controller: the objects in ConfigMaps and Secrets of the
//! management cluster are applied to every workload Cluster a ClusterResourceSet selects, and
//! each Cluster's ClusterResourceSetBinding records what was applied. `ApplyOnce` and
//! `Reconcile` behave as Cluster API's; `ContinuousApply` is Tidegate's extension
//! (see `docs/clusterresourceset.md`). The binding controller removes the binding of a Cluster
//! that is gone.

mod binding;
mod continuous;
mod delete;
mod outcome;
mod read;
mod reconcile;
mod remote;
pub mod resources;
mod scope;

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedSender;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use tidegate_api::cluster::PAUSED_ANNOTATION;
use tidegate_api::{Cluster, ClusterResourceSet};

use crate::metrics::Metrics;

/// The controller's name: event source and field manager.
pub const CONTROLLER: &str = "clusterresourceset";

/// The controller's settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// ClusterResourceSets reconciled at once (Cluster API's `--clusterresourceset-concurrency`, 10).
    pub concurrent: u16,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only objects matching this label selector.
    pub watch_label_selector: Option<String>,
    /// What the `<cluster>-kubeconfig` Secrets may do (`--insecure-kubeconfig-exec`,
    /// `--insecure-kubeconfig-tls`).
    pub kubeconfig: crate::kubeconfig::SecretKubeConfigOptions,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            concurrent: 10,
            namespace: None,
            watch_label_selector: None,
            kubeconfig: Default::default(),
        }
    }
}

/// What the reconciles share.
pub struct Context {
    client: Client,
    metrics: Arc<Metrics>,
    clusters: Store<Cluster>,
    remotes: remote::Remotes,
    continuous: Arc<continuous::Continuous>,
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

/// A reconcile is due when the generation changes, the paused annotation comes or goes, a
/// reconcile is requested, or the object is being deleted — never for a status write.
fn trigger_hash(crs: &ClusterResourceSet) -> Option<u64> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    crs.meta().generation.hash(&mut h);
    crs.annotations()
        .contains_key(PAUSED_ANNOTATION)
        .hash(&mut h);
    crs.annotations()
        .get(tidegate_api::meta::RECONCILE_REQUESTED_AT)
        .hash(&mut h);
    crs.meta().deletion_timestamp.is_some().hash(&mut h);
    Some(h.finish())
}

/// Where Cluster, ConfigMap and Secret changes are turned into ClusterResourceSet reconciles.
struct Mapper {
    sets: Store<ClusterResourceSet>,
    tx: UnboundedSender<ObjectRef<ClusterResourceSet>>,
}

impl Mapper {
    /// Every ClusterResourceSet of the Cluster's namespace whose selector matches it, and
    /// every `ContinuousApply` one (a Cluster it no longer selects loses its objects).
    fn cluster(&self, cluster: &Cluster) {
        let ns = cluster.namespace();
        let labels = cluster.labels();
        for crs in self.sets.state() {
            if crs.namespace() != ns {
                continue;
            }
            if crs.spec.strategy() == tidegate_api::clusterresourceset::CONTINUOUS_APPLY {
                let _ = self.tx.unbounded_send(ObjectRef::from_obj(crs.as_ref()));
                continue;
            }
            let Ok(Some(sel)) = crate::selector::parse(&crs.spec.cluster_selector) else {
                continue;
            };
            if sel.matches(|k| labels.get(k).map(String::as_str)) {
                let _ = self.tx.unbounded_send(ObjectRef::from_obj(crs.as_ref()));
            }
        }
    }

    /// The ClusterResourceSets owning a ConfigMap or Secret, or, when it has no such owner,
    /// those of its namespace that name it.
    fn resource(&self, kind: &str, meta: &kube::api::ObjectMeta) {
        let ns = meta.namespace.clone();
        let owners: Vec<&str> = meta
            .owner_references
            .iter()
            .flatten()
            .filter(|o| o.kind == tidegate_api::clusterresourceset::KIND)
            .map(|o| o.name.as_str())
            .collect();
        if !owners.is_empty() {
            for name in owners {
                let mut r = ObjectRef::new(name);
                if let Some(ns) = &ns {
                    r = r.within(ns);
                }
                let _ = self.tx.unbounded_send(r);
            }
            return;
        }
        let name = meta.name.as_deref().unwrap_or("");
        for crs in self.sets.state() {
            if crs.namespace() == ns
                && crs
                    .spec
                    .resources
                    .iter()
                    .any(|r| r.kind == kind && r.name == name)
            {
                let _ = self.tx.unbounded_send(ObjectRef::from_obj(crs.as_ref()));
            }
        }
    }
}

/// Runs the ClusterResourceSet and ClusterResourceSetBinding controllers until `shutdown`.
pub async fn run(
    client: Client,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let ns = options.namespace.as_deref();
    let api: Api<ClusterResourceSet> = scoped(&client, ns);
    let clusters_api: Api<Cluster> = scoped(&client, ns);
    let configmaps: Api<PartialObjectMeta<ConfigMap>> = scoped(&client, ns);
    let secrets: Api<PartialObjectMeta<Secret>> = scoped(&client, ns);
    let (reader, writer) = reflector::store();
    let (cluster_reader, cluster_writer) = reflector::store();
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let continuous = Arc::new(continuous::Continuous::new(tx.clone()));
    let mapper = Arc::new(Mapper {
        sets: reader.clone(),
        tx,
    });
    let (binding_tx, binding_rx) = futures::channel::mpsc::unbounded();
    let ctx = Arc::new(Context {
        client: client.clone(),
        metrics,
        clusters: cluster_reader,
        remotes: remote::Remotes::new(options.kubeconfig),
        continuous,
        backoff: crate::timing::Backoff::default(),
        versions: crate::fresh::Versions::default(),
    });
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut background = Vec::new();
    // Clusters: kept in a store (the selection reads it) and mapped to their sets; a deleted
    // Cluster's binding goes, and its client with it.
    {
        let mapper = mapper.clone();
        let ctx = ctx.clone();
        let stream = reflector::reflector(
            cluster_writer,
            watcher(clusters_api, watcher::Config::default()).default_backoff(),
        );
        background.push(tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(event) = stream.next().await {
                match event {
                    Ok(watcher::Event::Apply(c)) | Ok(watcher::Event::InitApply(c)) => {
                        mapper.cluster(&c);
                        let _ = binding_tx.unbounded_send(binding::key_of(&c));
                    }
                    Ok(watcher::Event::Delete(c)) => {
                        let ns = c.namespace().unwrap_or_default();
                        ctx.remotes.forget(&ns, &c.name_any());
                        ctx.continuous
                            .forget_cluster(&format!("{ns}/{}", c.name_any()));
                        let _ = binding_tx.unbounded_send(binding::key_of(&c));
                    }
                    Ok(_) => {}
                    Err(e) => tracing::debug!(error = %e, "cluster watch"),
                }
            }
        }));
    }
    macro_rules! resource_watch {
        ($api:expr, $kind:literal) => {{
            let mapper = mapper.clone();
            let stream = watcher($api, watcher::Config::default())
                .default_backoff()
                .applied_objects();
            background.push(tokio::spawn(async move {
                let mut stream = std::pin::pin!(stream);
                while let Some(event) = stream.next().await {
                    match event {
                        Ok(o) => mapper.resource($kind, &o.metadata),
                        Err(e) => tracing::debug!(error = %e, "{} watch", $kind),
                    }
                }
            }));
        }};
    }
    resource_watch!(configmaps, "ConfigMap");
    resource_watch!(secrets, "Secret");
    background.push(tokio::spawn(binding::run(
        client.clone(),
        binding_rx,
        options.namespace.clone(),
        {
            let mut rx = stop_rx.clone();
            async move {
                let _ = rx.wait_for(|v| *v).await;
            }
        },
    )));
    let trigger = reflector::reflector(
        writer,
        watcher(
            api,
            crate::shared::watch_config(&options.watch_label_selector),
        )
        .default_backoff(),
    )
    .applied_objects()
    .predicate_filter(trigger_hash, kube::runtime::PredicateConfig::default());
    Controller::for_stream(trigger, reader)
        .reconcile_on(rx)
        .with_config(
            kube::runtime::controller::Config::default().concurrency(options.concurrent.max(1)),
        )
        .graceful_shutdown_on(shutdown)
        .run(
            reconcile_one,
            |_c: Arc<ClusterResourceSet>, err: &ReconcileError, _ctx: Arc<Context>| {
                Action::requeue(err.retry)
            },
            ctx,
        )
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "clusterresourceset controller");
            }
        })
        .await;
    let _ = stop_tx.send(true);
    for task in background {
        task.abort();
        let _ = task.await;
    }
}

/// The API of `K` in `namespace`, or across all namespaces.
fn scoped<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    K::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

async fn reconcile_one(
    obj: Arc<ClusterResourceSet>,
    ctx: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let obj =
        match crate::shared::fresh_or_retry(&ctx.client, &ctx.versions, &ctx.backoff, obj).await {
            Ok(Some(fresh)) => fresh,
            Ok(None) => return Ok(Action::await_change()),
            Err((message, retry)) => return Err(ReconcileError { message, retry }),
        };
    crate::shared::timed(obj.as_ref(), &ctx.metrics, reconcile::reconcile(&obj, &ctx)).await
}
