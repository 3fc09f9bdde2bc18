//! `tidegate up`: the whole toolkit in one process on one machine — the embedded API server
//! (with its workload simulator), the artifact store and server, and the source and kustomize
//! controllers, which reach the server over HTTPS like any client. Optionally bootstraps a
//! GitRepository and Kustomization named `flux-system`, as `flux bootstrap` would, and shows
//! the first reconcile.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use kube::{Api, Client};
use serde_json::Value;
use tidegate_api::Kustomization;
use tidegate_api::conditions::{self, READY};
use tidegate_controllers::metrics::Metrics;
use tidegate_controllers::{gitrepository, kustomization, leader};
use tidegate_source::storage::{Retention, Storage};

use crate::controllers::{KUSTOMIZE, SOURCE, Set, wait_for_signal};

/// Flags of `tidegate up`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory for the store, credentials, kubeconfig and artifacts (kept across restarts).
    #[arg(long, default_value = "./tidegate-data")]
    data_dir: PathBuf,
    /// Address the API server listens on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:6443")]
    listen: SocketAddr,
    /// Address the artifact server listens on.
    #[arg(long, default_value = "127.0.0.1:0")]
    storage_addr: SocketAddr,
    /// Do not simulate workloads (Deployments, Jobs, … would then never become ready).
    #[arg(long)]
    no_workload_simulator: bool,
    /// How long a simulated rollout takes.
    #[arg(long, default_value = "1s", value_parser = tidegate_core::duration::parse)]
    simulator_delay: Duration,
    /// Bootstrap from this Git repository: a URL, or a path on this machine.
    #[arg(long, conflicts_with = "example")]
    git: Option<String>,
    /// Branch to follow.
    #[arg(long, default_value = "main")]
    branch: String,
    /// Path in the repository to reconcile (default: the root; with --example, its
    /// clusters/local).
    #[arg(long)]
    path: Option<String>,
    /// How often the flux-system objects are reconciled.
    #[arg(long, default_value = "1m")]
    interval: String,
    /// Bootstrap from the bundled example (written as a Git repository in the data directory).
    #[arg(long)]
    example: bool,
    /// Kustomizations reconciled at once.
    #[arg(long, default_value_t = 4)]
    concurrent: u16,
    /// Serve the controllers' Prometheus metrics (`gotk_*`) on this address.
    #[arg(long)]
    metrics_addr: Option<SocketAddr>,
    /// How long to show the first reconcile before handing over.
    #[arg(long, default_value = "5m", value_parser = tidegate_core::duration::parse)]
    wait_timeout: Duration,
}

/// The namespace and name of the bootstrap objects, as `flux bootstrap` names them.
pub const FLUX_SYSTEM: &str = "flux-system";

fn spinner() -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// Prints a finished step above the spinner (or plainly when not on a terminal).
fn done(bar: &ProgressBar, line: &str) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// Runs everything until Ctrl-C or SIGTERM.
pub async fn run(args: Args) -> anyhow::Result<()> {
    // Private (0700): it holds the store, with every Secret in clear, and the credentials.
    tidegate_apiserver::private_dir(&args.data_dir)
        .with_context(|| format!("creating {}", args.data_dir.display()))?;
    let data_dir = args.data_dir.canonicalize()?;
    let bar = spinner();
    bar.set_message("starting the API server");
    let server = tidegate_apiserver::ApiServer::start(tidegate_apiserver::Config {
        data_dir: Some(data_dir.clone()),
        listen: args.listen,
        tls: true,
        workload_simulator: (!args.no_workload_simulator).then_some(args.simulator_delay),
        ..Default::default()
    })
    .await
    .with_context(|| format!("starting the API server in {}", data_dir.display()))?;
    let kubeconfig = server
        .kubeconfig_path
        .clone()
        .unwrap_or_else(|| data_dir.join("kubeconfig"));
    done(&bar, &format!("✔ API server listening on {}", server.url));

    let kc = kube::config::Kubeconfig::from_yaml(&server.kubeconfig)?;
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    let client = Client::try_from(config.clone())?;
    bar.set_message("installing the toolkit CRDs");
    install_crds(&client).await?;
    done(&bar, "✔ CRDs installed");

    let listener = bind_storage(&data_dir, args.storage_addr).await?;
    let storage_addr = listener.local_addr()?;
    let _ = std::fs::write(
        data_dir.join(STORAGE_ADDRESS_FILE),
        storage_addr.to_string(),
    );
    let storage = Arc::new(Storage::new(
        data_dir.join("artifacts"),
        &storage_addr.to_string(),
        Retention {
            ttl: Duration::from_secs(60),
            records: 2,
        },
    )?);
    let app = tidegate_source::server::router(storage.clone());
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "artifact server stopped");
        }
    });
    let metrics = Metrics::new();
    if let Some(addr) = args.metrics_addr {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the metrics endpoint to {addr}"))?;
        let m = metrics.clone();
        tokio::spawn(async move {
            if let Err(e) = m.serve(listener).await {
                tracing::error!(error = %e, "metrics server stopped");
            }
        });
    }
    let set = Set {
        client: client.clone(),
        config,
        storage,
        metrics,
        source: gitrepository::Options {
            allow_file_urls: true,
            ..Default::default()
        },
        kustomize: kustomization::Options {
            concurrent: args.concurrent,
            ..Default::default()
        },
        components: vec![SOURCE.into(), KUSTOMIZE.into()],
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let controllers = tokio::spawn(set.run(async {
        let _ = stop_rx.await;
    }));
    done(&bar, "✔ source-controller and kustomize-controller started");
    // The controllers run in this process; holding their Lease tells `tidegate check` (and a
    // `tidegate controllers --enable-leader-election` pointed here) that they are running.
    let lease = leader::LeaseOptions {
        identity: format!("tidegate-up_{}", std::process::id()),
        ..leader::LeaseOptions::new(FLUX_SYSTEM, leader::LEASE_NAME)
    };
    let keeper = client.clone();
    tokio::spawn(async move {
        loop {
            leader::acquire(&keeper, &lease).await;
            leader::keep(&keeper, &lease).await;
            tracing::warn!("the controllers' lease was lost; taking it again");
        }
    });

    let bootstrap = if args.example {
        let repo = data_dir.join("example.git");
        let files: Vec<(&str, &[u8])> = crate::example::FILES
            .iter()
            .map(|(p, c)| (*p, c.as_bytes()))
            .collect();
        let commit = tidegate_source::git::seed::commit_files(
            &repo,
            &args.branch,
            &files,
            "Tidegate example",
        )?;
        done(
            &bar,
            &format!(
                "✔ example written to {} (commit {})",
                repo.display(),
                &commit[..12.min(commit.len())]
            ),
        );
        Some((
            format!("file://{}", repo.display()),
            args.path
                .clone()
                .unwrap_or_else(|| crate::example::PATH.into()),
        ))
    } else {
        args.git
            .as_deref()
            .map(|g| -> anyhow::Result<(String, String)> {
                Ok((
                    git_url(g)?,
                    args.path.clone().unwrap_or_else(|| "./".into()),
                ))
            })
            .transpose()?
    };
    if let Some((url, path)) = &bootstrap {
        bar.set_message("creating the flux-system GitRepository and Kustomization");
        apply_bootstrap(&client, url, &args.branch, path, &args.interval).await?;
        done(
            &bar,
            &format!(
                "✔ GitRepository and Kustomization {FLUX_SYSTEM}/{FLUX_SYSTEM} created ({url}, branch {}, path {path})",
                args.branch
            ),
        );
        show_first_reconcile(&client, &bar, args.wait_timeout).await;
    }
    bar.finish_and_clear();
    println!("tidegate is up; the API server is at {}", server.url);
    println!("kubeconfig: {}", kubeconfig.display());
    println!(
        "try: kubectl --kubeconfig {} get kustomizations -A",
        kubeconfig.display()
    );
    wait_for_signal().await;
    eprintln!("► shutting down");
    let _ = stop_tx.send(());
    let _ = controllers.await;
    server.shutdown().await;
    eprintln!("✔ stopped");
    Ok(())
}

/// Where the artifact server's address is remembered between runs.
const STORAGE_ADDRESS_FILE: &str = "artifact-address";

/// Binds the artifact server: an explicit address as given; for port 0, the address of the
/// previous run when it is free (artifact URLs in the store then stay valid), else any.
async fn bind_storage(
    data_dir: &Path,
    wanted: SocketAddr,
) -> anyhow::Result<tokio::net::TcpListener> {
    if wanted.port() == 0
        && let Ok(text) = std::fs::read_to_string(data_dir.join(STORAGE_ADDRESS_FILE))
        && let Ok(previous) = text.trim().parse::<SocketAddr>()
        && previous.ip() == wanted.ip()
        && let Ok(l) = tokio::net::TcpListener::bind(previous).await
    {
        return Ok(l);
    }
    tokio::net::TcpListener::bind(wanted)
        .await
        .with_context(|| format!("binding the artifact server to {wanted}"))
}

/// A URL as given, or a local path as a `file://` URL.
fn git_url(given: &str) -> anyhow::Result<String> {
    if given.contains("://") {
        return Ok(given.to_string());
    }
    let path = Path::new(given)
        .canonicalize()
        .with_context(|| format!("--git {given}: no such repository"))?;
    Ok(format!("file://{}", path.display()))
}

/// The toolkit's namespace and CRDs.
async fn install_crds(client: &Client) -> anyhow::Result<()> {
    let mut objects: Vec<Value> = tidegate_core::yaml::parse_stream(&tidegate_api::crds::stream())
        .map_err(|e| anyhow::anyhow!("the built-in CRDs: {e}"))?;
    objects.push(serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": FLUX_SYSTEM}}));
    crate::cluster::apply(client, objects, "installing the CRDs").await?;
    Ok(())
}

async fn apply_bootstrap(
    client: &Client,
    url: &str,
    branch: &str,
    path: &str,
    interval: &str,
) -> anyhow::Result<()> {
    tidegate_core::duration::parse(interval).map_err(|e| anyhow::anyhow!("--interval: {e}"))?;
    let objects = vec![
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": FLUX_SYSTEM}}),
        serde_json::json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
            "metadata": {"name": FLUX_SYSTEM, "namespace": FLUX_SYSTEM},
            "spec": {"interval": interval, "url": url, "ref": {"branch": branch}}}),
        serde_json::json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": FLUX_SYSTEM, "namespace": FLUX_SYSTEM},
            "spec": {"interval": "10m0s", "path": path, "prune": true,
                "sourceRef": {"kind": "GitRepository", "name": FLUX_SYSTEM}}}),
    ];
    crate::cluster::apply(client, objects, "creating the bootstrap objects").await?;
    Ok(())
}

/// Shows every Kustomization's progress until all are ready (or one fails, or time is up).
async fn show_first_reconcile(client: &Client, bar: &ProgressBar, timeout: Duration) {
    let api: Api<Kustomization> = Api::all(client.clone());
    let started = Instant::now();
    let mut reported = std::collections::BTreeSet::new();
    loop {
        let list = match api.list(&Default::default()).await {
            Ok(l) => l.items,
            Err(e) => {
                bar.set_message(format!("listing Kustomizations: {e}"));
                Vec::new()
            }
        };
        let mut waiting = Vec::new();
        for k in &list {
            let id = format!(
                "{}/{}",
                k.metadata.namespace.as_deref().unwrap_or(""),
                k.metadata.name.as_deref().unwrap_or("")
            );
            let ready = k
                .status
                .as_ref()
                .and_then(|s| conditions::get(&s.conditions, READY).cloned());
            match ready {
                Some(c) if c.status == "True" => {
                    if reported.insert(id.clone()) {
                        done(bar, &format!("✔ Kustomization {id}: {}", c.message));
                    }
                }
                Some(c) if c.status == "False" && c.reason != "DependencyNotReady" => {
                    if reported.insert(format!("{id}!{}", c.message)) {
                        done(bar, &format!("✗ Kustomization {id}: {}", c.message));
                    }
                    waiting.push(format!("{id} ({})", c.reason));
                }
                Some(c) => waiting.push(format!("{id}: {}", c.message)),
                None => waiting.push(format!("{id}: waiting for its first reconcile")),
            }
        }
        if waiting.is_empty() && !list.is_empty() {
            return;
        }
        if started.elapsed() > timeout {
            done(
                bar,
                &format!(
                    "◎ still reconciling after {}: {}",
                    tidegate_core::duration::format(timeout),
                    waiting.join(", ")
                ),
            );
            return;
        }
        bar.set_message(format!("◎ {}", waiting.join("; ")));
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
