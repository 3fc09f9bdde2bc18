//! One GitRepository reconcile: storage check, credentials, includes, fetch, verification,
//! packing, status, events. Messages and reasons are Flux's.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use tidegate_api::GitRepository;
use tidegate_api::conditions::{self, READY, RECONCILING, STALLED};
use tidegate_api::gitrepository::{GitRepositoryStatus, VerificationMode};
use tidegate_api::meta::{Artifact, RECONCILE_REQUESTED_AT};
use tidegate_source::extract::Limits;
use tidegate_source::git::Auth;
use tidegate_source::verify::Keyring;

use super::{Context, ReconcileError};
use crate::events::EventType;
use crate::status::merge_diff;
use crate::timing::jittered;

use super::artifact::{Fetch, Job, Packed, fetch_verified, pack, up_to_date};
use super::failure::{
    ARTIFACT_IN_STORAGE, ARTIFACT_OUTDATED, FETCH_FAILED, Failure, INCLUDE_UNAVAILABLE, Retry,
    SOURCE_VERIFIED, STORAGE_FAILED, SUMMARY,
};

/// A successful run: the revision stored, and the event to send for a new artifact.
struct Done {
    revision: String,
    new_artifact_message: Option<String>,
    verified: Option<String>,
}

pub(super) async fn reconcile(
    obj: &GitRepository,
    ctx: &Context,
) -> Result<Action, ReconcileError> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let api: Api<GitRepository> = Api::namespaced(ctx.client.clone(), &ns);
    let labels = crate::metrics::ObjectLabels::of(obj);
    let fail = |message: String| ReconcileError {
        message,
        retry: ctx.backoff.failed(&format!("{ns}/{name}")),
    };

    if obj.metadata.deletion_timestamp.is_some() {
        return delete(obj, ctx, &api).await.map_err(fail);
    }
    crate::finalizer::add(&api, obj, &ctx.versions)
        .await
        .map_err(fail)?;
    if crate::shared::check_suspended(obj, obj.spec.suspend, &ctx.metrics) {
        return Ok(Action::await_change());
    }

    let generation = obj.metadata.generation;
    let mut written = obj.status.clone().unwrap_or_default();
    let mut st = written.clone();
    if st.observed_generation != generation {
        let message = format!(
            "processing object: new generation {} -> {}",
            st.observed_generation.unwrap_or(-1),
            generation.unwrap_or(0)
        );
        progressing(&mut st, &message, generation);
        patch_status(&api, &ctx.versions, &name, &written, &st)
            .await
            .map_err(fail)?;
        written = st.clone();
    }

    let interval =
        tidegate_core::duration::parse(&obj.spec.interval).unwrap_or(Duration::from_secs(60));
    let had_failure = [FETCH_FAILED, INCLUDE_UNAVAILABLE, STORAGE_FAILED]
        .iter()
        .any(|c| conditions::is_true(&st.conditions, c));
    let old_digest = st.artifact.as_ref().map(|a| a.digest.clone());
    let outcome = steps(obj, ctx, &mut st).await;
    let action;
    let mut error = None;
    match outcome {
        Ok(done) => {
            for c in [
                FETCH_FAILED,
                STORAGE_FAILED,
                ARTIFACT_OUTDATED,
                INCLUDE_UNAVAILABLE,
                RECONCILING,
                STALLED,
            ] {
                conditions::delete(&mut st.conditions, c);
            }
            let message = format!("stored artifact for revision '{}'", done.revision);
            conditions::set(
                &mut st.conditions,
                ARTIFACT_IN_STORAGE,
                true,
                "Succeeded",
                &message,
                generation,
            );
            if let Some(v) = &done.verified {
                conditions::set(
                    &mut st.conditions,
                    SOURCE_VERIFIED,
                    true,
                    "Succeeded",
                    v,
                    generation,
                );
                ctx.recorder
                    .publish(obj, EventType::Normal, "Succeeded", v, &[])
                    .await;
            }
            conditions::summarize(&mut st.conditions, SUMMARY, generation);
            st.observed_generation = generation;
            ctx.backoff.succeeded(&format!("{ns}/{name}"));
            action = if interval.is_zero() {
                // No periodic reconcile for a zero interval (only changes and requests).
                Action::await_change()
            } else {
                Action::requeue(jittered(interval, ctx.options.jitter_percent))
            };
            let annotations = artifact_annotations(&st);
            let new_digest = st.artifact.as_ref().map(|a| a.digest.clone());
            if new_digest != old_digest {
                let note = format!(
                    "stored artifact for commit '{}'",
                    done.new_artifact_message
                        .as_deref()
                        .unwrap_or(&done.revision)
                );
                tracing::info!(name, namespace = ns, revision = done.revision, "{note}");
                ctx.recorder
                    .publish(obj, EventType::Normal, "NewArtifact", &note, &annotations)
                    .await;
            } else if had_failure {
                let note = format!("stored artifact for commit '{}'", done.revision);
                ctx.recorder
                    .publish(obj, EventType::Normal, "Succeeded", &note, &annotations)
                    .await;
            }
        }
        Err(f) => {
            if f.condition == SOURCE_VERIFIED {
                conditions::set(
                    &mut st.conditions,
                    SOURCE_VERIFIED,
                    false,
                    &f.reason,
                    &f.message,
                    generation,
                );
            } else {
                conditions::set(
                    &mut st.conditions,
                    f.condition,
                    true,
                    &f.reason,
                    &f.message,
                    generation,
                );
            }
            tracing::warn!(name, namespace = ns, reason = f.reason, "{}", f.message);
            match f.retry {
                Retry::Stall => {
                    conditions::delete(&mut st.conditions, RECONCILING);
                    conditions::set(
                        &mut st.conditions,
                        STALLED,
                        true,
                        &f.reason,
                        &f.message,
                        generation,
                    );
                    st.observed_generation = generation;
                    action = Action::await_change();
                }
                Retry::Wait(d) => {
                    conditions::delete(&mut st.conditions, STALLED);
                    action = Action::requeue(d);
                }
                Retry::Backoff => {
                    conditions::delete(&mut st.conditions, STALLED);
                    let msg = conditions::get(&st.conditions, RECONCILING)
                        .map(|c| c.message.clone())
                        .unwrap_or_else(|| "reconciliation in progress".to_string());
                    conditions::set(
                        &mut st.conditions,
                        RECONCILING,
                        true,
                        "ProgressingWithRetry",
                        &msg,
                        generation,
                    );
                    error = Some(f.message.clone());
                    action = Action::requeue(Duration::ZERO);
                }
            }
            conditions::summarize(&mut st.conditions, SUMMARY, generation);
            if f.condition == SOURCE_VERIFIED {
                // A failed verification forces Ready=False with its reason (Flux's bipolarity).
                conditions::set(
                    &mut st.conditions,
                    READY,
                    false,
                    &f.reason,
                    &f.message,
                    generation,
                );
            }
            let kind = if matches!(f.retry, Retry::Wait(_)) {
                EventType::Normal
            } else {
                EventType::Warning
            };
            ctx.recorder
                .publish(obj, kind, &f.reason, &f.message, &[])
                .await;
        }
    }
    if let Some(at) = obj.annotations().get(RECONCILE_REQUESTED_AT) {
        st.last_handled_reconcile_at = Some(at.clone());
    }
    patch_status(&api, &ctx.versions, &name, &written, &st)
        .await
        .map_err(fail)?;
    for c in &st.conditions {
        if c.type_ == READY || c.type_ == RECONCILING || c.type_ == STALLED {
            ctx.metrics.record_condition(&labels, &c.type_, &c.status);
        }
    }
    match error {
        Some(message) => Err(fail(message)),
        None => Ok(action),
    }
}

fn progressing(st: &mut GitRepositoryStatus, message: &str, generation: Option<i64>) {
    conditions::set(
        &mut st.conditions,
        RECONCILING,
        true,
        "Progressing",
        message,
        generation,
    );
    let ready_unknown =
        conditions::get(&st.conditions, READY).is_none_or(|c| c.status == "Unknown");
    if ready_unknown {
        conditions::set_status(
            &mut st.conditions,
            READY,
            "Unknown",
            "Progressing",
            message,
            generation,
        );
    }
}

fn artifact_annotations(st: &GitRepositoryStatus) -> Vec<(&'static str, String)> {
    match &st.artifact {
        Some(a) => vec![
            ("source.toolkit.fluxcd.io/revision", a.revision.clone()),
            ("source.toolkit.fluxcd.io/digest", a.digest.clone()),
        ],
        None => Vec::new(),
    }
}

async fn patch_status(
    api: &Api<GitRepository>,
    versions: &crate::fresh::Versions,
    name: &str,
    old: &GitRepositoryStatus,
    new: &GitRepositoryStatus,
) -> Result<(), String> {
    let to_json = |s: &GitRepositoryStatus| serde_json::to_value(s).unwrap_or_default();
    let Some(diff) = merge_diff(&to_json(old), &to_json(new)) else {
        return Ok(());
    };
    let patch = serde_json::json!({ "status": diff });
    let stored = api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| format!("patching status: {e}"))?;
    versions.record(&stored);
    Ok(())
}

async fn delete(
    obj: &GitRepository,
    ctx: &Context,
    api: &Api<GitRepository>,
) -> Result<Action, String> {
    if !crate::finalizer::has(obj) {
        return Ok(Action::await_change());
    }
    let ns = obj.namespace().unwrap_or_default();
    let storage = ctx.storage.clone();
    let (n, nm) = (ns.clone(), obj.name_any());
    let removed = tokio::task::spawn_blocking(move || storage.remove_all("GitRepository", &n, &nm))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("garbage collection for deleted resource failed: {e}"))?;
    if removed {
        tracing::info!(
            name = obj.name_any(),
            namespace = ns,
            "garbage collected artifacts for deleted resource"
        );
    }
    crate::finalizer::remove(api, obj).await?;
    ctx.versions.forget(obj);
    Ok(Action::await_change())
}

/// Everything from the storage check to the new artifact.
async fn steps(
    obj: &GitRepository,
    ctx: &Context,
    st: &mut GitRepositoryStatus,
) -> Result<Done, Failure> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let generation = obj.metadata.generation;
    check_storage(obj, ctx, st, generation).await;
    unsupported(obj, &ctx.options)?;

    let secret = match &obj.spec.secret_ref {
        Some(r) => Some(
            secret_data(ctx, &ns, &r.name)
                .await
                .map_err(|m| Failure::new(FETCH_FAILED, "AuthenticationFailed", m))?,
        ),
        None => None,
    };
    let auth = Auth::from_secret(&obj.spec.url, secret.as_ref()).map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "AuthenticationFailed",
            format!("failed to configure authentication options: {e}"),
        )
    })?;
    let includes = include_artifacts(obj, ctx).await?;
    let included: Vec<Artifact> = includes.iter().map(|i| i.artifact.clone()).collect();

    let verify = obj.spec.verify.clone();
    let keyring =
        match &verify {
            Some(v) => {
                let data = secret_data(ctx, &ns, &v.secret_ref.name)
                    .await
                    .map_err(|m| {
                        Failure::new(
                            SOURCE_VERIFIED,
                            "VerificationError",
                            format!("public keys secret error: {m}"),
                        )
                    })?;
                Some(Keyring::from_secret(&data).map_err(|e| {
                    Failure::new(SOURCE_VERIFIED, "VerificationError", e.to_string())
                })?)
            }
            None => {
                st.source_verification_mode = None;
                conditions::delete(&mut st.conditions, SOURCE_VERIFIED);
                None
            }
        };
    let mode = verify.as_ref().map(|v| v.mode());
    let config_changed = content_config_changed(obj, st, &included, mode);
    let last_revision = (conditions::is_true(&st.conditions, ARTIFACT_IN_STORAGE)
        && !config_changed)
        .then(|| st.artifact.as_ref().map(|a| a.revision.clone()))
        .flatten();

    let timeout = spec_timeout(obj);
    let interrupt = Arc::new(AtomicBool::new(false));
    let job = Arc::new(Job {
        spec: obj.spec.clone(),
        auth,
        keyring,
        mode,
        last_revision,
        interrupt: interrupt.clone(),
        storage: ctx.storage.clone(),
        namespace: ns.clone(),
        name: name.clone(),
        current: st.artifact.clone(),
        config_changed,
        timeout,
    });
    let phase_one = job.clone();
    let fetch = tokio::task::spawn_blocking(move || fetch_verified(&phase_one));
    let crashed = |e: tokio::task::JoinError| {
        Failure::new(
            FETCH_FAILED,
            "GitOperationFailed",
            format!("failed to checkout and determine revision: {e}"),
        )
    };
    let result = match tokio::time::timeout(timeout, fetch).await {
        Ok(joined) => match joined.map_err(crashed)?? {
            Fetch::Unchanged(revision) => Packed::Unchanged(revision),
            Fetch::Fetched {
                fetched,
                verified,
                _work,
            } => {
                let extracted = if up_to_date(&job, &fetched) {
                    Vec::new()
                } else {
                    download_includes(ctx, &includes).await?
                };
                let phase_two = job.clone();
                tokio::task::spawn_blocking(move || {
                    let packed = pack(&phase_two, &fetched, verified, &extracted);
                    drop(_work);
                    packed
                })
                .await
                .map_err(crashed)??
            }
        },
        Err(_) => {
            interrupt.store(true, Ordering::Relaxed);
            return Err(Failure::new(
                FETCH_FAILED,
                "GitOperationFailed",
                format!(
                    "failed to checkout and determine revision: timeout after {}",
                    obj.spec.timeout()
                ),
            ));
        }
    };
    match result {
        Packed::Unchanged(revision) => {
            tracing::info!(
                name,
                namespace = ns,
                "no changes since last reconciliation: observed revision '{revision}'"
            );
            if let Some(a) = st.artifact.as_mut() {
                a.url = ctx.storage.url(&a.path);
            }
            Ok(Done {
                revision,
                new_artifact_message: None,
                verified: None,
            })
        }
        Packed::Stored {
            revision,
            written,
            message,
            verified,
        } => {
            if let Some(a) = written {
                st.artifact = Some(*a);
            }
            st.included_artifacts = included;
            st.observed_ignore = obj.spec.ignore.clone();
            st.observed_recurse_submodules = obj.spec.recurse_submodules;
            st.observed_include = obj.spec.include.clone();
            st.observed_sparse_checkout = obj.spec.sparse_checkout.clone();
            st.source_verification_mode = mode.map(|m| m.as_str().to_string());
            if let Some(a) = st.artifact.as_mut() {
                a.url = ctx.storage.url(&a.path);
            }
            Ok(Done {
                revision,
                new_artifact_message: message,
                verified,
            })
        }
    }
}

/// `spec.timeout` (default 60s).
pub(super) fn spec_timeout(obj: &GitRepository) -> Duration {
    tidegate_core::duration::parse(obj.spec.timeout()).unwrap_or(Duration::from_secs(60))
}

/// Drops a status artifact whose file is gone or altered; collects old artifacts.
async fn check_storage(
    obj: &GitRepository,
    ctx: &Context,
    st: &mut GitRepositoryStatus,
    generation: Option<i64>,
) {
    let Some(a) = st.artifact.clone() else { return };
    let storage = ctx.storage.clone();
    let (path, digest) = (a.path.clone(), a.digest.clone());
    // Some(true): present and intact; Some(false): altered (and removed); None: missing.
    let state = tokio::task::spawn_blocking(move || {
        let _ = storage.garbage_collect(&path);
        if !storage.exists(&path) {
            return None;
        }
        let intact = storage.verify(&path, &digest).unwrap_or(false);
        if !intact && let Ok(file) = storage.local_path(&path) {
            let _ = std::fs::remove_file(file);
        }
        Some(intact)
    })
    .await
    .unwrap_or(None);
    if state == Some(true) {
        // As Flux does: the URL follows the storage's current address (a restarted artifact
        // server may listen elsewhere).
        let url = ctx.storage.url(&a.path);
        if let Some(artifact) = st.artifact.as_mut()
            && artifact.url != url
        {
            artifact.url = url;
        }
        return;
    }
    if state == Some(false) {
        let message = format!(
            "failed to verify integrity of artifact: computed digest doesn't match '{}'",
            a.digest
        );
        ctx.recorder
            .publish(
                obj,
                EventType::Warning,
                "ArtifactVerificationFailed",
                &message,
                &[],
            )
            .await;
    }
    st.artifact = None;
    conditions::delete(&mut st.conditions, ARTIFACT_IN_STORAGE);
    let message = if state.is_none() {
        "building artifact: disappeared from storage"
    } else {
        "building artifact"
    };
    progressing(st, message, generation);
}

async fn secret_data(
    ctx: &Context,
    ns: &str,
    name: &str,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), ns);
    let secret = api.get(name).await.map_err(|e| {
        let detail = match &e {
            kube::Error::Api(s) => s.message.clone(),
            other => other.to_string(),
        };
        format!("failed to get secret '{ns}/{name}': {detail}")
    })?;
    let mut data: BTreeMap<String, Vec<u8>> = secret
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    for (k, v) in secret.string_data.unwrap_or_default() {
        data.insert(k, v.into_bytes());
    }
    Ok(data)
}

/// An included repository's artifact, extracted.
/// An included repository and its artifact, before download.
struct IncludeRef {
    name: String,
    artifact: Artifact,
    from: String,
    to: String,
}

pub(super) struct Included {
    /// The included GitRepository's name.
    pub(super) name: String,
    pub(super) dir: tempfile::TempDir,
    pub(super) from: String,
    pub(super) to: String,
}

/// Downloads the artifacts of `spec.include`.
async fn include_artifacts(obj: &GitRepository, ctx: &Context) -> Result<Vec<IncludeRef>, Failure> {
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<GitRepository> = Api::namespaced(ctx.client.clone(), &ns);
    let mut out = Vec::new();
    let wait = ctx.options.requeue_dependency;
    for inc in &obj.spec.include {
        let name = &inc.repository.name;
        let repo = api.get(name).await.map_err(|e| {
            Failure::new(
                INCLUDE_UNAVAILABLE,
                "NotFound",
                format!("could not get resource for include '{name}': {e}"),
            )
            .wait(wait)
        })?;
        let Some(artifact) = repo.status.and_then(|s| s.artifact) else {
            return Err(Failure::new(
                INCLUDE_UNAVAILABLE,
                "NoArtifact",
                format!("no artifact available for include '{name}'"),
            )
            .wait(wait));
        };
        out.push(IncludeRef {
            name: name.clone(),
            artifact,
            from: inc.from_path.clone().unwrap_or_default(),
            to: inc.to_path.clone().unwrap_or_else(|| name.clone()),
        });
    }
    Ok(out)
}

/// Extracts the included artifacts (only when a new artifact is packed).
async fn download_includes(ctx: &Context, refs: &[IncludeRef]) -> Result<Vec<Included>, Failure> {
    let mut out = Vec::new();
    for r in refs {
        let copy_failed = |e: String| {
            Failure::new(
                STORAGE_FAILED,
                "CopyFailure",
                format!("failed to copy '{}' include: {e}", r.name),
            )
        };
        let dir = tidegate_source::scratch::tempdir("include-")
            .map_err(|e| Failure::new(STORAGE_FAILED, "DirectoryCreationFailed", e.to_string()))?;
        // Prefer the local store: the included artifact usually lives in the same storage.
        let local = ctx
            .storage
            .local_path(&r.artifact.path)
            .ok()
            .filter(|p| p.is_file());
        match local {
            Some(path) => extract_local(path, dir.path().to_path_buf()).await,
            None => tidegate_source::fetch::fetch_artifact(
                &ctx.http,
                &r.artifact.url,
                &r.artifact.digest,
                dir.path(),
                Limits::default(),
            )
            .await
            .map_err(|e| e.to_string()),
        }
        .map_err(copy_failed)?;
        out.push(Included {
            name: r.name.clone(),
            dir,
            from: r.from.clone(),
            to: r.to.clone(),
        });
    }
    Ok(out)
}

async fn extract_local(path: PathBuf, dir: PathBuf) -> Result<(), String> {
    tokio::task::spawn_blocking(move || {
        let file = std::fs::File::open(&path).map_err(|e| e.to_string())?;
        tidegate_source::extract::extract_tar_gz(
            std::io::BufReader::new(file),
            &dir,
            Limits::default(),
        )
        .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())?
}

/// Whether anything besides the revision changes what the artifact holds (Flux's
/// `gitContentConfigChanged`).
fn content_config_changed(
    obj: &GitRepository,
    st: &GitRepositoryStatus,
    included: &[Artifact],
    mode: Option<VerificationMode>,
) -> bool {
    let needs_verification = match (mode, st.source_verification_mode.as_deref()) {
        (Some(_), None) => true,
        (Some(m), Some(observed)) => m.as_str() != observed,
        (None, _) => false,
    };
    let includes_changed = included.len() != st.included_artifacts.len()
        || included
            .iter()
            .zip(&st.included_artifacts)
            .any(|(a, b)| a.revision != b.revision || a.digest != b.digest);
    obj.spec.ignore != st.observed_ignore
        || obj.spec.recurse_submodules != st.observed_recurse_submodules
        || obj.spec.include != st.observed_include
        || obj.spec.sparse_checkout != st.observed_sparse_checkout
        || needs_verification
        || includes_changed
}

/// Spec fields Tidegate does not implement yet stall the object instead of being ignored, and
/// `file://` URLs stall unless the controller allows them.
fn unsupported(obj: &GitRepository, options: &super::Options) -> Result<(), Failure> {
    let spec = &obj.spec;
    let stall = |field: &str| {
        Failure::new(
            FETCH_FAILED,
            "UnsupportedConfiguration",
            format!("{field} is not supported by Tidegate yet"),
        )
        .stall()
    };
    if spec.recurse_submodules {
        return Err(stall("spec.recurseSubmodules"));
    }
    if spec.proxy_secret_ref.is_some() {
        return Err(stall("spec.proxySecretRef"));
    }
    if spec.provider.as_deref().is_some_and(|p| p != "generic") {
        return Err(stall("spec.provider other than generic"));
    }
    if spec.service_account_name.is_some() {
        return Err(stall("spec.serviceAccountName"));
    }
    if spec.url.starts_with("file://") && !options.allow_file_urls {
        return Err(Failure::new(
            FETCH_FAILED,
            "URLInvalid",
            "file:// URLs are disabled in this controller (--allow-file-urls)".to_string(),
        )
        .stall());
    }
    Ok(())
}
