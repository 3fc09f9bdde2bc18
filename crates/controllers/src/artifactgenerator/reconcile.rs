//! One ArtifactGenerator reconcile, in source-watcher's order: finalizer, suspend, validation,
//! the sources' artifacts, drift detection, then fetch, build, store and publish each
//! ExternalArtifact, and remove the ones no longer generated. Conditions, reasons, messages and
//! events are source-watcher's.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::json;
use sha2::{Digest, Sha256};
use tidegate_api::artifactgenerator::{
    ArtifactGeneratorStatus, ExternalArtifactReference, FINALIZER, GENERATOR_LABEL,
    RECONCILE_ANNOTATION,
};
use tidegate_api::conditions::{self, READY, RECONCILING, STALLED};
use tidegate_api::meta::{Artifact, RECONCILE_REQUESTED_AT};
use tidegate_api::{ArtifactGenerator, ExternalArtifact};
use tidegate_source::extract::Limits;
use tidegate_source::ignore::SourceIgnore;
use tidegate_source::storage::Storage;
use tidegate_source::tree::{FileTree, NoBlobs};

use super::pathpattern::{PatternError, Request, expand};
use super::{CONTROLLER, Context, ReconcileError};
use crate::events::EventType;
use crate::sources::Found;

const ORIGIN_REVISION: &str = "org.opencontainers.image.revision";
const IN_PROGRESS: &str = "Reconciliation in progress";

/// A status being written: the object's conditions with its generation.
struct Status {
    st: ArtifactGeneratorStatus,
    generation: Option<i64>,
}

impl Status {
    fn set(&mut self, type_: &str, status: bool, reason: &str, message: &str) {
        conditions::set(
            &mut self.st.conditions,
            type_,
            status,
            reason,
            message,
            self.generation,
        );
    }
    fn progressing(&mut self) {
        self.set(RECONCILING, true, "Progressing", IN_PROGRESS);
        conditions::delete(&mut self.st.conditions, STALLED);
        conditions::set_status(
            &mut self.st.conditions,
            READY,
            "Unknown",
            "Progressing",
            IN_PROGRESS,
            self.generation,
        );
    }
    /// Ready=False; a Reconciling condition says the controller retries.
    fn not_ready(&mut self, reason: &str, message: &str) {
        self.set(READY, false, reason, message);
        if let Some(c) = conditions::get(&self.st.conditions, RECONCILING).cloned() {
            self.set(RECONCILING, true, "ProgressingWithRetry", &c.message);
        }
    }
    fn stalled(&mut self, reason: &str, message: &str) {
        self.set(READY, false, reason, message);
        self.set(STALLED, true, reason, message);
        conditions::delete(&mut self.st.conditions, RECONCILING);
    }
}

pub(super) async fn reconcile(
    obj: &ArtifactGenerator,
    ctx: &Context,
) -> Result<Action, ReconcileError> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let api: Api<ArtifactGenerator> = Api::namespaced(ctx.client.clone(), &ns);
    let key = format!("{ns}/{name}");
    let fail = |message: String| ReconcileError {
        retry: ctx.backoff.failed(&key),
        message,
    };
    if obj.metadata.deletion_timestamp.is_some() {
        if crate::finalizer::has_named(obj, FINALIZER) {
            let inventory = obj
                .status
                .as_ref()
                .map(|s| s.inventory.clone())
                .unwrap_or_default();
            for entry in &inventory {
                remove_artifact(ctx, &entry.namespace, &entry.name).await;
            }
            crate::finalizer::remove_named(&api, obj, FINALIZER)
                .await
                .map_err(fail)?;
            ctx.versions.forget(obj);
        }
        return Ok(Action::await_change());
    }
    crate::finalizer::add_named(&api, obj, &ctx.versions, FINALIZER)
        .await
        .map_err(fail)?;

    let mut written = obj.status.clone().unwrap_or_default();
    let mut status = Status {
        st: written.clone(),
        generation: obj.metadata.generation,
    };
    if let Some(at) = obj.annotations().get(RECONCILE_REQUESTED_AT) {
        status.st.last_handled_reconcile_at = Some(at.clone());
    }
    let suspended = obj
        .annotations()
        .get(RECONCILE_ANNOTATION)
        .is_some_and(|v| v.eq_ignore_ascii_case("disabled"));
    crate::shared::check_suspended(obj, suspended, &ctx.metrics);
    if suspended {
        if conditions::get(&status.st.conditions, READY).is_none() {
            status.set(
                READY,
                true,
                "ReconciliationDisabled",
                "Initialized with reconciliation suspended",
            );
        }
        publish(
            ctx,
            obj,
            EventType::Normal,
            "ReconciliationDisabled",
            "Reconciliation is disabled",
        )
        .await;
        write(ctx, &api, &name, &written, &status.st)
            .await
            .map_err(fail)?;
        return Ok(Action::await_change());
    }

    let outcome = steps(obj, ctx, &api, &mut written, &mut status).await;
    write(ctx, &api, &name, &written, &status.st)
        .await
        .map_err(fail)?;
    for c in &status.st.conditions {
        if c.type_ == READY || c.type_ == RECONCILING || c.type_ == STALLED {
            ctx.metrics.record_condition(
                &crate::metrics::ObjectLabels::of(obj),
                &c.type_,
                &c.status,
            );
        }
    }
    match outcome {
        Ok(action) => {
            ctx.backoff.succeeded(&key);
            Ok(action)
        }
        Err(message) => Err(fail(message)),
    }
}

async fn publish(
    ctx: &Context,
    obj: &ArtifactGenerator,
    kind: EventType,
    reason: &str,
    message: &str,
) {
    ctx.recorder.publish(obj, kind, reason, message, &[]).await;
}

async fn write(
    ctx: &Context,
    api: &Api<ArtifactGenerator>,
    name: &str,
    old: &ArtifactGeneratorStatus,
    new: &ArtifactGeneratorStatus,
) -> Result<(), String> {
    crate::status::patch(api, &ctx.versions, name, old, new).await
}

/// Everything after suspend; `Err` is retried with backoff (the status says why).
async fn steps(
    obj: &ArtifactGenerator,
    ctx: &Context,
    api: &Api<ArtifactGenerator>,
    written: &mut ArtifactGeneratorStatus,
    status: &mut Status,
) -> Result<Action, String> {
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    if let Err((reason, message)) = validate(obj, ctx.options.no_cross_namespace_refs) {
        status.stalled(reason, &message);
        publish(ctx, obj, EventType::Warning, reason, &message).await;
        return Ok(Action::await_change());
    }

    // The sources' artifacts, from the watches.
    let mut artifacts: BTreeMap<String, Artifact> = BTreeMap::new();
    for (source, (kind, sns, sname)) in obj.spec.sources.iter().zip(super::sources_of(obj)) {
        let found = match ctx.sources.find(&kind, &sns, &sname) {
            Found::Object {
                artifact: Some(a), ..
            } => Ok(a),
            Found::Object { artifact: None, .. } => {
                Err(format!("source '{kind}/{sns}/{sname}' is not ready"))
            }
            Found::Missing(message) => Err(message),
            Found::UnknownKind => Err(format!(
                "unable to get source '{sns}/{sname}': kind '{kind}' is not supported"
            )),
        };
        match found {
            Ok(a) => {
                artifacts.insert(source.alias.clone(), a);
            }
            Err(e) => {
                let message = format!("get sources failed: {e}");
                status.not_ready("SourceFetchFailed", &message);
                publish(ctx, obj, EventType::Warning, "SourceFetchFailed", &message).await;
                return Ok(Action::requeue(ctx.options.requeue_dependency));
            }
        }
    }
    let digest = sources_digest(&artifacts);

    if let Some(reason) = drift(obj, ctx, &status.st, &digest).await {
        tracing::info!(name, namespace = ns, reason, "drift detected, reconciling");
    } else {
        let n = status.st.inventory.len();
        publish(
            ctx,
            obj,
            EventType::Normal,
            "Ready",
            &format!("No drift detected, {n} artifact(s) up to date"),
        )
        .await;
        return Ok(Action::requeue(Duration::from_secs(3600)));
    }
    status.progressing();
    write(ctx, api, &name, written, &status.st).await?;
    // Later writes patch from what is stored now.
    *written = status.st.clone();

    // Fetch every source into <tmp>/<alias>.
    let work = tidegate_source::scratch::tempdir("ag-")
        .map_err(|e| format!("failed to create temporary directory: {e}"))?;
    let mut dirs: HashMap<String, std::path::PathBuf> = HashMap::new();
    for (alias, a) in &artifacts {
        let dir = work.path().join("sources").join(alias);
        if let Err(e) = tidegate_source::fetch::fetch_artifact(
            &ctx.http,
            &a.url,
            &a.digest,
            &dir,
            Limits::default(),
        )
        .await
        {
            let message = format!("fetch sources failed: {e}");
            status.not_ready("SourceFetchFailed", &message);
            publish(ctx, obj, EventType::Warning, "SourceFetchFailed", &message).await;
            return Ok(Action::requeue(ctx.options.requeue_dependency));
        }
        dirs.insert(alias.clone(), dir);
    }

    let requests = match obj.spec.path_pattern.as_deref().filter(|p| !p.is_empty()) {
        None => obj
            .spec
            .artifacts
            .iter()
            .map(|a| Request {
                artifact: a.clone(),
                labels: BTreeMap::new(),
            })
            .collect(),
        Some(pattern) => match expand(pattern, &obj.spec.artifacts, &dirs) {
            Ok(r) => r,
            Err(PatternError::Terminal(e)) => {
                let message = format!("failed to expand path pattern: {e}");
                status.stalled("BuildFailed", &message);
                publish(ctx, obj, EventType::Warning, "BuildFailed", &message).await;
                return Ok(Action::await_change());
            }
            Err(PatternError::Walk(e)) => {
                let message = format!("failed to expand path pattern: {e}");
                conditions::delete(&mut status.st.conditions, STALLED);
                status.not_ready("BuildFailed", &message);
                publish(ctx, obj, EventType::Warning, "BuildFailed", &message).await;
                return Err(message);
            }
        },
    };

    let mut inventory = Vec::new();
    let mut changed = Vec::new();
    for req in &requests {
        let out = &req.artifact;
        let staging = work.path().join("artifacts").join(&out.name);
        let built = build_and_store(ctx, &ns, &out.name, &out.copy, &dirs, &staging).await;
        let (stored, filename) = match built {
            Ok(b) => b,
            Err(e) => {
                let message = format!("{} build failed: {e}", out.name);
                status.not_ready("BuildFailed", &message);
                publish(ctx, obj, EventType::Warning, "BuildFailed", &message).await;
                return Err(message);
            }
        };
        let alias_of = |r: &Option<String>| {
            r.as_deref()
                .and_then(|r| r.strip_prefix('@'))
                .map(str::to_string)
        };
        let mut artifact = stored;
        artifact.revision = match alias_of(&out.revision).and_then(|a| artifacts.get(&a)) {
            Some(src) => src.revision.clone(),
            None => format!("latest@{}", artifact.digest),
        };
        if let Some(src) = alias_of(&out.origin_revision).and_then(|a| artifacts.get(&a)) {
            let origin = src
                .metadata
                .get(ORIGIN_REVISION)
                .cloned()
                .unwrap_or_else(|| src.revision.clone());
            artifact
                .metadata
                .insert(ORIGIN_REVISION.to_string(), origin);
        }
        if let Err(e) = publish_artifact(ctx, obj, &out.name, &req.labels, &artifact).await {
            let message = format!("{} reconcile failed: {e}", out.name);
            status.not_ready("ReconciliationFailed", &message);
            publish(
                ctx,
                obj,
                EventType::Warning,
                "ReconciliationFailed",
                &message,
            )
            .await;
            return Err(message);
        }
        let known = status
            .st
            .inventory
            .iter()
            .any(|i| i.name == out.name && i.namespace == ns && i.digest == artifact.digest);
        if !known {
            publish(
                ctx,
                obj,
                EventType::Normal,
                "Ready",
                &format!(
                    "ExternalArtifact/{ns}/{} reconciled with revision {}",
                    out.name, artifact.revision
                ),
            )
            .await;
            changed.push(format!("{ns}/{} ({})", out.name, artifact.digest));
        }
        inventory.push(ExternalArtifactReference {
            name: out.name.clone(),
            namespace: ns.clone(),
            digest: artifact.digest.clone(),
            filename,
        });
    }
    // Artifacts no longer generated.
    for old in &status.st.inventory {
        if !inventory
            .iter()
            .any(|i| i.name == old.name && i.namespace == old.namespace)
        {
            remove_artifact(ctx, &old.namespace, &old.name).await;
        }
    }
    let n = inventory.len();
    status.st.inventory = inventory;
    status.st.observed_sources_digest = Some(digest);
    let message = format!("reconciliation succeeded, generated {n} artifact(s)");
    status.set(READY, true, "Succeeded", &message);
    conditions::delete(&mut status.st.conditions, RECONCILING);
    conditions::delete(&mut status.st.conditions, STALLED);
    publish(ctx, obj, EventType::Normal, "Ready", &message).await;
    if !changed.is_empty() {
        let message = format!("external artifacts reconciled: {}", changed.join("\n"));
        tracing::info!(name, namespace = ns, "{message}");
        publish(ctx, obj, EventType::Normal, "Ready", &message).await;
    }
    Ok(Action::requeue(crate::timing::jittered(
        Duration::from_secs(3600),
        ctx.options.jitter_percent,
    )))
}

/// Builds artifact `name` from `ops` in `staging` and stores it; the stored artifact (revision
/// not set yet) and its file name.
async fn build_and_store(
    ctx: &Context,
    ns: &str,
    name: &str,
    ops: &[tidegate_api::artifactgenerator::CopyOperation],
    dirs: &HashMap<String, std::path::PathBuf>,
    staging: &std::path::Path,
) -> Result<(Artifact, String), String> {
    let (storage, ns, name, ops, dirs, staging) = (
        ctx.storage.clone(),
        ns.to_string(),
        name.to_string(),
        ops.to_vec(),
        dirs.clone(),
        staging.to_path_buf(),
    );
    tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(&staging)
            .map_err(|e| format!("failed to create staging dir: {e}"))?;
        super::build::apply(&dirs, &staging, &ops)?;
        let hash = super::build::dir_hash(&staging, &name)
            .map_err(|e| format!("failed to hash staging dir: {e}"))?;
        let filename = format!("{hash}.tar.gz");
        let path = Storage::artifact_path("ExternalArtifact", &ns, &name, &filename);
        let tree =
            FileTree::from_dir(&staging).map_err(|e| format!("failed to create artifact: {e}"))?;
        // The archive leaves out what source-controller's default ignore rules leave out.
        let ignore = SourceIgnore::new([], None);
        let written = storage
            .write_atomic(&path, |out| tree.write_archive(&ignore, &NoBlobs, out))
            .map_err(|e| format!("failed to create artifact: {e}"))?;
        let _ = storage.garbage_collect(&path);
        Ok((
            Artifact {
                url: storage.url(&path),
                path,
                revision: String::new(),
                digest: written.digest,
                last_update_time: crate::source::artifact_time(),
                size: i64::try_from(written.size).ok(),
                metadata: BTreeMap::new(),
            },
            filename,
        ))
    })
    .await
    .map_err(|e| e.to_string())?
}

/// Applies ExternalArtifact `name` (server-side, as source-watcher) and its status.
async fn publish_artifact(
    ctx: &Context,
    obj: &ArtifactGenerator,
    name: &str,
    captures: &BTreeMap<String, String>,
    artifact: &Artifact,
) -> Result<(), String> {
    let ns = obj.namespace().unwrap_or_default();
    // Common labels, then the path pattern's captures, then the two that always win.
    let mut labels = obj
        .spec
        .common_metadata
        .as_ref()
        .map(|m| m.labels.clone())
        .unwrap_or_default();
    labels.extend(captures.iter().map(|(k, v)| (k.clone(), v.clone())));
    labels.insert("app.kubernetes.io/managed-by".into(), CONTROLLER.into());
    labels.insert(GENERATOR_LABEL.into(), obj.uid().unwrap_or_default());
    let mut metadata = json!({"name": name, "namespace": ns, "labels": labels});
    if let Some(a) = obj
        .spec
        .common_metadata
        .as_ref()
        .map(|m| &m.annotations)
        .filter(|a| !a.is_empty())
    {
        metadata["annotations"] = json!(a);
    }
    let body = json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "ExternalArtifact",
        "metadata": metadata,
        "spec": {"sourceRef": {
            "apiVersion": "source.extensions.fluxcd.io/v1beta1",
            "kind": "ArtifactGenerator",
            "name": obj.name_any(),
            "namespace": ns,
        }},
    });
    let api: Api<ExternalArtifact> = Api::namespaced(ctx.client.clone(), &ns);
    let params = PatchParams::apply(CONTROLLER).force();
    let applied = api
        .patch(name, &params, &Patch::Apply(&body))
        .await
        .map_err(|e| format!("failed to apply ExternalArtifact: {e}"))?;
    let ready = Condition {
        type_: READY.to_string(),
        status: "True".to_string(),
        reason: "Succeeded".to_string(),
        message: "Artifact is ready".to_string(),
        observed_generation: applied.metadata.generation,
        last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::from_second(conditions::now().as_second())
                .unwrap_or_default(),
        ),
    };
    let status = json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "ExternalArtifact",
        "metadata": {"name": name, "namespace": ns},
        "status": {"artifact": artifact, "conditions": [ready]},
    });
    api.patch_status(name, &params, &Patch::Apply(&status))
        .await
        .map_err(|e| format!("failed to patchStatus ExternalArtifact status: {e}"))?;
    Ok(())
}

/// Deletes an ExternalArtifact and its stored files (errors are only logged, as upstream).
async fn remove_artifact(ctx: &Context, ns: &str, name: &str) {
    let storage = ctx.storage.clone();
    let (n, nm) = (ns.to_string(), name.to_string());
    if let Ok(Err(e)) =
        tokio::task::spawn_blocking(move || storage.remove_all("ExternalArtifact", &n, &nm)).await
    {
        tracing::warn!(namespace = ns, name, error = %e, "removing artifact files");
    }
    let api: Api<ExternalArtifact> = Api::namespaced(ctx.client.clone(), ns);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 => {}
        Err(e) => tracing::warn!(namespace = ns, name, error = %e, "deleting ExternalArtifact"),
    }
}

/// What makes a rebuild necessary, checked in source-watcher's order; `None` when the
/// generated artifacts are up to date.
async fn drift(
    obj: &ArtifactGenerator,
    ctx: &Context,
    st: &ArtifactGeneratorStatus,
    digest: &str,
) -> Option<&'static str> {
    let ready = conditions::get(&st.conditions, READY);
    if ready.is_some_and(|c| c.status == "False") {
        return Some("NotReady");
    }
    if ready.and_then(|c| c.observed_generation) != obj.metadata.generation {
        return Some("GenerationChanged");
    }
    if st.observed_sources_digest.as_deref() != Some(digest) {
        return Some("SourcesChanged");
    }
    let pattern = obj
        .spec
        .path_pattern
        .as_deref()
        .is_some_and(|p| !p.is_empty());
    if !pattern && st.inventory.len() != obj.spec.artifacts.len() {
        return Some("ArtifactsChanged");
    }
    for entry in &st.inventory {
        let path = Storage::artifact_path(
            "ExternalArtifact",
            &entry.namespace,
            &entry.name,
            &entry.filename,
        );
        if !ctx.storage.exists(&path) {
            return Some("ArtifactMissing");
        }
        if !ctx.storage.verify(&path, &entry.digest).unwrap_or(false) {
            if let Ok(file) = ctx.storage.local_path(&path) {
                let _ = std::fs::remove_file(file);
            }
            return Some("ArtifactCorrupted");
        }
    }
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<ExternalArtifact> = Api::namespaced(ctx.client.clone(), &ns);
    let selector = format!("{GENERATOR_LABEL}={}", obj.uid().unwrap_or_default());
    let Ok(list) = api.list(&ListParams::default().labels(&selector)).await else {
        return Some("ExternalArtifactsNotFound");
    };
    if list.items.len() != st.inventory.len() {
        return Some("ExternalArtifactsChanged");
    }
    for ea in &list.items {
        let digest = ea
            .status
            .as_ref()
            .and_then(|s| s.artifact.as_ref())
            .map(|a| a.digest.as_str());
        let listed = st.inventory.iter().any(|i| {
            Some(i.name.as_str()) == ea.metadata.name.as_deref()
                && Some(i.namespace.as_str()) == ea.metadata.namespace.as_deref()
                && Some(i.digest.as_str()) == digest
        });
        if !listed {
            return Some("ExternalArtifactsChanged");
        }
    }
    None
}

/// `sha256:` of the sorted `<alias>=[digest=<d>,revision=<r>,url=<u>]` strings joined by `|`.
pub(super) fn sources_digest(artifacts: &BTreeMap<String, Artifact>) -> String {
    let mut parts: Vec<String> = artifacts
        .iter()
        .map(|(alias, a)| {
            format!(
                "{alias}=[digest={},revision={},url={}]",
                a.digest, a.revision, a.url
            )
        })
        .collect();
    parts.sort();
    format!("sha256:{:x}", Sha256::digest(parts.join("|").as_bytes()))
}

/// The checks that stall a generator: `(reason, message)`.
fn validate(
    obj: &ArtifactGenerator,
    no_cross_namespace_refs: bool,
) -> Result<(), (&'static str, String)> {
    let own = obj.namespace().unwrap_or_default();
    let mut aliases = std::collections::HashSet::new();
    for s in &obj.spec.sources {
        if !aliases.insert(s.alias.as_str()) {
            return Err((
                "ValidationFailed",
                format!("duplicate source alias '{}' found", s.alias),
            ));
        }
        if let Some(ns) = s.namespace.as_deref().filter(|n| !n.is_empty())
            && no_cross_namespace_refs
            && ns != own
        {
            return Err((
                "AccessDenied",
                format!(
                    "cross-namespace reference to source {}/{ns}/{} is not allowed",
                    s.kind, s.name
                ),
            ));
        }
    }
    let mut names = std::collections::HashSet::new();
    for a in &obj.spec.artifacts {
        if !names.insert(a.name.as_str()) {
            return Err((
                "ValidationFailed",
                format!("duplicate artifact name '{}' found", a.name),
            ));
        }
        let pattern_set = obj
            .spec
            .path_pattern
            .as_deref()
            .is_some_and(|p| !p.is_empty());
        if !pattern_set && let Some(errs) = dns1123_subdomain(&a.name) {
            return Err((
                "ValidationFailed",
                format!(
                    "artifact name \"{}\" is not a valid Kubernetes object name: {errs}",
                    a.name
                ),
            ));
        }
        if let Some(alias) = a.revision.as_deref().and_then(|r| r.strip_prefix('@'))
            && !aliases.contains(alias)
        {
            return Err((
                "ValidationFailed",
                format!(
                    "artifact {} revision source alias '{alias}' not found",
                    a.name
                ),
            ));
        }
    }
    Ok(())
}

/// Kubernetes' `IsDNS1123Subdomain` messages joined by `; `, or `None` when valid.
pub(super) fn dns1123_subdomain(name: &str) -> Option<String> {
    let mut errs = Vec::new();
    if name.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if !name.split('.').all(label_ok) {
        errs.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string());
    }
    (!errs.is_empty()).then(|| errs.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// source-watcher's observed_source test vector.
    #[test]
    fn sources_digest_vector() {
        let a = |digest: &str, revision: &str, url: &str| Artifact {
            digest: digest.into(),
            revision: revision.into(),
            url: url.into(),
            ..Default::default()
        };
        let mut m = BTreeMap::new();
        m.insert(
            "source1".to_string(),
            a(
                "sha256:1b1452058f747245f79b4d45d589ad5693c516987e678d13231ddfdf26979208",
                "main@sha1:28deef923f4da39062d2902cb640011a36d52e19",
                "https://example.com/repo1.git",
            ),
        );
        m.insert(
            "source2".to_string(),
            a(
                "sha256:966a0b26898be9448d927312d81f9221edac224e383f131a6451f22b918bd66d",
                "main@sha1:4b94f17f5ceb13341bdfe15d4d9249bb0a3a011e",
                "https://example.com/repo2.git",
            ),
        );
        assert_eq!(
            sources_digest(&m),
            "sha256:0dd16ff06ef2efe7bbc5b6a356eb9f3b59467d76617969eb7bb34e094abbd58e"
        );
    }

    #[test]
    fn artifact_names_are_dns_subdomains() {
        assert_eq!(dns1123_subdomain("podinfo.frontend"), None);
        assert!(dns1123_subdomain("Podinfo").is_some());
        assert!(dns1123_subdomain("-a").is_some());
    }
}
