//! The endpoints controllers: each Service with a selector gets an `Endpoints` object and an
//! `EndpointSlice` listing the Pods it selects (ready ones as addresses, the others as not
//! ready), with the Service's ports resolved against the Pods' container ports.
//!
//! Pods' changes are handled per namespace: one pass reads the namespace's Pods once for all
//! its Services (a namespace of N Services selecting N Pods costs N², not N³), and an object
//! whose content is what the pass wrote last time is not read back, compared or rewritten.

use crate::objects::{self, Preconditions, Propagation, meta_str, now};
use crate::server::ServerState;
use crate::store::{Change, Key, StoreError};
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

/// What the controllers last wrote (or found in place) at each Endpoints and EndpointSlice:
/// the hash of the content they computed and the stored encoding that held it.
#[derive(Default)]
pub struct Written(Mutex<HashMap<Key, (u64, Bytes)>>);

impl Written {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (u64, Bytes)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn content_hash(obj: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    serde_json::to_vec(obj).unwrap_or_default().hash(&mut h);
    h.finish()
}

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

/// Writes `obj` at `key` when it differs from what is stored (keeping uid and creation time);
/// nothing at all when the stored object is the one written for the same content last time.
fn put(
    state: &ServerState,
    written: &Written,
    key: &Key,
    mut obj: Value,
) -> Result<(), StoreError> {
    let hash = content_hash(&obj);
    let stored = state.store.get_json(key);
    if let (Some(stored), Some((h, last))) = (&stored, written.lock().get(key))
        && *h == hash
        && stored == last
    {
        return Ok(());
    }
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
    match state.store.get_json(key) {
        Some(now) => written.lock().insert(key.clone(), (hash, now)),
        None => written.lock().remove(key),
    };
    Ok(())
}

/// Brings the Endpoints and EndpointSlices of every Service of namespace `ns` up to date,
/// reading its Pods once; a Service that cannot be brought up to date is logged.
pub fn sync_namespace(state: &ServerState, written: &Written, ns: &str) {
    let (services, _) = state.store.list("/services", Some(ns), None);
    if services.is_empty() {
        return;
    }
    let pods = live_pods(state, ns);
    for (key, svc) in services {
        if let Err(e) = sync_with(state, written, &key, Some(svc), &pods) {
            tracing::warn!(error = %e, service = %key.name, namespace = %ns, "endpoints");
        }
    }
}

/// The Pods of `ns` that endpoints can list: not being deleted, with an address.
fn live_pods(state: &ServerState, ns: &str) -> Vec<Arc<Value>> {
    let (pods, _) = state.store.list("/pods", Some(ns), None);
    pods.into_iter()
        .map(|(_, p)| p)
        .filter(|p| meta_str(p, "deletionTimestamp").is_none())
        .filter(|p| p.pointer("/status/podIP").and_then(Value::as_str).is_some())
        .collect()
}

/// Brings the Endpoints and EndpointSlice of the Service at `key` up to date; removes them
/// when the Service is gone or selects nothing.
pub fn sync(state: &ServerState, written: &Written, key: &Key) -> Result<(), StoreError> {
    let svc = state.store.get(key);
    let needs_pods = svc
        .as_ref()
        .is_some_and(|s| s.pointer("/spec/selector").is_some());
    let pods = if needs_pods {
        live_pods(state, &key.namespace)
    } else {
        Vec::new()
    };
    sync_with(state, written, key, svc, &pods)
}

/// [`sync`] with the Service as read and its namespace's [live Pods](live_pods).
fn sync_with(
    state: &ServerState,
    written: &Written,
    key: &Key,
    svc: Option<Arc<Value>>,
    pods: &[Arc<Value>],
) -> Result<(), StoreError> {
    let ns = &key.namespace;
    let ep_key = Key::new("/endpoints", ns, &key.name);
    let slice_key = Key::new(
        "discovery.k8s.io/endpointslices",
        ns,
        &format!("{}-tdg", key.name),
    );
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
            written.lock().remove(k);
            if state.store.get_json(k).is_some() {
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
    let pods: Vec<&Value> = pods
        .iter()
        .map(|p| &**p)
        .filter(|p| selects(&selector, p))
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
    put(state, written, &ep_key, endpoints)?;
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
    put(state, written, &slice_key, slice)
}
