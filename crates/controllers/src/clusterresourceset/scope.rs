//! Whether a resource needs applying to a Cluster, and applying its objects, for Cluster API's
//! two strategies: `ApplyOnce` (create; an object that exists counts as applied) and
//! `Reconcile` (create, or a JSON merge patch from the live object to the manifest when the
//! data hash changed).

use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Map, Value};
use tidegate_api::clusterresourceset::{APPLY_ONCE, RECONCILE, ResourceRef, ResourceSetBinding};
use tidegate_apply::error::{code, describe};
use tidegate_apply::resolve::Resolver;

/// Whether `resource`, whose data hashes to `hash`, must be applied under `strategy`; an
/// unknown strategy is an error.
pub fn needs_apply(
    strategy: &str,
    binding: &ResourceSetBinding,
    resource: &ResourceRef,
    hash: &str,
) -> Result<bool, String> {
    match strategy {
        APPLY_ONCE => Ok(!binding.is_applied(resource)),
        RECONCILE => Ok(match binding.get(resource) {
            None => true,
            Some(b) => !b.applied.unwrap_or(false) || b.hash != hash,
        }),
        other => Err(format!("unsupported or empty resource strategy: {other:?}")),
    }
}

/// A workload cluster as the strategies use it.
pub struct Remote {
    /// Its client.
    pub client: kube::Client,
    /// Its discovery.
    pub resolver: Resolver,
    /// Server-side apply into it (`ContinuousApply`), as field manager `clusterresourceset`.
    pub manager: tidegate_apply::ResourceManager,
}

/// `group/version, Kind=kind` as Go prints a GroupVersionKind (`/v1, Kind=ConfigMap`).
fn gvk(obj: &Map<String, Value>) -> String {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let (group, version) = tidegate_core::object_ref::split_api_version(api_version);
    format!("{group}/{version}, Kind={kind}")
}

/// `namespace/name`, or `name` (klog's `KObj`).
fn key(obj: &Map<String, Value>) -> String {
    let meta = obj.get("metadata");
    let name = meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    match meta
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    }
}

fn meta_str<'a>(obj: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

impl Remote {
    /// The API of `obj`'s resource, or the error Go's REST mapper gives for an unknown kind.
    async fn api(&self, obj: &Map<String, Value>) -> Result<kube::Api<DynamicObject>, String> {
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        let (group, version) = tidegate_core::object_ref::split_api_version(api_version);
        let mut target = self
            .resolver
            .resolve(api_version, kind)
            .await
            .map_err(|e| e.to_string())?;
        if target.is_none() {
            // A CRD created moments ago (by this very resource) is found after a refresh.
            self.resolver.refresh().await.map_err(|e| e.to_string())?;
            target = self
                .resolver
                .resolve(api_version, kind)
                .await
                .map_err(|e| e.to_string())?;
        }
        let Some(target) = target else {
            return Err(if group.is_empty() {
                format!("no matches for kind {kind:?} in version {version:?}")
            } else {
                format!("no matches for kind {kind:?} in version \"{group}/{version}\"")
            });
        };
        let namespace = meta_str(obj, "namespace").unwrap_or("default");
        Ok(target.api(&self.client, namespace))
    }

    /// Creates `obj`; with `exists_ok`, an object that already exists is no error.
    async fn create(&self, obj: &Map<String, Value>, exists_ok: bool) -> Result<(), String> {
        let wrap = |e: String| format!("creating object {} {}: {e}", gvk(obj), key(obj));
        let api = self.api(obj).await.map_err(wrap)?;
        let object: DynamicObject =
            serde_json::from_value(Value::Object(obj.clone())).map_err(|e| wrap(e.to_string()))?;
        let params = PostParams {
            field_manager: Some(super::CONTROLLER.into()),
            ..Default::default()
        };
        match api.create(&params, &object).await {
            Ok(_) => Ok(()),
            Err(e) if exists_ok && code(&e) == Some(409) && is_already_exists(&e) => Ok(()),
            Err(e) => Err(wrap(describe(&e))),
        }
    }

    /// `ApplyOnce`: create, an existing object counts as applied.
    pub async fn apply_once(&self, obj: &Map<String, Value>) -> Result<(), String> {
        self.create(obj, true).await
    }

    /// `Reconcile`: create when missing, else a JSON merge patch from the live object to the
    /// manifest (every field the manifest lacks is sent as `null`; the server keeps what it
    /// owns).
    pub async fn reconcile(&self, obj: &Map<String, Value>) -> Result<(), String> {
        let api = self
            .api(obj)
            .await
            .map_err(|e| format!("reading object {} {}: {e}", gvk(obj), key(obj)))?;
        let name = meta_str(obj, "name").unwrap_or("");
        let live = match api.get(name).await {
            Ok(live) => live,
            Err(e) if code(&e) == Some(404) => return self.create(obj, false).await,
            Err(e) => {
                return Err(format!(
                    "reading object {} {}: {}",
                    gvk(obj),
                    key(obj),
                    describe(&e)
                ));
            }
        };
        let live = serde_json::to_value(&live).unwrap_or_default();
        let mut desired = Value::Object(obj.clone());
        if let Some(rv) = live.pointer("/metadata/resourceVersion") {
            desired["metadata"]["resourceVersion"] = rv.clone();
        }
        let patch =
            crate::status::merge_diff(&live, &desired).unwrap_or_else(|| Value::Object(Map::new()));
        api.patch(
            name,
            &PatchParams {
                field_manager: Some(super::CONTROLLER.into()),
                ..Default::default()
            },
            &Patch::Merge(&patch),
        )
        .await
        .map_err(|e| {
            format!(
                "patching object {} {}: {}",
                gvk(obj),
                key(obj),
                describe(&e)
            )
        })?;
        Ok(())
    }
}

fn is_already_exists(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.reason == "AlreadyExists")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tidegate_api::clusterresourceset::ResourceBinding;

    fn cp() -> ResourceRef {
        ResourceRef {
            name: "cp".into(),
            kind: "ConfigMap".into(),
        }
    }

    fn binding(applied: Option<bool>, hash: &str) -> ResourceSetBinding {
        ResourceSetBinding {
            cluster_resource_set_name: "crs".into(),
            resources: vec![ResourceBinding {
                resource: cp(),
                hash: hash.into(),
                applied,
                last_applied_time: None,
            }],
            inventory: None,
        }
    }

    // Cluster API's TestReconcileStrategyScopeNeedsApply and TestReconcileApplyOnceScopeNeedsApply.
    #[test]
    fn needs_apply_tables() {
        let cases: &[(&str, &str, ResourceSetBinding, &str, bool)] = &[
            (
                "no ResourceBinding",
                RECONCILE,
                ResourceSetBinding::default(),
                "",
                true,
            ),
            (
                "not applied ResourceBinding",
                RECONCILE,
                binding(Some(false), ""),
                "",
                true,
            ),
            (
                "applied ResourceBinding and different hash",
                RECONCILE,
                binding(Some(true), "111"),
                "222",
                true,
            ),
            (
                "applied ResourceBinding and same hash",
                RECONCILE,
                binding(Some(true), "111"),
                "111",
                false,
            ),
            (
                "not applied ResourceBinding",
                APPLY_ONCE,
                binding(Some(false), ""),
                "",
                true,
            ),
            (
                "applied ResourceBinding",
                APPLY_ONCE,
                binding(Some(true), ""),
                "",
                false,
            ),
            (
                "applied ResourceBinding, changed data",
                APPLY_ONCE,
                binding(Some(true), "111"),
                "222",
                false,
            ),
        ];
        for (name, strategy, b, hash, want) in cases {
            assert_eq!(
                needs_apply(strategy, b, &cp(), hash).unwrap(),
                *want,
                "{strategy}: {name}"
            );
        }
        assert_eq!(
            needs_apply("", &ResourceSetBinding::default(), &cp(), "").unwrap_err(),
            "unsupported or empty resource strategy: \"\""
        );
    }

    #[test]
    fn go_names() {
        let obj: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": "ns"}}))
        .unwrap();
        assert_eq!(gvk(&obj), "/v1, Kind=ConfigMap");
        assert_eq!(key(&obj), "ns/cm");
        let obj: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "r"}}))
        .unwrap();
        assert_eq!(gvk(&obj), "rbac.authorization.k8s.io/v1, Kind=ClusterRole");
        assert_eq!(key(&obj), "r");
    }
}
