//! The process-wide TLS crypto provider for the HTTP clients (Git over HTTPS, artifact
//! downloads, registries, chart repositories): ring, as everywhere else in Tidegate; and the
//! TLS and proxy settings those clients share.

/// Installs ring as the process's rustls provider unless one is installed already.
pub fn ensure_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
    });
}

/// An HTTP client for downloading artifacts: connections time out after 30 seconds (reads
/// are bounded by the callers, see [`crate::fetch`]).
pub fn http_client() -> reqwest::Client {
    ensure_provider();
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap_or_default()
}

/// Adds a source's TLS and proxy settings to `builder`: the PEM CA certificates `ca_pem`
/// trusted besides the system roots, the PEM certificate and key `client_pem` (a Secret's
/// `tls.crt` and `tls.key` joined) as the client identity, and `proxy` for every request.
/// Errors name the setting that does not parse.
pub fn configure(
    mut builder: reqwest::ClientBuilder,
    ca_pem: Option<&[u8]>,
    client_pem: Option<&[u8]>,
    proxy: Option<&str>,
) -> Result<reqwest::ClientBuilder, String> {
    if let Some(pem) = ca_pem {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| format!("invalid CA certificate: {e}"))?;
        if certs.is_empty() {
            return Err("invalid CA certificate: no PEM certificate found".into());
        }
        builder = builder.tls_certs_merge(certs);
    }
    if let Some(pem) = client_pem {
        let identity = reqwest::Identity::from_pem(pem)
            .map_err(|e| format!("invalid client certificate (tls.crt, tls.key): {e}"))?;
        builder = builder.identity(identity);
    }
    if let Some(proxy) = proxy {
        builder = builder
            .proxy(reqwest::Proxy::all(proxy).map_err(|e| format!("invalid proxy URL: {e}"))?);
    }
    Ok(builder)
}
