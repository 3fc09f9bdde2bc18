//! The toolkit finalizer (`finalizers.fluxcd.io`): added before a controller acts on an
//! object, removed once its clean-up is done. Writes are guarded by the resourceVersion.

use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tidegate_api::meta::FINALIZER;

/// Whether `obj` carries the toolkit finalizer.
pub fn has<K: Resource>(obj: &K) -> bool {
    has_named(obj, FINALIZER)
}

/// Whether `obj` carries `finalizer`.
pub fn has_named<K: Resource>(obj: &K, finalizer: &str) -> bool {
    obj.finalizers().iter().any(|f| f == finalizer)
}

/// Adds the finalizer when missing; the object as written is recorded in `versions`.
pub async fn add<K>(api: &Api<K>, obj: &K, versions: &crate::fresh::Versions) -> Result<(), String>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    add_named(api, obj, versions, FINALIZER).await
}

/// Adds `finalizer` when missing (source-watcher has its own).
pub async fn add_named<K>(
    api: &Api<K>,
    obj: &K,
    versions: &crate::fresh::Versions,
    finalizer: &str,
) -> Result<(), String>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    if has_named(obj, finalizer) {
        return Ok(());
    }
    let mut finalizers = obj.finalizers().to_vec();
    finalizers.push(finalizer.to_string());
    let written = write(api, obj, finalizers)
        .await
        .map_err(|e| format!("adding finalizer: {e}"))?;
    versions.record(&written);
    Ok(())
}

/// Removes the finalizer; an object already gone is fine.
pub async fn remove<K>(api: &Api<K>, obj: &K) -> Result<(), String>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    remove_named(api, obj, FINALIZER).await
}

/// Removes `finalizer`; an object already gone is fine.
pub async fn remove_named<K>(api: &Api<K>, obj: &K, finalizer: &str) -> Result<(), String>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let finalizers: Vec<String> = obj
        .finalizers()
        .iter()
        .filter(|f| *f != finalizer)
        .cloned()
        .collect();
    match write(api, obj, finalizers).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(format!("removing finalizer: {e}")),
    }
}

async fn write<K>(api: &Api<K>, obj: &K, finalizers: Vec<String>) -> Result<K, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let patch = serde_json::json!({"metadata": {
        "finalizers": finalizers, "resourceVersion": obj.resource_version()}});
    api.patch(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
}
