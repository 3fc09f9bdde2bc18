//! `tidegate build artifact`: pack a local directory (as `flux build artifact`) or a Git
//! reference into a reproducible tar.gz, exactly as the source controller would, and print its
//! revision and digest.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::Context as _;
use tidegate_source::git::{self, Auth, Outcome};
use tidegate_source::storage::{Retention, Storage};
use tidegate_source::tree::{FileTree, NoBlobs};

/// `tidegate build …`.
#[derive(clap::Subcommand, Debug)]
pub enum Build {
    /// Pack a directory or a Git reference into a tar.gz artifact.
    Artifact(ArtifactArgs),
    /// Build a Kustomization from local files, as the controller would apply it.
    #[command(alias = "ks")]
    Kustomization(crate::flux::build::Args),
}

/// `tidegate build artifact` flags.
#[derive(clap::Args, Debug)]
pub struct ArtifactArgs {
    /// Directory to pack.
    #[arg(long, conflicts_with = "git")]
    path: Option<PathBuf>,
    /// Git repository URL to fetch and pack (anonymous access).
    #[arg(long)]
    git: Option<String>,
    #[command(flatten)]
    reference: crate::git_ref::RefArgs,
    /// Ignore patterns (`.sourceignore` syntax), as `spec.ignore`.
    #[arg(long)]
    ignore: Option<String>,
    /// Where to write the artifact.
    #[arg(long, short = 'o')]
    output: PathBuf,
}

pub fn run(build: Build) -> anyhow::Result<()> {
    let Build::Artifact(args) = build else {
        anyhow::bail!("only `build artifact` runs without a cluster connection");
    };
    let output = std::path::absolute(&args.output).context("resolving --output")?;
    let dir = output
        .parent()
        .context("--output has no directory")?
        .to_path_buf();
    let file = output
        .file_name()
        .context("--output has no file name")?
        .to_string_lossy()
        .into_owned();
    let storage = Storage::new(&dir, "localhost", Retention::default())
        .with_context(|| format!("opening {}", dir.display()))?;
    let (revision, written, files) = match (&args.path, &args.git) {
        (Some(path), None) => {
            let tree =
                FileTree::from_dir(path).with_context(|| format!("reading {}", path.display()))?;
            let written = tidegate_source::package::package(
                &tree,
                &NoBlobs,
                args.ignore.as_deref(),
                &storage,
                &file,
            )?;
            (String::new(), written, tree.file_count())
        }
        (None, Some(url)) => {
            let reference = args.reference.reference();
            let work = tempfile::tempdir()?;
            let interrupt = AtomicBool::new(false);
            let auth = Auth::from_secret(url, None)?;
            let opts = git::FetchOptions {
                url,
                reference: &reference,
                auth: &auth,
                last_revision: None,
                interrupt: &interrupt,
                timeout: std::time::Duration::from_secs(600),
            };
            let Outcome::Fetched(fetched) = git::fetch(&opts, work.path())? else {
                anyhow::bail!("nothing fetched");
            };
            let tree = tidegate_source::package::commit_tree(&fetched.repo, fetched.commit)?;
            let written = tidegate_source::package::package(
                &tree,
                &fetched.repo,
                args.ignore.as_deref(),
                &storage,
                &file,
            )?;
            (fetched.revision.clone(), written, tree.file_count())
        }
        _ => anyhow::bail!("give exactly one of --path or --git"),
    };
    if !revision.is_empty() {
        println!("revision: {revision}");
    }
    println!("digest: {}", written.digest);
    println!("size: {}", written.size);
    println!("files: {files}");
    println!("artifact: {}", output.display());
    Ok(())
}
