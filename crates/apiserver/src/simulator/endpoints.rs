//! The endpoints controllers: each Service with a selector gets an `Endpoints` object and an
//! `EndpointSlice` listing the Pods it selects (ready ones as addresses, the others as not
//! ready), with the Service's ports resolved against the Pods' container ports.

use crate::objects::{self, Preconditions, Propagation, meta_str, now};
use crate::server::ServerState;
use crate::store::{Change, Key, StoreError};
use serde_json::{Value, json};

fn selects(selector: &serde_json::Map<String, Value>, pod: &Value) -> bool {
    let labels = pod.pointer("/metadata/labels");
    selector
        .iter()
        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
}

fn ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// The port a Service port reaches on `pod` (a named target port looked up in its containers).
fn target_port(port: &Value, pod: &Value) -> Option<i64> {
    match port.get("targetPort") {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(name)) => pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)?
            .iter()
            .flat_map(|c| {
                c.get("ports")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .find(|p| p.get("name").and_then(Value::as_str) == Some(name.as_str()))
            .and_then(|p| p.get("containerPort").and_then(Value::as_i64)),
        _ => port.get("port").and_then(Value::as_i64),
    }
}

/// Writes `obj` at `key` when it differs from what is stored (keeping uid and creation time).
fn put(state: &ServerState, key: &Key, mut obj: Value) -> Result<(), StoreError> {
    state.store.mutate::<StoreError>(key, |cur| {
        let mut compare = obj.clone();
        match cur {
            Some(cur) => {
                for f in ["uid", "creationTimestamp", "resourceVersion"] {
                    if let Some(v) = cur.pointer(&format!("/metadata/{f}")) {
                        compare["metadata"][f] = v.clone();
                    }
                }
                if compare == **cur {
                    return Ok(Change::Keep);
                }
                obj = compare;
            }
            None => {
                obj["metadata"]["uid"] = json!(uuid::Uuid::new_v4().to_string());
                obj["metadata"]["creationTimestamp"] = json!(now());
            }
        }
        Ok(Change::Put(obj.clone()))
    })?;
    Ok(())
}

/// Brings the Endpoints and EndpointSlice of the Service at `key` up to date; removes them
/// when the Service is gone or selects nothing.
pub fn sync(state: &ServerState, key: &Key) -> Result<(), StoreError> {
    let ns = &key.namespace;
    let ep_key = Key::new("/endpoints", ns, &key.name);
    let slice_key = Key::new(
        "discovery.k8s.io/endpointslices",
        ns,
        &format!("{}-tdg", key.name),
    );
    let svc = state.store.get(key);
    let selector = svc
        .as_ref()
        .filter(|s| meta_str(s, "deletionTimestamp").is_none())
        .and_then(|s| {
            s.pointer("/spec/selector")
                .and_then(Value::as_object)
                .cloned()
        })
        .filter(|sel| !sel.is_empty());
    let (Some(svc), Some(selector)) = (svc, selector) else {
        for k in [&ep_key, &slice_key] {
            if state.store.get(k).is_some() {
                let _ = objects::delete(
                    &state.store,
                    k,
                    Propagation::Background,
                    &Preconditions::default(),
                    false,
                );
            }
        }
        return Ok(());
    };
    let (pods, _) = state.store.list("/pods", Some(ns), None);
    let pods: Vec<_> = pods
        .into_iter()
        .map(|(_, p)| p)
        .filter(|p| selects(&selector, p) && meta_str(p, "deletionTimestamp").is_none())
        .filter(|p| p.pointer("/status/podIP").and_then(Value::as_str).is_some())
        .collect();
    let service_ports: Vec<Value> = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let address = |p: &Value| {
        json!({"ip": p.pointer("/status/podIP").cloned().unwrap_or(Value::Null),
            "nodeName": p.pointer("/spec/nodeName").cloned().unwrap_or(Value::Null),
            "targetRef": {"kind": "Pod", "name": meta_str(p, "name").unwrap_or(""),
                "namespace": ns, "uid": meta_str(p, "uid").unwrap_or("")}})
    };
    let ports: Vec<Value> = service_ports
        .iter()
        .filter_map(|sp| {
            let port = pods.iter().find_map(|p| target_port(sp, p))?;
            let mut out = json!({"port": port, "protocol": sp.get("protocol").cloned().unwrap_or(json!("TCP"))});
            if let Some(name) = sp.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
                out["name"] = json!(name);
            }
            Some(out)
        })
        .collect();
    // EndpointSlice ports always carry a name (`""` for an unnamed Service port): kubectl's
    // `describe service` reads it without checking.
    let slice_ports: Vec<Value> = ports
        .iter()
        .map(|p| {
            let mut p = p.clone();
            if p.get("name").is_none() {
                p["name"] = json!("");
            }
            p
        })
        .collect();
    let (up, down): (Vec<&_>, Vec<&_>) = pods.iter().partition(|p| ready(p));
    let mut subset = serde_json::Map::new();
    if !up.is_empty() {
        subset.insert("addresses".into(), up.iter().map(|p| address(p)).collect());
    }
    if !down.is_empty() {
        subset.insert(
            "notReadyAddresses".into(),
            down.iter().map(|p| address(p)).collect(),
        );
    }
    let mut endpoints = json!({"kind": "Endpoints", "apiVersion": "v1",
        "metadata": {"name": key.name, "namespace": ns}});
    if let Some(labels) = svc.pointer("/metadata/labels") {
        endpoints["metadata"]["labels"] = labels.clone();
    }
    if !subset.is_empty() && !ports.is_empty() {
        subset.insert("ports".into(), Value::Array(ports.clone()));
        endpoints["subsets"] = json!([subset]);
    }
    put(state, &ep_key, endpoints)?;
    let slice_endpoints: Vec<Value> = pods
        .iter()
        .map(|p| {
            let r = ready(p);
            json!({"addresses": [p.pointer("/status/podIP").cloned().unwrap_or(Value::Null)],
                "conditions": {"ready": r, "serving": r, "terminating": false},
                "nodeName": p.pointer("/spec/nodeName").cloned().unwrap_or(Value::Null),
                "targetRef": {"kind": "Pod", "name": meta_str(p, "name").unwrap_or(""),
                    "namespace": ns, "uid": meta_str(p, "uid").unwrap_or("")}})
        })
        .collect();
    let slice = json!({"kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1",
        "metadata": {"name": slice_key.name, "namespace": ns, "generateName": format!("{}-", key.name),
            "labels": {"kubernetes.io/service-name": key.name,
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": key.name,
                "uid": meta_str(&svc, "uid").unwrap_or(""), "controller": true, "blockOwnerDeletion": true}]},
        "addressType": "IPv4", "endpoints": slice_endpoints, "ports": slice_ports});
    put(state, &slice_key, slice)
}
