//! Workload clusters, reached as Cluster API's ClusterCache reaches them: through the
//! kubeconfig in Secret `<cluster>-kubeconfig` (key `value`) beside the Cluster, and only once
//! the Cluster's infrastructure is provisioned. Clients are kept per kubeconfig, so a rotated
//! Secret gets a new one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client, ResourceExt};
use sha2::{Digest, Sha256};
use tidegate_api::Cluster;
use tidegate_api::cluster::{KUBECONFIG_KEY, infrastructure_provisioned, kubeconfig_secret_name};
use tidegate_apply::error::describe;
use tidegate_apply::resolve::Resolver;

use super::scope::Remote;
use crate::kubeconfig::SecretKubeConfigOptions;

/// Cluster API's error for a Cluster that cannot be connected to yet.
pub const NOT_CONNECTED: &str = "connection to the workload cluster is down";

/// Clients of workload clusters, per Cluster and kubeconfig.
#[derive(Default)]
pub struct Remotes {
    /// By Cluster (namespace, name): the kubeconfig's digest and the client made from it.
    cache: Mutex<HashMap<(String, String), Cached>>,
    /// What the kubeconfigs may do.
    kubeconfig: SecretKubeConfigOptions,
}

type Cached = (String, Arc<Remote>);

impl Remotes {
    /// No clients yet; kubeconfigs are read under `kubeconfig`'s rules.
    pub fn new(kubeconfig: SecretKubeConfigOptions) -> Remotes {
        Remotes {
            cache: Mutex::default(),
            kubeconfig,
        }
    }

    /// The client of `cluster`, read with the management cluster's `client`.
    pub async fn get(&self, client: &Client, cluster: &Cluster) -> Result<Arc<Remote>, String> {
        let ns = cluster.namespace().unwrap_or_default();
        let name = cluster.name_any();
        if !infrastructure_provisioned(cluster) {
            return Err(format!(
                "{NOT_CONNECTED} (Cluster {ns}/{name}: infrastructure not provisioned yet)"
            ));
        }
        let secret_name = kubeconfig_secret_name(&name);
        let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
        let secret = secrets.get(&secret_name).await.map_err(|e| {
            format!(
                "{NOT_CONNECTED} (Cluster {ns}/{name}: reading Secret {ns}/{secret_name}: {})",
                describe(&e)
            )
        })?;
        let Some(bytes) = secret
            .data
            .as_ref()
            .and_then(|d| d.get(KUBECONFIG_KEY))
            .map(|b| b.0.clone())
        else {
            return Err(format!(
                "{NOT_CONNECTED} (Cluster {ns}/{name}: Secret {ns}/{secret_name} has no {KUBECONFIG_KEY:?} key)"
            ));
        };
        let digest = format!("{:x}", Sha256::digest(&bytes));
        let key = (ns.clone(), name.clone());
        if let Some((d, remote)) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            && *d == digest
        {
            return Ok(remote.clone());
        }
        let remote = Arc::new(connect(&bytes, self.kubeconfig).await.map_err(|e| {
            format!("{NOT_CONNECTED} (Cluster {ns}/{name}: kubeconfig in Secret {ns}/{secret_name}: {e})")
        })?);
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, (digest, remote.clone()));
        Ok(remote)
    }

    /// Forgets the client of a Cluster (deleted).
    pub fn forget(&self, namespace: &str, name: &str) {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(namespace.to_string(), name.to_string()));
    }
}

async fn connect(kubeconfig: &[u8], options: SecretKubeConfigOptions) -> Result<Remote, String> {
    let mut config = crate::kubeconfig::client_config(kubeconfig, options).await?;
    // A workload cluster that does not answer must not hold the reconcile for minutes.
    config.connect_timeout = Some(std::time::Duration::from_secs(10));
    config.read_timeout = Some(std::time::Duration::from_secs(30));
    let client = Client::try_from(config).map_err(|e| e.to_string())?;
    // As Cluster API's ClusterCache, a client is handed out only once the cluster answered.
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        client.apiserver_version(),
    )
    .await
    .map_err(|_| "no answer within 10s".to_string())?
    .map_err(|e| describe(&e))?;
    let manager = tidegate_apply::ResourceManager::new(
        client.clone(),
        tidegate_apply::ManagerOptions {
            field_manager: super::CONTROLLER.into(),
            live_mode: tidegate_apply::live::Mode::List,
            ..Default::default()
        },
    );
    Ok(Remote {
        resolver: Resolver::new(client.clone()),
        client,
        manager,
    })
}
