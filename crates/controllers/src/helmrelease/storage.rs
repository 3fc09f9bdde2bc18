//! Helm's Secrets storage driver over kube-rs: release records listed by `name=<release>,
//! owner=helm`, created, updated and deleted as Helm's driver does, so the real `helm` reads
//! what Tidegate writes and the other way round.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use futures::StreamExt;
use kube::api::PartialObjectMeta;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};

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
    cache: Option<Arc<ReleaseCache>>,
}

/// A release record's name and resourceVersion.
type Fingerprint = Vec<(String, String)>;

/// The newest release of each release name as last read (its chart reduced to the metadata),
/// with the fingerprint of the records it was read with. A watch of the records' metadata
/// (labels `owner=helm`) says whether they are unchanged, so a release nobody touched is
/// known without a request.
#[derive(Default)]
pub struct ReleaseCache {
    meta: OnceLock<Store<PartialObjectMeta<Secret>>>,
    ready: AtomicBool,
    heads: Mutex<HashMap<(String, String), (Fingerprint, Release)>>,
}

impl ReleaseCache {
    /// Watches the release records' metadata until dropped.
    pub async fn watch(self: Arc<Self>, client: Client) {
        let api: Api<PartialObjectMeta<Secret>> = Api::all(client);
        let (reader, writer) = reflector::store();
        let _ = self.meta.set(reader.clone());
        let me = self.clone();
        tokio::spawn(async move {
            if reader.wait_until_ready().await.is_ok() {
                me.ready.store(true, Ordering::Release);
            }
        });
        watcher(api, watcher::Config::default().labels("owner=helm"))
            .default_backoff()
            .reflect(writer)
            .for_each(|_| futures::future::ready(()))
            .await;
    }

    fn fingerprint(&self, namespace: &str, name: &str) -> Option<Fingerprint> {
        if !self.ready.load(Ordering::Acquire) {
            return None;
        }
        let store = self.meta.get()?;
        let mut fp: Fingerprint = store
            .state()
            .iter()
            .filter(|m| m.metadata.namespace.as_deref() == Some(namespace))
            .filter(|m| {
                m.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("name"))
                    .is_some_and(|n| n == name)
            })
            .map(|m| {
                (
                    m.metadata.name.clone().unwrap_or_default(),
                    m.metadata.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect();
        fp.sort();
        Some(fp)
    }

    fn get(&self, namespace: &str, name: &str) -> Option<Option<Release>> {
        let fp = self.fingerprint(namespace, name)?;
        let heads = self.heads.lock().unwrap_or_else(|e| e.into_inner());
        let (known, release) = heads.get(&(namespace.to_string(), name.to_string()))?;
        (*known == fp).then(|| Some(release.clone()))
    }

    fn put(&self, namespace: &str, name: &str, mut fp: Fingerprint, last: Option<&Release>) {
        let mut heads = self.heads.lock().unwrap_or_else(|e| e.into_inner());
        let key = (namespace.to_string(), name.to_string());
        let Some(last) = last else {
            heads.remove(&key);
            return;
        };
        fp.sort();
        let mut light = last.clone();
        // Only the metadata of the chart is needed to judge the release.
        light.chart = match last.chart.get("metadata") {
            Some(m) => serde_json::json!({ "metadata": m }),
            None => serde_json::Value::Null,
        };
        heads.insert(key, (fp, light));
    }
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
            cache: None,
        }
    }

    /// Keeps the newest release of each name read in `cache`.
    pub fn with_cache(mut self, cache: Arc<ReleaseCache>) -> Storage {
        self.cache = Some(cache);
        self
    }

    /// The newest release of `name` (its chart reduced to the metadata when it comes from
    /// the cache): no request while its records are unchanged.
    pub async fn last_cached(&self, name: &str) -> Result<Option<Release>, String> {
        if let Some(hit) = self
            .cache
            .as_ref()
            .and_then(|c| c.get(&self.namespace, name))
        {
            return Ok(hit);
        }
        self.last(name).await
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
        let mut fp = Vec::with_capacity(list.items.len());
        for secret in list.items {
            let secret_name = secret.metadata.name.clone().unwrap_or_default();
            fp.push((
                secret_name.clone(),
                secret.metadata.resource_version.clone().unwrap_or_default(),
            ));
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
        if let Some(cache) = &self.cache {
            cache.put(&self.namespace, name, fp, out.last());
        }
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
