//! `strategy: ContinuousApply`, Tidegate's extension: every object of the set's resources is
//! kept equal to its source in each selected Cluster by server-side apply (field manager
//! `clusterresourceset`, owner labels `clusterresourceset.addons.cluster.x-k8s.io/{name,
//! namespace}`), in stages (CRDs and Namespaces first) in one pass; the objects applied are
//! recorded per binding entry (an inventory), so those that leave the source — or whose Cluster
//! is no longer selected, or whose set is deleted — are pruned; watches on the applied objects
//! in each workload cluster bring a drifted or deleted object back at once; their health is
//! reported in a `Healthy` condition.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::channel::mpsc::UnboundedSender;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tidegate_api::clusterresourceset::{ResourceBinding, ResourceSetBinding};
use tidegate_api::{Cluster, ClusterResourceSet, ClusterResourceSetBinding};
use tidegate_apply::health::{Status, compute};
use tidegate_apply::{AppliedState, ApplyOptions, Inventory, InventoryEntry, Owner};

use super::outcome::{Applied, Outcome};
use super::read::Source;
use super::resources;
use super::scope::Remote;

/// The owner-label prefix of objects applied by `ContinuousApply`.
pub const OWNER_GROUP: &str = "clusterresourceset.addons.cluster.x-k8s.io";

/// What was last applied to one Cluster for one set.
struct Last {
    digest: String,
    state: AppliedState,
    at: Instant,
    health: Vec<(Status, String)>,
}

/// `(set, cluster)`, each as `namespace/name`.
type Key = (String, String);

/// A drift watch: the identity of the client it watches with, and its task.
type Watch = (usize, tokio::task::JoinHandle<()>);

/// The state `ContinuousApply` keeps between reconciles.
pub struct Continuous {
    last: Mutex<HashMap<Key, Last>>,
    dirty: Mutex<HashSet<Key>>,
    /// Drift watches by (cluster, resource): the client they watch with, and the task.
    watches: Mutex<HashMap<(String, String), Watch>>,
    wake: UnboundedSender<ObjectRef<ClusterResourceSet>>,
}

impl Drop for Continuous {
    fn drop(&mut self) {
        for (_, (_, task)) in self
            .watches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
        {
            task.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn set_ref(key: &str) -> ObjectRef<ClusterResourceSet> {
    match key.split_once('/') {
        Some((ns, name)) => ObjectRef::new(name).within(ns),
        None => ObjectRef::new(key),
    }
}

impl Continuous {
    /// State that wakes sets through `wake` when their objects drift.
    pub fn new(wake: UnboundedSender<ObjectRef<ClusterResourceSet>>) -> Continuous {
        Continuous {
            last: Mutex::default(),
            dirty: Mutex::default(),
            watches: Mutex::default(),
            wake,
        }
    }

    /// Marks a set's objects in a cluster as changed there and wakes the set.
    fn drifted(&self, set: &str, cluster: &str) {
        lock(&self.dirty).insert((set.to_string(), cluster.to_string()));
        let _ = self.wake.unbounded_send(set_ref(set));
    }

    /// A watch of `cluster` came back after an interruption: everything applied there is
    /// checked again.
    fn resynced(&self, cluster: &str) {
        let sets: Vec<String> = lock(&self.last)
            .keys()
            .filter(|(_, c)| c == cluster)
            .map(|(s, _)| s.clone())
            .collect();
        for s in sets {
            self.drifted(&s, cluster);
        }
    }

    /// Forgets a set (deleted) or a set's cluster.
    pub fn forget(&self, set: &str, cluster: Option<&str>) {
        lock(&self.last).retain(|(s, c), _| !(s == set && cluster.is_none_or(|x| x == c)));
        lock(&self.dirty).retain(|(s, c)| !(s == set && cluster.is_none_or(|x| x == c)));
    }

    /// Stops the drift watches of a cluster that is gone.
    pub fn forget_cluster(&self, cluster: &str) {
        lock(&self.last).retain(|(_, c), _| c != cluster);
        lock(&self.watches).retain(|(c, _), (_, task)| {
            let keep = c != cluster;
            if !keep {
                task.abort();
            }
            keep
        });
    }

    /// Watches objects of `resource` carrying the owner labels in `cluster`.
    fn watch(
        self: &std::sync::Arc<Self>,
        cluster: &str,
        remote: &std::sync::Arc<Remote>,
        resource: &ApiResource,
    ) {
        let key = (
            cluster.to_string(),
            format!(
                "{}/{}/{}",
                resource.group, resource.version, resource.plural
            ),
        );
        let id = std::sync::Arc::as_ptr(remote) as usize;
        let mut watches = lock(&self.watches);
        if watches
            .get(&key)
            .is_some_and(|(w, t)| *w == id && !t.is_finished())
        {
            return;
        }
        if let Some((_, old)) = watches.remove(&key) {
            old.abort();
        }
        let api: Api<DynamicObject> = Api::all_with(remote.client.clone(), resource);
        let config = watcher::Config::default().labels(&format!("{OWNER_GROUP}/name"));
        let me = std::sync::Arc::downgrade(self);
        let cluster = cluster.to_string();
        let task = tokio::spawn(async move {
            let stream = watcher(api, config).default_backoff();
            let mut stream = std::pin::pin!(stream);
            let mut synced_once = false;
            while let Some(event) = stream.next().await {
                let Some(me) = me.upgrade() else {
                    return;
                };
                match event {
                    Ok(watcher::Event::Apply(o)) | Ok(watcher::Event::Delete(o)) => {
                        let labels = o.labels();
                        if let (Some(name), Some(ns)) = (
                            labels.get(&format!("{OWNER_GROUP}/name")),
                            labels.get(&format!("{OWNER_GROUP}/namespace")),
                        ) {
                            me.drifted(&format!("{ns}/{name}"), &cluster);
                        }
                    }
                    Ok(watcher::Event::InitDone) => {
                        if synced_once {
                            me.resynced(&cluster);
                        }
                        synced_once = true;
                    }
                    Ok(_) => {}
                    Err(e) => tracing::debug!(cluster, error = %e, "drift watch"),
                }
            }
        });
        watches.insert(key, (id, task));
    }
}

/// What one `ContinuousApply` pass over one Cluster needs.
pub struct Pass<'a> {
    pub crs: &'a ClusterResourceSet,
    pub cluster_key: &'a str,
    pub remote: &'a std::sync::Arc<Remote>,
    pub sources: &'a [Option<Source>],
    pub interval: Option<Duration>,
}

/// The owner whose labels the objects carry.
pub fn owner_of(crs: &ClusterResourceSet) -> Owner {
    Owner {
        group: OWNER_GROUP.into(),
        name: crs.name_any(),
        namespace: crs.namespace().unwrap_or_default(),
    }
}

/// Applies the set to one Cluster, prunes what left it, and checks health; updates `entry`.
pub async fn apply(
    state: &std::sync::Arc<Continuous>,
    pass: Pass<'_>,
    entry: &mut ResourceSetBinding,
    outcome: &mut Outcome,
) {
    let set_key = format!(
        "{}/{}",
        pass.crs.namespace().unwrap_or_default(),
        pass.crs.name_any()
    );
    let key = (set_key.clone(), pass.cluster_key.to_string());
    let now = || Some(Time(tidegate_api::conditions::now()));
    // Build everything first: a resource that does not parse applies and prunes nothing.
    let mut objects = Vec::new();
    let mut hashes = Vec::new();
    let mut failed = Vec::new();
    for s in pass.sources.iter().flatten() {
        let parsed = resources::normalize_data(s.data.as_ref(), &s.key).and_then(|v| {
            Ok((
                resources::objects_from_data(&v)?,
                resources::compute_hash(&v),
            ))
        });
        match parsed {
            Ok((objs, hash)) => {
                objects.extend(objs);
                hashes.push((s, hash));
            }
            Err(e) => {
                entry.set(ResourceBinding {
                    resource: s.reference.clone(),
                    hash: String::new(),
                    applied: Some(false),
                    last_applied_time: now(),
                });
                failed.push(format!(
                    "{} {} for Cluster {}: {e}",
                    s.reference.kind, s.key, pass.cluster_key
                ));
            }
        }
    }
    if !failed.is_empty() {
        let message = super::outcome::aggregate(failed.iter().map(String::as_str));
        outcome.applied = Some(Applied::not_applied(message.clone()));
        outcome.errors.push(message);
        return;
    }
    let mut digest = Sha256::new();
    digest.update(pass.crs.meta().generation.unwrap_or(0).to_le_bytes());
    for (s, h) in &hashes {
        digest.update(s.reference.kind.as_bytes());
        digest.update(s.reference.name.as_bytes());
        digest.update(h.as_bytes());
    }
    let digest = format!("{:x}", digest.finalize());
    let dirty = lock(&state.dirty).remove(&key);
    let (due, mut applied_state, last_health) = match lock(&state.last).get(&key) {
        Some(last) => (
            dirty
                || last.digest != digest
                || entry.inventory.is_none()
                || pass.interval.is_some_and(|i| last.at.elapsed() >= i),
            last.state.clone(),
            last.health.clone(),
        ),
        None => (true, AppliedState::default(), Vec::new()),
    };
    if !due {
        outcome.applied = Some(Applied::ok());
        outcome.health = Some(last_health);
        return;
    }
    // Resources the set no longer names leave the entry.
    entry
        .resources
        .retain(|r| pass.crs.spec.resources.contains(&r.resource));

    let manager = pass
        .remote
        .manager
        .derive(pass.remote.client.clone(), Some(owner_of(pass.crs)));
    let objects: Vec<Value> = objects.into_iter().map(Value::Object).collect();
    let options = ApplyOptions {
        stage_timeout: Duration::from_secs(30),
        ..Default::default()
    };
    let change_set = match manager
        .apply_all_staged(objects, &options, &mut applied_state)
        .await
    {
        Ok(cs) => cs,
        Err(e) => {
            for (s, _) in &hashes {
                entry.set(ResourceBinding {
                    resource: s.reference.clone(),
                    hash: String::new(),
                    applied: Some(false),
                    last_applied_time: now(),
                });
            }
            let message = format!(
                "failed to apply ClusterResourceSet {set_key} to Cluster {}: {e}",
                pass.cluster_key
            );
            outcome.applied = Some(Applied::not_applied(message.clone()));
            outcome.errors.push(message);
            return;
        }
    };
    let new_inventory = Inventory::from_change_set(&change_set);
    let old_inventory = crate::shared::inventory_from_api(entry.inventory.as_ref());
    let stale = old_inventory.stale(&new_inventory);
    let mut prune_error = None;
    if !stale.is_empty() {
        let (_, result) = manager.delete_all(&stale).await;
        if let Err(e) = result {
            prune_error = Some(format!(
                "failed to prune ClusterResourceSet {set_key} objects from Cluster {}: {e}",
                pass.cluster_key
            ));
        }
    }
    let changed = change_set.entries.iter().any(|e| e.action.changed()) || !stale.is_empty();
    for (s, hash) in &hashes {
        let previous = entry.get(&s.reference).cloned();
        let same = previous
            .as_ref()
            .is_some_and(|p| p.hash == *hash && p.applied == Some(true));
        entry.set(ResourceBinding {
            resource: s.reference.clone(),
            hash: hash.clone(),
            applied: Some(true),
            last_applied_time: if same && !changed {
                previous.and_then(|p| p.last_applied_time)
            } else {
                now()
            },
        });
    }
    entry.inventory = Some(crate::shared::inventory_to_api(&new_inventory.entries));
    match prune_error {
        Some(e) => {
            outcome.applied = Some(Applied::not_applied(e.clone()));
            outcome.errors.push(e);
            // Stale objects stay recorded until they are gone.
            let mut kept = new_inventory.clone();
            for (r, v) in &stale {
                kept.entries.push(InventoryEntry {
                    id: tidegate_apply::inventory::object_id(r),
                    v: v.clone(),
                });
            }
            entry.inventory = Some(crate::shared::inventory_to_api(&kept.entries));
        }
        None => outcome.applied = Some(Applied::ok()),
    }
    let health = health(pass.remote, pass.cluster_key, &new_inventory).await;
    outcome.health = Some(health.clone());
    // Watch every kind applied, for drift.
    let mut kinds = HashSet::new();
    for (r, v) in new_inventory.objects() {
        let api_version = if r.group.is_empty() {
            v.clone()
        } else {
            format!("{}/{v}", r.group)
        };
        if !kinds.insert((api_version.clone(), r.kind.clone())) {
            continue;
        }
        if let Ok(Some(t)) = pass.remote.resolver.resolve(&api_version, &r.kind).await {
            state.watch(pass.cluster_key, pass.remote, &t.resource);
        }
    }
    lock(&state.last).insert(
        key,
        Last {
            digest,
            state: applied_state,
            at: Instant::now(),
            health,
        },
    );
}

/// The objects of `inventory` that are not healthy, with `Kind/ns/name in Cluster c: message`.
async fn health(remote: &Remote, cluster: &str, inventory: &Inventory) -> Vec<(Status, String)> {
    let mut out = Vec::new();
    for (r, v) in inventory.objects() {
        let api_version = if r.group.is_empty() {
            v.clone()
        } else {
            format!("{}/{v}", r.group)
        };
        let Ok(Some(t)) = remote.resolver.resolve(&api_version, &r.kind).await else {
            continue;
        };
        let api = t.api(&remote.client, &r.namespace);
        let described = if r.namespace.is_empty() {
            format!("{}/{}", r.kind, r.name)
        } else {
            format!("{}/{}/{}", r.kind, r.namespace, r.name)
        };
        match api.get_opt(&r.name).await {
            Ok(Some(obj)) => {
                let value = serde_json::to_value(&obj).unwrap_or_default();
                let h = compute(&value);
                if h.status != Status::Current {
                    out.push((
                        h.status,
                        format!(
                            "{described} in Cluster {cluster}: {} {}",
                            h.status, h.message
                        ),
                    ));
                }
            }
            Ok(None) => out.push((
                Status::NotFound,
                format!("{described} in Cluster {cluster}: not found"),
            )),
            Err(e) => out.push((
                Status::Unknown,
                format!(
                    "{described} in Cluster {cluster}: {}",
                    tidegate_apply::error::describe(&e)
                ),
            )),
        }
    }
    out
}

/// Deletes the objects recorded in `entry` from the cluster (its set was deleted, or the
/// cluster is no longer selected).
pub async fn prune_entry(
    remote: &Remote,
    crs: &ClusterResourceSet,
    entry: &ResourceSetBinding,
) -> Result<(), String> {
    let Some(inv) = &entry.inventory else {
        return Ok(());
    };
    let manager = remote
        .manager
        .derive(remote.client.clone(), Some(owner_of(crs)));
    let objects = crate::shared::inventory_from_api(Some(inv)).objects();
    let (_, result) = manager.delete_all(&objects).await;
    result.map_err(|e| e.to_string())
}

/// Prunes the objects `binding`'s entry of `crs` records from its Cluster; nothing to do when
/// the Cluster is gone or being deleted (its objects go with it).
pub(super) async fn prune_binding(
    crs: &ClusterResourceSet,
    ctx: &super::Context,
    binding: &ClusterResourceSetBinding,
) -> Result<(), String> {
    let crs_name = crs.name_any();
    let Some(entry) = binding
        .spec
        .bindings
        .iter()
        .find(|e| e.cluster_resource_set_name == crs_name)
    else {
        return Ok(());
    };
    if entry
        .inventory
        .as_ref()
        .is_none_or(|i| i.entries.is_empty())
    {
        return Ok(());
    }
    let ns = binding.namespace().unwrap_or_default();
    let cluster_name = if binding.spec.cluster_name.is_empty() {
        binding.name_any()
    } else {
        binding.spec.cluster_name.clone()
    };
    let clusters: Api<Cluster> = Api::namespaced(ctx.client.clone(), &ns);
    let cluster = match clusters.get_opt(&cluster_name).await {
        Ok(Some(c)) if c.metadata.deletion_timestamp.is_none() => c,
        Ok(_) => return Ok(()),
        Err(e) => return Err(tidegate_apply::error::describe(&e)),
    };
    let remote = ctx.remotes.get(&ctx.client, &cluster).await?;
    prune_entry(&remote, crs, entry).await.map_err(|e| {
        format!("failed to prune ClusterResourceSet {ns}/{crs_name} objects from Cluster {ns}/{cluster_name}: {e}")
    })
}

/// Prunes the set's objects from the Clusters it has entries for but no longer selects, and
/// removes those entries.
pub(super) async fn prune_deselected(
    crs: &ClusterResourceSet,
    ctx: &super::Context,
    selected: &[Cluster],
) -> Result<(), String> {
    let ns = crs.namespace().unwrap_or_default();
    let crs_name = crs.name_any();
    let names: HashSet<String> = selected.iter().map(|c| c.name_any()).collect();
    let api: Api<ClusterResourceSetBinding> = Api::namespaced(ctx.client.clone(), &ns);
    let bindings = api
        .list(&kube::api::ListParams::default())
        .await
        .map_err(|e| tidegate_apply::error::describe(&e))?;
    let mut errors = Vec::new();
    for b in bindings.items {
        let cluster = if b.spec.cluster_name.is_empty() {
            b.name_any()
        } else {
            b.spec.cluster_name.clone()
        };
        if names.contains(&cluster)
            || !b
                .spec
                .bindings
                .iter()
                .any(|e| e.cluster_resource_set_name == crs_name)
        {
            continue;
        }
        let result = match prune_binding(crs, ctx, &b).await {
            Ok(()) => super::delete::remove_entry(ctx, &b, &crs_name).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(()) => ctx.continuous.forget(
                &format!("{ns}/{crs_name}"),
                Some(&format!("{ns}/{cluster}")),
            ),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(super::outcome::aggregate(errors.iter().map(String::as_str)))
    }
}
