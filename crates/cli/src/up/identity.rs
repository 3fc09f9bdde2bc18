//! The identity `up`'s controllers reach the API server with: the token of their own service
//! account (`flux-system/tidegate-controllers`, bound to `crd-controller` and `cluster-admin`
//! by Flux's RBAC), never the admin's. The token is short-lived and kept in a file that the
//! client re-reads every minute; a background task replaces it well before it expires, as the
//! kubelet refreshes a projected service account token.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::Client;

/// How long each token is valid.
const LIFETIME: Duration = Duration::from_secs(3600);
/// How often it is replaced (at 80 % of its life, as the kubelet does).
const REFRESH: Duration = Duration::from_secs(2880);

/// Asks the API server (as the admin) for a token of `namespace/name`.
async fn request(admin: &Client, namespace: &str, name: &str) -> anyhow::Result<String> {
    let api: kube::Api<ServiceAccount> = kube::Api::namespaced(admin.clone(), namespace);
    let req = TokenRequest {
        spec: TokenRequestSpec {
            expiration_seconds: Some(LIFETIME.as_secs() as i64),
            ..Default::default()
        },
        ..Default::default()
    };
    let out = api
        .create_token_request(name, &Default::default(), &req)
        .await
        .with_context(|| {
            format!("requesting a token for the service account {namespace}/{name}")
        })?;
    out.status
        .map(|s| s.token)
        .filter(|t| !t.is_empty())
        .with_context(|| format!("the token request for {namespace}/{name} returned no token"))
}

fn write_token(path: &Path, token: &str) -> anyhow::Result<()> {
    tidegate_apiserver::tls::write_private(path, token)
        .with_context(|| format!("writing {}", path.display()))
}

/// A kube config for the service account `namespace/name` on the cluster of `admin_config`,
/// its token in `dir/<name>.token`, and the task that keeps the token fresh.
pub async fn service_account_config(
    admin: &Client,
    admin_config: &kube::Config,
    dir: &Path,
    namespace: &str,
    name: &str,
) -> anyhow::Result<(kube::Config, tokio::task::JoinHandle<()>)> {
    let path: PathBuf = dir.join(format!("{name}.token"));
    write_token(&path, &request(admin, namespace, name).await?)?;
    let mut config = admin_config.clone();
    config.auth_info = kube::config::AuthInfo {
        token_file: Some(path.display().to_string()),
        ..Default::default()
    };
    let (admin, namespace, name) = (admin.clone(), namespace.to_string(), name.to_string());
    let refresher = tokio::spawn(async move {
        loop {
            tokio::time::sleep(REFRESH).await;
            match request(&admin, &namespace, &name).await {
                Ok(token) => {
                    if let Err(e) = write_token(&path, &token) {
                        tracing::error!(error = %e, "keeping the controllers' token");
                    }
                }
                Err(e) => tracing::error!(error = %e, "refreshing the controllers' token"),
            }
        }
    });
    Ok((config, refresher))
}
