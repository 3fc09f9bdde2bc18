//! `tidegate uninstall [--keep-namespace] [--prune-workloads] [--silent]`: remove Tidegate and
//! keep the workloads, in Flux's order — the controllers first, then the toolkit finalizers (so
//! deleting the objects prunes nothing), then the CRDs, then the namespace. Asked to
//! (`--prune-workloads`), it first deletes every Kustomization while the controllers still run,
//! so that those with `prune: true` garbage-collect what they applied.

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};

use super::kind::{
    ARTIFACT_GENERATOR, BUCKET, GIT_REPOSITORY, HELM_CHART, HELM_RELEASE, HELM_REPOSITORY,
    KUSTOMIZATION, OCI_REPOSITORY, RECEIVER,
};
use super::{Global, action, crd_resource, resource, success, waiting};

/// Flags of `uninstall`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Keep the namespace.
    #[arg(long)]
    keep_namespace: bool,
    /// Delete the workloads too: delete every Kustomization first and wait while the
    /// controllers prune what those with `prune: true` applied.
    #[arg(long)]
    prune_workloads: bool,
    /// Uninstall without asking.
    #[arg(short, long)]
    silent: bool,
    #[command(flatten)]
    global: Global,
}

/// Deletes one object; a missing one is fine. Returns whether something was deleted.
async fn delete(api: &Api<DynamicObject>, name: &str) -> anyhow::Result<bool> {
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
        Err(e) => Err(super::api_error(&e)),
    }
}

/// Deletes every Kustomization and waits until their finalizers ran (the controllers prune
/// the inventories of those with `prune: true`).
async fn prune_workloads(
    client: &kube::Client,
    timeout: std::time::Duration,
) -> anyhow::Result<()> {
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &KUSTOMIZATION.resource());
    let list = |all: Api<DynamicObject>| async move {
        match all.list(&ListParams::default()).await {
            Ok(l) => Ok(l.items),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(Vec::new()),
            Err(e) => Err(super::api_error(&e)),
        }
    };
    action("deleting Kustomizations in all namespaces, pruning their workloads");
    for o in list(all.clone()).await? {
        let (Some(name), Some(namespace)) = (o.metadata.name.clone(), o.metadata.namespace.clone())
        else {
            continue;
        };
        if delete(&KUSTOMIZATION.api(client, &namespace), &name).await? {
            success(&format!("Kustomization/{namespace}/{name} deleted"));
        }
    }
    waiting("waiting for the Kustomizations to be finalized");
    let _spinner = super::spinner("waiting for the Kustomizations to be finalized");
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let left = list(all.clone()).await?;
        if left.is_empty() {
            success("Kustomizations finalized, workloads pruned");
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            anyhow::bail!(
                "timeout waiting for {} Kustomization(s) to be finalized; nothing else was removed",
                left.len()
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

/// Runs `uninstall`.
pub async fn run(a: Args) -> anyhow::Result<()> {
    let client = a.global.cluster.client().await?;
    let ns = &a.global.namespace;
    super::confirm(
        "Are you sure you want to delete Tidegate and its custom resource definitions?",
        a.silent,
        "uninstall",
    )?;
    if a.prune_workloads {
        prune_workloads(&client, a.global.timeout).await?;
    }
    action(&format!("deleting components in {ns} namespace"));
    let components = [
        (
            resource("apps", "v1", "Deployment", "deployments"),
            crate::install::DEPLOYMENT.to_string(),
            true,
        ),
        (
            resource("", "v1", "Service", "services"),
            "source-controller".to_string(),
            true,
        ),
        (
            resource("", "v1", "Service", "services"),
            "notification-controller".to_string(),
            true,
        ),
        (
            resource("", "v1", "Service", "services"),
            "webhook-receiver".to_string(),
            true,
        ),
        (
            resource("", "v1", "ServiceAccount", "serviceaccounts"),
            crate::install::DEPLOYMENT.to_string(),
            true,
        ),
        (
            resource(
                "rbac.authorization.k8s.io",
                "v1",
                "ClusterRoleBinding",
                "clusterrolebindings",
            ),
            format!("cluster-reconciler-{ns}"),
            false,
        ),
    ];
    for (res, name, namespaced) in &components {
        let api: Api<DynamicObject> = if *namespaced {
            Api::namespaced_with(client.clone(), ns, res)
        } else {
            Api::all_with(client.clone(), res)
        };
        if delete(&api, name).await? {
            let at = if *namespaced {
                format!("{ns}/")
            } else {
                String::new()
            };
            success(&format!("{}/{at}{name} deleted", res.kind));
        }
    }
    action("deleting toolkit.fluxcd.io finalizers in all namespaces");
    for kind in [
        GIT_REPOSITORY,
        OCI_REPOSITORY,
        HELM_REPOSITORY,
        HELM_CHART,
        KUSTOMIZATION,
        HELM_RELEASE,
        BUCKET,
        ARTIFACT_GENERATOR,
        RECEIVER,
    ] {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &kind.resource());
        let items = match api.list(&ListParams::default()).await {
            Ok(l) => l.items,
            Err(kube::Error::Api(s)) if s.code == 404 => Vec::new(),
            Err(e) => return Err(super::api_error(&e)),
        };
        for o in items {
            let (Some(name), Some(namespace)) =
                (o.metadata.name.clone(), o.metadata.namespace.clone())
            else {
                continue;
            };
            let api = kind.api(&client, &namespace);
            let patch = serde_json::json!({"metadata": {"finalizers": null}});
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|e| super::describe(kind.kind, &namespace, &name, &e))?;
            success(&format!(
                "{}/{namespace}/{name} finalizers deleted",
                kind.kind
            ));
        }
    }
    action("deleting toolkit.fluxcd.io custom resource definitions");
    let crds: Api<DynamicObject> = Api::all_with(client.clone(), &crd_resource());
    for name in tidegate_api::crds::names() {
        if delete(&crds, name).await? {
            success(&format!("CustomResourceDefinition/{name} deleted"));
        }
    }
    if !a.keep_namespace {
        action(&format!("deleting namespace {ns}"));
        let namespaces: Api<DynamicObject> = Api::all_with(
            client.clone(),
            &resource("", "v1", "Namespace", "namespaces"),
        );
        if delete(&namespaces, ns).await? {
            success(&format!("Namespace/{ns} deleted"));
        }
    }
    success("uninstall finished");
    Ok(())
}
