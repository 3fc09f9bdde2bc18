//! One ImagePolicy reconcile, as Flux's: the ImageRepository resolved (cross-namespace
//! lockdown and `accessFrom`), the policy and tag filter made (a bad one stalls), the
//! repository's stored tags read (none yet: `DependencyNotReady`), the latest tag chosen,
//! its digest reflected when asked, `latestRef`/`observedPreviousRef` and Ready
//! (`Latest image tag for <image> resolved to <tag>`).

use std::time::Duration;

use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};
use tidegate_api::conditions::{self, READY};
use tidegate_api::imagepolicy::{ImagePolicyStatus, ImageRef};
use tidegate_api::{ImagePolicy, ImageRepository};
use tidegate_source::image::policy::{Policy, RegexFilter, select};
use tidegate_source::image::reference::parse_image;
use tidegate_source::oci::Registry;

use super::{Context, ReconcileError};
use crate::events::EventType;

/// The repository is missing or has no tags yet.
pub const DEPENDENCY_NOT_READY: &str = "DependencyNotReady";
/// The reference is refused (lockdown or `accessFrom`).
pub const ACCESS_DENIED: &str = "AccessDenied";
/// The policy or filter cannot be made.
pub const INVALID_POLICY: &str = "InvalidPolicy";

/// How a reconcile ends when it does not succeed.
struct Outcome {
    reason: &'static str,
    message: String,
    stalled: bool,
    retry: Option<Duration>,
}

impl Outcome {
    fn failed(reason: &'static str, message: String) -> Outcome {
        Outcome {
            reason,
            message,
            stalled: false,
            retry: None,
        }
    }

    fn stalled(reason: &'static str, message: String) -> Outcome {
        Outcome {
            stalled: true,
            ..Outcome::failed(reason, message)
        }
    }
}

/// The policy's ImageRepository, refused or missing as Flux words it.
async fn repository(obj: &ImagePolicy, ctx: &Context) -> Result<ImageRepository, Outcome> {
    let own = obj.namespace().unwrap_or_default();
    let r = &obj.spec.image_repository_ref;
    let ns = r
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| own.clone());
    let prefix = "failed to get the referred ImageRepository";
    if ctx.options.no_cross_namespace_refs && ns != own {
        return Err(Outcome::failed(
            ACCESS_DENIED,
            format!(
                "{prefix}: cannot access 'ImageRepository/{ns}/{}', cross-namespace references have been blocked",
                r.name
            ),
        ));
    }
    let repo = ctx
        .repositories
        .get(&ObjectRef::new(&r.name).within(&ns))
        .ok_or_else(|| {
            Outcome::failed(
                DEPENDENCY_NOT_READY,
                format!(
                    "{prefix}: referenced ImageRepository does not exist: ImageRepository.image.toolkit.fluxcd.io {:?} not found",
                    r.name
                ),
            )
        })?;
    super::access::has_access(
        &ctx.client,
        &own,
        &ns,
        &r.name,
        repo.spec.access_from.as_ref(),
    )
    .await
    .map_err(|e| Outcome::failed(ACCESS_DENIED, format!("{prefix}: access denied: {e}")))?;
    Ok((*repo).clone())
}

/// The policy and filter of the spec.
fn policy(obj: &ImagePolicy) -> Result<(Policy, Option<RegexFilter>), Outcome> {
    let p = &obj.spec.policy;
    let made = Policy::from_spec(
        p.semver.as_ref().map(|s| s.range.as_str()),
        p.alphabetical.as_ref().map(|a| a.order.as_deref()),
        p.numerical.as_ref().map(|n| n.order.as_deref()),
    )
    .map_err(|e| Outcome::stalled(INVALID_POLICY, format!("invalid policy: {e}")))?;
    let filter = obj
        .spec
        .filter_tags
        .as_ref()
        .map(|f| RegexFilter::new(&f.pattern, &f.extract))
        .transpose()
        .map_err(|e| Outcome::stalled(INVALID_POLICY, format!("failed to filter tags: {e}")))?;
    Ok((made, filter))
}

/// The digest of `image:tag`, as the repository reaches its registry.
async fn digest(ctx: &Context, repo: &ImageRepository, tag: &str) -> Result<String, String> {
    let image = parse_image(&repo.spec.image).map_err(|e| e.to_string())?;
    let wrap = |e: String| format!("failed fetching digest of {}:{tag}: {e}", repo.spec.image);
    let options = super::registry::options(&ctx.client, repo, &image)
        .await
        .map_err(|e| wrap(format!("failed to configure authentication options: {e}")))?;
    let oci_repo = image.oci_repository();
    let registry = Registry::connect(&oci_repo, &options)
        .await
        .map_err(|e| wrap(e.to_string()))?;
    registry
        .digest(&oci_repo.tag(tag))
        .await
        .map_err(|e| wrap(format!("failed fetching descriptor: {e}")))
}

/// Everything up to the new `latestRef`.
async fn resolve(
    obj: &ImagePolicy,
    ctx: &Context,
    status: &ImagePolicyStatus,
) -> Result<ImageRef, Outcome> {
    let repo = repository(obj, ctx).await?;
    parse_image(&repo.spec.image)
        .map_err(|e| Outcome::stalled("ImageURLInvalid", e.to_string()))?;
    let (made, filter) = policy(obj)?;
    let repo_ns = repo.namespace().unwrap_or_default();
    let tags = ctx.tags.get(&repo_ns, &repo.name_any()).map_err(|e| {
        Outcome::failed("Failure", format!("failed to read tags from database: {e}"))
    })?;
    if tags.is_empty() {
        let wait = ctx.options.requeue_dependency;
        return Err(Outcome {
            retry: Some(wait),
            ..Outcome::failed(
                DEPENDENCY_NOT_READY,
                format!(
                    "retrying in {} error: no tags in database",
                    tidegate_core::duration::format(Duration::from_secs(wait.as_secs()))
                ),
            )
        });
    }
    let refs: Vec<&str> = tags.iter().map(String::as_str).collect();
    let tag = select(&made, filter.as_ref(), &refs)
        .map_err(|e| Outcome::failed("Failure", e.to_string()))?
        .to_string();
    let old = status.latest_ref.as_ref();
    let mode = obj
        .spec
        .digest_reflection_policy
        .as_deref()
        .unwrap_or("Never");
    let name = repo.spec.image.clone();
    let fetch = match mode {
        "Always" => true,
        "IfNotPresent" => old.is_none_or(|o| {
            o.name != name || o.tag != tag || o.digest.as_deref().unwrap_or("").is_empty()
        }),
        _ => false,
    };
    let digest = if fetch {
        Some(
            digest(ctx, &repo, &tag)
                .await
                .map_err(|e| Outcome::failed("Failed", e))?,
        )
    } else if mode == "IfNotPresent" {
        old.and_then(|o| o.digest.clone())
    } else {
        None
    };
    Ok(ImageRef { name, tag, digest })
}

/// Flux's Ready message for a resolved policy.
fn ready_message(latest: &ImageRef, previous: Option<&ImageRef>) -> String {
    let mut m = format!(
        "Latest image tag for {} resolved to {}",
        latest.name, latest.tag
    );
    if let Some(d) = latest.digest.as_deref().filter(|d| !d.is_empty()) {
        m.push_str(&format!(" with digest {d}"));
    }
    if let Some(p) = previous.filter(|p| *p != latest) {
        m.push_str(&format!(" (previously {p})"));
    }
    m
}

pub(super) async fn reconcile(obj: &ImagePolicy, ctx: &Context) -> Result<Action, ReconcileError> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let api: Api<ImagePolicy> = Api::namespaced(ctx.client.clone(), &ns);
    let key = format!("imagepolicy/{ns}/{name}");
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
        || {},
    )
    .await
    .map_err(fail)?;
    if done {
        return Ok(Action::await_change());
    }
    let generation = obj.meta().generation;
    let old = obj.status.clone().unwrap_or_default();
    let mut status = old.clone();
    if let Some(at) = obj
        .annotations()
        .get(tidegate_api::meta::RECONCILE_REQUESTED_AT)
    {
        status.last_handled_reconcile_at = Some(at.clone());
    }
    let was_ready = conditions::get(&old.conditions, READY).is_some_and(|c| c.status == "True");
    let old_message = conditions::get(&old.conditions, READY).map(|c| c.message.clone());
    let always = obj.spec.digest_reflection_policy.as_deref() == Some("Always");
    let outcome = if always && obj.spec.interval.is_none() {
        Err(Outcome::stalled(
            "IntervalNotConfigured",
            "spec.interval must be set when spec.digestReflectionPolicy is set to 'Always'".into(),
        ))
    } else {
        resolve(obj, ctx, &old).await
    };
    match outcome {
        Err(o) => {
            conditions::mark_failed(
                &mut status.conditions,
                o.reason,
                &o.message,
                o.stalled,
                "reconciliation in progress",
                generation,
            );
            if o.stalled {
                status.observed_generation = generation;
            }
            crate::status::patch(&api, &ctx.versions, &name, &old, &status)
                .await
                .map_err(&fail)?;
            ctx.recorder
                .publish(obj, EventType::Warning, o.reason, &o.message, &[])
                .await;
            if o.stalled {
                return Ok(Action::await_change());
            }
            match o.retry {
                Some(after) => Ok(Action::requeue(after)),
                None => Err(fail(o.message)),
            }
        }
        Ok(latest) => {
            if status.latest_ref.as_ref() != Some(&latest) {
                status.observed_previous_ref = status.latest_ref.take();
                status.latest_ref = Some(latest.clone());
            }
            let message = ready_message(&latest, status.observed_previous_ref.as_ref());
            conditions::mark_ready(&mut status.conditions, "Succeeded", &message, generation);
            status.observed_generation = generation;
            crate::status::patch(&api, &ctx.versions, &name, &old, &status)
                .await
                .map_err(&fail)?;
            ctx.backoff.succeeded(&key);
            if !was_ready || old_message.as_deref() != Some(message.as_str()) {
                ctx.recorder
                    .publish(obj, EventType::Normal, "Succeeded", &message, &[])
                    .await;
            }
            if always {
                let every = obj
                    .spec
                    .interval
                    .as_deref()
                    .and_then(|i| tidegate_core::duration::parse(i).ok())
                    .unwrap_or(Duration::from_secs(600));
                Ok(Action::requeue(every))
            } else {
                Ok(Action::await_change())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_messages_as_flux_composes_them() {
        let r = |tag: &str, digest: Option<&str>| ImageRef {
            name: "foo/bar".into(),
            tag: tag.into(),
            digest: digest.map(str::to_string),
        };
        assert_eq!(
            ready_message(&r("1.0.0", None), None),
            "Latest image tag for foo/bar resolved to 1.0.0"
        );
        assert_eq!(
            ready_message(
                &r("1.0.0", Some("sha256:1234567890abcdef")),
                Some(&r("1.0.0", Some("sha256:abcdef1234567890")))
            ),
            "Latest image tag for foo/bar resolved to 1.0.0 with digest sha256:1234567890abcdef (previously foo/bar:1.0.0@sha256:abcdef1234567890)"
        );
        assert_eq!(
            ready_message(&r("1.0.1", None), Some(&r("1.0.0", None))),
            "Latest image tag for foo/bar resolved to 1.0.1 (previously foo/bar:1.0.0)"
        );
    }
}
