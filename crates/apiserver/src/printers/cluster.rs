//! Columns of the cluster-level and configuration kinds: Nodes, Namespaces, Events, Secrets,
//! ConfigMaps, storage, RBAC, autoscaling, policy and the rest.

use super::{AGE, Column, NAME, col, i, items, or, s, since, wide};
use serde_json::{Value, json};

pub(super) fn columns(group: &str, kind: &str) -> Option<Vec<Column>> {
    Some(match (group, kind) {
        ("", "Node") => vec![
            NAME,
            col("Status", "string", |o| json!(node_status(o))),
            col("Roles", "string", |o| json!(node_roles(o))),
            AGE,
            col("Version", "string", |o| {
                json!(s(o, "/status/nodeInfo/kubeletVersion"))
            }),
            wide("Internal-IP", |o| json!(node_address(o, "InternalIP"))),
            wide("External-IP", |o| json!(node_address(o, "ExternalIP"))),
            wide("OS-Image", |o| {
                json!(or(o, "/status/nodeInfo/osImage", "<unknown>"))
            }),
            wide("Kernel-Version", |o| {
                json!(or(o, "/status/nodeInfo/kernelVersion", "<unknown>"))
            }),
            wide("Container-Runtime", |o| {
                json!(or(
                    o,
                    "/status/nodeInfo/containerRuntimeVersion",
                    "<unknown>"
                ))
            }),
        ],
        ("", "Namespace") => vec![
            NAME,
            col("Status", "string", |o| json!(s(o, "/status/phase"))),
            AGE,
        ],
        ("", "Event") | ("events.k8s.io", "Event") => vec![
            col("Last Seen", "string", |o| json!(event_times(o).1)),
            col("Type", "string", |o| json!(s(o, "/type"))),
            col("Reason", "string", |o| json!(s(o, "/reason"))),
            col("Object", "string", |o| {
                let (kind, name) = event_object(o);
                json!(if name.is_empty() {
                    kind.to_lowercase()
                } else {
                    format!("{}/{name}", kind.to_lowercase())
                })
            }),
            wide("Subobject", |o| json!(s(o, "/involvedObject/fieldPath"))),
            wide("Source", |o| {
                let comp = or(o, "/source/component", s(o, "/reportingController"));
                let comp = or(o, "/source/component", or(o, "/reportingComponent", comp));
                let host = or(o, "/source/host", s(o, "/reportingInstance"));
                json!(if host.is_empty() {
                    comp.to_string()
                } else {
                    format!("{comp}, {host}")
                })
            }),
            col("Message", "string", |o| {
                json!(or(o, "/message", s(o, "/note")).trim())
            }),
            wide("First Seen", |o| json!(event_times(o).0)),
            wide("Count", |o| {
                let count = o
                    .pointer("/series/count")
                    .or_else(|| o.pointer("/count"))
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                json!(if count == 0 { 1 } else { count })
            }),
            super::Column {
                priority: 1,
                ..NAME
            },
        ],
        ("", "Secret") => vec![
            NAME,
            col("Type", "string", |o| json!(s(o, "/type"))),
            col("Data", "string", |o| json!(len(o, "/data"))),
            AGE,
        ],
        ("", "ConfigMap") => vec![
            NAME,
            col("Data", "string", |o| {
                json!(len(o, "/data") + len(o, "/binaryData"))
            }),
            AGE,
        ],
        ("", "ServiceAccount") => vec![
            NAME,
            col("Secrets", "string", |o| json!(items(o, "/secrets").len())),
            AGE,
        ],
        ("", "PersistentVolume") => vec![
            NAME,
            col("Capacity", "string", |o| {
                json!(or(o, "/spec/capacity/storage", "0"))
            }),
            col("Access Modes", "string", |o| {
                json!(access_modes(o, "/spec/accessModes"))
            }),
            col("Reclaim Policy", "string", |o| {
                json!(s(o, "/spec/persistentVolumeReclaimPolicy"))
            }),
            col("Status", "string", |o| json!(phase_or_terminating(o))),
            col("Claim", "string", |o| {
                json!(match o.pointer("/spec/claimRef") {
                    Some(c) if c.is_object() => format!("{}/{}", s(c, "/namespace"), s(c, "/name")),
                    _ => String::new(),
                })
            }),
            col("StorageClass", "string", |o| json!(storage_class(o))),
            col("VolumeAttributesClass", "string", |o| {
                json!(or(o, "/spec/volumeAttributesClassName", "<unset>"))
            }),
            col("Reason", "string", |o| json!(s(o, "/status/reason"))),
            AGE,
            wide("VolumeMode", |o| {
                json!(or(o, "/spec/volumeMode", "<unset>"))
            }),
        ],
        ("", "PersistentVolumeClaim") => vec![
            NAME,
            col("Status", "string", |o| json!(phase_or_terminating(o))),
            col("Volume", "string", |o| json!(s(o, "/spec/volumeName"))),
            col("Capacity", "string", |o| {
                json!(if s(o, "/spec/volumeName").is_empty() {
                    ""
                } else {
                    or(o, "/status/capacity/storage", "0")
                })
            }),
            col("Access Modes", "string", |o| {
                json!(if s(o, "/spec/volumeName").is_empty() {
                    String::new()
                } else {
                    access_modes(o, "/status/accessModes")
                })
            }),
            col("StorageClass", "string", |o| json!(storage_class(o))),
            col("VolumeAttributesClass", "string", |o| {
                json!(or(o, "/spec/volumeAttributesClassName", "<unset>"))
            }),
            AGE,
            wide("VolumeMode", |o| {
                json!(or(o, "/spec/volumeMode", "<unset>"))
            }),
        ],
        ("storage.k8s.io", "StorageClass") => vec![
            super::Column {
                cell: |o| {
                    let default = [
                        "storageclass.kubernetes.io/is-default-class",
                        "storageclass.beta.kubernetes.io/is-default-class",
                    ]
                    .iter()
                    .any(|a| {
                        o.pointer("/metadata/annotations").and_then(|m| m.get(*a))
                            == Some(&json!("true"))
                    });
                    let name = s(o, "/metadata/name");
                    json!(if default {
                        format!("{name} (default)")
                    } else {
                        name.to_string()
                    })
                },
                ..NAME
            },
            col("Provisioner", "string", |o| json!(s(o, "/provisioner"))),
            col("ReclaimPolicy", "string", |o| {
                json!(or(o, "/reclaimPolicy", "Delete"))
            }),
            col("VolumeBindingMode", "string", |o| {
                json!(or(o, "/volumeBindingMode", "Immediate"))
            }),
            col("AllowVolumeExpansion", "string", |o| {
                json!(
                    o.get("allowVolumeExpansion")
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
                )
            }),
            AGE,
        ],
        ("coordination.k8s.io", "Lease") => vec![
            NAME,
            col("Holder", "string", |o| json!(s(o, "/spec/holderIdentity"))),
            AGE,
        ],
        ("", "ResourceQuota") => vec![
            NAME,
            col("Request", "string", |o| json!(quota(o, false))),
            col("Limit", "string", |o| json!(quota(o, true))),
            AGE,
        ],
        ("", "LimitRange") | ("rbac.authorization.k8s.io", "Role" | "ClusterRole") => vec![
            NAME,
            col("Created At", "date", |o| {
                json!(s(o, "/metadata/creationTimestamp"))
            }),
        ],
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => vec![
            NAME,
            col("Role", "string", |o| {
                json!(format!(
                    "{}/{}",
                    s(o, "/roleRef/kind"),
                    s(o, "/roleRef/name")
                ))
            }),
            AGE,
            wide("Users", |o| json!(subjects(o, "User"))),
            wide("Groups", |o| json!(subjects(o, "Group"))),
            wide("ServiceAccounts", |o| json!(subjects(o, "ServiceAccount"))),
        ],
        ("autoscaling", "HorizontalPodAutoscaler") => vec![
            NAME,
            col("Reference", "string", |o| {
                json!(format!(
                    "{}/{}",
                    s(o, "/spec/scaleTargetRef/kind"),
                    s(o, "/spec/scaleTargetRef/name")
                ))
            }),
            col("Targets", "string", |o| json!(hpa_targets(o))),
            col("MinPods", "string", |o| {
                json!(
                    o.pointer("/spec/minReplicas")
                        .and_then(Value::as_i64)
                        .map_or("<unset>".to_string(), |n| n.to_string())
                )
            }),
            col("MaxPods", "string", |o| json!(i(o, "/spec/maxReplicas"))),
            col("Replicas", "string", |o| {
                json!(i(o, "/status/currentReplicas"))
            }),
            AGE,
        ],
        ("policy", "PodDisruptionBudget") => vec![
            NAME,
            col("Min Available", "string", |o| {
                json!(int_or_string(o, "/spec/minAvailable"))
            }),
            col("Max Unavailable", "string", |o| {
                json!(int_or_string(o, "/spec/maxUnavailable"))
            }),
            col("Allowed Disruptions", "integer", |o| {
                json!(i(o, "/status/disruptionsAllowed"))
            }),
            AGE,
        ],
        ("certificates.k8s.io", "CertificateSigningRequest") => vec![
            NAME,
            AGE,
            col("SignerName", "string", |o| {
                json!(or(o, "/spec/signerName", "<none>"))
            }),
            col("Requestor", "string", |o| json!(s(o, "/spec/username"))),
            col("RequestedDuration", "string", |o| {
                json!(
                    o.pointer("/spec/expirationSeconds")
                        .and_then(Value::as_i64)
                        .map_or("<none>".to_string(), crate::table::human_duration)
                )
            }),
            col("Condition", "string", |o| json!(csr_condition(o))),
        ],
        ("scheduling.k8s.io", "PriorityClass") => vec![
            NAME,
            col("Value", "integer", |o| json!(i(o, "/value"))),
            col("Global-Default", "boolean", |o| {
                json!(
                    o.get("globalDefault")
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
                )
            }),
            AGE,
            col("PreemptionPolicy", "string", |o| {
                json!(s(o, "/preemptionPolicy"))
            }),
        ],
        ("node.k8s.io", "RuntimeClass") => vec![
            NAME,
            col("Handler", "string", |o| json!(s(o, "/handler"))),
            AGE,
        ],
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => vec![
            NAME,
            col("Webhooks", "integer", |o| {
                json!(items(o, "/webhooks").len())
            }),
            AGE,
        ],
        ("apiregistration.k8s.io", "APIService") => vec![
            NAME,
            col("Service", "string", |o| {
                json!(match o.pointer("/spec/service") {
                    Some(svc) if svc.is_object() =>
                        format!("{}/{}", s(svc, "/namespace"), s(svc, "/name")),
                    _ => "Local".to_string(),
                })
            }),
            col("Available", "string", |o| {
                let c = items(o, "/status/conditions")
                    .iter()
                    .find(|c| c["type"] == "Available");
                json!(match c {
                    None => "Unknown".to_string(),
                    Some(c) if c["status"] == "True" => "True".to_string(),
                    Some(c) if !s(c, "/reason").is_empty() => {
                        format!("{} ({})", s(c, "/status"), s(c, "/reason"))
                    }
                    Some(c) => s(c, "/status").to_string(),
                })
            }),
            AGE,
        ],
        _ => return None,
    })
}

fn len(o: &Value, pointer: &str) -> usize {
    o.pointer(pointer)
        .and_then(Value::as_object)
        .map_or(0, |m| m.len())
}

fn node_status(o: &Value) -> String {
    let ready = items(o, "/status/conditions")
        .iter()
        .rev()
        .find(|c| c["type"] == "Ready");
    let mut parts = vec![match ready {
        Some(c) if c["status"] == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if o.pointer("/spec/unschedulable") == Some(&json!(true)) {
        parts.push("SchedulingDisabled");
    }
    parts.join(",")
}

fn node_roles(o: &Value) -> String {
    let mut roles: Vec<String> = o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| {
                    if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                        (!role.is_empty()).then(|| role.to_string())
                    } else if k == "kubernetes.io/role" {
                        v.as_str().filter(|v| !v.is_empty()).map(str::to_string)
                    } else {
                        None
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    roles.dedup();
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.join(",")
    }
}

fn node_address(o: &Value, type_: &str) -> String {
    items(o, "/status/addresses")
        .iter()
        .find(|a| a["type"] == type_)
        .map_or("<none>".to_string(), |a| s(a, "/address").to_string())
}

/// (First Seen, Last Seen) of an event, core or events.k8s.io.
fn event_times(o: &Value) -> (String, String) {
    let present = |p: &str| {
        o.pointer(p)
            .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
    };
    let first = match present("/firstTimestamp").or_else(|| present("/deprecatedFirstTimestamp")) {
        Some(t) => since(Some(t)),
        None => since(present("/eventTime")),
    };
    let mut last = match present("/lastTimestamp").or_else(|| present("/deprecatedLastTimestamp")) {
        Some(t) => since(Some(t)),
        None => first.clone(),
    };
    if let Some(t) = present("/series/lastObservedTime") {
        last = since(Some(t));
    }
    (first, last)
}

fn event_object(o: &Value) -> (&str, &str) {
    let obj = o.get("involvedObject").or_else(|| o.get("regarding"));
    match obj {
        Some(r) => (s(r, "/kind"), s(r, "/name")),
        None => ("", ""),
    }
}

fn access_modes(o: &Value, pointer: &str) -> String {
    let modes: Vec<&str> = items(o, pointer).iter().filter_map(Value::as_str).collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| modes.contains(m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

fn phase_or_terminating(o: &Value) -> String {
    if o.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        "Terminating".into()
    } else {
        s(o, "/status/phase").to_string()
    }
}

fn storage_class(o: &Value) -> String {
    match o
        .pointer("/metadata/annotations")
        .and_then(|a| a.get("volume.beta.kubernetes.io/storage-class"))
        .and_then(Value::as_str)
    {
        Some(c) => c.to_string(),
        None => s(o, "/spec/storageClassName").to_string(),
    }
}

fn quota(o: &Value, limits: bool) -> String {
    let Some(hard) = o.pointer("/status/hard").and_then(Value::as_object) else {
        return String::new();
    };
    let mut names: Vec<&String> = hard.keys().collect();
    names.sort();
    names
        .into_iter()
        .filter(|n| {
            let mut parts = n.split('.');
            let is_limit = parts.next() == Some("limits") && parts.next().is_some();
            is_limit == limits
        })
        .map(|n| {
            let used = o
                .pointer("/status/used")
                .and_then(|u| u.get(n.as_str()))
                .and_then(Value::as_str)
                .unwrap_or("0");
            format!("{n}: {used}/{}", hard[n.as_str()].as_str().unwrap_or("0"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn subjects(o: &Value, kind: &str) -> String {
    items(o, "/subjects")
        .iter()
        .filter(|s| s["kind"] == kind)
        .map(|sub| {
            if kind == "ServiceAccount" {
                format!("{}/{}", s(sub, "/namespace"), s(sub, "/name"))
            } else {
                s(sub, "/name").to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn int_or_string(o: &Value, pointer: &str) -> String {
    match o.pointer(pointer) {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        _ => "N/A".into(),
    }
}

fn hpa_targets(o: &Value) -> String {
    let specs = items(o, "/spec/metrics");
    if specs.is_empty() {
        // autoscaling/v1.
        if let Some(t) = o
            .pointer("/spec/targetCPUUtilizationPercentage")
            .and_then(Value::as_i64)
        {
            let cur = o
                .pointer("/status/currentCPUUtilizationPercentage")
                .and_then(Value::as_i64)
                .map_or("<unknown>".to_string(), |c| format!("{c}%"));
            return format!("cpu: {cur}/{t}%");
        }
        return "<none>".into();
    }
    let statuses = items(o, "/status/currentMetrics");
    let shown: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(idx, spec)| {
            let ty = s(spec, "/type");
            let status = statuses.get(idx).filter(|st| st["type"] == ty);
            let field = match ty {
                "Resource" => "resource",
                "ContainerResource" => "containerResource",
                "Pods" => "pods",
                "Object" => "object",
                "External" => "external",
                _ => return "<unknown type>".to_string(),
            };
            let target = spec
                .get(field)
                .and_then(|f| f.get("target"))
                .cloned()
                .unwrap_or_default();
            let current = status
                .and_then(|st| st.get(field))
                .and_then(|f| f.get("current"))
                .cloned()
                .unwrap_or_default();
            let cur = |k: &str| {
                current
                    .get(k)
                    .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
            };
            let unknown = || "<unknown>".to_string();
            match field {
                "resource" | "containerResource" => {
                    let name = s(spec, &format!("/{field}/name"));
                    if let Some(avg) = target.get("averageValue").and_then(Value::as_str) {
                        format!(
                            "{name}: {}/{avg}",
                            cur("averageValue").unwrap_or_else(unknown)
                        )
                    } else {
                        let c = current
                            .get("averageUtilization")
                            .and_then(Value::as_i64)
                            .map_or_else(unknown, |u| format!("{u}%"));
                        let t = target
                            .get("averageUtilization")
                            .and_then(Value::as_i64)
                            .map_or("<auto>".to_string(), |u| format!("{u}%"));
                        format!("{name}: {c}/{t}")
                    }
                }
                "pods" => format!(
                    "{}/{}",
                    cur("averageValue").unwrap_or_else(unknown),
                    target
                        .get("averageValue")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                ),
                _ => match target.get("averageValue").and_then(Value::as_str) {
                    Some(avg) => format!(
                        "{}/{avg} (avg)",
                        cur("averageValue").unwrap_or_else(unknown)
                    ),
                    None => format!(
                        "{}/{}",
                        cur("value").unwrap_or_else(unknown),
                        target.get("value").and_then(Value::as_str).unwrap_or("")
                    ),
                },
            }
        })
        .collect();
    let mut out = shown.iter().take(2).cloned().collect::<Vec<_>>().join(", ");
    if shown.len() > 2 {
        out.push_str(&format!(" + {} more...", shown.len() - 2));
    }
    out
}

fn csr_condition(o: &Value) -> String {
    let conds = items(o, "/status/conditions");
    let has = |t: &str| conds.iter().any(|c| c["type"] == t);
    let mut out = if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_string();
    if has("Failed") {
        out.push_str(",Failed");
    }
    if o.pointer("/status/certificate")
        .and_then(Value::as_str)
        .is_some_and(|c| !c.is_empty())
    {
        out.push_str(",Issued");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hpa_and_node_cells() {
        let hpa = json!({"spec": {"metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]}});
        assert_eq!(hpa_targets(&hpa), "cpu: <unknown>/80%");
        let node = json!({"metadata": {"labels": {"node-role.kubernetes.io/control-plane": "",
            "kubernetes.io/role": "master"}}, "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        assert_eq!(node_roles(&node), "control-plane,master");
        assert_eq!(node_status(&node), "Ready,SchedulingDisabled");
        let q = json!({"status": {"hard": {"pods": "10", "limits.cpu": "2", "requests.cpu": "1"},
            "used": {"pods": "1"}}});
        assert_eq!(quota(&q, false), "pods: 1/10, requests.cpu: 0/1");
        assert_eq!(quota(&q, true), "limits.cpu: 0/2");
    }
}
