//! `tidegate version`: the client's version and, when reachable, the cluster's.

use super::Global;

/// Flags of `version`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print only the client version (no cluster needed).
    #[arg(long)]
    client: bool,
    #[command(flatten)]
    global: Global,
}

/// Prints the versions.
pub async fn run(args: Args) -> anyhow::Result<()> {
    println!("tidegate: v{}", env!("CARGO_PKG_VERSION"));
    if args.client {
        return Ok(());
    }
    let client = args.global.cluster.client().await?;
    let info = client
        .apiserver_version()
        .await
        .map_err(|e| anyhow::anyhow!("the Kubernetes API is unreachable: {e}"))?;
    println!("kubernetes: {}", info.git_version);
    Ok(())
}
