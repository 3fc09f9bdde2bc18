//! `tidegate reconcile source git NAME` and `tidegate reconcile kustomization NAME
//! [--with-source]`: set `reconcile.fluxcd.io/requestedAt`, wait until the controller reports
//! it handled, and report the revision (Flux's messages).

use std::time::{Duration, Instant};

use kube::Client;
use kube::api::{DynamicObject, Patch, PatchParams};
use serde_json::Value;

use super::kind::Target;
use super::kind::{HELM_CHART, HELM_RELEASE, KUSTOMIZATION, Kind};
use super::{Global, action, success, waiting};

/// What to reconcile.
pub type What = Target<Args, KsArgs, HrArgs>;

/// A toolkit object, or a Cluster API ClusterResourceSet.
#[derive(clap::Subcommand, Debug)]
pub enum Reconcile {
    #[command(flatten)]
    Toolkit(What),
    /// A ClusterResourceSet (namespace `default` unless `-n`).
    #[command(alias = "crs")]
    Clusterresourceset(super::clusterresourceset::Args),
    /// A notification Receiver.
    Receiver(Args),
}

/// Flags of `reconcile source git`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The object's name.
    name: String,
    #[command(flatten)]
    global: Global,
}

/// Flags of `reconcile kustomization`.
#[derive(clap::Args, Debug)]
pub struct KsArgs {
    /// The Kustomization's name.
    name: String,
    /// Reconcile its source first.
    #[arg(long)]
    with_source: bool,
    #[command(flatten)]
    global: Global,
}

/// Flags of `reconcile helmrelease`.
#[derive(clap::Args, Debug)]
pub struct HrArgs {
    /// The HelmRelease's name.
    name: String,
    /// Reconcile its chart source first.
    #[arg(long)]
    with_source: bool,
    /// Force a one-off install or upgrade (`reconcile.fluxcd.io/forceAt`).
    #[arg(long)]
    force: bool,
    /// Reset the failure counters (`reconcile.fluxcd.io/resetAt`).
    #[arg(long)]
    reset: bool,
    #[command(flatten)]
    global: Global,
}

fn ready(obj: &DynamicObject) -> Option<(String, String)> {
    super::kind::ready_condition(&obj.data).map(|c| {
        (
            c["status"].as_str().unwrap_or("").to_string(),
            c["message"].as_str().unwrap_or("").to_string(),
        )
    })
}

/// Waits until the object handled the request `token` and its Ready condition settled;
/// returns the object. An error carries the Ready message.
pub async fn wait_handled(
    kind: Kind,
    client: &Client,
    namespace: &str,
    name: &str,
    token: Option<&str>,
    timeout: Duration,
) -> anyhow::Result<DynamicObject> {
    let deadline = Instant::now() + timeout;
    let _spinner = super::spinner(&format!("waiting for {} {namespace}/{name}", kind.kind));
    loop {
        let obj = kind.get(client, namespace, name).await?;
        let handled = match token {
            Some(t) => obj.data.pointer("/status/lastHandledReconcileAt") == Some(&Value::from(t)),
            None => true,
        };
        let generation = obj.metadata.generation;
        let observed = obj
            .data
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64);
        if handled {
            match ready(&obj) {
                Some((s, _)) if s == "True" && observed == generation => return Ok(obj),
                Some((s, message)) if s == "False" => anyhow::bail!("{message}"),
                _ => {}
            }
        }
        if Instant::now() > deadline {
            anyhow::bail!(
                "timeout waiting for {} '{namespace}/{name}' to be reconciled",
                kind.kind
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Annotates, waits and reports, as `flux reconcile` does.
pub async fn request(
    kind: Kind,
    client: &Client,
    namespace: &str,
    name: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    request_with(kind, client, namespace, name, timeout, &[]).await
}

/// [`request`], with more annotations set to the same token (`forceAt`, `resetAt`).
pub async fn request_with(
    kind: Kind,
    client: &Client,
    namespace: &str,
    name: &str,
    timeout: Duration,
    also: &[&str],
) -> anyhow::Result<()> {
    let obj = kind.get(client, namespace, name).await?;
    if super::kind::is_suspended(&obj.data) {
        anyhow::bail!("resource is suspended");
    }
    action(&format!(
        "annotating {} {name} in {namespace} namespace",
        kind.kind
    ));
    let token = super::now_rfc3339();
    let mut annotations = serde_json::Map::new();
    annotations.insert(
        tidegate_api::meta::RECONCILE_REQUESTED_AT.into(),
        Value::from(token.clone()),
    );
    for a in also {
        annotations.insert((*a).into(), Value::from(token.clone()));
    }
    let patch = serde_json::json!({"metadata": {"annotations": annotations}});
    kind.api(client, namespace)
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| super::describe(kind.kind, namespace, name, &e))?;
    success(&format!("{} annotated", kind.kind));
    waiting(&format!("waiting for {} reconciliation", kind.kind));
    let obj = wait_handled(kind, client, namespace, name, Some(&token), timeout).await?;
    if kind.kind == super::kind::RECEIVER.kind {
        // Flux's receiver adapter has no revision to show.
        success("Receiver reconciliation completed");
    } else if kind.kind == super::kind::IMAGE_REPOSITORY.kind {
        // Flux's image repository adapter reports the tag count.
        let count = obj
            .data
            .pointer("/status/lastScanResult/tagCount")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        success(&format!("scan fetched {count} tags"));
    } else if kind.kind == super::kind::IMAGE_UPDATE.kind {
        // Flux's image update adapter reports the Ready message, else the last run.
        let ready = super::kind::ready_condition(&obj.data)
            .and_then(|c| c.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let run = obj
            .data
            .pointer("/status/lastAutomationRunTime")
            .and_then(Value::as_str);
        success(&match (ready, run) {
            (Some(m), _) => m,
            (None, Some(t)) => format!("last run {t}"),
            (None, None) => "automation not yet run".into(),
        });
    } else {
        success(&format!(
            "{} revision {}",
            kind.verb,
            kind.revision_of(&obj)
        ));
    }
    Ok(())
}

/// Runs `reconcile`.
pub async fn run(asked: Reconcile) -> anyhow::Result<()> {
    let what = match asked {
        Reconcile::Toolkit(what) => what,
        Reconcile::Clusterresourceset(a) => return super::clusterresourceset::reconcile(a).await,
        Reconcile::Receiver(a) => {
            let client = a.global.cluster.client().await?;
            return request(
                super::kind::RECEIVER,
                &client,
                &a.global.namespace,
                &a.name,
                a.global.timeout,
            )
            .await;
        }
    };
    match what {
        Target::Image(t) => {
            let (kind, _, a) = t.pick();
            let client = a.global.cluster.client().await?;
            request(
                kind,
                &client,
                &a.global.namespace,
                &a.name,
                a.global.timeout,
            )
            .await
        }
        Target::Source(t) => {
            let (kind, _, a) = t.pick();
            let client = a.global.cluster.client().await?;
            request(
                kind,
                &client,
                &a.global.namespace,
                &a.name,
                a.global.timeout,
            )
            .await
        }
        Target::Kustomization(a) => {
            let client = a.global.cluster.client().await?;
            let ns = &a.global.namespace;
            if a.with_source {
                let k = KUSTOMIZATION.get(&client, ns, &a.name).await?;
                let source_kind = k
                    .data
                    .pointer("/spec/sourceRef/kind")
                    .and_then(Value::as_str);
                let source_name = k
                    .data
                    .pointer("/spec/sourceRef/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let source_ns = k
                    .data
                    .pointer("/spec/sourceRef/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or(ns);
                // An ExternalArtifact is produced by another controller: nothing to ask for.
                if source_kind == Some("ExternalArtifact") {
                    anyhow::bail!("cannot reconcile source of kind ExternalArtifact");
                }
                let Some(kind) = source_kind.and_then(super::kind::source_kind) else {
                    anyhow::bail!(
                        "source kind '{}' is not supported",
                        source_kind.unwrap_or("")
                    );
                };
                request(kind, &client, source_ns, source_name, a.global.timeout).await?;
            }
            request(KUSTOMIZATION, &client, ns, &a.name, a.global.timeout).await
        }
        Target::Helmrelease(a) => {
            let client = a.global.cluster.client().await?;
            let ns = &a.global.namespace;
            if a.with_source {
                let hr = HELM_RELEASE.get(&client, ns, &a.name).await?;
                let (kind, source_ns, source_name) = chart_source(&hr, ns)?;
                request(kind, &client, &source_ns, &source_name, a.global.timeout).await?;
            }
            let mut also = Vec::new();
            if a.force {
                also.push(tidegate_api::helmrelease::FORCE_REQUESTED_AT);
            }
            if a.reset {
                also.push(tidegate_api::helmrelease::RESET_REQUESTED_AT);
            }
            request_with(HELM_RELEASE, &client, ns, &a.name, a.global.timeout, &also).await
        }
    }
}

/// The chart source a HelmRelease reads: the HelmChart it made (`status.helmChart`, else
/// `<namespace>-<name>`), or its `chartRef`.
fn chart_source(hr: &DynamicObject, namespace: &str) -> anyhow::Result<(Kind, String, String)> {
    let text = |p: &str| hr.data.pointer(p).and_then(Value::as_str);
    if let Some(kind) = text("/spec/chartRef/kind") {
        if kind == "ExternalArtifact" {
            anyhow::bail!("cannot reconcile source of kind ExternalArtifact");
        }
        let Some(k) = super::kind::source_kind(kind) else {
            anyhow::bail!("source kind '{kind}' is not supported");
        };
        let ns = text("/spec/chartRef/namespace").unwrap_or(namespace);
        return Ok((
            k,
            ns.to_string(),
            text("/spec/chartRef/name").unwrap_or("").to_string(),
        ));
    }
    if let Some((ns, name)) = text("/status/helmChart").and_then(|c| c.split_once('/')) {
        return Ok((HELM_CHART, ns.to_string(), name.to_string()));
    }
    let ns = text("/spec/chart/spec/sourceRef/namespace").unwrap_or(namespace);
    let name = hr.metadata.name.clone().unwrap_or_default();
    Ok((HELM_CHART, ns.to_string(), format!("{namespace}-{name}")))
}
