//! `tidegate controllers`: the toolkit controllers against any cluster, with Flux's flags.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use tidegate_controllers::metrics::Metrics;
use tidegate_controllers::{
    artifactgenerator, bucket, clusterresourceset, gitrepository, helmchart, helmrelease,
    helmrepository, imageautomation, imagereflector, kustomization, leader, notification,
    ocirepository, receiver,
};
use tidegate_source::storage::{Retention, Storage};

use crate::cluster::ClusterArgs;

/// `tidegate controllers` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Controllers to run (also `clusterresourceset-controller`, off by default: a cluster
    /// running Cluster API has its own; `notification-controller`: Receivers, Alerts and
    /// Providers; `image-reflector-controller`: ImageRepositories and ImagePolicies; and
    /// `image-automation-controller`: ImageUpdateAutomations).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "source-controller,kustomize-controller,helm-controller,source-watcher"
    )]
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
    /// Reconciles running at once per controller (source-controller; Flux's default 2).
    #[arg(long, default_value_t = 2)]
    concurrent: u16,
    /// Kustomizations reconciled at once (Flux's kustomize-controller `--concurrent`, 4).
    #[arg(long, default_value_t = 4)]
    kustomize_concurrent: u16,
    /// HelmReleases reconciled at once (Flux's helm-controller `--concurrent`, 4).
    #[arg(long, default_value_t = 4)]
    helm_concurrent: u16,
    /// Service account impersonated by Kustomizations and HelmReleases that name none.
    #[arg(long)]
    default_service_account: Option<String>,
    /// Refuse references to sources and dependencies in other namespaces.
    #[arg(long, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true", default_value_t = false)]
    no_cross_namespace_refs: bool,
    /// Refuse remote kustomize bases (accepted for Flux compatibility: Tidegate never fetches
    /// remote bases, so they are refused either way).
    #[arg(long, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true", default_value_t = false)]
    no_remote_bases: bool,
    /// A Secret in the controller's namespace ($RUNTIME_NAMESPACE or flux-system) whose
    /// `.agekey` entries decrypt Kustomizations that set `spec.decryption` without a
    /// `secretRef`.
    #[arg(long)]
    sops_age_secret: Option<String>,
    /// Service account for cloud KMS decryption through workload identity (accepted for Flux
    /// compatibility; Tidegate decrypts with age and OpenPGP keys only, so it has no effect).
    #[arg(long)]
    default_decryption_service_account: Option<String>,
    /// Run only while holding a Lease, so that several replicas can stand by.
    #[arg(long)]
    enable_leader_election: bool,
    /// Namespace of the leader-election Lease (default: $RUNTIME_NAMESPACE or flux-system).
    #[arg(long)]
    leader_election_namespace: Option<String>,
    /// Interval jitter in percent.
    #[arg(long, default_value_t = 5)]
    interval_jitter_percentage: u8,
    /// Chart repository indexes kept between HelmChart reconciles (0 keeps none); also
    /// bounded to 64 MiB of (reduced) indexes.
    #[arg(long, default_value_t = 10)]
    helm_cache_max_size: usize,
    /// How long a kept index lives without being used.
    #[arg(long, default_value = "15m")]
    helm_cache_ttl: String,
    /// How often expired indexes are dropped (accepted for Flux compatibility; expired
    /// indexes are dropped whenever the cache is used).
    #[arg(long, default_value = "1m")]
    helm_cache_purge_interval: String,
    /// Retry delay while a dependency (an included repository) is not ready.
    #[arg(long, default_value = "30s")]
    requeue_dependency: String,
    /// Address of the Prometheus metrics endpoint.
    #[arg(long, env = "METRICS_ADDR", default_value = ":8080")]
    metrics_addr: String,
    /// Address of the webhook receiver server (notification-controller).
    #[arg(long, default_value = ":9292")]
    receiver_addr: String,
    /// URL the controllers POST their events to, in Flux's event format (Flux's
    /// `--events-addr`, e.g. `http://notification-controller.flux-system.svc.cluster.local./`).
    /// Default: this process's event server when the notification-controller runs here.
    #[arg(long, env = "EVENTS_ADDR")]
    events_addr: Option<String>,
    /// Address the notification-controller's event server listens on (Flux's
    /// notification-controller `--events-addr`). When it is also the artifact server's
    /// address, one listener serves both: POSTs are events, GETs artifacts.
    #[arg(long, default_value = ":9090")]
    event_server_addr: String,
    /// Window in which identical events are sent once (notification-controller).
    #[arg(long, default_value = "5m")]
    rate_limit_interval: String,
    /// Address of the `/healthz` and `/readyz` probes.
    #[arg(long, env = "HEALTH_ADDR", default_value = ":9440")]
    health_addr: String,
    /// Allow the `user.exec` section (and `auth-provider`) in kubeconfigs read from Secrets
    /// for remote apply (Kustomizations, HelmReleases, Cluster API Clusters): they run
    /// commands on this host.
    #[arg(long)]
    insecure_kubeconfig_exec: bool,
    /// Allow kubeconfigs read from Secrets to disable TLS verification
    /// (`insecure-skip-tls-verify`).
    #[arg(long)]
    insecure_kubeconfig_tls: bool,
    /// Accept GitRepositories with `file://` URLs (repositories on this machine's filesystem).
    #[arg(long)]
    allow_file_urls: bool,
    /// Reconcile only the objects matching this label selector (Flux's sharding:
    /// `sharding.fluxcd.io/key in (shard1)` for a shard, `!sharding.fluxcd.io/key` for the
    /// main instance). Each selector gets its own leader-election Lease.
    #[arg(long)]
    watch_label_selector: Option<String>,
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
    if args.no_remote_bases {
        tracing::debug!("--no-remote-bases: remote bases are never fetched");
    }
    let flux: Vec<String> = args
        .components
        .iter()
        .filter(|c| *c != CRS)
        .cloned()
        .collect();
    crate::install::check_components(&flux).map_err(|e| anyhow::anyhow!("{e} (or {CRS})"))?;
    let selector = args
        .watch_label_selector
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    if let Some(s) = selector {
        tidegate_core::labels::LabelSelector::parse(s)
            .map_err(|e| anyhow::anyhow!("--watch-label-selector {s:?}: {e}"))?;
    }
    let config = args.cluster.config().await?;
    let client = kube::Client::try_from(config.clone())?;
    let ttl = tidegate_core::duration::parse(&args.artifact_retention_ttl)
        .map_err(|e| anyhow::anyhow!("--artifact-retention-ttl: {e}"))?;
    let helm_cache_ttl = tidegate_core::duration::parse(&args.helm_cache_ttl)
        .map_err(|e| anyhow::anyhow!("--helm-cache-ttl: {e}"))?;
    tidegate_core::duration::parse(&args.helm_cache_purge_interval)
        .map_err(|e| anyhow::anyhow!("--helm-cache-purge-interval: {e}"))?;
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
    let notification_on = args.components.iter().any(|c| c == NOTIFICATION);
    let event_options = notification::Options {
        namespace: if args.watch_all_namespaces {
            None
        } else {
            std::env::var("RUNTIME_NAMESPACE").ok()
        },
        no_cross_namespace_refs: args.no_cross_namespace_refs,
        rate_limit_interval: tidegate_core::duration::parse(&args.rate_limit_interval)
            .map_err(|e| anyhow::anyhow!("--rate-limit-interval: {e}"))?,
    };
    let shared_port = notification_on
        && listen_addr(&args.event_server_addr)? == listen_addr(&args.storage_addr)?;
    let mut app = tidegate_source::server::router(storage.clone());
    let mut events_listener = None;
    let mut local_events = None;
    if shared_port {
        let (events, _tasks) = notification::event_router(client.clone(), event_options.clone());
        app = by_method(app, events);
        local_events = Some(bound.port());
    } else if notification_on {
        let addr = listen_addr(&args.event_server_addr)?;
        let l = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the event server to {addr}"))?;
        local_events = Some(l.local_addr()?.port());
        events_listener = Some(l);
    }
    let events_url = args
        .events_addr
        .clone()
        .filter(|a| !a.is_empty())
        .or_else(|| local_events.map(|port| format!("http://127.0.0.1:{port}/")));
    let events = match events_url {
        Some(url) => Some(
            tidegate_controllers::notification::webhook::EventWebhook::start(&url)
                .map_err(|e| anyhow::anyhow!(e))?,
        ),
        None => None,
    };
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
    let namespace_helm = namespace.clone();
    let namespace_watcher = namespace.clone();
    let namespace_image = namespace.clone();
    let image_events = events.clone();
    let automation_events = events.clone();
    let namespace_automation = namespace.clone();
    if args.enable_leader_election {
        let ns = args
            .leader_election_namespace
            .clone()
            .or_else(|| std::env::var("RUNTIME_NAMESPACE").ok())
            .unwrap_or_else(|| "flux-system".into());
        let lease = leader::LeaseOptions::new(&ns, &lease_name(selector));
        tokio::select! {
            _ = leader::acquire(&client, &lease) => {}
            _ = wait_for_signal() => return Ok(()),
        }
        let keeper = client.clone();
        tokio::spawn(async move {
            leader::keep(&keeper, &lease).await;
            // As controller-runtime does: a process that lost its lease stops, and is
            // restarted to compete again.
            tracing::error!("leader election lost");
            std::process::exit(1);
        });
    }
    let file_urls = if args.allow_file_urls {
        tidegate_controllers::file_urls::FileUrls::All
    } else {
        tidegate_controllers::file_urls::FileUrls::Refused
    };
    let kubeconfig = tidegate_controllers::kubeconfig::SecretKubeConfigOptions {
        insecure_exec: args.insecure_kubeconfig_exec,
        insecure_tls: args.insecure_kubeconfig_tls,
    };
    let set = Set {
        client,
        config,
        storage,
        metrics,
        source: gitrepository::Options {
            concurrent: args.concurrent,
            jitter_percent: args.interval_jitter_percentage,
            requeue_dependency: requeue,
            namespace: namespace.clone(),
            file_urls: file_urls.clone(),
            watch_label_selector: selector.map(str::to_string),
            helm_cache_max_size: args.helm_cache_max_size,
            helm_cache_ttl,
            events: events.clone(),
        },
        kustomize: kustomization::Options {
            concurrent: args.kustomize_concurrent,
            jitter_percent: args.interval_jitter_percentage,
            requeue_dependency: requeue,
            namespace,
            default_service_account: args.default_service_account.clone(),
            no_cross_namespace_refs: args.no_cross_namespace_refs,
            watch_label_selector: selector.map(str::to_string),
            sops_age_secret: args.sops_age_secret.clone().map(|name| {
                let ns =
                    std::env::var("RUNTIME_NAMESPACE").unwrap_or_else(|_| "flux-system".into());
                (ns, name)
            }),
            events: events.clone(),
            kubeconfig,
            ..Default::default()
        },
        helm: helmrelease::Options {
            concurrent: args.helm_concurrent,
            jitter_percent: args.interval_jitter_percentage,
            requeue_dependency: requeue,
            namespace: namespace_helm,
            default_service_account: args.default_service_account.clone(),
            no_cross_namespace_refs: args.no_cross_namespace_refs,
            watch_label_selector: selector.map(str::to_string),
            events: events.clone(),
            kubeconfig,
        },
        notification: receiver::Options {
            namespace: namespace_watcher.clone(),
            watch_label_selector: selector.map(str::to_string),
            no_cross_namespace_refs: args.no_cross_namespace_refs,
            google_certs: Default::default(),
        },
        receiver_listener: if args.components.iter().any(|c| c == NOTIFICATION) {
            let addr = listen_addr(&args.receiver_addr)?;
            Some(
                tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("binding the receiver server to {addr}"))?,
            )
        } else {
            None
        },
        crs: clusterresourceset::Options {
            namespace: namespace_watcher.clone(),
            watch_label_selector: selector.map(str::to_string),
            kubeconfig,
            ..Default::default()
        },
        watcher: artifactgenerator::Options {
            jitter_percent: args.interval_jitter_percentage,
            namespace: namespace_watcher,
            no_cross_namespace_refs: args.no_cross_namespace_refs,
            watch_label_selector: selector.map(str::to_string),
            events,
            ..Default::default()
        },
        image: imagereflector::Options {
            namespace: namespace_image,
            watch_label_selector: selector.map(str::to_string),
            storage_path: args.storage_path.clone(),
            no_cross_namespace_refs: args.no_cross_namespace_refs,
            requeue_dependency: requeue,
            events: image_events,
        },
        automation: imageautomation::Options {
            namespace: namespace_automation,
            watch_label_selector: selector.map(str::to_string),
            no_cross_namespace_refs: args.no_cross_namespace_refs,
            file_urls: file_urls.clone(),
            events: automation_events,
            ..Default::default()
        },
        events: event_options,
        events_listener,
        components: args.components.clone(),
    };
    set.run(wait_for_signal()).await;
    Ok(())
}

/// One listener for two servers: POSTs go to `post` (the event server), everything else to
/// `other` (the artifact server).
fn by_method(other: axum::Router, post: axum::Router) -> axum::Router {
    use tower::ServiceExt as _;
    axum::Router::new().fallback(move |req: axum::extract::Request| {
        let (other, post) = (other.clone(), post.clone());
        async move {
            let target = if req.method() == axum::http::Method::POST {
                post
            } else {
                other
            };
            match target.oneshot(req).await {
                Ok(r) => r,
                Err(never) => match never {},
            }
        }
    })
}

/// The leader-election Lease of the instance serving `selector`: shards elect their leaders
/// separately (the name carries a digest of the selector), as Flux's shards do.
fn lease_name(selector: Option<&str>) -> String {
    use sha2::Digest as _;
    match selector {
        None => leader::LEASE_NAME.to_string(),
        Some(s) => {
            let digest = sha2::Sha256::digest(s.as_bytes());
            let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
            format!("{}-{hex}", leader::LEASE_NAME)
        }
    }
}

/// The source-controller component.
pub const SOURCE: &str = "source-controller";
/// The kustomize-controller component.
pub const KUSTOMIZE: &str = "kustomize-controller";
/// The helm-controller component.
pub const HELM: &str = "helm-controller";
/// The source-watcher component (ArtifactGenerators).
pub const WATCHER: &str = "source-watcher";
/// Cluster API's ClusterResourceSet controller.
pub const CRS: &str = "clusterresourceset-controller";
/// The notification-controller (Receivers).
pub const NOTIFICATION: &str = "notification-controller";
/// The image-reflector-controller (ImageRepositories, ImagePolicies).
pub const IMAGE_REFLECTOR: &str = "image-reflector-controller";
/// The image-automation-controller (ImageUpdateAutomations).
pub const IMAGE_AUTOMATION: &str = "image-automation-controller";

/// The controllers of one process, with what they share.
pub struct Set {
    /// Client of the cluster.
    pub client: kube::Client,
    /// Its configuration (for impersonating clients).
    pub config: kube::Config,
    /// The artifact store.
    pub storage: Arc<Storage>,
    /// The metrics registry.
    pub metrics: Arc<Metrics>,
    /// source-controller settings.
    pub source: gitrepository::Options,
    /// kustomize-controller settings.
    pub kustomize: kustomization::Options,
    /// helm-controller settings.
    pub helm: helmrelease::Options,
    /// source-watcher settings.
    pub watcher: artifactgenerator::Options,
    /// ClusterResourceSet controller settings.
    pub crs: clusterresourceset::Options,
    /// notification-controller settings.
    pub notification: receiver::Options,
    /// Where the notification-controller's receiver server listens.
    pub receiver_listener: Option<tokio::net::TcpListener>,
    /// notification-controller event server settings.
    pub events: notification::Options,
    /// image-reflector-controller settings.
    pub image: imagereflector::Options,
    /// image-automation-controller settings.
    pub automation: imageautomation::Options,
    /// Where the event server listens (none: not served, or served by the caller).
    pub events_listener: Option<tokio::net::TcpListener>,
    /// Which to run.
    pub components: Vec<String>,
}

impl Set {
    /// Runs the selected controllers until `shutdown` resolves.
    pub async fn run(mut self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        let stop = move || {
            let mut rx = rx.clone();
            async move {
                let _ = rx.wait_for(|v| *v).await;
            }
        };
        let mut tasks = Vec::new();
        if self.components.iter().any(|c| c == SOURCE) {
            tasks.push(tokio::spawn(gitrepository::run(
                self.client.clone(),
                self.storage.clone(),
                self.metrics.clone(),
                self.source.clone(),
                stop(),
            )));
            tasks.push(tokio::spawn(ocirepository::run(
                self.client.clone(),
                self.storage.clone(),
                self.metrics.clone(),
                self.source.clone(),
                stop(),
            )));
            tasks.push(tokio::spawn(helmrepository::run(
                self.client.clone(),
                self.storage.clone(),
                self.metrics.clone(),
                self.source.clone(),
                stop(),
            )));
            tasks.push(tokio::spawn(helmchart::run(
                self.client.clone(),
                self.storage.clone(),
                self.metrics.clone(),
                self.source.clone(),
                stop(),
            )));
            tasks.push(tokio::spawn(bucket::run(
                self.client.clone(),
                self.storage.clone(),
                self.metrics.clone(),
                self.source.clone(),
                stop(),
            )));
        }
        if self.components.iter().any(|c| c == WATCHER) {
            tasks.push(tokio::spawn(artifactgenerator::run(
                self.client.clone(),
                self.storage.clone(),
                self.metrics.clone(),
                self.watcher.clone(),
                stop(),
            )));
        }
        if self.components.iter().any(|c| c == NOTIFICATION) {
            tasks.push(tokio::spawn(receiver::run(
                self.client.clone(),
                self.metrics.clone(),
                self.notification.clone(),
                self.receiver_listener.take(),
                stop(),
            )));
            if let Some(l) = self.events_listener.take() {
                tasks.push(tokio::spawn(notification::run_event_server(
                    self.client.clone(),
                    self.events.clone(),
                    l,
                    stop(),
                )));
            }
        }
        if self.components.iter().any(|c| c == CRS) {
            tasks.push(tokio::spawn(clusterresourceset::run(
                self.client.clone(),
                self.metrics.clone(),
                self.crs.clone(),
                stop(),
            )));
        }
        if self.components.iter().any(|c| c == IMAGE_REFLECTOR) {
            tasks.push(tokio::spawn(imagereflector::run(
                self.client.clone(),
                self.metrics.clone(),
                self.image.clone(),
                stop(),
            )));
        }
        if self.components.iter().any(|c| c == IMAGE_AUTOMATION) {
            tasks.push(tokio::spawn(imageautomation::run(
                self.client.clone(),
                self.metrics.clone(),
                self.automation.clone(),
                stop(),
            )));
        }
        if self.components.iter().any(|c| c == KUSTOMIZE) {
            tasks.push(tokio::spawn(kustomization::run(
                self.client.clone(),
                self.config.clone(),
                self.metrics.clone(),
                self.kustomize.clone(),
                stop(),
            )));
        }
        if self.components.iter().any(|c| c == HELM) {
            tasks.push(tokio::spawn(helmrelease::run(
                self.client.clone(),
                self.config.clone(),
                self.metrics.clone(),
                self.helm.clone(),
                stop(),
            )));
        }
        shutdown.await;
        let _ = tx.send(true);
        for t in tasks {
            let _ = t.await;
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
