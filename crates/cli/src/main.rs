//! The `tidegate` binary: a thin command-line layer over the library crates.

mod apiserver;
mod apply;
mod build;
mod cluster;
mod controllers;
mod example;
mod flux;
mod git_ref;
mod helm;
mod install;
mod kubeconfig;
mod kustomize;
mod logging;
mod process;
mod up;
mod workload_clusters;

use clap::{Parser, Subcommand};

/// Tidegate: the Flux GitOps toolkit, rebuilt in Rust.
#[derive(Parser)]
#[command(name = "tidegate", version, about)]
struct Cli {
    /// Log level filter (for example `info`, `debug`, `tidegate_apiserver=debug`); default
    /// `info`, for `up` `error` until it hands over and `warn` after (its progress is shown on
    /// the terminal instead) and `off`
    /// for the flux-style verbs.
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
    /// Workload clusters of a running `up` (embedded API servers registered as Cluster API
    /// Clusters): `create`, `delete`, `list`.
    #[command(subcommand)]
    Cluster(workload_clusters::Cmd),
    /// Run the embedded Kubernetes-compatible API server alone.
    Apiserver(apiserver::Args),
    /// Write a kubeconfig for a named user (and groups) of a data directory's API server: a
    /// client certificate signed by its CA.
    Kubeconfig(kubeconfig::Args),
    /// Build a directory and apply it in stages with server-side apply, printing the change set.
    Apply(apply::Args),
    /// Build a kustomization and print the YAML stream (like `kubectl kustomize`).
    Kustomize(kustomize::Args),
    /// Helm's verbs: `template` renders a chart locally.
    #[command(subcommand)]
    Helm(helm::Helm),
    /// Build artifacts locally.
    #[command(subcommand)]
    Build(build::Build),
    /// Run the toolkit controllers (source-controller, kustomize-controller) against a cluster.
    Controllers(controllers::Args),
    /// Install Tidegate into a cluster (`--export` prints the manifests).
    Install(install::Args),
    /// List sources and Kustomizations with their status (Flux's table).
    #[command(subcommand)]
    Get(flux::get::What),
    /// Ask for a reconcile now and wait for it.
    #[command(subcommand)]
    Reconcile(flux::reconcile::Reconcile),
    /// Suspend the reconciliation of an object.
    #[command(subcommand)]
    Suspend(flux::suspend::What),
    /// Resume a suspended object and wait for its reconcile.
    #[command(subcommand)]
    Resume(flux::suspend::What),
    /// Print the client and the cluster versions.
    Version(flux::version::Args),
    /// Create or update a source or Kustomization (`--export` prints it).
    #[command(subcommand)]
    Create(flux::create::What),
    /// Print existing objects as clean YAML.
    #[command(subcommand)]
    Export(flux::export::What),
    /// Delete a source or Kustomization.
    #[command(subcommand)]
    Delete(flux::delete::What),
    /// Show what a Kustomization manages, nested Kustomizations expanded.
    #[command(subcommand)]
    Tree(flux::tree::What),
    /// Count reconcilers per kind: running, failing, suspended, storage.
    Stats(flux::stats::Args),
    /// Show a HelmRelease's status or the values it is released with.
    #[command(subcommand)]
    Debug(flux::debug::What),
    /// Show the Events of toolkit objects.
    Events(flux::events::Args),
    /// Trace an object to the Kustomization and source that manage it.
    Trace(flux::trace::Args),
    /// Check the cluster's prerequisites, the controllers and the CRDs.
    Check(flux::check::Args),
    /// Remove the controllers, finalizers, CRDs and namespace; workloads stay.
    Uninstall(flux::uninstall::Args),
    /// Print a shell completion script (`source <(tidegate completion bash)`).
    Completion {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Show what applying local files would change (exit 1 when something would).
    #[command(subcommand)]
    Diff(flux::diff::What),
    /// Push a directory or file to an OCI registry as a Flux artifact.
    #[command(subcommand)]
    Push(flux::artifact::Push),
    /// Pull a Flux artifact from an OCI registry.
    #[command(subcommand)]
    Pull(flux::artifact::Pull),
    /// Add tags to an artifact in an OCI registry.
    #[command(subcommand)]
    Tag(flux::artifact::Tag),
    /// List the artifacts of an OCI repository.
    #[command(subcommand)]
    List(flux::artifact::List),
}

/// glibc gives every thread that allocates while another holds an arena an arena of its own (up
/// to eight per core), and memory freed into them stays there. Under the API server's write
/// load (writes run on the blocking pool) that tripled its peak RSS: 303 MiB at 1,000
/// Kustomizations, 144 MiB with two arenas, at the same speed. Set before any thread starts.
/// jemalloc serves the binary's allocations: under load glibc's malloc spent a third of the
/// CPU in its own bookkeeping (consolidating and unlinking chunks) and kept freed memory in
/// fragments.
/// One arena, and freed pages handed back after half a second by jemalloc's background
/// thread: at 1,000 Kustomizations this kept `tidegate up`'s peak near 190 MiB where jemalloc's
/// defaults (an arena per CPU, ten seconds of dirty pages) reached 290 MiB, at the same speed.
/// `_RJEM_MALLOC_CONF` still overrides it.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[cfg(not(feature = "system-allocator"))]
const MALLOC_CONF: &[u8] =
    b"narenas:1,dirty_decay_ms:500,muzzy_decay_ms:0,background_thread:true\0";

/// `tidegate helm template` renders once and exits: its heap is backed by transparent huge
/// pages (where the kernel allows them on request), which spares the page faults of its first
/// touches (a fifth of kube-prometheus-stack's render) for a few MiB more of peak memory, and
/// it starts no background thread. The long-running commands keep [`MALLOC_CONF`].
#[cfg(not(feature = "system-allocator"))]
const ONE_SHOT_MALLOC_CONF: &[u8] =
    b"narenas:1,background_thread:false,thp:always,metadata_thp:always\0";

/// jemalloc reads its configuration from this pointer when it first allocates; see
/// [`choose_malloc_conf`].
#[cfg(not(feature = "system-allocator"))]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static mut JEMALLOC_CONF: *const libc::c_char = MALLOC_CONF.as_ptr().cast();

/// Picks the allocator's configuration from the command line before anything allocates: the
/// C runtime runs `.init_array` functions, with `argc` and `argv`, before `main`.
#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    not(feature = "system-allocator")
))]
#[used]
#[unsafe(link_section = ".init_array")]
static CHOOSE_MALLOC_CONF: extern "C" fn(
    libc::c_int,
    *const *const libc::c_char,
    *const *const libc::c_char,
) = choose_malloc_conf;

#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    not(feature = "system-allocator")
))]
extern "C" fn choose_malloc_conf(
    argc: libc::c_int,
    argv: *const *const libc::c_char,
    _envp: *const *const libc::c_char,
) {
    if argc < 3 || argv.is_null() {
        return;
    }
    // SAFETY: the C runtime passes the process's `argc` and `argv` (`argc` valid, NUL-terminated
    // strings); this runs before `main`, on the only thread, before jemalloc reads the pointer
    // (if something allocated earlier, jemalloc has read it already and the change is unused).
    unsafe {
        let arg = |i: usize| std::ffi::CStr::from_ptr(*argv.add(i)).to_bytes();
        if arg(1) == b"helm" && arg(2) == b"template" {
            JEMALLOC_CONF = ONE_SHOT_MALLOC_CONF.as_ptr().cast();
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn limit_malloc_arenas() {
    // SAFETY: mallopt only sets an allocator parameter; called first thing in main, before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn limit_malloc_arenas() {}

/// The commands that serve (and so keep SIGPIPE ignored): the first argument that is not a
/// global option names the command.
fn serves() -> bool {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--log-level" => {
                args.next();
            }
            s if s.starts_with('-') => {}
            s => return matches!(s, "up" | "apiserver" | "controllers"),
        }
    }
    false
}

/// A write to a closed standard output from a server's `println!` ends the process quietly
/// (SIGPIPE's default action, as for every other command) instead of printing a panic.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

fn main() -> std::process::ExitCode {
    limit_malloc_arenas();
    process::raise_open_file_limit();
    if serves() {
        quiet_on_closed_stdout();
    } else {
        process::end_quietly_on_closed_output();
    }
    // `tidegate helm …` speaks as helm does: its output, and `Error: …` on failure.
    if std::env::args().nth(1).as_deref() == Some("helm") {
        let cli = Cli::parse();
        if let Command::Helm(cmd) = cli.command {
            return match helm::run(cmd) {
                Ok(()) => std::process::ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("Error: {e}");
                    std::process::ExitCode::FAILURE
                }
            };
        }
    }
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) if process::is_broken_pipe(&e) => std::process::ExitCode::from(141),
        Err(e) => {
            flux::failure(&flux::one_line(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // `up` shows its first reconcile in its own lines; the controllers' warnings (which would
    // say the same failures again) join in once it hands over.
    let quiet_until_handover = cli.log_level.is_none() && matches!(cli.command, Command::Up(_));
    let level = cli.log_level.clone().unwrap_or_else(|| {
        if quiet_until_handover {
            "error".into()
        } else if matches!(
            cli.command,
            Command::Get(_)
                | Command::Reconcile(_)
                | Command::Suspend(_)
                | Command::Resume(_)
                | Command::Version(_)
                | Command::Create(_)
                | Command::Export(_)
                | Command::Delete(_)
                | Command::Tree(_)
                | Command::Stats(_)
                | Command::Debug(_)
                | Command::Events(_)
                | Command::Trace(_)
                | Command::Diff(_)
                | Command::Push(_)
                | Command::Pull(_)
                | Command::Tag(_)
                | Command::List(_)
                | Command::Check(_)
                | Command::Install(_)
                | Command::Uninstall(_)
                | Command::Cluster(_)
        ) {
            // The flux-style verbs speak in their own lines, as the flux CLI does.
            "off".into()
        } else {
            "info".into()
        }
    });
    logging::init(&level, cli.log_json, quiet_until_handover.then_some("warn"))?;
    let command = match cli.command {
        Command::Kustomize(args) => return kustomize::run(args),
        Command::Helm(cmd) => return helm::run(cmd).map_err(anyhow::Error::msg),
        Command::Install(args) => match install::export(&args) {
            Ok(true) => return Ok(()),
            Ok(false) => Command::Install(args),
            Err(e) => return Err(e),
        },
        Command::Build(b @ build::Build::Artifact(_)) => return build::run(b),
        Command::Completion { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "tidegate",
                &mut std::io::stdout(),
            );
            return Ok(());
        }
        other => other,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(async {
        match command {
            Command::Up(args) => up::run(args).await,
            Command::Cluster(c) => workload_clusters::run(c).await,
            Command::Get(w) => flux::get::run(w).await,
            Command::Reconcile(w) => flux::reconcile::run(w).await,
            Command::Suspend(w) => flux::suspend::run(w, false).await,
            Command::Resume(w) => flux::suspend::run(w, true).await,
            Command::Version(a) => flux::version::run(a).await,
            Command::Create(w) => flux::create::run(w).await,
            Command::Export(w) => flux::export::run(w).await,
            Command::Delete(w) => flux::delete::run(w).await,
            Command::Tree(w) => flux::tree::run(w).await,
            Command::Stats(a) => flux::stats::run(a).await,
            Command::Debug(w) => flux::debug::run(w).await,
            Command::Events(a) => flux::events::run(a).await,
            Command::Trace(a) => flux::trace::run(a).await,
            Command::Check(a) => flux::check::run(a).await,
            Command::Uninstall(a) => flux::uninstall::run(a).await,
            Command::Diff(w) => flux::diff::run(w).await,
            Command::Push(p) => flux::artifact::run_push(p).await,
            Command::Pull(p) => flux::artifact::run_pull(p).await,
            Command::Tag(t) => flux::artifact::run_tag(t).await,
            Command::List(l) => flux::artifact::run_list(l).await,
            Command::Apiserver(args) => apiserver::run(args).await,
            Command::Kubeconfig(args) => kubeconfig::run(args),
            Command::Apply(args) => apply::run(args).await,
            Command::Controllers(args) => controllers::run(args).await,
            Command::Build(build::Build::Kustomization(a)) => flux::build::run(a).await,
            Command::Install(a) => install::run(a).await,
            Command::Kustomize(_)
            | Command::Helm(_)
            | Command::Build(_)
            | Command::Completion { .. } => Ok(()),
        }
    });
    // Work still running on the blocking pool (a request whose client went away) must not
    // keep a stopped process alive: it gets a moment, then the process ends without it.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    result
}
