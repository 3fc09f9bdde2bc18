//! The first reconcile as `tidegate up` shows it: each Kustomization once as it becomes ready
//! (`✔`) or fails (`✗`), waits shown as waits (`◎`), and a hand-over as soon as everything has
//! settled, failed or not.
//!
//! A reconcile is requested of the flux-system GitRepository and Kustomization at every start,
//! so status left by an earlier run is not taken for this one's: the source counts once it
//! has handled the request, and a Kustomization once its outcome concerns the source's
//! current revision.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use kube::{Api, Client, ResourceExt as _};
use tidegate_api::conditions::{self, READY};
use tidegate_api::{Bucket, ExternalArtifact, GitRepository, Kustomization, OCIRepository};

use super::done;

/// Where one object stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Ready(String),
    Failed(String),
    /// Waiting for its dependencies (by `namespace/name`).
    Blocked(Vec<String>),
    Waiting(String),
}

/// A source as the first reconcile sees it.
struct Source {
    /// Handled this start's request (or was not asked) and is no longer progressing.
    settled: bool,
    ready: bool,
    revision: Option<String>,
    message: String,
}

/// Asks every GitRepository and Kustomization already in the cluster (left by an earlier run)
/// to reconcile, with `token`, so their old status is not taken for this start's.
pub async fn request_reconciles(client: &Client, token: &str) {
    request_all::<Kustomization>(client, token).await;
    request_all::<GitRepository>(client, token).await;
}

async fn request_all<K>(client: &Client, token: &str)
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + k8s_openapi::serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let patch = serde_json::json!({"metadata": {"annotations": {
        tidegate_api::meta::RECONCILE_REQUESTED_AT: token}}});
    let params = kube::api::PatchParams::default();
    let Ok(list) = Api::<K>::all(client.clone())
        .list(&kube::api::ListParams::default())
        .await
    else {
        return;
    };
    for obj in list.items {
        let api: Api<K> = Api::namespaced(client.clone(), &obj.namespace().unwrap_or_default());
        let _ = api
            .patch(&obj.name_any(), &params, &kube::api::Patch::Merge(&patch))
            .await;
    }
}

/// Shows the first reconcile until it settles or `timeout` passes.
pub async fn first_reconcile(client: &Client, bar: &ProgressBar, token: &str, timeout: Duration) {
    let kustomizations: Api<Kustomization> = Api::all(client.clone());
    let started = Instant::now();
    let mut shown: BTreeSet<String> = BTreeSet::new();
    loop {
        let lp = kube::api::ListParams::default();
        let listed = tokio::try_join!(
            kustomizations.list(&lp),
            list_sources::<GitRepository>(client, token),
            list_sources::<OCIRepository>(client, token),
            list_sources::<Bucket>(client, token),
            list_sources::<ExternalArtifact>(client, token),
        );
        let (ks, sources) = match listed {
            Ok((k, git, oci, bucket, external)) => {
                let mut sources = git;
                sources.extend(oci);
                sources.extend(bucket);
                sources.extend(external);
                (k.items, sources)
            }
            Err(e) => {
                bar.set_message(format!("◎ listing Kustomizations and sources: {e}"));
                tokio::time::sleep(Duration::from_millis(250)).await;
                continue;
            }
        };
        for (key, s) in &sources {
            if s.settled && !s.ready && shown.insert(key.clone()) {
                done(bar, &format!("✗ {key}: {}", s.message));
            }
        }
        let states: BTreeMap<String, State> = ks
            .iter()
            .map(|k| (id(k.namespace(), &k.name_any()), state(k, &sources, token)))
            .collect();
        let settled = settled(&states);
        let mut waiting = Vec::new();
        for (key, st) in &states {
            match st {
                State::Ready(message) => {
                    if shown.insert(format!("{key}✔")) {
                        done(bar, &format!("✔ Kustomization {key}: {message}"));
                    }
                }
                State::Failed(message) => {
                    if shown.insert(format!("{key}✗")) {
                        done(bar, &format!("✗ Kustomization {key}: {message}"));
                    }
                }
                State::Blocked(deps) if !settled.contains(key) => {
                    waiting.push(format!("{key} (waiting for {})", deps.join(", ")));
                }
                State::Blocked(_) => {}
                State::Waiting(why) => waiting.push(format!("{key} ({why})")),
            }
        }
        if waiting.is_empty() && !states.is_empty() {
            let failed: Vec<&String> = states
                .iter()
                .filter(|(k, s)| !matches!(s, State::Ready(_)) && settled.contains(*k))
                .map(|(k, _)| k)
                .collect();
            if !failed.is_empty() {
                done(
                    bar,
                    &format!(
                        "✗ {} of {} Kustomizations not ready: {}",
                        failed.len(),
                        states.len(),
                        failed
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
            return;
        }
        if started.elapsed() > timeout {
            done(
                bar,
                &format!(
                    "◎ still reconciling after {}: {}",
                    tidegate_core::duration::format(timeout),
                    waiting.join(", ")
                ),
            );
            return;
        }
        bar.set_message(format!("◎ {}", waiting.join("; ")));
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn id(namespace: Option<String>, name: &str) -> String {
    format!("{}/{name}", namespace.unwrap_or_default())
}

/// Whether the object was asked to reconcile with `token` and has not handled it yet.
fn pending(obj: &impl kube::Resource, handled: Option<&str>, token: &str) -> bool {
    let asked = obj
        .annotations()
        .get(tidegate_api::meta::RECONCILE_REQUESTED_AT)
        .is_some_and(|t| t == token);
    asked && handled != Some(token)
}

/// The sources of one kind, keyed `Kind namespace/name` as Kustomizations name them.
async fn list_sources<K>(client: &Client, token: &str) -> kube::Result<BTreeMap<String, Source>>
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + serde::Serialize,
{
    let list = Api::<K>::all(client.clone())
        .list(&kube::api::ListParams::default())
        .await?;
    Ok(list
        .items
        .iter()
        .map(|obj| {
            let key = format!("{} {}", K::kind(&()), id(obj.namespace(), &obj.name_any()));
            (key, source(obj, token))
        })
        .collect())
}

/// Where a source stands, read from the status every source kind shares.
fn source<K: kube::Resource + serde::Serialize>(obj: &K, token: &str) -> Source {
    let status = serde_json::to_value(obj)
        .ok()
        .and_then(|v| v.get("status").cloned())
        .unwrap_or_default();
    let text = |pointer: &str| status.pointer(pointer).and_then(|v| v.as_str());
    let ready = status
        .get("conditions")
        .and_then(|c| c.as_array())
        .and_then(|c| {
            c.iter()
                .find(|c| c.get("type").and_then(|t| t.as_str()) == Some(READY))
        });
    let field = |name: &str| ready.and_then(|c| c.get(name)).and_then(|v| v.as_str());
    let handled = text("/lastHandledReconcileAt");
    Source {
        settled: !pending(obj, handled, token) && field("status").is_some_and(|s| s != "Unknown"),
        ready: field("status") == Some("True"),
        revision: text("/artifact/revision").map(str::to_string),
        message: field("message").unwrap_or_default().to_string(),
    }
}

fn state(k: &Kustomization, sources: &BTreeMap<String, Source>, token: &str) -> State {
    let ns = k.namespace().unwrap_or_default();
    let status = k.status.as_ref();
    if pending(
        k,
        status.and_then(|s| s.last_handled_reconcile_at.as_deref()),
        token,
    ) {
        return State::Waiting("waiting for its reconcile".into());
    }
    let source_ref = &k.spec.source_ref;
    let source_key = format!(
        "{} {}",
        source_ref.kind,
        id(
            Some(source_ref.namespace.clone().unwrap_or_else(|| ns.clone())),
            &source_ref.name,
        )
    );
    let source = sources.get(&source_key);
    let Some(ready) = status.and_then(|s| conditions::get(&s.conditions, READY)) else {
        return State::Waiting("waiting for its first reconcile".into());
    };
    // The outcome counts once it concerns the source's current revision.
    let current = source.and_then(|s| s.revision.as_deref());
    let of_current = |revision: Option<&str>| current.is_none() || revision == current;
    match ready.status.as_str() {
        "True" => {
            if of_current(status.and_then(|s| s.last_applied_revision.as_deref())) {
                State::Ready(ready.message.clone())
            } else {
                State::Waiting("waiting for the new revision".into())
            }
        }
        "False" if ready.reason == "DependencyNotReady" => State::Blocked(
            k.spec
                .depends_on
                .iter()
                .map(|d| {
                    id(
                        Some(d.namespace.clone().unwrap_or_else(|| ns.clone())),
                        &d.name,
                    )
                })
                .collect(),
        ),
        "False"
            if ready.reason == "ArtifactFailed" && source.is_none_or(|s| s.ready || !s.settled) =>
        {
            // A source still fetching (or not created yet) is a wait, not a failure.
            if source.is_some_and(|s| s.ready) {
                State::Waiting("waiting for a reconcile with the source's artifact".into())
            } else {
                State::Waiting(format!("waiting for {source_key}"))
            }
        }
        "False" if ready.reason == "ArtifactFailed" => {
            State::Failed(format!("{source_key} failed"))
        }
        "False" => {
            if of_current(status.and_then(|s| s.last_attempted_revision.as_deref())) {
                State::Failed(ready.message.clone())
            } else {
                State::Waiting("waiting for the new revision".into())
            }
        }
        _ => State::Waiting(if ready.message.is_empty() {
            "reconciling".into()
        } else {
            ready.message.clone()
        }),
    }
}

/// The Kustomizations that will not change without something else changing: ready, failed,
/// or waiting on a dependency that is itself failed or stuck.
fn settled(states: &BTreeMap<String, State>) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = states
        .iter()
        .filter(|(_, s)| matches!(s, State::Ready(_) | State::Failed(_)))
        .map(|(k, _)| k.clone())
        .collect();
    loop {
        let mut grew = false;
        for (key, st) in states {
            let State::Blocked(deps) = st else { continue };
            if out.contains(key) {
                continue;
            }
            // Stuck when a dependency is missing, failed or itself stuck; a ready dependency
            // lets it go on, so it is still waiting.
            let stuck = deps.iter().any(|d| match states.get(d) {
                None => true,
                Some(State::Ready(_)) => false,
                Some(_) => out.contains(d),
            });
            if stuck {
                out.insert(key.clone());
                grew = true;
            }
        }
        if !grew {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dependency_chain_on_a_failure_settles() {
        let states: BTreeMap<String, State> = [
            ("a/base".to_string(), State::Failed("boom".into())),
            ("a/mid".to_string(), State::Blocked(vec!["a/base".into()])),
            ("a/top".to_string(), State::Blocked(vec!["a/mid".into()])),
            ("a/ok".to_string(), State::Ready("fine".into())),
            ("a/next".to_string(), State::Blocked(vec!["a/ok".into()])),
            ("a/slow".to_string(), State::Waiting("reconciling".into())),
            ("a/after".to_string(), State::Blocked(vec!["a/slow".into()])),
        ]
        .into_iter()
        .collect();
        let s = settled(&states);
        assert!(s.contains("a/mid") && s.contains("a/top") && s.contains("a/base"));
        assert!(!s.contains("a/next"), "a ready dependency lets it go on");
        assert!(
            !s.contains("a/after"),
            "its dependency is still reconciling"
        );
        assert!(!s.contains("a/slow"));
    }

    fn kustomization_on_a_failed_artifact(kind: &str) -> Kustomization {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system"},
            "spec": {
                "interval": "10m",
                "prune": true,
                "sourceRef": {"kind": kind, "name": "podinfo"},
            },
            "status": {"conditions": [{
                "type": "Ready", "status": "False", "reason": "ArtifactFailed",
                "message": "Source artifact not found, retrying in 30s",
                "lastTransitionTime": "2026-12-07T00:00:00Z",
            }]},
        }))
        .expect("a Kustomization")
    }

    #[test]
    fn a_failed_source_of_any_kind_settles_its_kustomizations_and_is_named_by_kind() {
        let k = kustomization_on_a_failed_artifact("OCIRepository");
        let mut sources = BTreeMap::new();
        // Not listed yet: a wait, named by the source's own kind.
        assert_eq!(
            state(&k, &sources, "t"),
            State::Waiting("waiting for OCIRepository flux-system/podinfo".into())
        );
        sources.insert(
            "OCIRepository flux-system/podinfo".to_string(),
            Source {
                settled: true,
                ready: false,
                revision: None,
                message: "failed to pull artifact".into(),
            },
        );
        // Failed: the Kustomization has failed too, and `up` can hand over.
        assert_eq!(
            state(&k, &sources, "t"),
            State::Failed("OCIRepository flux-system/podinfo failed".into())
        );
        // A GitRepository of the same name is another source.
        let k = kustomization_on_a_failed_artifact("GitRepository");
        assert_eq!(
            state(&k, &sources, "t"),
            State::Waiting("waiting for GitRepository flux-system/podinfo".into())
        );
    }
}
