//! One HelmChart reconcile. Messages and reasons are Flux's.

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use tidegate_api::conditions;
use tidegate_api::helmchart::HelmChartStatus;
use tidegate_api::meta::Artifact;
use tidegate_api::{HelmChart, HelmRepository};
use tidegate_source::helm_index::{self, HttpOptions};
use tidegate_source::storage::Storage;

use crate::source::failure::{
    ARTIFACT_IN_STORAGE, ARTIFACT_OUTDATED, FETCH_FAILED, Failure, STORAGE_FAILED,
};
use crate::source::{Context, Done, ReconcileError, progressing, secret_data};

/// The largest chart package accepted.
const MAX_CHART_SIZE: u64 = 100 << 20;

pub(super) async fn reconcile(obj: &HelmChart, ctx: &Context) -> Result<Action, ReconcileError> {
    crate::source::reconcile(obj, &ctx.shared(), async |st| steps(obj, ctx, st).await).await
}

fn done(name: &str, version: &str) -> Done {
    let message = format!("pulled '{name}' chart with version '{version}'");
    Done {
        ready_message: message.clone(),
        new_artifact_message: message,
        revision: version.to_string(),
        verified: None,
        reason: "ChartPullSucceeded",
    }
}

fn unsupported(what: String) -> Failure {
    Failure::new(
        FETCH_FAILED,
        "UnsupportedConfiguration",
        format!("{what} is not supported by Tidegate yet"),
    )
    .stall()
}

async fn steps(obj: &HelmChart, ctx: &Context, st: &mut HelmChartStatus) -> Result<Done, Failure> {
    let spec = &obj.spec;
    let ns = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let generation = obj.metadata.generation;
    if spec.source_ref.kind != "HelmRepository" {
        return Err(unsupported(format!(
            "a chart from a {}",
            spec.source_ref.kind
        )));
    }
    if !spec.values_files.is_empty() {
        return Err(unsupported("spec.valuesFiles".to_string()));
    }
    if spec.verify.is_some() {
        return Err(unsupported("spec.verify".to_string()));
    }
    let repos: Api<HelmRepository> = Api::namespaced(ctx.client.clone(), &ns);
    let repo = repos.get(&spec.source_ref.name).await.map_err(|e| {
        let detail = match &e {
            kube::Error::Api(s) => s.message.clone(),
            other => other.to_string(),
        };
        Failure::new(
            FETCH_FAILED,
            "SourceUnavailable",
            format!("failed to get source: {detail}"),
        )
    })?;
    if repo.spec.is_oci() {
        return Err(unsupported(
            "a chart from an OCI HelmRepository".to_string(),
        ));
    }
    let Some(index_artifact) = repo.status.as_ref().and_then(|s| s.artifact.clone()) else {
        return Err(Failure::new(
            FETCH_FAILED,
            "SourceUnavailable",
            format!(
                "no artifact available for HelmRepository source '{}'",
                spec.source_ref.name
            ),
        )
        .wait(ctx.options.requeue_dependency));
    };

    // The chart version from the stored index.
    let index_bytes = tidegate_source::fetch::download(
        &ctx.http,
        &index_artifact.url,
        &index_artifact.digest,
        2 * crate::helmrepository::MAX_INDEX_SIZE,
    )
    .await
    .map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "SourceUnavailable",
            format!("failed to get source artifact: {e}"),
        )
    })?;
    let index = tidegate_helm::repo::load_index(&index_bytes).map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "ChartPullError",
            format!(
                "failed to load index of HelmRepository '{}': {e}",
                spec.source_ref.name
            ),
        )
    })?;
    drop(index_bytes);
    let chart_version = index.get(&spec.chart, spec.version()).map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "InvalidChartReference",
            format!(
                "invalid chart reference: failed to get chart version for remote reference: {e}"
            ),
        )
    })?;
    let version = chart_version.version().to_string();
    let urls: Vec<String> = chart_version.urls().iter().map(|u| u.to_string()).collect();
    drop(index);

    // Unchanged: same chart, same version, the artifact still there.
    let same = st.artifact.as_ref().is_some_and(|a| a.revision == version)
        && st.observed_chart_name.as_deref() == Some(spec.chart.as_str())
        && conditions::is_true(&st.conditions, ARTIFACT_IN_STORAGE);
    st.observed_source_artifact_revision = Some(index_artifact.revision.clone());
    if same {
        refresh_latest(ctx, st);
        return Ok(done(&spec.chart, &version));
    }
    if let Some(a) = &st.artifact {
        let message = format!("new chart version '{version}'");
        if a.revision != version {
            conditions::set(
                &mut st.conditions,
                ARTIFACT_OUTDATED,
                true,
                "NewChart",
                &message,
                generation,
            );
            progressing(
                &mut st.conditions,
                &format!("building artifact: {message}"),
                generation,
            );
        }
    }

    // Download the package with the repository's credentials.
    let Some(first) = urls.first() else {
        return Err(Failure::new(
            FETCH_FAILED,
            "ChartPullError",
            format!(
                "chart '{}' version '{version}' has no downloadable URLs",
                spec.chart
            ),
        ));
    };
    let chart_url = resolve_url(&repo.spec.url, first);
    let options = http_options(&repo, &chart_url, ctx).await?;
    let client = helm_index::client(&options)
        .map_err(|e| Failure::new(FETCH_FAILED, "AuthenticationFailed", e.to_string()))?;
    let package = helm_index::download(&client, &chart_url, &options, MAX_CHART_SIZE)
        .await
        .map_err(|e| {
            Failure::new(
                FETCH_FAILED,
                "ChartPullError",
                format!("failed to download chart for remote reference: {e}"),
            )
        })?;
    // It must be a chart.
    tidegate_helm::chart::load_archive(&package).map_err(|e| {
        Failure::new(
            FETCH_FAILED,
            "ChartPullError",
            format!(
                "failed to load chart '{}' version '{version}': {}",
                spec.chart, e.0
            ),
        )
    })?;

    let path = Storage::artifact_path(
        "HelmChart",
        &ns,
        &name,
        &format!("{}-{version}.tgz", spec.chart),
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
        revision: version.clone(),
        digest: written.digest,
        last_update_time: k8s_openapi::jiff::Timestamp::from_second(conditions::now().as_second())
            .map(|t| t.to_string())
            .unwrap_or_default(),
        size: i64::try_from(written.size).ok(),
        metadata: Default::default(),
    });
    st.observed_chart_name = Some(spec.chart.clone());
    st.observed_values_files.clear();
    refresh_latest(ctx, st);
    Ok(done(&spec.chart, &version))
}

/// A chart URL from an index, resolved against the repository URL when relative.
fn resolve_url(repo_url: &str, chart_url: &str) -> String {
    if chart_url.contains("://") {
        return chart_url.to_string();
    }
    let base = repo_url
        .split('?')
        .next()
        .unwrap_or(repo_url)
        .trim_end_matches('/');
    format!("{base}/{}", chart_url.trim_start_matches('/'))
}

fn host_of(url: &str) -> &str {
    url.split("://")
        .nth(1)
        .unwrap_or("")
        .split('/')
        .next()
        .unwrap_or("")
}

/// The repository's credentials and TLS for downloading `chart_url`: basic auth only on the
/// index's host unless `passCredentials`.
async fn http_options(
    repo: &HelmRepository,
    chart_url: &str,
    ctx: &Context,
) -> Result<HttpOptions, Failure> {
    let ns = repo.namespace().unwrap_or_default();
    let auth_failure = |m: String| Failure::new(FETCH_FAILED, "AuthenticationFailed", m);
    let mut options = HttpOptions {
        timeout: tidegate_core::duration::parse(repo.spec.timeout())
            .unwrap_or(std::time::Duration::from_secs(60)),
        ..Default::default()
    };
    if let Some(r) = &repo.spec.secret_ref {
        let data = secret_data(&ctx.client, &ns, &r.name)
            .await
            .map_err(|m| auth_failure(format!("failed to get authentication secret: {m}")))?;
        let text = |k: &str| data.get(k).map(|v| String::from_utf8_lossy(v).into_owned());
        if let (Some(u), Some(p)) = (text("username"), text("password"))
            && (repo.spec.pass_credentials || host_of(chart_url) == host_of(&repo.spec.url))
        {
            options.basic_auth = Some((u, p));
        }
    }
    if let Some(r) = &repo.spec.cert_secret_ref {
        let data = secret_data(&ctx.client, &ns, &r.name)
            .await
            .map_err(|m| auth_failure(format!("failed to get TLS secret: {m}")))?;
        options.ca_pem = data.get("ca.crt").cloned();
        if let (Some(c), Some(k)) = (data.get("tls.crt"), data.get("tls.key")) {
            let mut pem = c.clone();
            pem.push(b'\n');
            pem.extend_from_slice(k);
            options.client_pem = Some(pem);
        }
    }
    Ok(options)
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
    fn chart_urls() {
        assert_eq!(
            super::resolve_url("https://h/charts/", "podinfo-1.0.0.tgz"),
            "https://h/charts/podinfo-1.0.0.tgz"
        );
        assert_eq!(
            super::resolve_url("https://h/charts", "https://cdn/p.tgz"),
            "https://cdn/p.tgz"
        );
        assert_eq!(super::host_of("https://h:8080/x"), "h:8080");
    }
}
