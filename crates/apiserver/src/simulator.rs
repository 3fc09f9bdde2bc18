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

use crate::objects::{meta_str, now};
use crate::server::ServerState;
use crate::store::{Change, EventType, Key, StoreError};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// The annotation that chooses a simulated outcome (`fail` or `hang`).
pub const SIMULATE_ANNOTATION: &str = "tidegate.dev/simulate";

const RESOURCES: [&str; 6] = [
    "apps/deployments",
    "apps/replicasets",
    "apps/statefulsets",
    "apps/daemonsets",
    "batch/jobs",
    "/pods",
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
    let pending: Arc<Mutex<HashSet<Key>>> = Arc::default();
    for resource in RESOURCES {
        for key in state.store.keys_of_resource(resource) {
            schedule(&state, &pending, key, delay);
        }
    }
    loop {
        match rx.recv().await {
            Ok(e) => {
                if e.kind != EventType::Deleted
                    && RESOURCES.contains(&e.key.resource.as_str())
                    && desired_status(&e.key.resource, &e.object)
                        .is_some_and(|s| e.object.get("status") != Some(&s))
                {
                    schedule(&state, &pending, e.key.clone(), delay);
                }
            }
            Err(RecvError::Lagged(_)) => {
                for resource in RESOURCES {
                    for key in state.store.keys_of_resource(resource) {
                        schedule(&state, &pending, key, delay);
                    }
                }
            }
            Err(RecvError::Closed) => return,
        }
    }
}

fn schedule(
    state: &Arc<ServerState>,
    pending: &Arc<Mutex<HashSet<Key>>>,
    key: Key,
    delay: Duration,
) {
    if !pending
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key.clone())
    {
        return;
    }
    let state = state.clone();
    let pending = pending.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
        let result = state.store.mutate::<StoreError>(&key, |cur| {
            let Some(cur) = cur else {
                return Ok(Change::Keep);
            };
            if meta_str(cur, "deletionTimestamp").is_some() {
                return Ok(Change::Keep);
            }
            match desired_status(&key.resource, cur) {
                Some(status) if cur.get("status") != Some(&status) => {
                    let mut next = (**cur).clone();
                    next["status"] = status;
                    Ok(Change::Put(next))
                }
                _ => Ok(Change::Keep),
            }
        });
        if let Err(e) = result {
            tracing::warn!(error = %e, object = %key.name, "workload simulator");
        }
    });
}

fn outcome(obj: &Value) -> Outcome {
    match obj
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(SIMULATE_ANNOTATION))
        .and_then(Value::as_str)
    {
        Some("fail") => Outcome::Fail,
        Some("hang") => Outcome::Hang,
        _ => Outcome::Ready,
    }
}

fn int(obj: &Value, pointer: &str, default: i64) -> i64 {
    obj.pointer(pointer)
        .and_then(Value::as_i64)
        .unwrap_or(default)
}

/// The status the simulated cluster would settle on for `obj`; `None` for other kinds.
fn desired_status(resource: &str, obj: &Value) -> Option<Value> {
    let generation = int(obj, "/metadata/generation", 1);
    let name = meta_str(obj, "name").unwrap_or("");
    let old = obj.get("status");
    let outcome = outcome(obj);
    let replicas = int(obj, "/spec/replicas", 1);
    let start = || {
        old.and_then(|s| s.get("startTime"))
            .cloned()
            .unwrap_or_else(|| json!(now()))
    };
    let mut status = match resource {
        "apps/deployments" => {
            let rs = format!("ReplicaSet \"{name}-{generation}\"");
            let (ready, progressing, available) = match outcome {
                Outcome::Ready => (
                    replicas,
                    (
                        "True",
                        "NewReplicaSetAvailable",
                        format!("{rs} has successfully progressed."),
                    ),
                    (
                        "True",
                        "MinimumReplicasAvailable",
                        "Deployment has minimum availability.",
                    ),
                ),
                Outcome::Fail => (
                    0,
                    (
                        "False",
                        "ProgressDeadlineExceeded",
                        format!("{rs} has timed out progressing."),
                    ),
                    (
                        "False",
                        "MinimumReplicasUnavailable",
                        "Deployment does not have minimum availability.",
                    ),
                ),
                Outcome::Hang => (
                    0,
                    ("True", "ReplicaSetUpdated", format!("{rs} is progressing.")),
                    (
                        "False",
                        "MinimumReplicasUnavailable",
                        "Deployment does not have minimum availability.",
                    ),
                ),
            };
            let mut s = json!({
                "observedGeneration": generation,
                "replicas": replicas,
                "updatedReplicas": replicas,
                "conditions": [
                    condition(old, "Available", available.0, available.1, available.2),
                    condition(old, "Progressing", progressing.0, progressing.1, &progressing.2),
                ],
            });
            counts(
                &mut s,
                &[("readyReplicas", ready), ("availableReplicas", ready)],
            );
            if ready < replicas {
                s["unavailableReplicas"] = json!(replicas - ready);
            }
            s
        }
        "apps/replicasets" => {
            let ready = if outcome == Outcome::Ready {
                replicas
            } else {
                0
            };
            let mut s = json!({
                "observedGeneration": generation,
                "replicas": replicas,
                "fullyLabeledReplicas": replicas,
            });
            counts(
                &mut s,
                &[("readyReplicas", ready), ("availableReplicas", ready)],
            );
            if outcome == Outcome::Fail {
                s["conditions"] = json!([condition(
                    old,
                    "ReplicaFailure",
                    "True",
                    "FailedCreate",
                    "simulated failure (tidegate.dev/simulate: fail)"
                )]);
            }
            s
        }
        "apps/statefulsets" => {
            let ready = if outcome == Outcome::Ready {
                replicas
            } else {
                0
            };
            let revision = format!("{name}-{generation}");
            let mut s = json!({
                "observedGeneration": generation,
                "replicas": replicas,
                "currentRevision": revision,
                "updateRevision": revision,
                "collisionCount": 0,
            });
            counts(
                &mut s,
                &[
                    ("readyReplicas", ready),
                    ("currentReplicas", ready),
                    ("updatedReplicas", ready),
                    ("availableReplicas", ready),
                ],
            );
            s
        }
        "apps/daemonsets" => {
            let ready = if outcome == Outcome::Ready { 1 } else { 0 };
            json!({
                "observedGeneration": generation,
                "desiredNumberScheduled": 1,
                "currentNumberScheduled": 1,
                "numberMisscheduled": 0,
                "numberReady": ready,
                "updatedNumberScheduled": ready,
                "numberAvailable": ready,
                "numberUnavailable": 1 - ready,
            })
        }
        "batch/jobs" => {
            let completions = int(obj, "/spec/completions", 1);
            match outcome {
                Outcome::Ready => json!({
                    "startTime": start(),
                    "completionTime": old.and_then(|s| s.get("completionTime")).cloned().unwrap_or_else(|| json!(now())),
                    "succeeded": completions,
                    "ready": 0,
                    "terminating": 0,
                    "conditions": [
                        condition(old, "SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods"),
                        condition(old, "Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods"),
                    ],
                }),
                Outcome::Fail => json!({
                    "startTime": start(),
                    "failed": int(obj, "/spec/backoffLimit", 6) + 1,
                    "ready": 0,
                    "terminating": 0,
                    "conditions": [
                        condition(old, "FailureTarget", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
                        condition(old, "Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
                    ],
                }),
                Outcome::Hang => {
                    json!({"startTime": start(), "active": 1, "ready": 0, "terminating": 0})
                }
            }
        }
        "/pods" => {
            let containers: Vec<&str> = obj
                .pointer("/spec/containers")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|c| c.get("name").and_then(Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            match outcome {
                Outcome::Ready => json!({
                    "phase": "Running",
                    "startTime": start(),
                    "conditions": [
                        condition(old, "PodScheduled", "True", "", ""),
                        condition(old, "Initialized", "True", "", ""),
                        condition(old, "ContainersReady", "True", "", ""),
                        condition(old, "Ready", "True", "", ""),
                    ],
                    "containerStatuses": containers.iter().map(|c| json!({
                        "name": c, "ready": true, "started": true, "restartCount": 0,
                        "state": {"running": {"startedAt": start()}},
                    })).collect::<Vec<_>>(),
                }),
                Outcome::Fail => json!({
                    "phase": "Running",
                    "startTime": start(),
                    "conditions": [
                        condition(old, "PodScheduled", "True", "", ""),
                        condition(old, "Ready", "False", "ContainersNotReady", ""),
                    ],
                    "containerStatuses": containers.iter().map(|c| json!({
                        "name": c, "ready": false, "started": false, "restartCount": 5,
                        "state": {"waiting": {"reason": "CrashLoopBackOff",
                            "message": "simulated (tidegate.dev/simulate: fail)"}},
                    })).collect::<Vec<_>>(),
                }),
                Outcome::Hang => json!({"phase": "Pending"}),
            }
        }
        _ => return None,
    };
    // Fields a real controller would keep that the simulation does not decide.
    if let (Some(Value::Object(old)), Some(new)) = (old, status.as_object_mut()) {
        for (k, v) in old {
            if !new.contains_key(k) && resource != "batch/jobs" && resource != "/pods" {
                new.insert(k.clone(), v.clone());
            }
        }
    }
    Some(status)
}

/// Sets integer fields, leaving zero counts out as Kubernetes' JSON does.
fn counts(status: &mut Value, fields: &[(&str, i64)]) {
    for (k, v) in fields {
        if *v != 0 {
            status[*k] = json!(v);
        }
    }
}

/// A condition, keeping the previous transition time when its status did not change.
fn condition(old: Option<&Value>, type_: &str, status: &str, reason: &str, message: &str) -> Value {
    let previous = old
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .and_then(|a| a.iter().find(|c| c["type"] == type_));
    let since = previous
        .filter(|c| c["status"] == status)
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| json!(now()));
    let mut c = json!({"type": type_, "status": status, "lastTransitionTime": since});
    if !reason.is_empty() {
        c["reason"] = json!(reason);
    }
    if !message.is_empty() {
        c["message"] = json!(message);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settles_once() {
        let mut d = json!({"metadata": {"name": "web", "generation": 2}, "spec": {"replicas": 3}});
        let s = desired_status("apps/deployments", &d).expect("deployment");
        assert_eq!(s["observedGeneration"], 2);
        assert_eq!(s["availableReplicas"], 3);
        d["status"] = s.clone();
        // Applying the rule again to its own result changes nothing: no write loop.
        assert_eq!(desired_status("apps/deployments", &d), Some(s));
    }

    #[test]
    fn annotations_choose_failures() {
        let d = json!({"metadata": {"name": "web", "annotations": {SIMULATE_ANNOTATION: "fail"}}});
        let s = desired_status("apps/deployments", &d).expect("deployment");
        assert_eq!(s["conditions"][1]["reason"], "ProgressDeadlineExceeded");
        let j = json!({"metadata": {"name": "j", "annotations": {SIMULATE_ANNOTATION: "fail"}}});
        let s = desired_status("batch/jobs", &j).expect("job");
        assert_eq!(s["conditions"][1]["type"], "Failed");
        let p = json!({"metadata": {"name": "p", "annotations": {SIMULATE_ANNOTATION: "hang"}}});
        assert_eq!(
            desired_status("/pods", &p).expect("pod")["phase"],
            "Pending"
        );
        assert!(desired_status("/configmaps", &p).is_none());
    }
}
