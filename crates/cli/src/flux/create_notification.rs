//! `tidegate create alert-provider|alert|receiver NAME …`: the notification objects from flags,
//! as `flux create` builds them; `--export` prints them, otherwise they are applied (Alerts and
//! Providers have no status to wait for; a Receiver is waited for and its webhook URL shown).

use serde_json::{Value, json};

use super::create::export_yaml;
use super::kind::RECEIVER;
use super::reconcile::wait_handled;
use super::{Global, action, generate, success, waiting};

/// Flags of `create alert-provider`.
#[derive(clap::Args, Debug)]
pub struct ProviderArgs {
    /// The Provider's name.
    name: String,
    /// Type of provider (`slack`, `msteams`, `generic`, `github`, …).
    #[arg(long = "type")]
    type_: Option<String>,
    /// Channel to send messages to in the case of a chat provider.
    #[arg(long)]
    channel: Option<String>,
    /// Bot username used by the provider.
    #[arg(long)]
    username: Option<String>,
    /// Path to either the git repository, chat provider or webhook.
    #[arg(long)]
    address: Option<String>,
    /// Name of the Secret containing the authentication token.
    #[arg(long)]
    secret_ref: Option<String>,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// Flags of `create alert`.
#[derive(clap::Args, Debug)]
pub struct AlertArgs {
    /// The Alert's name.
    name: String,
    /// The Provider (same namespace).
    #[arg(long)]
    provider_ref: Option<String>,
    /// Severity of events to send alerts for (`info` or `error`).
    #[arg(long)]
    event_severity: Option<String>,
    /// Sources that generate alerts (`<kind>/<name>[.<namespace>]`), comma-separated or
    /// repeated.
    #[arg(long = "event-source", value_delimiter = ',')]
    event_sources: Vec<String>,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// Flags of `create receiver`.
#[derive(clap::Args, Debug)]
pub struct ReceiverArgs {
    /// The Receiver's name.
    name: String,
    /// Type of receiver (`github`, `gitlab`, `generic`, `generic-hmac`, …).
    #[arg(long = "type", value_parser = [
        "generic", "generic-hmac", "github", "gitlab", "bitbucket", "harbor", "dockerhub",
        "quay", "gcr", "nexus", "acr", "cdevents",
    ])]
    type_: Option<String>,
    /// The Secret holding the token.
    #[arg(long)]
    secret_ref: Option<String>,
    /// Events to accept (the provider's event header), comma-separated or repeated.
    #[arg(long = "event", value_delimiter = ',')]
    events: Vec<String>,
    /// Objects to reconcile (`<kind>/<name>`), comma-separated or repeated.
    #[arg(long = "resource", value_delimiter = ',')]
    resources: Vec<String>,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// `Kind/name[.namespace]` as Flux's `ParseObjectKindNameNamespace` reads it.
fn kind_name_namespace(text: &str) -> Option<(String, String, Option<String>)> {
    let (kind, rest) = text.split_once('/')?;
    if kind.is_empty() {
        return None;
    }
    let (name, namespace) = match rest.split_once('.') {
        Some((n, ns)) => (n, Some(ns.to_string())),
        None => (rest, None),
    };
    Some((kind.to_string(), name.to_string(), namespace))
}

/// `v` with every object's keys sorted, as Flux's export (`sigs.k8s.io/yaml`) writes them.
pub(super) fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// The Provider the flags describe.
pub fn provider_object(a: &ProviderArgs) -> anyhow::Result<Value> {
    let Some(type_) = a.type_.as_deref().filter(|t| !t.is_empty()) else {
        anyhow::bail!("Provider type is required");
    };
    let mut spec = json!({"type": type_});
    for (k, v) in [
        ("channel", &a.channel),
        ("username", &a.username),
        ("address", &a.address),
    ] {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            spec[k] = json!(v);
        }
    }
    if let Some(s) = a.secret_ref.as_deref().filter(|s| !s.is_empty()) {
        spec["secretRef"] = json!({"name": s});
    }
    Ok(sorted(json!({
        "apiVersion": "notification.toolkit.fluxcd.io/v1beta3",
        "kind": "Provider",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    })))
}

/// The Alert the flags describe.
pub fn alert_object(a: &AlertArgs) -> anyhow::Result<Value> {
    let Some(provider) = a.provider_ref.as_deref().filter(|p| !p.is_empty()) else {
        anyhow::bail!("provider ref is required");
    };
    let mut sources = Vec::new();
    for s in &a.event_sources {
        let Some((kind, name, namespace)) = kind_name_namespace(s) else {
            anyhow::bail!("invalid event source '{s}', must be in format <kind>/<name>");
        };
        let mut source = json!({"kind": kind, "name": name});
        if let Some(ns) = namespace {
            source["namespace"] = json!(ns);
        }
        sources.push(source);
    }
    if sources.is_empty() {
        anyhow::bail!("at least one event source is required");
    }
    let mut spec = json!({"providerRef": {"name": provider}, "eventSources": sources});
    if let Some(s) = a.event_severity.as_deref().filter(|s| !s.is_empty()) {
        spec["eventSeverity"] = json!(s);
    }
    Ok(sorted(json!({
        "apiVersion": "notification.toolkit.fluxcd.io/v1beta3",
        "kind": "Alert",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    })))
}

/// The Receiver the flags describe.
pub fn receiver_object(a: &ReceiverArgs) -> anyhow::Result<Value> {
    let Some(type_) = a.type_.as_deref().filter(|t| !t.is_empty()) else {
        anyhow::bail!("Receiver type is required");
    };
    let Some(secret) = a.secret_ref.as_deref().filter(|s| !s.is_empty()) else {
        anyhow::bail!("secret ref is required");
    };
    let mut resources = Vec::new();
    for r in &a.resources {
        let Some((kind, name)) = r.split_once('/').filter(|(k, _)| !k.is_empty()) else {
            anyhow::bail!("invalid event source '{r}', must be in format <kind>/<name>");
        };
        resources.push(json!({"kind": kind, "name": name}));
    }
    if resources.is_empty() {
        anyhow::bail!("atleast one resource is required");
    }
    let mut spec = json!({"type": type_, "resources": resources, "secretRef": {"name": secret}});
    if !a.events.is_empty() {
        spec["events"] = json!(a.events);
    }
    Ok(sorted(json!({
        "apiVersion": "notification.toolkit.fluxcd.io/v1",
        "kind": "Receiver",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    })))
}

/// Applies a static object (Alert, Provider): nothing reconciles it, so it is ready at once.
async fn apply_static(label: &str, obj: Value, global: &Global) -> anyhow::Result<()> {
    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
    let client = global.cluster.client().await?;
    generate(&format!("generating {label}"));
    action(&format!("applying {label}"));
    crate::cluster::apply(&client, vec![obj], &format!("applying {label}")).await?;
    success(&format!("{label} created"));
    success(&format!("{label} {name} is ready"));
    Ok(())
}

/// Runs `create alert-provider`.
pub async fn run_provider(a: ProviderArgs) -> anyhow::Result<()> {
    let obj = provider_object(&a)?;
    if a.export {
        print!("{}", export_yaml(&obj));
        return Ok(());
    }
    apply_static("Provider", obj, &a.global).await
}

/// Runs `create alert`.
pub async fn run_alert(a: AlertArgs) -> anyhow::Result<()> {
    let obj = alert_object(&a)?;
    if a.export {
        print!("{}", export_yaml(&obj));
        return Ok(());
    }
    apply_static("Alert", obj, &a.global).await
}

/// Runs `create receiver`: applies, waits for the webhook path and prints it.
pub async fn run_receiver(a: ReceiverArgs) -> anyhow::Result<()> {
    let obj = receiver_object(&a)?;
    if a.export {
        print!("{}", export_yaml(&obj));
        return Ok(());
    }
    let client = a.global.cluster.client().await?;
    generate("generating Receiver");
    action("applying Receiver");
    crate::cluster::apply(&client, vec![obj], "applying Receiver").await?;
    success("Receiver created");
    waiting("waiting for Receiver reconciliation");
    let ns = &a.global.namespace;
    let live = wait_handled(RECEIVER, &client, ns, &a.name, None, a.global.timeout).await?;
    success(&format!("Receiver {} is ready", a.name));
    success(&format!(
        "generated webhook URL {}",
        RECEIVER.revision_of(&live)
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_sources_as_flux_parses_them() {
        assert_eq!(
            kind_name_namespace("Kustomization/apps.prod"),
            Some(("Kustomization".into(), "apps".into(), Some("prod".into())))
        );
        assert_eq!(
            kind_name_namespace("GitRepository/*"),
            Some(("GitRepository".into(), "*".into(), None))
        );
        assert_eq!(kind_name_namespace("apps"), None);
    }
}
