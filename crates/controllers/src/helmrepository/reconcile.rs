//! One HelmRepository reconcile. Messages and reasons are Flux's.

use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use tidegate_api::HelmRepository;
use tidegate_api::conditions;
use tidegate_api::helmrepository::HelmRepositoryStatus;
use tidegate_api::meta::Artifact;
use tidegate_source::helm_index::{self, HttpOptions};
use tidegate_source::storage::Storage;

use crate::source::failure::{ARTIFACT_IN_STORAGE, FETCH_FAILED, Failure, STORAGE_FAILED};
use crate::source::{Context, Done, ReconcileError, secret_data};

/// The largest index accepted (Helm's default `MaxIndexSize`).
pub(crate) const MAX_INDEX_SIZE: u64 = 50 << 20;

pub(super) async fn reconcile(
    obj: &HelmRepository,
    ctx: &Context,
) -> Result<Action, ReconcileError> {
    if obj.spec.is_oci() {
        return static_oci(obj, ctx).await;
    }
    crate::source::reconcile(obj, &ctx.shared(), async |st| steps(obj, ctx, st).await).await
}

/// `type: oci`: a static object, as Flux has it since v1: no finalizer, no artifact, no
/// conditions; the HelmChart controller reads the registry itself.
async fn static_oci(obj: &HelmRepository, ctx: &Context) -> Result<Action, ReconcileError> {
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<HelmRepository> = Api::namespaced(ctx.client.clone(), &ns);
    let fail = |message: String| ReconcileError {
        message,
        retry: ctx.backoff.failed(&format!("{ns}/{}", obj.name_any())),
    };
    if crate::finalizer::has(obj) {
        crate::finalizer::remove(&api, obj).await.map_err(fail)?;
    }
    if obj.metadata.deletion_timestamp.is_some() {
        ctx.versions.forget(obj);
        return Ok(Action::await_change());
    }
    let written = obj.status.clone().unwrap_or_default();
    let mut st = written.clone();
    st.conditions.clear();
    st.artifact = None;
    st.url = None;
    st.observed_generation = obj.metadata.generation;
    if let Some(at) = obj
        .annotations()
        .get(tidegate_api::meta::RECONCILE_REQUESTED_AT)
    {
        st.last_handled_reconcile_at = Some(at.clone());
    }
    crate::source::patch_status(&api, &ctx.versions, &obj.name_any(), &written, &st)
        .await
        .map_err(fail)?;
    Ok(Action::await_change())
}

fn spec_timeout(obj: &HelmRepository) -> Duration {
    tidegate_core::duration::parse(obj.spec.timeout()).unwrap_or(Duration::from_secs(60))
}

/// Fetch, compare, parse, store.
async fn steps(
    obj: &HelmRepository,
    ctx: &Context,
    st: &mut HelmRepositoryStatus,
) -> Result<Done, Failure> {
    let spec = &obj.spec;
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let generation = obj.metadata.generation;
    let url = spec.url.as_str();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(Failure::new(
            FETCH_FAILED,
            "URLInvalid",
            format!("invalid Helm repository URL: scheme of '{url}' is not supported, use http:// or https:// (or type: oci)"),
        )
        .stall());
    }
    let options = http_options(obj, ctx).await?;
    let client = helm_index::client(&options).map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "AuthenticationFailed",
            format!("failed to construct Helm client's TLS config: {e}"),
        )
    })?;
    let index_url = helm_index::index_url(url);
    let raw = helm_index::download(&client, &index_url, &options, MAX_INDEX_SIZE)
        .await
        .map_err(|e| {
            Failure::new(
                FETCH_FAILED,
                "Failed",
                format!(
                    "failed to fetch Helm repository index: failed to cache index to temporary file: {e}"
                ),
            )
        })?;
    let revision = tidegate_source::archive::digest_of(&raw[..])
        .map(|w| w.digest)
        .unwrap_or_default();
    let unchanged = st.artifact.as_ref().is_some_and(|a| a.revision == revision)
        && conditions::is_true(&st.conditions, ARTIFACT_IN_STORAGE);
    if unchanged {
        refresh_latest(ctx, st);
        let size = st.artifact.as_ref().and_then(|a| a.size).unwrap_or(0);
        return Ok(done(revision, size, url));
    }
    if st.artifact.is_some() {
        let message = format!("new index revision '{revision}'");
        crate::source::outdated(&mut st.conditions, "NewRevision", &message, generation);
    }
    let index = tidegate_helm::repo::load_index(&raw).map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "IndexationFailed",
            format!("failed to load Helm repository from index YAML: {e}"),
        )
    })?;
    drop(raw);
    let json = index.to_json();
    drop(index);
    let hex = revision.trim_start_matches("sha256:").to_string();
    let path = Storage::artifact_path("HelmRepository", &ns, &name, &format!("index-{hex}.yaml"));
    let storage = ctx.storage.clone();
    let store_path = path.clone();
    let written = tokio::task::spawn_blocking(move || {
        storage.write_atomic(&store_path, |out| {
            use std::io::Write as _;
            let mut hashing = tidegate_source::archive::HashingWriter::new(out);
            hashing.write_all(&json)?;
            Ok(hashing.finish())
        })
    })
    .await
    .map_err(|e| Failure::new(STORAGE_FAILED, "ArchiveOperationFailed", e.to_string()))?
    .map_err(|e| {
        Failure::new(
            STORAGE_FAILED,
            "ArchiveOperationFailed",
            format!("unable to save artifact to storage: {e}"),
        )
    })?;
    let size = i64::try_from(written.size).unwrap_or(i64::MAX);
    st.artifact = Some(Artifact {
        url: ctx.storage.url(&path),
        path,
        revision: revision.clone(),
        digest: written.digest,
        last_update_time: crate::source::artifact_time(),
        size: Some(size),
        metadata: Default::default(),
    });
    refresh_latest(ctx, st);
    Ok(done(revision, size, url))
}

fn done(revision: String, size: i64, url: &str) -> Done {
    Done {
        ready_message: format!("stored artifact: revision '{revision}'"),
        new_artifact_message: format!(
            "stored fetched index of size {} from '{url}'",
            human_size(u64::try_from(size).unwrap_or(0))
        ),
        revision,
        verified: None,
        reason: "Succeeded",
    }
}

/// Bytes as docker/go-units' `HumanSize` writes them (Flux's event): SI units, four
/// significant digits, no space (`82B`, `1.024kB`, `5.325MB`).
fn human_size(n: u64) -> String {
    const UNITS: [&str; 9] = ["B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"];
    let mut size = n as f64;
    let mut i = 0;
    while size >= 1000.0 && i < UNITS.len() - 1 {
        size /= 1000.0;
        i += 1;
    }
    // Go's `%.4g` for 0 <= size < 1000: four significant digits, trailing zeros dropped.
    let digits = if size < 1.0 {
        1
    } else {
        size.log10().floor() as usize + 1
    };
    let mut text = format!("{:.*}", 4usize.saturating_sub(digits), size);
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    format!("{text}{}", UNITS[i])
}

/// Points `index.yaml` at the artifact and sets `status.url` to it.
fn refresh_latest(ctx: &Context, st: &mut HelmRepositoryStatus) {
    if let Some(a) = &st.artifact {
        match ctx.storage.symlink(&a.path, "index.yaml") {
            Ok(url) => st.url = Some(url),
            Err(e) => tracing::warn!(error = %e, "updating index.yaml"),
        }
    }
}

/// Basic auth (`secretRef` `username`/`password`), TLS (`certSecretRef`, else TLS keys in
/// `secretRef`, deprecated), the timeout.
async fn http_options(obj: &HelmRepository, ctx: &Context) -> Result<HttpOptions, Failure> {
    let ns = obj.namespace().unwrap_or_default();
    let auth_failure = |m: String| Failure::new(FETCH_FAILED, "AuthenticationFailed", m);
    let mut options = HttpOptions {
        timeout: spec_timeout(obj),
        ..Default::default()
    };
    let mut tls_data = None;
    if let Some(r) = &obj.spec.secret_ref {
        let data = secret_data(&ctx.client, &ns, &r.name)
            .await
            .map_err(|m| auth_failure(format!("failed to get authentication secret: {m}")))?;
        let text = |k: &str| data.get(k).map(|v| String::from_utf8_lossy(v).into_owned());
        match (text("username"), text("password")) {
            (Some(u), Some(p)) => options.basic_auth = Some((u, p)),
            (None, None) => {}
            _ => {
                return Err(auth_failure(format!(
                    "invalid '{}' secret data: required fields 'username' and 'password'",
                    r.name
                )));
            }
        }
        if data.contains_key("ca.crt") || data.contains_key("tls.crt") {
            tls_data = Some(data);
        }
    }
    if let Some(r) = &obj.spec.cert_secret_ref {
        tls_data = Some(
            secret_data(&ctx.client, &ns, &r.name)
                .await
                .map_err(|m| auth_failure(format!("failed to get TLS secret: {m}")))?,
        );
    }
    if let Some(data) = tls_data {
        options.ca_pem = data.get("ca.crt").cloned();
        options.client_pem = crate::source::client_pem(&data).map_err(|()| {
            auth_failure(
                "failed to construct Helm client's TLS config: both 'tls.crt' and 'tls.key' are required for a client certificate".into(),
            )
        })?;
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_as_go_humanize() {
        assert_eq!(super::human_size(0), "0B");
        assert_eq!(super::human_size(82), "82B");
        assert_eq!(super::human_size(1024), "1.024kB");
        assert_eq!(super::human_size(1_234_567), "1.235MB");
        assert_eq!(super::human_size(15_400_000), "15.4MB");
        assert_eq!(super::human_size(5_325_000), "5.325MB");
        assert_eq!(super::human_size(999_999), "1000kB");
    }
}
