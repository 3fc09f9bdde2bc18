//! The objects workload controllers create: a Deployment's ReplicaSets (with
//! `pod-template-hash` and the revision annotations `kubectl rollout history/undo` read), the
//! Pods of ReplicaSets, StatefulSets, DaemonSets and Jobs, and the ControllerRevisions of
//! StatefulSets and DaemonSets. Each sync compares what exists with what should and writes only
//! the difference, so it settles.

use super::events::{self, Event};
use crate::objects::{self, Preconditions, Propagation, meta_str};
use crate::server::ServerState;
use crate::store::{Change, Key, StoreError};
use serde_json::{Map, Value, json};

/// The one simulated node every Pod is bound to.
pub const NODE_NAME: &str = "tidegate";

const REVISION: &str = "deployment.kubernetes.io/revision";
const HASH_LABEL: &str = "pod-template-hash";
const REVISION_HASH_LABEL: &str = "controller-revision-hash";

/// Creates or removes what the workload at `key` owns. Returns the annotations the controller
/// keeps on the workload itself (a Deployment's revision), written with its status.
pub fn sync(state: &ServerState, key: &Key, obj: &Value) -> Vec<(String, String)> {
    if meta_str(obj, "deletionTimestamp").is_some() {
        return Vec::new();
    }
    let mut annotations = Vec::new();
    let result = match key.resource.as_str() {
        "apps/deployments" => deployment(state, key, obj).map(|rev| {
            annotations.extend(rev.map(|r| (REVISION.to_string(), r)));
        }),
        "apps/replicasets" => {
            let want = int(obj, "/spec/replicas", 1);
            pods(state, key, obj, want, |_| None, &[])
        }
        "apps/statefulsets" => stateful_set(state, key, obj),
        "apps/daemonsets" => daemon_set(state, key, obj),
        "batch/jobs" => job(state, key, obj),
        "/persistentvolumeclaims" => volume(state, key, obj),
        _ => Ok(()),
    };
    if let Err(e) = result {
        tracing::warn!(error = %e, object = %key.name, "workload simulator");
    }
    annotations
}

fn int(obj: &Value, pointer: &str, default: i64) -> i64 {
    obj.pointer(pointer)
        .and_then(Value::as_i64)
        .unwrap_or(default)
}

/// The hash kube-controller-manager names a template revision by: FNV-1a (32 bits) of the
/// template, its decimal digits mapped onto Kubernetes' safe alphabet.
pub fn template_hash(template: Option<&Value>) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let text = template.map(Value::to_string).unwrap_or_default();
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h.to_string()
        .bytes()
        .map(|b| ALPHABET[usize::from(b) % ALPHABET.len()] as char)
        .collect()
}

/// The uid-bearing owner reference of a controller.
fn controller_ref(owner: &Value) -> Value {
    json!({
        "apiVersion": owner.get("apiVersion").cloned().unwrap_or(Value::Null),
        "kind": owner.get("kind").cloned().unwrap_or(Value::Null),
        "name": meta_str(owner, "name").unwrap_or(""),
        "uid": meta_str(owner, "uid").unwrap_or(""),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// The objects of `resource` whose controller is `owner`.
fn owned(state: &ServerState, owner: &Value, resource: &str) -> Vec<(Key, Value)> {
    let Some(uid) = meta_str(owner, "uid") else {
        return Vec::new();
    };
    let mut out: Vec<(Key, Value)> = state
        .store
        .dependents_of(uid)
        .into_iter()
        .filter(|k| k.resource == resource)
        .filter_map(|k| state.store.get(&k).map(|v| (k, (*v).clone())))
        .filter(|(_, v)| {
            v.pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .is_some_and(|refs| {
                    refs.iter()
                        .any(|r| r["uid"] == uid && r["controller"] == json!(true))
                })
                && meta_str(v, "deletionTimestamp").is_none()
        })
        .collect();
    out.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    out
}

/// Writes a new object the way the REST path would store it (uid, timestamps, defaults).
fn create(state: &ServerState, key: &Key, mut obj: Value) -> Result<bool, StoreError> {
    let (group, plural) = objects::split_resource(&key.resource);
    if let Some(r) = state.registry.snapshot().lookup(group, "v1", plural) {
        crate::defaults::apply(&r, &mut obj);
    }
    objects::create_if_missing(&state.store, key, obj)
}

/// Applies `edit` to the stored object at `key` (when it changes something).
fn edit(state: &ServerState, key: &Key, edit: impl Fn(&mut Value)) -> Result<(), StoreError> {
    state.store.mutate::<StoreError>(key, |cur| {
        let Some(cur) = cur else {
            return Ok(Change::Keep);
        };
        let mut next = (**cur).clone();
        edit(&mut next);
        Ok(if next == **cur {
            Change::Keep
        } else {
            Change::Put(next)
        })
    })?;
    Ok(())
}

/// Deletes the volume provisioned for a deleted claim.
pub fn release_volume(state: &ServerState, pvc: &Value) {
    if let Some(uid) = meta_str(pvc, "uid") {
        let key = Key::new("/persistentvolumes", "", &format!("pvc-{uid}"));
        if state.store.get(&key).is_some() {
            remove(state, &key);
        }
    }
}

fn remove(state: &ServerState, key: &Key) {
    if let Err(e) = objects::delete(
        &state.store,
        key,
        Propagation::Background,
        &Preconditions::default(),
        false,
    ) && e.code != 404
    {
        tracing::warn!(error = %e, object = %key.name, "workload simulator");
    }
}

fn labels_of(template: Option<&Value>) -> Map<String, Value> {
    template
        .and_then(|t| t.pointer("/metadata/labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The template without the label a controller adds to it, for comparing with the owner's.
fn without_label(template: Option<&Value>, label: &str) -> Option<Value> {
    let mut t = template?.clone();
    if let Some(labels) = t
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove(label);
    }
    Some(t)
}

fn revision_of(obj: &Value) -> i64 {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(REVISION))
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Returns the Deployment's revision (its newest ReplicaSet's).
fn deployment(state: &ServerState, key: &Key, dep: &Value) -> Result<Option<String>, StoreError> {
    let name = &key.name;
    let ns = &key.namespace;
    let template = dep.pointer("/spec/template");
    let replicas = int(dep, "/spec/replicas", 1);
    let sets = owned(state, dep, "apps/replicasets");
    let max_revision = sets
        .iter()
        .map(|(_, rs)| revision_of(rs))
        .max()
        .unwrap_or(0);
    let current = sets.iter().find(|(_, rs)| {
        without_label(rs.pointer("/spec/template"), HASH_LABEL).as_ref() == template
    });
    let copied = copied_annotations(dep);
    let new_key = match current {
        Some((k, rs)) => {
            // A rollback to an older template makes its ReplicaSet the newest revision.
            if revision_of(rs) < max_revision {
                let next = (max_revision + 1).to_string();
                edit(state, k, |o| {
                    o["metadata"]["annotations"][REVISION] = json!(next);
                })?;
            }
            let stale = copied.iter().any(|(a, v)| {
                rs.pointer("/metadata/annotations").and_then(|m| m.get(a)) != Some(v)
            });
            if stale {
                edit(state, k, |o| {
                    if !o["metadata"]["annotations"].is_object() {
                        o["metadata"]["annotations"] = json!({});
                    }
                    for (a, v) in &copied {
                        o["metadata"]["annotations"][a] = v.clone();
                    }
                })?;
            }
            k.clone()
        }
        None => {
            let hash = template_hash(template);
            let rs_name = format!("{name}-{hash}");
            let mut labels = labels_of(template);
            labels.insert(HASH_LABEL.into(), json!(hash));
            let mut t = template
                .filter(|t| t.is_object())
                .cloned()
                .unwrap_or_else(|| json!({}));
            if !t["metadata"].is_object() {
                t["metadata"] = json!({});
            }
            t["metadata"]["labels"] = Value::Object(labels.clone());
            let mut selector = dep
                .pointer("/spec/selector")
                .filter(|s| s.is_object())
                .cloned()
                .unwrap_or_else(|| json!({}));
            if !selector["matchLabels"].is_object() {
                selector["matchLabels"] = json!({});
            }
            selector["matchLabels"][HASH_LABEL] = json!(hash);
            let mut annotations = copied.clone();
            annotations.insert(
                "deployment.kubernetes.io/desired-replicas".into(),
                json!(replicas.to_string()),
            );
            annotations.insert(
                "deployment.kubernetes.io/max-replicas".into(),
                json!((replicas + (replicas + 3) / 4).to_string()),
            );
            annotations.insert(REVISION.into(), json!((max_revision + 1).to_string()));
            let rs = json!({
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": rs_name,
                    "namespace": ns,
                    "generation": 1,
                    "labels": labels,
                    "annotations": annotations,
                    "ownerReferences": [controller_ref(dep)],
                },
                "spec": {"replicas": replicas, "selector": selector, "template": t},
            });
            let k = Key::new("apps/replicasets", ns, &rs_name);
            if create(state, &k, rs)? {
                scaled(state, dep, &rs_name, 0, replicas);
            }
            k
        }
    };
    // Scale the new ReplicaSet to the Deployment's replicas and the others to zero.
    let sets = owned(state, dep, "apps/replicasets");
    for (k, rs) in &sets {
        let want = if *k == new_key { replicas } else { 0 };
        let had = int(rs, "/spec/replicas", 0);
        if had != want {
            edit(state, k, |o| {
                o["spec"]["replicas"] = json!(want);
                o["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] =
                    json!(replicas.to_string());
            })?;
            scaled(state, dep, &k.name, had, want);
        }
    }
    let revision = state
        .store
        .get(&new_key)
        .map(|rs| revision_of(&rs).to_string());
    // Old ReplicaSets beyond the history limit go, oldest first.
    let limit = usize::try_from(int(dep, "/spec/revisionHistoryLimit", 10)).unwrap_or(0);
    let mut old: Vec<_> = sets
        .into_iter()
        .filter(|(k, rs)| *k != new_key && int(rs, "/spec/replicas", 0) == 0)
        .collect();
    if old.len() > limit {
        old.sort_by_key(|(_, rs)| revision_of(rs));
        for (k, _) in old.iter().take(old.len() - limit) {
            remove(state, k);
        }
    }
    Ok(revision)
}

/// The Deployment's annotations its ReplicaSets carry (the deployment controller's
/// `copyDeploymentAnnotationsToReplicaSet`): all but the last applied configuration and the
/// controller's own bookkeeping. `kubernetes.io/change-cause` travels so, for `rollout history`.
fn copied_annotations(dep: &Value) -> Map<String, Value> {
    const SKIP: [&str; 6] = [
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        "deployment.kubernetes.io/revision-history",
        "deployment.kubernetes.io/desired-replicas",
        "deployment.kubernetes.io/max-replicas",
        "deprecated.deployment.rollback.to",
    ];
    dep.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(k, _)| !SKIP.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn scaled(state: &ServerState, dep: &Value, rs: &str, from: i64, to: i64) {
    let verb = if to > from { "up" } else { "down" };
    events::record(
        state,
        dep,
        Event::normal(
            "deployment-controller",
            "ScalingReplicaSet",
            format!("Scaled {verb} replica set {rs} from {from} to {to}"),
        ),
    );
}

/// Makes `want` Pods from the owner's template exist. `name_of(i)` names the i-th Pod (None:
/// a generated name); `extra` labels go on every Pod; Pods whose labels differ from those are
/// replaced.
fn pods(
    state: &ServerState,
    key: &Key,
    owner: &Value,
    want: i64,
    name_of: impl Fn(i64) -> Option<String>,
    extra: &[(&str, String)],
) -> Result<(), StoreError> {
    let ns = &key.namespace;
    let template = owner.pointer("/spec/template");
    let mut existing = owned(state, owner, "/pods");
    // Pods of an older revision are replaced.
    existing.retain(|(k, p)| {
        let current = extra.iter().all(|(label, v)| {
            p.pointer("/metadata/labels")
                .and_then(|l| l.get(*label))
                .and_then(Value::as_str)
                == Some(v.as_str())
        });
        if !current {
            remove(state, k);
        }
        current
    });
    let want = usize::try_from(want).unwrap_or(0);
    let controller = match key.resource.as_str() {
        "apps/replicasets" => "replicaset-controller",
        "apps/statefulsets" => "statefulset-controller",
        "apps/daemonsets" => "daemonset-controller",
        _ => "job-controller",
    };
    for (k, _) in existing.iter().skip(want) {
        remove(state, k);
        events::record(
            state,
            owner,
            Event::normal(
                controller,
                "SuccessfulDelete",
                format!("Deleted pod: {}", k.name),
            ),
        );
    }
    for i in existing.len()..want {
        let index = i64::try_from(i).unwrap_or(0);
        let (pod_name, generate) = match name_of(index) {
            Some(n) => (n, None),
            None => (
                format!("{}-{}", key.name, objects::random_suffix()),
                Some(format!("{}-", key.name)),
            ),
        };
        let mut labels = labels_of(template);
        for (l, v) in extra {
            labels.insert((*l).into(), json!(v));
        }
        let mut meta = json!({
            "name": pod_name,
            "namespace": ns,
            "labels": labels,
            "ownerReferences": [controller_ref(owner)],
        });
        if let Some(g) = generate {
            meta["generateName"] = json!(g);
        }
        if let Some(a) = template.and_then(|t| t.pointer("/metadata/annotations")) {
            meta["annotations"] = a.clone();
        }
        let mut spec = template
            .and_then(|t| t.get("spec"))
            .filter(|s| s.is_object())
            .cloned()
            .unwrap_or_else(|| json!({}));
        spec["nodeName"] = json!(NODE_NAME);
        if key.resource == "apps/statefulsets" {
            spec["hostname"] = json!(pod_name);
            if let Some(svc) = owner.pointer("/spec/serviceName") {
                spec["subdomain"] = svc.clone();
            }
            // Each claim template becomes the pod's volume of that name, on its own claim.
            for (claim, pvc) in claim_names(owner, index) {
                if !spec["volumes"].is_array() {
                    spec["volumes"] = json!([]);
                }
                if let Some(volumes) = spec["volumes"].as_array_mut() {
                    volumes.retain(|v| v.get("name").and_then(Value::as_str) != Some(&claim));
                    volumes
                        .push(json!({"name": claim, "persistentVolumeClaim": {"claimName": pvc}}));
                }
            }
        }
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec});
        if create(state, &Key::new("/pods", ns, &pod_name), pod)? {
            events::record(
                state,
                owner,
                Event::normal(
                    controller,
                    "SuccessfulCreate",
                    format!("Created pod: {pod_name}"),
                ),
            );
        }
    }
    Ok(())
}

/// The ControllerRevision of the owner's current template; returns its name.
fn controller_revision(
    state: &ServerState,
    key: &Key,
    owner: &Value,
) -> Result<String, StoreError> {
    let template = owner.pointer("/spec/template");
    let hash = template_hash(template);
    let name = format!("{}-{hash}", key.name);
    let revisions = owned(state, owner, "apps/controllerrevisions");
    let max = revisions
        .iter()
        .map(|(_, r)| int(r, "/revision", 0))
        .max()
        .unwrap_or(0);
    let rev_key = Key::new("apps/controllerrevisions", &key.namespace, &name);
    match revisions.iter().find(|(k, _)| *k == rev_key) {
        Some((_, r)) if int(r, "/revision", 0) < max => {
            edit(state, &rev_key, |o| o["revision"] = json!(max + 1))?;
        }
        Some(_) => {}
        None => {
            let mut t = template
                .filter(|t| t.is_object())
                .cloned()
                .unwrap_or_else(|| json!({}));
            t["$patch"] = json!("replace");
            let mut labels = owner
                .pointer("/spec/selector/matchLabels")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            labels.insert(REVISION_HASH_LABEL.into(), json!(hash));
            let rev = json!({
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {"name": name, "namespace": key.namespace, "labels": labels,
                    "ownerReferences": [controller_ref(owner)]},
                "data": {"spec": {"template": t}},
                "revision": max + 1,
            });
            create(state, &rev_key, rev)?;
        }
    }
    let limit = usize::try_from(int(owner, "/spec/revisionHistoryLimit", 10)).unwrap_or(0);
    let mut old: Vec<_> = revisions
        .into_iter()
        .filter(|(k, _)| *k != rev_key)
        .collect();
    if old.len() > limit {
        old.sort_by_key(|(_, r)| int(r, "/revision", 0));
        for (k, _) in old.iter().take(old.len() - limit) {
            remove(state, k);
        }
    }
    Ok(name)
}

/// A StatefulSet's claim per template for pod `ordinal`: `(template name, claim name)`.
fn claim_names(sts: &Value, ordinal: i64) -> Vec<(String, String)> {
    let set = meta_str(sts, "name").unwrap_or("");
    sts.pointer("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.pointer("/metadata/name").and_then(Value::as_str))
        .map(|t| (t.to_string(), format!("{t}-{set}-{ordinal}")))
        .collect()
}

/// The claims of pod `ordinal`, made from the volumeClaimTemplates when missing (labelled with
/// the selector's labels, owned by the set when its retention policy deletes them with it),
/// as the StatefulSet controller makes them before the pod; claims are never deleted here.
fn stateful_claims(
    state: &ServerState,
    key: &Key,
    sts: &Value,
    ordinal: i64,
) -> Result<(), StoreError> {
    let set = &key.name;
    let templates = sts
        .pointer("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let owned_by_set = sts.pointer("/spec/persistentVolumeClaimRetentionPolicy/whenDeleted")
        == Some(&json!("Delete"));
    for (template, (_, claim)) in templates.iter().zip(claim_names(sts, ordinal)) {
        let mut pvc = template.clone();
        if !pvc["metadata"].is_object() {
            pvc["metadata"] = json!({});
        }
        pvc["apiVersion"] = json!("v1");
        pvc["kind"] = json!("PersistentVolumeClaim");
        pvc["metadata"]["name"] = json!(claim);
        pvc["metadata"]["namespace"] = json!(key.namespace);
        if !pvc["metadata"]["labels"].is_object() {
            pvc["metadata"]["labels"] = json!({});
        }
        for (k, v) in sts
            .pointer("/spec/selector/matchLabels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            pvc["metadata"]["labels"][k] = v.clone();
        }
        if owned_by_set {
            pvc["metadata"]["ownerReferences"] = json!([controller_ref(sts)]);
        }
        if let Some(m) = pvc.as_object_mut() {
            m.remove("status");
        }
        let pvc_key = Key::new("/persistentvolumeclaims", &key.namespace, &claim);
        if create(state, &pvc_key, pvc)? {
            events::record(
                state,
                sts,
                Event::normal(
                    "statefulset-controller",
                    "SuccessfulCreate",
                    format!(
                        "create Claim {claim} Pod {set}-{ordinal} in StatefulSet {set} success"
                    ),
                ),
            );
        }
    }
    Ok(())
}

fn stateful_set(state: &ServerState, key: &Key, sts: &Value) -> Result<(), StoreError> {
    let revision = controller_revision(state, key, sts)?;
    let name = key.name.clone();
    let want = int(sts, "/spec/replicas", 1);
    for ordinal in 0..want.max(0) {
        stateful_claims(state, key, sts, ordinal)?;
    }
    pods(
        state,
        key,
        sts,
        want,
        |i| Some(format!("{name}-{i}")),
        &[(REVISION_HASH_LABEL, revision)],
    )?;
    // Pod name and index labels, as the controller sets them.
    for (k, _) in owned(state, sts, "/pods") {
        let index = k.name.rsplit('-').next().unwrap_or("0").to_string();
        let pod_name = k.name.clone();
        edit(state, &k, |o| {
            o["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = json!(pod_name);
            o["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = json!(index);
        })?;
    }
    Ok(())
}

fn daemon_set(state: &ServerState, key: &Key, ds: &Value) -> Result<(), StoreError> {
    let revision = controller_revision(state, key, ds)?;
    let hash = revision.rsplit('-').next().unwrap_or_default().to_string();
    // The pod template's generation, as the DaemonSet controller labels pods with it.
    let generation = ds
        .pointer("/metadata/annotations/deprecated.daemonset.template.generation")
        .and_then(Value::as_str)
        .map_or_else(
            || int(ds, "/metadata/generation", 1).to_string(),
            str::to_string,
        );
    pods(
        state,
        key,
        ds,
        1,
        |_| None,
        &[
            (REVISION_HASH_LABEL, hash),
            ("pod-template-generation", generation),
        ],
    )
}

fn job(state: &ServerState, key: &Key, job: &Value) -> Result<(), StoreError> {
    let finished = job
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| {
            c.iter().any(|c| {
                (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True"
            })
        });
    if finished || job.pointer("/spec/suspend") == Some(&json!(true)) {
        return Ok(());
    }
    let completions = int(job, "/spec/completions", 1);
    let parallelism = int(job, "/spec/parallelism", 1);
    if !owned(state, job, "/pods").is_empty() {
        return Ok(());
    }
    pods(
        state,
        key,
        job,
        completions.min(parallelism).max(1),
        |_| None,
        &[],
    )
}

/// The PersistentVolume a dynamic provisioner would make for a claim (`pvc-<claim uid>`), and
/// the claim's `volumeName`. The volume goes with its claim (reclaim policy `Delete`).
fn volume(state: &ServerState, key: &Key, pvc: &Value) -> Result<(), StoreError> {
    if super::outcome(pvc) == super::Outcome::Hang {
        return Ok(());
    }
    let Some(uid) = meta_str(pvc, "uid") else {
        return Ok(());
    };
    let name = format!("pvc-{uid}");
    let pv = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": {"pv.kubernetes.io/provisioned-by": "tidegate.dev/simulated"}},
        "spec": {
            "capacity": {"storage": pvc.pointer("/spec/resources/requests/storage").cloned().unwrap_or(json!("0"))},
            "accessModes": pvc.pointer("/spec/accessModes").cloned().unwrap_or(json!([])),
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": pvc.pointer("/spec/storageClassName").cloned().unwrap_or(json!("")),
            "volumeMode": pvc.pointer("/spec/volumeMode").cloned().unwrap_or(json!("Filesystem")),
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": key.namespace,
                "name": key.name, "uid": uid, "apiVersion": "v1"},
            "hostPath": {"path": format!("/var/lib/tidegate/volumes/{name}"), "type": ""},
        },
        "status": {"phase": "Bound"},
    });
    create(state, &Key::new("/persistentvolumes", "", &name), pv)?;
    edit(state, key, |o| {
        if o.pointer("/spec/volumeName")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            o["spec"]["volumeName"] = json!(name);
        }
    })
}
