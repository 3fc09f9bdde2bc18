//! Helm's Secrets storage driver over kube-rs: release records listed by `name=<release>,
//! owner=helm`, created, updated and deleted as Helm's driver does, so the real `helm` reads
//! what Tidegate writes and the other way round.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client};
use tidegate_helm::storage::{self, Release};

/// Release records of one storage namespace.
pub struct Storage {
    api: Api<Secret>,
    namespace: String,
}

fn describe(e: &kube::Error) -> String {
    tidegate_apply::error::describe(e)
}

impl Storage {
    /// The records in `namespace`, through `client`.
    pub fn new(client: Client, namespace: &str) -> Storage {
        Storage {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
        }
    }

    /// Every release of `name`, oldest first. A record that cannot be decoded is an error
    /// naming it.
    pub async fn history(&self, name: &str) -> Result<Vec<Release>, String> {
        let list = self
            .api
            .list(&ListParams::default().labels(&format!("name={name},owner=helm")))
            .await
            .map_err(|e| format!("failed to query release history: {}", describe(&e)))?;
        let mut out = Vec::with_capacity(list.items.len());
        for secret in list.items {
            let secret_name = secret.metadata.name.clone().unwrap_or_default();
            let Some(data) = secret.data.as_ref().and_then(|d| d.get("release")) else {
                return Err(format!(
                    "release record {}/{secret_name} has no 'release' key",
                    self.namespace
                ));
            };
            let mut r = storage::decode(&data.0)
                .map_err(|e| format!("release record {}/{secret_name}: {e}", self.namespace))?;
            r.labels = storage::release_labels(&secret.metadata.labels.unwrap_or_default());
            out.push(r);
        }
        out.sort_by_key(|r| r.version);
        Ok(out)
    }

    /// The newest release of `name`, if any.
    pub async fn last(&self, name: &str) -> Result<Option<Release>, String> {
        Ok(self.history(name).await?.pop())
    }

    fn secret(&self, r: &Release, create: bool) -> Result<Secret, String> {
        let encoded = storage::encode(r).map_err(|e| e.to_string())?;
        let now = chrono_now_unix();
        let mut data = BTreeMap::new();
        data.insert("release".to_string(), ByteString(encoded.into_bytes()));
        Ok(Secret {
            metadata: ObjectMeta {
                name: Some(r.secret_name()),
                namespace: Some(self.namespace.clone()),
                labels: Some(r.secret_labels(now, create)),
                ..Default::default()
            },
            type_: Some(storage::SECRET_TYPE.to_string()),
            data: Some(data),
            ..Default::default()
        })
    }

    /// Writes a new record (Helm's `Create`).
    pub async fn create(&self, r: &Release) -> Result<(), String> {
        let secret = self.secret(r, true)?;
        self.api
            .create(&PostParams::default(), &secret)
            .await
            .map_err(|e| format!("create: failed to create: {}", describe(&e)))?;
        Ok(())
    }

    /// Replaces a record (Helm's `Update`).
    pub async fn update(&self, r: &Release) -> Result<(), String> {
        let mut secret = self.secret(r, false)?;
        // Helm's driver sends no resourceVersion: last writer wins.
        let name = r.secret_name();
        let current = self
            .api
            .get(&name)
            .await
            .map_err(|e| format!("update: failed to update: {}", describe(&e)))?;
        secret.metadata.resource_version = current.metadata.resource_version;
        self.api
            .replace(&name, &PostParams::default(), &secret)
            .await
            .map_err(|e| format!("update: failed to update: {}", describe(&e)))?;
        Ok(())
    }

    /// Deletes the record of `name` version `version`; a missing record is not an error.
    pub async fn delete(&self, name: &str, version: i64) -> Result<(), String> {
        match self
            .api
            .delete(
                &storage::secret_name(name, version),
                &DeleteParams::default(),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(format!("delete: failed to delete: {}", describe(&e))),
        }
    }

    /// Helm's `MaxHistory` pruning after a new record: keeps the newest `max` releases (the
    /// last deployed one always), deleting the oldest others.
    pub async fn prune(&self, name: &str, max: i64) -> Result<(), String> {
        if max <= 0 {
            return Ok(());
        }
        let history = self.history(name).await?;
        if history.len() as i64 <= max {
            return Ok(());
        }
        let last_deployed = history
            .iter()
            .rev()
            .find(|r| r.info.status == storage::status::DEPLOYED)
            .map(|r| r.version);
        let mut excess = history.len() as i64 - max;
        for r in &history {
            if excess <= 0 {
                break;
            }
            if Some(r.version) == last_deployed {
                continue;
            }
            self.delete(&r.name, r.version).await?;
            excess -= 1;
        }
        Ok(())
    }
}

fn chrono_now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
