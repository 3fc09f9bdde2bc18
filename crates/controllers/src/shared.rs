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

/// The watch of a controller's own kind: every object, or those matching the controller's
/// `--watch-label-selector` (sharding).
pub(crate) fn watch_config(selector: &Option<String>) -> kube::runtime::watcher::Config {
    let config = kube::runtime::watcher::Config::default();
    match selector.as_deref().map(str::trim) {
        Some(s) if !s.is_empty() => config.labels(s),
        _ => config,
    }
}
