//! One HelmChart reconcile: the source resolved, the chart built by Flux's rules (remote
//! builder for HelmRepositories, local builder for GitRepository artifacts), the package
//! stored as `<name>-<version>.tgz`. Messages and reasons are Flux's.

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use tidegate_api::conditions;
use tidegate_api::helmchart::HelmChartStatus;
use tidegate_api::meta::Artifact;
use tidegate_api::{Bucket, GitRepository, HelmChart, HelmRepository};
use tidegate_source::storage::Storage;

use super::build::{Build, BuildError, BuildOptions, CHART_PULL, CHART_VERIFICATION};
use super::local::{self, DependencyManager};
use super::remote;
use super::repository::{self, GetError, normalize_url};
use crate::source::failure::{
    ARTIFACT_OUTDATED, BUILD_FAILED, FETCH_FAILED, Failure, SOURCE_VERIFIED, STORAGE_FAILED,
};
use crate::source::{Context, Done, ReconcileError, progressing};

/// The largest source artifact a chart is built from.
const MAX_SOURCE_SIZE: u64 = 500 << 20;

pub(super) async fn reconcile(obj: &HelmChart, ctx: &Context) -> Result<Action, ReconcileError> {
    crate::source::reconcile(obj, &ctx.shared(), async |st| steps(obj, ctx, st).await).await
}

fn source_unavailable(e: kube::Error) -> Failure {
    let detail = match &e {
        kube::Error::Api(s) => s.message.clone(),
        other => other.to_string(),
    };
    Failure::new(
        FETCH_FAILED,
        "SourceUnavailable",
        format!("failed to get source: {detail}"),
    )
}

fn no_source_artifact(kind: &str, name: &str, ctx: &Context) -> Failure {
    Failure::new(
        FETCH_FAILED,
        "NoSourceArtifact",
        format!("no artifact available for {kind} source '{name}'"),
    )
    .wait(ctx.options.requeue_dependency)
}

/// The commit hash in a Git revision (`main@sha1:<hex>`, `sha1:<hex>`, legacy `main/<hex>`).
fn git_hash(revision: &str) -> &str {
    let tail = revision.rsplit('@').next().unwrap_or(revision);
    let tail = tail.split_once(':').map_or(tail, |(_, h)| h);
    tail.rsplit('/').next().unwrap_or(tail)
}

async fn steps(obj: &HelmChart, ctx: &Context, st: &mut HelmChartStatus) -> Result<Done, Failure> {
    let spec = &obj.spec;
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let generation = obj.metadata.generation;
    // A failed verification is computed again; no verify, no condition (Flux's rules).
    if spec.verify.is_none()
        || conditions::get(&st.conditions, SOURCE_VERIFIED).is_some_and(|c| c.status == "False")
    {
        conditions::delete(&mut st.conditions, SOURCE_VERIFIED);
    }
    let mut opts = BuildOptions {
        values_files: spec.values_files.clone(),
        ignore_missing_values_files: spec.ignore_missing_values_files,
        force: generation != st.observed_generation,
        cached_values_files: st.observed_values_files.clone(),
        ..Default::default()
    };
    if let (Some(a), Some(chart)) = (&st.artifact, &st.observed_chart_name) {
        opts.cached = Some((chart.clone(), a.revision.clone()));
    }
    let source_name = &spec.source_ref.name;
    let build = match spec.source_ref.kind.as_str() {
        "HelmRepository" => {
            let repos: Api<HelmRepository> = Api::namespaced(ctx.client.clone(), &ns);
            let repo = repos.get(source_name).await.map_err(source_unavailable)?;
            if !repo.spec.is_oci() {
                match repo.status.as_ref().and_then(|s| s.artifact.as_ref()) {
                    Some(a) => st.observed_source_artifact_revision = Some(a.revision.clone()),
                    None => return Err(no_source_artifact("HelmRepository", source_name, ctx)),
                }
            } else if !repo.spec.url.starts_with("oci://") {
                return Err(Failure::new(
                    FETCH_FAILED,
                    "Failed",
                    format!(
                        "failed to construct Helm client: invalid OCI registry URL: {}",
                        normalize_url(&repo.spec.url)
                    ),
                )
                .stall());
            }
            if !opts.effective_values_files().is_empty() {
                opts.version_metadata = generation.unwrap_or(0).to_string();
            }
            if let Some(v) = &spec.verify {
                opts.verify = Some(if repo.spec.is_oci() {
                    verification_keys(v, &ns, ctx).await?
                } else {
                    Vec::new()
                });
            }
            let chart_repo = repository::for_helm_repository(&repo, ctx, false)
                .await
                .map_err(|e| match e {
                    GetError::Auth(m) => Failure::new(FETCH_FAILED, "AuthenticationFailed", m),
                    other => BuildError::new(
                        CHART_PULL,
                        format!(
                            "failed to get chart version for remote reference: {}",
                            other.into_message()
                        ),
                    )
                    .into_failure(),
                })?;
            let version = spec.version();
            remote::build(&chart_repo, &spec.chart, version, &opts)
                .await
                .map_err(|e| remote_failure(e, st, generation))?
        }
        kind @ ("GitRepository" | "Bucket") => {
            let artifact = if kind == "GitRepository" {
                let repos: Api<GitRepository> = Api::namespaced(ctx.client.clone(), &ns);
                let repo = repos.get(source_name).await.map_err(source_unavailable)?;
                repo.status.and_then(|s| s.artifact)
            } else {
                let buckets: Api<Bucket> = Api::namespaced(ctx.client.clone(), &ns);
                let bucket = buckets.get(source_name).await.map_err(source_unavailable)?;
                bucket.status.and_then(|s| s.artifact)
            };
            let Some(artifact) = artifact else {
                return Err(no_source_artifact(kind, source_name, ctx));
            };
            st.observed_source_artifact_revision = Some(artifact.revision.clone());
            if spec.reconcile_strategy.as_deref() == Some("Revision") {
                let hash = git_hash(&artifact.revision);
                opts.version_metadata = hash.chars().take(12).collect();
            }
            if !opts.effective_values_files().is_empty() {
                if !opts.version_metadata.is_empty() {
                    opts.version_metadata.push('.');
                }
                opts.version_metadata
                    .push_str(&generation.unwrap_or(0).to_string());
            }
            from_artifact(obj, ctx, &artifact, &opts).await?
        }
        other => {
            return Err(Failure::new(
                FETCH_FAILED,
                "SourceUnavailable",
                format!(
                    "failed to get source: unsupported source kind '{other}', must be one of: [HelmRepository GitRepository Bucket]"
                ),
            )
            .stall());
        }
    };

    if build.resolved_dependencies > 0 {
        tracing::debug!(
            name,
            namespace = ns,
            "resolved {} chart dependencies",
            build.resolved_dependencies
        );
    }
    let summary = build.summary();
    let current = st.observed_chart_name.as_deref() == Some(build.name.as_str())
        && st
            .artifact
            .as_ref()
            .is_some_and(|a| a.revision == build.version);
    if !current {
        if st.artifact.is_some() {
            conditions::set(
                &mut st.conditions,
                ARTIFACT_OUTDATED,
                true,
                "NewChart",
                &summary,
                generation,
            );
        }
        progressing(
            &mut st.conditions,
            &format!("building artifact: {summary}"),
            generation,
        );
    }
    let done = Done {
        ready_message: summary.clone(),
        new_artifact_message: summary,
        revision: build.version.clone(),
        verified: build
            .verified
            .then(|| format!("verified signature of version {}", build.version)),
        reason: build.reason(),
    };
    let Some(package) = build.package else {
        // The artifact in storage is this build.
        refresh_latest(ctx, st);
        return Ok(done);
    };

    let path = Storage::artifact_path(
        "HelmChart",
        &ns,
        &name,
        &format!("{}-{}.tgz", build.name, build.version),
    );
    let storage = ctx.storage.clone();
    let store_path = path.clone();
    let written = tokio::task::spawn_blocking(move || {
        storage.write_atomic(&store_path, |out| {
            use std::io::Write as _;
            let mut hashing = tidegate_source::archive::HashingWriter::new(out);
            hashing.write_all(&package)?;
            Ok(hashing.finish())
        })
    })
    .await
    .map_err(|e| Failure::new(STORAGE_FAILED, "ArchiveOperationFailed", e.to_string()))?
    .map_err(|e| {
        Failure::new(
            STORAGE_FAILED,
            "ArchiveOperationFailed",
            format!("unable to copy Helm chart to storage: {e}"),
        )
    })?;
    st.artifact = Some(Artifact {
        url: ctx.storage.url(&path),
        path,
        revision: build.version.clone(),
        digest: written.digest,
        last_update_time: crate::source::artifact_time(),
        size: i64::try_from(written.size).ok(),
        metadata: Default::default(),
    });
    st.observed_chart_name = Some(build.name.clone());
    st.observed_values_files = if spec.ignore_missing_values_files {
        build.values_files
    } else {
        Vec::new()
    };
    refresh_latest(ctx, st);
    Ok(done)
}

/// A failed remote build as Flux reports it: a verification error on `SourceVerified` (and
/// `BuildFailed`), errors that read as authentication or TLS failures as
/// `AuthenticationFailed` (Flux's words, plus the OCI client's "Not authorized" and rustls'
/// "invalid peer certificate"), the rest by their build reason.
fn remote_failure(e: BuildError, st: &mut HelmChartStatus, generation: Option<i64>) -> Failure {
    let text = e.to_string();
    if e.reason == CHART_VERIFICATION {
        conditions::set(
            &mut st.conditions,
            BUILD_FAILED,
            true,
            e.reason.reason,
            &text,
            generation,
        );
        return Failure::new(SOURCE_VERIFIED, "VerificationError", text);
    }
    let auth = [
        "401",
        "unauthorized",
        "authentication required",
        "Not authorized",
        "tls",
        "unknown certificate authority",
        "invalid peer certificate",
    ]
    .iter()
    .any(|w| text.contains(w));
    if auth {
        return Failure::new(
            FETCH_FAILED,
            "AuthenticationFailed",
            format!("failed to authenticate with the Helm repository: {text}"),
        );
    }
    e.into_failure()
}

/// The public keys (`*.pub`) of `spec.verify.secretRef` for cosign; keyless and notation are
/// refused with a clear message.
async fn verification_keys(
    verify: &serde_json::Value,
    ns: &str,
    ctx: &Context,
) -> Result<Vec<tidegate_source::oci::cosign::PublicKey>, Failure> {
    let provider = verify
        .get("provider")
        .and_then(|p| p.as_str())
        .unwrap_or("cosign");
    let secret = verify.pointer("/secretRef/name").and_then(|n| n.as_str());
    let keys = crate::source::verify::cosign_keys(&ctx.client, ns, provider, secret).await?;
    if keys.is_empty() {
        return Err(crate::source::verify::failure(
            "cosign",
            format!(
                "no public keys found in secret '{ns}/{}'",
                secret.unwrap_or_default()
            ),
        ));
    }
    Ok(keys)
}

/// Unpacks the source artifact and builds the chart at `spec.chart` in it.
async fn from_artifact(
    obj: &HelmChart,
    ctx: &Context,
    artifact: &Artifact,
    opts: &BuildOptions,
) -> Result<Build, Failure> {
    let bytes = tidegate_source::fetch::download(
        &ctx.http,
        &artifact.url,
        &artifact.digest,
        MAX_SOURCE_SIZE,
    )
    .await
    .map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "ReadOperationFailed",
            format!("failed to open source artifact: {e}"),
        )
    })?;
    let dir = tempfile::tempdir().map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "DirCreationFailed",
            format!("failed to create temporary working directory: {e}"),
        )
    })?;
    let root = dir.path().join("source");
    let unpack_root = root.clone();
    tokio::task::spawn_blocking(move || {
        std::fs::create_dir(&unpack_root)?;
        let limits = tidegate_source::extract::Limits {
            max_size: MAX_SOURCE_SIZE * 8,
            max_entries: 1_000_000,
        };
        tidegate_source::extract::extract_tar_gz(&bytes[..], &unpack_root, limits)
            .map_err(std::io::Error::other)
    })
    .await
    .map_err(|e| Failure::new(FETCH_FAILED, "Failed", e.to_string()))?
    .map_err(|e| Failure::new(FETCH_FAILED, "Failed", format!("artifact untar error: {e}")))?;
    let mut deps = DependencyManager::new(ctx, obj.namespace().unwrap_or_default());
    let result = local::build(&root, &obj.spec.chart, opts, &mut deps).await;
    drop(dir);
    result.map_err(BuildError::into_failure)
}

/// Points `latest.tar.gz` at the chart and sets `status.url` to it.
fn refresh_latest(ctx: &Context, st: &mut HelmChartStatus) {
    if let Some(a) = &st.artifact {
        match ctx.storage.symlink(&a.path, "latest.tar.gz") {
            Ok(url) => st.url = Some(url),
            Err(e) => tracing::warn!(error = %e, "updating latest.tar.gz"),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn git_hashes() {
        assert_eq!(
            super::git_hash("main@sha1:0123456789abcdef"),
            "0123456789abcdef"
        );
        assert_eq!(super::git_hash("sha1:abc"), "abc");
        assert_eq!(super::git_hash("main/abc"), "abc");
        assert_eq!(super::git_hash("v1.0@sha256:fff"), "fff");
    }
}
