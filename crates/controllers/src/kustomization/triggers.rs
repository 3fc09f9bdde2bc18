//! What wakes a Kustomization besides its interval: its own spec, `requestedAt` or deletion; a
//! new artifact of its source; a dependency that became ready.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use futures::channel::mpsc::UnboundedSender;
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use tidegate_api::Kustomization;
use tidegate_api::conditions::{self, READY};

/// The source a Kustomization reads: kind, namespace, name.
pub(super) fn source_of(k: &Kustomization) -> (String, String, String) {
    let r = &k.spec.source_ref;
    let namespace = r
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| k.namespace().unwrap_or_default());
    (r.kind.clone(), namespace, r.name.clone())
}

/// Wakes the Kustomizations of a source (GitRepository, OCIRepository, Bucket,
/// ExternalArtifact) whose artifact changed.
pub(super) struct SourceTracker {
    kustomizations: Store<Kustomization>,
    tx: UnboundedSender<ObjectRef<Kustomization>>,
    seen: Mutex<HashMap<(String, String, String), String>>,
}

impl SourceTracker {
    pub(super) fn new(
        kustomizations: Store<Kustomization>,
        tx: UnboundedSender<ObjectRef<Kustomization>>,
    ) -> SourceTracker {
        SourceTracker {
            kustomizations,
            tx,
            seen: Mutex::default(),
        }
    }

    /// Called for every watch event of a source.
    pub(super) fn observe<K: crate::sources::ArtifactSource>(&self, source: &K) {
        self.observe_source(&K::kind(&()), source, source.artifact());
    }

    fn observe_source<K: kube::Resource>(
        &self,
        kind: &str,
        repo: &K,
        artifact: Option<&tidegate_api::meta::Artifact>,
    ) {
        let namespace = repo.namespace().unwrap_or_default();
        let name = repo.name_any();
        let digest = artifact
            .map(|a| format!("{}|{}|{}", a.revision, a.digest, a.url))
            .unwrap_or_default();
        let changed = {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            let old = seen.insert(
                (kind.to_string(), namespace.clone(), name.clone()),
                digest.clone(),
            );
            old.as_deref() != Some(digest.as_str())
        };
        // The first sight of a source (at start) wakes nobody: every Kustomization is
        // reconciled at start anyway.
        if !changed || digest.is_empty() {
            return;
        }
        for k in self.kustomizations.state() {
            let (k_kind, ns, n) = source_of(&k);
            if k_kind == kind && ns == namespace && n == name {
                let _ = self.tx.unbounded_send(ObjectRef::from_obj(k.as_ref()));
            }
        }
    }
}

/// Wakes the dependents of a Kustomization whose readiness changed.
pub(super) struct ReadinessTracker {
    kustomizations: Store<Kustomization>,
    tx: UnboundedSender<ObjectRef<Kustomization>>,
    seen: Mutex<HashMap<(String, String), u64>>,
}

/// What dependents look at: Ready, the generation it was observed at, the revision applied.
fn readiness_hash(k: &Kustomization) -> Option<u64> {
    let st = k.status.as_ref()?;
    if !conditions::is_true(&st.conditions, READY) {
        return None;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    st.observed_generation.hash(&mut h);
    k.metadata.generation.hash(&mut h);
    st.last_applied_revision.hash(&mut h);
    Some(h.finish())
}

impl ReadinessTracker {
    pub(super) fn new(
        kustomizations: Store<Kustomization>,
        tx: UnboundedSender<ObjectRef<Kustomization>>,
    ) -> ReadinessTracker {
        ReadinessTracker {
            kustomizations,
            tx,
            seen: Mutex::default(),
        }
    }

    /// Called for every watch event of a Kustomization.
    pub(super) fn observe(&self, k: &Kustomization) {
        let namespace = k.namespace().unwrap_or_default();
        let name = k.name_any();
        let Some(hash) = readiness_hash(k) else {
            self.seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&(namespace, name));
            return;
        };
        let changed = self
            .seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((namespace.clone(), name.clone()), hash)
            != Some(hash);
        if !changed {
            return;
        }
        for d in self.kustomizations.state() {
            let dns = d.namespace().unwrap_or_default();
            let depends = d.spec.depends_on.iter().any(|r| {
                r.name == name
                    && r.namespace
                        .as_deref()
                        .filter(|n| !n.is_empty())
                        .unwrap_or(&dns)
                        == namespace
            });
            if depends {
                let _ = self.tx.unbounded_send(ObjectRef::from_obj(d.as_ref()));
            }
        }
    }
}
