//! From `apiVersion` + `kind` to the resource to call, through API discovery (aggregated
//! discovery: two requests), refreshed when CRDs change.

use crate::error::{Error, describe};
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersionKind;
use kube::discovery::{Discovery, Scope};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::RwLock;

/// A resource to call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// Group, version, kind and plural.
    pub resource: ApiResource,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
}

impl Target {
    /// The API for objects of this resource in `namespace` (ignored for cluster-scoped ones).
    pub fn api(&self, client: &Client, namespace: &str) -> Api<DynamicObject> {
        if self.namespaced && !namespace.is_empty() {
            Api::namespaced_with(client.clone(), namespace, &self.resource)
        } else {
            Api::all_with(client.clone(), &self.resource)
        }
    }
}

/// Cached discovery.
pub struct Resolver {
    client: Client,
    discovery: RwLock<Option<(Arc<Discovery>, Instant)>>,
}

impl Resolver {
    /// A resolver that discovers on first use.
    pub fn new(client: Client) -> Resolver {
        Resolver {
            client,
            discovery: RwLock::new(None),
        }
    }

    /// Runs discovery again (after CRDs were applied).
    pub async fn refresh(&self) -> Result<(), Error> {
        let discovery = match Discovery::new(self.client.clone()).run_aggregated().await {
            Ok(d) => d,
            Err(_) => Discovery::new(self.client.clone())
                .run()
                .await
                .map_err(|e| Error::Cluster {
                    context: "discovering the API".into(),
                    message: describe(&e),
                })?,
        };
        *self.discovery.write().await = Some((Arc::new(discovery), Instant::now()));
        Ok(())
    }

    /// Runs discovery again unless the cached one was taken at or after `instant` (so
    /// concurrent callers share one refresh); says whether it ran.
    pub async fn refresh_if_before(&self, instant: Instant) -> Result<bool, Error> {
        let fresh = self
            .discovery
            .read()
            .await
            .as_ref()
            .is_some_and(|(_, at)| *at >= instant);
        if fresh {
            return Ok(false);
        }
        self.refresh().await?;
        Ok(true)
    }

    /// The resource serving `apiVersion`/`kind`, `None` when the cluster does not serve it.
    pub async fn resolve(&self, api_version: &str, kind: &str) -> Result<Option<Target>, Error> {
        if self.discovery.read().await.is_none() {
            self.refresh().await?;
        }
        let guard = self.discovery.read().await;
        let Some((discovery, _)) = guard.as_ref() else {
            return Ok(None);
        };
        let (group, version) = tidegate_core::object_ref::split_api_version(api_version);
        let gvk = GroupVersionKind::gvk(group, version, kind);
        Ok(discovery.resolve_gvk(&gvk).map(|(resource, caps)| Target {
            resource,
            namespaced: caps.scope == Scope::Namespaced,
        }))
    }

    /// Every served `group/version` and `group/version/Kind` (`v1` and `v1/Pod` for the core
    /// group), as Helm's `.Capabilities.APIVersions` lists them.
    pub async fn api_versions(&self) -> Result<Vec<String>, Error> {
        if self.discovery.read().await.is_none() {
            self.refresh().await?;
        }
        let guard = self.discovery.read().await;
        let Some((discovery, _)) = guard.as_ref() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for group in discovery.groups() {
            for version in group.versions() {
                let gv = if group.name().is_empty() {
                    version.to_string()
                } else {
                    format!("{}/{version}", group.name())
                };
                for (resource, _) in group.versioned_resources(version) {
                    out.push(format!("{gv}/{}", resource.kind));
                }
                out.push(gv);
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}
