//! `tidegate trace <kind> <name>`: from a cluster object to the Kustomization or HelmRelease
//! that manages it (owner labels, on the object or up its ownerReferences) and on to its
//! chart, source and revision, as `flux trace` prints it.

use kube::api::{Api, DynamicObject};
use kube::discovery::{Discovery, Scope};
use serde_json::Value;

use super::Global;
use super::kind::{
    EXTERNAL_ARTIFACT, GIT_REPOSITORY, HELM_CHART, HELM_RELEASE, HELM_REPOSITORY, KUSTOMIZATION,
    OCI_REPOSITORY,
};

/// Flags of `trace`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The object's kind (`deployment`, `Deployment`, `deployments`, `configmap`, …).
    kind: String,
    /// The object's name.
    name: String,
    /// The API version, when the kind is ambiguous (`apps/v1`).
    #[arg(long)]
    api_version: Option<String>,
    #[command(flatten)]
    global: Global,
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `Status:` and `Message:` lines from the Ready condition; `failed` says "Last
/// reconciliation failed at" for a False one (Flux does for sources).
fn status_lines(out: &mut String, v: &Value, width: usize, failed: bool) {
    match super::kind::ready_condition(v) {
        Some(c) => {
            let at = text(c, "/lastTransitionTime");
            let status = if failed && text(c, "/status") == "False" {
                format!("Last reconciliation failed at {at}")
            } else {
                format!("Last reconciled at {at}")
            };
            field(out, "Status", &status, width);
            field(out, "Message", text(c, "/message"), width);
        }
        None => field(out, "Status", "Unknown", width),
    }
}

fn field(out: &mut String, key: &str, value: &str, width: usize) {
    out.push_str(&format!("{:<width$}{value}\n", format!("{key}:")));
}

/// The owner (`namespace`, `name`) an object's `<group>/name` and `<group>/namespace` labels
/// name, on the object or up its ownerReferences (a Pod of a ReplicaSet of a Deployment).
async fn managed_by(
    resolver: &tidegate_apply::resolve::Resolver,
    client: &kube::Client,
    obj: &Value,
    group: &str,
    depth: usize,
) -> Option<(String, String)> {
    let labels = obj.pointer("/metadata/labels");
    let label = |k: &str| {
        labels
            .and_then(|l| l.get(format!("{group}/{k}")))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if let Some(name) = label("name").filter(|n| !n.is_empty()) {
        return Some((label("namespace").unwrap_or_default(), name));
    }
    if depth >= 8 {
        return None;
    }
    let namespace = text(obj, "/metadata/namespace");
    for r in obj
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Ok(Some(target)) = resolver
            .resolve(text(r, "/apiVersion"), text(r, "/kind"))
            .await
        else {
            continue;
        };
        let Ok(owner) = target.api(client, namespace).get(text(r, "/name")).await else {
            continue;
        };
        let owner = serde_json::to_value(&owner).unwrap_or(Value::Null);
        if let Some(found) = Box::pin(managed_by(resolver, client, &owner, group, depth + 1)).await
        {
            return Some(found);
        }
    }
    None
}

fn header(out: &mut String, kind: &str, name: &str, namespace: &str, width: usize) {
    field(out, "Object", &format!("{kind}/{name}"), width);
    if !namespace.is_empty() {
        field(out, "Namespace", namespace, width);
    }
    field(out, "Status", "Managed by Flux", width);
}

fn git_section(out: &mut String, src: &Value, width: usize) {
    out.push_str("---\n");
    field(out, "GitRepository", text(src, "/metadata/name"), width);
    field(out, "Namespace", text(src, "/metadata/namespace"), width);
    field(out, "URL", text(src, "/spec/url"), width);
    for (key, pointer) in [
        ("Tag", "/spec/ref/tag"),
        ("Tag", "/spec/ref/semver"),
        ("Branch", "/spec/ref/branch"),
    ] {
        let v = text(src, pointer);
        if !v.is_empty() {
            field(out, key, v, width);
            break;
        }
    }
    let revision = text(src, "/status/artifact/revision");
    if !revision.is_empty() {
        field(out, "Revision", revision, width);
    }
    status_lines(out, src, width, true);
}

async fn trace_kustomization(
    client: &kube::Client,
    out: &mut String,
    (ks_ns, ks_name): (&str, &str),
) -> anyhow::Result<()> {
    const W: usize = 17;
    let ks = KUSTOMIZATION
        .get(client, ks_ns, ks_name)
        .await
        .map_err(|e| anyhow::anyhow!("failed to find kustomization: {e}"))?;
    let kv = serde_json::to_value(&ks)?;
    out.push_str("---\n");
    field(out, "Kustomization", ks_name, W);
    field(out, "Namespace", ks_ns, W);
    let target = text(&kv, "/spec/targetNamespace");
    if !target.is_empty() {
        field(out, "Target", target, W);
    }
    field(out, "Path", text(&kv, "/spec/path"), W);
    field(out, "Revision", text(&kv, "/status/lastAppliedRevision"), W);
    status_lines(out, &kv, W, false);
    let source_kind = text(&kv, "/spec/sourceRef/kind");
    let source_name = text(&kv, "/spec/sourceRef/name");
    let source_ns = match text(&kv, "/spec/sourceRef/namespace") {
        "" => ks_ns,
        other => other,
    };
    if source_kind == "GitRepository" {
        let src = GIT_REPOSITORY
            .get(client, source_ns, source_name)
            .await
            .map_err(|e| anyhow::anyhow!("failed to find GitRepository: {e}"))?;
        git_section(out, &serde_json::to_value(&src)?, W);
    } else if source_kind == "OCIRepository" {
        let src = OCI_REPOSITORY
            .get(client, source_ns, source_name)
            .await
            .map_err(|e| anyhow::anyhow!("failed to find OCIRepository: {e}"))?;
        let sv = serde_json::to_value(&src)?;
        out.push_str("---\n");
        field(out, "OCIRepository", source_name, W);
        field(out, "Namespace", source_ns, W);
        field(out, "URL", text(&sv, "/spec/url"), W);
        for (key, pointer) in [
            ("Tag", "/spec/ref/tag"),
            ("Tag", "/spec/ref/semver"),
            ("Digest", "/spec/ref/digest"),
        ] {
            let v = text(&sv, pointer);
            if !v.is_empty() {
                field(out, key, v, W);
                break;
            }
        }
        origin_lines(out, &sv, W);
        status_lines(out, &sv, W, true);
    } else if source_kind == "ExternalArtifact" {
        let src = EXTERNAL_ARTIFACT
            .get(client, source_ns, source_name)
            .await
            .map_err(|e| anyhow::anyhow!("failed to find ExternalArtifact: {e}"))?;
        let sv = serde_json::to_value(&src)?;
        if sv.pointer("/spec/sourceRef").is_none() {
            anyhow::bail!("ExternalArtifact {source_ns}/{source_name} is missing spec.sourceRef");
        }
        out.push_str("---\n");
        field(out, "ExternalArtifact", source_name, W);
        field(out, "Namespace", source_ns, W);
        let origin = format!(
            "{}/{}/{}",
            text(&sv, "/spec/sourceRef/kind"),
            text(&sv, "/spec/sourceRef/namespace"),
            text(&sv, "/spec/sourceRef/name")
        );
        field(out, "Source", &origin, W);
        origin_lines(out, &sv, W);
        status_lines(out, &sv, W, true);
    }
    Ok(())
}

/// The artifact's revision and, from its metadata, the origin revision and source.
fn origin_lines(out: &mut String, sv: &Value, w: usize) {
    let revision = text(sv, "/status/artifact/revision");
    if revision.is_empty() {
        return;
    }
    field(out, "Revision", revision, w);
    for (label, key) in [
        ("Origin Revision", "org.opencontainers.image.revision"),
        ("Origin Source", "org.opencontainers.image.source"),
    ] {
        if let Some(v) = sv
            .pointer("/status/artifact/metadata")
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
        {
            field(out, label, v, w);
        }
    }
}

async fn trace_helm_release(
    client: &kube::Client,
    out: &mut String,
    (hr_ns, hr_name): (&str, &str),
) -> anyhow::Result<()> {
    const W: usize = 16;
    let hr = HELM_RELEASE
        .get(client, hr_ns, hr_name)
        .await
        .map_err(|e| anyhow::anyhow!("failed to find HelmRelease: {e}"))?;
    let hv = serde_json::to_value(&hr)?;
    out.push_str("---\n");
    field(out, "HelmRelease", hr_name, W);
    field(out, "Namespace", hr_ns, W);
    let target = text(&hv, "/spec/targetNamespace");
    if !target.is_empty() {
        field(out, "Target", target, W);
    }
    // v2 keeps no lastAppliedRevision: the chart version of the current release.
    let revision = match text(&hv, "/status/history/0/chartVersion") {
        "" => text(&hv, "/status/lastAttemptedRevision"),
        v => v,
    };
    field(out, "Revision", revision, W);
    status_lines(out, &hv, W, false);
    let chart = text(&hv, "/status/helmChart");
    if let Some((chart_ns, chart_name)) = chart.split_once('/') {
        let c = HELM_CHART
            .get(client, chart_ns, chart_name)
            .await
            .map_err(|e| anyhow::anyhow!("failed to find HelmChart: {e}"))?;
        let cv = serde_json::to_value(&c)?;
        out.push_str("---\n");
        field(out, "HelmChart", chart_name, W);
        field(out, "Namespace", chart_ns, W);
        field(out, "Chart", text(&cv, "/spec/chart"), W);
        field(out, "Version", text(&cv, "/spec/version"), W);
        let revision = text(&cv, "/status/artifact/revision");
        if !revision.is_empty() {
            field(out, "Revision", revision, W);
        }
        status_lines(out, &cv, W, false);
    }
    let source_kind = text(&hv, "/spec/chart/spec/sourceRef/kind");
    let source_name = text(&hv, "/spec/chart/spec/sourceRef/name");
    let source_ns = match text(&hv, "/spec/chart/spec/sourceRef/namespace") {
        "" => hr_ns,
        other => other,
    };
    if source_kind == "HelmRepository" {
        let r = HELM_REPOSITORY
            .get(client, source_ns, source_name)
            .await
            .map_err(|e| anyhow::anyhow!("failed to find HelmRepository: {e}"))?;
        let rv = serde_json::to_value(&r)?;
        out.push_str("---\n");
        field(out, "HelmRepository", source_name, W);
        field(out, "Namespace", source_ns, W);
        field(out, "URL", text(&rv, "/spec/url"), W);
        let revision = text(&rv, "/status/artifact/revision");
        if !revision.is_empty() {
            field(out, "Revision", revision, W);
        }
        status_lines(out, &rv, W, false);
    } else if source_kind == "GitRepository" {
        let src = GIT_REPOSITORY
            .get(client, source_ns, source_name)
            .await
            .map_err(|e| anyhow::anyhow!("failed to find GitRepository: {e}"))?;
        git_section(out, &serde_json::to_value(&src)?, 15);
    }
    Ok(())
}

/// Runs `trace`.
pub async fn run(a: Args) -> anyhow::Result<()> {
    let client = a.global.cluster.client().await?;
    let ns = a.global.namespace.clone();
    let discovery = Discovery::new(client.clone())
        .run_aggregated()
        .await
        .map_err(|e| super::api_error(&e))?;
    let wanted = a.kind.to_lowercase();
    let mut found = None;
    for group in discovery.groups() {
        for (res, caps) in group.recommended_resources() {
            let matches = res.kind.to_lowercase() == wanted
                || res.plural == wanted
                || res.plural.trim_end_matches('s') == wanted;
            let version_ok = a.api_version.as_ref().is_none_or(|v| *v == res.api_version);
            if matches && version_ok && found.is_none() {
                found = Some((res, caps));
            }
        }
    }
    let Some((res, caps)) = found else {
        anyhow::bail!("unknown kind '{}'", a.kind);
    };
    let api: Api<DynamicObject> = if caps.scope == Scope::Namespaced {
        Api::namespaced_with(client.clone(), &ns, &res)
    } else {
        Api::all_with(client.clone(), &res)
    };
    let obj = api
        .get(&a.name)
        .await
        .map_err(|e| super::describe(&res.kind, &ns, &a.name, &e))?;
    let ov = serde_json::to_value(&obj)?;
    let obj_ns = if caps.scope == Scope::Namespaced {
        ns.as_str()
    } else {
        ""
    };
    let resolver = tidegate_apply::resolve::Resolver::new(client.clone());
    let mut out = String::new();
    if let Some((ks_ns, ks_name)) =
        managed_by(&resolver, &client, &ov, KUSTOMIZATION_GROUP, 0).await
    {
        header(&mut out, &res.kind, &a.name, obj_ns, 17);
        trace_kustomization(&client, &mut out, (&ks_ns, &ks_name)).await?;
    } else if let Some((hr_ns, hr_name)) = managed_by(&resolver, &client, &ov, HELM_GROUP, 0).await
    {
        header(&mut out, &res.kind, &a.name, obj_ns, 16);
        trace_helm_release(&client, &mut out, (&hr_ns, &hr_name)).await?;
    } else {
        anyhow::bail!(
            "{}/{} is not managed by Flux (no kustomize.toolkit.fluxcd.io or helm.toolkit.fluxcd.io owner labels)",
            res.kind,
            a.name
        );
    }
    print!("{out}");
    Ok(())
}

const KUSTOMIZATION_GROUP: &str = "kustomize.toolkit.fluxcd.io";
const HELM_GROUP: &str = "helm.toolkit.fluxcd.io";
