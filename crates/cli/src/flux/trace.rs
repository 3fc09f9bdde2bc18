//! `tidegate trace <kind> <name>`: from a cluster object to the Kustomization that manages it
//! (owner labels) and on to its source and revision, as `flux trace` prints it.

use kube::api::{Api, DynamicObject};
use kube::discovery::{Discovery, Scope};
use serde_json::Value;

use super::Global;
use super::kind::{GIT_REPOSITORY, KUSTOMIZATION, OCI_REPOSITORY};

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

fn ready(v: &Value) -> (String, String) {
    super::kind::ready_condition(v)
        .map(|c| {
            (
                format!("Last reconciled at {}", text(c, "/lastTransitionTime")),
                text(c, "/message").to_string(),
            )
        })
        .unwrap_or_else(|| ("Unknown".into(), String::new()))
}

fn field(out: &mut String, key: &str, value: &str) {
    out.push_str(&format!("{:<17}{value}\n", format!("{key}:")));
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
    let labels = obj.metadata.labels.clone().unwrap_or_default();
    let (Some(ks_name), Some(ks_ns)) = (
        labels.get("kustomize.toolkit.fluxcd.io/name"),
        labels.get("kustomize.toolkit.fluxcd.io/namespace"),
    ) else {
        anyhow::bail!(
            "{}/{} is not managed by Flux (no kustomize.toolkit.fluxcd.io owner labels)",
            res.kind,
            a.name
        );
    };
    let mut out = String::new();
    field(
        &mut out,
        "Object",
        &format!("{}/{}", res.kind.to_lowercase(), a.name),
    );
    if caps.scope == Scope::Namespaced {
        field(&mut out, "Namespace", &ns);
    }
    field(&mut out, "Status", "Managed by Flux");
    out.push_str("---\n");
    let ks = KUSTOMIZATION.get(&client, ks_ns, ks_name).await?;
    let kv = serde_json::to_value(&ks)?;
    field(&mut out, "Kustomization", ks_name);
    field(&mut out, "Namespace", ks_ns);
    let target = text(&kv, "/spec/targetNamespace");
    if !target.is_empty() {
        field(&mut out, "Target", target);
    }
    field(&mut out, "Path", text(&kv, "/spec/path"));
    field(
        &mut out,
        "Revision",
        text(&kv, "/status/lastAppliedRevision"),
    );
    let (status, message) = ready(&kv);
    field(&mut out, "Status", &status);
    field(&mut out, "Message", &message);
    let source_kind = text(&kv, "/spec/sourceRef/kind").to_string();
    let source_name = text(&kv, "/spec/sourceRef/name").to_string();
    let source_ns = match text(&kv, "/spec/sourceRef/namespace") {
        "" => ks_ns.clone(),
        other => other.to_string(),
    };
    if source_kind == "GitRepository" {
        let src = GIT_REPOSITORY
            .get(&client, &source_ns, &source_name)
            .await?;
        let sv = serde_json::to_value(&src)?;
        out.push_str("---\n");
        field(&mut out, "GitRepository", &source_name);
        field(&mut out, "Namespace", &source_ns);
        field(&mut out, "URL", text(&sv, "/spec/url"));
        for (key, pointer) in [
            ("Branch", "/spec/ref/branch"),
            ("Tag", "/spec/ref/tag"),
            ("Tag", "/spec/ref/semver"),
            ("Commit", "/spec/ref/commit"),
        ] {
            let v = text(&sv, pointer);
            if !v.is_empty() {
                field(&mut out, key, v);
            }
        }
        field(&mut out, "Revision", text(&sv, "/status/artifact/revision"));
        let (status, message) = ready(&sv);
        field(&mut out, "Status", &status);
        field(&mut out, "Message", &message);
    } else if source_kind == "OCIRepository" {
        let src = OCI_REPOSITORY
            .get(&client, &source_ns, &source_name)
            .await?;
        let sv = serde_json::to_value(&src)?;
        out.push_str("---\n");
        field(&mut out, "OCIRepository", &source_name);
        field(&mut out, "Namespace", &source_ns);
        field(&mut out, "URL", text(&sv, "/spec/url"));
        for (key, pointer) in [
            ("Tag", "/spec/ref/tag"),
            ("Tag", "/spec/ref/semver"),
            ("Digest", "/spec/ref/digest"),
        ] {
            let v = text(&sv, pointer);
            if !v.is_empty() {
                field(&mut out, key, v);
            }
        }
        field(&mut out, "Revision", text(&sv, "/status/artifact/revision"));
        let (status, message) = ready(&sv);
        field(&mut out, "Status", &status);
        field(&mut out, "Message", &message);
    }
    print!("{out}");
    Ok(())
}
