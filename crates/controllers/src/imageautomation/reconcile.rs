//! One ImageUpdateAutomation reconcile, as Flux's: the ImagePolicies with a latest image
//! (`policySelector`), the GitRepository and its credentials, the signing key, a checkout that
//! stops early when neither the policies nor the remote moved, the setters under
//! `update.path`, the templated commit and the push; `repository up-to-date` when done.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kube::api::ListParams;
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use tidegate_api::conditions::{self, READY, RECONCILING};
use tidegate_api::imageupdateautomation::{ImageUpdateAutomationStatus, ObservedRef};
use tidegate_api::{GitRepository, ImagePolicy, ImageUpdateAutomation};
use tidegate_source::git::commit::Author;
use tidegate_source::git::sign::Signer;
use tidegate_source::git::{Auth, GitError, GitReference};
use tidegate_source::image::setters::{LatestRef, Setters};
use tidegate_source::image::update::{self, Checkout, CheckoutRequest, PushRequest};

use super::template::{self, MessageError};
use super::{Context, ReconcileError};
use crate::events::EventType;

/// Ready's message after a successful run.
pub const READY_MESSAGE: &str = "repository up-to-date";

/// How a run ends when it does not succeed.
struct Failure {
    reason: &'static str,
    message: String,
    stalled: bool,
}

impl Failure {
    fn failed(reason: &'static str, message: String) -> Failure {
        Failure {
            reason,
            message,
            stalled: false,
        }
    }

    fn stalled(reason: &'static str, message: String) -> Failure {
        Failure {
            stalled: true,
            ..Failure::failed(reason, message)
        }
    }
}

/// How a run ends when it succeeds.
enum Done {
    /// Neither the policies nor the remote moved.
    Skipped,
    /// Checked out; nothing to change.
    UpToDate,
    /// A commit was pushed; Flux's summary of it.
    Pushed(String),
}

/// What the source manager gathers before a checkout.
struct Source {
    url: String,
    auth: Auth,
    timeout: Duration,
    reference: GitReference,
    push_branch: String,
    switch_branch: bool,
    signer: Option<Signer>,
}

fn invalid_source(message: String) -> Failure {
    Failure::stalled(
        "InvalidSourceConfiguration",
        format!("{message}: invalid source configuration"),
    )
}

fn manager_failed(message: String) -> Failure {
    Failure::failed(
        "SourceManagerFailed",
        format!("failed configuring source manager: {message}"),
    )
}

/// The GitRepository, its credentials, the checkout reference, the push branch and the signer
/// (Flux's `NewSourceManager`).
async fn source(obj: &ImageUpdateAutomation, ctx: &Context) -> Result<Source, Failure> {
    let own = obj.namespace().unwrap_or_default();
    let r = &obj.spec.source_ref;
    if r.kind != "GitRepository" {
        return Err(invalid_source(format!(
            "source kind '{}' not supported",
            r.kind
        )));
    }
    let Some(git) = &obj.spec.git else {
        return Err(invalid_source(
            "source kind 'GitRepository' necessitates field .spec.git".into(),
        ));
    };
    let ns = r
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or(own.clone());
    if ctx.options.no_cross_namespace_refs && ns != own {
        return Err(Failure::stalled(
            "AccessDenied",
            format!(
                "can't access 'GitRepository/{ns}/{}', cross-namespace references have been blocked",
                r.name
            ),
        ));
    }
    let repos: Api<GitRepository> = Api::namespaced(ctx.client.clone(), &ns);
    let repo = match repos.get_opt(&r.name).await {
        Ok(Some(repo)) => repo,
        Ok(None) => {
            return Err(manager_failed(format!(
                "referenced git repository does not exist: gitrepositories.source.toolkit.fluxcd.io \"{}\" not found",
                r.name
            )));
        }
        Err(e) => {
            return Err(manager_failed(format!(
                "failed to get referenced git repository: {e}"
            )));
        }
    };
    let spec = &repo.spec;
    if !ctx.options.file_urls.allows(&spec.url, &ns, &r.name) {
        return Err(invalid_source(ctx.options.file_urls.refusal(&ns, &r.name)));
    }
    if spec.provider.as_deref().is_some_and(|p| p != "generic") {
        return Err(invalid_source(format!(
            "GitRepository provider '{}' is not supported by Tidegate yet",
            spec.provider.as_deref().unwrap_or_default()
        )));
    }
    let timeout = spec
        .timeout
        .as_deref()
        .and_then(|t| tidegate_core::duration::parse(t).ok())
        .unwrap_or(Duration::from_secs(60));
    let checkout = git
        .checkout
        .as_ref()
        .map(|c| c.reference.clone())
        .or_else(|| spec.reference.clone());
    let reference = checkout
        .as_ref()
        .map(|r| GitReference {
            branch: r.branch.clone(),
            tag: r.tag.clone(),
            semver: r.semver.clone(),
            name: r.name.clone(),
            commit: r.commit.clone(),
        })
        .unwrap_or_default();
    let checkout_branch = match &checkout {
        Some(c) => c.branch.clone().unwrap_or_default(),
        None => tidegate_source::git::select::DEFAULT_BRANCH.to_string(),
    };
    let (push_branch, switch_branch) = match git.push.as_ref().filter(|p| !p.branch.is_empty()) {
        Some(p) => (p.branch.clone(), p.branch != checkout_branch),
        None => {
            if checkout
                .as_ref()
                .and_then(|c| c.branch.as_deref())
                .is_none_or(str::is_empty)
            {
                return Err(manager_failed(
                    "push spec not provided, and cannot be inferred from .spec.git.checkout.ref or GitRepository .spec.ref".into(),
                ));
            }
            (checkout_branch, false)
        }
    };
    let secret = match &spec.secret_ref {
        Some(s) => Some(
            crate::source::secret_data(&ctx.client, &ns, &s.name)
                .await
                .map_err(|e| {
                    manager_failed(format!("failed to get auth secret '{ns}/{}': {e}", s.name))
                })?,
        ),
        None => None,
    };
    let mut auth = Auth::from_secret(&spec.url, secret.as_ref())
        .map_err(|e| manager_failed(format!("failed to configure authentication options: {e}")))?;
    if let Some(r) = &spec.proxy_secret_ref {
        auth.proxy = Some(
            crate::source::proxy::proxy_url(&ctx.client, &ns, &r.name)
                .await
                .map_err(manager_failed)?,
        );
    }
    let signer = match &git.commit.signing_key {
        None => None,
        Some(key) => Some(signer(ctx, &own, key).await.map_err(manager_failed)?),
    };
    Ok(Source {
        url: spec.url.clone(),
        auth,
        timeout,
        reference,
        push_branch,
        switch_branch,
        signer,
    })
}

/// The signing key of `spec.git.commit.signingKey`, from the automation's namespace.
async fn signer(
    ctx: &Context,
    namespace: &str,
    key: &tidegate_api::imageupdateautomation::SigningKey,
) -> Result<Signer, String> {
    let name = &key.secret_ref.name;
    let data = crate::source::secret_data(&ctx.client, namespace, name)
        .await
        .map_err(|e| format!("could not find signing key secret '{name}': {e}"))?;
    match key.key_type.as_deref().unwrap_or("gpg") {
        "gpg" | "" => {
            let armored = data.get("git.asc").ok_or_else(|| {
                format!("signing key secret '{name}' does not contain a 'git.asc' key")
            })?;
            Signer::open_pgp(name, armored, data.get("passphrase").map(Vec::as_slice))
                .map_err(|e| e.0)
        }
        "ssh" => {
            let identity = data.get("identity").ok_or_else(|| {
                format!("signing key secret '{name}' does not contain an 'identity' key")
            })?;
            Signer::ssh(name, identity, data.get("password").map(Vec::as_slice)).map_err(|e| e.0)
        }
        other => Err(format!("unknown signing key type \"{other}\"")),
    }
}

/// The ImagePolicies of the namespace `policySelector` selects that have a latest image.
async fn policies(obj: &ImageUpdateAutomation, ctx: &Context) -> Result<Vec<ImagePolicy>, Failure> {
    let ns = obj.namespace().unwrap_or_default();
    let mut params = ListParams::default();
    if let Some(selector) = &obj.spec.policy_selector {
        let s = crate::selector::to_string(selector).map_err(|e| {
            Failure::stalled(
                "InvalidPolicySelector",
                format!("failed to parse policy selector: {e}"),
            )
        })?;
        if !s.is_empty() {
            params = params.labels(&s);
        }
    }
    let api: Api<ImagePolicy> = Api::namespaced(ctx.client.clone(), &ns);
    let list = api.list(&params).await.map_err(|e| {
        Failure::failed(
            "ReconciliationFailed",
            format!("failed to list policies: {e}"),
        )
    })?;
    Ok(list
        .items
        .into_iter()
        .filter(|p| p.status.as_ref().is_some_and(|s| s.latest_ref.is_some()))
        .collect())
}

/// Runs a blocking Git step bounded by `timeout`; the step sees `interrupt` set when time is up.
async fn bounded<T: Send + 'static>(
    timeout: Duration,
    what: &str,
    step: impl FnOnce(Arc<AtomicBool>) -> Result<T, GitError> + Send + 'static,
) -> Result<T, String> {
    let interrupt = Arc::new(AtomicBool::new(false));
    let flag = interrupt.clone();
    let task = tokio::task::spawn_blocking(move || step(flag));
    match tokio::time::timeout(timeout, task).await {
        Ok(Ok(r)) => r.map_err(|e| e.to_string()),
        Ok(Err(e)) => Err(format!("{what}: {e}")),
        Err(_) => {
            interrupt.store(true, Ordering::Relaxed);
            Err(format!(
                "{what}: context deadline exceeded (timeout {})",
                tidegate_core::duration::format(timeout)
            ))
        }
    }
}

/// Everything after the prologue; writes the observations into `status`.
async fn run(
    obj: &ImageUpdateAutomation,
    ctx: &Context,
    status: &mut ImageUpdateAutomationStatus,
) -> Result<Done, Failure> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let policies = policies(obj, ctx).await?;
    let mut observed: BTreeMap<String, ObservedRef> = BTreeMap::new();
    let mut setters = Setters::new();
    for p in &policies {
        let Some(l) = p.status.as_ref().and_then(|s| s.latest_ref.as_ref()) else {
            continue;
        };
        let digest = l.digest.clone().unwrap_or_default();
        observed.insert(
            p.name_any(),
            ObservedRef {
                name: l.name.clone(),
                tag: l.tag.clone(),
                digest: digest.clone(),
            },
        );
        setters.add_policy(
            &p.namespace().unwrap_or_default(),
            &p.name_any(),
            &LatestRef {
                name: l.name.clone(),
                tag: l.tag.clone(),
                digest,
            },
        );
    }
    let mut sync_needed = observed != status.observed_policies;
    let src = source(obj, ctx).await?;
    let git = obj.spec.git.clone().unwrap_or_default();
    let refspec = git
        .push
        .as_ref()
        .map(|p| p.refspec.clone())
        .filter(|r| !r.is_empty());
    if src.switch_branch || refspec.is_some() {
        sync_needed = true;
    }
    let last_observed = status
        .observed_source_revision
        .clone()
        .filter(|r| !sync_needed && !r.is_empty());

    let update = obj.spec.update.clone().unwrap_or_default();
    let path = update.path.clone();
    let checkout = {
        let (url, auth, reference) = (src.url.clone(), src.auth.clone(), src.reference.clone());
        let (push_branch, switch) = (src.push_branch.clone(), src.switch_branch);
        let timeout = src.timeout;
        bounded(src.timeout, "failed to checkout source", move |interrupt| {
            update::checkout(&CheckoutRequest {
                url: &url,
                auth: &auth,
                timeout,
                interrupt: &interrupt,
                reference: &reference,
                push_branch: &push_branch,
                switch_branch: switch,
                last_observed: last_observed.as_deref(),
            })
        })
        .await
        .map_err(|e| {
            let e = e
                .strip_prefix("failed to checkout source: ")
                .unwrap_or(&e)
                .to_string();
            Failure::failed(
                "GitOperationFailed",
                format!("failed to checkout source: {e}"),
            )
        })?
    };
    let mut workspace = match checkout {
        Checkout::Unchanged => return Ok(Done::Skipped),
        Checkout::Ready(w) => w,
    };
    if obj.spec.update.is_none() {
        return Err(Failure::stalled(
            "InvalidUpdateStrategy",
            "no update strategy".into(),
        ));
    }
    if update.strategy != "Setters" {
        return Err(Failure::stalled(
            "InvalidUpdateStrategy",
            format!("unsupported update strategy: {}", update.strategy),
        ));
    }
    let (workspace_back, result) = tokio::task::spawn_blocking(move || {
        let r = workspace.apply_setters(&path, &setters);
        (workspace, r)
    })
    .await
    .map_err(|e| Failure::failed("UpdateFailed", format!("failed to apply policies: {e}")))?;
    workspace = workspace_back;
    let result = result
        .map_err(|e| Failure::failed("UpdateFailed", format!("failed to apply policies: {e}")))?;
    if result.is_empty() {
        status.observed_source_revision = Some(workspace.revision.clone());
        status.observed_policies = observed;
        return Ok(Done::UpToDate);
    }
    let message = template::render(
        &git.commit.message_template,
        &ns,
        &name,
        &result.files,
        &git.commit.message_template_values,
    )
    .map_err(|e| match e {
        MessageError::RemovedField(m) => Failure::stalled("RemovedTemplateField", m),
        MessageError::Failed(m) => Failure::failed(
            "GitOperationFailed",
            format!("failed to update source: {m}"),
        ),
    })?;
    let author = Author {
        name: git.commit.author.name.clone(),
        email: git.commit.author.email.clone(),
    };
    let checkout_revision = workspace.revision.clone();
    let push_branch = src.push_branch.clone();
    let (url, auth) = (src.url.clone(), src.auth.clone());
    let timeout = src.timeout;
    let force = ctx.options.force_push_branch && src.switch_branch;
    let options = git
        .push
        .as_ref()
        .map(|p| p.options.clone())
        .unwrap_or_default();
    let signer = src.signer;
    let msg = message.clone();
    let refspec_push = refspec.clone();
    let commit = bounded(src.timeout, "failed to update source", move |_| {
        let commit = workspace.commit(&result, &author, &msg, signer.as_ref())?;
        workspace.push(&PushRequest {
            url: &url,
            auth: &auth,
            timeout,
            force_push_branch: force,
            refspec: refspec_push.as_deref(),
            options: &options,
        })?;
        Ok(commit)
    })
    .await
    .map_err(|e| {
        let e = e
            .strip_prefix("failed to update source: ")
            .unwrap_or(&e)
            .to_string();
        Failure::failed(
            "GitOperationFailed",
            format!("failed to update source: {e}"),
        )
    })?;
    let hex = commit.to_string();
    status.observed_source_revision = Some(if src.switch_branch {
        checkout_revision
    } else {
        format!("{push_branch}@sha1:{hex}")
    });
    status.observed_policies = observed;
    status.last_push_commit = Some(hex.clone());
    status.last_push_time = Some(crate::notification::webhook::now_rfc3339());
    Ok(Done::Pushed(summary(
        &hex,
        &push_branch,
        refspec.as_deref(),
        &message,
    )))
}

/// Flux's `PushResult.Summary`.
fn summary(commit: &str, branch: &str, refspec: Option<&str>, message: &str) -> String {
    let short = &commit[..commit.len().min(7)];
    let mut s = format!("pushed commit '{short}' to branch '{branch}'");
    if let Some(r) = refspec {
        s.push_str(&format!(" and refspecs '{r}'"));
    }
    if !message.is_empty() {
        s.push('\n');
        s.push_str(message);
    }
    s
}

pub(super) async fn reconcile(
    obj: &ImageUpdateAutomation,
    ctx: &Context,
) -> Result<Action, ReconcileError> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let api: Api<ImageUpdateAutomation> = Api::namespaced(ctx.client.clone(), &ns);
    let key = format!("imageupdateautomation/{ns}/{name}");
    let fail = |message: String| ReconcileError {
        retry: ctx.backoff.failed(&key),
        message,
    };
    let done = crate::shared::prologue(
        &api,
        obj,
        &ctx.versions,
        &ctx.metrics,
        obj.spec.suspend,
        || {},
    )
    .await
    .map_err(fail)?;
    if done {
        return Ok(Action::await_change());
    }
    let generation = obj.meta().generation;
    let mut old = obj.status.clone().unwrap_or_default();
    let was_ready = conditions::is_true(&old.conditions, READY);
    let mut status = old.clone();
    status.last_automation_run_time = Some(crate::notification::webhook::now_rfc3339());
    let requested = obj
        .annotations()
        .get(tidegate_api::meta::RECONCILE_REQUESTED_AT)
        .cloned();
    let observed_generation = old.observed_generation.unwrap_or(-1);
    let progress = if generation.unwrap_or_default() != observed_generation {
        Some(format!(
            "processing object: new generation {observed_generation} -> {}",
            generation.unwrap_or_default()
        ))
    } else if requested.is_some() && requested != old.last_handled_reconcile_at {
        Some("reconciliation in progress".to_string())
    } else {
        None
    };
    let reconciling = progress
        .clone()
        .unwrap_or_else(|| "reconciliation in progress".to_string());
    if let Some(message) = &progress {
        conditions::set(
            &mut status.conditions,
            RECONCILING,
            true,
            "Progressing",
            message,
            generation,
        );
        conditions::set_status(
            &mut status.conditions,
            READY,
            "Unknown",
            "Progressing",
            message,
            generation,
        );
        crate::status::patch(&api, &ctx.versions, &name, &old, &status)
            .await
            .map_err(&fail)?;
        // The final write is a difference from what the server now holds, not from the
        // status the run started with (else a Ready back to its old value would be left
        // Unknown).
        old = status.clone();
    }
    // Handled only once the run is done, so `reconcile image update` waits for its result.
    if requested.is_some() {
        status.last_handled_reconcile_at = requested;
    }
    let outcome = run(obj, ctx, &mut status).await;
    let interval =
        tidegate_core::duration::parse(&obj.spec.interval).unwrap_or(Duration::from_secs(600));
    match outcome {
        Ok(done) => {
            conditions::mark_ready(
                &mut status.conditions,
                "Succeeded",
                READY_MESSAGE,
                generation,
            );
            status.observed_generation = generation;
            crate::status::patch(&api, &ctx.versions, &name, &old, &status)
                .await
                .map_err(&fail)?;
            ctx.backoff.succeeded(&key);
            match done {
                Done::Pushed(summary) => {
                    ctx.recorder
                        .publish(obj, EventType::Normal, "Succeeded", &summary, &[])
                        .await;
                }
                _ if !was_ready => {
                    ctx.recorder
                        .publish(obj, EventType::Normal, "Succeeded", READY_MESSAGE, &[])
                        .await;
                }
                Done::Skipped => {
                    tracing::debug!(namespace = %ns, name = %name, "no change since last reconciliation");
                }
                Done::UpToDate => {
                    tracing::debug!(namespace = %ns, name = %name, READY_MESSAGE);
                }
            }
            Ok(Action::requeue(interval))
        }
        Err(f) => {
            conditions::mark_failed(
                &mut status.conditions,
                f.reason,
                &f.message,
                f.stalled,
                &reconciling,
                generation,
            );
            if f.stalled {
                status.observed_generation = generation;
            }
            crate::status::patch(&api, &ctx.versions, &name, &old, &status)
                .await
                .map_err(&fail)?;
            ctx.recorder
                .publish(obj, EventType::Warning, f.reason, &f.message, &[])
                .await;
            if f.stalled {
                Ok(Action::await_change())
            } else {
                Err(fail(f.message))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn push_summary_as_flux_words_it() {
        assert_eq!(
            super::summary(
                "0123456789abcdef",
                "main",
                None,
                "Update from image update automation"
            ),
            "pushed commit '0123456' to branch 'main'\nUpdate from image update automation"
        );
        assert_eq!(
            super::summary(
                "0123456789abcdef",
                "auto",
                Some("refs/heads/auto:refs/heads/x"),
                ""
            ),
            "pushed commit '0123456' to branch 'auto' and refspecs 'refs/heads/auto:refs/heads/x'"
        );
    }
}
