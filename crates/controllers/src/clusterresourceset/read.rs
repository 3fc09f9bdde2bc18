//! Reading a ClusterResourceSet's ConfigMaps and Secrets, as Cluster API does: in order, a
//! missing one skipped, a Secret of another type refused, each made owned by the set.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::json;
use tidegate_api::ClusterResourceSet;
use tidegate_api::clusterresourceset::{
    API_VERSION, INTERNAL_ERROR_MESSAGE, INTERNAL_ERROR_REASON, KIND, ResourceRef, SECRET_TYPE,
    WRONG_SECRET_TYPE_REASON, v1beta1_reasons,
};
use tidegate_apply::error::{code, describe};

use super::Context;
use super::outcome::{Applied, Outcome};

/// Cluster API's error for a Secret of another type.
const SECRET_TYPE_NOT_SUPPORTED: &str = "unsupported secret type";

/// A ConfigMap or Secret as read: its data values by key (Secret values decoded).
pub(super) struct Source {
    pub(super) reference: ResourceRef,
    pub(super) data: Option<BTreeMap<String, Vec<u8>>>,
    pub(super) key: String,
}

/// The owner reference a ConfigMap, Secret or binding gets.
pub(super) fn owner_ref(crs: &ClusterResourceSet) -> OwnerReference {
    OwnerReference {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        name: crs.name_any(),
        uid: crs.uid().unwrap_or_default(),
        ..Default::default()
    }
}

/// `refs` with `owner` replacing the reference of the same group, kind and name, or added
/// (`util.EnsureOwnerRef`).
pub(super) fn ensure_owner_ref(
    refs: &[OwnerReference],
    owner: &OwnerReference,
) -> Vec<OwnerReference> {
    let group = |v: &str| {
        v.split_once('/')
            .map(|(g, _)| g.to_string())
            .unwrap_or_default()
    };
    let mut out = refs.to_vec();
    match out.iter_mut().find(|r| {
        group(&r.api_version) == group(&owner.api_version)
            && r.kind == owner.kind
            && r.name == owner.name
    }) {
        Some(r) => *r = owner.clone(),
        None => out.push(owner.clone()),
    }
    out
}

/// Reads the ConfigMaps and Secrets (a missing one is skipped) and makes the set their owner.
/// The errors end the reconcile before any Cluster is touched.
pub(super) async fn read_resources(
    crs: &ClusterResourceSet,
    ctx: &Context,
) -> Result<Vec<Option<Source>>, Outcome> {
    let ns = crs.namespace().unwrap_or_default();
    let owner = owner_ref(crs);
    let mut outcome = Outcome::default();
    let mut read = Vec::new();
    for r in &crs.spec.resources {
        let key = format!("{ns}/{}", r.name);
        let got = match r.kind.as_str() {
            "Secret" => {
                let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &ns);
                api.get(&r.name).await.map(|s| {
                    let wrong_type = s.type_.as_deref() != Some(SECRET_TYPE);
                    let data = s.data.as_ref().map(|d| {
                        d.iter()
                            .map(|(k, v)| (k.clone(), v.0.clone()))
                            .collect::<BTreeMap<_, _>>()
                    });
                    (wrong_type, data, s.metadata)
                })
            }
            _ => {
                let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
                api.get(&r.name).await.map(|c| {
                    let data = c.data.as_ref().map(|d| {
                        d.iter()
                            .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
                            .collect::<BTreeMap<_, _>>()
                    });
                    (false, data, c.metadata)
                })
            }
        };
        match got {
            Ok((true, _, _)) => {
                outcome.applied = Some(Applied::failed(
                    WRONG_SECRET_TYPE_REASON,
                    &format!("Secret type of resource {} is not supported", r.name),
                    v1beta1_reasons::WRONG_SECRET_TYPE,
                    "Warning",
                    SECRET_TYPE_NOT_SUPPORTED.into(),
                ));
                outcome
                    .errors
                    .push(format!("Secret {key}: {SECRET_TYPE_NOT_SUPPORTED}"));
                read.push(None);
            }
            Ok((false, data, meta)) => {
                let refs = meta.owner_references.clone().unwrap_or_default();
                let wanted = ensure_owner_ref(&refs, &owner);
                if wanted != refs {
                    let patch = json!({"metadata": {"ownerReferences": wanted}});
                    let result = if r.kind == "Secret" {
                        Api::<Secret>::namespaced(ctx.client.clone(), &ns)
                            .patch(&r.name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await
                            .map(|_| ())
                    } else {
                        Api::<ConfigMap>::namespaced(ctx.client.clone(), &ns)
                            .patch(&r.name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await
                            .map(|_| ())
                    };
                    if let Err(e) = result {
                        outcome.errors.push(format!(
                            "adding the ClusterResourceSet as owner of {} {key}: {}",
                            r.kind,
                            describe(&e)
                        ));
                    }
                }
                read.push(Some(Source {
                    reference: r.clone(),
                    data,
                    key,
                }));
            }
            Err(e) => {
                let message = format!("{} {key}: {}", r.kind, describe(&e));
                outcome.applied = Some(Applied::failed(
                    INTERNAL_ERROR_REASON,
                    INTERNAL_ERROR_MESSAGE,
                    v1beta1_reasons::RETRIEVING_RESOURCE_FAILED,
                    "Warning",
                    message.clone(),
                ));
                // A resource not created yet is no error: its creation wakes the set.
                if code(&e) != Some(404) {
                    outcome.errors.push(message);
                }
                read.push(None);
            }
        }
    }
    if outcome.errors.is_empty() {
        // Cluster API records the missing resource's condition and carries on; the
        // condition is then replaced by the Clusters' outcome.
        return Ok(read);
    }
    Err(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_refs_are_replaced_by_group_kind_and_name() {
        let mut owner = OwnerReference {
            api_version: "addons.cluster.x-k8s.io/v1beta2".into(),
            kind: "ClusterResourceSet".into(),
            name: "crs".into(),
            uid: "new".into(),
            ..Default::default()
        };
        let old = OwnerReference {
            api_version: "addons.cluster.x-k8s.io/v1beta1".into(),
            uid: "old".into(),
            ..owner.clone()
        };
        let other = OwnerReference {
            name: "other".into(),
            ..owner.clone()
        };
        let out = ensure_owner_ref(&[old, other.clone()], &owner);
        assert_eq!(out, vec![owner.clone(), other.clone()]);
        owner.name = "third".into();
        assert_eq!(
            ensure_owner_ref(std::slice::from_ref(&other), &owner).len(),
            2
        );
    }
}
