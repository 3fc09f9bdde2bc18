//! One ClusterResourceSet reconcile, in Cluster API's order: finalizer, pause, the Clusters its
//! selector picks, deletion (bindings cleaned, objects left), then for the ConfigMaps and
//! Secrets it names (read, owner reference added) and for each Cluster: its binding, its
//! client, and each resource applied when its strategy says so. Conditions, reasons and
//! messages are Cluster API's (v1beta2, and the v1beta1 ones under `status.deprecated`).

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use serde_json::{Value, json};
use tidegate_api::cluster::PAUSED_ANNOTATION;
use tidegate_api::clusterresourceset::{
    API_VERSION, APPLIED_REASON, ClusterResourceSetBindingSpec, ClusterResourceSetStatus,
    Deprecated, DeprecatedV1Beta1, FINALIZER, INTERNAL_ERROR_MESSAGE, INTERNAL_ERROR_REASON, KIND,
    NOT_APPLIED_MESSAGE, NOT_APPLIED_REASON, PAUSED, RECONCILE, RESOURCES_APPLIED, ResourceBinding,
    ResourceRef, SECRET_TYPE, V1Beta1Condition, WRONG_SECRET_TYPE_REASON, v1beta1_reasons,
};
use tidegate_api::conditions;
use tidegate_api::{Cluster, ClusterResourceSet, ClusterResourceSetBinding};
use tidegate_apply::error::{code, describe};

use super::scope::{self, Remote};
use super::{Context, ReconcileError, resources, selector};

/// Clusters worked on at once within one reconcile.
const CLUSTERS_AT_ONCE: usize = 8;

/// Cluster API's error for a Secret of another type.
const SECRET_TYPE_NOT_SUPPORTED: &str = "unsupported secret type";

/// One update of `ResourcesApplied`: the v1beta2 reason and message, and the v1beta1 reason,
/// severity and message (`None` reason: True).
#[derive(Debug, Clone)]
struct Applied {
    reason: &'static str,
    message: String,
    v1beta1: Option<(&'static str, &'static str, String)>,
}

impl Applied {
    fn ok() -> Applied {
        Applied {
            reason: APPLIED_REASON,
            message: String::new(),
            v1beta1: None,
        }
    }
    fn failed(
        reason: &'static str,
        message: &str,
        v1_reason: &'static str,
        severity: &'static str,
        v1_message: String,
    ) -> Applied {
        Applied {
            reason,
            message: message.to_string(),
            v1beta1: Some((v1_reason, severity, v1_message)),
        }
    }
    /// Applying failed: NotApplied (v1beta1 ApplyFailed with the details).
    fn not_applied(message: String) -> Applied {
        Applied::failed(
            NOT_APPLIED_REASON,
            NOT_APPLIED_MESSAGE,
            v1beta1_reasons::APPLY_FAILED,
            "Warning",
            message,
        )
    }
    fn is_true(&self) -> bool {
        self.v1beta1.is_none()
    }
}

/// What applying to one Cluster came to: the last condition update and the errors.
#[derive(Default)]
struct Outcome {
    applied: Option<Applied>,
    errors: Vec<String>,
    /// Only the binding write lost a race with another ClusterResourceSet.
    conflict: bool,
}

/// A ConfigMap or Secret as read: its data values by key (Secret values decoded).
struct Source {
    reference: ResourceRef,
    data: Option<BTreeMap<String, Vec<u8>>>,
    key: String,
}

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
    Ok(Action::await_change())
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

/// Errors as Go's `kerrors.NewAggregate` prints them: one as itself, several in brackets.
fn aggregate<'a>(errors: impl Iterator<Item = &'a str>) -> String {
    let all: Vec<&str> = errors.collect();
    match all.as_slice() {
        [one] => one.to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Sets `ResourcesApplied` (v1beta2) and its v1beta1 twin.
fn set_applied(status: &mut ClusterResourceSetStatus, a: &Applied, generation: Option<i64>) {
    conditions::set(
        &mut status.conditions,
        RESOURCES_APPLIED,
        a.is_true(),
        a.reason,
        &a.message,
        generation,
    );
    let v1 = status
        .deprecated
        .get_or_insert_with(Deprecated::default)
        .v1beta1
        .get_or_insert_with(DeprecatedV1Beta1::default);
    let (state, severity, reason, message) = match &a.v1beta1 {
        None => ("True", None, None, None),
        Some((reason, severity, message)) => (
            "False",
            Some(severity.to_string()),
            Some(reason.to_string()),
            Some(message.clone()),
        ),
    };
    let now = Time(conditions::now());
    match v1
        .conditions
        .iter_mut()
        .find(|c| c.type_ == RESOURCES_APPLIED)
    {
        Some(c) => {
            if c.status != state {
                c.last_transition_time = now;
            }
            c.status = state.into();
            c.severity = severity;
            c.reason = reason;
            c.message = message;
        }
        None => v1.conditions.push(V1Beta1Condition {
            type_: RESOURCES_APPLIED.into(),
            status: state.into(),
            severity,
            last_transition_time: now,
            reason,
            message,
        }),
    }
}

/// The Clusters of the set's namespace its selector matches, not being deleted; an empty
/// selector selects none.
fn select_clusters(crs: &ClusterResourceSet, ctx: &Context) -> Result<Vec<Cluster>, String> {
    let Some(sel) = selector::parse(&crs.spec.cluster_selector)
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

/// The owner reference a ConfigMap, Secret or binding gets.
fn owner_ref(crs: &ClusterResourceSet) -> OwnerReference {
    OwnerReference {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        name: crs.name_any(),
        uid: crs.uid().unwrap_or_default(),
        ..Default::default()
    }
}

/// `refs` with `owner` replacing the reference of the same group, kind and name, or added
/// (`util.EnsureOwnerRef`).
fn ensure_owner_ref(refs: &[OwnerReference], owner: &OwnerReference) -> Vec<OwnerReference> {
    let group = |v: &str| {
        v.split_once('/')
            .map(|(g, _)| g.to_string())
            .unwrap_or_default()
    };
    let mut out = refs.to_vec();
    match out.iter_mut().find(|r| {
        group(&r.api_version) == group(&owner.api_version)
            && r.kind == owner.kind
            && r.name == owner.name
    }) {
        Some(r) => *r = owner.clone(),
        None => out.push(owner.clone()),
    }
    out
}

/// Reads the ConfigMaps and Secrets (a missing one is skipped) and makes the set their owner.
/// The errors end the reconcile before any Cluster is touched.
async fn read_resources(
    crs: &ClusterResourceSet,
    ctx: &Context,
) -> Result<Vec<Option<Source>>, Outcome> {
    let ns = crs.namespace().unwrap_or_default();
    let owner = owner_ref(crs);
    let mut outcome = Outcome::default();
    let mut read = Vec::new();
    for r in &crs.spec.resources {
        let key = format!("{ns}/{}", r.name);
        let got = match r.kind.as_str() {
            "Secret" => {
                let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &ns);
                api.get(&r.name).await.map(|s| {
                    let wrong_type = s.type_.as_deref() != Some(SECRET_TYPE);
                    let data = s.data.as_ref().map(|d| {
                        d.iter()
                            .map(|(k, v)| (k.clone(), v.0.clone()))
                            .collect::<BTreeMap<_, _>>()
                    });
                    (wrong_type, data, s.metadata)
                })
            }
            _ => {
                let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
                api.get(&r.name).await.map(|c| {
                    let data = c.data.as_ref().map(|d| {
                        d.iter()
                            .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
                            .collect::<BTreeMap<_, _>>()
                    });
                    (false, data, c.metadata)
                })
            }
        };
        match got {
            Ok((true, _, _)) => {
                outcome.applied = Some(Applied::failed(
                    WRONG_SECRET_TYPE_REASON,
                    &format!("Secret type of resource {} is not supported", r.name),
                    v1beta1_reasons::WRONG_SECRET_TYPE,
                    "Warning",
                    SECRET_TYPE_NOT_SUPPORTED.into(),
                ));
                outcome
                    .errors
                    .push(format!("Secret {key}: {SECRET_TYPE_NOT_SUPPORTED}"));
                read.push(None);
            }
            Ok((false, data, meta)) => {
                let refs = meta.owner_references.clone().unwrap_or_default();
                let wanted = ensure_owner_ref(&refs, &owner);
                if wanted != refs {
                    let patch = json!({"metadata": {"ownerReferences": wanted}});
                    let result = if r.kind == "Secret" {
                        Api::<Secret>::namespaced(ctx.client.clone(), &ns)
                            .patch(&r.name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await
                            .map(|_| ())
                    } else {
                        Api::<ConfigMap>::namespaced(ctx.client.clone(), &ns)
                            .patch(&r.name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await
                            .map(|_| ())
                    };
                    if let Err(e) = result {
                        outcome.errors.push(format!(
                            "adding the ClusterResourceSet as owner of {} {key}: {}",
                            r.kind,
                            describe(&e)
                        ));
                    }
                }
                read.push(Some(Source {
                    reference: r.clone(),
                    data,
                    key,
                }));
            }
            Err(e) => {
                let message = format!("{} {key}: {}", r.kind, describe(&e));
                outcome.applied = Some(Applied::failed(
                    INTERNAL_ERROR_REASON,
                    INTERNAL_ERROR_MESSAGE,
                    v1beta1_reasons::RETRIEVING_RESOURCE_FAILED,
                    "Warning",
                    message.clone(),
                ));
                // A resource not created yet is no error: its creation wakes the set.
                if code(&e) != Some(404) {
                    outcome.errors.push(message);
                }
                read.push(None);
            }
        }
    }
    if outcome.errors.is_empty() {
        // Cluster API records the missing resource's condition and carries on; the
        // condition is then replaced by the Clusters' outcome.
        return Ok(read);
    }
    Err(outcome)
}

/// The Cluster's binding, created (owned by the set) when missing.
async fn binding_of(
    crs: &ClusterResourceSet,
    cluster: &Cluster,
    ctx: &Context,
) -> Result<ClusterResourceSetBinding, String> {
    let ns = cluster.namespace().unwrap_or_default();
    let name = cluster.name_any();
    let api: Api<ClusterResourceSetBinding> = Api::namespaced(ctx.client.clone(), &ns);
    if let Some(b) = api.get_opt(&name).await.map_err(|e| describe(&e))? {
        return Ok(b);
    }
    let mut b = ClusterResourceSetBinding {
        api_version: API_VERSION.into(),
        kind: tidegate_api::clusterresourceset::BINDING_KIND.into(),
        spec: ClusterResourceSetBindingSpec {
            bindings: Vec::new(),
            cluster_name: name.clone(),
        },
        ..Default::default()
    };
    b.metadata.name = Some(name.clone());
    b.metadata.namespace = Some(ns.clone());
    b.metadata.owner_references = Some(vec![owner_ref(crs)]);
    match api.create(&PostParams::default(), &b).await {
        Ok(b) => Ok(b),
        Err(e) if code(&e) == Some(409) => api.get(&name).await.map_err(|e| describe(&e)),
        Err(e) => Err(format!(
            "failed to create clusterResourceSetBinding for cluster: {ns}/{name}: {}",
            describe(&e)
        )),
    }
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

/// A merge patch from `original` to `binding` carrying the original resourceVersion.
async fn patch_binding(
    ctx: &Context,
    original: &ClusterResourceSetBinding,
    binding: &ClusterResourceSetBinding,
) -> Result<(), (Option<u16>, String)> {
    let before = serde_json::to_value(original).unwrap_or_default();
    let after = serde_json::to_value(binding).unwrap_or_default();
    let Some(mut patch) = crate::status::merge_diff(&before, &after) else {
        return Ok(());
    };
    patch["metadata"]["resourceVersion"] = json!(original.resource_version());
    let api: Api<ClusterResourceSetBinding> = Api::namespaced(
        ctx.client.clone(),
        &original.namespace().unwrap_or_default(),
    );
    api.patch(
        &original.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(|_| ())
    .map_err(|e| (code(&e), describe(&e)))
}

/// Deletion: the set's entry and owner reference leave each selected Cluster's binding (an
/// empty binding is deleted); the objects in the workload clusters stay; then the finalizer
/// goes.
async fn delete(
    crs: &ClusterResourceSet,
    ctx: &Context,
    clusters: &[Cluster],
) -> Result<Action, String> {
    let crs_name = crs.name_any();
    for cluster in clusters {
        let ns = cluster.namespace().unwrap_or_default();
        let api: Api<ClusterResourceSetBinding> = Api::namespaced(ctx.client.clone(), &ns);
        let Some(binding) = api.get_opt(&cluster.name_any()).await.map_err(|e| {
            format!(
                "failed to get ClusterResourceSetBinding during ClusterResourceSet deletion: {}",
                describe(&e)
            )
        })?
        else {
            continue;
        };
        let mut updated = binding.clone();
        updated.spec.remove(&crs_name);
        let refs: Vec<OwnerReference> = updated
            .metadata
            .owner_references
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|r| !(r.kind == KIND && r.name == crs_name))
            .collect();
        updated.metadata.owner_references = Some(refs);
        if updated.spec.bindings.is_empty() {
            if let Err(e) = api
                .delete(&binding.name_any(), &DeleteParams::default())
                .await
                && code(&e) != Some(404)
            {
                tracing::error!(error = %describe(&e), "failed to delete empty ClusterResourceSetBinding");
            }
        } else {
            let before = serde_json::to_value(&binding).unwrap_or_default();
            let after = serde_json::to_value(&updated).unwrap_or_default();
            if let Some(patch) = crate::status::merge_diff(&before, &after) {
                api.patch(
                    &binding.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&patch),
                )
                .await
                .map_err(|e| describe(&e))?;
            }
        }
    }
    let api: Api<ClusterResourceSet> =
        Api::namespaced(ctx.client.clone(), &crs.namespace().unwrap_or_default());
    crate::finalizer::remove_named(&api, crs, FINALIZER).await?;
    ctx.versions.forget(crs);
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_refs_are_replaced_by_group_kind_and_name() {
        let mut owner = OwnerReference {
            api_version: "addons.cluster.x-k8s.io/v1beta2".into(),
            kind: "ClusterResourceSet".into(),
            name: "crs".into(),
            uid: "new".into(),
            ..Default::default()
        };
        let old = OwnerReference {
            api_version: "addons.cluster.x-k8s.io/v1beta1".into(),
            uid: "old".into(),
            ..owner.clone()
        };
        let other = OwnerReference {
            name: "other".into(),
            ..owner.clone()
        };
        let out = ensure_owner_ref(&[old, other.clone()], &owner);
        assert_eq!(out, vec![owner.clone(), other.clone()]);
        owner.name = "third".into();
        assert_eq!(
            ensure_owner_ref(std::slice::from_ref(&other), &owner).len(),
            2
        );
    }

    #[test]
    fn go_aggregates() {
        assert_eq!(aggregate(["a"].into_iter()), "a");
        assert_eq!(aggregate(["a", "b"].into_iter()), "[a, b]");
    }
}
