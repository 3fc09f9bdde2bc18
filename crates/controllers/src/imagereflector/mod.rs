//! Flux's image-reflector-controller: ImageRepositories scanned for tags (kept outside the API
//! server, in [`tidegate_source::image::tags`]) and ImagePolicies choosing the latest tag of
//! one, with Flux's conditions, reasons, messages and events.

mod access;
mod policy;
mod registry;
mod repository;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, ResourceExt};
use tidegate_api::{ImagePolicy, ImageRepository};
use tidegate_source::image::tags::TagStore;

use crate::events::Recorder;
use crate::metrics::Metrics;

/// The controller's name: event source and field manager.
pub const CONTROLLER: &str = "image-reflector-controller";

/// The image-reflector-controller's settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only objects matching this label selector.
    pub watch_label_selector: Option<String>,
    /// Where scanned tags are kept (`--storage-path`).
    pub storage_path: PathBuf,
    /// Refuse ImageRepositories of other namespaces (`--no-cross-namespace-refs`).
    pub no_cross_namespace_refs: bool,
    /// Retry delay while a repository has no tags yet (`--requeue-dependency`).
    pub requeue_dependency: Duration,
    /// Where events are also posted.
    pub events: Option<Arc<crate::notification::webhook::EventWebhook>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            namespace: None,
            watch_label_selector: None,
            storage_path: PathBuf::from("/data"),
            no_cross_namespace_refs: false,
            requeue_dependency: Duration::from_secs(30),
            events: None,
        }
    }
}

/// What the reconciles share.
pub struct Context {
    client: Client,
    recorder: Recorder,
    metrics: Arc<Metrics>,
    options: Options,
    tags: TagStore,
    repositories: Store<ImageRepository>,
    backoff: crate::timing::Backoff,
    versions: crate::fresh::Versions,
}

/// A reconcile's error (already in the status); carries the retry delay.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ReconcileError {
    message: String,
    retry: Duration,
}

/// Runs both reconcilers until `shutdown`.
pub async fn run(
    client: Client,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let repos: Api<ImageRepository> = crate::shared::api_in(&client, &options.namespace);
    let policies: Api<ImagePolicy> = crate::shared::api_in(&client, &options.namespace);
    let (repo_reader, repo_writer) = reflector::store();
    let (policy_reader, policy_writer) = reflector::store();
    let selector = options.watch_label_selector.clone();
    let ctx = Arc::new(Context {
        recorder: Recorder::new(client.clone(), CONTROLLER).with_webhook(options.events.clone()),
        tags: TagStore::new(options.storage_path.clone()),
        client,
        metrics,
        options,
        repositories: repo_reader.clone(),
        backoff: crate::timing::Backoff::default(),
        versions: crate::fresh::Versions::default(),
    });
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    // ImageRepositories: reconciled on their own changes; every change of one (a new scan
    // result) also reaches the policies that read it.
    let repo_events = reflector::reflector(
        repo_writer,
        watcher(repos, crate::shared::watch_config(&selector)).default_backoff(),
    )
    .applied_objects();
    let (repo_tx, repo_rx) = futures::channel::mpsc::unbounded::<Arc<ImageRepository>>();
    // Flux's predicate for the policies: a repository seen for the first time, or a new scan
    // revision (status writes that change nothing else do not re-run the policies).
    let mut seen: std::collections::HashMap<(String, String), Option<String>> = Default::default();
    let repo_changes = repo_events.map(move |r| {
        if let Ok(repo) = &r {
            let key = (repo.namespace().unwrap_or_default(), repo.name_any());
            let revision = repo
                .status
                .as_ref()
                .and_then(|s| s.last_scan_result.as_ref())
                .map(|l| l.revision.clone());
            let changed = match seen.get(&key) {
                None => true,
                Some(old) => revision.is_some() && *old != revision,
            };
            if changed {
                seen.insert(key, revision);
                let _ = repo_tx.unbounded_send(Arc::new(repo.clone()));
            }
        }
        r
    });
    let repo_trigger = repo_changes.predicate_filter(
        crate::shared::trigger_hash,
        kube::runtime::PredicateConfig::default(),
    );
    let repo_ctx = ctx.clone();
    let repo_controller = Controller::for_stream(repo_trigger, repo_reader)
        .graceful_shutdown_on(stopped())
        .run(
            |obj, ctx| async move { reconcile_repository(obj, ctx).await },
            |_o: Arc<ImageRepository>, e: &ReconcileError, _c| Action::requeue(e.retry),
            repo_ctx,
        )
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "imagerepository controller");
            }
        });
    let policy_trigger = reflector::reflector(
        policy_writer,
        watcher(policies, crate::shared::watch_config(&selector)).default_backoff(),
    )
    .applied_objects()
    .predicate_filter(
        crate::shared::trigger_hash,
        kube::runtime::PredicateConfig::default(),
    );
    let store = policy_reader.clone();
    let scanned = repo_rx.flat_map(move |repo| {
        let (ns, name) = (repo.namespace().unwrap_or_default(), repo.name_any());
        let refs: Vec<ObjectRef<ImagePolicy>> = store
            .state()
            .iter()
            .filter(|p| {
                let pns = p.namespace().unwrap_or_default();
                let rns = p
                    .spec
                    .image_repository_ref
                    .namespace
                    .clone()
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| pns.clone());
                rns == ns && p.spec.image_repository_ref.name == name
            })
            .map(|p| ObjectRef::from_obj(p.as_ref()))
            .collect();
        futures::stream::iter(refs)
    });
    let policy_controller = Controller::for_stream(policy_trigger, policy_reader)
        .reconcile_on(scanned)
        .graceful_shutdown_on(stopped())
        .run(
            |obj, ctx| async move { reconcile_policy(obj, ctx).await },
            |_o: Arc<ImagePolicy>, e: &ReconcileError, _c| Action::requeue(e.retry),
            ctx,
        )
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "imagepolicy controller");
            }
        });
    let both = futures::future::join(repo_controller, policy_controller);
    tokio::pin!(both);
    tokio::select! {
        _ = &mut both => {}
        _ = shutdown => {
            let _ = stop_tx.send(true);
            both.await;
        }
    }
}

async fn reconcile_repository(
    obj: Arc<ImageRepository>,
    ctx: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let obj =
        match crate::shared::fresh_or_retry(&ctx.client, &ctx.versions, &ctx.backoff, obj).await {
            Ok(Some(fresh)) => fresh,
            Ok(None) => return Ok(Action::await_change()),
            Err((message, retry)) => return Err(ReconcileError { message, retry }),
        };
    crate::shared::timed(
        obj.as_ref(),
        &ctx.metrics,
        repository::reconcile(&obj, &ctx),
    )
    .await
}

async fn reconcile_policy(
    obj: Arc<ImagePolicy>,
    ctx: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let obj =
        match crate::shared::fresh_or_retry(&ctx.client, &ctx.versions, &ctx.backoff, obj).await {
            Ok(Some(fresh)) => fresh,
            Ok(None) => return Ok(Action::await_change()),
            Err((message, retry)) => return Err(ReconcileError { message, retry }),
        };
    crate::shared::timed(obj.as_ref(), &ctx.metrics, policy::reconcile(&obj, &ctx)).await
}
