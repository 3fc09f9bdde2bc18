//! Registry credentials as Flux's controllers find them: a docker-config Secret named by the
//! object, then the image pull secrets of its service account; the first whose config has an
//! entry for the registry wins. Secrets of other types are skipped, as go-containerregistry's
//! keychain skips them.

use kube::{Api, Client};
use tidegate_source::oci;
use tidegate_source::oci::auth::Credentials;

/// The credentials for `registry_name` (`host/repository`) in namespace `ns`. Errors are
/// Flux's texts without their callers' prefixes.
pub(crate) async fn registry_credentials(
    client: &Client,
    ns: &str,
    secret_ref: Option<&str>,
    service_account: Option<&str>,
    registry_name: &str,
) -> Result<Credentials, String> {
    let mut pull_secrets: Vec<String> = secret_ref.map(str::to_string).into_iter().collect();
    if let Some(sa) = service_account.filter(|s| !s.is_empty()) {
        let api: Api<k8s_openapi::api::core::v1::ServiceAccount> =
            Api::namespaced(client.clone(), ns);
        let account = api.get(sa).await.map_err(|e| {
            let detail = match &e {
                kube::Error::Api(s) => s.message.clone(),
                other => other.to_string(),
            };
            format!("failed to get service account '{ns}/{sa}': {detail}")
        })?;
        pull_secrets.extend(
            account
                .image_pull_secrets
                .unwrap_or_default()
                .into_iter()
                .map(|r| r.name),
        );
    }
    for secret_name in &pull_secrets {
        let (kind, data) = super::secret(client, ns, secret_name).await?;
        let config = match kind.as_str() {
            "kubernetes.io/dockerconfigjson" => data.get(".dockerconfigjson"),
            "kubernetes.io/dockercfg" => data.get(".dockercfg"),
            _ => None,
        };
        let Some(config) = config else { continue };
        match oci::auth::from_docker_config(config, registry_name) {
            Ok(Some(c)) => return Ok(c),
            Ok(None) => {}
            Err(e) => return Err(format!("secret '{ns}/{secret_name}': {e}")),
        }
    }
    Ok(Credentials::Anonymous)
}
