//! Helm's release actions as the Helm 4 SDK runs them for helm-controller: install, upgrade,
//! rollback, uninstall, unlock and test. Each writes its release record first (pending), runs
//! the hooks around the apply, applies with server-side apply through the apply manager, waits
//! by kstatus, and records the outcome as Helm does (`deployed`/`failed`/`superseded`), so
//! `helm history` reads the same story.

use std::collections::HashSet;
use std::time::Duration;

use kube::api::{DeleteParams, PropagationPolicy};
use serde_json::{Map, Value};
use tidegate_apply::{AppliedState, ApplyOptions, ResourceManager, WaitOptions};
use tidegate_core::ObjectRef;
use tidegate_helm::storage::{Info, Release, now_rfc3339, status};

use super::hooks;
use super::render::{Rendered, manifest_objects};
use super::storage::Storage;

/// The field manager of helm-controller's applies.
pub const FIELD_MANAGER: &str = "helm-controller";

/// How an action runs.
#[derive(Debug, Clone)]
pub struct Settings {
    pub timeout: Duration,
    pub wait: bool,
    pub wait_for_jobs: bool,
    pub hooks: bool,
    /// `Skip`, `Create` or `CreateReplace`.
    pub crds: String,
    pub create_namespace: bool,
    pub force: bool,
    pub cleanup_on_fail: bool,
    pub max_history: i64,
    /// `healthCheckExprs` for the waits.
    pub custom_health: Option<std::sync::Arc<tidegate_apply::custom_health::CustomHealth>>,
}

/// A failed action: the message, and whether it wrote a release record (only those count
/// toward remediation).
#[derive(Debug, Clone)]
pub struct ActionError {
    pub message: String,
    pub recorded: bool,
}

impl ActionError {
    /// A failure before any release record was written.
    pub fn before_record(message: impl Into<String>) -> ActionError {
        ActionError {
            message: message.into(),
            recorded: false,
        }
    }
}

/// What the actions work with: the applier (impersonated, owner labels of the HelmRelease),
/// the release storage, and what earlier applies of this release recorded.
pub struct Actor<'a> {
    pub manager: &'a ResourceManager,
    pub storage: &'a Storage,
    pub applied: &'a mut AppliedState,
    /// The worker permit (`--concurrent`) of the reconcile: given back before anything
    /// waits (hooks, health), so a release that waits holds no worker.
    pub permit: &'a mut Option<tokio::sync::OwnedSemaphorePermit>,
}

/// Sets `namespace` on an object that has none (the manager clears it again for
/// cluster-scoped kinds).
pub fn default_namespace(obj: &mut Value, namespace: &str) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let empty = meta
        .get("namespace")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    if empty {
        meta.insert("namespace".into(), Value::String(namespace.to_string()));
    }
}

/// Helm's ownership metadata: `app.kubernetes.io/managed-by: Helm` and the
/// `meta.helm.sh/release-{name,namespace}` annotations.
pub(super) fn set_ownership(obj: &mut Value, name: &str, namespace: &str) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let mut put = |field: &str, k: &str, v: &str| {
        let m = meta
            .entry(field)
            .or_insert_with(|| Value::Object(Map::new()));
        if !m.is_object() {
            *m = Value::Object(Map::new());
        }
        if let Some(m) = m.as_object_mut() {
            m.insert(k.into(), Value::String(v.into()));
        }
    };
    put("labels", "app.kubernetes.io/managed-by", "Helm");
    put("annotations", "meta.helm.sh/release-name", name);
    put("annotations", "meta.helm.sh/release-namespace", namespace);
}

fn object_key(obj: &Value) -> (String, String, String, String) {
    let r = ObjectRef::from_object(obj);
    (r.group, r.kind, r.namespace, r.name)
}

fn keep_policy(obj: &Value) -> bool {
    obj.pointer("/metadata/annotations/helm.sh~1resource-policy")
        .and_then(Value::as_str)
        == Some("keep")
}

impl Actor<'_> {
    /// Applies `objects` of release `name` in `namespace` and waits for them if asked.
    async fn apply(
        &mut self,
        objects: &[Value],
        name: &str,
        namespace: &str,
        settings: &Settings,
    ) -> Result<(), String> {
        let objects: Vec<Value> = objects
            .iter()
            .cloned()
            .map(|mut o| {
                default_namespace(&mut o, namespace);
                set_ownership(&mut o, name, namespace);
                o
            })
            .collect();
        let apply_options = ApplyOptions {
            force: settings.force,
            dry_run: false,
            stage_timeout: settings.timeout,
        };
        // Boxed, as the wait below: a waiting release keeps only the futures it is in.
        let cs = Box::pin(
            self.manager
                .apply_all_staged(objects, &apply_options, self.applied),
        )
        .await
        .map_err(|e| e.to_string())?;
        if !settings.wait {
            return Ok(());
        }
        *self.permit = None;
        let refs: Vec<(ObjectRef, String)> = cs
            .entries
            .iter()
            .filter(|e| settings.wait_for_jobs || e.object.kind != "Job")
            .map(|e| (e.object.clone(), e.api_version()))
            .collect();
        let options = WaitOptions {
            timeout: settings.timeout,
            fail_fast: true,
            ttl_jobs: Default::default(),
            min_versions: self.applied.written_versions(&cs),
            custom: settings.custom_health.clone(),
        };
        Box::pin(self.manager.wait(&refs, &options))
            .await
            .map_err(|e| e.to_string())
    }

    /// Deletes `objects` (Helm's uninstall order: reverse install order), leaving those with
    /// `helm.sh/resource-policy: keep`. Errors are collected.
    async fn delete_objects(
        &self,
        objects: &[Value],
        namespace: &str,
        propagation: PropagationPolicy,
    ) -> Result<(), String> {
        let mut objects: Vec<Value> = objects.to_vec();
        objects.reverse();
        let mut errors = Vec::new();
        for mut obj in objects {
            if keep_policy(&obj) {
                continue;
            }
            default_namespace(&mut obj, namespace);
            let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
            let r = ObjectRef::from_object(&obj);
            let target = match self.manager.target(api_version, &r.kind).await {
                Ok(Some(t)) => t,
                Ok(None) => continue,
                Err(e) => {
                    errors.push(e.to_string());
                    continue;
                }
            };
            let api = target.api(self.manager.client(), &r.namespace);
            let params = DeleteParams {
                propagation_policy: Some(propagation.clone()),
                ..Default::default()
            };
            match api.delete(&r.name, &params).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => errors.push(format!("{r}: {}", tidegate_apply::error::describe(&e))),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    async fn crds(
        &mut self,
        rendered: &Rendered,
        policy: &str,
        timeout: Duration,
    ) -> Result<(), String> {
        if rendered.crds.is_empty() || policy == "Skip" {
            return Ok(());
        }
        let mut crds = rendered.crds.clone();
        if policy == "Create" {
            // Only the CRDs the cluster does not have yet.
            let mut missing = Vec::new();
            for crd in crds {
                let name = crd
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let api: kube::Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
                    kube::Api::all(self.manager.client().clone());
                match api.get_opt(name).await {
                    Ok(Some(_)) => {}
                    Ok(None) => missing.push(crd),
                    Err(e) => return Err(format!("failed to get CRD {name}: {e}")),
                }
            }
            crds = missing;
        }
        if crds.is_empty() {
            return Ok(());
        }
        self.manager
            .apply_all_staged(
                crds,
                &ApplyOptions {
                    force: true,
                    dry_run: false,
                    stage_timeout: timeout,
                },
                self.applied,
            )
            .await
            .map_err(|e| format!("failed to create CustomResourceDefinitions: {e}"))?;
        self.manager
            .refresh_discovery()
            .await
            .map_err(|e| e.to_string())
    }

    async fn ensure_namespace(&self, namespace: &str) -> Result<(), String> {
        let api: kube::Api<k8s_openapi::api::core::v1::Namespace> =
            kube::Api::all(self.manager.client().clone());
        if api
            .get_opt(namespace)
            .await
            .map_err(|e| e.to_string())?
            .is_some()
        {
            return Ok(());
        }
        let ns = k8s_openapi::api::core::v1::Namespace {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(namespace.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        match api.create(&Default::default(), &ns).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
            Err(e) => Err(format!("failed to create namespace {namespace}: {e}")),
        }
    }

    /// Records `r` as failed with `description`, returning the error to report.
    async fn fail(&self, r: &mut Release, description: String) -> ActionError {
        r.info.status = status::FAILED.into();
        r.info.description = description.clone();
        r.info.last_deployed = Some(now_rfc3339());
        if let Err(e) = self.storage.update(r).await {
            tracing::warn!(error = %e, release = %r.name, "recording a failed release");
        }
        ActionError {
            message: description,
            recorded: true,
        }
    }

    /// The body of install, upgrade and rollback: `pre-<event>` hooks, the apply, the objects
    /// of `previous` that left deleted, `post-<event>` hooks.
    #[allow(clippy::too_many_arguments)]
    async fn perform(
        &mut self,
        hook_records: &mut [tidegate_helm::storage::HookRecord],
        event: &str,
        objects: &[Value],
        previous: &[Value],
        name: &str,
        namespace: &str,
        settings: &Settings,
    ) -> Result<(), String> {
        if settings.hooks {
            let pre = format!("pre-{event}");
            if hook_records.iter().any(|h| h.runs_on(&pre)) {
                *self.permit = None;
            }
            Box::pin(hooks::run(
                self.manager,
                hook_records,
                &pre,
                namespace,
                settings.timeout,
            ))
            .await?;
        }
        Box::pin(self.apply(objects, name, namespace, settings)).await?;
        if !previous.is_empty() {
            Box::pin(self.remove_stale(previous, objects, namespace)).await?;
        }
        if settings.hooks {
            let post = format!("post-{event}");
            Box::pin(hooks::run(
                self.manager,
                hook_records,
                &post,
                namespace,
                settings.timeout,
            ))
            .await?;
        }
        Ok(())
    }

    /// `helm install`: a new release `version` from `target` (chart, config, rendered).
    pub async fn install(
        &mut self,
        mut target: Release,
        rendered: &Rendered,
        settings: &Settings,
    ) -> Result<Release, ActionError> {
        let name = target.name.clone();
        let namespace = target.namespace.clone();
        if settings.create_namespace {
            self.ensure_namespace(&namespace)
                .await
                .map_err(ActionError::before_record)?;
        }
        self.crds(rendered, &settings.crds, settings.timeout)
            .await
            .map_err(ActionError::before_record)?;
        let now = now_rfc3339();
        target.info = Info {
            first_deployed: Some(now.clone()),
            last_deployed: Some(now),
            status: status::PENDING_INSTALL.into(),
            description: "Initial install underway".into(),
            notes: rendered.notes.clone(),
            ..Default::default()
        };
        self.storage
            .create(&target)
            .await
            .map_err(|e| ActionError::before_record(format!("failed to record release: {e}")))?;
        let result = self
            .perform(
                &mut target.hooks,
                "install",
                &rendered.objects,
                &[],
                &name,
                &namespace,
                settings,
            )
            .await;
        if let Err(e) = result {
            return Err(self
                .fail(&mut target, format!("Release \"{name}\" failed: {e}"))
                .await);
        }
        target.info.status = status::DEPLOYED.into();
        target.info.description = "Install complete".into();
        self.storage
            .update(&target)
            .await
            .map_err(|e| ActionError {
                message: e,
                recorded: true,
            })?;
        Ok(target)
    }

    /// `helm upgrade` from `current` (the deployed release, if any) and the newest record
    /// `last` to `target`.
    pub async fn upgrade(
        &mut self,
        current: Option<Release>,
        last: &Release,
        mut target: Release,
        rendered: &Rendered,
        settings: &Settings,
    ) -> Result<Release, ActionError> {
        let name = target.name.clone();
        let namespace = target.namespace.clone();
        self.crds(rendered, &settings.crds, settings.timeout)
            .await
            .map_err(ActionError::before_record)?;
        let now = now_rfc3339();
        target.version = last.version + 1;
        target.info = Info {
            first_deployed: current
                .as_ref()
                .and_then(|c| c.info.first_deployed.clone())
                .or_else(|| last.info.first_deployed.clone())
                .or_else(|| Some(now.clone())),
            last_deployed: Some(now),
            status: status::PENDING_UPGRADE.into(),
            description: "Preparing upgrade".into(),
            notes: rendered.notes.clone(),
            ..Default::default()
        };
        self.storage
            .create(&target)
            .await
            .map_err(|e| ActionError::before_record(format!("failed to record release: {e}")))?;
        let previous_objects = current
            .as_ref()
            .map(|c| manifest_objects(&c.manifest))
            .unwrap_or_default();
        let result = self
            .perform(
                &mut target.hooks,
                "upgrade",
                &rendered.objects,
                &previous_objects,
                &name,
                &namespace,
                settings,
            )
            .await;
        if let Err(e) = result {
            let mut message = format!("Upgrade \"{name}\" failed: {e}");
            if settings.cleanup_on_fail {
                // Objects this upgrade created (not in the previous release) are removed.
                let created: Vec<Value> = rendered
                    .objects
                    .iter()
                    .filter(|o| {
                        let mut o = (*o).clone();
                        default_namespace(&mut o, &namespace);
                        !previous_objects.iter().any(|p| {
                            let mut p = p.clone();
                            default_namespace(&mut p, &namespace);
                            object_key(&p) == object_key(&o)
                        })
                    })
                    .cloned()
                    .collect();
                if let Err(ce) = self
                    .delete_objects(&created, &namespace, PropagationPolicy::Background)
                    .await
                {
                    message.push_str(&format!(": an error occurred while cleaning up resources. original upgrade error: {e}: {ce}"));
                }
            }
            return Err(self.fail(&mut target, message).await);
        }
        if let Some(mut c) = current {
            c.info.status = status::SUPERSEDED.into();
            c.info.description = "Superseded".into();
            if let Err(e) = self.storage.update(&c).await {
                tracing::warn!(error = %e, release = %name, "superseding the previous release");
            }
        }
        target.info.status = status::DEPLOYED.into();
        target.info.description = "Upgrade complete".into();
        self.storage
            .update(&target)
            .await
            .map_err(|e| ActionError {
                message: e,
                recorded: true,
            })?;
        self.storage
            .prune(&name, settings.max_history)
            .await
            .map_err(|e| ActionError {
                message: e,
                recorded: true,
            })?;
        Ok(target)
    }

    /// Deletes the objects of `before` that `after` no longer has.
    async fn remove_stale(
        &self,
        before: &[Value],
        after: &[Value],
        namespace: &str,
    ) -> Result<(), String> {
        let keyed = |objs: &[Value]| -> HashSet<(String, String, String, String)> {
            objs.iter()
                .cloned()
                .map(|mut o| {
                    default_namespace(&mut o, namespace);
                    object_key(&o)
                })
                .collect()
        };
        let keep = keyed(after);
        let stale: Vec<Value> = before
            .iter()
            .filter(|o| {
                let mut o = (*o).clone();
                default_namespace(&mut o, namespace);
                !keep.contains(&object_key(&o))
            })
            .cloned()
            .collect();
        self.delete_objects(&stale, namespace, PropagationPolicy::Background)
            .await
            .map_err(|e| format!("failed to delete resources: {e}"))
    }

    /// `helm rollback` from `last` to `target` (an earlier release).
    pub async fn rollback(
        &mut self,
        current: Option<Release>,
        last: &Release,
        target: &Release,
        settings: &Settings,
    ) -> Result<Release, ActionError> {
        let name = target.name.clone();
        let namespace = target.namespace.clone();
        let now = now_rfc3339();
        let mut next = target.clone();
        next.version = last.version + 1;
        next.info = Info {
            first_deployed: last.info.first_deployed.clone(),
            last_deployed: Some(now),
            status: status::PENDING_ROLLBACK.into(),
            description: format!("Rollback to {}", target.version),
            notes: target.info.notes.clone(),
            rollback_revision: target.version,
            ..Default::default()
        };
        for h in &mut next.hooks {
            h.last_run = Default::default();
        }
        self.storage
            .create(&next)
            .await
            .map_err(|e| ActionError::before_record(format!("failed to record release: {e}")))?;
        let objects = manifest_objects(&next.manifest);
        let previous_objects = manifest_objects(&last.manifest);
        let result = self
            .perform(
                &mut next.hooks,
                "rollback",
                &objects,
                &previous_objects,
                &name,
                &namespace,
                settings,
            )
            .await;
        if let Err(e) = result {
            return Err(self
                .fail(&mut next, format!("Rollback \"{name}\" failed: {e}"))
                .await);
        }
        for mut r in [current, Some(last.clone())].into_iter().flatten() {
            if r.version == next.version || r.info.status == status::SUPERSEDED {
                continue;
            }
            r.info.status = status::SUPERSEDED.into();
            if let Err(e) = self.storage.update(&r).await {
                tracing::warn!(error = %e, release = %name, "superseding after rollback");
            }
        }
        next.info.status = status::DEPLOYED.into();
        self.storage.update(&next).await.map_err(|e| ActionError {
            message: e,
            recorded: true,
        })?;
        self.storage
            .prune(&name, settings.max_history)
            .await
            .map_err(|e| ActionError {
                message: e,
                recorded: true,
            })?;
        Ok(next)
    }

    /// `helm uninstall` of `last`: hooks, objects deleted, records deleted (or kept as
    /// `uninstalled` with `keep_history`).
    pub async fn uninstall(
        &mut self,
        mut last: Release,
        settings: &Settings,
        keep_history: bool,
        propagation: PropagationPolicy,
    ) -> Result<(), ActionError> {
        let name = last.name.clone();
        let namespace = last.namespace.clone();
        last.info.status = status::UNINSTALLING.into();
        last.info.deleted = Some(now_rfc3339());
        self.storage
            .update(&last)
            .await
            .map_err(ActionError::before_record)?;
        let result = async {
            if settings.hooks {
                hooks::run(
                    self.manager,
                    &mut last.hooks,
                    "pre-delete",
                    &namespace,
                    settings.timeout,
                )
                .await?;
            }
            let objects = manifest_objects(&last.manifest);
            self.delete_objects(&objects, &namespace, propagation)
                .await?;
            if settings.hooks {
                hooks::run(
                    self.manager,
                    &mut last.hooks,
                    "post-delete",
                    &namespace,
                    settings.timeout,
                )
                .await?;
            }
            Ok::<(), String>(())
        }
        .await;
        if let Err(e) = result {
            let message = format!("uninstallation completed with 1 error(s): {e}");
            last.info.description = message.clone();
            let _ = self.storage.update(&last).await;
            return Err(ActionError {
                message,
                recorded: true,
            });
        }
        *self.applied = AppliedState::default();
        if keep_history {
            last.info.status = status::UNINSTALLED.into();
            last.info.description = "Uninstallation complete".into();
            return self.storage.update(&last).await.map_err(|e| ActionError {
                message: e,
                recorded: true,
            });
        }
        for r in self
            .storage
            .history(&name)
            .await
            .map_err(ActionError::before_record)?
        {
            self.storage
                .delete(&r.name, r.version)
                .await
                .map_err(ActionError::before_record)?;
        }
        Ok(())
    }

    /// `helm test`: the release's test hooks, their phases recorded on the release.
    pub async fn test(
        &mut self,
        mut r: Release,
        timeout: Duration,
        filter: impl Fn(&str) -> bool,
    ) -> Result<Release, (Release, String)> {
        let namespace = r.namespace.clone();
        let mut selected: Vec<usize> = (0..r.hooks.len())
            .filter(|&i| r.hooks[i].runs_on("test") && filter(&r.hooks[i].name))
            .collect();
        selected.sort();
        let mut subset: Vec<_> = selected.iter().map(|&i| r.hooks[i].clone()).collect();
        let outcome = hooks::run(self.manager, &mut subset, "test", &namespace, timeout).await;
        for (i, h) in selected.into_iter().zip(subset) {
            r.hooks[i] = h;
        }
        if let Err(e) = self.storage.update(&r).await {
            return Err((r, e));
        }
        match outcome {
            Ok(()) => Ok(r),
            Err(e) => Err((r, e)),
        }
    }
}

/// Helm's unlock as helm-controller runs it: a release stuck in a pending state is marked
/// failed.
pub async fn unlock(storage: &Storage, mut r: Release) -> Result<Release, String> {
    r.info.status = status::FAILED.into();
    r.info.description = "Release unlocked from stale state".into();
    storage.update(&r).await?;
    Ok(r)
}
