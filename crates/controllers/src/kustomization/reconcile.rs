//! One Kustomization reconcile, in Flux's order: finalizer, suspend, source, dependencies,
//! build, apply in stages, inventory, prune, health, status. Reasons, messages and events are
//! Flux's. A failure before the apply writes nothing to the cluster and prunes nothing.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::Value;
use tidegate_api::Kustomization;
use tidegate_api::conditions::{self, READY, RECONCILING, STALLED};
use tidegate_api::kustomization::{KustomizationStatus, ResourceInventory};
use tidegate_api::meta::{Artifact, RECONCILE_REQUESTED_AT};
use tidegate_apply::{
    Action as ChangeAction, ApplyOptions, Inventory, InventoryEntry, ResourceManager, WaitOptions,
};
use tidegate_core::ObjectRef;
use tidegate_core::duration::format as go;

use super::build::ARTIFACT_FAILED;
use super::{Context, ReconcileError, build, dependencies, key};
use crate::events::EventType;
use crate::sources::Found;
use crate::timing::jittered;

/// `Healthy`: the result of the last health check.
pub const HEALTHY: &str = "Healthy";
const PROGRESSING: &str = "Progressing";
const SUCCEEDED: &str = "ReconciliationSucceeded";
const FAILED: &str = "ReconciliationFailed";
const HEALTH_CHECK_FAILED: &str = "HealthCheckFailed";
const PRUNE_FAILED: &str = "PruneFailed";
const DEPENDENCY_NOT_READY: &str = "DependencyNotReady";
/// The annotation carrying the revision on events.
const REVISION_ANNOTATION: &str = "kustomize.toolkit.fluxcd.io/revision";
/// Marks the event commit status providers turn into a status.
const COMMIT_STATUS_ANNOTATION: &str = "kustomize.toolkit.fluxcd.io/commit_status";

/// When to try again after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Retry {
    /// After `spec.retryInterval`.
    Interval,
    /// After `--requeue-dependency` (a source or dependency not ready yet).
    Dependency,
    /// Shortly: the step is still running elsewhere (an artifact download). Nothing failed, so
    /// Ready stays as it was and only `Reconciling` says what is being waited for.
    Soon,
    /// Not until the object changes: Stalled (Flux's terminal errors, such as AccessDenied).
    Never,
}

/// The reason of a reference the controller's lockdown refuses (Flux's `acl.AccessDeniedReason`).
pub(super) const ACCESS_DENIED: &str = "AccessDenied";

/// When a reconcile waiting on a running download looks again.
const SOON: Duration = Duration::from_secs(5);

/// A failed step: the Ready reason and message.
#[derive(Debug)]
pub(super) struct Failure {
    pub reason: &'static str,
    pub message: String,
    pub retry: Retry,
}

impl Failure {
    pub(super) fn new(reason: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            reason,
            message: message.into(),
            retry: Retry::Interval,
        }
    }
}

/// The durations a Kustomization runs by (Flux's defaults).
struct Timing {
    interval: Duration,
    retry: Duration,
    timeout: Duration,
}

fn timing(obj: &Kustomization) -> Timing {
    let parse = |s: &str| tidegate_core::duration::parse(s).ok();
    let interval = parse(&obj.spec.interval).unwrap_or(Duration::from_secs(600));
    let retry = obj
        .spec
        .retry_interval
        .as_deref()
        .and_then(parse)
        .unwrap_or(interval);
    let timeout = obj
        .spec
        .timeout
        .as_deref()
        .and_then(parse)
        .unwrap_or_else(|| interval.saturating_sub(Duration::from_secs(30)))
        .max(Duration::from_secs(30));
    Timing {
        interval,
        retry,
        timeout,
    }
}

/// The status as written, and the status being built; patches send the difference.
struct Status<'a> {
    api: &'a Api<Kustomization>,
    versions: &'a crate::fresh::Versions,
    name: String,
    written: KustomizationStatus,
    st: KustomizationStatus,
    generation: Option<i64>,
    /// The worker permit held while this reconcile builds and applies; given back before it
    /// waits for health.
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Status<'_> {
    async fn flush(&mut self) -> Result<(), String> {
        crate::status::patch(self.api, self.versions, &self.name, &self.written, &self.st).await?;
        self.written = self.st.clone();
        Ok(())
    }

    fn set(&mut self, type_: &str, status: &str, reason: &str, message: &str) {
        conditions::set_status(
            &mut self.st.conditions,
            type_,
            status,
            reason,
            message,
            self.generation,
        );
    }

    fn ready_reason(&self) -> String {
        conditions::get(&self.st.conditions, READY)
            .map(|c| c.reason.clone())
            .unwrap_or_else(|| PROGRESSING.into())
    }

    /// `Reconciling=True` with `message`; when `announce`, `Ready=Unknown` as well.
    async fn progress(&mut self, message: &str, announce: bool) -> Result<(), String> {
        self.set(RECONCILING, "True", PROGRESSING, message);
        if announce {
            self.set(READY, "Unknown", PROGRESSING, "Reconciliation in progress");
        }
        self.flush().await
    }
}

/// `permit`: the worker permit this reconcile runs under (given back while it waits for
/// health).
pub(super) async fn reconcile(
    obj: &Kustomization,
    ctx: &Context,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
) -> Result<Action, ReconcileError> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let api: Api<Kustomization> = Api::namespaced(ctx.client.clone(), &ns);
    let labels = crate::metrics::ObjectLabels::of(obj);
    let t = timing(obj);
    // Requests to the cluster that failed (status, finalizer): exponential backoff.
    let fail = |message: String| ReconcileError {
        message,
        retry: ctx.backoff.failed(&key(&ns, &name)),
    };

    if obj.metadata.deletion_timestamp.is_some() {
        return finalize(obj, ctx, &api).await.map_err(fail);
    }
    crate::finalizer::add(&api, obj, &ctx.versions)
        .await
        .map_err(fail)?;
    if crate::shared::check_suspended(obj, obj.spec.suspend.unwrap_or(false), &ctx.metrics) {
        return Ok(Action::await_change());
    }

    let started = Instant::now();
    let written = obj.status.clone().unwrap_or_default();
    let mut status = Status {
        api: &api,
        versions: &ctx.versions,
        name: name.clone(),
        st: written.clone(),
        written,
        generation: obj.metadata.generation,
        permit,
    };
    let requested = obj.annotations().get(RECONCILE_REQUESTED_AT).cloned();
    if let Err(e) = crate::shared::custom_health(&obj.spec.health_check_exprs) {
        return stall_invalid_cel(obj, ctx, &mut status, &requested, &e)
            .await
            .map_err(fail);
    }
    if conditions::get(&status.st.conditions, STALLED).is_some_and(|c| {
        c.reason == crate::shared::INVALID_CEL_EXPRESSION || c.reason == ACCESS_DENIED
    }) {
        conditions::delete(&mut status.st.conditions, STALLED);
    }
    let outcome = match source_artifact(obj, ctx) {
        Err(f) => Err(f),
        Ok(artifact) => {
            match dependencies::check(
                obj,
                &ctx.kustomizations,
                &artifact.revision,
                ctx.options.no_cross_namespace_refs,
            ) {
                Err(dependencies::NotReady::InvalidExpr(e)) => {
                    return stall_invalid_cel(obj, ctx, &mut status, &requested, &e)
                        .await
                        .map_err(fail);
                }
                Err(dependencies::NotReady::Waiting(message)) => {
                    status.set(READY, "False", DEPENDENCY_NOT_READY, &message);
                    let note = format!(
                        "Dependencies do not meet ready condition, retrying in {}",
                        go(ctx.options.requeue_dependency)
                    );
                    tracing::info!(name, namespace = ns, "{note}");
                    finish_status(&mut status, &requested, false);
                    status.flush().await.map_err(fail)?;
                    ctx.recorder
                        .publish(
                            obj,
                            EventType::Normal,
                            DEPENDENCY_NOT_READY,
                            &note,
                            &[(REVISION_ANNOTATION, artifact.revision.clone())],
                        )
                        .await;
                    record_conditions(ctx, &labels, &status.st);
                    return Ok(Action::requeue(ctx.options.requeue_dependency));
                }
                Ok(()) => steps(obj, ctx, &mut status, &artifact, &t, &requested)
                    .await
                    .map(|done| (done, artifact)),
            }
        }
    };

    let action = match outcome {
        Ok((done, artifact)) => {
            let message = format!("Applied revision: {}", artifact.revision);
            status.set(READY, "True", SUCCEEDED, &message);
            conditions::delete(&mut status.st.conditions, STALLED);
            status.st.last_applied_revision = Some(artifact.revision.clone());
            finish_status(&mut status, &requested, true);
            status.flush().await.map_err(fail)?;
            let note = format!(
                "Reconciliation finished in {}, next run in {}",
                go(started.elapsed()),
                go(t.interval)
            );
            tracing::info!(name, namespace = ns, revision = artifact.revision, "{note}");
            // Flux sends this event after every successful run (commit status providers
            // want it each interval); a run that changed nothing records no Kubernetes Event.
            let metadata = [
                (REVISION_ANNOTATION, artifact.revision.clone()),
                (COMMIT_STATUS_ANNOTATION, "update".to_string()),
            ];
            if done.announce {
                ctx.recorder
                    .publish(obj, EventType::Normal, SUCCEEDED, &note, &metadata)
                    .await;
            } else {
                ctx.recorder
                    .notify(obj, EventType::Normal, SUCCEEDED, &note, &metadata);
            }
            if t.interval.is_zero() {
                Action::await_change()
            } else {
                Action::requeue(jittered(t.interval, ctx.options.jitter_percent))
            }
        }
        Err(f) if f.retry == Retry::Soon => {
            status.progress(&f.message, false).await.map_err(fail)?;
            tracing::info!(name, namespace = ns, "{}", f.message);
            Action::requeue(SOON)
        }
        Err(f) if f.retry == Retry::Never => {
            status.set(READY, "False", f.reason, &f.message);
            status.set(STALLED, "True", f.reason, &f.message);
            conditions::delete(&mut status.st.conditions, RECONCILING);
            status.st.observed_generation = status.generation;
            if let Some(at) = &requested {
                status.st.last_handled_reconcile_at = Some(at.clone());
            }
            status.flush().await.map_err(fail)?;
            tracing::error!(name, namespace = ns, reason = f.reason, "{}", f.message);
            ctx.recorder
                .publish(obj, EventType::Warning, f.reason, &f.message, &[])
                .await;
            Action::await_change()
        }
        Err(f) => {
            status.set(READY, "False", f.reason, &f.message);
            finish_status(&mut status, &requested, false);
            status.flush().await.map_err(fail)?;
            let retry = match f.retry {
                Retry::Interval => t.retry,
                Retry::Dependency => ctx.options.requeue_dependency,
                Retry::Soon => SOON,
                Retry::Never => Duration::MAX,
            };
            let note = format!(
                "Reconciliation failed after {}, next try in {}: {}",
                go(started.elapsed()),
                go(retry),
                f.message
            );
            // Waiting for a source or dependency is expected at start; it is not a warning.
            if f.retry == Retry::Dependency {
                tracing::info!(name, namespace = ns, reason = f.reason, "{note}");
            } else {
                tracing::warn!(name, namespace = ns, reason = f.reason, "{note}");
            }
            let kind = if f.retry == Retry::Dependency {
                EventType::Normal
            } else {
                EventType::Warning
            };
            let revision = status
                .st
                .last_attempted_revision
                .clone()
                .unwrap_or_default();
            ctx.recorder
                .publish(
                    obj,
                    kind,
                    f.reason,
                    &f.message,
                    &[(REVISION_ANNOTATION, revision)],
                )
                .await;
            Action::requeue(retry)
        }
    };
    record_conditions(ctx, &labels, &status.st);
    ctx.backoff.succeeded(&key(&ns, &name));
    Ok(action)
}

/// The manager to apply `obj` with (its cluster and identity), owner labels set to it.
async fn manager_for(obj: &Kustomization, ctx: &Context) -> Result<ResourceManager, String> {
    let namespace = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let subject = crate::cluster::Subject {
        group: tidegate_api::kustomization::GROUP,
        namespace: &namespace,
        name: &name,
        service_account: obj.spec.service_account_name.as_deref(),
        kube_config: obj.spec.kube_config.as_ref(),
    };
    ctx.clusters
        .manager_of(
            &ctx.manager,
            &ctx.client,
            subject,
            ctx.options.default_service_account.as_deref(),
        )
        .await
        .map(|c| c.manager)
}

/// A `healthCheckExprs` or `readyExpr` that is not valid CEL: a configuration error no retry
/// fixes, stalled until the spec changes (Flux's terminal error).
async fn stall_invalid_cel(
    obj: &Kustomization,
    ctx: &Context,
    status: &mut Status<'_>,
    requested: &Option<String>,
    error: &str,
) -> Result<Action, String> {
    let message = format!("{}: {error}", crate::shared::TERMINAL_ERROR_MESSAGE);
    let reason = crate::shared::INVALID_CEL_EXPRESSION;
    status.set(READY, "False", reason, &message);
    status.set(STALLED, "True", reason, &message);
    conditions::delete(&mut status.st.conditions, RECONCILING);
    status.st.observed_generation = status.generation;
    if let Some(at) = requested {
        status.st.last_handled_reconcile_at = Some(at.clone());
    }
    status.flush().await?;
    tracing::error!(
        name = obj.name_any(),
        namespace = obj.namespace().unwrap_or_default(),
        "{message}"
    );
    ctx.recorder
        .publish(obj, EventType::Warning, reason, &message, &[])
        .await;
    record_conditions(ctx, &crate::metrics::ObjectLabels::of(obj), &status.st);
    Ok(Action::await_change())
}

fn record_conditions(
    ctx: &Context,
    labels: &crate::metrics::ObjectLabels,
    st: &KustomizationStatus,
) {
    for c in &st.conditions {
        if c.type_ == READY || c.type_ == RECONCILING || c.type_ == STALLED {
            ctx.metrics.record_condition(labels, &c.type_, &c.status);
        }
    }
}

/// Flux's last status touches: the handled request, the observed generation and no
/// `Reconciling` after a success, `ProgressingWithRetry` after a failure.
fn finish_status(status: &mut Status<'_>, requested: &Option<String>, ready: bool) {
    if let Some(at) = requested {
        status.st.last_handled_reconcile_at = Some(at.clone());
    }
    if ready {
        conditions::delete(&mut status.st.conditions, RECONCILING);
        status.st.observed_generation = status.generation;
    } else if let Some(c) = conditions::get(&status.st.conditions, RECONCILING).cloned() {
        status.set(RECONCILING, "True", "ProgressingWithRetry", &c.message);
    }
}

/// The source's artifact, from the watch cache.
fn source_artifact(obj: &Kustomization, ctx: &Context) -> Result<Artifact, Failure> {
    let (kind, namespace, name) = super::triggers::source_of(obj);
    let own_ns = obj.namespace().unwrap_or_default();
    if ctx.options.no_cross_namespace_refs && namespace != own_ns {
        return Err(Failure {
            reason: ACCESS_DENIED,
            message: format!(
                "can't access '{kind}/{namespace}/{name}', cross-namespace references have been blocked"
            ),
            retry: Retry::Never,
        });
    }
    let artifact = match ctx.sources.find(&kind, &namespace, &name) {
        Found::Object { artifact, .. } => artifact,
        Found::Missing(message) => {
            return Err(Failure::new(
                ARTIFACT_FAILED,
                format!("unable to get source '{namespace}/{name}': {message}"),
            ));
        }
        Found::UnknownKind => {
            return Err(Failure::new(
                ARTIFACT_FAILED,
                format!("source `{name}` kind '{kind}' not supported"),
            ));
        }
    };
    match artifact {
        Some(a) => Ok(a),
        None => Err(Failure {
            reason: ARTIFACT_FAILED,
            message: format!(
                "Source artifact not found, retrying in {}",
                go(ctx.options.requeue_dependency)
            ),
            retry: Retry::Dependency,
        }),
    }
}

/// What a successful run reports.
struct Done {
    /// Something worth an event happened (a new revision or generation, changes, a
    /// recovery, a request).
    announce: bool,
}

/// Build, apply, prune and check health.
async fn steps(
    obj: &Kustomization,
    ctx: &Context,
    status: &mut Status<'_>,
    artifact: &Artifact,
    t: &Timing,
    requested: &Option<String>,
) -> Result<Done, Failure> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let revision = &artifact.revision;
    let st = &status.st;
    let new_revision = st.last_applied_revision.as_deref() != Some(revision.as_str());
    // A reconcile that only confirms the last one (same revision and generation, ready, no
    // request) writes no progress: a no-op stays a no-op.
    let announce = new_revision
        || st.last_attempted_revision.as_deref() != Some(revision.as_str())
        || st.observed_generation != status.generation
        || !conditions::is_true(&st.conditions, READY)
        || (requested.is_some() && *requested != st.last_handled_reconcile_at);
    let flush = |r: Result<(), String>| r.map_err(|m| Failure::new(FAILED, m));
    if announce {
        let message = format!(
            "Fetching manifests for revision {revision} with a timeout of {}",
            go(t.timeout)
        );
        flush(status.progress(&message, true).await)?;
    }

    let objects = build::manifests(obj, ctx, artifact).await;
    // Flux records the attempt once the artifact is fetched and the path exists, before the
    // build: a build failure names the revision that failed.
    let fetched = match &objects {
        Ok(_) => true,
        Err(f) => f.reason != ARTIFACT_FAILED && f.reason != "DirCreationFailed",
    };
    if fetched {
        status.st.last_attempted_revision = Some(revision.clone());
    }
    let objects = objects?;
    let manager = manager_for(obj, ctx)
        .await
        .map_err(|m| Failure::new(FAILED, m))?;
    if announce {
        let message = format!(
            "Detecting drift for revision {revision} with a timeout of {}",
            go(t.timeout)
        );
        flush(status.progress(&message, false).await)?;
    }

    // Apply in stages. What was applied before a failure is remembered for the next run.
    let ttl_jobs = ttl_jobs(&objects);
    let state_key = key(&ns, &name);
    let mut state = ctx
        .applied
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&state_key)
        .unwrap_or_default();
    let options = ApplyOptions {
        force: obj.spec.force.unwrap_or(false),
        dry_run: false,
        stage_timeout: t.timeout,
    };
    let put_back = |state| {
        ctx.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(state_key.clone(), state);
    };
    let validated = match manager.validate_all(objects, &options, &state).await {
        Ok(v) => v,
        Err(e) => {
            put_back(state);
            return Err(Failure::new(FAILED, e.to_string()));
        }
    };
    // Until a prune has succeeded, the inventory holds everything that may exist: what is
    // about to be written is recorded before the first write, so a crash in between leaves
    // no object the next reconcile does not know to prune.
    let old = inventory_of(&status.st);
    if let Some(union) = with_desired(&old, &validated.inventory()) {
        status.st.inventory = Some(union);
        if let Err(m) = status.flush().await {
            put_back(state);
            return Err(Failure::new(FAILED, m));
        }
    }
    let applied = manager
        .apply_validated(validated, &options, &mut state)
        .await;
    // Objects this apply took from another Kustomization (an apply of an older revision can
    // take an object back from the Kustomization the newer revision gives it to): the other
    // one reconciles again, so the owner of the newest revision ends up with it.
    for owner in manager.taken_from() {
        tracing::info!(
            name,
            namespace = ns,
            from = format!("{}/{}", owner.namespace, owner.name),
            "objects taken over from another Kustomization; it reconciles again"
        );
        let _ = ctx.wake.unbounded_send(
            kube::runtime::reflector::ObjectRef::new(&owner.name).within(&owner.namespace),
        );
    }
    let change_set = match applied {
        Ok(cs) => cs,
        Err(e) => {
            put_back(state);
            return Err(Failure::new(FAILED, e.to_string()));
        }
    };
    let changes = change_set.changes();
    let drifted = !changes.is_empty();
    if drifted {
        tracing::info!(
            name,
            namespace = ns,
            revision,
            "server-side apply completed:\n{changes}"
        );
        ctx.recorder
            .publish(
                obj,
                EventType::Normal,
                &status.ready_reason(),
                &changes,
                &[(REVISION_ANNOTATION, revision.clone())],
            )
            .await;
    }

    // Inventory and prune: what the old inventory holds beyond this apply is stale.
    let mut inventory = Inventory::from_change_set(&change_set);
    let stale = old.stale(&inventory);
    let mut prune_error = None;
    if obj.spec.prune && !stale.is_empty() {
        let (deleted, result) = manager.delete_all(&stale).await;
        for entry in &deleted.entries {
            let id = tidegate_apply::inventory::object_id(&entry.object);
            match entry.action {
                // What could not be deleted stays in the inventory, to be retried.
                ChangeAction::Unknown => inventory.entries.push(InventoryEntry {
                    id,
                    v: entry.version.clone(),
                }),
                _ => {
                    state.objects.remove(&id);
                }
            }
        }
        let lines: Vec<String> = deleted.entries.iter().map(ToString::to_string).collect();
        if !lines.is_empty() {
            let text = lines.join("\n");
            tracing::info!(name, namespace = ns, "garbage collection completed: {text}");
            ctx.recorder
                .publish(
                    obj,
                    EventType::Normal,
                    &status.ready_reason(),
                    &text,
                    &[(REVISION_ANNOTATION, revision.clone())],
                )
                .await;
        }
        prune_error = result.err();
    }
    let written = state.written_versions(&change_set);
    put_back(state);
    status.st.inventory = Some(crate::shared::inventory_to_api(&inventory.entries));
    if let Some(e) = prune_error {
        return Err(Failure::new(PRUNE_FAILED, e.to_string()));
    }

    check_health(
        obj,
        status,
        &manager,
        &change_set.entries,
        &ttl_jobs,
        &written,
        t,
        revision,
        announce,
        new_revision && drifted,
        ctx,
    )
    .await?;
    Ok(Done {
        announce: announce || drifted,
    })
}

/// Jobs that delete themselves after finishing: gone counts as done.
fn ttl_jobs(objects: &[Value]) -> HashSet<ObjectRef> {
    objects
        .iter()
        .filter(|o| o.get("kind").and_then(Value::as_str) == Some("Job"))
        .filter(|o| o.pointer("/spec/ttlSecondsAfterFinished").is_some())
        .map(ObjectRef::from_object)
        .collect()
}

/// The inventory `old` extended by the entries of `desired` it lacks; `None` when it lacks
/// none (no write needed).
fn with_desired(old: &Inventory, desired: &Inventory) -> Option<ResourceInventory> {
    let known: HashSet<&str> = old.entries.iter().map(|e| e.id.as_str()).collect();
    let added: Vec<&InventoryEntry> = desired
        .entries
        .iter()
        .filter(|e| !known.contains(e.id.as_str()))
        .collect();
    if added.is_empty() {
        return None;
    }
    Some(crate::shared::inventory_to_api(
        old.entries.iter().chain(added),
    ))
}

fn inventory_of(st: &KustomizationStatus) -> Inventory {
    crate::shared::inventory_from_api(st.inventory.as_ref())
}

/// `spec.wait` (everything applied) or `spec.healthChecks`, with Flux's messages.
#[allow(clippy::too_many_arguments)]
async fn check_health(
    obj: &Kustomization,
    status: &mut Status<'_>,
    manager: &ResourceManager,
    applied: &[tidegate_apply::ChangeSetEntry],
    ttl_jobs: &HashSet<ObjectRef>,
    written: &std::collections::HashMap<ObjectRef, String>,
    t: &Timing,
    revision: &str,
    announce: bool,
    new_and_drifted: bool,
    ctx: &Context,
) -> Result<(), Failure> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let mut refs: Vec<(ObjectRef, String)> = if obj.spec.wait.unwrap_or(false) {
        applied
            .iter()
            .map(|e| (e.object.clone(), e.api_version()))
            .collect()
    } else {
        obj.spec
            .health_checks
            .iter()
            .map(|h| {
                let api_version = h.api_version.clone().unwrap_or_default();
                let (group, _) = tidegate_core::object_ref::split_api_version(&api_version);
                let namespace = h.namespace.clone().unwrap_or_else(|| ns.clone());
                (
                    ObjectRef::new(group, &h.kind, &namespace, &h.name),
                    api_version,
                )
            })
            .collect()
    };
    // Never wait on itself.
    refs.retain(|(r, _)| {
        !(r.kind == "Kustomization"
            && r.group == tidegate_api::kustomization::GROUP
            && r.name == name
            && r.namespace == ns)
    });
    if refs.is_empty() {
        conditions::delete(&mut status.st.conditions, HEALTHY);
        return Ok(());
    }
    let was_healthy = conditions::is_true(&status.st.conditions, HEALTHY);
    let health_key = key(&ns, &name);
    let versions = manager.live_versions(&refs).await;
    let remembered = ctx
        .healthy
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&health_key)
        .cloned();
    if was_healthy && !announce && versions.is_some() && versions == remembered {
        // Nothing about the checked objects changed since they last passed.
        return Ok(());
    }
    let started = Instant::now();
    if announce || !was_healthy {
        let message = format!(
            "Running health checks for revision {revision} with a timeout of {}",
            go(t.timeout)
        );
        status.set(HEALTHY, "Unknown", PROGRESSING, &message);
        status
            .progress(&message, false)
            .await
            .map_err(|m| Failure::new(FAILED, m))?;
    }
    let options = WaitOptions {
        timeout: t.timeout,
        fail_fast: true,
        ttl_jobs: ttl_jobs.clone(),
        min_versions: written.clone(),
        // Validated when the reconcile started.
        custom: crate::shared::custom_health(&obj.spec.health_check_exprs)
            .ok()
            .flatten(),
    };
    // Waiting costs no CPU: the worker permit goes to the next reconcile.
    status.permit = None;
    if let Err(e) = manager.wait(&refs, &options).await {
        ctx.healthy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&health_key);
        let message = e.to_string();
        status.set(HEALTHY, "False", HEALTH_CHECK_FAILED, &message);
        return Err(Failure::new(
            HEALTH_CHECK_FAILED,
            format!(
                "health check failed after {}: {message}",
                go(started.elapsed())
            ),
        ));
    }
    let message = format!("Health check passed in {}", go(started.elapsed()));
    // The versions seen before the wait: if the objects moved on while it ran, the next
    // reconcile checks again rather than trusting a state nobody evaluated.
    match versions {
        Some(v) => {
            ctx.healthy
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(health_key, v);
        }
        None => {
            ctx.healthy
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&health_key);
        }
    }
    if !was_healthy || new_and_drifted {
        ctx.recorder
            .publish(
                obj,
                EventType::Normal,
                &status.ready_reason(),
                &message,
                &[(REVISION_ANNOTATION, revision.to_string())],
            )
            .await;
    }
    // The message keeps the duration of the check that made it true, so an unchanged
    // reconcile writes no status.
    if !was_healthy || new_and_drifted || announce {
        status.set(HEALTHY, "True", "Succeeded", &message);
    }
    Ok(())
}

/// Deletion: prune the inventory unless the deletion policy orphans it, then drop the
/// finalizer (Flux's rules).
async fn finalize(
    obj: &Kustomization,
    ctx: &Context,
    api: &Api<Kustomization>,
) -> Result<Action, String> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    if !crate::finalizer::has(obj) {
        return Ok(Action::await_change());
    }
    let policy = obj.spec.deletion_policy.as_deref().unwrap_or("MirrorPrune");
    let st = obj.status.clone().unwrap_or_default();
    let inventory = inventory_of(&st);
    let has_inventory = !inventory.entries.is_empty();
    let delete = (obj.spec.prune
        && !obj.spec.suspend.unwrap_or(false)
        && has_inventory
        && policy != "Orphan")
        || policy == "Delete"
        || policy == "WaitForTermination";
    if delete && has_inventory {
        match manager_for(obj, ctx).await {
            Ok(manager) => {
                let objects = inventory.objects();
                let (cs, result) = manager.delete_all(&objects).await;
                let revision = st.last_applied_revision.clone().unwrap_or_default();
                if let Err(e) = result {
                    ctx.recorder
                        .publish(
                            obj,
                            EventType::Warning,
                            "PruneFailed",
                            "pruning for deleted resource failed",
                            &[(REVISION_ANNOTATION, revision)],
                        )
                        .await;
                    return Err(e.to_string());
                }
                let lines: Vec<String> = cs.entries.iter().map(ToString::to_string).collect();
                if !lines.is_empty() {
                    ctx.recorder
                        .publish(
                            obj,
                            EventType::Normal,
                            "Progressing",
                            &lines.join("\n"),
                            &[(REVISION_ANNOTATION, revision)],
                        )
                        .await;
                }
            }
            Err(e) => {
                // Flux's rule: when the identity to delete with is gone, the objects are
                // left in place and the Kustomization goes.
                tracing::error!(
                    name,
                    namespace = ns,
                    error = e,
                    "unable to prune for deleted resource, objects left in place"
                );
            }
        }
    }
    ctx.applied
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&key(&ns, &name));
    ctx.versions.forget(obj);
    build::forget(ctx, &ns, &name);
    ctx.healthy
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&key(&ns, &name));
    crate::finalizer::remove(api, obj).await?;
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(interval: &str, timeout: Option<&str>, retry: Option<&str>) -> Kustomization {
        let mut k = Kustomization::default();
        k.spec.interval = interval.into();
        k.spec.timeout = timeout.map(Into::into);
        k.spec.retry_interval = retry.map(Into::into);
        k
    }

    #[test]
    fn timing_follows_flux_defaults() {
        let t = timing(&with("10m", None, None));
        assert_eq!(t.interval, Duration::from_secs(600));
        assert_eq!(t.timeout, Duration::from_secs(570));
        assert_eq!(t.retry, Duration::from_secs(600));
        // Never below 30s.
        let t = timing(&with("20s", None, Some("5s")));
        assert_eq!(t.timeout, Duration::from_secs(30));
        assert_eq!(t.retry, Duration::from_secs(5));
        let t = timing(&with("1h", Some("2m"), None));
        assert_eq!(t.timeout, Duration::from_secs(120));
        let t = timing(&with("1h", Some("5s"), None));
        assert_eq!(t.timeout, Duration::from_secs(30));
    }
}
