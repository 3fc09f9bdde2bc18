//! The workload simulator: what a kubelet and kube-controller-manager would report, without
//! running anything. A short while after a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job or
//! Pod is created or changed, its `status` is moved to ready (or complete, for Jobs), so health
//! checks can be exercised against the embedded server.
//!
//! The annotation `tidegate.dev/simulate` picks another outcome:
//! - `fail`: a Deployment reports `ProgressDeadlineExceeded`, a Job fails with
//!   `BackoffLimitExceeded`, a Pod's containers crash-loop (`CrashLoopBackOff`), a ReplicaSet
//!   reports `ReplicaFailure`; StatefulSets and DaemonSets stay unready.
//! - `hang`: the rollout starts and never finishes (nothing becomes ready, a Job stays active,
//!   a Pod stays `Pending`).

mod endpoints;
mod events;
mod owned;
mod status;

pub use owned::NODE_NAME;

use crate::objects::meta_str;
use crate::server::ServerState;
use crate::store::{Change, EventType, Key, StoreError};
use serde_json::Value;
use status::desired_status;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// The annotation that chooses a simulated outcome (`fail` or `hang`).
pub const SIMULATE_ANNOTATION: &str = "tidegate.dev/simulate";

const RESOURCES: [&str; 7] = [
    "apps/deployments",
    "apps/replicasets",
    "apps/statefulsets",
    "apps/daemonsets",
    "batch/jobs",
    "/pods",
    "/persistentvolumeclaims",
];

#[derive(Clone, Copy, PartialEq)]
enum Outcome {
    Ready,
    Fail,
    Hang,
}

/// Runs the simulator until the store's channel closes. `delay` is how long a workload takes
/// to "roll out".
pub async fn run(state: Arc<ServerState>, delay: Duration) {
    let mut rx = state.store.subscribe();
    let sim = Simulator {
        state,
        pending: Arc::default(),
        endpoints: Arc::default(),
        delay,
    };
    for resource in RESOURCES.iter().chain(&["/services"]) {
        for key in sim.state.store.keys_of_resource(resource) {
            sim.schedule(key);
        }
    }
    let state = &sim.state;
    loop {
        match rx.recv().await {
            Ok(e) => {
                // Services' endpoints follow the Service and the Pods of its namespace.
                if e.key.resource == "/services" {
                    sim.schedule(e.key.clone());
                }
                // Every Service of the namespace, in one pass.
                if e.key.resource == "/pods" {
                    sim.schedule(Key::new("/services", &e.key.namespace, ""));
                }
                if e.kind == EventType::Deleted {
                    let object = e.object();
                    if e.key.resource == "/persistentvolumeclaims" {
                        owned::release_volume(state, &object);
                    }
                    // A controller replaces what it owns when it goes.
                    if let Some(owner) = controller_of(state, &object) {
                        sim.schedule(owner);
                    }
                } else if RESOURCES.contains(&e.key.resource.as_str()) {
                    let object = e.object();
                    if desired_status(&e.key.resource, &object)
                        .is_some_and(|s| object.get("status") != Some(&s))
                    {
                        sim.schedule(e.key.clone());
                    }
                }
            }
            Err(RecvError::Lagged(_)) => {
                for resource in RESOURCES.iter().chain(&["/services"]) {
                    for key in state.store.keys_of_resource(resource) {
                        sim.schedule(key);
                    }
                }
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// The key of the workload that controls `obj`, if it is one the simulator plays.
fn controller_of(state: &ServerState, obj: &Value) -> Option<Key> {
    let uid = obj
        .pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r["controller"] == serde_json::json!(true))?
        .get("uid")?
        .as_str()?;
    let key = state.store.key_of_uid(uid)?;
    RESOURCES.contains(&key.resource.as_str()).then_some(key)
}

/// The simulator's shared state: what is due, and what the endpoints controllers wrote.
struct Simulator {
    state: Arc<ServerState>,
    /// Keys with a pass due (a Service key without a name: every Service of the namespace).
    pending: Arc<Mutex<HashSet<Key>>>,
    endpoints: Arc<endpoints::Written>,
    delay: Duration,
}

impl Simulator {
    /// Plays the controller of `key` after the delay (once, however often it is asked
    /// meanwhile).
    fn schedule(&self, key: Key) {
        if !self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone())
        {
            return;
        }
        let state = self.state.clone();
        let pending = self.pending.clone();
        let written = self.endpoints.clone();
        let delay = self.delay;
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&key);
            if key.resource == "/services" {
                if key.name.is_empty() {
                    // Every Service of a namespace, possibly hundreds: off the async workers.
                    let _ = tokio::task::spawn_blocking(move || {
                        endpoints::sync_namespace(&state, &written, &key.namespace)
                    })
                    .await;
                } else if let Err(e) = endpoints::sync(&state, &written, &key) {
                    tracing::warn!(error = %e, service = %key.name, namespace = %key.namespace, "endpoints");
                }
                return;
            }
            let annotations = match state.store.get(&key) {
                Some(cur) => owned::sync(&state, &key, &cur),
                None => Vec::new(),
            };
            // The status and the annotations the controller keeps on the object, in one write.
            let result = state.store.mutate::<StoreError>(&key, |cur| {
                let Some(cur) = cur else {
                    return Ok(Change::Keep);
                };
                if meta_str(cur, "deletionTimestamp").is_some() {
                    return Ok(Change::Keep);
                }
                let mut next = (**cur).clone();
                if let Some(status) = desired_status(&key.resource, cur) {
                    next["status"] = status;
                }
                for (k, v) in &annotations {
                    next["metadata"]["annotations"][k] = Value::String(v.clone());
                }
                Ok(if next == **cur {
                    Change::Keep
                } else {
                    Change::Put(next)
                })
            });
            if let Err(e) = result {
                tracing::warn!(error = %e, object = %key.name, "workload simulator");
            }
        });
    }
}

/// The outcome the annotation asks for: on the object itself or, for workloads, on its pod
/// template (its Pods crash-loop, so it never becomes ready).
fn outcome(obj: &Value) -> Outcome {
    let asked = |pointer: &str| {
        obj.pointer(pointer)
            .and_then(|a| a.get(SIMULATE_ANNOTATION))
            .and_then(Value::as_str)
    };
    match asked("/metadata/annotations").or_else(|| asked("/spec/template/metadata/annotations")) {
        Some("fail") => Outcome::Fail,
        Some("hang") => Outcome::Hang,
        _ => Outcome::Ready,
    }
}
