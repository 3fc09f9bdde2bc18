//! What every source reconciler (GitRepository, OCIRepository, …) shares: the conditions and
//! events of a finished run, the storage check, status patches, deletion, and credentials from
//! Secrets. Each kind supplies only its own steps (fetch, verify, pack).

pub(crate) mod failure;
pub(crate) mod proxy;
pub(crate) mod pull_secrets;
pub(crate) mod verify;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::controller::Action;
use kube::{Api, Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tidegate_api::conditions::{self, READY, RECONCILING, STALLED};
use tidegate_api::meta::{Artifact, RECONCILE_REQUESTED_AT};
use tidegate_source::storage::Storage;

use crate::events::{EventType, Recorder};
use crate::metrics::Metrics;
use crate::timing::{Backoff, jittered};
use failure::{
    ARTIFACT_IN_STORAGE, ARTIFACT_OUTDATED, BUILD_FAILED, FETCH_FAILED, Failure,
    INCLUDE_UNAVAILABLE, Retry, SOURCE_VERIFIED, STORAGE_FAILED, SUMMARY,
};

/// The status fields every source kind has.
pub(crate) trait SourceStatus: Clone + Default + Serialize + Send + Sync {
    fn conditions(&mut self) -> &mut Vec<Condition>;
    fn artifact(&mut self) -> &mut Option<Artifact>;
    fn observed_generation(&mut self) -> &mut Option<i64>;
    fn last_handled_reconcile_at(&mut self) -> &mut Option<String>;
}

/// Implements [`SourceStatus`] for a status struct with the usual field names.
macro_rules! source_status {
    ($ty:ty) => {
        impl $crate::source::SourceStatus for $ty {
            fn conditions(
                &mut self,
            ) -> &mut Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> {
                &mut self.conditions
            }
            fn artifact(&mut self) -> &mut Option<tidegate_api::meta::Artifact> {
                &mut self.artifact
            }
            fn observed_generation(&mut self) -> &mut Option<i64> {
                &mut self.observed_generation
            }
            fn last_handled_reconcile_at(&mut self) -> &mut Option<String> {
                &mut self.last_handled_reconcile_at
            }
        }
    };
}

/// Implements [`SourceStatus`] and [`Source`] for a kind with `spec.suspend` and a required
/// `spec.interval`.
macro_rules! source_kind {
    ($ty:ty, $status:ty, $kind:literal) => {
        source_status!($status);

        impl Source for $ty {
            type Status = $status;
            const KIND: &'static str = $kind;
            fn status(&self) -> Option<&Self::Status> {
                self.status.as_ref()
            }
            fn suspended(&self) -> bool {
                self.spec.suspend
            }
            fn interval(&self) -> &str {
                &self.spec.interval
            }
        }
    };
}

/// A source kind.
pub(crate) trait Source:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + Serialize
    + DeserializeOwned
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    type Status: SourceStatus;
    /// The kind, as storage paths name it (`GitRepository`).
    const KIND: &'static str;
    fn status(&self) -> Option<&Self::Status>;
    fn suspended(&self) -> bool;
    fn interval(&self) -> &str;
}

/// More reasons to reconcile objects of kind `K` than their own changes: given the
/// controller's store of `K`, a stream of the objects to reconcile (HelmCharts when their
/// HelmRepository's artifact changes).
pub(crate) type ExtraTriggers<K> = Box<
    dyn FnOnce(
            kube::runtime::reflector::Store<K>,
        )
            -> futures::stream::BoxStream<'static, kube::runtime::reflector::ObjectRef<K>>
        + Send,
>;

/// A kind's reconcile of one (fresh) object.
pub(crate) type KindReconcile<K> =
    fn(Arc<K>, Arc<Context>) -> futures::future::BoxFuture<'static, Result<Action, ReconcileError>>;

/// The state every source reconciler shares (one per kind's controller).
pub struct Context {
    pub(crate) client: Client,
    pub(crate) storage: Arc<Storage>,
    pub(crate) recorder: Recorder,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) backoff: Backoff,
    pub(crate) options: crate::gitrepository::Options,
    pub(crate) http: reqwest::Client,
    /// The newest resourceVersion of each object written or read (read-your-writes).
    pub(crate) versions: crate::fresh::Versions,
}

impl Context {
    /// What [`reconcile`] needs of the context.
    pub(crate) fn shared(&self) -> Shared<'_> {
        Shared {
            client: &self.client,
            storage: &self.storage,
            recorder: &self.recorder,
            metrics: &self.metrics,
            backoff: &self.backoff,
            versions: &self.versions,
            jitter_percent: self.options.jitter_percent,
        }
    }
}

/// Runs the controller of source kind `K` until `shutdown` resolves: a watch (filtered by the
/// sharding label selector) that triggers on what Flux triggers on (a new generation, a
/// changed `requestedAt`, a deletion; never our own status writes), `--concurrent`
/// reconciles of `reconcile_kind` on a fresh copy of the object, backoff on failure.
pub(crate) async fn run<K: Source>(
    client: Client,
    storage: Arc<Storage>,
    metrics: Arc<Metrics>,
    options: crate::gitrepository::Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
    reconcile_kind: KindReconcile<K>,
    extra_triggers: Option<ExtraTriggers<K>>,
) {
    use futures::StreamExt;
    use kube::runtime::controller::Controller;
    use kube::runtime::{WatchStreamExt, reflector, watcher};
    let api: Api<K> = match &options.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let concurrency = options.concurrent.max(1);
    let watch = crate::shared::watch_config(&options.watch_label_selector);
    let ctx = Arc::new(Context {
        recorder: Recorder::new(client.clone(), "source-controller")
            .with_webhook(options.events.clone()),
        client,
        storage,
        metrics,
        backoff: Backoff::default(),
        options,
        http: tidegate_source::tls::http_client(),
        versions: crate::fresh::Versions::default(),
    });
    let (reader, writer) = reflector::store();
    let trigger = reflector::reflector(writer, watcher(api, watch).default_backoff())
        .applied_objects()
        .predicate_filter(
            crate::shared::trigger_hash,
            kube::runtime::PredicateConfig::default(),
        );
    let mut controller = Controller::for_stream(trigger, reader.clone());
    if let Some(extra) = extra_triggers {
        controller = controller.reconcile_on(extra(reader));
    }
    controller
        .with_config(kube::runtime::controller::Config::default().concurrency(concurrency))
        .graceful_shutdown_on(shutdown)
        .run(
            move |obj: Arc<K>, ctx: Arc<Context>| async move {
                let ns = obj.namespace().unwrap_or_default();
                let api: Api<K> = Api::namespaced(ctx.client.clone(), &ns);
                let obj = match ctx.versions.fresh(&api, obj.clone()).await {
                    Ok(Some(fresh)) => fresh,
                    Ok(None) => return Ok(Action::await_change()),
                    Err(message) => {
                        return Err(ReconcileError {
                            retry: ctx.backoff.failed(&format!("{ns}/{}", obj.name_any())),
                            message,
                        });
                    }
                };
                crate::shared::timed(
                    obj.as_ref(),
                    &ctx.metrics,
                    reconcile_kind(obj.clone(), ctx.clone()),
                )
                .await
            },
            |_obj: Arc<K>, err: &ReconcileError, _ctx: Arc<Context>| Action::requeue(err.retry),
            ctx,
        )
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(kind = K::KIND, error = %e, "source controller");
            }
        })
        .await;
}

/// What a source reconciler's context offers the shared code.
pub(crate) struct Shared<'a> {
    pub client: &'a Client,
    pub storage: &'a Arc<Storage>,
    pub recorder: &'a Recorder,
    pub metrics: &'a Metrics,
    pub backoff: &'a Backoff,
    pub versions: &'a crate::fresh::Versions,
    pub jitter_percent: u8,
}

/// The reconciler's error: already reported in the status; carries the retry delay.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ReconcileError {
    pub(crate) message: String,
    pub(crate) retry: Duration,
}

/// A successful run of a kind's steps.
pub(crate) struct Done {
    /// The revision stored.
    pub revision: String,
    /// `ArtifactInStorage`'s (and so Ready's) message.
    pub ready_message: String,
    /// The event message for a new artifact (reason `NewArtifact`), and for a recovery
    /// (reason `Succeeded`) when the artifact did not change.
    pub new_artifact_message: String,
    /// A verification's message (`SourceVerified=True`).
    pub verified: Option<String>,
    /// `ArtifactInStorage`'s reason (`Succeeded`; HelmChart: `ChartPullSucceeded`, …).
    pub reason: &'static str,
}

/// One reconcile of a source: deletion, finalizer, suspend, the progress condition, the kind's
/// `steps`, then conditions, events, metrics and the status patch, as Flux's source-controller
/// does for every kind.
pub(crate) async fn reconcile<K: Source>(
    obj: &K,
    sh: &Shared<'_>,
    steps: impl AsyncFnOnce(&mut K::Status) -> Result<Done, Failure>,
) -> Result<Action, ReconcileError> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let api: Api<K> = Api::namespaced(sh.client.clone(), &ns);
    let labels = crate::metrics::ObjectLabels::of(obj);
    let fail = |message: String| ReconcileError {
        message,
        retry: sh.backoff.failed(&format!("{ns}/{name}")),
    };

    if obj.meta().deletion_timestamp.is_some() {
        return delete(obj, sh, &api).await.map_err(fail);
    }
    crate::finalizer::add(&api, obj, sh.versions)
        .await
        .map_err(fail)?;
    if crate::shared::check_suspended(obj, obj.suspended(), sh.metrics) {
        return Ok(Action::await_change());
    }

    let generation = obj.meta().generation;
    let mut written = obj.status().cloned().unwrap_or_default();
    let mut st = written.clone();
    if *st.observed_generation() != generation {
        let message = format!(
            "processing object: new generation {} -> {}",
            st.observed_generation().unwrap_or(-1),
            generation.unwrap_or(0)
        );
        progressing(st.conditions(), &message, generation);
        patch_status(&api, sh.versions, &name, &written, &st)
            .await
            .map_err(fail)?;
        written = st.clone();
    }

    let interval =
        tidegate_core::duration::parse(obj.interval()).unwrap_or(Duration::from_secs(60));
    let had_failure = [
        FETCH_FAILED,
        BUILD_FAILED,
        INCLUDE_UNAVAILABLE,
        STORAGE_FAILED,
    ]
    .iter()
    .any(|c| conditions::is_true(st.conditions(), c));
    // The artifact at the start: a new one with the same digest (rebuilt after it vanished
    // from storage) is not a new artifact.
    let old_digest = st.artifact().as_ref().map(|a| a.digest.clone());
    check_storage(obj, sh, &mut st, generation).await;
    let outcome = steps(&mut st).await;
    let action;
    let mut error = None;
    match outcome {
        Ok(done) => {
            let cs = st.conditions();
            for c in [
                FETCH_FAILED,
                BUILD_FAILED,
                STORAGE_FAILED,
                ARTIFACT_OUTDATED,
                INCLUDE_UNAVAILABLE,
                RECONCILING,
                STALLED,
            ] {
                conditions::delete(cs, c);
            }
            conditions::set(
                cs,
                ARTIFACT_IN_STORAGE,
                true,
                done.reason,
                &done.ready_message,
                generation,
            );
            if let Some(v) = &done.verified {
                conditions::set(cs, SOURCE_VERIFIED, true, "Succeeded", v, generation);
                sh.recorder
                    .publish(obj, EventType::Normal, "Succeeded", v, &[])
                    .await;
            }
            conditions::summarize(st.conditions(), SUMMARY, generation);
            *st.observed_generation() = generation;
            sh.backoff.succeeded(&format!("{ns}/{name}"));
            action = if interval.is_zero() {
                // No periodic reconcile for a zero interval (only changes and requests).
                Action::await_change()
            } else {
                Action::requeue(jittered(interval, sh.jitter_percent))
            };
            let annotations = artifact_annotations(st.artifact().as_ref());
            let new_digest = st.artifact().as_ref().map(|a| a.digest.clone());
            if new_digest != old_digest {
                let note = &done.new_artifact_message;
                tracing::info!(name, namespace = ns, revision = done.revision, "{note}");
                let reason = if done.reason == "Succeeded" {
                    "NewArtifact"
                } else {
                    done.reason
                };
                sh.recorder
                    .publish(obj, EventType::Normal, reason, note, &annotations)
                    .await;
            } else if had_failure {
                sh.recorder
                    .publish(
                        obj,
                        EventType::Normal,
                        "Succeeded",
                        &done.new_artifact_message,
                        &annotations,
                    )
                    .await;
            }
        }
        Err(f) => {
            let cs = st.conditions();
            if f.condition == SOURCE_VERIFIED {
                conditions::set(
                    cs,
                    SOURCE_VERIFIED,
                    false,
                    &f.reason,
                    &f.message,
                    generation,
                );
            } else {
                conditions::set(cs, f.condition, true, &f.reason, &f.message, generation);
                // A chart fails either fetching or building, never both (Flux's HelmChart).
                match f.condition {
                    FETCH_FAILED => conditions::delete(cs, BUILD_FAILED),
                    BUILD_FAILED => conditions::delete(cs, FETCH_FAILED),
                    _ => {}
                }
            }
            tracing::warn!(name, namespace = ns, reason = f.reason, "{}", f.message);
            match f.retry {
                Retry::Stall => {
                    conditions::delete(cs, RECONCILING);
                    conditions::set(cs, STALLED, true, &f.reason, &f.message, generation);
                    *st.observed_generation() = generation;
                    action = Action::await_change();
                }
                Retry::Wait(d) => {
                    conditions::delete(cs, STALLED);
                    action = Action::requeue(d);
                }
                Retry::Backoff => {
                    conditions::delete(cs, STALLED);
                    let msg = conditions::get(cs, RECONCILING)
                        .map(|c| c.message.clone())
                        .unwrap_or_else(|| "reconciliation in progress".to_string());
                    conditions::set(
                        cs,
                        RECONCILING,
                        true,
                        "ProgressingWithRetry",
                        &msg,
                        generation,
                    );
                    error = Some(f.message.clone());
                    action = Action::requeue(Duration::ZERO);
                }
            }
            conditions::summarize(st.conditions(), SUMMARY, generation);
            if f.condition == SOURCE_VERIFIED {
                // A failed verification forces Ready=False with its reason (Flux's bipolarity).
                conditions::set(
                    st.conditions(),
                    READY,
                    false,
                    &f.reason,
                    &f.message,
                    generation,
                );
            }
            let kind = if matches!(f.retry, Retry::Wait(_)) {
                EventType::Normal
            } else {
                EventType::Warning
            };
            sh.recorder
                .publish(obj, kind, &f.reason, &f.message, &[])
                .await;
        }
    }
    if let Some(at) = obj.annotations().get(RECONCILE_REQUESTED_AT) {
        *st.last_handled_reconcile_at() = Some(at.clone());
    }
    patch_status(&api, sh.versions, &name, &written, &st)
        .await
        .map_err(fail)?;
    for c in st.conditions().iter() {
        if c.type_ == READY || c.type_ == RECONCILING || c.type_ == STALLED {
            sh.metrics.record_condition(&labels, &c.type_, &c.status);
        }
    }
    match error {
        Some(message) => Err(fail(message)),
        None => Ok(action),
    }
}

/// Sets `Reconciling=True` (and `Ready=Unknown` when Ready is not known yet).
pub(crate) fn progressing(cs: &mut Vec<Condition>, message: &str, generation: Option<i64>) {
    conditions::set(cs, RECONCILING, true, "Progressing", message, generation);
    let ready_unknown = conditions::get(cs, READY).is_none_or(|c| c.status == "Unknown");
    if ready_unknown {
        conditions::set_status(cs, READY, "Unknown", "Progressing", message, generation);
    }
}

/// Marks the stored artifact outdated (`ArtifactOutdated=True` with `reason`) and the object
/// progressing towards a new one (`building artifact: <message>`).
pub(crate) fn outdated(
    cs: &mut Vec<Condition>,
    reason: &str,
    message: &str,
    generation: Option<i64>,
) {
    conditions::set(cs, ARTIFACT_OUTDATED, true, reason, message, generation);
    progressing(cs, &format!("building artifact: {message}"), generation);
}

/// The annotations of `NewArtifact` events.
fn artifact_annotations(a: Option<&Artifact>) -> Vec<(&'static str, String)> {
    match a {
        Some(a) => vec![
            ("source.toolkit.fluxcd.io/revision", a.revision.clone()),
            ("source.toolkit.fluxcd.io/digest", a.digest.clone()),
        ],
        None => Vec::new(),
    }
}

/// Patches the status with the difference between `old` and `new` (nothing when equal).
pub(crate) async fn patch_status<K: Source>(
    api: &Api<K>,
    versions: &crate::fresh::Versions,
    name: &str,
    old: &K::Status,
    new: &K::Status,
) -> Result<(), String> {
    crate::status::patch(api, versions, name, old, new).await
}

/// Removes the artifacts of a deleted source, then its finalizer.
async fn delete<K: Source>(obj: &K, sh: &Shared<'_>, api: &Api<K>) -> Result<Action, String> {
    if !crate::finalizer::has(obj) {
        return Ok(Action::await_change());
    }
    let ns = obj.namespace().unwrap_or_default();
    let storage = sh.storage.clone();
    let (n, nm) = (ns.clone(), obj.name_any());
    let removed = tokio::task::spawn_blocking(move || storage.remove_all(K::KIND, &n, &nm))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("garbage collection for deleted resource failed: {e}"))?;
    if removed {
        tracing::info!(
            name = obj.name_any(),
            namespace = ns,
            "garbage collected artifacts for deleted resource"
        );
    }
    crate::finalizer::remove(api, obj).await?;
    sh.versions.forget(obj);
    Ok(Action::await_change())
}

/// Drops a status artifact whose file is gone or altered; collects old artifacts.
async fn check_storage<K: Source>(
    obj: &K,
    sh: &Shared<'_>,
    st: &mut K::Status,
    generation: Option<i64>,
) {
    let Some(a) = st.artifact().clone() else {
        return;
    };
    let storage = sh.storage.clone();
    let (path, digest) = (a.path.clone(), a.digest.clone());
    // Some(true): present and intact; Some(false): altered (and removed); None: missing.
    let state = tokio::task::spawn_blocking(move || {
        let _ = storage.garbage_collect(&path);
        if !storage.exists(&path) {
            return None;
        }
        let intact = storage.verify(&path, &digest).unwrap_or(false);
        if !intact && let Ok(file) = storage.local_path(&path) {
            let _ = std::fs::remove_file(file);
        }
        Some(intact)
    })
    .await
    .unwrap_or(None);
    if state == Some(true) {
        // As Flux does: the URL follows the storage's current address (a restarted artifact
        // server may listen elsewhere).
        let url = sh.storage.url(&a.path);
        if let Some(artifact) = st.artifact().as_mut()
            && artifact.url != url
        {
            artifact.url = url;
        }
        return;
    }
    if state == Some(false) {
        let message = format!(
            "failed to verify integrity of artifact: computed digest doesn't match '{}'",
            a.digest
        );
        sh.recorder
            .publish(
                obj,
                EventType::Warning,
                "ArtifactVerificationFailed",
                &message,
                &[],
            )
            .await;
    }
    *st.artifact() = None;
    conditions::delete(st.conditions(), ARTIFACT_IN_STORAGE);
    let message = if state.is_none() {
        "building artifact: disappeared from storage"
    } else {
        "building artifact"
    };
    progressing(st.conditions(), message, generation);
}

/// The client certificate of a TLS Secret's data: `tls.crt` and `tls.key` joined as one PEM
/// bundle, `None` when neither is given, `Err` when only one is.
pub(crate) fn client_pem(data: &BTreeMap<String, Vec<u8>>) -> Result<Option<Vec<u8>>, ()> {
    match (data.get("tls.crt"), data.get("tls.key")) {
        (Some(c), Some(k)) => {
            let mut pem = c.clone();
            pem.push(b'\n');
            pem.extend_from_slice(k);
            Ok(Some(pem))
        }
        (None, None) => Ok(None),
        _ => Err(()),
    }
}

/// A Secret's data (and stringData), or Flux's message when it cannot be read.
pub(crate) async fn secret_data(
    client: &Client,
    ns: &str,
    name: &str,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    Ok(secret(client, ns, name).await?.1)
}

/// A Secret's type and data (and stringData), or Flux's message when it cannot be read.
pub(crate) async fn secret(
    client: &Client,
    ns: &str,
    name: &str,
) -> Result<(String, BTreeMap<String, Vec<u8>>), String> {
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    let secret = api.get(name).await.map_err(|e| {
        let detail = match &e {
            kube::Error::Api(s) => s.message.clone(),
            other => other.to_string(),
        };
        format!("failed to get secret '{ns}/{name}': {detail}")
    })?;
    let mut data: BTreeMap<String, Vec<u8>> = secret
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    for (k, v) in secret.string_data.unwrap_or_default() {
        data.insert(k, v.into_bytes());
    }
    Ok((secret.type_.unwrap_or_default(), data))
}

source_kind!(
    tidegate_api::GitRepository,
    tidegate_api::gitrepository::GitRepositoryStatus,
    "GitRepository"
);

source_kind!(
    tidegate_api::OCIRepository,
    tidegate_api::ocirepository::OCIRepositoryStatus,
    "OCIRepository"
);

source_status!(tidegate_api::helmrepository::HelmRepositoryStatus);

impl Source for tidegate_api::HelmRepository {
    type Status = tidegate_api::HelmRepositoryStatus;
    const KIND: &'static str = "HelmRepository";
    fn status(&self) -> Option<&Self::Status> {
        self.status.as_ref()
    }
    fn suspended(&self) -> bool {
        self.spec.suspend
    }
    fn interval(&self) -> &str {
        self.spec.interval.as_deref().unwrap_or("10m")
    }
}

source_kind!(
    tidegate_api::HelmChart,
    tidegate_api::helmchart::HelmChartStatus,
    "HelmChart"
);

source_kind!(
    tidegate_api::Bucket,
    tidegate_api::bucket::BucketStatus,
    "Bucket"
);

/// An artifact's `lastUpdateTime`: now, to the second (RFC 3339).
pub(crate) fn artifact_time() -> String {
    k8s_openapi::jiff::Timestamp::from_second(conditions::now().as_second())
        .map(|t| t.to_string())
        .unwrap_or_default()
}
