//! Reaching a cluster: `--kubeconfig` and `--context` as kubectl takes them.

use std::path::PathBuf;

use anyhow::Context as _;

/// Global cluster flags.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long)]
    pub context: Option<String>,
}

impl ClusterArgs {
    /// A client for the selected cluster. Without flags: the default kubeconfig, else the
    /// in-cluster service account.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        Ok(kube::Client::try_from(self.config().await?)?)
    }

    /// The client configuration of the selected cluster.
    pub async fn config(&self) -> anyhow::Result<kube::Config> {
        let options = kube::config::KubeConfigOptions {
            context: self.context.clone(),
            ..Default::default()
        };
        let config = match &self.kubeconfig {
            Some(path) => {
                let kc = kube::config::Kubeconfig::read_from(path)
                    .with_context(|| format!("reading kubeconfig {}", path.display()))?;
                kube::Config::from_custom_kubeconfig(kc, &options).await?
            }
            None if self.context.is_some() => kube::Config::from_kubeconfig(&options)
                .await
                .context("loading the kubeconfig")?,
            None => kube::Config::infer()
                .await
                .context("loading the kubeconfig or in-cluster configuration")?,
        };
        Ok(config)
    }
}

/// Applies `objects` in stages with server-side apply as field manager `tidegate` (what the
/// CLI itself writes: CRDs, bootstrap objects, installations, created sources); returns the
/// change set. Errors carry `what`.
pub async fn apply(
    client: &kube::Client,
    objects: Vec<serde_json::Value>,
    what: &str,
) -> anyhow::Result<tidegate_apply::ChangeSet> {
    tidegate_apply::ResourceManager::new(client.clone(), manager_options())
        .apply_all_staged(
            objects,
            &tidegate_apply::ApplyOptions::default(),
            &mut tidegate_apply::AppliedState::default(),
        )
        .await
        .map_err(|e| anyhow::anyhow!("{what}: {e}"))
}

/// The apply manager settings of the CLI's own writes.
pub fn manager_options() -> tidegate_apply::ManagerOptions {
    tidegate_apply::ManagerOptions {
        field_manager: "tidegate".into(),
        ..Default::default()
    }
}
