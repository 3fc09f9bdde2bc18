//! The server's own background work, driven by the store's event stream: namespace deletion,
//! garbage collection through ownerReferences, removal of a deleted CRD's objects,
//! ClusterRole aggregation and legacy service account token Secrets.

use crate::hooks::CRD_CLEANUP_FINALIZER;
use crate::objects::{self, Preconditions, Propagation, meta_str};
use crate::server::ServerState;
use crate::store::{Change, EventType, Key, Notice};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

const NAMESPACES: &str = "/namespaces";
pub(crate) const CRDS: &str = "apiextensions.k8s.io/customresourcedefinitions";

/// Runs until the store's channel closes.
pub async fn run(state: Arc<ServerState>) {
    let mut rx = state.store.subscribe();
    resync(&state);
    loop {
        match rx.recv().await {
            Ok(e) => handle(&state, &e),
            Err(RecvError::Lagged(_)) => resync(&state),
            Err(RecvError::Closed) => return,
        }
    }
}

fn log_err<T>(what: &str, r: Result<T, crate::error::ApiError>) {
    if let Err(e) = r
        && e.code != 404
    {
        tracing::warn!(error = %e, "{what}");
    }
}

/// Looks at everything once: after start-up (a crash may have interrupted work) and whenever
/// events were missed.
fn resync(state: &ServerState) {
    let (namespaces, _) = state.store.list(NAMESPACES, None, None);
    for (_, ns) in namespaces {
        let Some(name) = meta_str(&ns, "name") else {
            continue;
        };
        if meta_str(&ns, "deletionTimestamp").is_some() {
            namespace_cleanup(state, name, true);
        } else {
            namespace_defaults(state, name);
        }
    }
    crate::auth::aggregation::sync_all(state);
    crate::auth::legacy::populate_all(state, None);
    let (crds, _) = state.store.list(CRDS, None, None);
    for (_, crd) in crds {
        if let Some(name) = meta_str(&crd, "name") {
            state.sync_crd(name);
        }
        if meta_str(&crd, "deletionTimestamp").is_some() {
            crd_cleanup(state, &crd);
        }
    }
}

/// What kube-controller-manager puts in every namespace: the `default` ServiceAccount and the
/// `kube-root-ca.crt` ConfigMap holding the cluster CA.
pub(crate) fn namespace_defaults(state: &ServerState, ns: &str) {
    let objects = [
        (
            Key::new("/serviceaccounts", ns, "default"),
            serde_json::json!({"kind": "ServiceAccount", "apiVersion": "v1",
                "metadata": {"name": "default", "namespace": ns}}),
        ),
        (
            Key::new("/configmaps", ns, "kube-root-ca.crt"),
            serde_json::json!({"kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {"name": "kube-root-ca.crt", "namespace": ns,
                    "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}},
                "data": {"ca.crt": state.ca_pem}}),
        ),
    ];
    for (key, obj) in objects {
        if let Err(e) = objects::create_if_missing(&state.store, &key, obj) {
            tracing::warn!(error = %e, namespace = ns, "namespace defaults");
        }
    }
}

fn handle(state: &ServerState, e: &Notice) {
    let object = e.object();
    let obj = &*object;
    let deleting = meta_str(obj, "deletionTimestamp").is_some();
    // Namespaces.
    if e.key.resource == NAMESPACES && e.kind == EventType::Added && !deleting {
        namespace_defaults(state, &e.key.name);
    }
    // The `default` ServiceAccount and the root CA ConfigMap come back when deleted from a
    // namespace that stays, as kube-controller-manager's controllers restore them.
    if e.kind == EventType::Deleted
        && ((e.key.resource == "/serviceaccounts" && e.key.name == "default")
            || (e.key.resource == "/configmaps" && e.key.name == "kube-root-ca.crt"))
        && state
            .store
            .get(&Key::new(NAMESPACES, "", &e.key.namespace))
            .is_some_and(|ns| meta_str(&ns, "deletionTimestamp").is_none())
    {
        namespace_defaults(state, &e.key.namespace);
    }
    if e.key.resource == NAMESPACES && e.kind != EventType::Deleted && deleting {
        namespace_cleanup(
            state,
            &e.key.name,
            e.prev()
                .as_deref()
                .is_none_or(|p| meta_str(p, "deletionTimestamp").is_none()),
        );
    }
    if e.kind == EventType::Deleted
        && !e.key.namespace.is_empty()
        && let Some(ns) = state.store.get(&Key::new(NAMESPACES, "", &e.key.namespace))
        && meta_str(&ns, "deletionTimestamp").is_some()
    {
        namespace_cleanup(state, &e.key.namespace, false);
    }
    // Legacy service account token Secrets.
    if e.kind != EventType::Deleted && e.key.resource == "/secrets" {
        crate::auth::legacy::populate(state, &e.key);
    }
    if e.kind == EventType::Added && e.key.resource == "/serviceaccounts" {
        crate::auth::legacy::populate_all(state, Some(&e.key.namespace));
    }
    // ClusterRole aggregation.
    if crate::auth::aggregation::is_cluster_roles(&e.key.resource) {
        crate::auth::aggregation::sync_all(state);
    }
    // CustomResourceDefinitions.
    if e.key.resource == CRDS {
        // From the stored CRD, not the event's copy: an event read late must not serve again
        // a resource whose CRD has gone since.
        state.sync_crd(&e.key.name);
        if e.kind != EventType::Deleted
            && let Some(current) = state.store.get(&e.key)
            && meta_str(&current, "deletionTimestamp").is_some()
        {
            crd_cleanup(state, &current);
        }
    } else if e.kind == EventType::Deleted {
        let (group, plural) = objects::split_resource(&e.key.resource);
        if !group.is_empty()
            && let Some(crd) = state
                .store
                .get(&Key::new(CRDS, "", &format!("{plural}.{group}")))
            && meta_str(&crd, "deletionTimestamp").is_some()
        {
            crd_cleanup(state, &crd);
        }
    }
    // Garbage collection.
    if let Some(uid) = meta_str(obj, "uid") {
        if e.kind == EventType::Deleted {
            collect_dependents(state, uid);
            recheck_owners(state, obj);
        } else if e.kind == EventType::Added {
            delete_if_orphaned(state, &e.key, obj);
        }
        if deleting {
            let fins = objects::finalizers(obj);
            if fins.iter().any(|f| f == "orphan") {
                orphan_dependents(state, uid);
                log_err(
                    "removing orphan finalizer",
                    objects::remove_finalizer(&state.store, &e.key, "orphan"),
                );
            }
            if fins.iter().any(|f| f == "foregroundDeletion") {
                foreground(state, &e.key, uid);
            }
        }
    }
}

fn namespace_cleanup(state: &ServerState, ns: &str, first: bool) {
    if first {
        for key in state.store.keys_in_namespace(ns) {
            log_err(
                "deleting namespace content",
                objects::delete(
                    &state.store,
                    &key,
                    Propagation::Background,
                    &Preconditions::default(),
                    false,
                ),
            );
        }
    }
    if state.store.namespace_count(ns) > 0 {
        return;
    }
    let key = Key::new(NAMESPACES, "", ns);
    log_err(
        "finalizing namespace",
        state.store.mutate(&key, |cur| {
            let Some(cur) = cur else {
                return Ok::<_, crate::error::ApiError>(Change::Keep);
            };
            let mut next = (**cur).clone();
            if let Some(list) = next
                .pointer_mut("/spec/finalizers")
                .and_then(Value::as_array_mut)
            {
                list.retain(|f| f != "kubernetes");
            }
            let spec_left = next
                .pointer("/spec/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            if !spec_left && objects::finalizers(&next).is_empty() {
                return Ok(Change::Delete);
            }
            if next == **cur {
                return Ok(Change::Keep);
            }
            Ok(Change::Put(next))
        }),
    );
}

fn crd_cleanup(state: &ServerState, crd: &Value) {
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or("");
    let resource = format!("{group}/{plural}");
    let keys = state.store.keys_of_resource(&resource);
    for key in &keys {
        let already = state
            .store
            .get(key)
            .is_some_and(|o| meta_str(&o, "deletionTimestamp").is_some());
        if !already {
            log_err(
                "deleting custom resource",
                objects::delete(
                    &state.store,
                    key,
                    Propagation::Background,
                    &Preconditions::default(),
                    false,
                ),
            );
        }
    }
    if state.store.keys_of_resource(&resource).is_empty()
        && let Some(name) = meta_str(crd, "name")
    {
        let key = Key::new(CRDS, "", name);
        // Served no more from the moment the CRD is gone: a client that saw it go must not
        // find the resource still served. When this finalizer is the last one, removing it
        // deletes the CRD, so the resource stops being served just before.
        let last = state.store.get(&key).is_some_and(|current| {
            current
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|f| f.len() == 1 && f[0] == CRD_CLEANUP_FINALIZER)
        });
        let remove = || objects::remove_finalizer(&state.store, &key, CRD_CLEANUP_FINALIZER);
        let removed = if last {
            state.finish_crd(name, remove)
        } else {
            remove()
        };
        log_err("finalizing CRD", removed);
        state.sync_crd(name);
    }
}

fn owner_refs(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The owner with `uid` is gone: dependents whose owners are all gone are deleted; the others
/// lose the dangling reference.
fn collect_dependents(state: &ServerState, uid: &str) {
    for key in state.store.dependents_of(uid) {
        let Some(dep) = state.store.get(&key) else {
            continue;
        };
        let others_alive = owner_refs(&dep).iter().any(|r| {
            r.get("uid")
                .and_then(Value::as_str)
                .is_some_and(|u| u != uid && state.store.key_of_uid(u).is_some())
        });
        if others_alive {
            drop_owner_ref(state, &key, uid);
        } else {
            log_err(
                "garbage-collecting dependent",
                objects::delete(
                    &state.store,
                    &key,
                    Propagation::Background,
                    &Preconditions::default(),
                    false,
                ),
            );
        }
    }
}

fn drop_owner_ref(state: &ServerState, key: &Key, uid: &str) {
    log_err(
        "removing owner reference",
        state.store.mutate(key, |cur| {
            let Some(cur) = cur else {
                return Ok::<_, crate::error::ApiError>(Change::Keep);
            };
            let mut next = (**cur).clone();
            let refs: Vec<Value> = owner_refs(&next)
                .into_iter()
                .filter(|r| r.get("uid").and_then(Value::as_str) != Some(uid))
                .collect();
            let meta = objects::meta_mut(&mut next);
            if refs.is_empty() {
                meta.remove("ownerReferences");
            } else {
                meta.insert("ownerReferences".into(), Value::Array(refs));
            }
            Ok(Change::Put(next))
        }),
    );
}

fn orphan_dependents(state: &ServerState, uid: &str) {
    for key in state.store.dependents_of(uid) {
        drop_owner_ref(state, &key, uid);
    }
}

/// Foreground deletion: delete the dependents; once none remain, release the owner.
fn foreground(state: &ServerState, key: &Key, uid: &str) {
    let deps = state.store.dependents_of(uid);
    for dep in &deps {
        let already = state
            .store
            .get(dep)
            .is_some_and(|o| meta_str(&o, "deletionTimestamp").is_some());
        if !already {
            log_err(
                "deleting dependent (foreground)",
                objects::delete(
                    &state.store,
                    dep,
                    Propagation::Foreground,
                    &Preconditions::default(),
                    false,
                ),
            );
        }
    }
    if state.store.dependents_of(uid).is_empty() {
        log_err(
            "releasing foreground owner",
            objects::remove_finalizer(&state.store, key, "foregroundDeletion"),
        );
    }
}

/// A dependent went away: an owner waiting for it in foreground deletion may now go.
fn recheck_owners(state: &ServerState, obj: &Value) {
    for r in owner_refs(obj) {
        let Some(uid) = r.get("uid").and_then(Value::as_str) else {
            continue;
        };
        if let Some(key) = state.store.key_of_uid(uid)
            && let Some(owner) = state.store.get(&key)
            && objects::finalizers(&owner)
                .iter()
                .any(|f| f == "foregroundDeletion")
            && state.store.dependents_of(uid).is_empty()
        {
            log_err(
                "releasing foreground owner",
                objects::remove_finalizer(&state.store, &key, "foregroundDeletion"),
            );
        }
    }
}

/// A new object whose owners are all absent is garbage from the start.
fn delete_if_orphaned(state: &ServerState, key: &Key, obj: &Value) {
    let refs = owner_refs(obj);
    if refs.is_empty() {
        return;
    }
    let all_gone = refs.iter().all(|r| {
        r.get("uid")
            .and_then(Value::as_str)
            .is_none_or(|u| state.store.key_of_uid(u).is_none())
    });
    if all_gone {
        log_err(
            "garbage-collecting object with absent owners",
            objects::delete(
                &state.store,
                key,
                Propagation::Background,
                &Preconditions::default(),
                false,
            ),
        );
    }
}
