//! What the manager knows about live objects without asking: their resourceVersions (and the
//! policy labels and annotations they carry), from metadata-only watches (a controller that
//! stays up) or metadata-only lists taken once (a command-line run).

use crate::error::{Error, describe};
use crate::policy::Policies;
use crate::resolve::Target;
use futures::StreamExt;
use kube::Client;
use kube::api::{DynamicObject, ListParams, PartialObjectMeta};
use kube::runtime::watcher;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

/// A live object as the index knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveObject {
    /// Its resourceVersion.
    pub resource_version: String,
    /// The policies its labels and annotations declare.
    pub policies: Policies,
}

/// What the index says about one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Live {
    /// The index covers the resource and the object is not there.
    Absent,
    /// The object exists.
    Present(LiveObject),
    /// The index does not cover this resource (yet): ask the server.
    Unknown,
}

/// Key of a resource in the index.
type ResourceKey = (String, String);

#[derive(Default)]
struct ResourceIndex {
    /// Namespaces the index covers; `None` = every namespace.
    scope: Option<HashSet<String>>,
    synced: bool,
    objects: HashMap<(String, String), LiveObject>,
}

/// How the index is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One metadata-only watch per resource, kept running (for controllers).
    Watch,
    /// One metadata-only list per resource and namespace, when an apply starts (for a
    /// command-line run).
    List,
}

/// The index of live objects.
#[derive(Clone)]
pub struct LiveIndex {
    client: Client,
    mode: Mode,
    resources: Arc<RwLock<HashMap<ResourceKey, ResourceIndex>>>,
    watches: Arc<Watches>,
}

/// The index's watch tasks, stopped when the last copy of the index goes: a controller that
/// stops leaves no watch behind to fail against a server that has gone.
#[derive(Default)]
struct Watches(std::sync::Mutex<Vec<tokio::task::AbortHandle>>);

impl Drop for Watches {
    fn drop(&mut self) {
        let tasks = self.0.get_mut().unwrap_or_else(|e| e.into_inner());
        for t in tasks.drain(..) {
            t.abort();
        }
    }
}

fn key_of(target: &Target) -> ResourceKey {
    (
        target.resource.group.clone(),
        target.resource.plural.clone(),
    )
}

fn entry_of(meta: &PartialObjectMeta<DynamicObject>) -> Option<((String, String), LiveObject)> {
    let name = meta.metadata.name.clone()?;
    let namespace = meta.metadata.namespace.clone().unwrap_or_default();
    let view = serde_json::json!({"metadata": {
        "labels": meta.metadata.labels, "annotations": meta.metadata.annotations}});
    Some((
        (namespace, name),
        LiveObject {
            resource_version: meta.metadata.resource_version.clone().unwrap_or_default(),
            policies: Policies::of(&view),
        },
    ))
}

impl LiveIndex {
    /// An empty index filled in `mode`.
    pub fn new(client: Client, mode: Mode) -> LiveIndex {
        LiveIndex {
            client,
            mode,
            resources: Arc::default(),
            watches: Arc::default(),
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<ResourceKey, ResourceIndex>> {
        self.resources.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes the index cover `target` in `namespaces` (cluster-scoped: pass `[""]`): starts a
    /// watch, or lists once.
    pub async fn cover(&self, target: &Target, namespaces: &HashSet<String>) -> Result<(), Error> {
        match self.mode {
            Mode::Watch => {
                self.watch(target);
                Ok(())
            }
            Mode::List => self.list(target, namespaces).await,
        }
    }

    fn watch(&self, target: &Target) {
        let key = key_of(target);
        {
            let mut map = self.write();
            if map.contains_key(&key) {
                return;
            }
            map.insert(key.clone(), ResourceIndex::default());
        }
        let api: kube::Api<PartialObjectMeta<DynamicObject>> =
            kube::Api::all_with(self.client.clone(), &target.resource);
        let resources = self.resources.clone();
        let task = tokio::spawn(async move {
            let mut pending: HashMap<(String, String), LiveObject> = HashMap::new();
            let mut stream = watcher::watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = stream.next().await {
                let interrupted = event.is_err();
                {
                    let mut map = resources.write().unwrap_or_else(|e| e.into_inner());
                    let Some(index) = map.get_mut(&key) else {
                        return;
                    };
                    match event {
                        Ok(watcher::Event::Init) => pending.clear(),
                        Ok(watcher::Event::InitApply(m)) => {
                            if let Some((k, v)) = entry_of(&m) {
                                pending.insert(k, v);
                            }
                        }
                        Ok(watcher::Event::InitDone) => {
                            index.objects = std::mem::take(&mut pending);
                            index.synced = true;
                        }
                        Ok(watcher::Event::Apply(m)) => {
                            if let Some((k, v)) = entry_of(&m) {
                                index.objects.insert(k, v);
                            }
                        }
                        Ok(watcher::Event::Delete(m)) => {
                            if let Some((k, _)) = entry_of(&m) {
                                index.objects.remove(&k);
                            }
                        }
                        Err(ref e) => {
                            tracing::debug!(error = %e, resource = %key.1, "metadata watch interrupted");
                            index.synced = false;
                        }
                    }
                }
                if interrupted {
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                }
            }
        });
        self.watches
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(task.abort_handle());
    }

    async fn list(&self, target: &Target, namespaces: &HashSet<String>) -> Result<(), Error> {
        let key = key_of(target);
        // One cluster-wide list when the objects span several namespaces, else one list in
        // the namespace they share.
        let scoped = target.namespaced && namespaces.len() == 1;
        let namespace = if scoped {
            namespaces.iter().next().cloned().unwrap_or_default()
        } else {
            String::new()
        };
        let api = target.api(&self.client, &namespace);
        let mut objects = HashMap::new();
        let mut params = ListParams::default().limit(5000);
        loop {
            let page = api
                .list_metadata(&params)
                .await
                .map_err(|e| Error::Cluster {
                    context: format!("listing {}", target.resource.plural),
                    message: describe(&e),
                })?;
            for m in &page.items {
                if let Some((k, v)) = entry_of(m) {
                    objects.insert(k, v);
                }
            }
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => break,
            }
        }
        let scope = scoped.then(|| HashSet::from([namespace]));
        self.write().insert(
            key,
            ResourceIndex {
                scope,
                synced: true,
                objects,
            },
        );
        Ok(())
    }

    /// What the index knows about `namespace`/`name` of `target`.
    pub fn get(&self, target: &Target, namespace: &str, name: &str) -> Live {
        let map = self.resources.read().unwrap_or_else(|e| e.into_inner());
        let Some(index) = map.get(&key_of(target)) else {
            return Live::Unknown;
        };
        if !index.synced || index.scope.as_ref().is_some_and(|s| !s.contains(namespace)) {
            return Live::Unknown;
        }
        match index
            .objects
            .get(&(namespace.to_string(), name.to_string()))
        {
            Some(o) => Live::Present(o.clone()),
            None => Live::Absent,
        }
    }

    /// Records what the manager itself just learned (an apply's answer, a deletion), so a
    /// list-mode index stays true within one run. Watches report the same by themselves.
    pub fn observe(&self, target: &Target, namespace: &str, name: &str, obj: Option<&Value>) {
        let mut map = self.write();
        let Some(index) = map.get_mut(&key_of(target)) else {
            return;
        };
        let k = (namespace.to_string(), name.to_string());
        match obj {
            Some(o) => {
                let rv = o
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                index.objects.insert(
                    k,
                    LiveObject {
                        resource_version: rv,
                        policies: Policies::of(o),
                    },
                );
            }
            None => {
                index.objects.remove(&k);
            }
        }
    }
}
