//! One HelmRelease reconcile in helm-controller's order: deletion (uninstall, chart removed,
//! finalizer), finalizer, suspend, chart template, dependencies, source, values, chart, then
//! the release state machine. Status conditions, reasons and messages are Flux's; a failure
//! before the release actions writes nothing to the cluster.

use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use sha2::{Digest, Sha256};
use tidegate_api::HelmRelease;
use tidegate_api::conditions::{self, READY, RECONCILING, STALLED};
use tidegate_api::helmrelease::{FORCE_REQUESTED_AT, HelmReleaseStatus, RESET_REQUESTED_AT};
use tidegate_api::meta::RECONCILE_REQUESTED_AT;
use tidegate_helm::storage::{Release, chart_json, status as rstatus};

use super::action::Actor;
use super::atomic::{Outcome, RenderInput, Run, uninstall_settings};
use super::source::SourceError;
use super::storage::Storage;
use super::{Context, ReconcileError, chart_template, key, render, source, values};
use crate::events::EventType;
use crate::timing::jittered;

const PROGRESSING: &str = "Progressing";

/// The status as written, and the status being built; flushes send the difference.
pub struct StatusWriter<'a> {
    api: &'a Api<HelmRelease>,
    versions: &'a crate::fresh::Versions,
    name: String,
    written: HelmReleaseStatus,
    pub st: HelmReleaseStatus,
    generation: Option<i64>,
}

impl StatusWriter<'_> {
    /// Patches what changed since the last write.
    pub async fn flush(&mut self) -> Result<(), String> {
        crate::status::patch(self.api, self.versions, &self.name, &self.written, &self.st).await?;
        self.written = self.st.clone();
        Ok(())
    }

    /// Sets a condition at this generation.
    pub fn set(&mut self, type_: &str, status: &str, reason: &str, message: &str) {
        conditions::set_status(
            &mut self.st.conditions,
            type_,
            status,
            reason,
            message,
            self.generation,
        );
    }
}

/// The release name: `spec.releaseName`, else `[targetNamespace-]name`, shortened past 53
/// characters as Flux's `ShortenName` does.
pub fn release_name(hr: &HelmRelease) -> String {
    if let Some(n) = hr.spec.release_name.as_deref().filter(|n| !n.is_empty()) {
        return n.to_string();
    }
    let name = match hr
        .spec
        .target_namespace
        .as_deref()
        .filter(|n| !n.is_empty())
    {
        Some(ns) => format!("{ns}-{}", hr.name_any()),
        None => hr.name_any(),
    };
    shorten(&name)
}

fn shorten(name: &str) -> String {
    if name.len() <= 53 {
        return name.to_string();
    }
    let hash = format!("{:x}", Sha256::digest(name.as_bytes()));
    let head: String = name.chars().take(40).collect();
    format!("{head}-{}", &hash[..12])
}

fn target_namespace(hr: &HelmRelease) -> String {
    hr.spec
        .target_namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| hr.namespace().unwrap_or_default())
}

fn storage_namespace(hr: &HelmRelease) -> String {
    hr.spec
        .storage_namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| hr.namespace().unwrap_or_default())
}

fn json_digest<T: serde::Serialize>(v: &T) -> String {
    let json = serde_json::to_vec(v).unwrap_or_default();
    format!("sha256:{:x}", Sha256::digest(&json))
}

/// The digest of `spec.postRenderers`, empty without any (as Flux's observed digest).
fn post_renderers_digest(hr: &HelmRelease) -> String {
    if hr.spec.post_renderers.is_empty() {
        return String::new();
    }
    json_digest(&hr.spec.post_renderers)
}

/// The digest of `spec.commonMetadata`, empty without it.
fn common_metadata_digest(hr: &HelmRelease) -> String {
    match &hr.spec.common_metadata {
        Some(c) => json_digest(c),
        None => String::new(),
    }
}

/// A request annotation to act on: set, equal to `requestedAt`, and not handled yet.
fn requested(hr: &HelmRelease, annotation: &str, handled: &Option<String>) -> Option<String> {
    let a = hr.annotations();
    let value = a.get(annotation)?;
    (a.get(RECONCILE_REQUESTED_AT) == Some(value) && handled.as_ref() != Some(value))
        .then(|| value.clone())
}

/// The manager to act with for `hr` (its cluster and identity), owner labels set to it.
async fn manager_for(hr: &HelmRelease, ctx: &Context) -> Result<crate::cluster::Cluster, String> {
    let namespace = hr.namespace().unwrap_or_default();
    let name = hr.name_any();
    let subject = crate::cluster::Subject {
        group: tidegate_api::helmrelease::GROUP,
        namespace: &namespace,
        name: &name,
        service_account: hr.spec.service_account_name.as_deref(),
        kube_config: hr.spec.kube_config.as_ref(),
    };
    ctx.clusters
        .manager_of(
            &ctx.manager,
            &ctx.client,
            subject,
            ctx.options.default_service_account.as_deref(),
        )
        .await
}

/// Reconciles one HelmRelease; `permit` is its worker permit (`--concurrent`), given back
/// when a release action waits.
pub async fn reconcile(
    hr: &HelmRelease,
    ctx: &Context,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
) -> Result<Action, ReconcileError> {
    let ns = hr.namespace().unwrap_or_default();
    let name = hr.name_any();
    let api: Api<HelmRelease> = Api::namespaced(ctx.client.clone(), &ns);
    let fail = |message: String| ReconcileError {
        message,
        retry: ctx.backoff.failed(&key(&ns, &name)),
    };
    if hr.metadata.deletion_timestamp.is_some() {
        return Box::pin(finalize(hr, ctx, &api)).await.map_err(fail);
    }
    crate::finalizer::add(&api, hr, &ctx.versions)
        .await
        .map_err(fail)?;
    if crate::shared::check_suspended(hr, hr.spec.suspend, &ctx.metrics) {
        return Ok(Action::await_change());
    }
    let written = hr.status.clone().unwrap_or_default();
    let mut w = StatusWriter {
        api: &api,
        versions: &ctx.versions,
        name: name.clone(),
        st: written.clone(),
        written,
        generation: hr.metadata.generation,
    };
    let interval =
        tidegate_core::duration::parse(&hr.spec.interval).unwrap_or(Duration::from_secs(600));
    // The steps' futures are boxed where they branch: a release waiting for its rollout keeps
    // only the futures it is in (a thousand waiting releases, a thousand such chains).
    let result = Box::pin(steps(hr, ctx, &mut w, permit)).await;
    // Handled when the reconcile ends, as Flux records it: the progress written while an
    // action runs does not say the request was handled (`reconcile hr` waits on this field).
    if let Some(at) = hr.annotations().get(RECONCILE_REQUESTED_AT) {
        w.st.last_handled_reconcile_at = Some(at.clone());
    }
    let action = match result {
        Ok(Step::Done) => {
            w.st.observed_generation = hr.metadata.generation;
            w.st.observed_post_renderers_digest =
                Some(post_renderers_digest(hr)).filter(|d| !d.is_empty());
            w.st.observed_common_metadata_digest =
                Some(common_metadata_digest(hr)).filter(|d| !d.is_empty());
            ctx.backoff.succeeded(&key(&ns, &name));
            Action::requeue(jittered(interval, ctx.options.jitter_percent))
        }
        Ok(Step::Retry(d)) => Action::requeue(d),
        Ok(Step::Stalled) => {
            w.st.observed_generation = hr.metadata.generation;
            conditions::delete(&mut w.st.conditions, RECONCILING);
            Action::await_change()
        }
        Err(f) => {
            w.set(READY, "False", f.reason, &f.message);
            conditions::delete(&mut w.st.conditions, RECONCILING);
            if f.stall {
                w.set(STALLED, "True", f.reason, &f.message);
                w.st.observed_generation = hr.metadata.generation;
            }
            if f.event {
                ctx.recorder
                    .publish(hr, EventType::Warning, f.reason, &f.message, &[])
                    .await;
            }
            w.flush().await.map_err(fail)?;
            if f.stall {
                return Ok(Action::await_change());
            }
            return Err(ReconcileError {
                message: f.message,
                retry: f
                    .retry
                    .unwrap_or_else(|| ctx.backoff.failed(&key(&ns, &name))),
            });
        }
    };
    w.flush().await.map_err(fail)?;
    record_conditions(ctx, hr, &w.st);
    Ok(action)
}

fn record_conditions(ctx: &Context, hr: &HelmRelease, st: &HelmReleaseStatus) {
    let labels = crate::metrics::ObjectLabels::of(hr);
    for c in &st.conditions {
        ctx.metrics.record_condition(&labels, &c.type_, &c.status);
    }
}

enum Step {
    Done,
    Retry(Duration),
    Stalled,
}

/// A failure before or around the release actions.
struct Failure {
    reason: &'static str,
    message: String,
    stall: bool,
    event: bool,
    retry: Option<Duration>,
}

impl Failure {
    fn new(reason: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            reason,
            message: message.into(),
            stall: false,
            event: true,
            retry: None,
        }
    }
}

async fn steps(
    hr: &HelmRelease,
    ctx: &Context,
    w: &mut StatusWriter<'_>,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
) -> Result<Step, Failure> {
    let ns = hr.namespace().unwrap_or_default();
    let custom_health = crate::shared::custom_health(&hr.spec.health_check_exprs).map_err(|e| {
        let mut f = Failure::new(
            crate::shared::INVALID_CEL_EXPRESSION,
            format!("{}: {e}", crate::shared::TERMINAL_ERROR_MESSAGE),
        );
        f.stall = true;
        f
    })?;
    if hr.spec.chart.is_some() == hr.spec.chart_ref.is_some() {
        let mut f = Failure::new("InvalidChartReference", "invalid Chart reference");
        f.stall = true;
        return Err(f);
    }
    let helm_chart = Box::pin(chart_template::reconcile(
        hr,
        ctx,
        w.st.helm_chart.as_deref(),
    ))
    .await
    .map_err(|e| Failure::new("ChartMutateError", e))?;
    w.st.helm_chart = helm_chart;

    // Not written yet: a release in sync ends without a status write (nor any request); the
    // first action writes it.
    w.set(RECONCILING, "True", PROGRESSING, "Fulfilling prerequisites");

    // Dependencies.
    for dep in &hr.spec.depends_on {
        let dns = dep
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| ns.clone());
        if ctx.options.no_cross_namespace_refs && dns != ns {
            let mut f = Failure::new(
                "AccessDenied",
                format!(
                    "cannot access HelmRelease/{dns}/{}, cross-namespace references have been blocked",
                    dep.name
                ),
            );
            f.stall = true;
            return Err(f);
        }
        let api: Api<HelmRelease> = Api::namespaced(ctx.client.clone(), &dns);
        let full = format!("{dns}/{}", dep.name);
        let not_ready = match api.get_opt(&dep.name).await {
            Ok(Some(d)) => match dep.ready_expr.as_deref().filter(|e| !e.is_empty()) {
                // With a readyExpr, the expression alone decides (Flux without its additive
                // gate).
                Some(expr) => match crate::shared::eval_ready_expr(expr, hr, &d, &dep.name) {
                    Ok(true) => None,
                    Ok(false) => Some(format!(
                        "dependency '{full}' is not ready according to readyExpr eval"
                    )),
                    Err(crate::shared::ReadyExprError::Failed(m)) => Some(m),
                    Err(crate::shared::ReadyExprError::Invalid(m)) => {
                        let mut f = Failure::new(
                            crate::shared::INVALID_CEL_EXPRESSION,
                            format!("{}: {m}", crate::shared::TERMINAL_ERROR_MESSAGE),
                        );
                        f.stall = true;
                        return Err(f);
                    }
                },
                None => {
                    let st = d.status.clone().unwrap_or_default();
                    let ready = d.metadata.generation == st.observed_generation
                        && conditions::is_true(&st.conditions, READY);
                    (!ready).then(|| format!("dependency '{full}' is not ready"))
                }
            },
            Ok(None) => Some(format!(
                "unable to get '{full}' dependency: helmreleases.helm.toolkit.fluxcd.io \"{}\" not found",
                dep.name
            )),
            Err(e) => Some(format!("unable to get '{full}' dependency: {e}")),
        };
        if let Some(message) = not_ready {
            w.set(READY, "False", "DependencyNotReady", &message);
            ctx.recorder
                .publish(hr, EventType::Normal, "DependencyNotReady", &message, &[])
                .await;
            return Ok(Step::Retry(ctx.options.requeue_dependency));
        }
    }

    // Source.
    let (kind, artifact) = match source::artifact(hr, ctx).await {
        Ok(a) => a,
        Err(e) => return source_failure(e, w, ctx),
    };
    // Values.
    let composed = Box::pin(values::compose(
        &ctx.client,
        &ns,
        &hr.spec.values_from,
        hr.spec.values.as_ref(),
    ))
    .await
    .map_err(|e| Failure::new("ValuesError", e))?;
    // Chart.
    let loaded = match Box::pin(source::load(&kind, &artifact, ctx)).await {
        Ok(l) => l,
        Err(e) => return source_failure(e, w, ctx),
    };
    let config_digest = values::digest(&composed);

    let release_name = release_name(hr);
    let release_namespace = target_namespace(hr);
    let storage_ns = storage_namespace(hr);
    let cluster = Box::pin(manager_for(hr, ctx))
        .await
        .map_err(|e| Failure::new("RESTClientError", e))?;
    let remote = cluster.remote;
    let manager = cluster.manager;
    // The release cache watches the controller's own cluster only.
    let storage = Storage::new(manager.client().clone(), &storage_ns);
    let storage = if remote {
        storage
    } else {
        storage.with_cache(ctx.releases.clone())
    };

    // A release moved (name, namespace or storage): the old one is uninstalled first.
    if let Some(latest) = w.st.history.first().cloned() {
        let old_storage =
            w.st.storage_namespace
                .clone()
                .unwrap_or_else(|| storage_ns.clone());
        if latest.name != release_name
            || latest.namespace != release_namespace
            || old_storage != storage_ns
        {
            let old = Storage::new(manager.client().clone(), &old_storage);
            if let Ok(Some(r)) = old.last(&latest.name).await {
                let (settings, keep, propagation) = uninstall_settings(hr);
                let mut applied = ctx.take_applied(&key(&ns, &hr.name_any()));
                let mut actor = Actor {
                    manager: &manager,
                    storage: &old,
                    applied: &mut applied,
                    permit: &mut None,
                };
                let _ = Box::pin(actor.uninstall(r, &settings, keep, propagation)).await;
            }
            w.st.history.clear();
            w.st.failures = 0;
            w.st.install_failures = 0;
            w.st.upgrade_failures = 0;
            w.st.storage_namespace = None;
            w.flush()
                .await
                .map_err(|e| Failure::new("ReconcileError", e))?;
            return Ok(Step::Retry(Duration::from_millis(100)));
        }
    }
    w.st.storage_namespace = Some(storage_ns.clone());

    // Failure counters reset on a new generation, chart version or values, or a request.
    let reset_request = requested(hr, RESET_REQUESTED_AT, &w.st.last_handled_reset_at);
    if hr.metadata.generation != w.st.last_attempted_generation
        || w.st.last_attempted_revision.as_deref() != Some(loaded.chart.metadata.version.as_str())
        || w.st.last_attempted_config_digest.as_deref() != Some(config_digest.as_str())
        || reset_request.is_some()
    {
        w.st.failures = 0;
        w.st.install_failures = 0;
        w.st.upgrade_failures = 0;
    }
    if let Some(r) = reset_request {
        w.st.last_handled_reset_at = Some(r);
    }
    let force_request = requested(hr, FORCE_REQUESTED_AT, &w.st.last_handled_force_at);
    if let Some(f) = &force_request {
        w.st.last_handled_force_at = Some(f.clone());
    }
    w.st.last_attempted_generation = hr.metadata.generation;
    w.st.last_attempted_revision = Some(loaded.chart.metadata.version.clone());
    w.st.last_attempted_revision_digest =
        (!loaded.oci_digest.is_empty()).then(|| loaded.oci_digest.clone());
    w.st.last_attempted_config_digest = Some(config_digest.clone());

    // The desired release; it is rendered when an install or upgrade needs it.
    let chart = loaded.chart;
    let target = Release {
        name: release_name.clone(),
        chart: chart_json(&chart),
        config: composed.clone(),
        namespace: release_namespace.clone(),
        apply_method: "ssa".into(),
        ..Default::default()
    };
    let render = RenderInput {
        chart,
        values: composed,
        post: render::PostRender {
            kustomize: hr
                .spec
                .post_renderers
                .iter()
                .filter_map(|p| p.kustomize.clone())
                .collect(),
            common_metadata: hr.spec.common_metadata.clone(),
            origin: (hr.name_any(), ns.clone()),
        },
    };
    let render_changed = hr.metadata.generation != w.st.observed_generation
        && (w.st.observed_post_renderers_digest.as_deref().unwrap_or("")
            != post_renderers_digest(hr)
            || w.st
                .observed_common_metadata_digest
                .as_deref()
                .unwrap_or("")
                != common_metadata_digest(hr));
    let mut run = Run {
        hr,
        ctx,
        storage,
        manager,
        remote,
        release_name,
        release_namespace,
        target,
        render,
        rendered: None,
        config_digest,
        oci_digest: loaded.oci_digest,
        forced: force_request.is_some(),
        render_changed,
        render_digests: (post_renderers_digest(hr), common_metadata_digest(hr)),
        permit,
        custom_health,
    };
    match Box::pin(run.reconcile(w)).await {
        Ok(Outcome::Done) => Ok(Step::Done),
        Ok(Outcome::Retry(d)) => Ok(Step::Retry(d)),
        Ok(Outcome::Requeue) => Ok(Step::Retry(ctx.backoff.failed(&key(&ns, &hr.name_any())))),
        Ok(Outcome::Stalled) => Ok(Step::Stalled),
        Err(e) => Err(Failure::new("ReconcileError", e)),
    }
}

fn source_failure(
    e: SourceError,
    w: &mut StatusWriter<'_>,
    ctx: &Context,
) -> Result<Step, Failure> {
    match e {
        SourceError::Pending => {
            w.set(
                RECONCILING,
                "True",
                PROGRESSING,
                "Waiting for the chart artifact download",
            );
            Ok(Step::Retry(Duration::from_secs(5)))
        }
        SourceError::NotReady(m) => {
            let mut f = Failure::new("SourceNotReady", m);
            f.event = false;
            f.retry = Some(jittered(
                ctx.options.requeue_dependency,
                ctx.options.jitter_percent,
            ));
            Err(f)
        }
        SourceError::Artifact(m) => {
            let mut f = Failure::new("ArtifactFailed", m);
            f.retry = Some(Duration::from_secs(30));
            Err(f)
        }
        SourceError::AccessDenied(m) => {
            let mut f = Failure::new("AccessDenied", m);
            f.stall = true;
            Err(f)
        }
    }
}

/// Deletion: the release is uninstalled (unless suspended), the HelmChart deleted, the
/// finalizer removed.
async fn finalize(
    hr: &HelmRelease,
    ctx: &Context,
    api: &Api<HelmRelease>,
) -> Result<Action, String> {
    if !crate::finalizer::has(hr) {
        return Ok(Action::await_change());
    }
    if !hr.spec.suspend {
        let st = hr.status.clone().unwrap_or_default();
        let name = st
            .history
            .first()
            .map(|s| s.name.clone())
            .unwrap_or_else(|| release_name(hr));
        let storage_ns = st
            .storage_namespace
            .clone()
            .unwrap_or_else(|| storage_namespace(hr));
        match manager_for(hr, ctx).await.map(|c| c.manager) {
            Ok(manager) => {
                let storage = Storage::new(manager.client().clone(), &storage_ns);
                match storage.last(&name).await {
                    Ok(Some(r)) if r.info.status != rstatus::UNINSTALLED => {
                        let release = format!("{}/{}.v{}", r.namespace, r.name, r.version);
                        let (settings, keep, propagation) = uninstall_settings(hr);
                        let mut applied = ctx.take_applied(&key(
                            &hr.namespace().unwrap_or_default(),
                            &hr.name_any(),
                        ));
                        let result = Actor {
                            manager: &manager,
                            storage: &storage,
                            applied: &mut applied,
                            permit: &mut None,
                        }
                        .uninstall(r, &settings, keep, propagation)
                        .await;
                        match result {
                            Ok(()) => {
                                let msg = format!("Helm uninstall succeeded for release {release}");
                                ctx.recorder
                                    .publish(hr, EventType::Normal, "UninstallSucceeded", &msg, &[])
                                    .await;
                            }
                            Err(e) => {
                                let msg = format!(
                                    "Helm uninstall failed for release {release}: {}",
                                    e.message
                                );
                                ctx.recorder
                                    .publish(hr, EventType::Warning, "UninstallFailed", &msg, &[])
                                    .await;
                                return Err(msg);
                            }
                        }
                    }
                    Ok(_) => {}
                    Err(e) => return Err(e),
                }
            }
            Err(e) => tracing::warn!(error = %e, "skipping uninstall: no client for the release"),
        }
    }
    if let Some(chart) = hr.status.as_ref().and_then(|s| s.helm_chart.as_deref())
        && let Some((cns, cname)) = chart.split_once('/')
    {
        chart_template::delete(ctx, cns, cname).await?;
    }
    ctx.applied
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&key(&hr.namespace().unwrap_or_default(), &hr.name_any()));
    crate::finalizer::remove(api, hr).await?;
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_names_shorten_as_flux() {
        assert_eq!(shorten("podinfo"), "podinfo");
        let long = "a".repeat(60);
        let s = shorten(&long);
        assert_eq!(s.len(), 53);
        assert!(s.starts_with(&"a".repeat(40)));
        assert_eq!(&s[40..41], "-");
    }
}
