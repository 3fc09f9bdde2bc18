//! Watches of the source kinds that other controllers consume (GitRepository, OCIRepository,
//! Bucket, ExternalArtifact, HelmChart): one reflector per kind, read by kind, namespace and
//! name, with a callback per change so a consumer can wake what depends on it.

use std::collections::HashMap;

use futures::StreamExt;
use futures::future::BoxFuture;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use tidegate_api::meta::Artifact;

/// A kind whose objects carry an artifact in their status.
pub(crate) trait ArtifactSource:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// The artifact in the status.
    fn artifact(&self) -> Option<&Artifact>;
    /// The status conditions.
    fn conditions(&self) -> &[Condition];
}

macro_rules! artifact_source {
    ($ty:ty) => {
        impl ArtifactSource for $ty {
            fn artifact(&self) -> Option<&Artifact> {
                self.status.as_ref().and_then(|s| s.artifact.as_ref())
            }
            fn conditions(&self) -> &[Condition] {
                self.status
                    .as_ref()
                    .map(|s| s.conditions.as_slice())
                    .unwrap_or(&[])
            }
        }
    };
}
artifact_source!(tidegate_api::GitRepository);
artifact_source!(tidegate_api::OCIRepository);
artifact_source!(tidegate_api::Bucket);
artifact_source!(tidegate_api::ExternalArtifact);
artifact_source!(tidegate_api::HelmChart);

/// What a lookup found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found {
    /// The object exists; its artifact, if it has one yet.
    Object {
        artifact: Option<Artifact>,
        conditions: Vec<Condition>,
    },
    /// No such object (`<plural>.<group> "<name>" not found`, as the API server says).
    Missing(String),
    /// The kind is not among the watched ones.
    UnknownKind,
}

trait Lookup: Send + Sync {
    fn find(&self, namespace: &str, name: &str) -> Found;
    fn ready(&self) -> BoxFuture<'static, bool>;
}

impl<K: ArtifactSource> Lookup for Store<K> {
    fn find(&self, namespace: &str, name: &str) -> Found {
        match self.get(&ObjectRef::new(name).within(namespace)) {
            Some(o) => Found::Object {
                artifact: o.artifact().cloned(),
                conditions: o.conditions().to_vec(),
            },
            None => Found::Missing(format!(
                "{}.{} \"{name}\" not found",
                K::plural(&()),
                K::group(&())
            )),
        }
    }
    fn ready(&self) -> BoxFuture<'static, bool> {
        let store = self.clone();
        Box::pin(async move { store.wait_until_ready().await.is_ok() })
    }
}

/// The watched source kinds.
#[derive(Default)]
pub(crate) struct Sources {
    kinds: HashMap<String, Box<dyn Lookup>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Sources {
    /// Starts watching kind `K` (in `namespace`, or everywhere), calling `observe` for every
    /// object the watch delivers; returns the kind's store.
    pub(crate) fn watch<K: ArtifactSource>(
        &mut self,
        client: &Client,
        namespace: Option<&str>,
        observe: impl Fn(&K) + Send + Sync + 'static,
    ) -> Store<K> {
        let api: Api<K> = match namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        let (reader, writer) = reflector::store();
        let kind = K::kind(&()).to_string();
        let stream = reflector::reflector(
            writer,
            watcher(api, watcher::Config::default()).default_backoff(),
        )
        .applied_objects()
        .for_each(move |res| {
            match res {
                Ok(o) => observe(&o),
                Err(e) => tracing::warn!(kind, error = %e, "watching sources"),
            }
            futures::future::ready(())
        });
        self.tasks.push(tokio::spawn(stream));
        self.kinds
            .insert(K::kind(&()).to_string(), Box::new(reader.clone()));
        reader
    }

    /// Waits until every watch has listed once; `Err` names a kind whose watch stopped first.
    pub(crate) async fn ready(&self) -> Result<(), String> {
        for (kind, lookup) in &self.kinds {
            if !lookup.ready().await {
                return Err(kind.clone());
            }
        }
        Ok(())
    }

    /// The object `kind` `namespace/name` as the watch last saw it.
    pub(crate) fn find(&self, kind: &str, namespace: &str, name: &str) -> Found {
        match self.kinds.get(kind) {
            Some(l) => l.find(namespace, name),
            None => Found::UnknownKind,
        }
    }
}

impl Drop for Sources {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}
