//! Waiting for health: one watch per resource and namespace, kstatus evaluated on every
//! event; done when everything is `Current`, early when something `Failed` (fail fast), or an
//! error in Flux's words when the timeout passes.

use crate::custom_health::CustomHealth;
use crate::error::Error;
use crate::health::Status;
use crate::manager::ResourceManager;
use crate::resolve::Target;
use crate::sort::apply_order;
use crate::status_index::StatusIndex;
use futures::StreamExt;
use kube::runtime::watcher;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tidegate_core::ObjectRef;
use tokio::sync::mpsc;

/// Settings of a wait.
#[derive(Debug, Clone)]
pub struct WaitOptions {
    /// How long to wait.
    pub timeout: Duration,
    /// Stop at the first `Failed` object.
    pub fail_fast: bool,
    /// Jobs with `ttlSecondsAfterFinished`: gone counts as done.
    pub ttl_jobs: HashSet<ObjectRef>,
    /// The resourceVersions the caller's own writes produced: an object's health counts only
    /// from that version on (shared watches may not have seen the write yet).
    pub min_versions: HashMap<ObjectRef, String>,
    /// Custom health checks (`healthCheckExprs`) for the kinds they cover.
    pub custom: Option<Arc<CustomHealth>>,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions {
            timeout: Duration::from_secs(300),
            fail_fast: true,
            ttl_jobs: HashSet::new(),
            min_versions: HashMap::new(),
            custom: None,
        }
    }
}

enum Update {
    Seen(ObjectRef, Status),
    Gone(ObjectRef),
    /// The first list of one watch is complete: what it did not report is not found.
    Synced(Vec<ObjectRef>),
}

impl ResourceManager {
    /// Waits until every object of `objects` (reference and `apiVersion`) is healthy.
    pub async fn wait(
        &self,
        objects: &[(ObjectRef, String)],
        options: &WaitOptions,
    ) -> Result<(), Error> {
        if objects.is_empty() {
            return Ok(());
        }
        if let Some(index) = &self.status {
            // Boxed: a controller's wait is this small future, not the watch path's state.
            return Box::pin(self.wait_shared(index, objects, options)).await;
        }
        let mut order: Vec<ObjectRef> = objects.iter().map(|(r, _)| r.clone()).collect();
        order.sort_by(apply_order);
        order.dedup();
        let mut statuses: HashMap<ObjectRef, Status> =
            order.iter().map(|r| (r.clone(), Status::Unknown)).collect();
        let mut groups: HashMap<(Target, String), Vec<ObjectRef>> = HashMap::new();
        let mut not_served = Vec::new();
        for (r, api_version) in objects {
            match self.resolver.resolve(api_version, &r.kind).await? {
                Some(t) => groups
                    .entry((
                        t.clone(),
                        if t.namespaced {
                            r.namespace.clone()
                        } else {
                            String::new()
                        },
                    ))
                    .or_default()
                    .push(r.clone()),
                None => {
                    statuses.insert(r.clone(), Status::NotFound);
                    not_served.push(r.clone());
                }
            }
        }
        // One list per group first: when everything is already healthy (the common case of
        // a reconcile that changed nothing) the wait ends without opening a watch.
        if self.probe(&groups, &mut statuses, options).await
            && let Some(Ok(())) = evaluate(&order, &statuses, options)
        {
            return Ok(());
        }
        // Otherwise the watches decide, from their own first lists.
        for s in statuses.values_mut() {
            *s = Status::Unknown;
        }
        for r in &not_served {
            statuses.insert(r.clone(), Status::NotFound);
        }
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut tasks = Vec::new();
        for ((target, namespace), members) in groups {
            let api = target.api(&self.client, &namespace);
            let mut config = watcher::Config::default();
            if let [only] = members.as_slice() {
                config = config.fields(&format!("metadata.name={}", only.name));
            }
            let wanted: HashMap<String, ObjectRef> = members
                .iter()
                .map(|r| (r.name.clone(), r.clone()))
                .collect();
            let tx = tx.clone();
            let custom = options.custom.clone();
            tasks.push(tokio::spawn(async move {
                let mut stream = watcher::watcher(api, config).boxed();
                let mut seen = HashSet::new();
                while let Some(event) = stream.next().await {
                    let send = |obj: &kube::api::DynamicObject, gone: bool| {
                        let name = obj.metadata.name.clone().unwrap_or_default();
                        if let Some(r) = wanted.get(&name) {
                            let update = if gone {
                                Update::Gone(r.clone())
                            } else {
                                let v = serde_json::to_value(obj).unwrap_or(Value::Null);
                                Update::Seen(
                                    r.clone(),
                                    CustomHealth::status_of(custom.as_deref(), &v),
                                )
                            };
                            let _ = tx.send(update);
                            Some(r.clone())
                        } else {
                            None
                        }
                    };
                    match event {
                        Ok(watcher::Event::Init) => seen.clear(),
                        Ok(watcher::Event::InitApply(o)) => {
                            if let Some(r) = send(&o, false) {
                                seen.insert(r);
                            }
                        }
                        Ok(watcher::Event::InitDone) => {
                            let missing = wanted
                                .values()
                                .filter(|r| !seen.contains(*r))
                                .cloned()
                                .collect();
                            let _ = tx.send(Update::Synced(missing));
                        }
                        Ok(watcher::Event::Apply(o)) => {
                            send(&o, false);
                        }
                        Ok(watcher::Event::Delete(o)) => {
                            send(&o, true);
                        }
                        Err(e) => {
                            tracing::debug!(error = %e, "health watch interrupted");
                            tokio::time::sleep(Duration::from_millis(500)).await;
                        }
                    }
                }
            }));
        }
        drop(tx);
        let deadline = tokio::time::sleep(options.timeout);
        tokio::pin!(deadline);
        let outcome = loop {
            let done = evaluate(&order, &statuses, options);
            if let Some(result) = done {
                break result;
            }
            tokio::select! {
                _ = &mut deadline => {
                    break Err(report("timeout waiting for", &order, &statuses, options, |s| s != Status::Current));
                }
                update = rx.recv() => match update {
                    Some(Update::Seen(r, s)) => { statuses.insert(r, s); }
                    Some(Update::Gone(r)) => { statuses.insert(r, Status::NotFound); }
                    Some(Update::Synced(missing)) => {
                        for r in missing { statuses.insert(r, Status::NotFound); }
                    }
                    None => {
                        // Every watch ended: wait out the timeout as nothing can change.
                        (&mut deadline).await;
                        break Err(report("timeout waiting for", &order, &statuses, options, |s| s != Status::Current));
                    }
                }
            }
        };
        for t in tasks {
            t.abort();
        }
        outcome
    }
}

impl ResourceManager {
    /// The wait of a controller's manager: statuses from the shared index, woken by changes in
    /// the namespaces waited on; nothing is opened per wait.
    async fn wait_shared(
        &self,
        index: &StatusIndex,
        objects: &[(ObjectRef, String)],
        options: &WaitOptions,
    ) -> Result<(), Error> {
        let mut order: Vec<ObjectRef> = objects.iter().map(|(r, _)| r.clone()).collect();
        order.sort_by(apply_order);
        order.dedup();
        let mut targets: Vec<(ObjectRef, Option<Target>)> = Vec::with_capacity(objects.len());
        let mut namespaces: HashSet<String> = HashSet::new();
        for (r, api_version) in objects {
            let target = self.resolver.resolve(api_version, &r.kind).await?;
            if let Some(t) = &target {
                index.cover(t);
                namespaces.insert(if t.namespaced {
                    r.namespace.clone()
                } else {
                    String::new()
                });
            }
            targets.push((r.clone(), target));
        }
        let notifiers: Vec<_> = namespaces.iter().map(|ns| index.notifier(ns)).collect();
        let custom = options.custom.as_deref();
        let mut custom_seen: HashMap<ObjectRef, (u64, Status)> = HashMap::new();
        let deadline = tokio::time::sleep(options.timeout);
        tokio::pin!(deadline);
        loop {
            // Registered before looking, so a change between the look and the wait wakes it.
            let mut changed: Vec<_> = notifiers.iter().map(|n| Box::pin(n.notified())).collect();
            for c in &mut changed {
                c.as_mut().enable();
            }
            let mut statuses: HashMap<ObjectRef, Status> = HashMap::with_capacity(targets.len());
            for (r, t) in &targets {
                let min = options
                    .min_versions
                    .get(r)
                    .and_then(|v| v.parse::<u64>().ok());
                let s = match t {
                    Some(t) if custom.is_some_and(|c| c.supports(&r.group, &r.kind)) => {
                        self.custom_status(index, t, r, min, custom, &mut custom_seen)
                            .await
                    }
                    Some(t) => index.status(t, r, min).unwrap_or(Status::Unknown),
                    None => Status::NotFound,
                };
                statuses.insert(r.clone(), s);
            }
            if let Some(result) = evaluate(&order, &statuses, options) {
                return result;
            }
            if changed.is_empty() {
                (&mut deadline).await;
            } else {
                tokio::select! {
                    _ = &mut deadline => {}
                    _ = futures::future::select_all(changed) => continue,
                }
            }
            return Err(report(
                "timeout waiting for",
                &order,
                &statuses,
                options,
                |s| s != Status::Current,
            ));
        }
    }

    /// The status of an object with a custom health check: the index says whether it is
    /// there and at which resourceVersion; the object is read (and its expressions
    /// evaluated) once per resourceVersion.
    async fn custom_status(
        &self,
        index: &StatusIndex,
        target: &Target,
        r: &ObjectRef,
        min: Option<u64>,
        custom: Option<&CustomHealth>,
        seen: &mut HashMap<ObjectRef, (u64, Status)>,
    ) -> Status {
        let rv = match index.version(target, r) {
            None => return Status::Unknown,
            Some(None) if min.is_some() => return Status::Unknown,
            Some(None) => return Status::NotFound,
            Some(Some(rv)) => rv,
        };
        if min.is_some_and(|m| rv < m) {
            return Status::Unknown;
        }
        if let Some((v, s)) = seen.get(r)
            && *v == rv
        {
            return *s;
        }
        let status = match target
            .api(&self.client, &r.namespace)
            .get_opt(&r.name)
            .await
        {
            Ok(Some(o)) => {
                let v = serde_json::to_value(&o).unwrap_or(Value::Null);
                CustomHealth::status_of(custom, &v)
            }
            Ok(None) => Status::NotFound,
            Err(e) => {
                tracing::debug!(error = %e, object = %r, "custom health check read failed");
                return Status::Unknown;
            }
        };
        seen.insert(r.clone(), (rv, status));
        status
    }

    /// Lists each group once and records the statuses seen (absent objects as `NotFound`).
    /// False when a list failed (the watches will tell).
    async fn probe(
        &self,
        groups: &HashMap<(Target, String), Vec<ObjectRef>>,
        statuses: &mut HashMap<ObjectRef, Status>,
        options: &WaitOptions,
    ) -> bool {
        let lists = groups
            .iter()
            .map(|((target, namespace), members)| {
                let api = target.api(&self.client, namespace);
                let mut params = kube::api::ListParams::default();
                if let [only] = members.as_slice() {
                    params = params.fields(&format!("metadata.name={}", only.name));
                }
                async move { (members, api.list(&params).await) }
            })
            .collect::<Vec<_>>();
        let mut complete = true;
        for (members, result) in futures::future::join_all(lists).await {
            let Ok(list) = result else {
                complete = false;
                continue;
            };
            let by_name: HashMap<&str, &kube::api::DynamicObject> = list
                .items
                .iter()
                .filter_map(|o| o.metadata.name.as_deref().map(|n| (n, o)))
                .collect();
            for r in members {
                let status = match by_name.get(r.name.as_str()) {
                    Some(o) => {
                        let v = serde_json::to_value(o).unwrap_or(Value::Null);
                        CustomHealth::status_of(options.custom.as_deref(), &v)
                    }
                    None => Status::NotFound,
                };
                statuses.insert(r.clone(), status);
            }
        }
        complete
    }
}

fn effective(r: &ObjectRef, s: Status, options: &WaitOptions) -> Status {
    if s == Status::NotFound && options.ttl_jobs.contains(r) {
        Status::Current
    } else {
        s
    }
}

/// `Some` when the wait is over.
fn evaluate(
    order: &[ObjectRef],
    statuses: &HashMap<ObjectRef, Status>,
    options: &WaitOptions,
) -> Option<Result<(), Error>> {
    let status = |r: &ObjectRef| {
        effective(
            r,
            statuses.get(r).copied().unwrap_or(Status::Unknown),
            options,
        )
    };
    let all_current = order.iter().all(|r| status(r) == Status::Current);
    if all_current {
        return Some(Ok(()));
    }
    let any_failed = order.iter().any(|r| status(r) == Status::Failed);
    let terminal = order
        .iter()
        .all(|r| matches!(status(r), Status::Current | Status::Failed));
    if (options.fail_fast && any_failed) || terminal {
        return Some(Err(report(
            "failed early due to stalled resources",
            order,
            statuses,
            options,
            |s| s == Status::Failed,
        )));
    }
    None
}

fn report(
    prefix: &str,
    order: &[ObjectRef],
    statuses: &HashMap<ObjectRef, Status>,
    options: &WaitOptions,
    include: impl Fn(Status) -> bool,
) -> Error {
    let entries: Vec<String> = order
        .iter()
        .filter_map(|r| {
            let s = effective(
                r,
                statuses.get(r).copied().unwrap_or(Status::Unknown),
                options,
            );
            include(s).then(|| format!("{r} status: '{s}'"))
        })
        .collect();
    Error::Wait(format!("{prefix}: [{}]", entries.join(", ")))
}
