//! The chart a HelmRelease installs: the source object (its HelmChart, or the `chartRef`
//! OCIRepository or HelmChart), checked ready as Flux checks it, its artifact downloaded,
//! digest-checked and loaded as a chart; OCIRepository charts get the digest in their version.

use std::time::Duration;

use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};
use tidegate_api::conditions::{self, READY, STALLED};
use tidegate_api::meta::Artifact;
use tidegate_api::{ExternalArtifact, HelmChart, HelmRelease, OCIRepository};
use tidegate_helm::chart::Chart;
use tidegate_source::fetch::Waited;

use super::Context;

/// The chart source of `hr`: kind, namespace, name.
pub fn chart_source_of(hr: &HelmRelease) -> (String, String, String) {
    let ns = hr.namespace().unwrap_or_default();
    if let Some(r) = &hr.spec.chart_ref {
        return (
            r.kind.clone(),
            r.namespace.clone().filter(|n| !n.is_empty()).unwrap_or(ns),
            r.name.clone(),
        );
    }
    match super::chart_template::chart_ref(hr) {
        Some((cns, name)) => ("HelmChart".into(), cns, name),
        None => (String::new(), ns, String::new()),
    }
}

/// Why no chart could be had.
#[derive(Debug)]
pub enum SourceError {
    /// Not ready yet (reason `SourceNotReady`, retried after `--requeue-dependency`).
    NotReady(String),
    /// `ArtifactFailed`.
    Artifact(String),
    /// `AccessDenied` (stalls).
    AccessDenied(String),
    /// The download is still running.
    Pending,
}

/// The loaded chart, with what the release records about its origin.
pub struct Loaded {
    pub chart: Chart,
    /// The OCI digest (`sha256:…`) for OCIRepository charts.
    pub oci_digest: String,
}

fn readiness(
    kind: &str,
    ns: &str,
    name: &str,
    generation: Option<i64>,
    observed: Option<i64>,
    conds: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition],
    artifact: Option<&Artifact>,
) -> Result<Artifact, SourceError> {
    if generation != observed {
        let msg = conditions::get(conds, READY)
            .map(|c| c.message.clone())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "latest generation of object has not been reconciled".into());
        return Err(SourceError::NotReady(format!(
            "{kind} '{ns}/{name}' is not ready: {msg}"
        )));
    }
    if conditions::is_true(conds, STALLED) {
        let msg = conditions::get(conds, STALLED)
            .map(|c| c.message.clone())
            .unwrap_or_default();
        return Err(SourceError::NotReady(format!(
            "{kind} '{ns}/{name}' is not ready: {msg}"
        )));
    }
    artifact.cloned().ok_or_else(|| {
        SourceError::NotReady(format!("{kind} '{ns}/{name}' does not have an artifact"))
    })
}

/// Gets the source object and its artifact, checked ready.
pub async fn artifact(hr: &HelmRelease, ctx: &Context) -> Result<(String, Artifact), SourceError> {
    let (kind, ns, name) = chart_source_of(hr);
    let own_ns = hr.namespace().unwrap_or_default();
    if ctx.options.no_cross_namespace_refs && ns != own_ns {
        return Err(SourceError::AccessDenied(format!(
            "cannot access {kind}/{ns}/{name}, cross-namespace references have been blocked"
        )));
    }
    let get_err = |e: kube::Error| match &e {
        kube::Error::Api(s) if s.code == 404 => SourceError::NotReady(format!(
            "could not get Source object: {kind}.source.toolkit.fluxcd.io \"{name}\" not found"
        )),
        _ => SourceError::Artifact(format!("could not get Source object: {e}")),
    };
    match kind.as_str() {
        "HelmChart" => {
            let cached = ctx
                .charts
                .get()
                .and_then(|s| s.get(&ObjectRef::new(&name).within(&ns)));
            let c = match cached {
                Some(c) => c,
                None => {
                    let api: Api<HelmChart> = Api::namespaced(ctx.client.clone(), &ns);
                    std::sync::Arc::new(api.get(&name).await.map_err(get_err)?)
                }
            };
            let st = c.status.clone().unwrap_or_default();
            let a = readiness(
                &kind,
                &ns,
                &name,
                c.metadata.generation,
                st.observed_generation,
                &st.conditions,
                st.artifact.as_ref(),
            )?;
            Ok((kind, a))
        }
        "OCIRepository" => {
            let cached = ctx
                .oci_sources
                .get()
                .and_then(|s| s.get(&ObjectRef::new(&name).within(&ns)));
            let o = match cached {
                Some(o) => o,
                None => {
                    let api: Api<OCIRepository> = Api::namespaced(ctx.client.clone(), &ns);
                    std::sync::Arc::new(api.get(&name).await.map_err(get_err)?)
                }
            };
            let st = o.status.clone().unwrap_or_default();
            let a = readiness(
                &kind,
                &ns,
                &name,
                o.metadata.generation,
                st.observed_generation,
                &st.conditions,
                st.artifact.as_ref(),
            )?;
            Ok((kind, a))
        }
        "ExternalArtifact" => {
            let api: Api<ExternalArtifact> = Api::namespaced(ctx.client.clone(), &ns);
            let ea = api.get(&name).await.map_err(get_err)?;
            let st = ea.status.clone().unwrap_or_default();
            // An ExternalArtifact records no observed generation: its producer writes the
            // status with the object.
            let a = readiness(
                &kind,
                &ns,
                &name,
                ea.metadata.generation,
                ea.metadata.generation,
                &st.conditions,
                st.artifact.as_ref(),
            )?;
            Ok((kind, a))
        }
        "" => Err(SourceError::Artifact("invalid Chart reference".into())),
        other => Err(SourceError::Artifact(format!(
            "unsupported source kind '{other}'"
        ))),
    }
}

/// Downloads, checks and loads the chart of `artifact`.
pub async fn load(kind: &str, artifact: &Artifact, ctx: &Context) -> Result<Loaded, SourceError> {
    let chart = load_chart(artifact, ctx).await?;
    let mut chart = (*chart).clone();
    let mut oci_digest = String::new();
    if kind == "OCIRepository" {
        oci_digest = mutate_with_revision(&mut chart, &artifact.revision)?;
    }
    Ok(Loaded { chart, oci_digest })
}

/// How long a loaded chart is kept for the releases of the same artifact.
const LOADED_TTL: Duration = Duration::from_secs(600);

/// Charts kept at most.
const LOADED_MAX: usize = 64;

/// The chart of `artifact`, loaded once per artifact digest and shared.
async fn load_chart(
    artifact: &Artifact,
    ctx: &Context,
) -> Result<std::sync::Arc<Chart>, SourceError> {
    let key = format!("{}|{}", artifact.digest, artifact.url);
    {
        let mut loaded = ctx.loaded.lock().unwrap_or_else(|e| e.into_inner());
        loaded.retain(|_, (at, _)| at.elapsed() < LOADED_TTL);
        if let Some((at, chart)) = loaded.get_mut(&key) {
            *at = std::time::Instant::now();
            return Ok(chart.clone());
        }
    }
    let bytes = match ctx
        .fetcher
        .get(&artifact.url, &artifact.digest, Duration::from_secs(30))
        .await
    {
        Waited::Pending(_) => return Err(SourceError::Pending),
        Waited::Done(Ok(b)) => b,
        Waited::Done(Err(e)) => {
            return Err(match e.as_ref() {
                tidegate_source::fetch::FetchError::NotFound { .. } => SourceError::Artifact(
                    "Source not ready: artifact not found. Retrying in 30s".into(),
                ),
                other => SourceError::Artifact(format!("Could not load chart: {other}")),
            });
        }
    };
    let chart = tokio::task::spawn_blocking(move || tidegate_helm::chart::load_archive(&bytes))
        .await
        .map_err(|e| SourceError::Artifact(format!("Could not load chart: {e}")))?
        .map_err(|e| SourceError::Artifact(format!("Could not load chart: {}", e.0)))?;
    let chart = std::sync::Arc::new(chart);
    let mut loaded = ctx.loaded.lock().unwrap_or_else(|e| e.into_inner());
    if loaded.len() >= LOADED_MAX
        && let Some(oldest) = loaded
            .iter()
            .min_by_key(|(_, (at, _))| *at)
            .map(|(k, _)| k.clone())
    {
        loaded.remove(&oldest);
    }
    loaded.insert(key, (std::time::Instant::now(), chart.clone()));
    Ok(chart)
}

/// An OCIRepository chart as Flux mutates it: a semver tag must equal the chart version, and
/// the version gets `+<first 12 hex of the digest>`. Returns the digest.
fn mutate_with_revision(chart: &mut Chart, revision: &str) -> Result<String, SourceError> {
    let (tag, digest) = match revision.rsplit_once('@') {
        Some((t, d)) => (t, d),
        None => ("", revision),
    };
    if !tag.is_empty()
        && tidegate_core::semver::Version::parse(tag).is_ok()
        && tag.replace('_', "+") != chart.metadata.version
    {
        return Err(SourceError::Artifact(format!(
            "Could not load chart: artifact revision {tag} does not match chart version {}",
            chart.metadata.version
        )));
    }
    let Some(hex) = digest.strip_prefix("sha256:") else {
        return Ok(String::new());
    };
    let short = &hex[..hex.len().min(12)];
    chart.metadata.version = match chart.metadata.version.split_once('+') {
        Some((v, _)) => format!("{v}+{short}"),
        None => format!("{}+{short}", chart.metadata.version),
    };
    Ok(digest.to_string())
}
