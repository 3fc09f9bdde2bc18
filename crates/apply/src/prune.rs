//! Prune: deleting objects that left the source, in reverse apply order, only when they carry
//! the owner labels and do not opt out.

use crate::changeset::{Action, ChangeSet, ChangeSetEntry};
use crate::error::{Error, describe};
use crate::manager::ResourceManager;
use crate::policy::Policies;
use crate::sort::apply_order;
use kube::api::{DeleteParams, Preconditions, PropagationPolicy};
use tidegate_core::ObjectRef;

/// Delete attempts of one object whose preconditions failed before the prune gives up on it.
const MAX_CONFLICTS: usize = 5;

impl ResourceManager {
    /// Deletes `stale` objects (reference and version, as the inventory records them) in
    /// reverse apply order. An object is deleted only when it carries this manager's owner
    /// labels and is not marked `prune: disabled`, `reconcile: disabled` or `ssa: Ignore`.
    /// Every object gets an entry; failures are collected in one error (Flux's wording) and
    /// the others still proceed.
    pub async fn delete_all(
        &self,
        stale: &[(ObjectRef, String)],
    ) -> (ChangeSet, Result<(), Error>) {
        let mut ordered: Vec<&(ObjectRef, String)> = stale.iter().collect();
        ordered.sort_by(|a, b| apply_order(&b.0, &a.0));
        let mut cs = ChangeSet::default();
        let mut errors = String::new();
        for (r, version) in ordered {
            let (action, error) = self.delete_one(r, version).await;
            if let Some(e) = error {
                errors.push_str(&e);
                errors.push(';');
            }
            cs.entries.push(ChangeSetEntry {
                object: r.clone(),
                version: version.clone(),
                action,
            });
        }
        let result = if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Prune(format!("delete failed, errors: {errors}")))
        };
        (cs, result)
    }

    async fn delete_one(&self, r: &ObjectRef, version: &str) -> (Action, Option<String>) {
        let api_version = if r.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{version}", r.group)
        };
        let target = match self.resolver.resolve(&api_version, &r.kind).await {
            // The kind is no longer served (its CRD is gone): so is the object.
            Ok(None) => return (Action::Deleted, None),
            Ok(Some(t)) => t,
            Err(e) => return (Action::Unknown, Some(format!("{r} query failed: {e}"))),
        };
        let api = target.api(&self.client, &r.namespace);
        // The decision rests on the labels read here; the delete carries that read's uid and
        // resourceVersion as preconditions, so an object another Kustomization took over in
        // between (new owner labels, new resourceVersion) is never deleted. A conflict means
        // the object changed: read it and decide again.
        for _ in 0..MAX_CONFLICTS {
            let live = match api.get_metadata_opt(&r.name).await {
                Ok(None) => return (Action::Deleted, None),
                Ok(Some(m)) => m,
                Err(e) => {
                    return (
                        Action::Unknown,
                        Some(format!("{r} query failed: {}", describe(&e))),
                    );
                }
            };
            let labels = live.metadata.labels.clone().unwrap_or_default();
            if let Some(owner) = &self.options.owner
                && !owner.labels().iter().all(|(k, v)| labels.get(k) == Some(v))
            {
                return (Action::Skipped, None);
            }
            let view = serde_json::json!({"metadata": {
                "labels": live.metadata.labels, "annotations": live.metadata.annotations}});
            let p = Policies::of(&view);
            if p.excluded || p.prune_disabled {
                return (Action::Skipped, None);
            }
            let params = DeleteParams {
                propagation_policy: Some(PropagationPolicy::Background),
                preconditions: Some(Preconditions {
                    uid: live.metadata.uid.clone(),
                    resource_version: live.metadata.resource_version.clone(),
                }),
                ..Default::default()
            };
            match api.delete(&r.name, &params).await {
                Ok(_) => {
                    self.live.observe(&target, &r.namespace, &r.name, None);
                    return (Action::Deleted, None);
                }
                Err(e) if crate::error::is_not_found(&e) => return (Action::Deleted, None),
                Err(e) if crate::error::code(&e) == Some(409) => continue,
                Err(e) => {
                    return (
                        Action::Unknown,
                        Some(format!("{r} delete failed: {}", describe(&e))),
                    );
                }
            }
        }
        (
            Action::Unknown,
            Some(format!(
                "{r} delete failed: the object kept changing ({MAX_CONFLICTS} conflicts)"
            )),
        )
    }
}
