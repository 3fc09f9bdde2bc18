//! `tidegate kustomize DIR`: builds a kustomization and prints the YAML stream, as
//! `kubectl kustomize DIR` does.

use std::path::{Path, PathBuf};

use tidegate_kustomize::{Builder, LoadRestrictions, Options};

/// Arguments of `tidegate kustomize`.
#[derive(clap::Args)]
pub struct Args {
    /// The directory to build.
    dir: PathBuf,
    /// Files may only be read below this directory (default: the nearest enclosing Git
    /// work tree, else DIR itself).
    #[arg(long)]
    root: Option<PathBuf>,
    /// `LoadRestrictionsRootOnly` (kubectl's default: files must sit below their kustomization)
    /// or `LoadRestrictionsNone` (Flux's: anywhere inside the root).
    #[arg(long, default_value = "LoadRestrictionsRootOnly")]
    load_restrictor: String,
    /// Generate a kustomization for a directory that has none, as Flux does.
    #[arg(long)]
    generate: bool,
}

fn default_root(dir: &Path) -> PathBuf {
    let abs = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut cur = Some(abs.as_path());
    while let Some(d) = cur {
        if d.join(".git").exists() {
            return d.to_path_buf();
        }
        cur = d.parent();
    }
    abs
}

/// Runs the build and prints it.
pub fn run(args: Args) -> anyhow::Result<()> {
    let load_restrictions = match args.load_restrictor.as_str() {
        "LoadRestrictionsRootOnly" => LoadRestrictions::RootOnly,
        "LoadRestrictionsNone" => LoadRestrictions::None,
        other => anyhow::bail!(
            "--load-restrictor {other:?}: expected LoadRestrictionsRootOnly or LoadRestrictionsNone"
        ),
    };
    let root = args.root.clone().unwrap_or_else(|| default_root(&args.dir));
    let options = Options {
        load_restrictions,
        generate_missing: args.generate,
        overlay: None,
        filter: None,
    };
    let built = Builder::new(&root, options).and_then(|b| b.build(&args.dir));
    match built {
        Ok(res) => {
            print!("{}", res.to_yaml());
            Ok(())
        }
        Err(e) => anyhow::bail!("{e}"),
    }
}
