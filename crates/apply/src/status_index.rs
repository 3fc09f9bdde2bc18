//! Health from shared watches, for controllers: one cluster-wide watch per resource (started
//! on first use), keeping only each object's kstatus, so that any number of Kustomizations
//! can wait for their objects at once for the cost of a map lookup each. A wait is woken only
//! by events in the namespaces it waits on.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::StreamExt;
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher;
use tidegate_core::ObjectRef;
use tokio::sync::Notify;

use crate::health::{self, Status};
use crate::resolve::Target;

/// `(group, plural)`.
type ResourceKey = (String, String);

/// An object's status and the resourceVersion it was computed from.
type Seen = (Status, Option<u64>);

#[derive(Default)]
struct Resource {
    synced: bool,
    /// `(namespace, name)` → status, and the resourceVersion it was computed from.
    statuses: HashMap<(String, String), Seen>,
}

#[derive(Default)]
struct Inner {
    resources: Mutex<HashMap<ResourceKey, Resource>>,
    /// One per namespace (`""` for cluster-scoped objects).
    namespaces: Mutex<HashMap<String, Arc<Notify>>>,
    tasks: Mutex<Vec<tokio::task::AbortHandle>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let tasks = self.tasks.get_mut().unwrap_or_else(|e| e.into_inner());
        for t in tasks.drain(..) {
            t.abort();
        }
    }
}

/// The shared statuses; cloning shares them.
#[derive(Clone)]
pub struct StatusIndex {
    client: Client,
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn key_of(target: &Target) -> ResourceKey {
    (
        target.resource.group.clone(),
        target.resource.plural.clone(),
    )
}

impl StatusIndex {
    /// An empty index whose watches use `client`.
    pub fn new(client: Client) -> StatusIndex {
        StatusIndex {
            client,
            inner: Arc::default(),
        }
    }

    /// The notifier of `namespace`, woken by every change of an object in it.
    pub(crate) fn notifier(&self, namespace: &str) -> Arc<Notify> {
        lock(&self.inner.namespaces)
            .entry(namespace.to_string())
            .or_default()
            .clone()
    }

    /// What the index holds for `r` (of resource `target`): `None` until the resource's
    /// first list is in, `Some(None)` when the object is not there.
    fn seen(&self, target: &Target, r: &ObjectRef) -> Option<Option<Seen>> {
        let namespace = if target.namespaced {
            r.namespace.as_str()
        } else {
            ""
        };
        let resources = lock(&self.inner.resources);
        let resource = resources.get(&key_of(target))?;
        if !resource.synced {
            return None;
        }
        Some(
            resource
                .statuses
                .get(&(namespace.to_string(), r.name.clone()))
                .copied(),
        )
    }

    /// The status of `r` (of resource `target`): `None` until the resource's first list is
    /// in; `NotFound` for an object that is not there; `Unknown` while the index has not yet
    /// seen the object at resourceVersion `min` or later (a write the caller just made).
    pub(crate) fn status(
        &self,
        target: &Target,
        r: &ObjectRef,
        min: Option<u64>,
    ) -> Option<Status> {
        Some(match self.seen(target, r)? {
            None if min.is_some() => Status::Unknown,
            None => Status::NotFound,
            Some((_, Some(seen))) if min.is_some_and(|m| seen < m) => Status::Unknown,
            Some((s, _)) => s,
        })
    }

    /// Where `r` stands: `None` until the resource's first list is in, `Some(None)` when the
    /// object is not there, `Some(Some(rv))` when it is, at resourceVersion `rv` (0 when not
    /// numeric).
    pub(crate) fn version(&self, target: &Target, r: &ObjectRef) -> Option<Option<u64>> {
        Some(self.seen(target, r)?.map(|(_, rv)| rv.unwrap_or(0)))
    }

    /// Makes the index watch `target` (once).
    pub(crate) fn cover(&self, target: &Target) {
        let key = key_of(target);
        {
            let mut resources = lock(&self.inner.resources);
            if resources.contains_key(&key) {
                return;
            }
            resources.insert(key.clone(), Resource::default());
        }
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &target.resource);
        // The task holds the index weakly: when the last manager goes, so do the watches.
        let weak = Arc::downgrade(&self.inner);
        let task = tokio::spawn(async move {
            let mut pending: HashMap<(String, String), Seen> = HashMap::new();
            let mut stream = watcher::watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = stream.next().await {
                let Some(inner) = weak.upgrade() else { return };
                let mut touched: HashSet<String> = HashSet::new();
                let interrupted = event.is_err();
                {
                    let mut resources = lock(&inner.resources);
                    let Some(resource) = resources.get_mut(&key) else {
                        return;
                    };
                    match event {
                        Ok(watcher::Event::Init) => pending.clear(),
                        Ok(watcher::Event::InitApply(o)) => {
                            if let Some((k, s)) = entry(&o) {
                                pending.insert(k, s);
                            }
                        }
                        Ok(watcher::Event::InitDone) => {
                            touched.extend(resource.statuses.keys().map(|(ns, _)| ns.clone()));
                            touched.extend(pending.keys().map(|(ns, _)| ns.clone()));
                            resource.statuses = std::mem::take(&mut pending);
                            resource.synced = true;
                            // Waits on namespaces with nothing of this kind learn of it too.
                            touched.insert(String::from("*"));
                        }
                        Ok(watcher::Event::Apply(o)) => {
                            if let Some((k, s)) = entry(&o) {
                                touched.insert(k.0.clone());
                                resource.statuses.insert(k, s);
                            }
                        }
                        Ok(watcher::Event::Delete(o)) => {
                            if let Some((k, _)) = entry(&o) {
                                touched.insert(k.0.clone());
                                resource.statuses.remove(&k);
                            }
                        }
                        Err(ref e) => {
                            tracing::debug!(error = %e, resource = %key.1, "status watch interrupted");
                        }
                    }
                }
                if !touched.is_empty() {
                    let namespaces = lock(&inner.namespaces);
                    if touched.contains("*") {
                        for n in namespaces.values() {
                            n.notify_waiters();
                        }
                    } else {
                        for ns in &touched {
                            if let Some(n) = namespaces.get(ns) {
                                n.notify_waiters();
                            }
                        }
                    }
                }
                drop(inner);
                if interrupted {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        });
        lock(&self.inner.tasks).push(task.abort_handle());
    }
}

fn entry(o: &DynamicObject) -> Option<((String, String), Seen)> {
    let name = o.metadata.name.clone()?;
    let namespace = o.metadata.namespace.clone().unwrap_or_default();
    let rv = o
        .metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok());
    let v = serde_json::to_value(o).ok()?;
    Some(((namespace, name), (health::compute(&v).status, rv)))
}
