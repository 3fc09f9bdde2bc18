//! `tidegate up`: the whole toolkit in one process on one machine — the embedded API server
//! (with its workload simulator), the artifact store and server, and the source and kustomize
//! controllers, which reach the server over HTTPS like any client. Optionally bootstraps a
//! GitRepository and Kustomization named `flux-system`, as `flux bootstrap` would, and shows
//! the first reconcile.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use kube::Client;
use serde_json::Value;
use tidegate_controllers::file_urls::FileUrls;
use tidegate_controllers::metrics::Metrics;
use tidegate_controllers::{artifactgenerator, gitrepository, helmrelease, kustomization, leader};
use tidegate_source::storage::{Retention, Storage};

use crate::controllers::{
    CRS, HELM, IMAGE_AUTOMATION, IMAGE_REFLECTOR, KUSTOMIZE, NOTIFICATION, SOURCE, Set, WATCHER,
    wait_for_signal,
};

mod identity;
mod progress;
pub mod workloads;

/// The field manager of `up`'s own writes.
pub const FIELD_MANAGER: &str = "tidegate";

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
    /// The longest the first reconcile is shown before handing over; `up` hands over as soon
    /// as it settles, failed or not.
    #[arg(long, default_value = "5m", value_parser = tidegate_core::duration::parse)]
    wait_timeout: Duration,
    /// Start this many workload clusters (`workload-1`, …), each an embedded API server of
    /// its own, registered as a Cluster API Cluster in the `default` namespace with its
    /// `<name>-kubeconfig` Secret (more with `tidegate cluster create`).
    #[arg(long, default_value_t = 0)]
    clusters: u16,
    /// Address of the webhook receiver server (Receivers' `status.webhookPath` is served
    /// under it); port 0 keeps the previous run's port when it is free.
    #[arg(long, default_value = "127.0.0.1:0")]
    receiver_addr: SocketAddr,
    /// Address of the notification-controller's event server (where the controllers POST
    /// their events; Alerts route them to Providers); port 0 keeps the previous run's port
    /// when it is free.
    #[arg(long, default_value = "127.0.0.1:0")]
    events_addr: SocketAddr,
    /// Window in which identical events are sent once.
    #[arg(long, default_value = "5m", value_parser = tidegate_core::duration::parse)]
    rate_limit_interval: Duration,
    /// Labels of the workload clusters `--clusters` creates (`k=v,k2=v2`).
    #[arg(long, value_delimiter = ',')]
    cluster_labels: Vec<String>,
    /// `AlwaysAllow` or `RBAC` (the admin kubeconfig and the controllers stay in
    /// `system:masters`; other users and impersonated service accounts get what RBAC gives).
    #[arg(long, default_value = "AlwaysAllow", value_parser = crate::apiserver::parse_authorization_mode)]
    authorization_mode: tidegate_apiserver::AuthorizationMode,
    /// Lock down for multi-tenancy as Flux's setup does: RBAC authorization, no
    /// cross-namespace references, no remote bases, Kustomizations and HelmReleases without a
    /// `serviceAccountName` impersonating their namespace's `default` service account, and
    /// the bootstrap Kustomization impersonating `flux-system/kustomize-controller`.
    #[arg(long)]
    multi_tenant: bool,
    /// Let every GitRepository read repositories on this machine (`file://` URLs); without
    /// it only the bootstrap GitRepository (`flux-system/flux-system`) may. Refused with
    /// `--multi-tenant`.
    #[arg(long, conflicts_with = "multi_tenant")]
    allow_file_urls: bool,
    /// Allow the `user.exec` section (and `auth-provider`) in kubeconfigs read from Secrets
    /// for remote apply: they run commands on this host.
    #[arg(long)]
    insecure_kubeconfig_exec: bool,
    /// Allow kubeconfigs read from Secrets to disable TLS verification.
    #[arg(long)]
    insecure_kubeconfig_tls: bool,
    /// Static bearer tokens of users, in kube-apiserver's CSV format
    /// (`token,user,uid[,"group1,group2"]`).
    #[arg(long)]
    token_auth_file: Option<PathBuf>,
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
pub(crate) fn done(bar: &ProgressBar, line: &str) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// What `up` has started so far; stopped in reverse order on the way out.
#[derive(Default)]
struct Running {
    server: Option<tidegate_apiserver::ApiServer>,
    controllers: Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    )>,
    /// The artifact and metrics servers and the lease keeper.
    background: Vec<tokio::task::JoinHandle<()>>,
    /// The workload clusters' provider.
    workloads: Option<Arc<workloads::Provider>>,
}

impl Running {
    /// Stops the controllers (they finish their work and close their watches), then the
    /// background servers and the lease keeper, then the API server: nothing is left talking
    /// to a server that has gone.
    async fn stop(mut self) {
        if let Some((stop, handle)) = self.controllers.take() {
            let _ = stop.send(());
            // Like controller-runtime's graceful shutdown, bounded: what is still running after
            // that ends with the process.
            if tokio::time::timeout(GRACEFUL_SHUTDOWN, handle)
                .await
                .is_err()
            {
                tracing::debug!("the controllers did not stop in time; ending them");
            }
        }
        for task in self.background.drain(..) {
            task.abort();
            let _ = task.await;
        }
        if let Some(provider) = self.workloads.take() {
            provider.stop_all().await;
        }
        if let Some(server) = self.server.take() {
            server.shutdown().await;
        }
    }
}

/// How long the controllers get to finish what they are doing when `up` stops.
const GRACEFUL_SHUTDOWN: Duration = Duration::from_secs(10);

/// What is printed when `up` hands over.
struct Handover {
    url: String,
    kubeconfig: PathBuf,
}

/// Runs everything until Ctrl-C or SIGTERM, which are handled from the first moment: a signal
/// during start-up stops what has started and exits cleanly.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let (signal_tx, mut signal) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        wait_for_signal().await;
        let _ = signal_tx.send(true);
    });
    let bar = spinner();
    let mut running = Running::default();
    let started = tokio::select! {
        r = start(&args, &bar, &mut running) => Some(r),
        _ = signal.wait_for(|s| *s) => None,
    };
    bar.finish_and_clear();
    match started {
        Some(Ok(handover)) => {
            println!("tidegate is up; the API server is at {}", handover.url);
            println!("kubeconfig: {}", handover.kubeconfig.display());
            println!(
                "try: kubectl --kubeconfig {} get kustomizations -A",
                handover.kubeconfig.display()
            );
            crate::logging::hand_over();
            let _ = signal.wait_for(|s| *s).await;
        }
        Some(Err(e)) => {
            running.stop().await;
            return Err(e);
        }
        None => {}
    }
    eprintln!("► shutting down");
    running.stop().await;
    eprintln!("✔ stopped");
    Ok(())
}

/// Starts the API server, the artifact server and the controllers, bootstraps, and shows the
/// first reconcile until it settles.
async fn start(args: &Args, bar: &ProgressBar, running: &mut Running) -> anyhow::Result<Handover> {
    // Private (0700): it holds the store, with every Secret in clear, and the credentials.
    tidegate_apiserver::private_dir(&args.data_dir)
        .with_context(|| format!("creating {}", args.data_dir.display()))?;
    let data_dir = args.data_dir.canonicalize()?;
    bar.set_message("starting the API server");
    let server = tidegate_apiserver::ApiServer::start(tidegate_apiserver::Config {
        data_dir: Some(data_dir.clone()),
        listen: args.listen,
        tls: true,
        workload_simulator: (!args.no_workload_simulator).then_some(args.simulator_delay),
        authorization: if args.multi_tenant {
            tidegate_apiserver::AuthorizationMode::Rbac
        } else {
            args.authorization_mode
        },
        token_auth_file: args.token_auth_file.clone(),
        ..Default::default()
    })
    .await
    .with_context(|| format!("starting the API server in {}", data_dir.display()))?;
    let handover = Handover {
        url: server.url.clone(),
        kubeconfig: server
            .kubeconfig_path
            .clone()
            .unwrap_or_else(|| data_dir.join("kubeconfig")),
    };
    let kc = kube::config::Kubeconfig::from_yaml(&server.kubeconfig)?;
    running.server = Some(server);
    done(bar, &format!("✔ API server listening on {}", handover.url));

    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    let client = Client::try_from(config.clone())?;
    bar.set_message("installing the toolkit CRDs");
    install_crds(&client).await?;
    done(bar, "✔ CRDs installed");
    install_cluster_api_crds(&client).await?;
    // Flux's RBAC, and the controllers on their own service account's token.
    let rbac = tidegate_core::yaml::parse_stream(&crate::install::rbac_manifests(FLUX_SYSTEM))
        .map_err(|e| anyhow::anyhow!("the built-in RBAC manifests: {e}"))?;
    crate::cluster::apply(&client, rbac, "installing the toolkit's RBAC").await?;
    let (controllers_config, refresher) = identity::service_account_config(
        &client,
        &config,
        &data_dir,
        FLUX_SYSTEM,
        crate::install::DEPLOYMENT,
    )
    .await?;
    running.background.push(refresher);
    let controllers_client = Client::try_from(controllers_config.clone())?;
    done(
        bar,
        &format!(
            "✔ RBAC installed; the controllers run as system:serviceaccount:{FLUX_SYSTEM}:{}{}",
            crate::install::DEPLOYMENT,
            if args.multi_tenant {
                " (multi-tenant: RBAC enforced, cross-namespace references refused, default service account impersonated)"
            } else {
                ""
            }
        ),
    );
    let labels = args
        .cluster_labels
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| anyhow::anyhow!("--cluster-labels {l:?}: expected key=value"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;

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
    running.background.push(tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "artifact server stopped");
        }
    }));
    let metrics = Metrics::new();
    if let Some(addr) = args.metrics_addr {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the metrics endpoint to {addr}"))?;
        let m = metrics.clone();
        running.background.push(tokio::spawn(async move {
            if let Err(e) = m.serve(listener).await {
                tracing::error!(error = %e, "metrics server stopped");
            }
        }));
    }
    let receiver_listener = bind_remembered(
        &data_dir,
        args.receiver_addr,
        RECEIVER_ADDRESS_FILE,
        "receiver",
    )
    .await?;
    let receiver_addr = receiver_listener.local_addr()?;
    let _ = std::fs::write(
        data_dir.join(RECEIVER_ADDRESS_FILE),
        receiver_addr.to_string(),
    );
    let receiver_url = format!("http://{receiver_addr}");
    let events_listener =
        bind_remembered(&data_dir, args.events_addr, EVENTS_ADDRESS_FILE, "event").await?;
    let events_addr = events_listener.local_addr()?;
    let _ = std::fs::write(data_dir.join(EVENTS_ADDRESS_FILE), events_addr.to_string());
    let events_url = format!("http://{events_addr}/");
    let events = Some(
        tidegate_controllers::notification::webhook::EventWebhook::start(&events_url)
            .map_err(|e| anyhow::anyhow!(e))?,
    );
    let lockdown = args.multi_tenant;
    let image_events = events.clone();
    let default_service_account = lockdown.then(|| "default".to_string());
    let file_urls = if args.allow_file_urls {
        FileUrls::All
    } else {
        FileUrls::Only(vec![(FLUX_SYSTEM.to_string(), FLUX_SYSTEM.to_string())])
    };
    let kubeconfig = tidegate_controllers::kubeconfig::SecretKubeConfigOptions {
        insecure_exec: args.insecure_kubeconfig_exec,
        insecure_tls: args.insecure_kubeconfig_tls,
    };
    let set = Set {
        client: controllers_client,
        config: controllers_config,
        storage,
        metrics,
        source: gitrepository::Options {
            file_urls: file_urls.clone(),
            events: events.clone(),
            ..Default::default()
        },
        kustomize: kustomization::Options {
            concurrent: args.concurrent,
            events: events.clone(),
            default_service_account: default_service_account.clone(),
            no_cross_namespace_refs: lockdown,
            kubeconfig,
            ..Default::default()
        },
        helm: helmrelease::Options {
            concurrent: args.concurrent,
            events: events.clone(),
            default_service_account,
            no_cross_namespace_refs: lockdown,
            kubeconfig,
            ..Default::default()
        },
        watcher: artifactgenerator::Options {
            events,
            no_cross_namespace_refs: lockdown,
            ..Default::default()
        },
        crs: tidegate_controllers::clusterresourceset::Options {
            kubeconfig,
            ..Default::default()
        },
        notification: tidegate_controllers::receiver::Options {
            no_cross_namespace_refs: lockdown,
            ..Default::default()
        },
        receiver_listener: Some(receiver_listener),
        events: tidegate_controllers::notification::Options {
            rate_limit_interval: args.rate_limit_interval,
            no_cross_namespace_refs: lockdown,
            ..Default::default()
        },
        image: tidegate_controllers::imagereflector::Options {
            storage_path: data_dir.join("image-reflector"),
            no_cross_namespace_refs: lockdown,
            events: image_events.clone(),
            ..Default::default()
        },
        automation: tidegate_controllers::imageautomation::Options {
            no_cross_namespace_refs: lockdown,
            file_urls,
            events: image_events,
            ..Default::default()
        },
        events_listener: Some(events_listener),
        components: vec![
            IMAGE_REFLECTOR.into(),
            IMAGE_AUTOMATION.into(),
            NOTIFICATION.into(),
            SOURCE.into(),
            KUSTOMIZE.into(),
            HELM.into(),
            WATCHER.into(),
            CRS.into(),
        ],
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let controllers = tokio::spawn(set.run(async {
        let _ = stop_rx.await;
    }));
    running.controllers = Some((stop_tx, controllers));
    done(
        bar,
        "✔ source-controller, kustomize-controller, helm-controller, source-watcher, notification-controller, image-reflector-controller, image-automation-controller and the clusterresourceset controller started",
    );
    done(
        bar,
        &format!("✔ webhook receivers at {receiver_url}/hook/…"),
    );
    done(bar, &format!("✔ event server at {events_url}"));
    let provider = workloads::Provider::new(
        client.clone(),
        data_dir.clone(),
        (!args.no_workload_simulator).then_some(args.simulator_delay),
    );
    running.workloads = Some(provider.clone());
    running.background.push(tokio::spawn(provider.run()));
    if args.clusters > 0 {
        bar.set_message(format!("starting {} workload clusters", args.clusters));
        let objects = (1..=args.clusters)
            .map(|i| {
                workloads::cluster_object(
                    workloads::DEFAULT_NAMESPACE,
                    &format!("workload-{i}"),
                    &labels,
                )
            })
            .collect();
        crate::cluster::apply(&client, objects, "creating the workload Clusters").await?;
        let names: Vec<String> = (1..=args.clusters)
            .map(|i| format!("workload-{i}"))
            .collect();
        workloads::wait_provisioned(
            &client,
            workloads::DEFAULT_NAMESPACE,
            &names,
            args.wait_timeout,
        )
        .await?;
        done(
            bar,
            &format!(
                "✔ {} workload clusters running (Clusters {}/workload-1…{})",
                args.clusters,
                workloads::DEFAULT_NAMESPACE,
                args.clusters
            ),
        );
    }
    // The controllers run in this process; holding their Lease tells `tidegate check` (and a
    // `tidegate controllers --enable-leader-election` pointed here) that they are running.
    let lease = leader::LeaseOptions {
        identity: format!("tidegate-up_{}", std::process::id()),
        ..leader::LeaseOptions::new(FLUX_SYSTEM, leader::LEASE_NAME)
    };
    let keeper = client.clone();
    running.background.push(tokio::spawn(async move {
        loop {
            leader::acquire(&keeper, &lease).await;
            leader::keep(&keeper, &lease).await;
            tracing::warn!("the controllers' lease was lost; taking it again");
        }
    }));

    let bootstrap = if args.example {
        let repo = data_dir.join("example.git");
        // Written once: a later start leaves the repository (and the user's pushes) alone.
        match tidegate_source::git::seed::branch_commit(&repo, &args.branch)? {
            Some(commit) => {
                done(
                    bar,
                    &format!(
                        "✔ example repository {} kept (branch {} at {})",
                        repo.display(),
                        args.branch,
                        &commit[..12.min(commit.len())]
                    ),
                );
            }
            None => {
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
                    bar,
                    &format!(
                        "✔ example written to {} (commit {})",
                        repo.display(),
                        &commit[..12.min(commit.len())]
                    ),
                );
            }
        }
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
        let token = chrono_token();
        progress::request_reconciles(&client, &token).await;
        let service_account = args.multi_tenant.then_some("kustomize-controller");
        apply_bootstrap(
            &client,
            url,
            &args.branch,
            path,
            &args.interval,
            &token,
            service_account,
        )
        .await?;
        done(
            bar,
            &format!(
                "✔ GitRepository and Kustomization {FLUX_SYSTEM}/{FLUX_SYSTEM} created ({url}, branch {}, path {path})",
                args.branch
            ),
        );
        progress::first_reconcile(&client, bar, &token, args.wait_timeout).await;
    }
    if args.example {
        example_receiver(&client, &data_dir, &receiver_url, bar).await?;
    }
    Ok(handover)
}

/// `--example`: a generic Receiver `flux-system/example` that reconciles the example's
/// GitRepository and Kustomization at once, its token (random, kept in the data directory)
/// in the Secret `flux-system/example-webhook`; prints the URL to POST to.
async fn example_receiver(
    client: &Client,
    data_dir: &Path,
    receiver_url: &str,
    bar: &ProgressBar,
) -> anyhow::Result<()> {
    let token_file = data_dir.join("example-webhook-token");
    let token = match std::fs::read_to_string(&token_file) {
        Ok(t) if !t.trim().is_empty() => t.trim().to_string(),
        _ => {
            use std::io::Read as _;
            let mut bytes = [0u8; 16];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(&mut bytes))
                .context("reading /dev/urandom for the example webhook token")?;
            let t: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            std::fs::write(&token_file, &t)
                .with_context(|| format!("writing {}", token_file.display()))?;
            t
        }
    };
    let objects = vec![
        serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "example-webhook", "namespace": FLUX_SYSTEM},
            "stringData": {"token": token}}),
        serde_json::json!({"apiVersion": "notification.toolkit.fluxcd.io/v1", "kind": "Receiver",
        "metadata": {"name": "example", "namespace": FLUX_SYSTEM},
        "spec": {"type": "generic", "secretRef": {"name": "example-webhook"},
            "resources": [
                {"kind": "GitRepository", "name": FLUX_SYSTEM},
                {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                 "name": FLUX_SYSTEM},
            ]}}),
    ];
    crate::cluster::apply(client, objects, "creating the example Receiver").await?;
    let api: kube::Api<tidegate_api::Receiver> = kube::Api::namespaced(client.clone(), FLUX_SYSTEM);
    for _ in 0..100 {
        if let Ok(r) = api.get("example").await
            && let Some(path) = r
                .status
                .and_then(|s| s.webhook_path)
                .filter(|p| !p.is_empty())
        {
            done(
                bar,
                &format!(
                    "✔ Receiver {FLUX_SYSTEM}/example: POST {receiver_url}{path} to reconcile now"
                ),
            );
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done(bar, &format!("✔ Receiver {FLUX_SYSTEM}/example created"));
    Ok(())
}

/// A `reconcile.fluxcd.io/requestedAt` value: the time now.
fn chrono_token() -> String {
    format!(
        "{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    )
}

/// Where the artifact server's address is remembered between runs.
const STORAGE_ADDRESS_FILE: &str = "artifact-address";
/// Where the receiver server's address is remembered between runs.
const RECEIVER_ADDRESS_FILE: &str = "receiver-address";
/// Where the event server's address is remembered between runs.
const EVENTS_ADDRESS_FILE: &str = "events-address";

/// Binds the artifact server: an explicit address as given; for port 0, the address of the
/// previous run when it is free (artifact URLs in the store then stay valid), else any.
async fn bind_storage(
    data_dir: &Path,
    wanted: SocketAddr,
) -> anyhow::Result<tokio::net::TcpListener> {
    bind_remembered(data_dir, wanted, STORAGE_ADDRESS_FILE, "artifact").await
}

/// Binds `wanted`; for port 0, the address remembered in `file` when it is free, else any.
async fn bind_remembered(
    data_dir: &Path,
    wanted: SocketAddr,
    file: &str,
    what: &str,
) -> anyhow::Result<tokio::net::TcpListener> {
    if wanted.port() == 0
        && let Ok(text) = std::fs::read_to_string(data_dir.join(file))
        && let Ok(previous) = text.trim().parse::<SocketAddr>()
        && previous.ip() == wanted.ip()
        && let Ok(l) = tokio::net::TcpListener::bind(previous).await
    {
        return Ok(l);
    }
    tokio::net::TcpListener::bind(wanted)
        .await
        .with_context(|| format!("binding the {what} server to {wanted}"))
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

/// Cluster API's Cluster, ClusterResourceSet and ClusterResourceSetBinding CRDs, each only
/// when the cluster lacks it (Cluster API's own stay untouched).
async fn install_cluster_api_crds(client: &Client) -> anyhow::Result<()> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let api: kube::Api<CustomResourceDefinition> = kube::Api::all(client.clone());
    let mut missing = Vec::new();
    for crd in tidegate_api::crds::cluster_api() {
        let name = tidegate_api::crds::name_of(crd).unwrap_or_default();
        if api.get_opt(name).await?.is_none() {
            missing.extend(
                tidegate_core::yaml::parse_stream(crd)
                    .map_err(|e| anyhow::anyhow!("the Cluster API CRDs: {e}"))?,
            );
        }
    }
    if !missing.is_empty() {
        crate::cluster::apply(client, missing, "installing the Cluster API CRDs").await?;
    }
    Ok(())
}

/// The flux-system GitRepository and Kustomization, both reconciled every `interval`, with a
/// reconcile requested (`token`) so the first reconcile of this start can be told apart from
/// the status an earlier run left; the Kustomization impersonates `service_account` when given
/// (Flux's multi-tenancy setup gives it `kustomize-controller`).
async fn apply_bootstrap(
    client: &Client,
    url: &str,
    branch: &str,
    path: &str,
    interval: &str,
    token: &str,
    service_account: Option<&str>,
) -> anyhow::Result<()> {
    tidegate_core::duration::parse(interval).map_err(|e| anyhow::anyhow!("--interval: {e}"))?;
    let requested = serde_json::json!({ tidegate_api::meta::RECONCILE_REQUESTED_AT: token });
    let mut kustomization_spec = serde_json::json!({"interval": interval, "path": path,
        "prune": true, "sourceRef": {"kind": "GitRepository", "name": FLUX_SYSTEM}});
    if let Some(sa) = service_account {
        kustomization_spec["serviceAccountName"] = serde_json::json!(sa);
    }
    let objects = vec![
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": FLUX_SYSTEM}}),
        serde_json::json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
            "metadata": {"name": FLUX_SYSTEM, "namespace": FLUX_SYSTEM, "annotations": requested},
            "spec": {"interval": interval, "url": url, "ref": {"branch": branch}}}),
        serde_json::json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": FLUX_SYSTEM, "namespace": FLUX_SYSTEM, "annotations": requested},
            "spec": kustomization_spec}),
    ];
    crate::cluster::apply(client, objects, "creating the bootstrap objects").await?;
    Ok(())
}
