//! `tidegate cluster create|delete|list`: workload clusters of a running `tidegate up`, each an
//! embedded API server registered as a Cluster API Cluster with its kubeconfig Secret.

use std::time::Duration;

use kube::api::{DeleteParams, ListParams};
use kube::{Api, ResourceExt};
use tidegate_api::Cluster;

use crate::cluster::ClusterArgs;
use crate::flux;
use crate::up::workloads;

/// Shared flags.
#[derive(clap::Args, Debug)]
pub struct Common {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Namespace of the Cluster objects.
    #[arg(short = 'n', long, default_value = workloads::DEFAULT_NAMESPACE, value_parser = crate::flux::namespace_name)]
    namespace: String,
    /// How long to wait.
    #[arg(long, default_value = "2m", value_parser = tidegate_core::duration::parse)]
    timeout: Duration,
}

/// Workload clusters of a running `tidegate up`.
#[derive(clap::Subcommand, Debug)]
pub enum Cmd {
    /// Start a workload cluster and register it as a Cluster (selectable by its labels).
    Create {
        /// The Cluster's name.
        name: String,
        /// Labels of the Cluster (`k=v,k2=v2`).
        #[arg(long, value_delimiter = ',')]
        labels: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Delete a workload cluster: its Cluster, its server and its data.
    Delete {
        /// The Cluster's name.
        name: String,
        #[command(flatten)]
        common: Common,
    },
    /// Stop a workload cluster's server (its data and address are kept): it is down, as a
    /// cluster whose API server is unreachable.
    Stop {
        /// The Cluster's name.
        name: String,
        #[command(flatten)]
        common: Common,
    },
    /// Start a stopped workload cluster again, at the same address.
    Start {
        /// The Cluster's name.
        name: String,
        #[command(flatten)]
        common: Common,
    },
    /// List the workload clusters.
    List {
        #[command(flatten)]
        common: Common,
    },
}

/// Runs the subcommand.
pub async fn run(cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::Create {
            name,
            labels,
            common,
        } => {
            let labels = labels
                .iter()
                .filter(|l| !l.is_empty())
                .map(|l| {
                    l.split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .ok_or_else(|| anyhow::anyhow!("--labels {l:?}: expected key=value"))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let client = common.cluster.client().await?;
            flux::action(&format!(
                "creating workload cluster {}/{name}",
                common.namespace
            ));
            let object = workloads::cluster_object(&common.namespace, &name, &labels);
            crate::cluster::apply(&client, vec![object], "creating the Cluster").await?;
            flux::waiting("waiting for the cluster to be provisioned");
            workloads::wait_provisioned(
                &client,
                &common.namespace,
                std::slice::from_ref(&name),
                common.timeout,
            )
            .await
            .map_err(|e| {
                anyhow::anyhow!("{e} (is `tidegate up` running against this API server?)")
            })?;
            let api: Api<Cluster> = Api::namespaced(client, &common.namespace);
            let c = api.get(&name).await?;
            flux::success(&format!(
                "workload cluster {name} is running at {}; its kubeconfig is in Secret {}/{}",
                endpoint(&c),
                common.namespace,
                tidegate_api::cluster::kubeconfig_secret_name(&name)
            ));
            Ok(())
        }
        Cmd::Delete { name, common } => {
            let client = common.cluster.client().await?;
            let api: Api<Cluster> = Api::namespaced(client, &common.namespace);
            flux::action(&format!(
                "deleting workload cluster {}/{name}",
                common.namespace
            ));
            api.delete(&name, &DeleteParams::default())
                .await
                .map_err(|e| flux::describe("Cluster", &common.namespace, &name, &e))?;
            flux::waiting("waiting for the cluster to be stopped");
            let deadline = tokio::time::Instant::now() + common.timeout;
            while api.get_opt(&name).await?.is_some() {
                if tokio::time::Instant::now() > deadline {
                    anyhow::bail!(
                        "Cluster {}/{name} still exists after {:?}",
                        common.namespace,
                        common.timeout
                    );
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            flux::success(&format!("workload cluster {name} deleted"));
            Ok(())
        }
        Cmd::Stop { name, common } => stop_or_start(&name, &common, true).await,
        Cmd::Start { name, common } => stop_or_start(&name, &common, false).await,
        Cmd::List { common } => {
            let client = common.cluster.client().await?;
            let api: Api<Cluster> = Api::namespaced(client, &common.namespace);
            let list = api.list(&ListParams::default()).await?;
            let mut rows = vec![vec![
                "NAME".to_string(),
                "ENDPOINT".into(),
                "PHASE".into(),
                "LABELS".into(),
            ]];
            for c in list.items.iter().filter(|c| workloads::is_embedded(c)) {
                let labels: Vec<String> = c
                    .labels()
                    .iter()
                    .filter(|(k, _)| k.as_str() != workloads::EMBEDDED_LABEL)
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                let phase = c
                    .status
                    .as_ref()
                    .and_then(|s| s.get("phase"))
                    .and_then(|p| p.as_str())
                    .unwrap_or("Pending")
                    .to_string();
                rows.push(vec![c.name_any(), endpoint(c), phase, labels.join(",")]);
            }
            print!("{}", flux::format_table(&rows));
            Ok(())
        }
    }
}

/// `https://host:port` from `spec.controlPlaneEndpoint`.
fn endpoint(c: &Cluster) -> String {
    let e = c.spec.get("controlPlaneEndpoint");
    match (
        e.and_then(|e| e.get("host")).and_then(|h| h.as_str()),
        e.and_then(|e| e.get("port")).and_then(|p| p.as_u64()),
    ) {
        (Some(h), Some(p)) => format!("https://{h}:{p}"),
        _ => "-".into(),
    }
}

/// Sets or removes the stop annotation and waits for the phase to follow.
async fn stop_or_start(name: &str, common: &Common, stop: bool) -> anyhow::Result<()> {
    use kube::api::{Patch, PatchParams};
    let client = common.cluster.client().await?;
    let api: Api<Cluster> = Api::namespaced(client, &common.namespace);
    let value = if stop {
        serde_json::json!("true")
    } else {
        serde_json::Value::Null
    };
    let patch =
        serde_json::json!({"metadata": {"annotations": {workloads::STOPPED_ANNOTATION: value}}});
    flux::action(&format!(
        "{} workload cluster {}/{name}",
        if stop { "stopping" } else { "starting" },
        common.namespace
    ));
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| flux::describe("Cluster", &common.namespace, name, &e))?;
    let wanted = if stop { "Stopped" } else { "Provisioned" };
    let deadline = tokio::time::Instant::now() + common.timeout;
    loop {
        let c = api.get(name).await?;
        let phase = c
            .status
            .as_ref()
            .and_then(|s| s.get("phase"))
            .and_then(|p| p.as_str())
            .unwrap_or("");
        if phase == wanted {
            break;
        }
        if tokio::time::Instant::now() > deadline {
            anyhow::bail!(
                "Cluster {}/{name} is {phase:?}, not {wanted}, after {:?}",
                common.namespace,
                common.timeout
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    flux::success(&format!(
        "workload cluster {name} is {}",
        wanted.to_lowercase()
    ));
    Ok(())
}
