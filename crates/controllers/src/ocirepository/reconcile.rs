//! One OCIRepository reconcile: credentials and TLS from Secrets, the `ref` resolved to a
//! revision, the manifest and layer pulled, the artifact stored. Messages and reasons are
//! Flux's.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::time::Duration;

use kube::ResourceExt;
use kube::runtime::controller::Action;
use tidegate_api::OCIRepository;
use tidegate_api::conditions;
use tidegate_api::meta::Artifact;
use tidegate_api::ocirepository::OCIRepositoryStatus;
use tidegate_source::extract::Limits;
use tidegate_source::oci::select::{Wanted, select_semver};
use tidegate_source::oci::{self, Registry, Repository};
use tidegate_source::storage::Storage;
use tidegate_source::tree::{FileTree, NoBlobs};

use crate::source::Context;
use crate::source::failure::{
    ARTIFACT_IN_STORAGE, FETCH_FAILED, Failure, SOURCE_VERIFIED, STORAGE_FAILED,
};
use crate::source::{Done, ReconcileError};

const PULL_FAILED: &str = "OCIArtifactPullFailed";
const LAYER_FAILED: &str = "OCIArtifactLayerOperationFailed";

pub(super) async fn reconcile(
    obj: &OCIRepository,
    ctx: &Context,
) -> Result<Action, ReconcileError> {
    crate::source::reconcile(obj, &ctx.shared(), async |st| steps(obj, ctx, st).await).await
}

/// `spec.timeout` (default 60s).
fn spec_timeout(obj: &OCIRepository) -> Duration {
    tidegate_core::duration::parse(obj.spec.timeout()).unwrap_or(Duration::from_secs(60))
}

fn done(revision: String, url: &str, annotations: &BTreeMap<String, String>) -> Done {
    let mut event = format!("stored artifact with revision '{revision}' from '{url}'");
    let origin = |k: &str| annotations.get(k).filter(|v| !v.is_empty());
    if let (Some(src), Some(rev)) = (
        origin("org.opencontainers.image.source"),
        origin("org.opencontainers.image.revision"),
    ) {
        event.push_str(&format!(", origin source '{src}', origin revision '{rev}'"));
    }
    Done {
        ready_message: format!("stored artifact for digest '{revision}'"),
        new_artifact_message: event,
        revision,
        verified: None,
        reason: "Succeeded",
    }
}

/// Everything after the storage check: configuration, resolution, pull, store.
async fn steps(
    obj: &OCIRepository,
    ctx: &Context,
    st: &mut OCIRepositoryStatus,
) -> Result<Done, Failure> {
    let spec = &obj.spec;
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let generation = obj.metadata.generation;
    let url = spec.url.as_str();
    let repo = oci::parse_repository_url(url).map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "URLInvalid",
            format!("URL validation failed for '{url}': {e}"),
        )
        .stall()
    })?;
    unsupported(obj)?;
    if spec.verify.is_none() {
        conditions::delete(&mut st.conditions, SOURCE_VERIFIED);
    }
    let options = registry_options(obj, ctx, &repo).await?;
    let timeout = spec_timeout(obj);
    let within =
        |what: &'static str| move |_| format!("{what}: timeout after {}", obj.spec.timeout());

    // Which manifest: digest > semver > tag (default `latest`).
    let media_type = spec
        .layer_selector
        .as_ref()
        .and_then(|l| l.media_type.clone())
        .filter(|m| !m.is_empty());
    let r = spec.reference.clone().unwrap_or_default();
    let wanted = Wanted::from_ref(
        r.digest.as_deref(),
        r.semver.as_deref(),
        r.semver_filter.as_deref(),
        r.tag.as_deref(),
    );
    let tag_failure = |m: String| {
        Failure::new(
            FETCH_FAILED,
            "ReadOperationFailed",
            format!("failed to determine the artifact tag for '{url}': {m}"),
        )
    };
    let digest_failure = |m: String| {
        Failure::new(
            FETCH_FAILED,
            PULL_FAILED,
            format!("failed to determine artifact digest: {m}"),
        )
    };
    let connect = async {
        tokio::time::timeout(timeout, Registry::connect(&repo, &options))
            .await
            .map_err(within("connecting to the registry"))?
            .map_err(|e| e.to_string())
    };
    let (registry, tag) = match &wanted {
        Wanted::Digest(_) => (connect.await.map_err(digest_failure)?, None),
        Wanted::Tag(t) => (connect.await.map_err(digest_failure)?, Some(t.clone())),
        Wanted::Semver { range, filter } => {
            let registry = connect.await.map_err(tag_failure)?;
            let tags = registry
                .list_tags()
                .await
                .map_err(|e| tag_failure(e.to_string()))?;
            let tag = select_semver(&tags, range, filter.as_deref(), media_type.as_deref())
                .map_err(|e| tag_failure(e.to_string()))?;
            (registry, Some(tag))
        }
    };
    let (digest, revision, shown) = match (&wanted, &tag) {
        (Wanted::Digest(d), _) => (
            d.clone(),
            d.clone(),
            oci::reference::display(&repo.digest(d)),
        ),
        (_, Some(t)) => {
            let reference = repo.tag(t);
            let d = registry
                .digest(&reference)
                .await
                .map_err(|e| digest_failure(e.to_string()))?;
            (
                d.clone(),
                format!("{t}@{d}"),
                oci::reference::display(&reference),
            )
        }
        (_, None) => {
            return Err(digest_failure("no tag selected".to_string()));
        }
    };

    // Verify when the revision, the generation or a failed verification says so (Flux's
    // rule); a verification still valid is kept.
    let mut verified = None;
    if spec.verify.is_some() {
        let source_verified = conditions::get(&st.conditions, SOURCE_VERIFIED);
        let needed = st.artifact.as_ref().map(|a| a.revision.as_str()) != Some(revision.as_str())
            || source_verified.is_none_or(|c| c.observed_generation != generation)
            || source_verified.is_some_and(|c| c.status == "False");
        if needed {
            let digest_ref = oci::reference::display(&repo.digest(&digest));
            verify_signature(obj, ctx, &registry, &digest, &digest_ref).await?;
            verified = Some(format!("verified signature of revision {revision}"));
        }
    }

    // Nothing to do when the artifact holds this revision with the same content settings.
    let config_changed =
        spec.ignore != st.observed_ignore || spec.layer_selector != st.observed_layer_selector;
    let stored = st.artifact.as_ref().map(|a| a.revision.clone());
    if stored.as_deref() == Some(revision.as_str())
        && conditions::is_true(&st.conditions, ARTIFACT_IN_STORAGE)
        && !config_changed
    {
        tracing::info!(
            name,
            namespace = ns,
            "artifact up-to-date with remote revision: '{revision}'"
        );
        refresh_latest(ctx, st);
        let metadata = st
            .artifact
            .as_ref()
            .map(|a| a.metadata.clone())
            .unwrap_or_default();
        return Ok(Done {
            verified,
            ..done(revision, url, &metadata)
        });
    }
    if stored.is_some() && stored.as_deref() != Some(revision.as_str()) {
        let message = format!("new revision '{revision}' for '{shown}'");
        crate::source::outdated(&mut st.conditions, "NewRevision", &message, generation);
    }

    let manifest = registry
        .manifest(&repo.digest(&digest))
        .await
        .map_err(|e| {
            Failure::new(
                FETCH_FAILED,
                PULL_FAILED,
                format!("failed to pull artifact from '{url}': {e}"),
            )
        })?;
    let layer = oci::select_layer(&manifest.image, media_type.as_deref())
        .map_err(|m| Failure::new(FETCH_FAILED, LAYER_FAILED, m))?
        .clone();
    let operation = spec
        .layer_selector
        .as_ref()
        .and_then(|l| l.operation.clone())
        .unwrap_or_else(|| "extract".to_string());
    if operation != "extract" && operation != "copy" {
        return Err(Failure::new(
            FETCH_FAILED,
            LAYER_FAILED,
            format!("unsupported layer operation: {operation}"),
        )
        .stall());
    }
    let limits = Limits::default();
    let blob = registry.blob(&layer, limits.max_size).await.map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            LAYER_FAILED,
            format!("failed to extract layer contents from artifact: {e}"),
        )
    })?;

    let file = format!("{digest}.tar.gz");
    let path = Storage::artifact_path("OCIRepository", &ns, &name, &file);
    let storage = ctx.storage.clone();
    let ignore = spec.ignore.clone();
    let store_path = path.clone();
    let written = tokio::task::spawn_blocking(move || {
        store(
            &storage,
            &store_path,
            &blob,
            &operation,
            ignore.as_deref(),
            limits,
        )
    })
    .await
    .map_err(|e| Failure::new(STORAGE_FAILED, "ArchiveOperationFailed", e.to_string()))??;
    st.artifact = Some(Artifact {
        url: ctx.storage.url(&path),
        path,
        revision: revision.clone(),
        digest: written.digest,
        last_update_time: crate::source::artifact_time(),
        size: i64::try_from(written.size).ok(),
        metadata: manifest.image.annotations.clone(),
    });
    st.observed_ignore = spec.ignore.clone();
    st.observed_layer_selector = spec.layer_selector.clone();
    refresh_latest(ctx, st);
    Ok(Done {
        verified,
        ..done(revision, url, &manifest.image.annotations)
    })
}

/// Checks the cosign signatures of manifest `digest` with the public keys (`*.pub`) of
/// `spec.verify.secretRef`, as Flux does with keys (offline, no transparency log). Keyless
/// and notation verification are refused with a clear message.
async fn verify_signature(
    obj: &OCIRepository,
    ctx: &Context,
    registry: &Registry,
    digest: &str,
    digest_ref: &str,
) -> Result<(), Failure> {
    let Some(v) = &obj.spec.verify else {
        return Ok(());
    };
    let ns = obj.namespace().unwrap_or_default();
    let keys = crate::source::verify::cosign_keys(
        &ctx.client,
        &ns,
        v.provider.as_deref().unwrap_or("cosign"),
        v.secret_ref.as_ref().map(|r| r.name.as_str()),
    )
    .await?;
    let fail = crate::source::verify::failure;
    let ok = oci::cosign::verify(registry, digest, &keys)
        .await
        .map_err(|e| fail("cosign", e.to_string()))?;
    if !ok {
        return Err(fail(
            "cosign",
            format!("no matching signatures were found for '{digest_ref}'"),
        ));
    }
    Ok(())
}

/// Points `latest.tar.gz` at the artifact and sets `status.url` to it.
fn refresh_latest(ctx: &Context, st: &mut OCIRepositoryStatus) {
    if let Some(a) = &st.artifact {
        match ctx.storage.symlink(&a.path, "latest.tar.gz") {
            Ok(url) => st.url = Some(url),
            Err(e) => tracing::warn!(error = %e, "updating latest.tar.gz"),
        }
    }
}

/// Writes the layer into the store: extracted and re-packed (with `.sourceignore` files and
/// `spec.ignore`), or copied as it is.
fn store(
    storage: &Storage,
    path: &str,
    blob: &[u8],
    operation: &str,
    ignore: Option<&str>,
    limits: Limits,
) -> Result<tidegate_source::archive::Written, Failure> {
    if operation == "copy" {
        return storage
            .write_atomic(path, |out| {
                let mut hashing = tidegate_source::archive::HashingWriter::new(out);
                hashing.write_all(blob)?;
                Ok(hashing.finish())
            })
            .map_err(|e| {
                Failure::new(
                    STORAGE_FAILED,
                    "ArchiveOperationFailed",
                    format!("unable to copy artifact to storage: {e}"),
                )
            });
    }
    let layer_failure = |m: String| {
        Failure::new(
            FETCH_FAILED,
            LAYER_FAILED,
            format!("failed to extract layer contents from artifact: {m}"),
        )
    };
    if !blob.starts_with(&[0x1f, 0x8b]) {
        return Err(layer_failure(
            "requires gzip-compressed body: gzip: invalid header".to_string(),
        ));
    }
    let work = tidegate_source::scratch::tempdir("ocirepository-").map_err(|e| {
        Failure::new(
            STORAGE_FAILED,
            "DirectoryCreationFailed",
            format!("failed to create temporary working directory: {e}"),
        )
    })?;
    tidegate_source::extract::extract_tar_gz(blob, work.path(), limits)
        .map_err(|e| layer_failure(e.to_string()))?;
    let tree = FileTree::from_dir(work.path()).map_err(|e| {
        Failure::new(
            STORAGE_FAILED,
            "StatOperationFailed",
            format!("failed to stat source path: {e}"),
        )
    })?;
    tidegate_source::package::package(&tree, &NoBlobs, ignore, storage, path).map_err(|e| {
        Failure::new(
            STORAGE_FAILED,
            "ArchiveOperationFailed",
            format!("unable to archive artifact to storage: {e}"),
        )
    })
}

/// Registry credentials (the `secretRef` docker config, else the service account's image pull
/// secrets), the CA of `certSecretRef`, the proxy of `proxySecretRef`.
async fn registry_options(
    obj: &OCIRepository,
    ctx: &Context,
    repo: &Repository,
) -> Result<oci::Options, Failure> {
    let spec = &obj.spec;
    let ns = obj.namespace().unwrap_or_default();
    let auth_failure = |m: String| Failure::new(FETCH_FAILED, "AuthenticationFailed", m);
    let credentials = crate::source::pull_secrets::registry_credentials(
        &ctx.client,
        &ns,
        spec.secret_ref.as_ref().map(|r| r.name.as_str()),
        spec.service_account_name.as_deref(),
        &repo.name(),
    )
    .await
    .map_err(|m| auth_failure(format!("failed to get credential: {m}")))?;
    let mut ca_pem = None;
    let mut client_pem = None;
    if let Some(r) = &spec.cert_secret_ref {
        let data = crate::source::secret_data(&ctx.client, &ns, &r.name)
            .await
            .map_err(|m| {
                auth_failure(format!(
                    "failed to generate transport for '{}': {m}",
                    spec.url
                ))
            })?;
        client_pem = crate::source::client_pem(&data).map_err(|()| {
            auth_failure(format!(
                "failed to generate transport for '{}': secret '{ns}/{}' must contain both 'tls.crt' and 'tls.key'",
                spec.url, r.name
            ))
            .stall()
        })?;
        ca_pem = data.get("ca.crt").cloned();
    }
    let mut proxy = None;
    if let Some(r) = &spec.proxy_secret_ref {
        proxy = Some(
            crate::source::proxy::proxy_url(&ctx.client, &ns, &r.name)
                .await
                .map_err(|m| auth_failure(format!("failed to get proxy address: {m}")))?,
        );
    }
    Ok(oci::Options {
        credentials,
        insecure: spec.insecure,
        ca_pem,
        client_pem,
        timeout: spec_timeout(obj),
        proxy,
        user_agent: "tidegate/source-controller",
    })
}

/// Settings Tidegate does not implement stall with a clear message instead of being ignored.
fn unsupported(obj: &OCIRepository) -> Result<(), Failure> {
    let spec = &obj.spec;
    if let Some(p) = spec.provider.as_deref().filter(|p| *p != "generic") {
        return Err(Failure::new(
            FETCH_FAILED,
            "AuthenticationFailed",
            format!("spec.provider '{p}' is not supported by Tidegate yet (only generic)"),
        )
        .stall());
    }
    Ok(())
}
