//! `tidegate suspend|resume source git NAME | kustomization NAME`: set `spec.suspend`; resume
//! also requests a reconcile and waits for it (Flux's messages).

use kube::api::{Patch, PatchParams};

use super::reconcile::wait_handled;
use super::{Global, action, success, waiting};

/// What to suspend or resume.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    #[command(flatten)]
    Toolkit(super::kind::Target<Args, Args>),
    /// A notification Alert.
    Alert(Args),
    /// A notification Provider.
    #[command(name = "alert-provider")]
    AlertProvider(Args),
    /// A notification Receiver.
    Receiver(Args),
}

/// Flags of `suspend` and `resume`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The object's name.
    name: String,
    #[command(flatten)]
    global: Global,
}

/// Runs `suspend` (`resume == false`) or `resume`.
pub async fn run(what: What, resume: bool) -> anyhow::Result<()> {
    let (kind, noun, a) = match what {
        What::Toolkit(t) => t.pick(),
        What::Alert(a) => (super::kind::ALERT, "alert", a),
        What::AlertProvider(a) => (super::kind::PROVIDER, "alert-provider", a),
        What::Receiver(a) => (super::kind::RECEIVER, "receiver", a),
    };
    // Alerts and Providers have no status: nothing reconciles them to wait for.
    let is_static = kind.kind == super::kind::ALERT.kind || kind.kind == super::kind::PROVIDER.kind;
    let client = a.global.cluster.client().await?;
    let ns = &a.global.namespace;
    kind.get(&client, ns, &a.name).await?;
    let verb = if resume { "resuming" } else { "suspending" };
    action(&format!("{verb} {noun} {} in {ns} namespace", a.name));
    let token = super::now_rfc3339();
    let patch = if resume {
        serde_json::json!({"spec": {"suspend": false}, "metadata": {"annotations": {
            tidegate_api::meta::RECONCILE_REQUESTED_AT: token}}})
    } else {
        serde_json::json!({"spec": {"suspend": true}})
    };
    kind.api(&client, ns)
        .patch(&a.name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| super::describe(kind.kind, ns, &a.name, &e))?;
    if !resume {
        success(&format!("{noun} suspended"));
        return Ok(());
    }
    success(&format!("{noun} resumed"));
    if is_static {
        return Ok(());
    }
    waiting(&format!("waiting for {} reconciliation", kind.kind));
    let obj = wait_handled(kind, &client, ns, &a.name, Some(&token), a.global.timeout).await?;
    success(&format!("{} reconciliation completed", kind.kind));
    success(&format!(
        "{} revision {}",
        kind.verb,
        kind.revision_of(&obj)
    ));
    Ok(())
}
