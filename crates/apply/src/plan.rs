//! One object through the apply: decide what to do (the validation phase, dry-run only) and
//! then do it.

use crate::changeset::Action;
use crate::error::{Error, describe, dry_run_failed, is_immutable, is_not_found};
use crate::live::Live;
use crate::manager::{ApplyOptions, Owner, ResourceManager};
use crate::policy::Policies;
use crate::resolve::Target;
use crate::sort::Stage;
use crate::state::AppliedState;
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, PropagationPolicy};
use serde_json::Value;
use std::time::Duration;
use tidegate_core::ObjectRef;

/// An object on its way to the cluster.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    /// The desired object, normalised and labelled.
    pub obj: Value,
    /// Its reference (namespace cleared for cluster-scoped kinds).
    pub object: ObjectRef,
    /// `apiVersion`.
    pub api_version: String,
    /// The version part of `apiVersion`.
    pub version: String,
    /// The resource serving it; `None` while its CRD is not yet served.
    pub target: Option<Target>,
    /// The desired-state hash.
    pub hash: String,
    /// Its inventory id.
    pub id: String,
    /// The policies it declares.
    pub policies: Policies,
    /// Its stage.
    pub stage: Stage,
}

/// What will be done with one object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Plan {
    /// Nothing to write; the live object has this resourceVersion.
    Unchanged { resource_version: String },
    /// A policy leaves it alone.
    Skipped,
    /// Apply it; first send the ownership-takeover patch when there is one. `from`: another
    /// owner's labels were on the live object at this resourceVersion; the apply then only
    /// succeeds if the object is still that version (so an apply racing its rightful owner's
    /// loses instead of stealing the object back), and the owner is reported.
    Apply {
        action: Action,
        takeover: Option<Value>,
        from: Option<(Owner, String)>,
    },
    /// Delete it, wait until it is gone, then create it (immutable change with force).
    Recreate,
    /// Validated later, when its Namespace or CRD exists.
    Deferred,
}

/// Whether applying would change the live object: labels, annotations, or anything outside
/// `metadata` and `status` (Flux's comparison of the dry-run result with the live object).
pub(crate) fn drifted(live: &Value, dry: &Value) -> bool {
    for field in ["labels", "annotations"] {
        let a = live.pointer(&format!("/metadata/{field}"));
        let b = dry.pointer(&format!("/metadata/{field}"));
        if !semantic_eq(a, b) {
            return true;
        }
    }
    let strip = |o: &Value| {
        let mut m = o.as_object().cloned().unwrap_or_default();
        m.remove("metadata");
        m.remove("status");
        Value::Object(m)
    };
    !semantic_eq(Some(&strip(live)), Some(&strip(dry)))
}

/// Equality where a missing value, `null` and an empty map or list are the same.
fn semantic_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    let empty = |v: Option<&Value>| match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    };
    if empty(a) && empty(b) {
        return true;
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => x
            .keys()
            .chain(y.keys())
            .all(|k| semantic_eq(x.get(k), y.get(k))),
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| semantic_eq(Some(p), Some(q)))
        }
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn to_value(obj: DynamicObject) -> Value {
    serde_json::to_value(obj).unwrap_or(Value::Null)
}

fn rv_of(obj: &Value) -> String {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

impl ResourceManager {
    fn patch_params(&self, dry_run: bool) -> PatchParams {
        let mut p = PatchParams::apply(&self.options.field_manager).force();
        p.dry_run = dry_run;
        p
    }

    fn target_of<'a>(&self, item: &'a Item) -> Result<&'a Target, Error> {
        item.target.as_ref().ok_or_else(|| {
            Error::Object(format!(
                "{} dry-run failed: no matches for kind \"{}\" in version \"{}\"",
                item.object, item.object.kind, item.api_version
            ))
        })
    }

    /// Server-side apply of the desired object, as a dry run or for real.
    async fn server_apply(
        &self,
        item: &Item,
        target: &Target,
        dry_run: bool,
    ) -> Result<Value, kube::Error> {
        let api = target.api(&self.client, &item.object.namespace);
        api.patch(
            &item.object.name,
            &self.patch_params(dry_run),
            &Patch::Apply(&item.obj),
        )
        .await
        .map(to_value)
    }

    /// Server-side apply of the desired object on the condition that the live object is still
    /// at `resource_version` (kube-apiserver answers 409 otherwise).
    async fn server_apply_at(
        &self,
        item: &Item,
        target: &Target,
        resource_version: &str,
    ) -> Result<Value, kube::Error> {
        let mut obj = item.obj.clone();
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert(
                "resourceVersion".into(),
                Value::String(resource_version.to_string()),
            );
        }
        let api = target.api(&self.client, &item.object.namespace);
        api.patch(
            &item.object.name,
            &self.patch_params(false),
            &Patch::Apply(&obj),
        )
        .await
        .map(to_value)
    }

    /// Decides what to do with `item`, writing nothing.
    pub(crate) async fn plan(
        &self,
        item: &Item,
        options: &ApplyOptions,
        state: &AppliedState,
    ) -> Result<Plan, Error> {
        if item.policies.excluded {
            return Ok(Plan::Skipped);
        }
        let target = self.target_of(item)?;
        let live = self
            .live
            .get(target, &item.object.namespace, &item.object.name);
        if let Live::Present(l) = &live {
            if l.policies.excluded || item.policies.if_not_present {
                return Ok(Plan::Skipped);
            }
            if let Some(record) = state.objects.get(&item.id)
                && record.hash == item.hash
                && record.resource_version == l.resource_version
            {
                return Ok(Plan::Unchanged {
                    resource_version: l.resource_version.clone(),
                });
            }
        }
        let existing = match live {
            Live::Absent => None,
            _ => {
                let api = target.api(&self.client, &item.object.namespace);
                api.get_opt(&item.object.name)
                    .await
                    .map_err(|e| {
                        Error::Object(format!("{} query failed: {}", item.object, describe(&e)))
                    })?
                    .map(to_value)
            }
        };
        let live_policies = existing.as_ref().map(Policies::of).unwrap_or_default();
        if existing.is_some() && (live_policies.excluded || item.policies.if_not_present) {
            return Ok(Plan::Skipped);
        }
        let policies = item.policies.either(live_policies);
        let dry = match self.server_apply(item, target, true).await {
            Ok(dry) => dry,
            Err(e)
                if existing.is_some() && is_immutable(&e) && (options.force || policies.force) =>
            {
                return Ok(Plan::Recreate);
            }
            Err(e) => return Err(dry_run_failed(&item.object.to_string(), &e)),
        };
        let Some(existing) = existing else {
            return Ok(Plan::Apply {
                action: Action::Created,
                takeover: None,
                from: None,
            });
        };
        let from = self
            .options
            .owner
            .as_ref()
            .and_then(|o| o.other_in(&existing))
            .map(|o| (o, rv_of(&existing)));
        let takeover = if policies.merge {
            None
        } else {
            crate::takeover::takeover_patch(
                &existing,
                &self.options.takeover,
                &self.options.field_manager,
            )
        };
        if takeover.is_some() || from.is_some() || drifted(&existing, &dry) {
            Ok(Plan::Apply {
                action: Action::Configured,
                takeover,
                from,
            })
        } else {
            Ok(Plan::Unchanged {
                resource_version: rv_of(&existing),
            })
        }
    }

    /// Carries out a plan: the action and, when something is now known about the live
    /// object, its resourceVersion.
    pub(crate) async fn carry_out(
        &self,
        item: &Item,
        plan: Option<Plan>,
        options: &ApplyOptions,
    ) -> Result<crate::manager::Outcome, Error> {
        let subject = item.object.to_string();
        let plan = plan.unwrap_or(Plan::Deferred);
        if options.dry_run {
            return Ok(match plan {
                Plan::Unchanged { resource_version } => (Action::Unchanged, Some(resource_version)),
                Plan::Skipped => (Action::Skipped, None),
                Plan::Apply { action, .. } => (action, None),
                Plan::Recreate | Plan::Deferred => (Action::Created, None),
            });
        }
        let target = self.target_of(item)?;
        let api = target.api(&self.client, &item.object.namespace);
        let action = match plan {
            Plan::Unchanged { resource_version } => {
                return Ok((Action::Unchanged, Some(resource_version)));
            }
            Plan::Skipped => return Ok((Action::Skipped, None)),
            Plan::Deferred => {
                return Err(Error::Object(format!("{subject} was not validated")));
            }
            Plan::Recreate => {
                self.delete_and_wait(item, target, options).await?;
                Action::Created
            }
            Plan::Apply {
                action,
                takeover,
                from,
            } => {
                let mut expected = from.as_ref().map(|(_, rv)| rv.clone());
                if let Some(patch) = takeover {
                    let patch: json_patch::Patch = serde_json::from_value(patch)
                        .map_err(|e| Error::Object(format!("{subject} ownership takeover: {e}")))?;
                    let params = PatchParams {
                        field_manager: Some(self.options.field_manager.clone()),
                        ..Default::default()
                    };
                    let patched = api
                        .patch(&item.object.name, &params, &Patch::Json::<()>(patch))
                        .await
                        .map_err(|e| {
                            Error::Object(format!(
                                "{subject} ownership takeover failed: {}",
                                describe(&e)
                            ))
                        })?;
                    if expected.is_some() {
                        expected = patched.metadata.resource_version.clone();
                    }
                }
                if let Some(rv) = expected {
                    let applied = self
                        .server_apply_at(item, target, &rv)
                        .await
                        .map_err(|e| {
                            let owner = from.as_ref().map(|(o, _)| o);
                            Error::Object(format!(
                                "{subject} apply failed: the object changed while it was being taken over from {}/{}: {}",
                                owner.map_or("", |o| o.namespace.as_str()),
                                owner.map_or("", |o| o.name.as_str()),
                                describe(&e)
                            ))
                        })?;
                    if let Some((owner, _)) = from {
                        self.taken_from
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(owner);
                    }
                    self.live.observe(
                        target,
                        &item.object.namespace,
                        &item.object.name,
                        Some(&applied),
                    );
                    return Ok((action, Some(rv_of(&applied))));
                }
                action
            }
        };
        let applied = self
            .server_apply(item, target, false)
            .await
            .map_err(|e| Error::Object(format!("{subject} apply failed: {}", describe(&e))))?;
        self.live.observe(
            target,
            &item.object.namespace,
            &item.object.name,
            Some(&applied),
        );
        Ok((action, Some(rv_of(&applied))))
    }

    /// Deletes the live object and waits until it is gone (an immutable change with force).
    async fn delete_and_wait(
        &self,
        item: &Item,
        target: &Target,
        options: &ApplyOptions,
    ) -> Result<(), Error> {
        let subject = item.object.to_string();
        let api = target.api(&self.client, &item.object.namespace);
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..Default::default()
        };
        if let Err(e) = api.delete(&item.object.name, &params).await
            && !is_not_found(&e)
        {
            return Err(Error::Object(format!(
                "{subject} immutable field detected, failed to delete object: {}",
                describe(&e)
            )));
        }
        let deadline = tokio::time::Instant::now() + options.stage_timeout;
        loop {
            match api.get_metadata_opt(&item.object.name).await {
                Ok(None) => break,
                Ok(Some(_)) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Ok(Some(_)) => {
                    return Err(Error::Object(format!(
                        "{subject} immutable field detected, failed to wait for object to be deleted: timeout"
                    )));
                }
                Err(e) => {
                    return Err(Error::Object(format!(
                        "{subject} immutable field detected, failed to wait for object to be deleted: {}",
                        describe(&e)
                    )));
                }
            }
        }
        self.live
            .observe(target, &item.object.namespace, &item.object.name, None);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drift_ignores_bookkeeping() {
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "resourceVersion": "5", "managedFields": [], "labels": {}},
            "data": {"a": "1"}});
        let same = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "resourceVersion": "5"}, "data": {"a": "1"}, "status": {}});
        assert!(!drifted(&live, &same));
        let changed = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a"}, "data": {"a": "2"}});
        assert!(drifted(&live, &changed));
        let labelled = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"x": "y"}}, "data": {"a": "1"}});
        assert!(drifted(&live, &labelled));
    }
}
