//! Defaults of pod specs and what they hold (containers, probes, volumes), as kube-apiserver's
//! `SetDefaults_PodSpec`, `SetDefaults_Container`, `SetDefaults_Probe`, the volume sources' and
//! the declarative `+default` markers set them. Pod templates get these; Pods get more
//! ([`pod`]).

use super::{each, obj_at, set, set_str};
use serde_json::{Map, Value, json};

/// Defaults of a `PodTemplateSpec` (the `template` of a workload).
pub fn template(template: &mut Value) {
    if let Some(spec) = obj_at(template, "spec") {
        pod_spec(spec);
    }
}

/// Defaults of a `PodSpec`.
pub fn pod_spec(spec: &mut Map<String, Value>) {
    set_str(spec, "dnsPolicy", "ClusterFirst");
    set_str(spec, "restartPolicy", "Always");
    set(spec, "securityContext", json!({}));
    set(spec, "terminationGracePeriodSeconds", json!(30));
    set_str(spec, "schedulerName", "default-scheduler");
    let host_network = spec.get("hostNetwork") == Some(&json!(true));
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for c in items(spec, list) {
            container(c, host_network);
        }
    }
    for v in items(spec, "volumes") {
        volume(v);
    }
}

/// Defaults only a Pod gets (not a template): requests from limits, service links, and what
/// the ServiceAccount and Priority admission plugins add.
pub fn pod(obj: &mut Value) {
    let Some(spec) = obj_at(obj, "spec") else {
        return;
    };
    pod_spec(spec);
    for list in ["initContainers", "containers"] {
        for c in items(spec, list) {
            requests_from_limits(c);
        }
    }
    set(spec, "enableServiceLinks", json!(true));
    set_str(spec, "serviceAccountName", "default");
    if let Some(sa) = spec.get("serviceAccountName").cloned() {
        spec.insert("serviceAccount".into(), sa);
    }
    set_str(spec, "preemptionPolicy", "PreemptLowerPriority");
    set(spec, "priority", json!(0));
    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    if let Some(list) = tolerations.as_array_mut() {
        for key in [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
        ] {
            if !list.iter().any(|t| t["key"] == key) {
                list.push(
                    json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                    "tolerationSeconds": 300}),
                );
            }
        }
    }
}

fn items<'a>(
    spec: &'a mut Map<String, Value>,
    list: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    each(spec.get_mut(list))
}

fn container(c: &mut Map<String, Value>, host_network: bool) {
    let image = c.get("image").and_then(Value::as_str).unwrap_or("");
    let policy = if image_tag(image) == "latest" {
        "Always"
    } else {
        "IfNotPresent"
    };
    set_str(c, "imagePullPolicy", policy);
    set_str(c, "terminationMessagePath", "/dev/termination-log");
    set_str(c, "terminationMessagePolicy", "File");
    set(c, "resources", json!({}));
    for p in items(c, "ports") {
        set_str(p, "protocol", "TCP");
        if host_network
            && p.get("hostPort").and_then(Value::as_i64).unwrap_or(0) == 0
            && let Some(port) = p.get("containerPort").cloned()
        {
            p.insert("hostPort".into(), port);
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) {
            set_nonzero(p, "timeoutSeconds", 1);
            set_nonzero(p, "periodSeconds", 10);
            set_nonzero(p, "successThreshold", 1);
            set_nonzero(p, "failureThreshold", 3);
            handler(p);
        }
    }
    if let Some(lifecycle) = c.get_mut("lifecycle").and_then(Value::as_object_mut) {
        for hook in ["postStart", "preStop"] {
            if let Some(h) = lifecycle.get_mut(hook).and_then(Value::as_object_mut) {
                handler(h);
            }
        }
    }
    for env in items(c, "env") {
        if let Some(field) = env
            .get_mut("valueFrom")
            .and_then(|v| v.get_mut("fieldRef"))
            .and_then(Value::as_object_mut)
        {
            set_str(field, "apiVersion", "v1");
        }
    }
}

/// A probe's or lifecycle hook's HTTP action.
fn handler(h: &mut Map<String, Value>) {
    if let Some(get) = h.get_mut("httpGet").and_then(Value::as_object_mut) {
        set_str(get, "path", "/");
        set_str(get, "scheme", "HTTP");
    }
}

fn set_nonzero(m: &mut Map<String, Value>, key: &str, value: i64) {
    if m.get(key).and_then(Value::as_i64).unwrap_or(0) == 0 {
        m.insert(key.into(), json!(value));
    }
}

/// The tag of an image reference as `ParseImageName` finds it: `latest` when none is given
/// (and no digest), `""` for a digest without a tag.
pub fn image_tag(image: &str) -> &str {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag,
        None if digest.is_some() => "",
        None => "latest",
    }
}

const VOLUME_SOURCES_WITH_MODE: [&str; 4] = ["secret", "configMap", "downwardAPI", "projected"];

fn volume(v: &mut Map<String, Value>) {
    let has_source = v.keys().any(|k| k != "name");
    if !has_source {
        v.insert("emptyDir".into(), json!({}));
    }
    for source in VOLUME_SOURCES_WITH_MODE {
        if let Some(s) = v.get_mut(source).and_then(Value::as_object_mut) {
            set(s, "defaultMode", json!(420));
        }
    }
    if let Some(s) = v.get_mut("hostPath").and_then(Value::as_object_mut) {
        set(s, "type", json!(""));
    }
    for item in v
        .get_mut("downwardAPI")
        .and_then(|d| d.get_mut("items"))
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(field) = item.get_mut("fieldRef").and_then(Value::as_object_mut) {
            set_str(field, "apiVersion", "v1");
        }
    }
    for source in v
        .get_mut("projected")
        .and_then(|p| p.get_mut("sources"))
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(token) = source
            .get_mut("serviceAccountToken")
            .and_then(Value::as_object_mut)
        {
            set(token, "expirationSeconds", json!(3600));
        }
    }
    if let Some(template) = v
        .get_mut("ephemeral")
        .and_then(|e| e.get_mut("volumeClaimTemplate"))
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        set_str(template, "volumeMode", "Filesystem");
    }
}

fn requests_from_limits(c: &mut Map<String, Value>) {
    let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(limits) = res.get("limits").and_then(Value::as_object).cloned() else {
        return;
    };
    let requests = res.entry("requests").or_insert_with(|| json!({}));
    if let Some(r) = requests.as_object_mut() {
        for (k, v) in limits {
            r.entry(k).or_insert(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags_as_parse_image_name_reads_them() {
        assert_eq!(image_tag("nginx"), "latest");
        assert_eq!(image_tag("nginx:1.27"), "1.27");
        assert_eq!(image_tag("registry:5000/team/app"), "latest");
        assert_eq!(image_tag("registry:5000/team/app:v2"), "v2");
        assert_eq!(image_tag("nginx@sha256:abc"), "");
        assert_eq!(image_tag("nginx:latest@sha256:abc"), "latest");
    }
}
