//! Read-your-writes for reconcilers. kube-runtime hands a reconcile its object from the watch
//! cache, which may lag behind the status the previous reconcile of the same object wrote (a
//! reconcile triggered tens of milliseconds after a status write sees the object from before
//! it). Acting on that older status is how an inventory loses the objects it should prune. So
//! each reconciler remembers the newest resourceVersion it wrote or read of each object, and a
//! cached copy carrying any other version is read afresh before the reconcile starts.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

/// The newest resourceVersion this controller knows of each object, by uid.
#[derive(Debug, Default)]
pub struct Versions {
    known: Mutex<HashMap<String, String>>,
}

impl Versions {
    /// Records `obj` as returned by a write (or a fresh read): its version is the newest known.
    pub fn record<K: Resource>(&self, obj: &K) {
        if let (Some(uid), Some(rv)) = (obj.meta().uid.clone(), obj.resource_version()) {
            self.lock().insert(uid, rv);
        }
    }

    /// Forgets an object that is gone.
    pub fn forget<K: Resource>(&self, obj: &K) {
        if let Some(uid) = &obj.meta().uid {
            self.lock().remove(uid);
        }
    }

    /// The object to reconcile: `cached` when it carries the newest version known (or none is
    /// known yet: the cache was filled after this process started), otherwise a fresh read.
    /// `None` when the object is gone.
    pub async fn fresh<K>(&self, api: &Api<K>, cached: Arc<K>) -> Result<Option<Arc<K>>, String>
    where
        K: Resource + Clone + DeserializeOwned + Debug,
    {
        let Some(uid) = cached.meta().uid.clone() else {
            return Ok(Some(cached));
        };
        let known = self.lock().get(&uid).cloned();
        if known.is_none() || known == cached.resource_version() {
            return Ok(Some(cached));
        }
        match api.get_opt(&cached.name_any()).await {
            Ok(Some(obj)) if obj.meta().uid.as_deref() == Some(uid.as_str()) => {
                self.record(&obj);
                Ok(Some(Arc::new(obj)))
            }
            // Gone, or replaced by a new object of the same name (which the cache will bring).
            Ok(_) => {
                self.lock().remove(&uid);
                Ok(None)
            }
            Err(e) => Err(format!("reading the object afresh: {e}")),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }
}
