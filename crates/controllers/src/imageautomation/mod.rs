//! Flux's image-automation-controller: ImageUpdateAutomations write the images ImagePolicies
//! selected into their GitRepository (Setters strategy), commit (signed when asked) and push,
//! with Flux's conditions, reasons, messages and events. The Git work is
//! [`tidegate_source::image::update`]; the commit message is [`template`].

mod reconcile;
pub mod template;

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, ResourceExt};
use tidegate_api::{GitRepository, ImagePolicy, ImageUpdateAutomation};

use crate::events::Recorder;
use crate::metrics::Metrics;

/// The controller's name: event source and field manager.
pub const CONTROLLER: &str = "image-automation-controller";

/// The image-automation-controller's settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only objects matching this label selector.
    pub watch_label_selector: Option<String>,
    /// Refuse GitRepositories of other namespaces (`--no-cross-namespace-refs`).
    pub no_cross_namespace_refs: bool,
    /// Which GitRepositories may use `file://` URLs (as the source-controller's policy).
    pub file_urls: crate::file_urls::FileUrls,
    /// Flux's `GitForcePushBranch` feature gate (on): force-push a push branch that differs
    /// from the checkout branch.
    pub force_push_branch: bool,
    /// Where events are also posted.
    pub events: Option<Arc<crate::notification::webhook::EventWebhook>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            namespace: None,
            watch_label_selector: None,
            no_cross_namespace_refs: false,
            file_urls: Default::default(),
            force_push_branch: true,
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
    backoff: crate::timing::Backoff,
    versions: crate::fresh::Versions,
}

/// A reconcile's error (already in the status); carries the retry delay.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ReconcileError {
    message: String,
    retry: std::time::Duration,
}

/// The automations a GitRepository change concerns: those whose `sourceRef` names it.
fn for_git_repository(
    store: &Store<ImageUpdateAutomation>,
    repo: &GitRepository,
) -> Vec<ObjectRef<ImageUpdateAutomation>> {
    let (ns, name) = (repo.namespace().unwrap_or_default(), repo.name_any());
    store
        .state()
        .iter()
        .filter(|a| {
            let own = a.namespace().unwrap_or_default();
            let r = &a.spec.source_ref;
            let rns = r.namespace.clone().filter(|n| !n.is_empty()).unwrap_or(own);
            rns == ns && r.name == name
        })
        .map(|a| ObjectRef::from_obj(a.as_ref()))
        .collect()
}

/// The automations an ImagePolicy change concerns: every one of its namespace (the link is
/// through markers in Git).
fn for_image_policy(
    store: &Store<ImageUpdateAutomation>,
    policy: &ImagePolicy,
) -> Vec<ObjectRef<ImageUpdateAutomation>> {
    let ns = policy.namespace().unwrap_or_default();
    store
        .state()
        .iter()
        .filter(|a| a.namespace().unwrap_or_default() == ns)
        .map(|a| ObjectRef::from_obj(a.as_ref()))
        .collect()
}

/// Runs the controller until `shutdown`.
pub async fn run(
    client: Client,
    metrics: Arc<Metrics>,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let autos: Api<ImageUpdateAutomation> = crate::shared::api_in(&client, &options.namespace);
    let repos: Api<GitRepository> = crate::shared::api_in(&client, &options.namespace);
    let policies: Api<ImagePolicy> = crate::shared::api_in(&client, &options.namespace);
    let (reader, writer) = reflector::store();
    let selector = options.watch_label_selector.clone();
    let ctx = Arc::new(Context {
        recorder: Recorder::new(client.clone(), CONTROLLER).with_webhook(options.events.clone()),
        client,
        metrics,
        options,
        backoff: crate::timing::Backoff::default(),
        versions: crate::fresh::Versions::default(),
    });
    let trigger = reflector::reflector(
        writer,
        watcher(autos, crate::shared::watch_config(&selector)).default_backoff(),
    )
    .applied_objects()
    .predicate_filter(
        crate::shared::trigger_hash,
        kube::runtime::PredicateConfig::default(),
    );
    // Flux's predicates: a GitRepository whose generation changed; an ImagePolicy whose
    // `latestRef` changed (not on its creation). The two watches run on their own tasks and
    // hand the automations to reconcile over a channel, so they are read whatever the
    // controller is doing.
    let (related_tx, related_rx) =
        futures::channel::mpsc::unbounded::<ObjectRef<ImageUpdateAutomation>>();
    let store = reader.clone();
    let tx = related_tx.clone();
    let repo_task = tokio::spawn(async move {
        let mut generations: HashMap<(String, String), Option<i64>> = HashMap::new();
        let mut events = watcher(repos, watcher::Config::default())
            .default_backoff()
            .applied_objects()
            .boxed();
        while let Some(r) = events.next().await {
            let Ok(repo) = r else { continue };
            let key = (repo.namespace().unwrap_or_default(), repo.name_any());
            let generation = repo.metadata.generation;
            if let Some(old) = generations.insert(key, generation)
                && old != generation
            {
                for r in for_git_repository(&store, &repo) {
                    let _ = tx.unbounded_send(r);
                }
            }
        }
    });
    let store = reader.clone();
    let tx = related_tx;
    let policy_task = tokio::spawn(async move {
        let mut latest: HashMap<(String, String), Option<tidegate_api::imagepolicy::ImageRef>> =
            HashMap::new();
        let mut events = watcher(policies, watcher::Config::default())
            .default_backoff()
            .applied_objects()
            .boxed();
        while let Some(r) = events.next().await {
            let Ok(policy) = r else { continue };
            let key = (policy.namespace().unwrap_or_default(), policy.name_any());
            let now = policy.status.as_ref().and_then(|s| s.latest_ref.clone());
            if let Some(old) = latest.insert(key, now.clone())
                && now.is_some()
                && old != now
            {
                for r in for_image_policy(&store, &policy) {
                    let _ = tx.unbounded_send(r);
                }
            }
        }
    });
    Controller::for_stream(trigger, reader)
        .reconcile_on(related_rx)
        .graceful_shutdown_on(shutdown)
        .run(
            |obj, ctx| async move {
                let fresh =
                    crate::shared::fresh_or_retry(&ctx.client, &ctx.versions, &ctx.backoff, obj)
                        .await
                        .map_err(|(message, retry)| ReconcileError { message, retry })?;
                let Some(obj) = fresh else {
                    return Ok(Action::await_change());
                };
                crate::shared::timed(obj.as_ref(), &ctx.metrics.clone(), async {
                    reconcile::reconcile(&obj, &ctx).await
                })
                .await
            },
            |_o: Arc<ImageUpdateAutomation>, e: &ReconcileError, _c| Action::requeue(e.retry),
            ctx,
        )
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "imageupdateautomation controller");
            }
        })
        .await;
    repo_task.abort();
    policy_task.abort();
}
