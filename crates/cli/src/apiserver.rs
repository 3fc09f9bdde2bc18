//! `tidegate apiserver`: the embedded API server on its own.

use anyhow::Context;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Flags of `tidegate apiserver`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory for the store, credentials and kubeconfig (created if missing).
    #[arg(long, default_value = "./tidegate-data")]
    data_dir: PathBuf,
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:6443")]
    listen: SocketAddr,
    /// Serve plain HTTP instead of HTTPS (for local experiments only).
    #[arg(long)]
    insecure_http: bool,
    /// Do not simulate workloads (by default Deployments, Jobs, Pods, … are moved to ready a
    /// moment after they change, as a kubelet would; `tidegate.dev/simulate: fail|hang` on an
    /// object picks another outcome).
    #[arg(long)]
    no_workload_simulator: bool,
    /// How long a simulated rollout takes.
    #[arg(long, default_value = "1s", value_parser = tidegate_core::duration::parse)]
    simulator_delay: std::time::Duration,
    /// `AlwaysAllow` (every authenticated request) or `RBAC` (Kubernetes RBAC; the admin
    /// kubeconfig is in `system:masters`).
    #[arg(long, default_value = "AlwaysAllow", value_parser = parse_authorization_mode)]
    authorization_mode: tidegate_apiserver::AuthorizationMode,
    /// Static bearer tokens of users, in kube-apiserver's CSV format
    /// (`token,user,uid[,"group1,group2"]`).
    #[arg(long)]
    token_auth_file: Option<PathBuf>,
}

/// `--authorization-mode`: kube-apiserver's names.
pub fn parse_authorization_mode(s: &str) -> Result<tidegate_apiserver::AuthorizationMode, String> {
    match s {
        "AlwaysAllow" => Ok(tidegate_apiserver::AuthorizationMode::AlwaysAllow),
        "RBAC" => Ok(tidegate_apiserver::AuthorizationMode::Rbac),
        other => Err(format!(
            "authorization mode {other:?} is not supported (AlwaysAllow or RBAC)"
        )),
    }
}

/// Runs the server until Ctrl-C or SIGTERM.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let server = tidegate_apiserver::ApiServer::start(tidegate_apiserver::Config {
        data_dir: Some(args.data_dir.clone()),
        listen: args.listen,
        tls: !args.insecure_http,
        workload_simulator: (!args.no_workload_simulator).then_some(args.simulator_delay),
        authorization: args.authorization_mode,
        token_auth_file: args.token_auth_file.clone(),
        ..Default::default()
    })
    .await
    .with_context(|| format!("starting the API server in {}", args.data_dir.display()))?;
    let kubeconfig = server
        .kubeconfig_path
        .clone()
        .unwrap_or_else(|| args.data_dir.join("kubeconfig"));
    println!("tidegate apiserver listening on {}", server.url);
    println!("kubeconfig: {}", kubeconfig.display());
    println!(
        "try: kubectl --kubeconfig {} get namespaces",
        kubeconfig.display()
    );
    crate::controllers::wait_for_signal().await;
    tracing::info!("shutting down");
    server.shutdown().await;
    Ok(())
}
