//! `tidegate controllers`: the toolkit controllers against any cluster, with Flux's flags.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use tidegate_controllers::gitrepository;
use tidegate_controllers::metrics::Metrics;
use tidegate_source::storage::{Retention, Storage};

use crate::cluster::ClusterArgs;

/// `tidegate controllers` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Controllers to run.
    #[arg(long, value_delimiter = ',', default_value = "source-controller")]
    components: Vec<String>,
    /// Where artifacts are stored.
    #[arg(long, env = "STORAGE_PATH", default_value = "/data")]
    storage_path: PathBuf,
    /// Address the artifact server listens on.
    #[arg(long, env = "STORAGE_ADDRESS", default_value = ":9090")]
    storage_addr: String,
    /// Address advertised in artifact URLs (default: derived from --storage-addr).
    #[arg(long, env = "STORAGE_ADV_ADDR")]
    storage_adv_addr: Option<String>,
    /// Age after which superseded artifacts are removed.
    #[arg(long, default_value = "1m")]
    artifact_retention_ttl: String,
    /// Artifacts kept per object, the current one included.
    #[arg(long, default_value_t = 2)]
    artifact_retention_records: usize,
    /// Reconciles running at once per controller.
    #[arg(long, default_value_t = 2)]
    concurrent: u16,
    /// Interval jitter in percent.
    #[arg(long, default_value_t = 5)]
    interval_jitter_percentage: u8,
    /// Retry delay while a dependency (an included repository) is not ready.
    #[arg(long, default_value = "30s")]
    requeue_dependency: String,
    /// Address of the Prometheus metrics endpoint.
    #[arg(long, env = "METRICS_ADDR", default_value = ":8080")]
    metrics_addr: String,
    /// Address of the `/healthz` and `/readyz` probes.
    #[arg(long, env = "HEALTH_ADDR", default_value = ":9440")]
    health_addr: String,
    /// Accept GitRepositories with `file://` URLs (repositories on this machine's filesystem).
    #[arg(long)]
    allow_file_urls: bool,
    /// Watch every namespace (false: only $RUNTIME_NAMESPACE).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    watch_all_namespaces: bool,
}

/// `:9090` → `0.0.0.0:9090`, as Go's listeners read it.
fn listen_addr(text: &str) -> anyhow::Result<SocketAddr> {
    let full = if text.starts_with(':') {
        format!("0.0.0.0{text}")
    } else {
        text.to_string()
    };
    full.parse()
        .with_context(|| format!("invalid address {text:?}"))
}

/// The advertised host: `--storage-adv-addr`, else the listen address with an empty or
/// unspecified host replaced (`localhost`, or the host name for `0.0.0.0`).
fn advertised(args: &Args, bound: SocketAddr) -> String {
    if let Some(a) = &args.storage_adv_addr {
        return a.clone();
    }
    let host = if args.storage_addr.starts_with(':') {
        "localhost".to_string()
    } else if bound.ip().is_unspecified() {
        std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".to_string())
    } else {
        bound.ip().to_string()
    };
    format!("{host}:{}", bound.port())
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    for c in &args.components {
        if c != "source-controller" {
            anyhow::bail!("unknown component {c:?} (available: source-controller)");
        }
    }
    let client = args.cluster.client().await?;
    let ttl = tidegate_core::duration::parse(&args.artifact_retention_ttl)
        .map_err(|e| anyhow::anyhow!("--artifact-retention-ttl: {e}"))?;
    let requeue = tidegate_core::duration::parse(&args.requeue_dependency)
        .map_err(|e| anyhow::anyhow!("--requeue-dependency: {e}"))?;
    let listener = tokio::net::TcpListener::bind(listen_addr(&args.storage_addr)?)
        .await
        .with_context(|| format!("binding the artifact server to {}", args.storage_addr))?;
    let bound = listener.local_addr()?;
    let storage = Arc::new(
        Storage::new(
            &args.storage_path,
            &advertised(&args, bound),
            Retention {
                ttl,
                records: args.artifact_retention_records.max(1),
            },
        )
        .with_context(|| format!("opening storage {}", args.storage_path.display()))?,
    );
    let metrics = Metrics::new();
    let metrics_listener = tokio::net::TcpListener::bind(listen_addr(&args.metrics_addr)?)
        .await
        .with_context(|| format!("binding the metrics endpoint to {}", args.metrics_addr))?;
    tokio::spawn({
        let m = metrics.clone();
        async move {
            if let Err(e) = m.serve(metrics_listener).await {
                tracing::error!(error = %e, "metrics server stopped");
            }
        }
    });
    // Liveness and readiness probes, as Flux's controllers serve them.
    let health_listener = tokio::net::TcpListener::bind(listen_addr(&args.health_addr)?)
        .await
        .with_context(|| format!("binding the health endpoint to {}", args.health_addr))?;
    let health = axum::Router::new()
        .route("/healthz", axum::routing::get(|| async { "ok" }))
        .route("/readyz", axum::routing::get(|| async { "ok" }));
    tokio::spawn(async move {
        if let Err(e) = axum::serve(health_listener, health).await {
            tracing::error!(error = %e, "health server stopped");
        }
    });
    let app = tidegate_source::server::router(storage.clone());
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "artifact server stopped");
        }
    });
    tracing::info!(storage = %args.storage_path.display(), addr = %bound, "artifact server listening");
    let namespace = if args.watch_all_namespaces {
        None
    } else {
        std::env::var("RUNTIME_NAMESPACE").ok()
    };
    let options = gitrepository::Options {
        concurrent: args.concurrent,
        jitter_percent: args.interval_jitter_percentage,
        requeue_dependency: requeue,
        namespace,
        allow_file_urls: args.allow_file_urls,
    };
    gitrepository::run(client, storage, metrics, options, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    Ok(())
}
