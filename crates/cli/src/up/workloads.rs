//! Workload clusters on one machine: an infrastructure provider, in the manner of Cluster API's
//! Docker provider, whose "machines" are more embedded API servers in the `up` process. A
//! Cluster whose `spec.infrastructureRef` is `infrastructure.tidegate.dev` `EmbeddedCluster`
//! gets a server of its own (data under `<data-dir>/clusters/<namespace>/<name>`, its own
//! port, its own workload simulator), its `<name>-kubeconfig` Secret as Cluster API writes it,
//! `spec.controlPlaneEndpoint` and `status.initialization.infrastructureProvisioned: true`.
//! Deleting the Cluster stops the server and removes its data.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};
use tidegate_api::Cluster;
use tidegate_api::cluster::{
    CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE, KUBECONFIG_KEY, kubeconfig_secret_name,
};
use tokio::sync::Mutex;

/// The infrastructure API group of embedded clusters.
pub const INFRA_GROUP: &str = "infrastructure.tidegate.dev";
/// The infrastructure kind of embedded clusters.
pub const INFRA_KIND: &str = "EmbeddedCluster";
/// Held on an embedded Cluster until its server is stopped and its data removed.
pub const FINALIZER: &str = "infrastructure.tidegate.dev/embedded";
/// Set (to any value) on an embedded Cluster to stop its server, keeping its data and
/// address; removed, the server starts again on the same port.
pub const STOPPED_ANNOTATION: &str = "infrastructure.tidegate.dev/stopped";
/// The label every embedded Cluster carries.
pub const EMBEDDED_LABEL: &str = "tidegate.dev/embedded";
/// The namespace `up --clusters` and `tidegate cluster create` use by default.
pub const DEFAULT_NAMESPACE: &str = "default";

/// A Cluster object backed by an embedded server.
pub fn cluster_object(namespace: &str, name: &str, labels: &[(String, String)]) -> Value {
    let mut l = serde_json::Map::new();
    l.insert(EMBEDDED_LABEL.into(), json!("true"));
    for (k, v) in labels {
        l.insert(k.clone(), json!(v));
    }
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace, "labels": l},
        "spec": {"infrastructureRef": {"apiGroup": INFRA_GROUP, "kind": INFRA_KIND, "name": name}},
    })
}

/// Whether `cluster` is one of ours.
pub fn is_embedded(cluster: &Cluster) -> bool {
    cluster
        .spec
        .get("infrastructureRef")
        .is_some_and(|r| r["apiGroup"] == INFRA_GROUP && r["kind"] == INFRA_KIND)
}

/// The provider: the servers it runs, by Cluster.
pub struct Provider {
    client: Client,
    data_dir: PathBuf,
    simulator: Option<Duration>,
    servers: Mutex<HashMap<(String, String), tidegate_apiserver::ApiServer>>,
    /// The address each server last listened on, kept across a stop.
    addresses: Mutex<HashMap<(String, String), std::net::SocketAddr>>,
}

impl Provider {
    /// A provider keeping server data under `data_dir/clusters`.
    pub fn new(client: Client, data_dir: PathBuf, simulator: Option<Duration>) -> Arc<Provider> {
        Arc::new(Provider {
            client,
            data_dir,
            simulator,
            servers: Mutex::new(HashMap::new()),
            addresses: Mutex::new(HashMap::new()),
        })
    }

    /// Watches Clusters and keeps a server for each embedded one until `stop`.
    pub async fn run(self: Arc<Self>) {
        let api: Api<Cluster> = Api::all(self.client.clone());
        let stream = watcher(api, watcher::Config::default())
            .default_backoff()
            .applied_objects();
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            let cluster = match event {
                Ok(c) => c,
                Err(e) => {
                    tracing::debug!(error = %e, "embedded cluster watch");
                    continue;
                }
            };
            if !is_embedded(&cluster) {
                continue;
            }
            if let Err(e) = self.reconcile(&cluster).await {
                tracing::error!(
                    cluster = %format!("{}/{}", cluster.namespace().unwrap_or_default(), cluster.name_any()),
                    error = %e,
                    "embedded cluster"
                );
            }
        }
    }

    /// Stops every server (when `up` stops).
    pub async fn stop_all(&self) {
        let servers: Vec<_> = self.servers.lock().await.drain().collect();
        for (_, server) in servers {
            server.shutdown().await;
        }
    }

    fn dir_of(&self, ns: &str, name: &str) -> PathBuf {
        self.data_dir.join("clusters").join(ns).join(name)
    }

    async fn reconcile(&self, cluster: &Cluster) -> anyhow::Result<()> {
        let ns = cluster.namespace().unwrap_or_default();
        let name = cluster.name_any();
        let api: Api<Cluster> = Api::namespaced(self.client.clone(), &ns);
        let key = (ns.clone(), name.clone());
        if cluster.metadata.deletion_timestamp.is_some() {
            if let Some(server) = self.servers.lock().await.remove(&key) {
                server.shutdown().await;
            }
            let dir = self.dir_of(&ns, &name);
            if dir.exists() {
                std::fs::remove_dir_all(&dir)?;
            }
            let finalizers: Vec<String> = cluster
                .finalizers()
                .iter()
                .filter(|f| *f != FINALIZER)
                .cloned()
                .collect();
            if finalizers.len() != cluster.finalizers().len() {
                let patch = json!({"metadata": {"finalizers": finalizers,
                    "resourceVersion": cluster.resource_version()}});
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await?;
            }
            return Ok(());
        }
        if !cluster.finalizers().iter().any(|f| f == FINALIZER) {
            let mut finalizers = cluster.finalizers().to_vec();
            finalizers.push(FINALIZER.into());
            let patch = json!({"metadata": {"finalizers": finalizers,
                "resourceVersion": cluster.resource_version()}});
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
        let mut servers = self.servers.lock().await;
        if cluster.annotations().contains_key(STOPPED_ANNOTATION) {
            if let Some(server) = servers.remove(&key) {
                self.addresses.lock().await.insert(key.clone(), server.addr);
                server.shutdown().await;
                tracing::info!(cluster = %format!("{ns}/{name}"), "embedded workload cluster stopped");
            }
            if cluster.status.as_ref().and_then(|s| s.get("phase")) != Some(&json!("Stopped")) {
                api.patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(&json!({"status": {"phase": "Stopped"}})),
                )
                .await?;
            }
            return Ok(());
        }
        if !servers.contains_key(&key) {
            let dir = self.dir_of(&ns, &name);
            tidegate_apiserver::private_dir(&dir)?;
            let listen = self
                .addresses
                .lock()
                .await
                .get(&key)
                .copied()
                .unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
            let server = tidegate_apiserver::ApiServer::start(tidegate_apiserver::Config {
                data_dir: Some(dir),
                listen,
                tls: true,
                workload_simulator: self.simulator,
                ..Default::default()
            })
            .await?;
            tracing::info!(cluster = %format!("{ns}/{name}"), url = %server.url, "embedded workload cluster started");
            servers.insert(key.clone(), server);
        }
        let Some(server) = servers.get(&key) else {
            return Ok(());
        };
        self.publish(cluster, server).await
    }

    /// Writes the kubeconfig Secret, the endpoint and the provisioned status, when they differ.
    async fn publish(
        &self,
        cluster: &Cluster,
        server: &tidegate_apiserver::ApiServer,
    ) -> anyhow::Result<()> {
        let ns = cluster.namespace().unwrap_or_default();
        let name = cluster.name_any();
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), &ns);
        let secret_name = kubeconfig_secret_name(&name);
        let current = secrets
            .get_opt(&secret_name)
            .await?
            .and_then(|s| s.data)
            .and_then(|d| d.get(KUBECONFIG_KEY).map(|b| b.0.clone()));
        if current.as_deref() != Some(server.kubeconfig.as_bytes()) {
            let secret = json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": secret_name, "namespace": ns,
                    "labels": {CLUSTER_NAME_LABEL: name},
                    "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                        "name": name, "uid": cluster.uid().unwrap_or_default()}]},
                "type": CLUSTER_SECRET_TYPE,
                "stringData": {KUBECONFIG_KEY: server.kubeconfig},
            });
            secrets
                .patch(
                    &secret_name,
                    &PatchParams::apply(super::FIELD_MANAGER).force(),
                    &Patch::Apply(&secret),
                )
                .await?;
        }
        let api: Api<Cluster> = Api::namespaced(self.client.clone(), &ns);
        let endpoint = json!({"host": server.addr.ip().to_string(), "port": server.addr.port()});
        if cluster.spec.get("controlPlaneEndpoint") != Some(&endpoint) {
            let patch = json!({"spec": {"controlPlaneEndpoint": endpoint}});
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
        let provisioned = tidegate_api::cluster::infrastructure_provisioned(cluster)
            && cluster.status.as_ref().and_then(|s| s.get("phase")) == Some(&json!("Provisioned"));
        if !provisioned {
            let patch = json!({"status": {
                "initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": true},
                "phase": "Provisioned"}});
            api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
        Ok(())
    }
}

/// Waits until each named Cluster's infrastructure is provisioned.
pub async fn wait_provisioned(
    client: &Client,
    namespace: &str,
    names: &[String],
    timeout: Duration,
) -> anyhow::Result<()> {
    let api: Api<Cluster> = Api::namespaced(client.clone(), namespace);
    let deadline = tokio::time::Instant::now() + timeout;
    for name in names {
        loop {
            if let Some(c) = api.get_opt(name).await?
                && tidegate_api::cluster::infrastructure_provisioned(&c)
            {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                anyhow::bail!("Cluster {namespace}/{name} was not provisioned within {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok(())
}
