//! How an ImageRepository reaches its registry: credentials from `secretRef` and the service
//! account's image pull secrets, the CA of `certSecretRef`, the proxy of `proxySecretRef`,
//! plain HTTP with `insecure`, bounded by `timeout` (default: the interval).

use std::time::Duration;

use kube::{Client, ResourceExt};
use tidegate_api::ImageRepository;
use tidegate_source::image::reference::ImageRef;
use tidegate_source::oci;

/// `spec.timeout`, else `spec.interval`, at least a second (Flux's `GetTimeout`).
pub(super) fn timeout(obj: &ImageRepository) -> Duration {
    let parse = |s: &str| tidegate_core::duration::parse(s).ok();
    obj.spec
        .timeout
        .as_deref()
        .and_then(parse)
        .or_else(|| parse(&obj.spec.interval))
        .unwrap_or(Duration::from_secs(60))
        .max(Duration::from_secs(1))
}

/// The registry options, or the error Flux words as `failed to configure authentication
/// options: …`.
pub(super) async fn options(
    client: &Client,
    obj: &ImageRepository,
    image: &ImageRef,
) -> Result<oci::Options, String> {
    let spec = &obj.spec;
    let ns = obj.namespace().unwrap_or_default();
    if let Some(p) = spec.provider.as_deref().filter(|p| *p != "generic") {
        return Err(format!(
            "provider '{p}' is not supported by Tidegate: use a secretRef with registry credentials"
        ));
    }
    let credentials = crate::source::pull_secrets::registry_credentials(
        client,
        &ns,
        spec.secret_ref.as_ref().map(|r| r.name.as_str()),
        spec.service_account_name.as_deref(),
        &image.oci_repository().name(),
    )
    .await?;
    let mut ca_pem = None;
    let mut client_pem = None;
    if let Some(r) = &spec.cert_secret_ref {
        let data = crate::source::secret_data(client, &ns, &r.name).await?;
        client_pem = crate::source::client_pem(&data).map_err(|()| {
            format!(
                "secret '{ns}/{}' must contain both 'tls.crt' and 'tls.key'",
                r.name
            )
        })?;
        ca_pem = data.get("ca.crt").cloned();
        if ca_pem.is_none() && client_pem.is_none() {
            return Err("no CA certificate or client certificate pair found".into());
        }
    }
    let mut proxy = None;
    if let Some(r) = &spec.proxy_secret_ref {
        proxy = Some(crate::source::proxy::proxy_url(client, &ns, &r.name).await?);
    }
    Ok(oci::Options {
        credentials,
        insecure: spec.insecure.unwrap_or(false),
        ca_pem,
        client_pem,
        timeout: timeout(obj),
        proxy,
        user_agent: "tidegate/image-reflector-controller",
    })
}
