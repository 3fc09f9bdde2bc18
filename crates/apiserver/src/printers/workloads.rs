//! Columns of Pods and the workload kinds.

use super::{
    AGE, Column, NAME, col, containers, format_labels, format_selector, i, items, or, s,
    selector_string, since, wide,
};
use crate::table::human_duration;
use serde_json::{Value, json};

pub(super) fn columns(group: &str, kind: &str) -> Option<Vec<Column>> {
    Some(match (group, kind) {
        ("", "Pod") => vec![
            NAME,
            col("Ready", "string", |o| json!(pod_summary(o).ready)),
            col("Status", "string", |o| json!(pod_summary(o).reason)),
            col("Restarts", "string", |o| json!(pod_summary(o).restarts)),
            AGE,
            wide("IP", |o| json!(or(o, "/status/podIPs/0/ip", "<none>"))),
            wide("Node", |o| json!(or(o, "/spec/nodeName", "<none>"))),
            wide("Nominated Node", |o| {
                json!(or(o, "/status/nominatedNodeName", "<none>"))
            }),
            wide("Readiness Gates", readiness_gates),
        ],
        ("", "PodTemplate") => vec![
            NAME,
            col("Containers", "string", |o| {
                json!(containers(o.pointer("/template/spec"), "name"))
            }),
            col("Images", "string", |o| {
                json!(containers(o.pointer("/template/spec"), "image"))
            }),
            col("Pod Labels", "string", |o| {
                json!(format_labels(o.pointer("/template/metadata/labels")))
            }),
        ],
        ("", "ReplicationController") | ("apps", "ReplicaSet") => vec![
            NAME,
            col("Desired", "integer", |o| json!(i(o, "/spec/replicas"))),
            col("Current", "integer", |o| json!(i(o, "/status/replicas"))),
            col("Ready", "integer", |o| json!(i(o, "/status/readyReplicas"))),
            AGE,
            template_containers(),
            template_images(),
            wide("Selector", |o| {
                let sel = o.pointer("/spec/selector");
                // A ReplicationController's selector is a plain label map.
                json!(if sel.is_some_and(
                    |s| s.get("matchLabels").is_none() && s.get("matchExpressions").is_none()
                ) {
                    format_labels(sel)
                } else {
                    format_selector(sel)
                })
            }),
        ],
        ("apps", "Deployment") => vec![
            NAME,
            ready_of_replicas(),
            col("Up-to-date", "string", |o| {
                json!(i(o, "/status/updatedReplicas"))
            }),
            col("Available", "string", |o| {
                json!(i(o, "/status/availableReplicas"))
            }),
            AGE,
            template_containers(),
            template_images(),
            wide("Selector", |o| {
                json!(selector_string(o.pointer("/spec/selector")))
            }),
        ],
        ("apps", "StatefulSet") => vec![
            NAME,
            ready_of_replicas(),
            AGE,
            template_containers(),
            template_images(),
        ],
        ("apps", "DaemonSet") => vec![
            NAME,
            col("Desired", "integer", |o| {
                json!(i(o, "/status/desiredNumberScheduled"))
            }),
            col("Current", "integer", |o| {
                json!(i(o, "/status/currentNumberScheduled"))
            }),
            col("Ready", "integer", |o| json!(i(o, "/status/numberReady"))),
            col("Up-to-date", "integer", |o| {
                json!(i(o, "/status/updatedNumberScheduled"))
            }),
            col("Available", "integer", |o| {
                json!(i(o, "/status/numberAvailable"))
            }),
            col("Node Selector", "string", |o| {
                json!(format_labels(o.pointer("/spec/template/spec/nodeSelector")))
            }),
            AGE,
            template_containers(),
            template_images(),
            wide("Selector", |o| {
                json!(format_selector(o.pointer("/spec/selector")))
            }),
        ],
        ("batch", "Job") => vec![
            NAME,
            col("Status", "string", |o| json!(job_status(o))),
            col("Completions", "string", |o| json!(job_completions(o))),
            col("Duration", "string", |o| json!(job_duration(o))),
            AGE,
            template_containers(),
            template_images(),
            wide("Selector", |o| {
                json!(format_selector(o.pointer("/spec/selector")))
            }),
        ],
        ("batch", "CronJob") => vec![
            NAME,
            col("Schedule", "string", |o| json!(s(o, "/spec/schedule"))),
            col("Timezone", "string", |o| {
                json!(or(o, "/spec/timeZone", "<none>"))
            }),
            col("Suspend", "boolean", |o| {
                json!(match o.pointer("/spec/suspend").and_then(Value::as_bool) {
                    Some(true) => "True",
                    Some(false) => "False",
                    None => "<unset>",
                })
            }),
            col("Active", "integer", |o| {
                json!(items(o, "/status/active").len())
            }),
            col("Last Schedule", "string", |o| {
                json!(match o.pointer("/status/lastScheduleTime") {
                    Some(t) if !t.is_null() => since(Some(t)),
                    _ => "<none>".into(),
                })
            }),
            AGE,
            wide("Containers", |o| {
                json!(containers(
                    o.pointer("/spec/jobTemplate/spec/template/spec"),
                    "name"
                ))
            }),
            wide("Images", |o| {
                json!(containers(
                    o.pointer("/spec/jobTemplate/spec/template/spec"),
                    "image"
                ))
            }),
            wide("Selector", |o| {
                json!(format_selector(
                    o.pointer("/spec/jobTemplate/spec/selector")
                ))
            }),
        ],
        ("apps", "ControllerRevision") => vec![
            NAME,
            col("Controller", "string", |o| {
                let owner = items(o, "/metadata/ownerReferences")
                    .iter()
                    .find(|r| r["controller"] == json!(true));
                json!(match owner {
                    None => "<none>".to_string(),
                    Some(r) => {
                        let group = s(r, "/apiVersion").rsplit_once('/').map(|(g, _)| g);
                        let kind = s(r, "/kind").to_lowercase();
                        let gk = match group {
                            Some(g) => format!("{kind}.{g}"),
                            None => kind,
                        };
                        format!("{gk}/{}", s(r, "/name"))
                    }
                })
            }),
            col("Revision", "string", |o| json!(i(o, "/revision"))),
            AGE,
        ],
        _ => return None,
    })
}

/// Ready replicas over desired ones (`2/3`).
fn ready_of_replicas() -> Column {
    col("Ready", "string", |o| {
        json!(format!(
            "{}/{}",
            i(o, "/status/readyReplicas"),
            i(o, "/spec/replicas")
        ))
    })
}

fn template_containers() -> Column {
    wide("Containers", |o| {
        json!(containers(o.pointer("/spec/template/spec"), "name"))
    })
}

fn template_images() -> Column {
    wide("Images", |o| {
        json!(containers(o.pointer("/spec/template/spec"), "image"))
    })
}

/// What `kubectl get pods` shows of a Pod.
struct PodSummary {
    ready: String,
    reason: String,
    restarts: String,
}

fn condition_true(o: &Value, type_: &str) -> bool {
    items(o, "/status/conditions")
        .iter()
        .find(|c| c["type"] == type_)
        .is_some_and(|c| c["status"] == "True")
}

fn finished_at(cs: &Value) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    cs.pointer("/lastState/terminated/finishedAt")
        .and_then(Value::as_str)
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
}

/// The Ready, Status and Restarts cells, as the Pod printer computes them.
fn pod_summary(o: &Value) -> PodSummary {
    let mut restarts = 0;
    let mut sidecar_restarts = 0;
    let mut ready = 0;
    let mut total = items(o, "/spec/containers").len();
    let mut last_restart = None;
    let mut last_sidecar_restart = None;
    let mut reason = or(o, "/status/reason", s(o, "/status/phase")).to_string();
    if items(o, "/status/conditions")
        .iter()
        .any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated")
    {
        reason = "SchedulingGated".into();
    }
    let init_specs = items(o, "/spec/initContainers");
    let sidecar = |name: &str| {
        init_specs
            .iter()
            .any(|c| c["name"] == name && c["restartPolicy"] == "Always")
    };
    total += init_specs
        .iter()
        .filter(|c| c["restartPolicy"] == "Always")
        .count();
    let mut initializing = false;
    for (idx, cs) in items(o, "/status/initContainerStatuses").iter().enumerate() {
        let name = s(cs, "/name");
        restarts += i(cs, "/restartCount");
        last_restart = last_restart.max(finished_at(cs));
        if sidecar(name) {
            sidecar_restarts += i(cs, "/restartCount");
            last_sidecar_restart = last_sidecar_restart.max(finished_at(cs));
        }
        let terminated = cs.pointer("/state/terminated");
        if terminated.is_some_and(|t| t["exitCode"] == 0) {
            continue;
        }
        if sidecar(name) && cs["started"] == json!(true) {
            if cs["ready"] == json!(true) {
                ready += 1;
            }
            continue;
        }
        if let Some(t) = terminated {
            let r = s(t, "/reason");
            reason = if !r.is_empty() {
                format!("Init:{r}")
            } else if i(t, "/signal") != 0 {
                format!("Init:Signal:{}", i(t, "/signal"))
            } else {
                format!("Init:ExitCode:{}", i(t, "/exitCode"))
            };
        } else if let Some(w) = cs
            .pointer("/state/waiting/reason")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty() && *r != "PodInitializing")
        {
            reason = format!("Init:{w}");
        } else {
            reason = format!("Init:{idx}/{}", init_specs.len());
        }
        initializing = true;
        break;
    }
    if !initializing || condition_true(o, "Initialized") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        for cs in items(o, "/status/containerStatuses").iter().rev() {
            restarts += i(cs, "/restartCount");
            last_restart = last_restart.max(finished_at(cs));
            let waiting = s(cs, "/state/waiting/reason");
            let terminated = cs.pointer("/state/terminated");
            if !waiting.is_empty() {
                reason = waiting.to_string();
            } else if let Some(t) = terminated {
                let r = s(t, "/reason");
                reason = if !r.is_empty() {
                    r.to_string()
                } else if i(t, "/signal") != 0 {
                    format!("Signal:{}", i(t, "/signal"))
                } else {
                    format!("ExitCode:{}", i(t, "/exitCode"))
                };
            } else if cs["ready"] == json!(true) && cs.pointer("/state/running").is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if condition_true(o, "Ready") {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }
    let deleting = o
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null());
    let phase = s(o, "/status/phase");
    if deleting && s(o, "/status/reason") == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".into();
    }
    let mut restarts_text = restarts.to_string();
    if restarts != 0
        && let Some(t) = last_restart
    {
        let ago = (chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds();
        restarts_text = format!("{restarts} ({} ago)", human_duration(ago));
    }
    PodSummary {
        ready: format!("{ready}/{total}"),
        reason,
        restarts: restarts_text,
    }
}

fn readiness_gates(o: &Value) -> Value {
    let gates = items(o, "/spec/readinessGates");
    if gates.is_empty() {
        return json!("<none>");
    }
    let ok = gates
        .iter()
        .filter(|g| condition_true(o, s(g, "/conditionType")))
        .count();
    json!(format!("{ok}/{}", gates.len()))
}

fn job_status(o: &Value) -> &'static str {
    if condition_true(o, "Complete") {
        "Complete"
    } else if condition_true(o, "Failed") {
        "Failed"
    } else if o
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        "Terminating"
    } else if condition_true(o, "Suspended") {
        "Suspended"
    } else if condition_true(o, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    }
}

fn job_completions(o: &Value) -> String {
    let succeeded = i(o, "/status/succeeded");
    match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match i(o, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

fn job_duration(o: &Value) -> String {
    let parse = |p: &str| {
        o.pointer(p)
            .and_then(Value::as_str)
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
    };
    let Some(start) = parse("/status/startTime") else {
        return String::new();
    };
    let end = parse("/status/completionTime")
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(chrono::Utc::now);
    human_duration((end - start.with_timezone(&chrono::Utc)).num_seconds())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_status_cells() {
        let running = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
                {"name": "b", "ready": false, "restartCount": 2,
                 "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
        let p = pod_summary(&running);
        assert_eq!(
            (p.ready.as_str(), p.reason.as_str(), p.restarts.as_str()),
            ("1/2", "CrashLoopBackOff", "2")
        );
        let init = json!({"spec": {"initContainers": [{"name": "i1"}, {"name": "i2"}], "containers": [{"name": "a"}]},
            "status": {"phase": "Pending", "initContainerStatuses": [
                {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
                {"name": "i2", "state": {"running": {}}}]}});
        assert_eq!(pod_summary(&init).reason, "Init:1/2");
        let done = json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Succeeded",
            "containerStatuses": [{"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}});
        assert_eq!(pod_summary(&done).reason, "Completed");
        assert_eq!(pod_summary(&done).ready, "0/1");
        let pending =
            json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Pending"}});
        assert_eq!(pod_summary(&pending).reason, "Pending");
    }

    #[test]
    fn job_cells() {
        let j = json!({"spec": {"completions": 3}, "status": {"succeeded": 1,
            "startTime": "2024-01-01T00:00:00Z", "completionTime": "2024-01-01T00:01:05Z"}});
        assert_eq!(job_completions(&j), "1/3");
        assert_eq!(job_duration(&j), "65s");
        assert_eq!(job_status(&j), "Running");
        let p = json!({"spec": {"parallelism": 2}});
        assert_eq!(job_completions(&p), "0/1 of 2");
    }
}
