//! Downloading a Helm repository's `index.yaml` over HTTP(S): basic auth, a CA and a client
//! certificate, a timeout, and a size cap enforced while reading.

use std::time::Duration;

use futures::StreamExt;

/// How to reach a chart repository.
#[derive(Clone, Default)]
pub struct HttpOptions {
    /// Basic auth `(username, password)`.
    pub basic_auth: Option<(String, String)>,
    /// PEM CA certificates trusted besides the system roots.
    pub ca_pem: Option<Vec<u8>>,
    /// PEM client certificate and key (`tls.crt` + `tls.key`).
    pub client_pem: Option<Vec<u8>>,
    /// Skip certificate verification.
    pub insecure_skip_verify: bool,
    /// Timeout of the whole download.
    pub timeout: Duration,
    /// A proxy for every request (`http://user:pass@host:port`).
    pub proxy: Option<String>,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field(
                "basic_auth",
                &self.basic_auth.as_ref().map(|(u, _)| (u, "***")),
            )
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Why an index could not be downloaded. Messages never hold credentials.
#[derive(Debug, thiserror::Error)]
pub enum IndexFetchError {
    /// The TLS or client settings are unusable.
    #[error("{0}")]
    Config(String),
    /// The server answered with an error status.
    #[error("failed to fetch {url} : {status}")]
    Status {
        /// The URL.
        url: String,
        /// `401 Unauthorized`, …
        status: String,
    },
    /// The index is larger than allowed.
    #[error("index exceeds the maximum index file size of {0} bytes")]
    TooLarge(u64),
    /// The connection or the transfer failed.
    #[error("{0}")]
    Transfer(String),
}

/// The URL of a repository's index: `<url>/index.yaml`, keeping any query string.
pub fn index_url(repo_url: &str) -> String {
    let (base, query) = match repo_url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (repo_url, None),
    };
    let mut out = format!("{}/index.yaml", base.trim_end_matches('/'));
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// A client for chart repository downloads with `options`' TLS settings.
pub fn client(options: &HttpOptions) -> Result<reqwest::Client, IndexFetchError> {
    crate::tls::ensure_provider();
    let builder = reqwest::Client::builder()
        .connect_timeout(options.timeout.min(Duration::from_secs(30)))
        .user_agent("tidegate/source-controller")
        .danger_accept_invalid_certs(options.insecure_skip_verify);
    crate::tls::configure(
        builder,
        options.ca_pem.as_deref(),
        options.client_pem.as_deref(),
        options.proxy.as_deref(),
    )
    .map_err(IndexFetchError::Config)?
    .build()
    .map_err(|e| IndexFetchError::Config(e.to_string()))
}

fn root_cause(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

/// Downloads `url` whole, refusing more than `limit` bytes (early when `Content-Length` says
/// so), within `options.timeout`.
pub async fn download(
    client: &reqwest::Client,
    url: &str,
    options: &HttpOptions,
    limit: u64,
) -> Result<Vec<u8>, IndexFetchError> {
    let work = async {
        let mut req = client.get(url);
        if let Some((u, p)) = &options.basic_auth {
            req = req.basic_auth(u, Some(p));
        }
        let resp = req
            .send()
            .await
            .map_err(|e| IndexFetchError::Transfer(root_cause(&e)))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(IndexFetchError::Status {
                url: url.to_string(),
                status: status.to_string(),
            });
        }
        if resp.content_length().is_some_and(|n| n > limit) {
            return Err(IndexFetchError::TooLarge(limit));
        }
        let mut body = Vec::new();
        let mut stream = resp.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| IndexFetchError::Transfer(root_cause(&e)))?;
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(IndexFetchError::TooLarge(limit));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    };
    match tokio::time::timeout(options.timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(IndexFetchError::Transfer(format!(
            "timeout after {:?} downloading {url}",
            options.timeout
        ))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn index_urls() {
        assert_eq!(
            super::index_url("https://charts.example.com"),
            "https://charts.example.com/index.yaml"
        );
        assert_eq!(
            super::index_url("https://charts.example.com/sub/"),
            "https://charts.example.com/sub/index.yaml"
        );
        assert_eq!(
            super::index_url("https://h/x?token=1"),
            "https://h/x/index.yaml?token=1"
        );
    }
}
