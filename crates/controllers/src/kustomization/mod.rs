//! The Kustomization reconciler (Flux's kustomize-controller).
//!
//! Watches Kustomizations (reconciling on a new generation, a `requestedAt` annotation or a
//! deletion, never on its own status writes) and GitRepositories (a new artifact reconciles the
//! Kustomizations built from it at once). A Kustomization that becomes ready wakes the
//! Kustomizations that depend on it, so a `dependsOn` chain does not wait for a retry timer.
//! Sources and dependencies are read from the watch caches, not fetched per reconcile.

mod build;
mod decrypt;
mod dependencies;
pub mod generate;
mod reconcile;
mod triggers;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use tidegate_api::{Bucket, ExternalArtifact, GitRepository, Kustomization, OCIRepository};
use tidegate_apply::{AppliedState, ManagerOptions, ResourceManager};

use crate::events::Recorder;
use crate::metrics::Metrics;

/// The field manager of every apply (Flux's controller name).
pub const FIELD_MANAGER: &str = "kustomize-controller";

/// Settings of the reconciler (Flux's kustomize-controller flags).
#[derive(Debug, Clone)]
pub struct Options {
    /// Where events are also POSTed in Flux's format (`--events-addr`).
    pub events: Option<std::sync::Arc<crate::notification::webhook::EventWebhook>>,
    /// Reconciles running at once (`--concurrent`, default 4).
    pub concurrent: u16,
    /// Interval jitter in percent (`--interval-jitter-percentage`, default 5).
    pub jitter_percent: u8,
    /// Retry delay while a source or a dependency is not ready (`--requeue-dependency`,
    /// default 30s); readiness events usually wake the Kustomization sooner.
    pub requeue_dependency: Duration,
    /// Watch only this namespace (`--watch-all-namespaces=false`).
    pub namespace: Option<String>,
    /// Reconcile only the Kustomizations matching this label selector (`--watch-label-selector`,
    /// Flux's sharding: `sharding.fluxcd.io/key in (shard1)`, `!sharding.fluxcd.io/key`).
    pub watch_label_selector: Option<String>,
    /// Service account impersonated when a Kustomization names none
    /// (`--default-service-account`).
    pub default_service_account: Option<String>,
    /// Refuse sources and dependencies in other namespaces (`--no-cross-namespace-refs`).
    pub no_cross_namespace_refs: bool,
    /// Objects applied or deleted at once within one Kustomization.
    pub apply_concurrency: usize,
    /// The Secret (namespace, name) whose `.agekey` entries decrypt Kustomizations that set
    /// `spec.decryption` without a `secretRef` (`--sops-age-secret`).
    pub sops_age_secret: Option<(String, String)>,
    /// What kubeconfigs read from Secrets (`spec.kubeConfig.secretRef`) may do
    /// (`--insecure-kubeconfig-exec`, `--insecure-kubeconfig-tls`).
    pub kubeconfig: crate::kubeconfig::SecretKubeConfigOptions,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            events: None,
            concurrent: 4,
            jitter_percent: 5,
            requeue_dependency: Duration::from_secs(30),
            namespace: None,
            watch_label_selector: None,
            default_service_account: None,
            no_cross_namespace_refs: false,
            apply_concurrency: 8,
            sops_age_secret: None,
            kubeconfig: Default::default(),
        }
    }
}

/// Shared state of the reconciles.
pub struct Context {
    client: Client,
    manager: ResourceManager,
    recorder: Recorder,
    metrics: Arc<Metrics>,
    backoff: crate::timing::Backoff,
    options: Options,
    /// Artifact downloads, shared by the Kustomizations of one artifact.
    fetcher: tidegate_source::fetch::Fetcher,
    /// The source kinds a Kustomization reads (GitRepository, OCIRepository, Bucket,
    /// ExternalArtifact).
    sources: crate::sources::Sources,
    kustomizations: Store<Kustomization>,
    /// What each Kustomization applied last (desired hash and resourceVersion per object):
    /// the no-op path, which needs no request for objects nobody touched.
    applied: Mutex<HashMap<String, AppliedState>>,
    /// The last build of each Kustomization, reused while artifact and spec are unchanged.
    builds: Mutex<HashMap<String, build::Cached>>,
    /// The live resourceVersions of each Kustomization's health-checked objects when they
    /// last passed: unchanged versions mean unchanged health, checked without a request.
    healthy: Mutex<HashMap<String, Vec<String>>>,
    /// Impersonating and remote (`spec.kubeConfig`) managers.
    clusters: crate::cluster::Clusters,
    /// The newest resourceVersion of each Kustomization this controller wrote or read: a
    /// reconcile never starts from an older cached copy (read-your-writes).
    versions: crate::fresh::Versions,
    /// `--concurrent` permits: held while a reconcile builds, applies and prunes, given back
    /// while it waits for health, so any number can wait while the CPU-bound work stays
    /// bounded.
    work: Arc<tokio::sync::Semaphore>,
    /// Requests a reconcile of a Kustomization (one whose object another one took over).
    wake:
        futures::channel::mpsc::UnboundedSender<kube::runtime::reflector::ObjectRef<Kustomization>>,
}

/// The reconciler's error: already reported in the status; carries the retry delay.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ReconcileError {
    message: String,
    retry: Duration,
}

/// Runs the Kustomization controller until `shutdown` resolves. `config` is the
/// configuration behind `client`, from which impersonating clients are made.
pub async fn run(
    client: Client,
    config: kube::Config,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let kapi: Api<Kustomization> = match &options.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let concurrency = options.concurrent.max(1);
    let options_selector = options.watch_label_selector.clone();
    let (kreader, kwriter) = reflector::store();
    let (tx, rx) = futures::channel::mpsc::unbounded();
    // Sources: a new artifact wakes the Kustomizations built from it.
    let tracker = Arc::new(triggers::SourceTracker::new(kreader.clone(), tx.clone()));
    let mut sources = crate::sources::Sources::default();
    let namespace = options.namespace.clone();
    {
        let t = tracker.clone();
        sources.watch::<GitRepository>(&client, namespace.as_deref(), move |o| t.observe(o));
        let t = tracker.clone();
        sources.watch::<OCIRepository>(&client, namespace.as_deref(), move |o| t.observe(o));
        let t = tracker.clone();
        sources.watch::<Bucket>(&client, namespace.as_deref(), move |o| t.observe(o));
        let t = tracker;
        sources.watch::<ExternalArtifact>(&client, namespace.as_deref(), move |o| t.observe(o));
    }
    if let Err(kind) = sources.ready().await {
        tracing::error!("the {kind} watch stopped before it synced");
        return;
    }
    let manager = ResourceManager::new(
        client.clone(),
        ManagerOptions {
            field_manager: FIELD_MANAGER.into(),
            concurrency: options.apply_concurrency.max(1),
            live_mode: tidegate_apply::live::Mode::Watch,
            ..Default::default()
        },
    );
    let ctx = Arc::new(Context {
        wake: tx.clone(),
        work: Arc::new(tokio::sync::Semaphore::new(concurrency as usize)),
        recorder: Recorder::new(client.clone(), FIELD_MANAGER).with_webhook(options.events.clone()),
        client,
        clusters: crate::cluster::Clusters::new(
            config,
            FIELD_MANAGER,
            options.apply_concurrency,
            options.kubeconfig,
        ),
        manager,
        metrics,
        backoff: crate::timing::Backoff::default(),
        options,
        fetcher: tidegate_source::fetch::Fetcher::new(
            tidegate_source::tls::http_client(),
            tidegate_source::extract::Limits::default().max_size,
        ),
        sources,
        kustomizations: kreader.clone(),
        applied: Mutex::default(),
        builds: Mutex::default(),
        healthy: Mutex::default(),
        versions: crate::fresh::Versions::default(),
    });

    // Kustomizations: their own changes trigger them; a dependency that became ready wakes
    // its dependents.
    let readiness = triggers::ReadinessTracker::new(kreader.clone(), tx);
    let trigger = reflector::reflector(
        kwriter,
        watcher(kapi, crate::shared::watch_config(&options_selector)).default_backoff(),
    )
    .applied_objects()
    .inspect(move |res| {
        if let Ok(k) = res {
            readiness.observe(k);
        }
    })
    .predicate_filter(
        crate::shared::trigger_hash,
        kube::runtime::PredicateConfig::default(),
    );
    Controller::for_stream(trigger, kreader)
        .reconcile_on(rx)
        // Unbounded here: `work` bounds what costs CPU, waits cost nothing.
        .with_config(kube::runtime::controller::Config::default().concurrency(0))
        .graceful_shutdown_on(shutdown)
        .run(reconcile_one, error_policy, ctx)
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "kustomization controller");
            }
        })
        .await;
}

async fn reconcile_one(
    obj: Arc<Kustomization>,
    ctx: Arc<Context>,
) -> Result<Action, ReconcileError> {
    // Everything but waiting for health runs under a worker permit (`--concurrent`).
    let permit = ctx.work.clone().acquire_owned().await.ok();
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<Kustomization> = Api::namespaced(ctx.client.clone(), &ns);
    let obj = match ctx.versions.fresh(&api, obj.clone()).await {
        Ok(Some(fresh)) => fresh,
        Ok(None) => return Ok(Action::await_change()),
        Err(message) => {
            return Err(ReconcileError {
                retry: ctx.backoff.failed(&key(&ns, &obj.name_any())),
                message,
            });
        }
    };
    crate::shared::timed(
        obj.as_ref(),
        &ctx.metrics,
        reconcile::reconcile(&obj, &ctx, permit),
    )
    .await
}

fn error_policy(_obj: Arc<Kustomization>, err: &ReconcileError, _ctx: Arc<Context>) -> Action {
    Action::requeue(err.retry)
}

/// `namespace/name`, the key of per-object caches.
fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}
