//! `tidegate suspend|resume source git NAME | kustomization NAME`: set `spec.suspend`; resume
//! also requests a reconcile and waits for it (Flux's messages).

use kube::api::{Patch, PatchParams};

use super::reconcile::wait_handled;
use super::{Global, action, success, waiting};

/// What to suspend or resume.
pub type What = super::kind::Target<Args, Args>;

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
    let (kind, noun, a) = what.pick();
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
