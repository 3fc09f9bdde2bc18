//! Defaults per kind (pod specs are in [`super::pod`]).

use super::{each, obj_at, obj_entry, pod, set, set_str};
use serde_json::{Map, Value, json};

pub(super) fn apply(group: &str, kind: &str, obj: &mut Value) {
    match (group, kind) {
        ("", "Pod") => pod::pod(obj),
        ("", "PodTemplate") => {
            if let Some(t) = obj.get_mut("template") {
                pod::template(t);
            }
        }
        ("", "ReplicationController") => replication_controller(obj),
        ("", "Namespace") => namespace(obj),
        ("", "Service") => service(obj),
        ("", "PersistentVolumeClaim") => {
            if let Some(spec) = obj_at(obj, "spec") {
                set_str(spec, "volumeMode", "Filesystem");
            }
            if let Some(o) = obj.as_object_mut()
                && let Some(status) = obj_entry(o, "status")
            {
                set_str(status, "phase", "Pending");
            }
        }
        ("", "PersistentVolume") => {
            if let Some(spec) = obj_at(obj, "spec") {
                set_str(spec, "persistentVolumeReclaimPolicy", "Retain");
                set_str(spec, "volumeMode", "Filesystem");
            }
            if let Some(o) = obj.as_object_mut()
                && let Some(status) = obj_entry(o, "status")
            {
                set_str(status, "phase", "Pending");
            }
        }
        ("", "Endpoints") => {
            for subset in array(obj, "subsets") {
                protocols(subset, "ports");
            }
        }
        ("discovery.k8s.io", "EndpointSlice") => {
            if let Some(o) = obj.as_object_mut() {
                protocols(o, "ports");
            }
        }
        ("apps", "Deployment") => deployment(obj),
        ("apps", "ReplicaSet") => {
            if let Some(spec) = obj_at(obj, "spec") {
                set(spec, "replicas", json!(1));
                template_of(spec);
            }
        }
        ("apps", "StatefulSet") => stateful_set(obj),
        ("apps", "DaemonSet") => daemon_set(obj),
        ("batch", "Job") => job(obj),
        ("batch", "CronJob") => cron_job(obj),
        ("networking.k8s.io", "NetworkPolicy") => network_policy(obj),
        ("autoscaling", "HorizontalPodAutoscaler") => hpa(obj),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => binding(obj),
        ("storage.k8s.io", "StorageClass") => {
            if let Some(o) = obj.as_object_mut() {
                set_str(o, "reclaimPolicy", "Delete");
                set_str(o, "volumeBindingMode", "Immediate");
            }
        }
        ("scheduling.k8s.io", "PriorityClass") => {
            if let Some(o) = obj.as_object_mut() {
                set_str(o, "preemptionPolicy", "PreemptLowerPriority");
            }
        }
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => webhooks(obj, kind == "MutatingWebhookConfiguration"),
        ("apiregistration.k8s.io", "APIService") => {
            if let Some(svc) = obj
                .pointer_mut("/spec/service")
                .and_then(Value::as_object_mut)
            {
                set(svc, "port", json!(443));
            }
        }
        _ => {}
    }
}

/// The objects of the array at `key`.
fn array<'a>(v: &'a mut Value, key: &str) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    each(v.get_mut(key))
}

/// `protocol: TCP` on every port of the array at `key`.
fn protocols(m: &mut Map<String, Value>, key: &str) {
    for p in each(m.get_mut(key)) {
        set_str(p, "protocol", "TCP");
    }
}

fn template_of(spec: &mut Map<String, Value>) {
    if let Some(t) = spec.get_mut("template") {
        pod::template(t);
    }
}

fn namespace(obj: &mut Value) {
    let Some(name) = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
    else {
        return;
    };
    if let Some(meta) = obj_at(obj, "metadata")
        && let Some(labels) = obj_entry(meta, "labels")
    {
        labels.insert("kubernetes.io/metadata.name".into(), json!(name));
    }
}

fn replication_controller(obj: &mut Value) {
    let labels = obj.pointer("/spec/template/metadata/labels").cloned();
    if let Some(spec) = obj_at(obj, "spec") {
        set(spec, "replicas", json!(1));
        template_of(spec);
        if let Some(l) = &labels
            && spec
                .get("selector")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
        {
            spec.insert("selector".into(), l.clone());
        }
    }
    labels_from_template(obj, labels);
}

/// An object without labels takes its pod template's (ReplicationController, Job).
fn labels_from_template(obj: &mut Value, labels: Option<Value>) {
    if let (Some(l), Some(meta)) = (labels, obj_at(obj, "metadata"))
        && meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
    {
        meta.insert("labels".into(), l);
    }
}

fn service(obj: &mut Value) {
    let Some(spec) = obj_at(obj, "spec") else {
        return;
    };
    set_str(spec, "sessionAffinity", "None");
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.remove("sessionAffinityConfig");
        }
        Some("ClientIP") => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.pointer("/clientIP/timeoutSeconds"))
                .is_some_and(|v| !v.is_null());
            if !has_timeout {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    set_str(spec, "type", "ClusterIP");
    for p in each(spec.get_mut("ports")) {
        set_str(p, "protocol", "TCP");
        let target_unset = match p.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(v) => v.as_i64() == Some(0),
        };
        if target_unset && let Some(port) = p.get("port").cloned() {
            p.insert("targetPort".into(), port);
        }
    }
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer") {
        set_str(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        set_str(spec, "internalTrafficPolicy", "Cluster");
    }
    if ty == "LoadBalancer" {
        set(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

fn deployment(obj: &mut Value) {
    let Some(spec) = obj_at(obj, "spec") else {
        return;
    };
    set(spec, "replicas", json!(1));
    if let Some(strategy) = obj_entry(spec, "strategy") {
        set_str(strategy, "type", "RollingUpdate");
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(ru) = obj_entry(strategy, "rollingUpdate")
        {
            set(ru, "maxUnavailable", json!("25%"));
            set(ru, "maxSurge", json!("25%"));
        }
    }
    set(spec, "revisionHistoryLimit", json!(10));
    set(spec, "progressDeadlineSeconds", json!(600));
    template_of(spec);
}

fn stateful_set(obj: &mut Value) {
    let Some(spec) = obj_at(obj, "spec") else {
        return;
    };
    set_str(spec, "podManagementPolicy", "OrderedReady");
    if let Some(strategy) = obj_entry(spec, "updateStrategy") {
        if strategy
            .get("type")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            strategy.insert("type".into(), json!("RollingUpdate"));
            set(strategy, "rollingUpdate", json!({}));
        }
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(ru) = strategy
                .get_mut("rollingUpdate")
                .and_then(Value::as_object_mut)
        {
            set(ru, "partition", json!(0));
        }
    }
    if let Some(policy) = obj_entry(spec, "persistentVolumeClaimRetentionPolicy") {
        set_str(policy, "whenDeleted", "Retain");
        set_str(policy, "whenScaled", "Retain");
    }
    set(spec, "replicas", json!(1));
    set(spec, "revisionHistoryLimit", json!(10));
    template_of(spec);
    for claim in each(spec.get_mut("volumeClaimTemplates")) {
        // The claim templates are whole PersistentVolumeClaims to kube, typed as such.
        set_str(claim, "apiVersion", "v1");
        set_str(claim, "kind", "PersistentVolumeClaim");
        if let Some(s) = claim.get_mut("spec").and_then(Value::as_object_mut) {
            set_str(s, "volumeMode", "Filesystem");
        }
        if let Some(status) = obj_entry(claim, "status") {
            set_str(status, "phase", "Pending");
        }
    }
}

fn daemon_set(obj: &mut Value) {
    let Some(spec) = obj_at(obj, "spec") else {
        return;
    };
    if let Some(strategy) = obj_entry(spec, "updateStrategy") {
        set_str(strategy, "type", "RollingUpdate");
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(ru) = obj_entry(strategy, "rollingUpdate")
        {
            set(ru, "maxUnavailable", json!(1));
            set(ru, "maxSurge", json!(0));
        }
    }
    set(spec, "revisionHistoryLimit", json!(10));
    template_of(spec);
}

fn job(obj: &mut Value) {
    let labels = obj.pointer("/spec/template/metadata/labels").cloned();
    if let Some(spec) = obj_at(obj, "spec") {
        let unset = |s: &Map<String, Value>, k: &str| s.get(k).is_none_or(Value::is_null);
        if unset(spec, "completions") && unset(spec, "parallelism") {
            spec.insert("completions".into(), json!(1));
        }
        set(spec, "parallelism", json!(1));
        set(spec, "backoffLimit", json!(6));
        set(spec, "completionMode", json!("NonIndexed"));
        set(spec, "suspend", json!(false));
        set(spec, "manualSelector", json!(false));
        if unset(spec, "podFailurePolicy") {
            set(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
        }
        template_of(spec);
    }
    labels_from_template(obj, labels);
}

/// A Job's selector and pod labels, generated from its uid unless `manualSelector` is set.
pub(super) fn job_selector(obj: &mut Value) {
    if obj.pointer("/spec/manualSelector") == Some(&json!(true)) {
        return;
    }
    let (Some(uid), Some(name)) = (
        obj.pointer("/metadata/uid")
            .and_then(Value::as_str)
            .map(str::to_string),
        obj.pointer("/metadata/name")
            .and_then(Value::as_str)
            .map(str::to_string),
    ) else {
        return;
    };
    let Some(spec) = obj_at(obj, "spec") else {
        return;
    };
    spec.insert(
        "selector".into(),
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
    );
    if let Some(labels) = obj_entry(spec, "template")
        .and_then(|t| obj_entry(t, "metadata"))
        .and_then(|m| obj_entry(m, "labels"))
    {
        for (k, v) in [
            ("batch.kubernetes.io/controller-uid", &uid),
            ("batch.kubernetes.io/job-name", &name),
            ("controller-uid", &uid),
            ("job-name", &name),
        ] {
            labels.insert(k.into(), json!(v));
        }
    }
}

fn cron_job(obj: &mut Value) {
    let Some(spec) = obj_at(obj, "spec") else {
        return;
    };
    set_str(spec, "concurrencyPolicy", "Allow");
    set(spec, "suspend", json!(false));
    set(spec, "successfulJobsHistoryLimit", json!(3));
    set(spec, "failedJobsHistoryLimit", json!(1));
    // The job template's metadata is a struct kube always writes, empty or not.
    if let Some(template) = obj_entry(spec, "jobTemplate") {
        obj_entry(template, "metadata");
    }
    if let Some(job_spec) = spec
        .get_mut("jobTemplate")
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        template_of(job_spec);
    }
}

fn network_policy(obj: &mut Value) {
    let Some(spec) = obj_at(obj, "spec") else {
        return;
    };
    for dir in ["ingress", "egress"] {
        for rule in each(spec.get_mut(dir)) {
            protocols(rule, "ports");
        }
    }
    let has_types = spec
        .get("policyTypes")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if !has_types {
        let mut types = vec![json!("Ingress")];
        if spec
            .get("egress")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
        {
            types.push(json!("Egress"));
        }
        spec.insert("policyTypes".into(), Value::Array(types));
    }
}

fn hpa(obj: &mut Value) {
    let v2 = obj.get("apiVersion").and_then(Value::as_str) != Some("autoscaling/v1");
    let Some(spec) = obj_at(obj, "spec") else {
        return;
    };
    set(spec, "minReplicas", json!(1));
    if !v2 {
        return;
    }
    let no_metrics = spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_metrics {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    if let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
        let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        let down = json!({"selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        for (key, defaults) in [("scaleUp", up), ("scaleDown", down)] {
            if let Some(rules) = obj_entry(behavior, key)
                && let Value::Object(d) = defaults
            {
                for (k, v) in d {
                    set(rules, &k, v);
                }
            }
        }
    }
}

fn binding(obj: &mut Value) {
    if let Some(role_ref) = obj_at(obj, "roleRef") {
        set_str(role_ref, "apiGroup", "rbac.authorization.k8s.io");
    }
    for subject in array(obj, "subjects") {
        if matches!(
            subject.get("kind").and_then(Value::as_str),
            Some("User" | "Group")
        ) {
            set_str(subject, "apiGroup", "rbac.authorization.k8s.io");
        }
    }
}

fn webhooks(obj: &mut Value, mutating: bool) {
    for hook in array(obj, "webhooks") {
        set_str(hook, "failurePolicy", "Fail");
        set_str(hook, "matchPolicy", "Equivalent");
        set(hook, "namespaceSelector", json!({}));
        set(hook, "objectSelector", json!({}));
        set(hook, "timeoutSeconds", json!(10));
        if mutating {
            set_str(hook, "reinvocationPolicy", "Never");
        }
        for rule in each(hook.get_mut("rules")) {
            set_str(rule, "scope", "*");
        }
        if let Some(svc) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            set(svc, "port", json!(443));
        }
    }
}
