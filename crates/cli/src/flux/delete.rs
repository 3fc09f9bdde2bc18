//! `tidegate delete source git NAME` and `tidegate delete kustomization NAME`: delete after a
//! confirmation (`--silent` skips it), as `flux delete` does.

use kube::api::DeleteParams;

use super::kind::Kind;
use super::{Global, action, success};

/// What to delete (a Kustomization's objects are pruned when it has `prune: true`).
pub type What = super::kind::Target<Args, Args>;

/// Flags of `delete`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The object's name.
    name: String,
    /// Delete without asking.
    #[arg(short, long)]
    silent: bool,
    #[command(flatten)]
    global: Global,
}

async fn delete(kind: Kind, noun: &str, a: &Args) -> anyhow::Result<()> {
    let client = a.global.cluster.client().await?;
    let ns = &a.global.namespace;
    kind.get(&client, ns, &a.name).await?;
    super::confirm(
        &format!("Are you sure you want to delete this {noun}?"),
        a.silent,
        "delete",
    )?;
    action(&format!("deleting {noun} {} in {ns} namespace", a.name));
    kind.api(&client, ns)
        .delete(&a.name, &DeleteParams::default())
        .await
        .map_err(|e| super::describe(kind.kind, ns, &a.name, &e))?;
    success(&format!("{noun} deleted"));
    Ok(())
}

/// Runs `delete`.
pub async fn run(what: What) -> anyhow::Result<()> {
    let (kind, noun, a) = what.pick();
    delete(kind, noun, &a).await
}
