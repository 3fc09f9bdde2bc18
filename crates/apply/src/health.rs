//! Health of one object, computed as kstatus computes it with Flux's Job rule: the status
//! values, the order of checks and the messages follow `cli-utils/pkg/kstatus` so health-check
//! messages read like Flux's.

use serde_json::Value;
use std::fmt;

/// kstatus' status of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Still converging.
    InProgress,
    /// Will not converge without a change (a stalled rollout, a failed Job, a crash loop).
    Failed,
    /// Converged: healthy.
    Current,
    /// Being deleted.
    Terminating,
    /// Not in the cluster.
    NotFound,
    /// Could not be determined.
    Unknown,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::InProgress => "InProgress",
            Status::Failed => "Failed",
            Status::Current => "Current",
            Status::Terminating => "Terminating",
            Status::NotFound => "NotFound",
            Status::Unknown => "Unknown",
        })
    }
}

/// A computed status and the message explaining it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// The status.
    pub status: Status,
    /// Why, in kstatus' words (for example `Ready: 1/3`).
    pub message: String,
}

impl Health {
    fn new(status: Status, message: impl Into<String>) -> Health {
        Health {
            status,
            message: message.into(),
        }
    }
}

fn int(obj: &Value, pointer: &str, default: i64) -> i64 {
    obj.pointer(pointer)
        .and_then(Value::as_i64)
        .unwrap_or(default)
}

fn conditions(obj: &Value) -> &[Value] {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn text<'a>(c: &'a Value, field: &str) -> &'a str {
    c.get(field).and_then(Value::as_str).unwrap_or("")
}

fn has_condition(obj: &Value, type_: &str, status: &str) -> bool {
    conditions(obj)
        .iter()
        .any(|c| text(c, "type") == type_ && text(c, "status") == status)
}

/// Computes the status of `obj` (a live object with its `status`).
pub fn compute(obj: &Value) -> Health {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    // Flux's Job reader replaces kstatus entirely for Jobs: healthy only when complete.
    if group == "batch" && kind == "Job" {
        return job(obj);
    }
    if obj
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
    {
        return Health::new(Status::Terminating, "Resource scheduled for deletion");
    }
    if let (Some(generation), Some(observed)) = (
        obj.pointer("/metadata/generation").and_then(Value::as_i64),
        obj.pointer("/status/observedGeneration")
            .and_then(Value::as_i64),
    ) && generation != observed
    {
        return Health::new(
            Status::InProgress,
            format!(
                "{kind} generation is {generation}, but latest observed generation is {observed}"
            ),
        );
    }
    for c in conditions(obj) {
        match (text(c, "type"), text(c, "status")) {
            ("Reconciling", "True") => return Health::new(Status::InProgress, text(c, "message")),
            ("Stalled", "True") => return Health::new(Status::Failed, text(c, "message")),
            _ => {}
        }
    }
    match (group, kind) {
        ("", "Secret" | "ConfigMap") | ("batch", "CronJob") => {
            Health::new(Status::Current, "Resource is always ready")
        }
        ("apps" | "extensions", "Deployment") => deployment(obj),
        ("apps" | "extensions", "ReplicaSet") => replicaset(obj),
        ("apps", "StatefulSet") => statefulset(obj),
        ("apps" | "extensions", "DaemonSet") => daemonset(obj, kind),
        ("", "Pod") => pod(obj),
        ("", "PersistentVolumeClaim") => {
            let phase = obj
                .pointer("/status/phase")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            if phase == "Bound" {
                Health::new(Status::Current, "PVC is Bound")
            } else {
                Health::new(
                    Status::InProgress,
                    format!("PVC is not Bound. phase: {phase}"),
                )
            }
        }
        ("", "Service") => {
            let type_ = obj
                .pointer("/spec/type")
                .and_then(Value::as_str)
                .unwrap_or("ClusterIP");
            let ip = obj
                .pointer("/spec/clusterIP")
                .and_then(Value::as_str)
                .unwrap_or("");
            if type_ == "LoadBalancer" && ip.is_empty() {
                Health::new(
                    Status::InProgress,
                    "ClusterIP not set. Service type: LoadBalancer",
                )
            } else {
                Health::new(Status::Current, "Service is ready")
            }
        }
        ("policy", "PodDisruptionBudget") => {
            Health::new(Status::Current, "AllowedDisruptions has been computed.")
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => crd(obj),
        _ => ready_condition(obj),
    }
}

fn ready_condition(obj: &Value) -> Health {
    for c in conditions(obj) {
        if text(c, "type") == "Ready" {
            match text(c, "status") {
                "True" => return Health::new(Status::Current, "Resource is Ready"),
                "False" | "Unknown" => return Health::new(Status::InProgress, text(c, "message")),
                _ => {}
            }
        }
    }
    Health::new(Status::Current, "Resource is current")
}

fn deployment(obj: &Value) -> Health {
    let deadline = obj
        .pointer("/spec/progressDeadlineSeconds")
        .and_then(Value::as_i64);
    let mut progressing = deadline.is_none_or(|d| d == i64::from(i32::MAX));
    let mut available_cond = false;
    for c in conditions(obj) {
        match text(c, "type") {
            "Progressing" if text(c, "reason") == "ProgressDeadlineExceeded" => {
                return Health::new(Status::Failed, "Progress deadline exceeded");
            }
            "Progressing"
                if text(c, "status") == "True" && text(c, "reason") == "NewReplicaSetAvailable" =>
            {
                progressing = true;
            }
            "Available" if text(c, "status") == "True" => available_cond = true,
            _ => {}
        }
    }
    let spec = int(obj, "/spec/replicas", 1);
    let status = int(obj, "/status/replicas", 0);
    let updated = int(obj, "/status/updatedReplicas", 0);
    let ready = int(obj, "/status/readyReplicas", 0);
    let available = int(obj, "/status/availableReplicas", 0);
    let in_progress = |m: String| Health::new(Status::InProgress, m);
    if spec > status {
        return in_progress(format!("Replicas: {status}/{spec}"));
    }
    if spec > updated {
        return in_progress(format!("Updated: {updated}/{spec}"));
    }
    if status > spec {
        return in_progress(format!("Pending termination: {}", status - spec));
    }
    if updated > available {
        return in_progress(format!("Available: {available}/{updated}"));
    }
    if spec > ready {
        return in_progress(format!("Ready: {ready}/{spec}"));
    }
    if !progressing {
        return in_progress("ReplicaSet not Available".into());
    }
    if !available_cond {
        return in_progress("Deployment not Available".into());
    }
    Health::new(
        Status::Current,
        format!("Deployment is available. Replicas: {status}"),
    )
}

fn replicaset(obj: &Value) -> Health {
    if has_condition(obj, "ReplicaFailure", "True") {
        return Health::new(Status::InProgress, "Replica Failure condition. Check Pods");
    }
    let spec = int(obj, "/spec/replicas", 1);
    let status = int(obj, "/status/replicas", 0);
    let ready = int(obj, "/status/readyReplicas", 0);
    let available = int(obj, "/status/availableReplicas", 0);
    let labelled = int(obj, "/status/fullyLabeledReplicas", 0);
    let in_progress = |m: String| Health::new(Status::InProgress, m);
    if spec > labelled {
        return in_progress(format!("Labelled: {labelled}/{spec}"));
    }
    if spec > available {
        return in_progress(format!("Available: {available}/{spec}"));
    }
    if spec > ready {
        return in_progress(format!("Ready: {ready}/{spec}"));
    }
    if status > spec {
        return in_progress(format!("Pending termination: {}", status - spec));
    }
    Health::new(
        Status::Current,
        format!("ReplicaSet is available. Replicas: {status}"),
    )
}

fn statefulset(obj: &Value) -> Health {
    if obj
        .pointer("/spec/updateStrategy/type")
        .and_then(Value::as_str)
        == Some("OnDelete")
    {
        return Health::new(
            Status::Current,
            "StatefulSet is using the ondelete update strategy",
        );
    }
    let spec = int(obj, "/spec/replicas", 1);
    let ready = int(obj, "/status/readyReplicas", 0);
    let current = int(obj, "/status/currentReplicas", 0);
    let updated = int(obj, "/status/updatedReplicas", 0);
    let status = int(obj, "/status/replicas", 0);
    let in_progress = |m: String| Health::new(Status::InProgress, m);
    if spec > status {
        return in_progress(format!("Replicas: {status}/{spec}"));
    }
    if spec > ready {
        return in_progress(format!("Ready: {ready}/{spec}"));
    }
    if status > spec {
        return in_progress(format!("Pending termination: {}", status - spec));
    }
    if let Some(partition) = obj
        .pointer("/spec/updateStrategy/rollingUpdate/partition")
        .and_then(Value::as_i64)
    {
        if updated < spec - partition {
            return in_progress(format!("updated: {updated}/{}", spec - partition));
        }
        return Health::new(
            Status::Current,
            format!("Partition rollout complete. updated: {updated}"),
        );
    }
    if spec > current {
        return in_progress(format!("current: {current}/{spec}"));
    }
    if obj.pointer("/status/currentRevision") != obj.pointer("/status/updateRevision") {
        return in_progress("Waiting for updated revision to match current".into());
    }
    Health::new(
        Status::Current,
        format!("All replicas scheduled as expected. Replicas: {status}"),
    )
}

fn daemonset(obj: &Value, kind: &str) -> Health {
    if obj
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .is_none()
    {
        return Health::new(
            Status::InProgress,
            format!("{kind} metadata.generation not found"),
        );
    }
    if obj
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64)
        .is_none()
    {
        return Health::new(
            Status::InProgress,
            format!("{kind} status.observedGeneration not found"),
        );
    }
    let desired = int(obj, "/status/desiredNumberScheduled", -1);
    let current = int(obj, "/status/currentNumberScheduled", 0);
    let updated = int(obj, "/status/updatedNumberScheduled", 0);
    let available = int(obj, "/status/numberAvailable", 0);
    let ready = int(obj, "/status/numberReady", 0);
    let in_progress = |m: String| Health::new(Status::InProgress, m);
    if desired == -1 {
        return in_progress("Missing .status.desiredNumberScheduled".into());
    }
    for (label, n) in [
        ("Current", current),
        ("Updated", updated),
        ("Available", available),
        ("Ready", ready),
    ] {
        if desired > n {
            return in_progress(format!("{label}: {n}/{desired}"));
        }
    }
    Health::new(
        Status::Current,
        format!("All replicas scheduled as expected. Replicas: {desired}"),
    )
}

fn pod(obj: &Value) -> Health {
    match obj
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("")
    {
        "Succeeded" => Health::new(Status::Current, "Pod has completed successfully"),
        "Failed" => Health::new(Status::Current, "Pod has completed, but not successfully"),
        "Running" => {
            if has_condition(obj, "Ready", "True") {
                return Health::new(Status::Current, "Pod is Ready");
            }
            let crashing: Vec<&str> = obj
                .pointer("/status/containerStatuses")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter(|c| {
                            c.pointer("/state/waiting/reason").and_then(Value::as_str)
                                == Some("CrashLoopBackOff")
                        })
                        .map(|c| text(c, "name"))
                        .collect()
                })
                .unwrap_or_default();
            if crashing.is_empty() {
                Health::new(Status::InProgress, "Pod is running but is not Ready")
            } else {
                Health::new(
                    Status::Failed,
                    format!("Containers in CrashLoop state: {}", crashing.join(",")),
                )
            }
        }
        "Pending" => {
            let unschedulable = conditions(obj).iter().any(|c| {
                text(c, "type") == "PodScheduled"
                    && text(c, "status") == "False"
                    && text(c, "reason") == "Unschedulable"
            });
            if !unschedulable {
                return Health::new(Status::InProgress, "Pod is in the Pending phase");
            }
            let created = obj
                .pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str)
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
            let waited = created.map(|t| chrono::Utc::now().signed_duration_since(t));
            if waited.is_some_and(|w| w.num_seconds() > 15) {
                Health::new(Status::Failed, "Pod could not be scheduled")
            } else {
                Health::new(Status::InProgress, "Pod has not been scheduled")
            }
        }
        "" => Health::new(Status::InProgress, "Pod phase not available"),
        other => Health::new(Status::Unknown, format!("unknown phase {other}")),
    }
}

fn crd(obj: &Value) -> Health {
    for c in conditions(obj) {
        match (text(c, "type"), text(c, "status")) {
            ("NamesAccepted", "False") => return Health::new(Status::Failed, text(c, "message")),
            ("Established", "False") if text(c, "reason") != "Installing" => {
                return Health::new(Status::Failed, text(c, "message"));
            }
            ("Established", "True") => return Health::new(Status::Current, "CRD is established"),
            _ => {}
        }
    }
    Health::new(Status::InProgress, "Install in progress")
}

/// Flux's Job rule: current only when complete (or suspended), failed when the Job failed.
fn job(obj: &Value) -> Health {
    let parallelism = int(obj, "/spec/parallelism", 1);
    let completions = int(obj, "/spec/completions", parallelism);
    let succeeded = int(obj, "/status/succeeded", 0);
    let active = int(obj, "/status/active", 0);
    let failed = int(obj, "/status/failed", 0);
    if obj.pointer("/spec/suspend") == Some(&Value::Bool(true)) {
        return Health::new(Status::Current, "Job is suspended");
    }
    for c in conditions(obj) {
        match (text(c, "type"), text(c, "status")) {
            ("Complete", "True") => {
                return Health::new(
                    Status::Current,
                    format!("Job Completed. succeeded: {succeeded}/{completions}"),
                );
            }
            ("Failed", "True") => {
                return Health::new(
                    Status::Failed,
                    format!("Job Failed. failed: {failed}/{completions}"),
                );
            }
            _ => {}
        }
    }
    if obj.pointer("/status/startTime").is_none() {
        return Health::new(
            Status::InProgress,
            format!("Job not started. active: 0/{parallelism}"),
        );
    }
    Health::new(
        Status::InProgress,
        format!("Job in progress. success:{succeeded}, active: {active}, failed: {failed}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deploy(status: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "generation": 2},
               "spec": {"replicas": 3}, "status": status})
    }

    #[test]
    fn deployments() {
        let h = compute(&deploy(json!({"observedGeneration": 1})));
        assert_eq!(h.status, Status::InProgress);
        assert_eq!(
            h.message,
            "Deployment generation is 2, but latest observed generation is 1"
        );
        let h = compute(&deploy(
            json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3,
            "availableReplicas": 3, "readyReplicas": 1}),
        ));
        assert_eq!(h.message, "Ready: 1/3");
        let h = compute(&deploy(
            json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3,
            "availableReplicas": 3, "readyReplicas": 3, "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}),
        ));
        assert_eq!(
            h,
            Health::new(Status::Current, "Deployment is available. Replicas: 3")
        );
        let h = compute(&deploy(json!({"observedGeneration": 2, "conditions": [
            {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]})));
        assert_eq!(h.status, Status::Failed);
    }

    #[test]
    fn jobs_are_healthy_only_when_complete() {
        let job =
            |status: Value| json!({"apiVersion": "batch/v1", "kind": "Job", "status": status});
        assert_eq!(
            compute(&job(json!({}))).message,
            "Job not started. active: 0/1"
        );
        assert_eq!(
            compute(&job(json!({"startTime": "x", "active": 1}))).status,
            Status::InProgress
        );
        assert_eq!(
            compute(&job(
                json!({"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})
            )),
            Health::new(Status::Current, "Job Completed. succeeded: 1/1")
        );
        assert_eq!(
            compute(&job(
                json!({"failed": 7, "conditions": [{"type": "Failed", "status": "True"}]})
            ))
            .status,
            Status::Failed
        );
    }

    #[test]
    fn generic_conditions() {
        let cr = |conds: Value| {
            json!({"apiVersion": "x.dev/v1", "kind": "App",
            "metadata": {"generation": 1}, "status": {"observedGeneration": 1, "conditions": conds}})
        };
        assert_eq!(compute(&cr(json!([]))).message, "Resource is current");
        assert_eq!(
            compute(&cr(json!([{"type": "Ready", "status": "True"}]))).status,
            Status::Current
        );
        assert_eq!(
            compute(&cr(
                json!([{"type": "Ready", "status": "False", "message": "waiting"}])
            )),
            Health::new(Status::InProgress, "waiting")
        );
        assert_eq!(
            compute(&cr(
                json!([{"type": "Stalled", "status": "True", "message": "bad"}])
            ))
            .status,
            Status::Failed
        );
        let ns = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}});
        assert_eq!(compute(&ns).status, Status::Terminating);
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Running",
            "containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
        assert_eq!(compute(&pod).message, "Containers in CrashLoop state: app");
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "status": {"conditions": [{"type": "Established", "status": "True"}]}});
        assert_eq!(compute(&crd).status, Status::Current);
    }
}
