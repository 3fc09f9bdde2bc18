//! The status a simulated cluster settles on for each workload kind.

use super::{Outcome, outcome};
use crate::objects::{meta_str, now};
use serde_json::{Value, json};

fn int(obj: &Value, pointer: &str, default: i64) -> i64 {
    obj.pointer(pointer)
        .and_then(Value::as_i64)
        .unwrap_or(default)
}

/// The status the simulated cluster would settle on for `obj`; `None` for other kinds.
pub(super) fn desired_status(resource: &str, obj: &Value) -> Option<Value> {
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
            let hash = super::owned::template_hash(obj.pointer("/spec/template"));
            let rs = format!("ReplicaSet \"{name}-{hash}\"");
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
            let revision = format!(
                "{name}-{}",
                super::owned::template_hash(obj.pointer("/spec/template"))
            );
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
        "/pods" => pod_status(obj, old, outcome, &start),
        // A claim is bound to the volume the simulated provisioner made for it (`hang`: it
        // stays pending).
        "/persistentvolumeclaims" => match outcome {
            Outcome::Hang => json!({"phase": "Pending"}),
            _ => json!({
                "phase": "Bound",
                "accessModes": obj.pointer("/spec/accessModes").cloned().unwrap_or(json!([])),
                "capacity": {"storage": obj.pointer("/spec/resources/requests/storage").cloned().unwrap_or(json!("0"))},
            }),
        },
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

/// A Pod's status: running and ready, or (`restartPolicy` `Never`/`OnFailure`) run to
/// completion; crash-looping or failed with `fail`; pending with `hang`.
fn pod_status(
    obj: &Value,
    old: Option<&Value>,
    outcome: Outcome,
    start: &dyn Fn() -> Value,
) -> Value {
    let containers: Vec<(&str, &str)> = obj
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        c.get("name").and_then(Value::as_str).unwrap_or(""),
                        c.get("image").and_then(Value::as_str).unwrap_or(""),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let runs_once = matches!(
        obj.pointer("/spec/restartPolicy").and_then(Value::as_str),
        Some("Never" | "OnFailure")
    );
    let uid = meta_str(obj, "uid").unwrap_or("");
    let host = uid
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    let ip = format!("10.42.{}.{}", (host >> 8) % 250, host % 250 + 2);
    let statuses = |state: &dyn Fn() -> Value, ready: bool, restarts: i64| -> Vec<Value> {
        containers
            .iter()
            .map(|(name, image)| {
                json!({"name": name, "image": image, "imageID": "", "ready": ready,
                    "started": ready, "restartCount": restarts, "state": state()})
            })
            .collect()
    };
    let mut status = match (outcome, runs_once) {
        (Outcome::Hang, _) => {
            return json!({"phase": "Pending", "conditions": [
                condition(old, "PodScheduled", "True", "", ""),
            ]});
        }
        (Outcome::Ready, false) => json!({
            "phase": "Running",
            "conditions": pod_conditions(old, "True", "True", ""),
            "containerStatuses": statuses(&|| json!({"running": {"startedAt": start()}}), true, 0),
        }),
        (Outcome::Fail, false) => json!({
            "phase": "Running",
            "conditions": pod_conditions(old, "True", "False", "ContainersNotReady"),
            "containerStatuses": statuses(&|| json!({"waiting": {"reason": "CrashLoopBackOff",
                "message": "simulated (tidegate.dev/simulate: fail)"}}), false, 5),
        }),
        (outcome, true) => {
            let (phase, code, reason) = if outcome == Outcome::Ready {
                ("Succeeded", 0, "Completed")
            } else {
                ("Failed", 1, "Error")
            };
            let finished = old
                .and_then(|s| s.pointer("/containerStatuses/0/state/terminated/finishedAt"))
                .cloned()
                .unwrap_or_else(|| json!(now()));
            json!({
                "phase": phase,
                "conditions": pod_conditions(old, "False", "False", "PodCompleted"),
                "containerStatuses": statuses(&|| json!({"terminated": {"exitCode": code,
                    "reason": reason, "startedAt": start(), "finishedAt": finished}}), false, 0),
            })
        }
    };
    status["startTime"] = start();
    status["hostIP"] = json!("10.0.0.2");
    status["hostIPs"] = json!([{"ip": "10.0.0.2"}]);
    status["podIP"] = json!(ip);
    status["podIPs"] = json!([{"ip": ip}]);
    status["qosClass"] = json!("BestEffort");
    status
}

/// A Pod's conditions in kubelet's order: sandbox ready (`started`), initialized, ready and
/// containers ready (`ready`, for `reason`), scheduled.
fn pod_conditions(old: Option<&Value>, started: &str, ready: &str, reason: &str) -> Value {
    let init_reason = if reason == "PodCompleted" { reason } else { "" };
    json!([
        condition(old, "PodReadyToStartContainers", started, "", ""),
        condition(old, "Initialized", "True", init_reason, ""),
        condition(old, "Ready", ready, reason, ""),
        condition(old, "ContainersReady", ready, reason, ""),
        condition(old, "PodScheduled", "True", "", ""),
    ])
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
    use crate::simulator::SIMULATE_ANNOTATION;

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
