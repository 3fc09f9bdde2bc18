//! The ArtifactGenerator reconciler (Flux's source-watcher): fetches the artifacts of its
//! sources, builds each output artifact with the copy rules, stores it and publishes it as an
//! ExternalArtifact that Kustomizations and HelmReleases read like any source.

mod build;
mod glob;
mod merge;
mod pathpattern;
mod reconcile;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, ResourceExt};
use tidegate_api::{
    ArtifactGenerator, Bucket, ExternalArtifact, GitRepository, HelmChart, OCIRepository,
};
use tidegate_source::storage::Storage;

use crate::events::Recorder;
use crate::metrics::Metrics;
use crate::sources::{ArtifactSource, Sources};

/// The controller's name: event source, field manager and `managed-by` label.
pub const CONTROLLER: &str = "source-watcher";

/// source-watcher's settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where events are also POSTed in Flux's format (`--events-addr`).
    pub events: Option<std::sync::Arc<crate::notification::webhook::EventWebhook>>,
    /// Generators reconciled at once (`--concurrent`, 10).
    pub concurrent: u16,
    /// Interval jitter (`--interval-jitter-percentage`, 5).
    pub jitter_percent: u8,
    /// Retry delay while a source is not ready (`--requeue-dependency`, 5s).
    pub requeue_dependency: Duration,
    /// Only this namespace (`--watch-all-namespaces=false`).
    pub namespace: Option<String>,
    /// Only generators matching this label selector (`--watch-label-selector`).
    pub watch_label_selector: Option<String>,
    /// Refuse sources in other namespaces (`--no-cross-namespace-refs`).
    pub no_cross_namespace_refs: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            events: None,
            concurrent: 10,
            jitter_percent: 5,
            requeue_dependency: Duration::from_secs(5),
            namespace: None,
            watch_label_selector: None,
            no_cross_namespace_refs: false,
        }
    }
}

/// What the reconciles share.
pub struct Context {
    client: Client,
    storage: Arc<Storage>,
    recorder: Recorder,
    metrics: Arc<Metrics>,
    options: Options,
    http: reqwest::Client,
    sources: Sources,
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

/// The sources a generator names, as `(kind, namespace, name)`.
fn sources_of(g: &ArtifactGenerator) -> impl Iterator<Item = (String, String, String)> + '_ {
    let own = g.namespace().unwrap_or_default();
    g.spec.sources.iter().map(move |s| {
        let ns = s
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| own.clone());
        (s.kind.clone(), ns, s.name.clone())
    })
}

/// Wakes the generators of a source whose artifact revision changed.
struct SourceTracker {
    generators: Store<ArtifactGenerator>,
    tx: futures::channel::mpsc::UnboundedSender<ObjectRef<ArtifactGenerator>>,
    seen: std::sync::Mutex<std::collections::HashMap<(String, String, String), String>>,
}

impl SourceTracker {
    fn observe<K: ArtifactSource>(&self, source: &K) {
        let Some(artifact) = source.artifact() else {
            return;
        };
        let key = (
            K::kind(&()).to_string(),
            source.namespace().unwrap_or_default(),
            source.name_any(),
        );
        let changed = {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            seen.insert(key.clone(), artifact.revision.clone())
                .as_deref()
                != Some(artifact.revision.as_str())
        };
        if !changed {
            return;
        }
        for g in self.generators.state() {
            if sources_of(&g).any(|s| s == key) {
                let _ = self.tx.unbounded_send(ObjectRef::from_obj(g.as_ref()));
            }
        }
    }
}

/// Runs the ArtifactGenerator controller until `shutdown` resolves; artifacts go to `storage`
/// (served by the same artifact server as the sources').
pub async fn run(
    client: Client,
    storage: Arc<Storage>,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let api: Api<ArtifactGenerator> = match &options.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let (reader, writer) = reflector::store();
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let tracker = Arc::new(SourceTracker {
        generators: reader.clone(),
        tx,
        seen: Default::default(),
    });
    let mut sources = Sources::default();
    let ns = options.namespace.clone();
    macro_rules! watch {
        ($k:ty) => {{
            let t = tracker.clone();
            sources.watch::<$k>(&client, ns.as_deref(), move |o| t.observe(o));
        }};
    }
    watch!(GitRepository);
    watch!(OCIRepository);
    watch!(Bucket);
    watch!(HelmChart);
    watch!(ExternalArtifact);
    if let Err(kind) = sources.ready().await {
        tracing::error!("the {kind} watch stopped before it synced");
        return;
    }
    let concurrency = options.concurrent.max(1);
    let selector = options.watch_label_selector.clone();
    let ctx = Arc::new(Context {
        recorder: Recorder::new(client.clone(), CONTROLLER).with_webhook(options.events.clone()),
        http: tidegate_source::tls::http_client(),
        client,
        storage,
        metrics,
        options,
        sources,
        backoff: crate::timing::Backoff::default(),
        versions: crate::fresh::Versions::default(),
    });
    let trigger = reflector::reflector(
        writer,
        watcher(api, crate::shared::watch_config(&selector)).default_backoff(),
    )
    .applied_objects()
    .predicate_filter(
        crate::shared::trigger_hash,
        kube::runtime::PredicateConfig::default(),
    );
    Controller::for_stream(trigger, reader)
        .reconcile_on(rx)
        .with_config(kube::runtime::controller::Config::default().concurrency(concurrency))
        .graceful_shutdown_on(shutdown)
        .run(
            reconcile_one,
            |_g: Arc<ArtifactGenerator>, err: &ReconcileError, _ctx: Arc<Context>| {
                Action::requeue(err.retry)
            },
            ctx,
        )
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "artifactgenerator controller");
            }
        })
        .await;
}

async fn reconcile_one(
    obj: Arc<ArtifactGenerator>,
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
