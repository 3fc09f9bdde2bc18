//! Which cluster and identity a Kustomization or HelmRelease acts with: the controller's own
//! cluster, or the one in `spec.kubeConfig.secretRef`; as the controller, or impersonating
//! `spec.serviceAccountName` (Flux's `--default-service-account` when unset). Impersonating
//! and remote managers are kept per identity and kubeconfig.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};
use sha2::{Digest, Sha256};
use tidegate_api::kustomization::KubeConfigReference;
use tidegate_apply::live::Mode;
use tidegate_apply::{ManagerOptions, Owner, ResourceManager};

use crate::kubeconfig::SecretKubeConfigOptions;

/// The user a service account acts as.
pub fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// `config` acting as `user` (the `Impersonate-User` header on every request).
pub fn impersonating(mut config: kube::Config, user: &str) -> kube::Config {
    config.auth_info.impersonate = Some(user.to_string());
    config
}

/// The service account an object impersonates: its own, else the controller's default.
pub fn service_account(own: Option<&str>, default: Option<&str>) -> Option<String> {
    own.filter(|s| !s.is_empty())
        .or(default.filter(|s| !s.is_empty()))
        .map(str::to_string)
}

/// The object a manager acts for: its owner labels, service account and kubeconfig.
pub struct Subject<'a> {
    /// The owner-label group (`kustomize.toolkit.fluxcd.io`, `helm.toolkit.fluxcd.io`).
    pub group: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub service_account: Option<&'a str>,
    pub kube_config: Option<&'a KubeConfigReference>,
}

/// A manager for one object, and whether it reaches a remote cluster.
pub struct Cluster {
    pub manager: ResourceManager,
    pub remote: bool,
}

/// The managers a controller acts with beyond its own.
pub struct Clusters {
    /// The controller's own client configuration (impersonating clients are made from it).
    config: kube::Config,
    field_manager: String,
    concurrency: usize,
    /// What kubeconfigs read from Secrets may do.
    kubeconfig: SecretKubeConfigOptions,
    managers: Mutex<HashMap<String, Arc<ResourceManager>>>,
}

impl Clusters {
    /// Managers applying as `field_manager` with `concurrency` parallel requests; kubeconfigs
    /// from Secrets are read under `kubeconfig`'s rules.
    pub fn new(
        config: kube::Config,
        field_manager: &str,
        concurrency: usize,
        kubeconfig: SecretKubeConfigOptions,
    ) -> Clusters {
        Clusters {
            config,
            field_manager: field_manager.to_string(),
            concurrency: concurrency.max(1),
            kubeconfig,
            managers: Mutex::default(),
        }
    }

    fn cached(&self, key: &str) -> Option<Arc<ResourceManager>> {
        self.managers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned()
    }

    fn keep(&self, key: String, manager: Arc<ResourceManager>) {
        self.managers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, manager);
    }

    /// The manager for `subject`: impersonating its service account (else
    /// `default_service_account`), in its kubeconfig's cluster, owner labels set to it.
    pub async fn manager_of(
        &self,
        local: &ResourceManager,
        client: &Client,
        subject: Subject<'_>,
        default_service_account: Option<&str>,
    ) -> Result<Cluster, String> {
        let user = service_account(subject.service_account, default_service_account)
            .map(|sa| service_account_user(subject.namespace, &sa));
        let owner = Some(Owner {
            group: subject.group.into(),
            name: subject.name.into(),
            namespace: subject.namespace.into(),
        });
        self.manager_for(
            local,
            client,
            subject.namespace,
            subject.kube_config,
            user,
            owner,
        )
        .await
    }

    /// The manager for an object of `namespace`: `local` (the controller's own, shared
    /// watches) unless it impersonates `user` or has a `kube_config`; owner labels `owner`.
    /// The kubeconfig Secret is read with `client` (the controller's).
    pub async fn manager_for(
        &self,
        local: &ResourceManager,
        client: &Client,
        namespace: &str,
        kube_config: Option<&KubeConfigReference>,
        user: Option<String>,
        owner: Option<Owner>,
    ) -> Result<Cluster, String> {
        let Some(kube_config) = kube_config else {
            let Some(user) = user else {
                return Ok(Cluster {
                    manager: local.derive_shared(owner),
                    remote: false,
                });
            };
            let key = format!("impersonate:{user}");
            let client = match self.cached(&key) {
                Some(m) => m.client().clone(),
                None => {
                    let client = Client::try_from(impersonating(self.config.clone(), &user))
                        .map_err(|e| format!("failed to build kube client: {e}"))?;
                    self.keep(key, Arc::new(local.derive(client.clone(), None)));
                    client
                }
            };
            return Ok(Cluster {
                manager: local.derive(client, owner),
                remote: false,
            });
        };
        let Some(secret_ref) = &kube_config.secret_ref else {
            return Err(
                "failed to build kube client: spec.kubeConfig.configMapRef (workload identity) is not supported by Tidegate yet"
                    .into(),
            );
        };
        let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
        let secret = secrets.get(&secret_ref.name).await.map_err(|e| {
            format!(
                "failed to build kube client: unable to read KubeConfig secret '{namespace}/{}' error: {}",
                secret_ref.name,
                tidegate_apply::error::describe(&e)
            )
        })?;
        let data = secret.data.unwrap_or_default();
        let keys: Vec<&str> = match secret_ref.key.as_deref().filter(|k| !k.is_empty()) {
            Some(k) => vec![k],
            None => vec!["value", "value.yaml"],
        };
        let Some(bytes) = keys.iter().find_map(|k| data.get(*k)) else {
            return Err(format!(
                "failed to build kube client: KubeConfig secret '{namespace}/{}' does not contain a '{}' key with a kubeconfig",
                secret_ref.name,
                keys.join("' or '")
            ));
        };
        let mut h = Sha256::new();
        h.update(&bytes.0);
        h.update(user.as_deref().unwrap_or("").as_bytes());
        let key = format!("{:x}", h.finalize());
        let base = match self.cached(&key) {
            Some(m) => m,
            None => {
                let manager = Arc::new(self.remote_manager(&bytes.0, user.as_deref()).await?);
                self.keep(key, manager.clone());
                manager
            }
        };
        Ok(Cluster {
            manager: base.derive(base.client().clone(), owner),
            remote: true,
        })
    }

    async fn remote_manager(
        &self,
        kubeconfig: &[u8],
        user: Option<&str>,
    ) -> Result<ResourceManager, String> {
        let mut config = crate::kubeconfig::client_config(kubeconfig, self.kubeconfig)
            .await
            .map_err(|e| format!("failed to build kube client: {e}"))?;
        if let Some(user) = user {
            config = impersonating(config, user);
        }
        let client =
            Client::try_from(config).map_err(|e| format!("failed to build kube client: {e}"))?;
        // A remote cluster's objects are listed per apply rather than watched: its manager may
        // be replaced when the secret changes, and a list leaves nothing running behind.
        Ok(ResourceManager::new(
            client,
            ManagerOptions {
                field_manager: self.field_manager.clone(),
                concurrency: self.concurrency,
                live_mode: Mode::List,
                ..Default::default()
            },
        ))
    }
}
