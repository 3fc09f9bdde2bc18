//! The commit status context of a Git provider: the Provider's `commitStatusExpr` (CEL over
//! `event`, `alert` and `provider`), else `kind/name/<first part of the Provider's UID>`,
//! lower-cased, as Flux makes it.

use tidegate_api::event::Event;
use tidegate_api::{Alert, Provider};
use tidegate_apply::cel::Expression;

use super::dispatch::is_commit_status_provider;

/// The context for `event` sent through `provider` (empty for non-Git providers).
pub fn for_event(provider: &Provider, event: &Event, alert: &Alert) -> Result<String, String> {
    if !is_commit_status_provider(&provider.spec.type_) {
        return Ok(String::new());
    }
    match provider
        .spec
        .commit_status_expr
        .as_deref()
        .filter(|e| !e.is_empty())
    {
        Some(expr) => evaluate(expr, provider, event, alert).map_err(|e| {
            format!(
                "failed to evaluate the spec.commitStatusExpr CEL expression for the event: {e}"
            )
        }),
        None => Ok(default_context(
            provider.metadata.uid.as_deref().unwrap_or_default(),
            event,
        )),
    }
}

/// `kind/name/<uid prefix>`, lower-cased.
pub fn default_context(provider_uid: &str, event: &Event) -> String {
    let uid = provider_uid.split('-').next().unwrap_or_default();
    let o = &event.involved_object;
    format!("{}/{}/{uid}", o.kind, o.name).to_lowercase()
}

fn evaluate(
    expr: &str,
    provider: &Provider,
    event: &Event,
    alert: &Alert,
) -> Result<String, String> {
    let program =
        Expression::parse(expr).map_err(|e| format!("failed to compile expression: {e}"))?;
    let mut vars = serde_json::Map::new();
    let to_value = |v: serde_json::Result<serde_json::Value>| v.map_err(|e| e.to_string());
    vars.insert("event".into(), to_value(serde_json::to_value(event))?);
    vars.insert("provider".into(), to_value(serde_json::to_value(provider))?);
    vars.insert("alert".into(), to_value(serde_json::to_value(alert))?);
    program.evaluate_string(&vars)
}
