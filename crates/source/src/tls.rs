//! The process-wide TLS crypto provider for the HTTP clients (Git over HTTPS, artifact
//! downloads): ring, as everywhere else in Tidegate.

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
