//! The resource manager: its settings and the staged apply (validate everything, then
//! definitions → wait → classes → wait → the rest).

use crate::changeset::{Action, ChangeSet, ChangeSetEntry};
use crate::error::Error;
use crate::inventory::{Inventory, InventoryEntry};
use crate::live::{LiveIndex, Mode};
use crate::normalize::{normalize, set_owner_labels};
use crate::plan::{Item, Plan};
use crate::policy::Policies;
use crate::resolve::{Resolver, Target};
use crate::sort::{Stage, apply_order, stage_of};
use crate::state::{AppliedState, hash_and_size};
use crate::takeover::TakeoverManager;
use futures::StreamExt;
use kube::Client;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use tidegate_core::ObjectRef;

/// The largest object sent in one request: kube-apiserver refuses bodies over 3 MiB (and etcd
/// objects over 1.5 MiB), and a refused upload surfaces as a bare connection error.
pub const MAX_OBJECT_BYTES: usize = 3 * 1024 * 1024;

/// Why `name` cannot be a path segment of a request URL (client-go's
/// `IsValidPathSegmentName`), if it cannot.
fn bad_path_segment(name: &str) -> Option<String> {
    if name == "." || name == ".." {
        return Some(format!("may not be '{name}'"));
    }
    ["/", "%"]
        .iter()
        .find(|c| name.contains(**c))
        .map(|c| format!("may not contain '{c}'"))
}

/// A set of objects that passed validation and is ready to be written.
#[derive(Debug)]
pub struct Validated {
    items: Vec<Item>,
    plans: Vec<Option<Plan>>,
}

impl Validated {
    /// The inventory applying the set will record: what may exist once its writes begin.
    pub fn inventory(&self) -> Inventory {
        let mut seen = HashSet::new();
        Inventory {
            entries: self
                .items
                .iter()
                .filter(|i| seen.insert(i.id.clone()))
                .map(|i| InventoryEntry {
                    id: i.id.clone(),
                    v: i.version.clone(),
                })
                .collect(),
        }
    }
}

/// Who owns what the manager applies: the owner labels `<group>/name` and `<group>/namespace`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The label prefix, for example `kustomize.toolkit.fluxcd.io`.
    pub group: String,
    /// The owner's name.
    pub name: String,
    /// The owner's namespace.
    pub namespace: String,
}

impl Owner {
    /// The owner another object's labels name under this owner's label prefix, when it is a
    /// different one.
    pub(crate) fn other_in(&self, obj: &Value) -> Option<Owner> {
        let labels = obj.pointer("/metadata/labels")?;
        let name = labels.get(format!("{}/name", self.group))?.as_str()?;
        let namespace = labels.get(format!("{}/namespace", self.group))?.as_str()?;
        (name != self.name || namespace != self.namespace).then(|| Owner {
            group: self.group.clone(),
            name: name.to_string(),
            namespace: namespace.to_string(),
        })
    }

    /// The two owner labels.
    pub fn labels(&self) -> [(String, String); 2] {
        [
            (format!("{}/name", self.group), self.name.clone()),
            (format!("{}/namespace", self.group), self.namespace.clone()),
        ]
    }
}

/// Settings of a manager.
#[derive(Debug, Clone)]
pub struct ManagerOptions {
    /// The field manager name of every apply.
    pub field_manager: String,
    /// Owner labels set on every object, and required on objects before prune deletes them.
    pub owner: Option<Owner>,
    /// Field managers whose fields are taken over.
    pub takeover: Vec<TakeoverManager>,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// How the live-object index is filled.
    pub live_mode: Mode,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        ManagerOptions {
            field_manager: "tidegate".into(),
            owner: None,
            takeover: TakeoverManager::defaults(),
            concurrency: 8,
            live_mode: Mode::List,
        }
    }
}

/// Settings of one apply.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Recreate objects whose change is rejected as immutable.
    pub force: bool,
    /// Validate and report only; write nothing.
    pub dry_run: bool,
    /// How long to wait for definitions and classes to become ready between stages.
    pub stage_timeout: Duration,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            force: false,
            dry_run: false,
            stage_timeout: Duration::from_secs(60),
        }
    }
}

/// The apply manager.
pub struct ResourceManager {
    pub(crate) client: Client,
    pub(crate) options: ManagerOptions,
    pub(crate) resolver: std::sync::Arc<Resolver>,
    pub(crate) live: LiveIndex,
    /// Health from shared watches (controllers); `None`: each wait opens its own watches.
    pub(crate) status: Option<crate::status_index::StatusIndex>,
    /// The other owners this manager's applies took objects from (see [`Self::taken_from`]).
    pub(crate) taken_from: std::sync::Mutex<Vec<Owner>>,
}

impl ResourceManager {
    /// A manager talking to the cluster behind `client`.
    pub fn new(client: Client, options: ManagerOptions) -> ResourceManager {
        ResourceManager {
            resolver: std::sync::Arc::new(Resolver::new(client.clone())),
            live: LiveIndex::new(client.clone(), options.live_mode),
            status: (options.live_mode == crate::live::Mode::Watch)
                .then(|| crate::status_index::StatusIndex::new(client.clone())),
            client,
            options,
            taken_from: std::sync::Mutex::default(),
        }
    }

    /// A manager for another owner (and possibly another identity on the same cluster, such
    /// as an impersonated client) that shares this one's discovery cache and live-object
    /// index, so many appliers cost one set of watches.
    pub fn derive(&self, client: Client, owner: Option<Owner>) -> ResourceManager {
        ResourceManager {
            client,
            options: ManagerOptions {
                owner,
                ..self.options.clone()
            },
            resolver: self.resolver.clone(),
            live: self.live.clone(),
            // Health is read with the identity that waits, so another identity watches for
            // itself.
            status: None,
            taken_from: std::sync::Mutex::default(),
        }
    }

    /// A manager for another owner with this one's identity: it shares the discovery cache,
    /// the live-object index and the health index.
    pub fn derive_shared(&self, owner: Option<Owner>) -> ResourceManager {
        ResourceManager {
            status: self.status.clone(),
            ..self.derive(self.client.clone(), owner)
        }
    }

    /// The owners (other Kustomizations, say) whose objects this manager's applies took over
    /// since the last call: their owner labels named someone else before the apply. A caller
    /// wakes them, so an owner whose object was taken by an apply of an older revision
    /// re-applies it rather than believing it still has it.
    pub fn taken_from(&self) -> Vec<Owner> {
        let mut owners =
            std::mem::take(&mut *self.taken_from.lock().unwrap_or_else(|e| e.into_inner()));
        owners.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        owners.dedup();
        owners
    }

    /// The resourceVersions the live index holds for `objects` (reference and `apiVersion`),
    /// without a request; `None` when any of them is not known there. Two equal answers mean
    /// nothing about these objects changed in between (status included).
    pub async fn live_versions(&self, objects: &[(ObjectRef, String)]) -> Option<Vec<String>> {
        let mut out = Vec::with_capacity(objects.len());
        for (r, api_version) in objects {
            let target = self.resolver.resolve(api_version, &r.kind).await.ok()??;
            let namespace = if target.namespaced {
                r.namespace.as_str()
            } else {
                ""
            };
            match self.live.get(&target, namespace, &r.name) {
                crate::live::Live::Present(o) => out.push(o.resource_version),
                _ => return None,
            }
        }
        Some(out)
    }

    /// The resource serving `apiVersion`/`kind`: `None` when not served.
    pub async fn target(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<Option<crate::resolve::Target>, Error> {
        self.resolver.resolve(api_version, kind).await
    }

    /// Every served `group/version` and `group/version/Kind` (Helm's capabilities).
    pub async fn api_versions(&self) -> Result<Vec<String>, Error> {
        self.resolver.api_versions().await
    }

    /// Runs discovery again (after CRDs were created outside an apply).
    pub async fn refresh_discovery(&self) -> Result<(), Error> {
        self.resolver.refresh().await
    }

    /// The settings.
    pub fn options(&self) -> &ManagerOptions {
        &self.options
    }

    /// The kube-rs client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Applies `objects` in stages and returns the change set. The whole set is validated by
    /// server-side dry-run before anything is written, except objects that need a Namespace or
    /// a CRD from the same set, which are validated before their stage. `state` holds what
    /// earlier applies recorded and is updated.
    pub async fn apply_all_staged(
        &self,
        objects: Vec<Value>,
        options: &ApplyOptions,
        state: &mut AppliedState,
    ) -> Result<ChangeSet, Error> {
        let validated = self.validate_all(objects, options, state).await?;
        self.apply_validated(validated, options, state).await
    }

    /// The first half of [`apply_all_staged`](Self::apply_all_staged): everything that happens
    /// before the first write (normalising, resolving, the server-side dry runs). Nothing is
    /// written; a caller can record [`Validated::inventory`] before the writes begin.
    pub async fn validate_all(
        &self,
        objects: Vec<Value>,
        options: &ApplyOptions,
        state: &AppliedState,
    ) -> Result<Validated, Error> {
        let mut items = self.prepare(objects, options).await?;
        items.sort_by(|a, b| {
            a.stage
                .cmp(&b.stage)
                .then_with(|| apply_order(&a.object, &b.object))
        });
        self.cover_live(&items).await?;

        // The kinds the set's CRDs bring along.
        let set_kinds: HashMap<(String, String), bool> = items
            .iter()
            .filter(|i| i.object.kind == "CustomResourceDefinition")
            .filter_map(|i| crd_kind(&i.obj))
            .map(|(g, k, namespaced)| ((g, k), namespaced))
            .collect();

        // Plan (validate) the definitions first: what they create decides what is deferred.
        let mut plans: Vec<Option<Plan>> = vec![None; items.len()];
        let mut errors = Vec::new();
        let first: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].stage == Stage::Definitions)
            .collect();
        self.plan_into(&items, &first, options, state, &mut plans, &mut errors)
            .await;
        let created_namespaces: HashSet<&str> = first
            .iter()
            .filter(|&&i| {
                matches!(
                    plans[i],
                    Some(Plan::Apply {
                        action: Action::Created,
                        ..
                    })
                )
            })
            .filter(|&&i| items[i].object.kind == "Namespace")
            .map(|&i| items[i].object.name.as_str())
            .collect();
        let mut rest = Vec::new();
        for i in 0..items.len() {
            if items[i].stage == Stage::Definitions {
                continue;
            }
            let item = &items[i];
            let waits_for_namespace = created_namespaces.contains(item.object.namespace.as_str());
            let waits_for_crd = item.target.is_none()
                && set_kinds.contains_key(&(item.object.group.clone(), item.object.kind.clone()));
            if waits_for_namespace || waits_for_crd {
                plans[i] = Some(Plan::Deferred);
            } else if let Some(e) = static_error(item, &set_kinds) {
                errors.push(e);
            } else {
                rest.push(i);
            }
        }
        self.plan_into(&items, &rest, options, state, &mut plans, &mut errors)
            .await;
        if !errors.is_empty() {
            return Err(Error::Validation(errors));
        }
        Ok(Validated { items, plans })
    }

    /// The second half of [`apply_all_staged`](Self::apply_all_staged): the writes, stage by
    /// stage, of a set [`validate_all`](Self::validate_all) accepted.
    pub async fn apply_validated(
        &self,
        validated: Validated,
        options: &ApplyOptions,
        state: &mut AppliedState,
    ) -> Result<ChangeSet, Error> {
        let Validated {
            mut items,
            mut plans,
        } = validated;
        let mut errors = Vec::new();
        let mut change_set = ChangeSet::default();
        for stage in [Stage::Definitions, Stage::Classes, Stage::Resources] {
            let idx: Vec<usize> = (0..items.len())
                .filter(|&i| items[i].stage == stage)
                .collect();
            if idx.is_empty() {
                continue;
            }
            // Objects that had to wait for this stage's prerequisites are validated now.
            let deferred: Vec<usize> = idx
                .iter()
                .copied()
                .filter(|&i| matches!(plans[i], Some(Plan::Deferred)))
                .collect();
            if !deferred.is_empty() {
                if options.dry_run {
                    for &i in &deferred {
                        plans[i] = Some(Plan::Apply {
                            action: Action::Created,
                            takeover: None,
                            from: None,
                        });
                    }
                } else {
                    self.resolver.refresh().await?;
                    for &i in &deferred {
                        let item = &mut items[i];
                        item.target = self
                            .resolver
                            .resolve(&item.api_version, &item.object.kind)
                            .await?;
                        if let Some(e) = static_error(item, &HashMap::new()) {
                            errors.push(e);
                        }
                    }
                    if !errors.is_empty() {
                        return Err(Error::Validation(errors));
                    }
                    self.cover_live_of(&items, &deferred).await?;
                    self.plan_into(&items, &deferred, options, state, &mut plans, &mut errors)
                        .await;
                    if !errors.is_empty() {
                        return Err(Error::Validation(errors));
                    }
                }
            }
            let entries = self.execute(&items, &idx, &plans, options, state).await?;
            let changed = entries.iter().any(|e| e.action.changed());
            change_set.entries.extend(entries);
            if stage != Stage::Resources && changed && !options.dry_run {
                let refs: Vec<(ObjectRef, String)> = idx
                    .iter()
                    .filter(|&&i| !matches!(plans[i], Some(Plan::Skipped)))
                    .map(|&i| (items[i].object.clone(), items[i].api_version.clone()))
                    .collect();
                self.wait(
                    &refs,
                    &crate::wait::WaitOptions {
                        timeout: options.stage_timeout,
                        fail_fast: false,
                        ttl_jobs: HashSet::new(),
                        min_versions: HashMap::new(),
                        custom: None,
                    },
                )
                .await?;
            }
        }
        Ok(change_set)
    }

    /// The resource serving `object` (`None` while its kind is not served), and the reference
    /// as applied: the namespace cleared for cluster-scoped kinds.
    async fn locate(
        &self,
        api_version: &str,
        mut object: ObjectRef,
    ) -> Result<(ObjectRef, Option<Target>), Error> {
        let target = self.resolver.resolve(api_version, &object.kind).await?;
        if target.as_ref().is_some_and(|t| !t.namespaced) {
            object.namespace.clear();
        }
        Ok((object, target))
    }

    /// Normalises, labels and resolves every object; checks what needs no server.
    async fn prepare(
        &self,
        objects: Vec<Value>,
        options: &ApplyOptions,
    ) -> Result<Vec<Item>, Error> {
        let started = std::time::Instant::now();
        let mut items = Vec::with_capacity(objects.len());
        let mut seen = HashSet::new();
        let mut errors = Vec::new();
        for mut obj in objects {
            normalize(&mut obj);
            if let Some(owner) = &self.options.owner {
                set_owner_labels(&mut obj, &owner.group, &owner.name, &owner.namespace);
            }
            let api_version = obj
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let object = ObjectRef::from_object(&obj);
            if api_version.is_empty() || object.kind.is_empty() || object.name.is_empty() {
                errors.push(format!(
                    "{object}: an object needs apiVersion, kind and metadata.name"
                ));
                continue;
            }
            if let Some(bad) = bad_path_segment(&object.name) {
                errors.push(format!(
                    "{object}: invalid resource name {:?}: {bad}",
                    object.name
                ));
                continue;
            }
            let (object, target) = self.locate(&api_version, object).await?;
            if object.namespace.is_empty()
                && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
            {
                // Cluster-scoped objects have no namespace; kubectl drops it too.
                meta.remove("namespace");
            }
            if !seen.insert(object.clone()) {
                errors.push(format!("{object} is defined more than once"));
                continue;
            }
            let version = tidegate_core::object_ref::split_api_version(&api_version)
                .1
                .to_string();
            let (hash, size) = hash_and_size(&obj, &self.options.field_manager, options.force);
            if size > MAX_OBJECT_BYTES {
                errors.push(format!(
                    "{object}: the object is {size} bytes, more than an API server accepts in one request ({MAX_OBJECT_BYTES})"
                ));
                continue;
            }
            items.push(Item {
                hash,
                id: crate::inventory::object_id(&object),
                policies: Policies::of(&obj),
                stage: stage_of(&api_version, &object.kind),
                obj,
                object,
                api_version,
                version,
                target,
            });
        }
        if !errors.is_empty() {
            return Err(Error::Validation(errors));
        }
        // A kind the cached discovery does not know may have been added since (by another
        // applier's CRD): look once more before calling it unknown.
        if items.iter().any(|i| i.target.is_none())
            && self.resolver.refresh_if_before(started).await?
        {
            for item in items.iter_mut().filter(|i| i.target.is_none()) {
                item.target = self
                    .resolver
                    .resolve(&item.api_version, &item.object.kind)
                    .await?;
            }
        }
        Ok(items)
    }

    async fn cover_live(&self, items: &[Item]) -> Result<(), Error> {
        let all: Vec<usize> = (0..items.len()).collect();
        self.cover_live_of(items, &all).await
    }

    /// Makes the live index cover the resources of `idx`.
    async fn cover_live_of(&self, items: &[Item], idx: &[usize]) -> Result<(), Error> {
        let mut by_target: HashMap<&crate::resolve::Target, HashSet<String>> = HashMap::new();
        for &i in idx {
            if let Some(t) = &items[i].target {
                by_target
                    .entry(t)
                    .or_default()
                    .insert(items[i].object.namespace.clone());
            }
        }
        let jobs = by_target
            .into_iter()
            .map(|(t, ns)| async move { self.live.cover(t, &ns).await })
            // Collected first: a lazy iterator of futures would not be provably `Send`.
            .collect::<Vec<_>>();
        let results: Vec<Result<(), Error>> = futures::stream::iter(jobs)
            .buffer_unordered(self.options.concurrency.max(1))
            .collect()
            .await;
        results.into_iter().collect()
    }

    /// Plans `idx` concurrently into `plans`, collecting errors.
    async fn plan_into(
        &self,
        items: &[Item],
        idx: &[usize],
        options: &ApplyOptions,
        state: &AppliedState,
        plans: &mut [Option<Plan>],
        errors: &mut Vec<String>,
    ) {
        let jobs = idx
            .iter()
            .map(|&i| {
                let item = &items[i];
                async move { (i, self.plan(item, options, state).await) }
            })
            .collect::<Vec<_>>();
        let results: Vec<(usize, Result<Plan, Error>)> = futures::stream::iter(jobs)
            .buffer_unordered(self.options.concurrency.max(1))
            .collect()
            .await;
        let mut failed: Vec<(usize, String)> = Vec::new();
        for (i, r) in results {
            match r {
                Ok(p) => plans[i] = Some(p),
                Err(e) => failed.push((i, e.to_string())),
            }
        }
        failed.sort();
        errors.extend(failed.into_iter().map(|(_, e)| e));
    }

    /// Carries out the plans of `idx` (one stage) and records the outcome in `state`.
    async fn execute(
        &self,
        items: &[Item],
        idx: &[usize],
        plans: &[Option<Plan>],
        options: &ApplyOptions,
        state: &mut AppliedState,
    ) -> Result<Vec<ChangeSetEntry>, Error> {
        let jobs = idx
            .iter()
            .map(|&i| {
                let item = &items[i];
                let plan = plans[i].clone();
                async move { (i, self.carry_out(item, plan, options).await) }
            })
            .collect::<Vec<_>>();
        let results: Vec<(usize, Result<Outcome, Error>)> = futures::stream::iter(jobs)
            .buffered(self.options.concurrency.max(1))
            .collect()
            .await;
        let mut entries = Vec::with_capacity(results.len());
        let mut errors = Vec::new();
        for (i, r) in results {
            let item = &items[i];
            match r {
                Ok((action, rv)) => {
                    if let Some(rv) = rv {
                        state.objects.insert(
                            item.id.clone(),
                            crate::state::AppliedRecord {
                                hash: item.hash.clone(),
                                resource_version: rv,
                            },
                        );
                    }
                    entries.push(ChangeSetEntry {
                        object: item.object.clone(),
                        version: item.version.clone(),
                        action,
                    });
                }
                Err(e) => {
                    state.objects.remove(&item.id);
                    errors.push(e.to_string());
                }
            }
        }
        if errors.is_empty() {
            Ok(entries)
        } else {
            // The first failure, as Flux's apply stops at it; what was written before it is
            // recorded in `state`.
            Err(Error::Object(errors.swap_remove(0)))
        }
    }
}

/// Checks that need no request: the kind is served (or defined by a CRD of the set),
/// namespaced objects name a namespace.
fn static_error(item: &Item, set_kinds: &HashMap<(String, String), bool>) -> Option<String> {
    let namespaced = match &item.target {
        Some(t) => t.namespaced,
        None => match set_kinds.get(&(item.object.group.clone(), item.object.kind.clone())) {
            Some(n) => *n,
            None => {
                return Some(format!(
                    "{} dry-run failed: no matches for kind \"{}\" in version \"{}\"",
                    item.object, item.object.kind, item.api_version
                ));
            }
        },
    };
    if namespaced && item.object.namespace.is_empty() {
        return Some(format!(
            "{} namespace not specified: {} is a namespaced kind",
            item.object, item.object.kind
        ));
    }
    None
}

/// What carrying out one plan did: the action and the resourceVersion now known, if any.
pub(crate) type Outcome = (Action, Option<String>);

/// The group, kind and scope a CRD declares.
fn crd_kind(crd: &Value) -> Option<(String, String, bool)> {
    let group = crd.pointer("/spec/group")?.as_str()?;
    let kind = crd.pointer("/spec/names/kind")?.as_str()?;
    let namespaced = crd.pointer("/spec/scope").and_then(Value::as_str) != Some("Cluster");
    Some((group.to_string(), kind.to_string(), namespaced))
}
