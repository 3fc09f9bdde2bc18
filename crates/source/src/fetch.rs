//! The consumer side: download an artifact, check its digest, extract it safely.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

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
    let download = |message: String| FetchError::Download {
        url: url.to_string(),
        message,
    };
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| download(e.to_string()))?;
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        return Err(FetchError::NotFound {
            url: url.to_string(),
        });
    }
    if !response.status().is_success() {
        return Err(download(format!("status {}", response.status())));
    }
    let mut file = tempfile::tempfile()?;
    let mut hasher = Sha256::new();
    let mut size: u64 = 0;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| download(e.to_string()))?
    {
        size += chunk.len() as u64;
        if size > limits.max_size {
            return Err(FetchError::TooLarge {
                url: url.to_string(),
                limit: limits.max_size,
            });
        }
        hasher.update(&chunk);
        file.write_all(&chunk)?;
    }
    let actual = format!("sha256:{}", hex(&hasher.finalize()));
    if actual != digest {
        return Err(FetchError::Digest {
            expected: digest.to_string(),
            actual,
        });
    }
    file.seek(SeekFrom::Start(0))?;
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        extract_tar_gz(std::io::BufReader::new(file), &dir, limits)
    })
    .await
    .map_err(|e| FetchError::Io(std::io::Error::other(e)))??;
    Ok(())
}
