//! The `tidegate` binary: a thin command-line layer over the library crates.

mod apiserver;
mod apply;
mod build;
mod cluster;
mod controllers;
mod example;
mod install;
mod kustomize;
mod up;

use clap::{Parser, Subcommand};

/// Tidegate: the Flux GitOps toolkit, rebuilt in Rust.
#[derive(Parser)]
#[command(name = "tidegate", version, about)]
struct Cli {
    /// Log level filter (for example `info`, `debug`, `tidegate_apiserver=debug`); default
    /// `info`, or `warn` for `up`, whose progress is shown on the terminal instead.
    #[arg(long, global = true, env = "TIDEGATE_LOG")]
    log_level: Option<String>,
    /// Log as JSON lines.
    #[arg(long, global = true)]
    log_json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run everything on this machine: the embedded API server, the artifact server and the
    /// controllers; optionally bootstrap from a Git repository (`--git`) or the example.
    Up(up::Args),
    /// Run the embedded Kubernetes-compatible API server alone.
    Apiserver(apiserver::Args),
    /// Build a directory and apply it in stages with server-side apply, printing the change set.
    Apply(apply::Args),
    /// Build a kustomization and print the YAML stream (like `kubectl kustomize`).
    Kustomize(kustomize::Args),
    /// Build artifacts locally.
    #[command(subcommand)]
    Build(build::Build),
    /// Run the toolkit controllers (source-controller, kustomize-controller) against a cluster.
    Controllers(controllers::Args),
    /// Install Tidegate into a cluster (`--export` prints the manifests).
    Install(install::Args),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let level = cli.log_level.clone().unwrap_or_else(|| {
        if matches!(cli.command, Command::Up(_)) {
            "warn".into()
        } else {
            "info".into()
        }
    });
    let filter = tracing_subscriber::EnvFilter::try_new(&level)
        .map_err(|e| anyhow::anyhow!("invalid --log-level {level:?}: {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if cli.log_json {
        builder.json().init();
    } else {
        builder.init();
    }
    let command = match cli.command {
        Command::Kustomize(args) => return kustomize::run(args),
        Command::Install(args) => return install::run(args),
        Command::Build(b) => return build::run(b),
        other => other,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match command {
            Command::Up(args) => up::run(args).await,
            Command::Apiserver(args) => apiserver::run(args).await,
            Command::Apply(args) => apply::run(args).await,
            Command::Controllers(args) => controllers::run(args).await,
            Command::Kustomize(_) | Command::Install(_) | Command::Build(_) => Ok(()),
        }
    })
}
