//! The consumer side: download an artifact, check its digest, extract it safely.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};

use sha2::{Digest as _, Sha256};

use crate::archive::hex;
use crate::extract::{ExtractError, Limits, extract_tar_gz};

/// Why an artifact could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The download failed or the server answered with an error status.
    #[error("failed to download artifact from {url}: {message}")]
    Download {
        /// The artifact URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The server has no such artifact (HTTP 404): the source has not stored it (yet).
    #[error("failed to download artifact from {url}: artifact not found")]
    NotFound {
        /// The artifact URL.
        url: String,
    },
    /// The bytes do not have the expected digest.
    #[error(
        "failed to verify artifact: computed digest doesn't match '{expected}' (got '{actual}')"
    )]
    Digest {
        /// The digest the artifact should have.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// The download is larger than the limit.
    #[error("artifact from {url} exceeds the size limit of {limit} bytes")]
    TooLarge {
        /// The artifact URL.
        url: String,
        /// The limit.
        limit: u64,
    },
    /// The archive was refused or could not be extracted.
    #[error("failed to extract artifact: {0}")]
    Extract(#[from] ExtractError),
    /// A local file operation failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// How long a download may go without receiving a byte (connecting, waiting for the answer,
/// between chunks).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one download may take in all.
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(300);

/// Downloads `url` into memory and checks that its bytes have `digest` (`sha256:<hex>`),
/// holding the download to `max_size` bytes, [`IDLE_TIMEOUT`] without progress and
/// [`DOWNLOAD_TIMEOUT`] in all.
pub async fn download(
    client: &reqwest::Client,
    url: &str,
    digest: &str,
    max_size: u64,
) -> Result<Bytes, FetchError> {
    let download = |message: String| FetchError::Download {
        url: url.to_string(),
        message,
    };
    let timed_out = |what: &str, d: Duration| {
        download(format!(
            "{what} after {}",
            tidegate_core::duration::format(d)
        ))
    };
    let work = async {
        let mut response = tokio::time::timeout(IDLE_TIMEOUT, client.get(url).send())
            .await
            .map_err(|_| timed_out("no answer", IDLE_TIMEOUT))?
            .map_err(|e| download(e.to_string()))?;
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return Err(FetchError::NotFound {
                url: url.to_string(),
            });
        }
        if !response.status().is_success() {
            return Err(download(format!("status {}", response.status())));
        }
        if response.content_length().is_some_and(|n| n > max_size) {
            return Err(FetchError::TooLarge {
                url: url.to_string(),
                limit: max_size,
            });
        }
        let mut body = bytes::BytesMut::new();
        let mut hasher = Sha256::new();
        while let Some(chunk) = tokio::time::timeout(IDLE_TIMEOUT, response.chunk())
            .await
            .map_err(|_| timed_out("no data", IDLE_TIMEOUT))?
            .map_err(|e| download(e.to_string()))?
        {
            if (body.len() + chunk.len()) as u64 > max_size {
                return Err(FetchError::TooLarge {
                    url: url.to_string(),
                    limit: max_size,
                });
            }
            hasher.update(&chunk);
            body.extend_from_slice(&chunk);
        }
        let actual = format!("sha256:{}", hex(&hasher.finalize()));
        if actual != digest {
            return Err(FetchError::Digest {
                expected: digest.to_string(),
                actual,
            });
        }
        Ok(body.freeze())
    };
    tokio::time::timeout(DOWNLOAD_TIMEOUT, work)
        .await
        .map_err(|_| timed_out("not complete", DOWNLOAD_TIMEOUT))?
}

/// Extracts downloaded artifact bytes into `dir` within `limits`, off the async executor.
pub async fn extract_bytes(bytes: Bytes, dir: &Path, limits: Limits) -> Result<(), FetchError> {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || extract_tar_gz(std::io::Cursor::new(bytes), &dir, limits))
        .await
        .map_err(|e| FetchError::Io(std::io::Error::other(e)))??;
    Ok(())
}

/// Downloads `url`, checks that its bytes have `digest` (`sha256:<hex>`) and extracts it into
/// `dir` within `limits` (the compressed download is held to the same size limit). Nothing is
/// extracted unless the digest matches.
pub async fn fetch_artifact(
    client: &reqwest::Client,
    url: &str,
    digest: &str,
    dir: &Path,
    limits: Limits,
) -> Result<(), FetchError> {
    let bytes = download(client, url, digest, limits.max_size).await?;
    extract_bytes(bytes, dir, limits).await
}

/// One download, shared by everyone who asks for the same artifact while it runs.
type Flight = Shared<BoxFuture<'static, Result<Bytes, Arc<FetchError>>>>;

/// A download's result as a waiter sees it.
#[derive(Debug)]
pub enum Waited {
    /// The download finished.
    Done(Result<Bytes, Arc<FetchError>>),
    /// The download is still running after this long; ask again later.
    Pending(Duration),
}

/// Downloads artifacts for many consumers. Consumers of the same artifact (URL and digest)
/// share one download; downloads run on their own tasks, and a consumer waits for one at most
/// a given time, so a source that is slow or never answers holds no consumer (and no reconcile
/// worker) longer than that. A finished download is kept for [`Fetcher::KEEP`] for the
/// consumers that come back for it.
pub struct Fetcher {
    client: reqwest::Client,
    max_size: u64,
    flights: Mutex<HashMap<String, (Instant, Flight)>>,
}

impl Fetcher {
    /// How long a finished download stays available.
    pub const KEEP: Duration = Duration::from_secs(60);

    /// A fetcher downloading with `client`, each artifact held to `max_size` bytes.
    pub fn new(client: reqwest::Client, max_size: u64) -> Fetcher {
        Fetcher {
            client,
            max_size,
            flights: Mutex::default(),
        }
    }

    /// The artifact at `url` with `digest`: from a finished or running download, or a new one.
    /// Waits at most `wait` measured from when the download started, so a consumer joining a
    /// download that has run longer than that does not wait at all.
    pub async fn get(&self, url: &str, digest: &str, wait: Duration) -> Waited {
        let key = format!("{digest} {url}");
        let (started, flight) = {
            let mut flights = self.flights.lock().unwrap_or_else(|e| e.into_inner());
            // Finished downloads go after a while; failed ones at once (a retry downloads anew).
            flights.retain(|_, (started, f)| match f.peek() {
                None => true,
                Some(Ok(_)) => started.elapsed() < Self::KEEP,
                Some(Err(_)) => false,
            });
            flights
                .entry(key)
                .or_insert_with(|| {
                    let client = self.client.clone();
                    let (url, digest, max) = (url.to_string(), digest.to_string(), self.max_size);
                    let task = tokio::spawn(async move {
                        download(&client, &url, &digest, max)
                            .await
                            .map_err(Arc::new)
                    });
                    let flight: Flight = async move {
                        task.await.unwrap_or_else(|e| {
                            Err(Arc::new(FetchError::Io(std::io::Error::other(e))))
                        })
                    }
                    .boxed()
                    .shared();
                    (Instant::now(), flight)
                })
                .clone()
        };
        let budget = wait.saturating_sub(started.elapsed());
        match tokio::time::timeout(budget, flight).await {
            Ok(result) => Waited::Done(result),
            Err(_) => Waited::Pending(started.elapsed()),
        }
    }
}
