//! One GitRepository reconcile: storage check, credentials, includes, fetch, verification,
//! packing, status, events. Messages and reasons are Flux's.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use tidegate_api::GitRepository;
use tidegate_api::conditions;
use tidegate_api::gitrepository::{GitRepositoryStatus, VerificationMode};
use tidegate_api::meta::Artifact;
use tidegate_source::extract::Limits;
use tidegate_source::git::Auth;
use tidegate_source::verify::Keyring;

use super::Context;
use crate::source::failure::{
    ARTIFACT_IN_STORAGE, FETCH_FAILED, Failure, INCLUDE_UNAVAILABLE, SOURCE_VERIFIED,
    STORAGE_FAILED,
};
use crate::source::{Done, ReconcileError, secret_data};

use super::artifact::{Fetch, Job, Packed, fetch_verified, pack, up_to_date};

pub(super) async fn reconcile(
    obj: &GitRepository,
    ctx: &Context,
) -> Result<Action, ReconcileError> {
    crate::source::reconcile(obj, &ctx.shared(), async |st| steps(obj, ctx, st).await).await
}

/// Everything from the storage check to the new artifact.
async fn steps(
    obj: &GitRepository,
    ctx: &Context,
    st: &mut GitRepositoryStatus,
) -> Result<Done, Failure> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    unsupported(obj, &ctx.options)?;

    let secret = match &obj.spec.secret_ref {
        Some(r) => Some(
            secret_data(&ctx.client, &ns, &r.name)
                .await
                .map_err(|m| Failure::new(FETCH_FAILED, "AuthenticationFailed", m))?,
        ),
        None => None,
    };
    let mut auth = Auth::from_secret(&obj.spec.url, secret.as_ref()).map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "AuthenticationFailed",
            format!("failed to configure authentication options: {e}"),
        )
    })?;
    if let Some(r) = &obj.spec.proxy_secret_ref {
        auth.proxy = Some(
            crate::source::proxy::proxy_url(&ctx.client, &ns, &r.name)
                .await
                .map_err(|m| {
                    Failure::new(
                        FETCH_FAILED,
                        "AuthenticationFailed",
                        format!("failed to configure proxy options: {m}"),
                    )
                })?,
        );
    }
    let includes = include_artifacts(obj, ctx).await?;
    let included: Vec<Artifact> = includes.iter().map(|i| i.artifact.clone()).collect();

    let verify = obj.spec.verify.clone();
    let keyring =
        match &verify {
            Some(v) => {
                let data = secret_data(&ctx.client, &ns, &v.secret_ref.name)
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
            Ok(done(revision, None, None))
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
            Ok(done(revision, message, verified))
        }
    }
}

/// Flux's messages for a stored Git artifact: Ready names the revision, the event the
/// commit's subject.
fn done(revision: String, subject: Option<String>, verified: Option<String>) -> Done {
    Done {
        ready_message: format!("stored artifact for revision '{revision}'"),
        new_artifact_message: format!(
            "stored artifact for commit '{}'",
            subject.as_deref().unwrap_or(&revision)
        ),
        revision,
        verified,
        reason: "Succeeded",
    }
}

/// `spec.timeout` (default 60s).
pub(super) fn spec_timeout(obj: &GitRepository) -> Duration {
    tidegate_core::duration::parse(obj.spec.timeout()).unwrap_or(Duration::from_secs(60))
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
    if spec.provider.as_deref().is_some_and(|p| p != "generic") {
        return Err(stall("spec.provider other than generic"));
    }
    if spec.service_account_name.is_some() {
        return Err(stall("spec.serviceAccountName"));
    }
    let (ns, name) = (obj.namespace().unwrap_or_default(), obj.name_any());
    if !options.file_urls.allows(&spec.url, &ns, &name) {
        return Err(Failure::new(
            FETCH_FAILED,
            "URLInvalid",
            options.file_urls.refusal(&ns, &name),
        )
        .stall());
    }
    Ok(())
}
