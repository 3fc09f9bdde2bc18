//! ClusterResourceSets from the CLI: `get clusterresourcesets|clusterresourcesetbindings`,
//! `tree clusterresourceset NAME` (per Cluster, each resource's last apply and whether its
//! objects are in the workload cluster now) and `reconcile clusterresourceset NAME`.

use std::time::{Duration, Instant};

use kube::api::{ListParams, Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use serde_json::Value;
use tidegate_api::clusterresourceset::{RESOURCES_APPLIED, ResourceRef};
use tidegate_api::{Cluster, ClusterResourceSet, ClusterResourceSetBinding};

use super::tree::Node;
use super::{action, format_table, success, waiting};
use crate::cluster::ClusterArgs;

/// Flags of the ClusterResourceSet verbs (namespace `default`, as kubectl's).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this object (`get`), or the object (`tree`, `reconcile`).
    name: Option<String>,
    /// Across all namespaces (`get`).
    #[arg(short = 'A', long)]
    all_namespaces: bool,
    #[command(flatten)]
    cluster: ClusterArgs,
    /// The namespace.
    #[arg(short = 'n', long, default_value = "default", value_parser = super::namespace_name)]
    namespace: String,
    /// How long to wait (`reconcile`).
    #[arg(long, default_value = "2m", value_parser = tidegate_core::duration::parse)]
    timeout: Duration,
}

fn applied(obj: &ClusterResourceSet) -> (String, String) {
    let st = obj.status.as_ref();
    let c =
        st.and_then(|s| tidegate_api::conditions::get(&s.conditions, RESOURCES_APPLIED).cloned());
    let detail = st
        .and_then(|s| s.deprecated.as_ref())
        .and_then(|d| d.v1beta1.as_ref())
        .and_then(|v| v.conditions.iter().find(|c| c.type_ == RESOURCES_APPLIED))
        .and_then(|c| c.message.clone());
    match c {
        None => ("Unknown".into(), "waiting to be reconciled".into()),
        Some(c) if c.status == "True" => ("True".into(), "Applied".into()),
        Some(c) => (c.status, detail.unwrap_or(c.message)),
    }
}

/// `get clusterresourcesets`: NAME STRATEGY CLUSTERS APPLIED MESSAGE.
pub async fn get(args: Args) -> anyhow::Result<()> {
    let client = args.cluster.client().await?;
    let (sets, bindings): (Api<ClusterResourceSet>, Api<ClusterResourceSetBinding>) =
        if args.all_namespaces {
            (Api::all(client.clone()), Api::all(client))
        } else {
            (
                Api::namespaced(client.clone(), &args.namespace),
                Api::namespaced(client, &args.namespace),
            )
        };
    let mut items = sets
        .list(&ListParams::default())
        .await
        .map_err(|e| super::api_error(&e))?
        .items;
    if let Some(n) = &args.name {
        items.retain(|s| &s.name_any() == n);
        if items.is_empty() {
            anyhow::bail!(
                "ClusterResourceSet object '{n}' not found in \"{}\" namespace",
                args.namespace
            );
        }
    }
    let bindings = bindings
        .list(&ListParams::default())
        .await
        .map_err(|e| super::api_error(&e))?
        .items;
    let mut header = vec![];
    if args.all_namespaces {
        header.push("NAMESPACE".to_string());
    }
    header.extend(["NAME", "STRATEGY", "CLUSTERS", "APPLIED", "MESSAGE"].map(String::from));
    let mut rows = vec![header];
    for s in &items {
        let clusters = bindings
            .iter()
            .filter(|b| b.namespace() == s.namespace())
            .filter(|b| {
                b.spec
                    .bindings
                    .iter()
                    .any(|e| e.cluster_resource_set_name == s.name_any())
            })
            .count();
        let (status, message) = applied(s);
        let mut row = vec![];
        if args.all_namespaces {
            row.push(s.namespace().unwrap_or_default());
        }
        row.extend([
            s.name_any(),
            s.spec.strategy().to_string(),
            clusters.to_string(),
            status,
            message,
        ]);
        rows.push(row);
    }
    if rows.len() == 1 {
        eprintln!(
            "no ClusterResourceSets found in {} namespace",
            args.namespace
        );
        return Ok(());
    }
    print!("{}", format_table(&rows));
    Ok(())
}

/// `get clusterresourcesetbindings`: NAME CLUSTER CLUSTERRESOURCESETS APPLIED.
pub async fn get_bindings(args: Args) -> anyhow::Result<()> {
    let client = args.cluster.client().await?;
    let api: Api<ClusterResourceSetBinding> = if args.all_namespaces {
        Api::all(client)
    } else {
        Api::namespaced(client, &args.namespace)
    };
    let mut rows = vec![];
    let mut header = vec![];
    if args.all_namespaces {
        header.push("NAMESPACE".to_string());
    }
    header.extend(["NAME", "CLUSTER", "CLUSTERRESOURCESETS", "APPLIED"].map(String::from));
    rows.push(header);
    for b in api
        .list(&ListParams::default())
        .await
        .map_err(|e| super::api_error(&e))?
        .items
    {
        if args.name.as_ref().is_some_and(|n| *n != b.name_any()) {
            continue;
        }
        let sets: Vec<&str> = b
            .spec
            .bindings
            .iter()
            .map(|e| e.cluster_resource_set_name.as_str())
            .collect();
        let total: usize = b.spec.bindings.iter().map(|e| e.resources.len()).sum();
        let ok: usize = b
            .spec
            .bindings
            .iter()
            .flat_map(|e| &e.resources)
            .filter(|r| r.applied == Some(true))
            .count();
        let mut row = vec![];
        if args.all_namespaces {
            row.push(b.namespace().unwrap_or_default());
        }
        row.extend([
            b.name_any(),
            b.spec.cluster_name.clone(),
            sets.join(","),
            format!("{ok}/{total}"),
        ]);
        rows.push(row);
    }
    print!("{}", format_table(&rows));
    Ok(())
}

/// A short digest: `sha256:0123456789ab`.
fn short(hash: &str) -> &str {
    &hash[..hash.len().min(19)]
}

/// The objects a ConfigMap or Secret holds, as `(apiVersion, kind, namespace, name)`.
async fn objects_of(
    client: &Client,
    namespace: &str,
    r: &ResourceRef,
) -> Option<Vec<(String, String, String, String)>> {
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    let data: std::collections::BTreeMap<String, Vec<u8>> = if r.kind == "Secret" {
        let s = Api::<Secret>::namespaced(client.clone(), namespace)
            .get(&r.name)
            .await
            .ok()?;
        s.data?.into_iter().map(|(k, v)| (k, v.0)).collect()
    } else {
        let c = Api::<ConfigMap>::namespaced(client.clone(), namespace)
            .get(&r.name)
            .await
            .ok()?;
        c.data?
            .into_iter()
            .map(|(k, v)| (k, v.into_bytes()))
            .collect()
    };
    let values: Vec<Vec<u8>> = data.into_values().collect();
    let objects =
        tidegate_controllers::clusterresourceset::resources::objects_from_data(&values).ok()?;
    Some(
        objects
            .iter()
            .map(|o| {
                let s = |p: &str| {
                    Value::Object(o.clone())
                        .pointer(p)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                (
                    s("/apiVersion"),
                    s("/kind"),
                    s("/metadata/namespace"),
                    s("/metadata/name"),
                )
            })
            .collect(),
    )
}

/// A client of the Cluster's workload cluster (from its kubeconfig Secret).
async fn workload_client(client: &Client, namespace: &str, cluster: &str) -> Option<Client> {
    use k8s_openapi::api::core::v1::Secret;
    let secret = Api::<Secret>::namespaced(client.clone(), namespace)
        .get(&tidegate_api::cluster::kubeconfig_secret_name(cluster))
        .await
        .ok()?;
    let bytes = secret
        .data?
        .get(tidegate_api::cluster::KUBECONFIG_KEY)?
        .0
        .clone();
    // Whoever may write the Secret must not run commands as the user of this CLI.
    let mut config = tidegate_controllers::kubeconfig::client_config(&bytes, Default::default())
        .await
        .ok()?;
    config.connect_timeout = Some(Duration::from_secs(5));
    Client::try_from(config).ok()
}

/// `tree clusterresourceset NAME`.
pub async fn tree(args: Args) -> anyhow::Result<()> {
    let Some(name) = &args.name else {
        anyhow::bail!("a ClusterResourceSet name is required");
    };
    let client = args.cluster.client().await?;
    let ns = &args.namespace;
    let crs = Api::<ClusterResourceSet>::namespaced(client.clone(), ns)
        .get(name)
        .await
        .map_err(|e| super::describe("ClusterResourceSet", ns, name, &e))?;
    let bindings = Api::<ClusterResourceSetBinding>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .map_err(|e| super::api_error(&e))?
        .items;
    let mut clusters = Vec::new();
    for b in &bindings {
        let Some(entry) = b
            .spec
            .bindings
            .iter()
            .find(|e| e.cluster_resource_set_name == *name)
        else {
            continue;
        };
        let cluster_name = &b.spec.cluster_name;
        let cluster = Api::<Cluster>::namespaced(client.clone(), ns)
            .get_opt(cluster_name)
            .await
            .ok()
            .flatten();
        let remote = match &cluster {
            Some(_) => workload_client(&client, ns, cluster_name).await,
            None => None,
        };
        let resolver = remote
            .as_ref()
            .map(|c| tidegate_apply::resolve::Resolver::new(c.clone()));
        let mut resources = Vec::new();
        for r in &crs.spec.resources {
            let state = match entry.resources.iter().find(|e| e.resource == *r) {
                None => "not applied yet".to_string(),
                Some(e) => format!(
                    "{} {}{}",
                    if e.applied == Some(true) {
                        "applied"
                    } else {
                        "failed"
                    },
                    short(&e.hash),
                    e.last_applied_time
                        .as_ref()
                        .map(|t| format!(" at {}", t.0))
                        .unwrap_or_default()
                ),
            };
            let mut children = Vec::new();
            for (api_version, kind, ons, oname) in
                objects_of(&client, ns, r).await.unwrap_or_default()
            {
                let presence = match (&remote, &resolver) {
                    (Some(c), Some(res)) => match res.resolve(&api_version, &kind).await {
                        Ok(Some(t)) => {
                            let api = t.api(c, if ons.is_empty() { "default" } else { &ons });
                            match api.get_opt(&oname).await {
                                Ok(Some(_)) => "present",
                                Ok(None) => "missing",
                                Err(_) => "unknown",
                            }
                        }
                        Ok(None) => "kind not served",
                        Err(_) => "unreachable",
                    },
                    _ => "unreachable",
                };
                let label = if ons.is_empty() {
                    format!("{kind}/{oname} ({presence})")
                } else {
                    format!("{kind}/{ons}/{oname} ({presence})")
                };
                children.push(Node::new(label, Vec::new()));
            }
            resources.push(Node::new(
                format!("{}/{ns}/{} ({state})", r.kind, r.name),
                children,
            ));
        }
        let gone = if cluster.is_none() { " (gone)" } else { "" };
        clusters.push(Node::new(
            format!("Cluster/{ns}/{cluster_name}{gone}"),
            resources,
        ));
    }
    let root = Node::new(
        format!("ClusterResourceSet/{ns}/{name} ({})", crs.spec.strategy()),
        clusters,
    );
    print!("{}", super::tree::draw(&root));
    Ok(())
}

/// `reconcile clusterresourceset NAME`: requests a reconcile and waits until it was handled.
pub async fn reconcile(args: Args) -> anyhow::Result<()> {
    let Some(name) = &args.name else {
        anyhow::bail!("a ClusterResourceSet name is required");
    };
    let client = args.cluster.client().await?;
    let ns = &args.namespace;
    let api: Api<ClusterResourceSet> = Api::namespaced(client, ns);
    let token = super::now_rfc3339();
    action(&format!(
        "annotating ClusterResourceSet {name} in {ns} namespace"
    ));
    let patch = serde_json::json!({"metadata": {"annotations": {
        tidegate_api::meta::RECONCILE_REQUESTED_AT: token}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| super::describe("ClusterResourceSet", ns, name, &e))?;
    success("ClusterResourceSet annotated");
    waiting("waiting for ClusterResourceSet reconciliation");
    let deadline = Instant::now() + args.timeout;
    loop {
        let obj = api.get(name).await?;
        let handled = obj
            .status
            .as_ref()
            .and_then(|s| s.last_handled_reconcile_at.as_deref())
            == Some(token.as_str());
        if handled {
            let (status, message) = applied(&obj);
            if status == "True" {
                success("ClusterResourceSet reconciliation completed");
                return Ok(());
            }
            anyhow::bail!("ClusterResourceSet reconciliation failed: {message}");
        }
        if Instant::now() > deadline {
            anyhow::bail!("timeout waiting for ClusterResourceSet {ns}/{name} to be reconciled");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
