//! One ImageRepository reconcile, as Flux's: the image name checked (a bad one stalls), a
//! scan when one is due (first scan, a requested reconcile, a new image name or exclusion
//! list, no stored tags, or the interval elapsed), tags listed, excluded, sorted and stored;
//! `lastScanResult` and Ready (`successful scan: found N tags with checksum C`), then a
//! requeue at the next scan time.

use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use tidegate_api::ImageRepository;
use tidegate_api::conditions::{self, READY, RECONCILING, STALLED};
use tidegate_api::imagerepository::{ImageRepositoryStatus, ScanResult};
use tidegate_source::image::reference::parse_image;
use tidegate_source::image::tags::{LATEST_TAGS, sort_descending};
use tidegate_source::oci::Registry;

use super::{Context, ReconcileError};
use crate::events::EventType;

/// Stalled: the image name is not usable.
pub const IMAGE_URL_INVALID: &str = "ImageURLInvalid";
/// Credentials or transport could not be set up.
pub const AUTHENTICATION_FAILED: &str = "AuthenticationFailed";
/// Listing or storing the tags failed.
pub const READ_OPERATION_FAILED: &str = "ReadOperationFailed";

fn interval(obj: &ImageRepository) -> Duration {
    tidegate_core::duration::parse(&obj.spec.interval).unwrap_or(Duration::from_secs(600))
}

/// Flux's `shouldScan`: why a scan is due now, or how long until it is.
fn scan_due(
    obj: &ImageRepository,
    status: &ImageRepositoryStatus,
    canonical: &str,
    stored: usize,
) -> Result<&'static str, Duration> {
    let Some(last) = &status.last_scan_result else {
        return Ok("first scan");
    };
    let requested = obj
        .annotations()
        .get(tidegate_api::meta::RECONCILE_REQUESTED_AT);
    if requested.is_some()
        && requested
            != obj
                .status
                .as_ref()
                .and_then(|s| s.last_handled_reconcile_at.as_ref())
    {
        return Ok("reconcile requested");
    }
    if status.canonical_image_name.as_deref() != Some(canonical) {
        return Ok("new image name");
    }
    let wanted = obj.spec.exclusion_list();
    let observed = &status.observed_exclusion_list;
    if wanted.len() != observed.len() || !wanted.iter().all(|w| observed.contains(w)) {
        return Ok("updated exclusion list");
    }
    if stored == 0 {
        return Ok("no tags in database");
    }
    let since = last
        .scan_time
        .as_deref()
        .and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok())
        .and_then(|t| Duration::try_from(conditions::now().duration_since(t)).ok())
        .unwrap_or(Duration::MAX);
    let every = interval(obj);
    match every.checked_sub(since) {
        Some(when) if when >= Duration::from_secs(1) => Err(when),
        _ => Ok("triggered by interval"),
    }
}

/// Lists, filters, sorts and stores the tags: the scan result.
async fn scan(
    obj: &ImageRepository,
    ctx: &Context,
    image: &tidegate_source::image::reference::ImageRef,
) -> Result<ScanResult, (&'static str, String)> {
    let options = super::registry::options(&ctx.client, obj, image)
        .await
        .map_err(|e| {
            (
                AUTHENTICATION_FAILED,
                format!("failed to configure authentication options: {e}"),
            )
        })?;
    let read_failed = |e: String| (READ_OPERATION_FAILED, format!("scan failed: {e}"));
    let registry = Registry::connect(&image.oci_repository(), &options)
        .await
        .map_err(|e| read_failed(e.to_string()))?;
    let listed = registry
        .list_tags()
        .await
        .map_err(|e| read_failed(e.to_string()))?;
    let mut patterns = Vec::new();
    for p in obj.spec.exclusion_list() {
        let re = regex::Regex::new(&p)
            .map_err(|e| read_failed(format!("failed to compile regex {p}: {e}")))?;
        patterns.push(re);
    }
    let mut tags: Vec<String> = listed
        .into_iter()
        .filter(|t| !patterns.iter().any(|re| re.is_match(t)))
        .collect();
    sort_descending(&mut tags);
    let ns = obj.namespace().unwrap_or_default();
    let revision = ctx.tags.set(&ns, &obj.name_any(), &tags).map_err(|e| {
        read_failed(format!(
            "failed to set tags for {:?}: {e}",
            image.canonical()
        ))
    })?;
    Ok(ScanResult {
        revision,
        tag_count: tags.len() as i64,
        scan_time: Some(crate::source::artifact_time()),
        latest_tags: tags.iter().take(LATEST_TAGS).cloned().collect(),
    })
}

pub(super) async fn reconcile(
    obj: &ImageRepository,
    ctx: &Context,
) -> Result<Action, ReconcileError> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let api: Api<ImageRepository> = Api::namespaced(ctx.client.clone(), &ns);
    let key = format!("imagerepository/{ns}/{name}");
    let fail = |message: String| ReconcileError {
        retry: ctx.backoff.failed(&key),
        message,
    };
    let done = crate::shared::prologue(
        &api,
        obj,
        &ctx.versions,
        &ctx.metrics,
        obj.spec.suspend.unwrap_or(false),
        || {
            if let Err(e) = ctx.tags.delete(&ns, &name) {
                tracing::warn!(namespace = ns, name, error = %e, "removing the stored tags");
            }
        },
    )
    .await
    .map_err(fail)?;
    if done {
        return Ok(Action::await_change());
    }
    let generation = obj.meta().generation;
    let old = obj.status.clone().unwrap_or_default();
    let mut status = old.clone();
    let requested = obj
        .annotations()
        .get(tidegate_api::meta::RECONCILE_REQUESTED_AT)
        .cloned();
    let was_ready = conditions::get(&old.conditions, READY).is_some_and(|c| c.status == "True");
    let old_message = conditions::get(&old.conditions, READY).map(|c| c.message.clone());
    let image = match parse_image(&obj.spec.image) {
        Ok(i) => i,
        Err(e) => {
            let message = e.to_string();
            conditions::set(
                &mut status.conditions,
                STALLED,
                true,
                IMAGE_URL_INVALID,
                &message,
                generation,
            );
            conditions::set(
                &mut status.conditions,
                READY,
                false,
                IMAGE_URL_INVALID,
                &message,
                generation,
            );
            conditions::delete(&mut status.conditions, RECONCILING);
            status.observed_generation = generation;
            status.last_handled_reconcile_at = requested.or(status.last_handled_reconcile_at);
            crate::status::patch(&api, &ctx.versions, &name, &old, &status)
                .await
                .map_err(fail)?;
            ctx.recorder
                .publish(obj, EventType::Warning, IMAGE_URL_INVALID, &message, &[])
                .await;
            return Ok(Action::await_change());
        }
    };
    conditions::delete(&mut status.conditions, STALLED);
    let canonical = image.canonical();
    let stored = ctx.tags.get(&ns, &name).map(|t| t.len()).unwrap_or(0);
    let (next, note) = match scan_due(obj, &old, &canonical, stored) {
        Err(when) => (
            when,
            format!(
                "no change in repository configuration since last scan, next scan in {}",
                tidegate_core::duration::format(when)
            ),
        ),
        Ok(reason) => {
            tracing::debug!(namespace = ns, name, reason, "scanning");
            match scan(obj, ctx, &image).await {
                Err((reason, message)) => {
                    conditions::set(
                        &mut status.conditions,
                        READY,
                        false,
                        reason,
                        &message,
                        generation,
                    );
                    conditions::set(
                        &mut status.conditions,
                        RECONCILING,
                        true,
                        "ProgressingWithRetry",
                        &format!("scanning: {reason}"),
                        generation,
                    );
                    status.last_handled_reconcile_at =
                        requested.or(status.last_handled_reconcile_at);
                    crate::status::patch(&api, &ctx.versions, &name, &old, &status)
                        .await
                        .map_err(&fail)?;
                    ctx.recorder
                        .publish(obj, EventType::Warning, reason, &message, &[])
                        .await;
                    return Err(fail(message));
                }
                Ok(result) => {
                    let every = interval(obj);
                    let same = old
                        .last_scan_result
                        .as_ref()
                        .is_some_and(|r| r.revision == result.revision);
                    status.last_scan_result = Some(result);
                    let note = if same {
                        "tags did not change"
                    } else {
                        "successful scan"
                    };
                    (
                        every,
                        format!(
                            "{note}, next scan in {}",
                            tidegate_core::duration::format(every)
                        ),
                    )
                }
            }
        }
    };
    status.canonical_image_name = Some(canonical);
    status.observed_exclusion_list = obj.spec.exclusion_list();
    let (count, revision) = status
        .last_scan_result
        .as_ref()
        .map(|r| (r.tag_count, r.revision.clone()))
        .unwrap_or_default();
    let message = format!("successful scan: found {count} tags with checksum {revision}");
    conditions::set(
        &mut status.conditions,
        READY,
        true,
        "Succeeded",
        &message,
        generation,
    );
    conditions::delete(&mut status.conditions, RECONCILING);
    status.observed_generation = generation;
    status.last_handled_reconcile_at = requested.or(status.last_handled_reconcile_at);
    crate::status::patch(&api, &ctx.versions, &name, &old, &status)
        .await
        .map_err(&fail)?;
    ctx.backoff.succeeded(&key);
    // Flux's `notify`: an event when readiness or its message changed, else a trace.
    if !was_ready || old_message.as_deref() != Some(message.as_str()) {
        ctx.recorder
            .publish(obj, EventType::Normal, "Succeeded", &message, &[])
            .await;
    } else {
        tracing::debug!(namespace = ns, name, "{note}");
    }
    Ok(Action::requeue(next))
}
