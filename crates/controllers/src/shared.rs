//! Pieces every toolkit reconciler uses the same way: what triggers a reconcile, the suspend
//! check, and the timed reconcile wrapper.

use std::hash::{Hash, Hasher};

use kube::{Resource, ResourceExt};

use crate::metrics::{Metrics, ObjectLabels};

/// What a change of the object itself must touch to trigger a reconcile: a new generation,
/// a changed `requestedAt` annotation, or a deletion (never a status write).
pub fn trigger_hash<K: Resource>(obj: &K) -> Option<u64> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    obj.meta().generation.hash(&mut h);
    obj.annotations()
        .get(tidegate_api::meta::RECONCILE_REQUESTED_AT)
        .hash(&mut h);
    obj.meta().deletion_timestamp.is_some().hash(&mut h);
    Some(h.finish())
}

/// Records the suspend gauge; true (and a log line) when `suspended`.
pub fn check_suspended<K: Resource<DynamicType = ()>>(
    obj: &K,
    suspended: bool,
    metrics: &Metrics,
) -> bool {
    metrics
        .suspend
        .get_or_create(&ObjectLabels::of(obj))
        .set(i64::from(suspended));
    if suspended {
        tracing::info!(
            name = obj.name_any(),
            namespace = obj.namespace().unwrap_or_default(),
            "reconciliation is suspended for this object"
        );
    }
    suspended
}

/// Runs `reconcile`, recording its duration in `gotk_reconcile_duration_seconds`.
pub async fn timed<K, T>(obj: &K, metrics: &Metrics, reconcile: impl Future<Output = T>) -> T
where
    K: Resource<DynamicType = ()>,
{
    let started = std::time::Instant::now();
    let labels = ObjectLabels::of(obj);
    let result = reconcile.await;
    metrics
        .duration
        .get_or_create(&labels)
        .observe(started.elapsed().as_secs_f64());
    result
}

/// The object a reconcile should act on ([`crate::fresh::Versions::fresh`]): `Ok(None)` when
/// it is gone, an error with the retry delay `backoff` gives it when it could not be read.
pub(crate) async fn fresh_or_retry<K>(
    client: &kube::Client,
    versions: &crate::fresh::Versions,
    backoff: &crate::timing::Backoff,
    obj: std::sync::Arc<K>,
) -> Result<Option<std::sync::Arc<K>>, (String, std::time::Duration)>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let ns = obj.namespace().unwrap_or_default();
    let api: kube::Api<K> = kube::Api::namespaced(client.clone(), &ns);
    versions
        .fresh(&api, obj.clone())
        .await
        .map_err(|message| (message, backoff.failed(&format!("{ns}/{}", obj.name_any()))))
}

/// The API of a namespaced kind in `namespace`, or in every namespace.
pub(crate) fn api_in<K>(client: &kube::Client, namespace: &Option<String>) -> kube::Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    match namespace {
        Some(ns) => kube::Api::namespaced(client.clone(), ns),
        None => kube::Api::all(client.clone()),
    }
}

/// The watch of a controller's own kind: every object, or those matching the controller's
/// `--watch-label-selector` (sharding).
pub(crate) fn watch_config(selector: &Option<String>) -> kube::runtime::watcher::Config {
    let config = kube::runtime::watcher::Config::default();
    match selector.as_deref().map(str::trim) {
        Some(s) if !s.is_empty() => config.labels(s),
        _ => config,
    }
}

/// Flux's prefix of a configuration error no retry can fix.
pub const TERMINAL_ERROR_MESSAGE: &str =
    "Reconciliation failed terminally due to configuration error";

/// The reason of an invalid `healthCheckExprs` or `readyExpr`.
pub const INVALID_CEL_EXPRESSION: &str = "InvalidCELExpression";

/// Compiles `healthCheckExprs` (of a Kustomization or a HelmRelease); `None` without any.
pub fn custom_health(
    checks: &[tidegate_api::kustomization::CustomHealthCheck],
) -> Result<Option<std::sync::Arc<tidegate_apply::custom_health::CustomHealth>>, String> {
    if checks.is_empty() {
        return Ok(None);
    }
    let exprs: Vec<tidegate_apply::custom_health::HealthCheckExpr> = checks
        .iter()
        .map(|c| tidegate_apply::custom_health::HealthCheckExpr {
            api_version: c.api_version.clone(),
            kind: c.kind.clone().unwrap_or_default(),
            current: c.current.clone(),
            failed: c.failed.clone().unwrap_or_default(),
            in_progress: c.in_progress.clone().unwrap_or_default(),
        })
        .collect();
    tidegate_apply::custom_health::CustomHealth::new(&exprs).map(|c| Some(std::sync::Arc::new(c)))
}

/// Why a `readyExpr` did not say ready.
#[derive(Debug)]
pub enum ReadyExprError {
    /// The expression does not parse: a configuration error.
    Invalid(String),
    /// It failed to evaluate (or was not a boolean): the dependency is not ready yet.
    Failed(String),
}

/// Flux's `evalReadyExpr` of `dependsOn[].readyExpr`: the dependent object as `self`, the
/// dependency as `dep`.
pub fn eval_ready_expr<S: serde::Serialize, D: serde::Serialize>(
    expr: &str,
    this: &S,
    dep: &D,
    dep_name: &str,
) -> Result<bool, ReadyExprError> {
    let e = tidegate_apply::cel::Expression::parse(expr).map_err(|e| {
        ReadyExprError::Invalid(format!("failed to evaluate dependency {dep_name}: {e}"))
    })?;
    let mut vars = serde_json::Map::new();
    let to_value = |v: serde_json::Result<serde_json::Value>| {
        v.map_err(|e| ReadyExprError::Failed(format!("failed to convert object to map: {e}")))
    };
    vars.insert("self".into(), to_value(serde_json::to_value(this))?);
    vars.insert("dep".into(), to_value(serde_json::to_value(dep))?);
    e.evaluate_bool(&vars).map_err(ReadyExprError::Failed)
}

/// An inventory as the API stores it (`status.inventory`, a binding entry's `inventory`) read
/// into the apply manager's type.
pub(crate) fn inventory_from_api(
    inv: Option<&tidegate_api::kustomization::ResourceInventory>,
) -> tidegate_apply::Inventory {
    tidegate_apply::Inventory {
        entries: inv
            .map(|i| {
                i.entries
                    .iter()
                    .map(|e| tidegate_apply::InventoryEntry {
                        id: e.id.clone(),
                        v: e.v.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The apply manager's inventory as the API stores it.
pub(crate) fn inventory_to_api<'a>(
    entries: impl IntoIterator<Item = &'a tidegate_apply::InventoryEntry>,
) -> tidegate_api::kustomization::ResourceInventory {
    tidegate_api::kustomization::ResourceInventory {
        entries: entries
            .into_iter()
            .map(|e| tidegate_api::kustomization::ResourceRef {
                id: e.id.clone(),
                v: e.v.clone(),
            })
            .collect(),
    }
}

/// Flux's reconcile prologue: a deleted object has `cleanup` run, its finalizer removed and
/// its version forgotten; a live one gets the finalizer and the suspend check. `Ok(true)` when
/// the reconcile ends here (deleted or suspended).
pub(crate) async fn prologue<K>(
    api: &kube::Api<K>,
    obj: &K,
    versions: &crate::fresh::Versions,
    metrics: &Metrics,
    suspended: bool,
    cleanup: impl FnOnce(),
) -> Result<bool, String>
where
    K: Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    if obj.meta().deletion_timestamp.is_some() {
        cleanup();
        crate::finalizer::remove(api, obj).await?;
        versions.forget(obj);
        return Ok(true);
    }
    crate::finalizer::add(api, obj, versions).await?;
    Ok(check_suspended(obj, suspended, metrics))
}
