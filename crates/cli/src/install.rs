//! `tidegate install`: for now `--export` prints the CRD manifests of the implemented kinds,
//! ready for `kubectl apply --server-side -f -`.

/// `tidegate install` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print the manifests instead of applying them.
    #[arg(long)]
    export: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if !args.export {
        anyhow::bail!(
            "only `tidegate install --export` is available yet; pipe it to `kubectl apply --server-side -f -`"
        );
    }
    print!("{}", tidegate_api::crds::stream());
    Ok(())
}
