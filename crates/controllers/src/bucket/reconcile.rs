//! One Bucket reconcile: credentials, TLS and proxy from Secrets, the listing filtered by the
//! bucket's `.sourceignore` and `spec.ignore`, Flux's revision, and — only for a new
//! revision — the objects downloaded (at most 100 at once) and stored. Messages and reasons
//! are Flux's.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::ResourceExt;
use kube::runtime::controller::Action;
use tidegate_api::Bucket;
use tidegate_api::bucket::BucketStatus;
use tidegate_api::conditions;
use tidegate_api::meta::Artifact;
use tidegate_source::bucket::{self, BucketClient, BucketOptions};
use tidegate_source::extract::Limits;
use tidegate_source::helm_index::HttpOptions;
use tidegate_source::ignore::{IGNORE_FILE, SourceIgnore};
use tidegate_source::storage::Storage;
use tidegate_source::tree::{FileTree, NoBlobs};

use crate::source::failure::{ARTIFACT_IN_STORAGE, FETCH_FAILED, Failure, STORAGE_FAILED};
use crate::source::{Context, Done, ReconcileError, secret_data};

const OPERATION_FAILED: &str = "BucketOperationFailed";
const AUTH_FAILED: &str = "AuthenticationFailed";
/// Flux's bound on concurrent object downloads.
const MAX_CONCURRENT_FETCHES: usize = 100;

pub(super) async fn reconcile(obj: &Bucket, ctx: &Context) -> Result<Action, ReconcileError> {
    crate::source::reconcile(obj, &ctx.shared(), async |st| steps(obj, ctx, st).await).await
}

/// `spec.timeout` (default 60s).
fn spec_timeout(obj: &Bucket) -> Duration {
    tidegate_core::duration::parse(obj.spec.timeout()).unwrap_or(Duration::from_secs(60))
}

fn done(revision: String, files: usize, bucket: &str) -> Done {
    Done {
        ready_message: format!("stored artifact: revision '{revision}'"),
        new_artifact_message: format!(
            "stored artifact with {files} fetched files from '{bucket}' bucket"
        ),
        revision,
        verified: None,
        reason: "Succeeded",
    }
}

fn operation_failed(message: String) -> Failure {
    Failure::new(FETCH_FAILED, OPERATION_FAILED, message)
}

/// Everything after the storage check.
async fn steps(obj: &Bucket, ctx: &Context, st: &mut BucketStatus) -> Result<Done, Failure> {
    let spec = &obj.spec;
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let generation = obj.metadata.generation;
    let bucket_name = spec.bucket_name.as_str();
    unsupported(obj)?;
    let client = client(obj, ctx).await?;
    let timeout = spec_timeout(obj);
    let timed_out = |what: &str| operation_failed(format!("{what}: context deadline exceeded"));

    // The listing, within the timeout: existence, the root `.sourceignore`, every object
    // under the prefix with its ETag.
    let index = tokio::time::timeout(timeout, list(obj, &client))
        .await
        .map_err(|_| {
            timed_out(&format!(
                "indexation of objects from bucket '{bucket_name}' failed"
            ))
        })??;
    let revision = bucket::revision(&index);

    let stored = st.artifact.as_ref().map(|a| a.revision.clone());
    if stored.as_deref() == Some(revision.as_str())
        && conditions::is_true(&st.conditions, ARTIFACT_IN_STORAGE)
        && st.observed_ignore == spec.ignore
    {
        tracing::info!(
            name,
            namespace = ns,
            "artifact up-to-date with remote revision: '{revision}'"
        );
        refresh_latest(ctx, st);
        return Ok(done(revision, index.len(), bucket_name));
    }
    if stored.is_some() && stored.as_deref() != Some(revision.as_str()) {
        let message = format!("new upstream revision '{revision}'");
        crate::source::outdated(&mut st.conditions, "NewRevision", &message, generation);
    }

    let work = tidegate_source::scratch::tempdir("bucket-").map_err(|e| {
        Failure::new(
            STORAGE_FAILED,
            "DirectoryCreationFailed",
            format!("failed to create temporary working directory: {e}"),
        )
    })?;
    let fetch = client.fetch_all(
        &index,
        work.path(),
        MAX_CONCURRENT_FETCHES,
        Limits::default().max_size,
    );
    let fetched = tokio::time::timeout(timeout, fetch)
        .await
        .map_err(|_| timed_out(&format!("fetch from bucket '{bucket_name}' failed")))?
        .map_err(|(key, e)| {
            operation_failed(format!(
                "fetch from bucket '{bucket_name}' failed: failed to get '{key}' object: {e}"
            ))
        })?;
    // Objects deleted since the listing are not in the artifact, nor in its revision.
    let revision = bucket::revision(&fetched);

    let path = Storage::artifact_path(
        "Bucket",
        &ns,
        &name,
        &format!("{}.tar.gz", revision.trim_start_matches("sha256:")),
    );
    let storage = ctx.storage.clone();
    let (dir, store_path) = (work.path().to_path_buf(), path.clone());
    let written = tokio::task::spawn_blocking(move || {
        let tree = FileTree::from_dir(&dir)?;
        let keep_all = SourceIgnore::from_patterns(&[]);
        storage.write_atomic(&store_path, |out| {
            tree.write_archive(&keep_all, &NoBlobs, out)
        })
    })
    .await
    .map_err(|e| Failure::new(STORAGE_FAILED, "ArchiveOperationFailed", e.to_string()))?
    .map_err(|e| {
        Failure::new(
            STORAGE_FAILED,
            "ArchiveOperationFailed",
            format!("unable to archive artifact to storage: {e}"),
        )
    })?;
    drop(work);
    st.artifact = Some(Artifact {
        url: ctx.storage.url(&path),
        path,
        revision: revision.clone(),
        digest: written.digest,
        last_update_time: crate::source::artifact_time(),
        size: i64::try_from(written.size).ok(),
        metadata: BTreeMap::new(),
    });
    st.observed_ignore = spec.ignore.clone();
    refresh_latest(ctx, st);
    Ok(done(revision, fetched.len(), bucket_name))
}

/// Existence, ignore rules and the filtered index (key → ETag) of the bucket.
async fn list(obj: &Bucket, client: &BucketClient) -> Result<BTreeMap<String, String>, Failure> {
    let bucket_name = obj.spec.bucket_name.as_str();
    match client.exists().await {
        Ok(true) => {}
        Ok(false) => {
            return Err(operation_failed(format!(
                "bucket '{bucket_name}' not found"
            )));
        }
        Err(e) => {
            return Err(operation_failed(format!(
                "failed to confirm existence of '{bucket_name}' bucket: {e}"
            )));
        }
    }
    // The `.sourceignore` at the bucket's root (not under the prefix), then `spec.ignore`;
    // no default exclusions (Flux's Bucket has none).
    let root_ignore = client
        .get(IGNORE_FILE, 1 << 20)
        .await
        .map_err(|e| {
            operation_failed(format!(
                "failed to get Etag for '{IGNORE_FILE}' object: {e}"
            ))
        })?
        .unwrap_or_default();
    let mut patterns: Vec<String> = String::from_utf8_lossy(&root_ignore)
        .lines()
        .map(str::to_string)
        .collect();
    if let Some(extra) = &obj.spec.ignore {
        patterns.extend(extra.lines().map(str::to_string));
    }
    let ignore = SourceIgnore::from_patterns(&patterns);
    let prefix = obj.spec.prefix.as_deref().unwrap_or("");
    let listing = client.list(prefix).await.map_err(|e| {
        operation_failed(format!(
            "indexation of objects from bucket '{bucket_name}' failed: {e}"
        ))
    })?;
    Ok(listing
        .into_iter()
        .filter(|(key, _)| !key.ends_with('/') && key != IGNORE_FILE && !ignore.excludes_file(key))
        .collect())
}

/// The client: `secretRef` keys, `certSecretRef` TLS, `proxySecretRef`.
async fn client(obj: &Bucket, ctx: &Context) -> Result<BucketClient, Failure> {
    let spec = &obj.spec;
    let ns = obj.namespace().unwrap_or_default();
    let auth_failure = |m: String| Failure::new(FETCH_FAILED, AUTH_FAILED, m);
    let mut credentials = None;
    if let Some(r) = &spec.secret_ref {
        let data = secret_data(&ctx.client, &ns, &r.name)
            .await
            .map_err(auth_failure)?;
        let text = |k: &str| {
            data.get(k)
                .map(|v| String::from_utf8_lossy(v).trim().to_string())
                .filter(|v| !v.is_empty())
        };
        match (text("accesskey"), text("secretkey")) {
            (Some(a), Some(s)) => credentials = Some((a, s)),
            _ => {
                return Err(auth_failure(format!(
                    "invalid '{}' secret data: required fields 'accesskey' and 'secretkey'",
                    r.name
                )));
            }
        }
    }
    let mut http = HttpOptions {
        timeout: spec_timeout(obj),
        ..Default::default()
    };
    if let Some(r) = &spec.cert_secret_ref {
        let data = secret_data(&ctx.client, &ns, &r.name)
            .await
            .map_err(|m| auth_failure(format!("failed to get TLS config: {m}")))?;
        http.ca_pem = data.get("ca.crt").cloned();
        http.client_pem = crate::source::client_pem(&data).map_err(|()| {
            auth_failure(format!(
                "failed to get TLS config: secret '{ns}/{}' must contain both 'tls.crt' and 'tls.key'",
                r.name
            ))
        })?;
    }
    if let Some(r) = &spec.proxy_secret_ref {
        http.proxy = Some(
            crate::source::proxy::proxy_url(&ctx.client, &ns, &r.name)
                .await
                .map_err(|m| auth_failure(format!("failed to get proxy URL: {m}")))?,
        );
    }
    let http = tidegate_source::helm_index::client(&http)
        .map_err(|e| auth_failure(format!("failed to get TLS config: {e}")))?;
    let options = BucketOptions {
        endpoint: spec.endpoint.clone(),
        insecure: spec.insecure,
        bucket: spec.bucket_name.clone(),
        region: spec.region.clone().unwrap_or_default(),
        credentials,
    };
    BucketClient::new(&options, http).map_err(|e| operation_failed(e.to_string()).stall())
}

/// Points `latest.tar.gz` at the artifact and sets `status.url` to it.
fn refresh_latest(ctx: &Context, st: &mut BucketStatus) {
    if let Some(a) = &st.artifact {
        match ctx.storage.symlink(&a.path, "latest.tar.gz") {
            Ok(url) => st.url = Some(url),
            Err(e) => tracing::warn!(error = %e, "updating latest.tar.gz"),
        }
    }
}

/// What Tidegate does not implement stalls with a clear message instead of being ignored:
/// the `gcp` and `azure` APIs, `aws` without static keys (workload identity), STS.
fn unsupported(obj: &Bucket) -> Result<(), Failure> {
    let spec = &obj.spec;
    let stall = |m: String| Failure::new(FETCH_FAILED, AUTH_FAILED, m).stall();
    match spec.provider() {
        "generic" => {}
        "aws" if spec.secret_ref.is_some() => {}
        "aws" => {
            return Err(stall(
                "spec.provider 'aws' without spec.secretRef (workload identity) is not supported by Tidegate yet"
                    .to_string(),
            ));
        }
        p => {
            return Err(stall(format!(
                "spec.provider '{p}' is not supported by Tidegate yet (only generic and aws with a secretRef)"
            )));
        }
    }
    if let Some(sts) = &spec.sts {
        return Err(stall(format!(
            "spec.sts provider '{}' is not supported by Tidegate yet",
            sts.provider
        )));
    }
    Ok(())
}
