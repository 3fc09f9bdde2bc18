//! The HelmRelease reconciler (Flux's helm-controller): charts from a HelmChart it creates from
//! `spec.chart` or from `spec.chartRef` (OCIRepository, HelmChart), values composed from
//! `valuesFrom` and `values`, releases installed, upgraded, tested, rolled back and uninstalled
//! as Helm does, recorded in Helm's Secrets storage.
//!
//! Watches HelmReleases (a new generation, `requestedAt` or deletion), and HelmCharts and
//! OCIRepositories: a new chart artifact wakes the releases that use it.

mod action;
mod atomic;
mod chart_template;
mod drift;
mod hooks;
mod reconcile;
mod render;
mod source;
mod state;
mod storage;
pub mod values;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedSender;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use tidegate_api::{HelmChart, HelmRelease, OCIRepository};
use tidegate_apply::{AppliedState, ManagerOptions, ResourceManager};

use crate::events::Recorder;
use crate::metrics::Metrics;

pub use action::FIELD_MANAGER;

/// Settings of the reconciler (Flux's helm-controller flags).
#[derive(Debug, Clone)]
pub struct Options {
    /// Where events are also POSTed in Flux's format (`--events-addr`).
    pub events: Option<std::sync::Arc<crate::notification::webhook::EventWebhook>>,
    /// Reconciles running at once (`--concurrent`, default 4).
    pub concurrent: u16,
    /// Interval jitter in percent (`--interval-jitter-percentage`, default 5).
    pub jitter_percent: u8,
    /// Retry delay while a source or dependency is not ready (`--requeue-dependency`).
    pub requeue_dependency: Duration,
    /// Watch only this namespace.
    pub namespace: Option<String>,
    /// Reconcile only HelmReleases matching this label selector (`--watch-label-selector`).
    pub watch_label_selector: Option<String>,
    /// Service account impersonated when a HelmRelease names none
    /// (`--default-service-account`).
    pub default_service_account: Option<String>,
    /// Refuse sources and dependencies in other namespaces (`--no-cross-namespace-refs`).
    pub no_cross_namespace_refs: bool,
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
    fetcher: tidegate_source::fetch::Fetcher,
    /// What each release applied last (the apply manager's no-op path).
    applied: Mutex<HashMap<String, AppliedState>>,
    /// Impersonating and remote (`spec.kubeConfig`) managers.
    clusters: crate::cluster::Clusters,
    versions: crate::fresh::Versions,
    /// The HelmCharts and OCIRepositories, from watches (sources read without a request).
    charts: std::sync::OnceLock<Store<HelmChart>>,
    oci_sources: std::sync::OnceLock<Store<OCIRepository>>,
    /// The newest release of each HelmRelease as last read, checked against a watch of the
    /// release records' metadata: an unchanged release is known without a request.
    releases: Arc<storage::ReleaseCache>,
    /// Loaded charts by artifact digest, shared by the releases of one chart.
    loaded: Mutex<HashMap<String, (std::time::Instant, Arc<tidegate_helm::chart::Chart>)>>,
    /// `--concurrent` permits: held while a reconcile reads, renders and applies, given back
    /// while it waits (hooks, health), so waiting releases cost no worker.
    work: Arc<tokio::sync::Semaphore>,
    /// The cluster's capabilities, re-read after a minute.
    capabilities:
        tokio::sync::Mutex<Option<(std::time::Instant, tidegate_helm::engine::Capabilities)>>,
}

impl Context {
    /// `.Capabilities` of the cluster (version and served APIs), cached for a minute.
    async fn capabilities(
        &self,
        manager: &ResourceManager,
        remote: bool,
    ) -> Result<tidegate_helm::engine::Capabilities, String> {
        // A remote cluster's capabilities are read for each render (renders are rare).
        if remote {
            return render::capabilities(manager.client(), manager).await;
        }
        let mut cached = self.capabilities.lock().await;
        if let Some((at, caps)) = cached.as_ref()
            && at.elapsed() < Duration::from_secs(60)
        {
            return Ok(caps.clone());
        }
        let caps = render::capabilities(manager.client(), manager).await?;
        *cached = Some((std::time::Instant::now(), caps.clone()));
        Ok(caps)
    }

    /// Takes what the release of `key` applied last (empty the first time).
    fn take_applied(&self, key: &str) -> AppliedState {
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key)
            .unwrap_or_default()
    }

    /// Gives back what the release of `key` applied.
    fn put_applied(&self, key: &str, state: AppliedState) {
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_string(), state);
    }
}

/// The reconciler's error: already reported in the status; carries the retry delay.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ReconcileError {
    message: String,
    retry: Duration,
}

/// Wakes the HelmReleases using a chart source whose artifact changed.
struct ChartTracker {
    releases: Store<HelmRelease>,
    tx: UnboundedSender<ObjectRef<HelmRelease>>,
    seen: Mutex<HashMap<(String, String, String), String>>,
}

impl ChartTracker {
    fn observe(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
        artifact: Option<&tidegate_api::meta::Artifact>,
    ) {
        let digest = artifact
            .map(|a| format!("{}|{}", a.revision, a.digest))
            .unwrap_or_default();
        let key = (kind.to_string(), namespace.to_string(), name.to_string());
        let changed = {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            seen.insert(key, digest.clone()).as_deref() != Some(digest.as_str())
        };
        if !changed || digest.is_empty() {
            return;
        }
        for hr in self.releases.state() {
            if source::chart_source_of(&hr)
                == (kind.to_string(), namespace.to_string(), name.to_string())
            {
                let _ = self.tx.unbounded_send(ObjectRef::from_obj(hr.as_ref()));
            }
        }
    }
}

/// Runs the HelmRelease controller until `shutdown` resolves.
pub async fn run(
    client: Client,
    config: kube::Config,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let (hapi, capi, oapi): (Api<HelmRelease>, Api<HelmChart>, Api<OCIRepository>) =
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
    let selector = options.watch_label_selector.clone();
    let concurrency = options.concurrent.max(1);
    let (hreader, hwriter) = reflector::store();
    let manager = ResourceManager::new(
        client.clone(),
        ManagerOptions {
            field_manager: FIELD_MANAGER.into(),
            // Live objects and health from shared watches: applies and waits of many
            // releases cost a map lookup each, not lists and watches of their own.
            live_mode: tidegate_apply::live::Mode::Watch,
            ..Default::default()
        },
    );
    let ctx = Arc::new(Context {
        recorder: Recorder::new(client.clone(), FIELD_MANAGER).with_webhook(options.events.clone()),
        clusters: crate::cluster::Clusters::new(config, FIELD_MANAGER, 8, options.kubeconfig),
        client,
        manager,
        metrics,
        backoff: crate::timing::Backoff::default(),
        options,
        fetcher: tidegate_source::fetch::Fetcher::new(
            tidegate_source::tls::http_client(),
            tidegate_source::extract::Limits::default().max_size,
        ),
        applied: Mutex::default(),
        versions: crate::fresh::Versions::default(),
        capabilities: tokio::sync::Mutex::new(None),
        work: Arc::new(tokio::sync::Semaphore::new(concurrency as usize)),
        charts: std::sync::OnceLock::new(),
        oci_sources: std::sync::OnceLock::new(),
        releases: Arc::new(storage::ReleaseCache::default()),
        loaded: Mutex::default(),
    });
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let tracker = Arc::new(ChartTracker {
        releases: hreader.clone(),
        tx,
        seen: Mutex::default(),
    });
    let (creader, cwriter) = reflector::store();
    let (oreader, owriter) = reflector::store();
    let charts = tracker.clone();
    let chart_task = tokio::spawn(
        reflector::reflector(
            cwriter,
            watcher(capi, watcher::Config::default()).default_backoff(),
        )
        .applied_objects()
        .for_each(move |res| {
            if let Ok(c) = res {
                let artifact = c.status.as_ref().and_then(|s| s.artifact.as_ref());
                charts.observe(
                    "HelmChart",
                    &c.namespace().unwrap_or_default(),
                    &c.name_any(),
                    artifact,
                );
            }
            futures::future::ready(())
        }),
    );
    let ocis = tracker.clone();
    let oci_task = tokio::spawn(
        reflector::reflector(
            owriter,
            watcher(oapi, watcher::Config::default()).default_backoff(),
        )
        .applied_objects()
        .for_each(move |res| {
            if let Ok(o) = res {
                let artifact = o.status.as_ref().and_then(|s| s.artifact.as_ref());
                ocis.observe(
                    "OCIRepository",
                    &o.namespace().unwrap_or_default(),
                    &o.name_any(),
                    artifact,
                );
            }
            futures::future::ready(())
        }),
    );
    // ExternalArtifacts (chartRef): a new artifact wakes the releases of it.
    let mut external = crate::sources::Sources::default();
    let eas = tracker.clone();
    external.watch::<tidegate_api::ExternalArtifact>(
        &ctx.client,
        ctx.options.namespace.as_deref(),
        move |ea| {
            use crate::sources::ArtifactSource;
            eas.observe(
                "ExternalArtifact",
                &ea.namespace().unwrap_or_default(),
                &ea.name_any(),
                ea.artifact(),
            );
        },
    );
    let release_task = tokio::spawn(ctx.releases.clone().watch(ctx.client.clone()));
    let _ = ctx.charts.set(creader);
    let _ = ctx.oci_sources.set(oreader);
    let trigger = reflector::reflector(
        hwriter,
        watcher(hapi, crate::shared::watch_config(&selector)).default_backoff(),
    )
    .applied_objects()
    .predicate_filter(
        crate::shared::trigger_hash,
        kube::runtime::PredicateConfig::default(),
    );
    Controller::for_stream(trigger, hreader)
        .reconcile_on(rx)
        // Unbounded here: `work` bounds what costs CPU, waits cost nothing.
        .with_config(kube::runtime::controller::Config::default().concurrency(0))
        .graceful_shutdown_on(shutdown)
        .run(reconcile_one, error_policy, ctx)
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "helmrelease controller");
            }
        })
        .await;
    chart_task.abort();
    oci_task.abort();
    release_task.abort();
}

async fn reconcile_one(obj: Arc<HelmRelease>, ctx: Arc<Context>) -> Result<Action, ReconcileError> {
    let permit = ctx.work.clone().acquire_owned().await.ok();
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<HelmRelease> = Api::namespaced(ctx.client.clone(), &ns);
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

fn error_policy(_obj: Arc<HelmRelease>, err: &ReconcileError, _ctx: Arc<Context>) -> Action {
    Action::requeue(err.retry)
}

/// `namespace/name`, the key of per-object caches.
fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}
