//! A source's `proxySecretRef`: the proxy `address`, with `username` and `password` folded in.

use kube::Client;

/// The proxy URL of Secret `ns/name`: `address`, with `username:password@` added when both
/// are given. The error is Flux's (`invalid proxy secret '<ns>/<name>': key 'address' is
/// missing`) or the Secret read's.
pub(crate) async fn proxy_url(client: &Client, ns: &str, name: &str) -> Result<String, String> {
    let data = super::secret_data(client, ns, name).await?;
    let text = |k: &str| {
        data.get(k)
            .map(|v| String::from_utf8_lossy(v).trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let address = text("address")
        .ok_or_else(|| format!("invalid proxy secret '{ns}/{name}': key 'address' is missing"))?;
    Ok(
        match (
            text("username"),
            text("password"),
            address.split_once("://"),
        ) {
            (Some(u), Some(p), Some((scheme, rest))) => format!("{scheme}://{u}:{p}@{rest}"),
            _ => address,
        },
    )
}
