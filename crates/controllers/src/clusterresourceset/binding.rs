//! Cluster API's ClusterResourceSetBinding controller: a binding whose Cluster is gone or being
//! deleted is deleted (the objects applied to that cluster are not touched).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use kube::api::DeleteParams;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tidegate_api::clusterresourceset::{API_VERSION, ClusterResourceSetBindingSpec};
use tidegate_api::{Cluster, ClusterResourceSet, ClusterResourceSetBinding};
use tidegate_apply::error::{code, describe};

use super::Context;
use super::read::owner_ref;

/// The Cluster's binding, created (owned by the set) when missing.
pub(super) async fn binding_of(
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

/// A merge patch from `original` to `binding` carrying the original resourceVersion.
pub(super) async fn patch_binding(
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

/// The binding of a Cluster (same name and namespace).
pub fn key_of(cluster: &Cluster) -> ObjectRef<ClusterResourceSetBinding> {
    let r = ObjectRef::new(&cluster.name_any());
    match cluster.namespace() {
        Some(ns) => r.within(&ns),
        None => r,
    }
}

struct Ctx {
    client: Client,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BindingError(String);

/// Runs until `shutdown`; `clusters` wakes the binding of a Cluster that changed.
pub async fn run(
    client: Client,
    clusters: UnboundedReceiver<ObjectRef<ClusterResourceSetBinding>>,
    namespace: Option<String>,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let api: Api<ClusterResourceSetBinding> = match &namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let (reader, writer) = reflector::store();
    let trigger = reflector::reflector(
        writer,
        watcher(api, watcher::Config::default()).default_backoff(),
    )
    .applied_objects();
    Controller::for_stream(trigger, reader)
        .reconcile_on(clusters)
        .graceful_shutdown_on(shutdown)
        .run(
            reconcile,
            |_b, _e: &BindingError, _ctx| Action::requeue(Duration::from_secs(5)),
            Arc::new(Ctx { client }),
        )
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "clusterresourcesetbinding controller");
            }
        })
        .await;
}

async fn reconcile(
    binding: Arc<ClusterResourceSetBinding>,
    ctx: Arc<Ctx>,
) -> Result<Action, BindingError> {
    let ns = binding.namespace().unwrap_or_default();
    let clusters: Api<Cluster> = Api::namespaced(ctx.client.clone(), &ns);
    let cluster_name = if binding.spec.cluster_name.is_empty() {
        binding.name_any()
    } else {
        binding.spec.cluster_name.clone()
    };
    let gone = match clusters.get_opt(&cluster_name).await {
        Ok(None) => true,
        Ok(Some(c)) => c.metadata.deletion_timestamp.is_some(),
        Err(e) => return Err(BindingError(describe(&e))),
    };
    if gone {
        tracing::info!(
            namespace = ns,
            name = binding.name_any(),
            "deleting ClusterResourceSetBinding because the owner Cluster no longer exists or is being deleted"
        );
        let bindings: Api<ClusterResourceSetBinding> = Api::namespaced(ctx.client.clone(), &ns);
        match bindings
            .delete(&binding.name_any(), &DeleteParams::default())
            .await
        {
            Ok(_) => {}
            Err(e) if code(&e) == Some(404) => {}
            Err(e) => return Err(BindingError(describe(&e))),
        }
    }
    Ok(Action::await_change())
}
