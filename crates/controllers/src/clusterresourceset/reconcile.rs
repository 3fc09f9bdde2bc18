//! One ClusterResourceSet reconcile, in Cluster API's order: finalizer, pause, the Clusters its
//! selector picks, deletion (bindings cleaned, objects left), then for the ConfigMaps and
//! Secrets it names (read, owner reference added) and for each Cluster: its binding, its
//! client, and each resource applied when its strategy says so. Conditions, reasons and
//! messages are Cluster API's (v1beta2, and the v1beta1 ones under `status.deprecated`).

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use serde_json::Value;
use tidegate_api::cluster::PAUSED_ANNOTATION;
use tidegate_api::clusterresourceset::{
    CONTINUOUS_APPLY, ClusterResourceSetStatus, FINALIZER, INTERNAL_ERROR_MESSAGE,
    INTERNAL_ERROR_REASON, PAUSED, RECONCILE, ResourceBinding, v1beta1_reasons,
};
use tidegate_api::conditions;
use tidegate_api::{Cluster, ClusterResourceSet};

use super::binding::{binding_of, patch_binding};
use super::delete::delete;
use super::outcome::{Applied, Outcome, aggregate, set_applied};
use super::read::{Source, ensure_owner_ref, owner_ref, read_resources};
use super::scope::{self, Remote};
use super::{Context, ReconcileError, continuous, resources};

/// Condition `Healthy` of `ContinuousApply` sets (Tidegate's).
pub const HEALTHY: &str = "Healthy";

/// Clusters worked on at once within one reconcile.
const CLUSTERS_AT_ONCE: usize = 8;

pub(super) async fn reconcile(
    crs: &ClusterResourceSet,
    ctx: &Context,
) -> Result<Action, ReconcileError> {
    let ns = crs.namespace().unwrap_or_default();
    let name = crs.name_any();
    let api: Api<ClusterResourceSet> = Api::namespaced(ctx.client.clone(), &ns);
    let key = format!("{ns}/{name}");
    let fail = |message: String| ReconcileError {
        retry: ctx.backoff.failed(&key),
        message,
    };
    let deleting = crs.meta().deletion_timestamp.is_some();
    if !deleting && !crate::finalizer::has_named(crs, FINALIZER) {
        crate::finalizer::add_named(&api, crs, &ctx.versions, FINALIZER)
            .await
            .map_err(fail)?;
    }
    let generation = crs.meta().generation;
    let old = crs.status.clone().unwrap_or_default();
    let mut status = old.clone();
    if let Some(token) = crs
        .annotations()
        .get(tidegate_api::meta::RECONCILE_REQUESTED_AT)
    {
        status.last_handled_reconcile_at = Some(token.clone());
    }
    let paused = crs.annotations().contains_key(PAUSED_ANNOTATION);
    if paused {
        conditions::set(
            &mut status.conditions,
            PAUSED,
            true,
            "Paused",
            "ClusterResourceSet has the cluster.x-k8s.io/paused annotation",
            generation,
        );
        write_status(&api, ctx, &name, &old, &status)
            .await
            .map_err(fail)?;
        return Ok(Action::await_change());
    }
    conditions::set(
        &mut status.conditions,
        PAUSED,
        false,
        "NotPaused",
        "",
        generation,
    );

    let clusters = match select_clusters(crs, ctx) {
        Ok(c) => c,
        Err(e) => {
            set_applied(
                &mut status,
                &Applied::failed(
                    INTERNAL_ERROR_REASON,
                    INTERNAL_ERROR_MESSAGE,
                    v1beta1_reasons::CLUSTER_MATCH_FAILED,
                    "Warning",
                    e.clone(),
                ),
                generation,
            );
            write_status(&api, ctx, &name, &old, &status)
                .await
                .map_err(&fail)?;
            return Err(fail(e));
        }
    };
    if deleting {
        return delete(crs, ctx, &clusters).await.map_err(fail);
    }

    let mut outcomes = Vec::new();
    if !clusters.is_empty() {
        match read_resources(crs, ctx).await {
            Err(outcome) => outcomes.push(outcome),
            Ok(read) => {
                let read = &read;
                let clusters = &clusters;
                outcomes = futures::stream::iter(0..clusters.len())
                    .map(|i| apply_to_cluster(crs, &clusters[i], read, ctx))
                    .buffered(CLUSTERS_AT_ONCE)
                    .collect()
                    .await;
            }
        }
    }
    // Within a Cluster the last update stands, as in Cluster API; across Clusters a failure
    // is not hidden by a later Cluster's success.
    let mut last: Option<Applied> = None;
    for o in &outcomes {
        if let Some(a) = &o.applied
            && last.as_ref().is_none_or(Applied::is_true)
        {
            last = Some(a.clone());
        }
    }
    if let Some(a) = &last {
        set_applied(&mut status, a, generation);
    }
    let continuous = crs.spec.strategy() == CONTINUOUS_APPLY;
    if continuous {
        // Clusters no longer selected lose the set's objects.
        let mut errors = Vec::new();
        if let Err(e) = continuous::prune_deselected(crs, ctx, &clusters).await {
            errors.push(e);
        }
        set_healthy(&mut status, &outcomes, generation);
        if !errors.is_empty() {
            outcomes.push(Outcome {
                errors,
                ..Default::default()
            });
        }
    }
    let errors: Vec<&String> = outcomes.iter().flat_map(|o| &o.errors).collect();
    let conflicts_only =
        !errors.is_empty() && outcomes.iter().all(|o| o.errors.is_empty() || o.conflict);
    if errors.is_empty() {
        status.observed_generation = generation;
    }
    write_status(&api, ctx, &name, &old, &status)
        .await
        .map_err(&fail)?;
    if conflicts_only {
        // Another ClusterResourceSet wrote the same binding: try again at once.
        return Ok(Action::requeue(Duration::from_millis(100)));
    }
    if !errors.is_empty() {
        return Err(fail(aggregate(errors.iter().map(|e| e.as_str()))));
    }
    ctx.backoff.succeeded(&key);
    match interval(crs) {
        Some(i) if continuous => Ok(Action::requeue(crate::timing::jittered(i, 5))),
        _ => Ok(Action::await_change()),
    }
}

/// `spec.interval` of a `ContinuousApply` set.
fn interval(crs: &ClusterResourceSet) -> Option<Duration> {
    crs.spec
        .interval
        .as_deref()
        .and_then(|i| tidegate_core::duration::parse(i).ok())
        .filter(|d| !d.is_zero())
}

/// `Healthy` (a Tidegate condition of `ContinuousApply` sets): True when every applied object
/// in every selected Cluster is healthy.
fn set_healthy(
    status: &mut ClusterResourceSetStatus,
    outcomes: &[Outcome],
    generation: Option<i64>,
) {
    use tidegate_apply::health::Status;
    let checked: Vec<&Vec<(Status, String)>> =
        outcomes.iter().filter_map(|o| o.health.as_ref()).collect();
    if checked.is_empty() {
        return;
    }
    let unhealthy: Vec<&(Status, String)> = checked.into_iter().flatten().collect();
    if unhealthy.is_empty() {
        conditions::set(
            &mut status.conditions,
            HEALTHY,
            true,
            "Succeeded",
            "Health check passed",
            generation,
        );
        return;
    }
    let failed = unhealthy.iter().any(|(s, _)| *s == Status::Failed);
    let mut lines: Vec<&str> = unhealthy.iter().take(10).map(|(_, m)| m.as_str()).collect();
    let more = format!("and {} more", unhealthy.len().saturating_sub(10));
    if unhealthy.len() > 10 {
        lines.push(&more);
    }
    conditions::set(
        &mut status.conditions,
        HEALTHY,
        false,
        if failed {
            "HealthCheckFailed"
        } else {
            "Progressing"
        },
        &lines.join("; "),
        generation,
    );
}

async fn write_status(
    api: &Api<ClusterResourceSet>,
    ctx: &Context,
    name: &str,
    old: &ClusterResourceSetStatus,
    new: &ClusterResourceSetStatus,
) -> Result<(), String> {
    crate::status::patch(api, &ctx.versions, name, old, new).await
}

/// The Clusters of the set's namespace its selector matches, not being deleted; an empty
/// selector selects none.
fn select_clusters(crs: &ClusterResourceSet, ctx: &Context) -> Result<Vec<Cluster>, String> {
    let Some(sel) = crate::selector::parse(&crs.spec.cluster_selector)
        .map_err(|e| format!("unable to convert selector: {e}"))?
    else {
        tracing::info!(
            namespace = crs.namespace().unwrap_or_default(),
            name = crs.name_any(),
            "empty ClusterResourceSet selector: no clusters are selected"
        );
        return Ok(Vec::new());
    };
    let ns = crs.namespace();
    let mut clusters: Vec<Cluster> = ctx
        .clusters
        .state()
        .into_iter()
        .filter(|c| c.namespace() == ns && c.metadata.deletion_timestamp.is_none())
        .filter(|c| {
            let labels = c.labels();
            sel.matches(|k| labels.get(k).map(String::as_str))
        })
        .map(|c| c.as_ref().clone())
        .collect();
    clusters.sort_by_key(|c| c.name_any());
    Ok(clusters)
}

/// Applies the set's resources to one Cluster and records them in its binding.
async fn apply_to_cluster(
    crs: &ClusterResourceSet,
    cluster: &Cluster,
    read: &[Option<Source>],
    ctx: &Context,
) -> Outcome {
    let mut outcome = Outcome::default();
    let cluster_key = format!(
        "{}/{}",
        cluster.namespace().unwrap_or_default(),
        cluster.name_any()
    );
    let binding = match binding_of(crs, cluster, ctx).await {
        Ok(b) => b,
        Err(e) => {
            outcome.errors.push(e);
            return outcome;
        }
    };
    let original = binding.clone();
    let mut binding = binding;
    let refs = binding
        .metadata
        .owner_references
        .clone()
        .unwrap_or_default();
    binding.metadata.owner_references = Some(ensure_owner_ref(&refs, &owner_ref(crs)));
    let crs_name = crs.name_any();
    let strategy = crs.spec.strategy().to_string();

    match ctx.remotes.get(&ctx.client, cluster).await {
        Err(e) => {
            outcome.applied = Some(Applied::failed(
                INTERNAL_ERROR_REASON,
                INTERNAL_ERROR_MESSAGE,
                v1beta1_reasons::REMOTE_CLUSTER_CLIENT_FAILED,
                "Error",
                e.clone(),
            ));
            outcome.errors.push(e);
        }
        Ok(remote) if strategy == CONTINUOUS_APPLY => {
            let entry = binding.spec.get_or_create(&crs_name);
            let pass = continuous::Pass {
                crs,
                cluster_key: &cluster_key,
                remote: &remote,
                sources: read,
                interval: interval(crs),
            };
            continuous::apply(&ctx.continuous, pass, entry, &mut outcome).await;
        }
        Ok(remote) => {
            let entry = binding.spec.get_or_create(&crs_name);
            for r in read.iter().flatten() {
                let now = || Some(Time(conditions::now()));
                let values = resources::normalize_data(r.data.as_ref(), &r.key);
                let parsed = values.and_then(|v| {
                    let objects = resources::objects_from_data(&v)?;
                    let hash = resources::compute_hash(&v);
                    let needs = scope::needs_apply(&strategy, entry, &r.reference, &hash)?;
                    Ok((objects, hash, needs))
                });
                let (objects, hash, needs) = match parsed {
                    Ok(p) => p,
                    Err(e) => {
                        entry.set(ResourceBinding {
                            resource: r.reference.clone(),
                            hash: String::new(),
                            applied: Some(false),
                            last_applied_time: now(),
                        });
                        let message = format!(
                            "{} {} for Cluster {cluster_key}: {e}",
                            r.reference.kind, r.key
                        );
                        // Cluster API leaves the condition as it was here; a bad resource is
                        // worth saying.
                        outcome.applied = Some(Applied::not_applied(message.clone()));
                        outcome.errors.push(message);
                        continue;
                    }
                };
                if !needs {
                    continue;
                }
                let errors = apply_objects(&remote, &strategy, &objects).await;
                let ok = errors.is_empty();
                if !ok {
                    let message = format!(
                        "failed to apply {} {} to Cluster {cluster_key}: {}",
                        r.reference.kind,
                        r.key,
                        aggregate(errors.iter().map(String::as_str))
                    );
                    tracing::warn!(
                        clusterresourceset = %format!("{}/{crs_name}", crs.namespace().unwrap_or_default()),
                        cluster = %cluster_key,
                        error = %message,
                        "failed to apply ClusterResourceSet resource"
                    );
                    outcome.applied = Some(Applied::not_applied(message.clone()));
                    outcome.errors.push(message);
                }
                entry.set(ResourceBinding {
                    resource: r.reference.clone(),
                    hash,
                    applied: Some(ok),
                    last_applied_time: now(),
                });
            }
            if outcome.errors.is_empty() {
                outcome.applied = Some(Applied::ok());
            }
        }
    }
    // The binding is written whatever happened (Cluster API's deferred patch), guarded by
    // its resourceVersion: two sets writing one binding must not lose an entry.
    if let Err(e) = patch_binding(ctx, &original, &binding).await {
        if e.0 == Some(409) && outcome.errors.is_empty() {
            outcome.conflict = true;
        }
        outcome.errors.push(format!(
            "failed to patch ClusterResourceSetBinding {cluster_key}: {}",
            e.1
        ));
    }
    outcome
}

/// Applies the objects in order, collecting every error.
async fn apply_objects(
    remote: &Remote,
    strategy: &str,
    objects: &[serde_json::Map<String, Value>],
) -> Vec<String> {
    let mut errors = Vec::new();
    for o in objects {
        let result = if strategy == RECONCILE {
            remote.reconcile(o).await
        } else {
            remote.apply_once(o).await
        };
        if let Err(e) = result {
            errors.push(e);
        }
    }
    errors
}
