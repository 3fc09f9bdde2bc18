//! One Receiver reconcile, as Flux's: finalizer, suspend, the CEL filters and OIDC settings
//! checked (a bad one stalls), the token read from the Secret, `status.webhookPath` set and
//! Ready, then requeued after the interval.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use sha2::{Digest, Sha256};
use tidegate_api::Receiver;
use tidegate_api::conditions::{self, READY, RECONCILING, STALLED};
use tidegate_api::receiver::{
    ReceiverStatus, TOKEN_NOT_FOUND_REASON, VALIDATION_FAILED_REASON, WEBHOOK_PATH_PREFIX,
};
use tidegate_apply::error::describe;

use super::{Context, ReconcileError};
use crate::events::EventType;

/// `/hook/` and the hex sha256 of token, name and namespace (Flux's `GetWebhookPath`).
pub fn webhook_path(token: &str, name: &str, namespace: &str) -> String {
    let digest = Sha256::digest(format!("{token}{name}{namespace}").as_bytes());
    format!("{WEBHOOK_PATH_PREFIX}{digest:x}")
}

/// The reconcile interval (default 10 minutes).
pub fn interval(obj: &Receiver) -> Duration {
    obj.spec
        .interval
        .as_deref()
        .and_then(|i| tidegate_core::duration::parse(i).ok())
        .unwrap_or(Duration::from_secs(600))
}

/// What is wrong with the spec, as `(reason, message)`: a filter that does not compile, or
/// OIDC settings that do not fit the type.
fn invalid(obj: &Receiver) -> Option<(&'static str, String)> {
    if let Some(f) = obj
        .spec
        .resource_filter
        .as_deref()
        .filter(|f| !f.is_empty())
        && let Err(e) = tidegate_apply::cel::Expression::parse(f)
    {
        return Some((
            crate::shared::INVALID_CEL_EXPRESSION,
            format!("invalid resourceFilter expression: {e}"),
        ));
    }
    for (i, r) in obj.spec.resources.iter().enumerate() {
        if let Some(f) = r.filter.as_deref().filter(|f| !f.is_empty())
            && let Err(e) = tidegate_apply::cel::Expression::parse(f)
        {
            return Some((
                crate::shared::INVALID_CEL_EXPRESSION,
                format!(
                    "invalid filter expression for resources[{i}] (kind={:?}, name={:?}): {e}",
                    r.kind, r.name
                ),
            ));
        }
    }
    let oidc = obj.spec.type_ == "generic-oidc";
    let message = if oidc && obj.spec.oidc_providers.is_empty() {
        "generic-oidc receiver requires at least one oidcProvider"
    } else if !oidc && !obj.spec.oidc_providers.is_empty() {
        "oidcProviders can only be set when type is generic-oidc"
    } else if oidc && obj.spec.secret_ref.is_some() {
        "secretRef cannot be set when type is generic-oidc"
    } else if !oidc && obj.spec.secret_ref.is_none() {
        "secretRef is required when type is not generic-oidc"
    } else {
        return None;
    };
    Some((VALIDATION_FAILED_REASON, message.to_string()))
}

/// Flux's checks of `oidcProviders` after the cross-field rules: the schema's constraints
/// (`ValidationFailed`), then every CEL expression compiled (`InvalidCELExpression`).
fn invalid_oidc(obj: &Receiver) -> Option<(&'static str, String)> {
    let providers = &obj.spec.oidc_providers;
    if providers.is_empty() {
        return None;
    }
    if let Err(e) = super::oidc::validate_spec(providers) {
        return Some((VALIDATION_FAILED_REASON, e));
    }
    super::oidc::compile_spec(providers)
        .err()
        .map(|e| (crate::shared::INVALID_CEL_EXPRESSION, e))
}

/// The data of the Receiver's Secret (`None` for `generic-oidc`, which has none); a missing
/// Secret or one without `token` is an error worded as Flux words it.
pub async fn secret_data(
    client: &kube::Client,
    obj: &Receiver,
) -> Result<Option<BTreeMap<String, Vec<u8>>>, String> {
    let Some(secret_ref) = &obj.spec.secret_ref else {
        return Ok(None);
    };
    let ns = obj.namespace().unwrap_or_default();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let secret = secrets.get(&secret_ref.name).await.map_err(|e| {
        format!(
            "unable to read token from secret '{ns}/{}' error: {}",
            secret_ref.name,
            describe(&e)
        )
    })?;
    let data: BTreeMap<String, Vec<u8>> = secret
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    if !data.contains_key("token") {
        return Err(format!(
            "invalid '{ns}/{}' secret data: required fields 'token'",
            secret_ref.name
        ));
    }
    Ok(Some(data))
}

/// The Receiver's token: the Secret's `token` (empty for `generic-oidc`, which has none).
pub async fn token(client: &kube::Client, obj: &Receiver) -> Result<String, String> {
    Ok(secret_data(client, obj)
        .await?
        .and_then(|d| {
            d.get("token")
                .map(|t| String::from_utf8_lossy(t).into_owned())
        })
        .unwrap_or_default())
}

pub(super) async fn reconcile(obj: &Receiver, ctx: &Context) -> Result<Action, ReconcileError> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let api: Api<Receiver> = Api::namespaced(ctx.client.clone(), &ns);
    let key = format!("{ns}/{name}");
    let fail = |message: String| ReconcileError {
        retry: ctx.backoff.failed(&key),
        message,
    };
    if obj.meta().deletion_timestamp.is_some() {
        crate::finalizer::remove(&api, obj).await.map_err(fail)?;
        ctx.versions.forget(obj);
        return Ok(Action::await_change());
    }
    crate::finalizer::add(&api, obj, &ctx.versions)
        .await
        .map_err(fail)?;
    if obj.spec.suspend {
        tracing::info!(
            namespace = ns,
            name,
            "reconciliation is suspended for this object"
        );
        return Ok(Action::await_change());
    }
    let generation = obj.meta().generation;
    let old = obj.status.clone().unwrap_or_default();
    let mut status: ReceiverStatus = old.clone();
    if let Some(token) = obj
        .annotations()
        .get(tidegate_api::meta::RECONCILE_REQUESTED_AT)
    {
        status.last_handled_reconcile_at = Some(token.clone());
    }
    if let Some((reason, message)) = invalid(obj).or_else(|| invalid_oidc(obj)) {
        let message = format!("{}: {message}", crate::shared::TERMINAL_ERROR_MESSAGE);
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
            STALLED,
            true,
            reason,
            &message,
            generation,
        );
        conditions::delete(&mut status.conditions, RECONCILING);
        status.observed_generation = generation;
        crate::status::patch(&api, &ctx.versions, &name, &old, &status)
            .await
            .map_err(fail)?;
        ctx.recorder
            .publish(obj, EventType::Warning, reason, &message, &[])
            .await;
        return Ok(Action::await_change());
    }
    conditions::delete(&mut status.conditions, STALLED);
    match token(&ctx.client, obj).await {
        Err(message) => {
            conditions::set(
                &mut status.conditions,
                RECONCILING,
                true,
                "ProgressingWithRetry",
                "Reconciliation in progress",
                generation,
            );
            conditions::set(
                &mut status.conditions,
                READY,
                false,
                TOKEN_NOT_FOUND_REASON,
                &message,
                generation,
            );
            status.webhook_path = None;
            crate::status::patch(&api, &ctx.versions, &name, &old, &status)
                .await
                .map_err(&fail)?;
            ctx.recorder
                .publish(obj, EventType::Warning, "Failed", &message, &[])
                .await;
            Err(fail(message))
        }
        Ok(token) => {
            let path = webhook_path(&token, &name, &ns);
            let message = format!("Receiver initialized for path: {path}");
            conditions::set(
                &mut status.conditions,
                READY,
                true,
                "Succeeded",
                &message,
                generation,
            );
            conditions::delete(&mut status.conditions, RECONCILING);
            if status.webhook_path.as_deref() != Some(path.as_str()) {
                tracing::info!(namespace = ns, name, "{message}");
            }
            status.webhook_path = Some(path);
            status.observed_generation = generation;
            crate::status::patch(&api, &ctx.versions, &name, &old, &status)
                .await
                .map_err(&fail)?;
            ctx.backoff.succeeded(&key);
            let every = interval(obj);
            ctx.recorder
                .publish(
                    obj,
                    EventType::Normal,
                    "Succeeded",
                    &format!(
                        "Reconciliation finished, next run in {}",
                        tidegate_core::duration::format(every)
                    ),
                    &[],
                )
                .await;
            Ok(Action::requeue(every))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_paths_are_flux_s() {
        // sha256("tokenreceiverdefault"), computed with Python's hashlib.
        assert_eq!(
            webhook_path("token", "receiver", "default"),
            "/hook/8cc3207cffc97dc881eed557d9eb9348edf632357f3132b4f4d30188c54fc63d"
        );
    }
}
