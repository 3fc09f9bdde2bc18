//! Deleting a ClusterResourceSet: its entry and owner reference leave the bindings (an empty
//! binding is deleted), then the finalizer goes. Under Cluster API's strategies the objects in
//! the workload clusters stay; under `ContinuousApply` they are pruned first.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use tidegate_api::clusterresourceset::{CONTINUOUS_APPLY, FINALIZER, KIND};
use tidegate_api::{Cluster, ClusterResourceSet, ClusterResourceSetBinding};
use tidegate_apply::error::{code, describe};

use super::{Context, continuous};

/// Deletion, as Cluster API: the entry leaves each selected Cluster's binding. A
/// `ContinuousApply` set first prunes its objects from every Cluster it has an entry for.
pub(super) async fn delete(
    crs: &ClusterResourceSet,
    ctx: &Context,
    clusters: &[Cluster],
) -> Result<Action, String> {
    let crs_name = crs.name_any();
    let ns = crs.namespace().unwrap_or_default();
    let api: Api<ClusterResourceSetBinding> = Api::namespaced(ctx.client.clone(), &ns);
    if crs.spec.strategy() == CONTINUOUS_APPLY {
        let bindings = api.list(&ListParams::default()).await.map_err(|e| {
            format!(
                "failed to list ClusterResourceSetBindings during ClusterResourceSet deletion: {}",
                describe(&e)
            )
        })?;
        for binding in bindings.items {
            if binding
                .spec
                .bindings
                .iter()
                .any(|e| e.cluster_resource_set_name == crs_name)
            {
                continuous::prune_binding(crs, ctx, &binding).await?;
                remove_entry(ctx, &binding, &crs_name).await?;
            }
        }
        ctx.continuous.forget(&format!("{ns}/{crs_name}"), None);
    } else {
        for cluster in clusters {
            let Some(binding) = api.get_opt(&cluster.name_any()).await.map_err(|e| {
                format!(
                    "failed to get ClusterResourceSetBinding during ClusterResourceSet deletion: {}",
                    describe(&e)
                )
            })?
            else {
                continue;
            };
            remove_entry(ctx, &binding, &crs_name).await?;
        }
    }
    let sets: Api<ClusterResourceSet> = Api::namespaced(ctx.client.clone(), &ns);
    crate::finalizer::remove_named(&sets, crs, FINALIZER).await?;
    ctx.versions.forget(crs);
    Ok(Action::await_change())
}

/// Removes `crs_name`'s entry and owner reference from `binding`; deletes it when no entry is
/// left.
pub(super) async fn remove_entry(
    ctx: &Context,
    binding: &ClusterResourceSetBinding,
    crs_name: &str,
) -> Result<(), String> {
    let api: Api<ClusterResourceSetBinding> =
        Api::namespaced(ctx.client.clone(), &binding.namespace().unwrap_or_default());
    let mut updated = binding.clone();
    updated.spec.remove(crs_name);
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
        return Ok(());
    }
    let before = serde_json::to_value(binding).unwrap_or_default();
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
    Ok(())
}
