//! S3-compatible buckets, as Flux's Bucket source reads them with its `generic` provider:
//! whether the bucket exists, every object under a prefix with its ETag (quotes removed, as
//! minio-go gives it), Flux's revision over that listing, and downloads. Requests are signed
//! with AWS Signature V4 in the `Authorization` header, as minio-go signs them (listings are
//! parsed by `rusty-s3`), and sent with the caller's HTTP client, so TLS
//! and proxy settings are the caller's.

use std::collections::BTreeMap;

use rusty_s3::actions::ListObjectsV2;
use sha2::{Digest, Sha256};

/// Where a bucket is and how to reach it.
#[derive(Debug, Clone)]
pub struct BucketOptions {
    /// `host[:port]` (Flux's `spec.endpoint`, no scheme); a scheme is accepted too.
    pub endpoint: String,
    /// Plain HTTP (`spec.insecure`).
    pub insecure: bool,
    /// `spec.bucketName`.
    pub bucket: String,
    /// `spec.region` (default `us-east-1`).
    pub region: String,
    /// `accesskey` and `secretkey` of `spec.secretRef`; anonymous when absent.
    pub credentials: Option<(String, String)>,
}

/// A bucket request failed.
#[derive(Debug, thiserror::Error)]
pub enum BucketError {
    /// The endpoint or bucket name cannot form a URL.
    #[error("invalid bucket endpoint '{0}': {1}")]
    Endpoint(String, String),
    /// The request did not complete.
    #[error("{0}")]
    Transport(String),
    /// The server answered with an error status.
    #[error("{operation}: {status}{detail}")]
    Status {
        /// What was asked.
        operation: String,
        /// The HTTP status.
        status: u16,
        /// S3's error code and message, when the body has them.
        detail: String,
    },
    /// A listing did not parse.
    #[error("failed to parse the object listing: {0}")]
    Listing(String),
    /// An object is larger than allowed.
    #[error("object '{0}' is larger than {1} bytes")]
    TooLarge(String, u64),
    /// The objects together are larger than allowed.
    #[error("the objects are larger than {0} bytes in total")]
    TotalTooLarge(u64),
    /// A key that cannot be a path inside the download directory.
    #[error("invalid object key")]
    InvalidKey,
    /// Writing the object failed.
    #[error("writing the object: {0}")]
    Write(String),
}

impl BucketError {
    /// The HTTP status of the answer, when the server gave one.
    pub fn status(&self) -> Option<u16> {
        match self {
            BucketError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// A client for one bucket.
pub struct BucketClient {
    /// `scheme://host[:port]`, no trailing slash.
    base: url::Url,
    /// The `host` header as signed (`host[:port]`).
    host: String,
    bucket: String,
    region: String,
    credentials: Option<(String, String)>,
    http: reqwest::Client,
}

/// An object key as a URL path: each segment URI-encoded, `/` kept (path style).
fn key_path(key: &str) -> String {
    key.split('/')
        .map(|s| percent_encoding::utf8_percent_encode(s, PATH_SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// SigV4's URI encoding of a path segment.
const PATH_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

impl BucketClient {
    /// A client for `options`, sending with `http`.
    pub fn new(
        options: &BucketOptions,
        http: reqwest::Client,
    ) -> Result<BucketClient, BucketError> {
        let endpoint = if options.endpoint.contains("://") {
            options.endpoint.clone()
        } else {
            let scheme = if options.insecure { "http" } else { "https" };
            format!("{scheme}://{}", options.endpoint)
        };
        let invalid = |m: String| BucketError::Endpoint(options.endpoint.clone(), m);
        let base = url::Url::parse(&endpoint).map_err(|e| invalid(e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(invalid(format!("unsupported scheme '{}'", base.scheme())));
        }
        let Some(host) = base.host_str() else {
            return Err(invalid("no host".to_string()));
        };
        let host = match base.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        if options.bucket.is_empty() || options.bucket.contains('/') {
            return Err(invalid(format!("invalid bucket name '{}'", options.bucket)));
        }
        let region = if options.region.is_empty() {
            "us-east-1".to_string()
        } else {
            options.region.clone()
        };
        Ok(BucketClient {
            base,
            host,
            bucket: options.bucket.clone(),
            region,
            credentials: options.credentials.clone(),
            http,
        })
    }

    /// A signed GET of `path` (under the bucket) with `query` pairs.
    async fn send(
        &self,
        operation: &str,
        key: Option<&str>,
        query: &[(&str, &str)],
    ) -> Result<reqwest::Response, BucketError> {
        // Path style works with every S3-compatible server; AWS still serves it.
        let mut path = format!("/{}", key_path(&self.bucket));
        if let Some(k) = key {
            path.push('/');
            path.push_str(&key_path(k));
        }
        let query = crate::sigv4::canonical_query(query);
        let mut url = format!("{}://{}{}", self.base.scheme(), self.host, path);
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query);
        }
        let mut request = self.http.get(&url);
        if let Some((access, secret)) = &self.credentials {
            let now = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
            let signed = crate::sigv4::sign(
                "GET",
                &self.host,
                &path,
                &query,
                &now,
                &self.region,
                access,
                secret,
            );
            request = request
                .header("x-amz-date", signed.amz_date)
                .header("x-amz-content-sha256", signed.content_sha256)
                .header("authorization", signed.authorization);
        }
        let response = request
            .send()
            .await
            .map_err(|e| BucketError::Transport(format!("{operation}: {e}")))?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status().as_u16();
        let body = response.text().await.unwrap_or_default();
        Err(BucketError::Status {
            operation: operation.to_string(),
            status,
            detail: s3_error(&body),
        })
    }

    /// Whether the bucket exists (a 404 is `false`; other failures are errors).
    pub async fn exists(&self) -> Result<bool, BucketError> {
        // A HEAD has no body to explain a refusal; listing one key says why.
        let query = [("list-type", "2"), ("max-keys", "1")];
        match self.send("bucket exists", None, &query).await {
            Ok(_) => Ok(true),
            Err(e) if e.status() == Some(404) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Every object below `prefix` with its ETag (quotes removed), all pages.
    pub async fn list(&self, prefix: &str) -> Result<BTreeMap<String, String>, BucketError> {
        let mut out = BTreeMap::new();
        let mut token: Option<String> = None;
        loop {
            let mut query = vec![("list-type", "2")];
            if !prefix.is_empty() {
                query.push(("prefix", prefix));
            }
            if let Some(t) = &token {
                query.push(("continuation-token", t.as_str()));
            }
            let body = self
                .send("listing objects", None, &query)
                .await?
                .text()
                .await
                .map_err(|e| BucketError::Transport(format!("listing objects: {e}")))?;
            let page = ListObjectsV2::parse_response(&body)
                .map_err(|e| BucketError::Listing(e.to_string()))?;
            for c in page.contents {
                let etag = c.etag.unwrap_or_default();
                out.insert(c.key, etag.trim_matches('"').to_string());
            }
            match page.next_continuation_token {
                Some(t) => token = Some(t),
                None => return Ok(out),
            }
        }
    }

    /// The object `key`, at most `limit` bytes; `None` when it does not exist.
    pub async fn get(&self, key: &str, limit: u64) -> Result<Option<Vec<u8>>, BucketError> {
        let operation = format!("downloading object '{key}'");
        let mut response = match self.send(&operation, Some(key), &[]).await {
            Ok(r) => r,
            Err(e) if e.status() == Some(404) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| BucketError::Transport(format!("{operation}: {e}")))?
        {
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(BucketError::TooLarge(key.to_string(), limit));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Some(body))
    }
}

impl BucketClient {
    /// Downloads every object of `index` into `dir`, each at its key, `concurrency` at once
    /// and at most `max_total` bytes together. Returns the index without the objects that
    /// vanished since the listing; the first failure names its key.
    pub async fn fetch_all(
        &self,
        index: &BTreeMap<String, String>,
        dir: &std::path::Path,
        concurrency: usize,
        max_total: u64,
    ) -> Result<BTreeMap<String, String>, (String, BucketError)> {
        use futures::StreamExt;
        use std::sync::atomic::{AtomicU64, Ordering};
        let total = AtomicU64::new(0);
        let results: Vec<Result<Option<String>, (String, BucketError)>> =
            futures::stream::iter(index.keys().cloned())
                .map(|key: String| {
                    let total = &total;
                    async move {
                        let fail = |e: BucketError| (key.clone(), e);
                        let target = crate::tree::safe_join(dir, &key)
                            .ok_or_else(|| fail(BucketError::InvalidKey))?;
                        let remaining = max_total.saturating_sub(total.load(Ordering::Relaxed));
                        let Some(data) = self.get(&key, remaining).await.map_err(fail)? else {
                            return Ok(Some(key.clone()));
                        };
                        let before = total.fetch_add(data.len() as u64, Ordering::Relaxed);
                        if before + data.len() as u64 > max_total {
                            return Err(fail(BucketError::TotalTooLarge(max_total)));
                        }
                        if let Some(parent) = target.parent() {
                            tokio::fs::create_dir_all(parent)
                                .await
                                .map_err(|e| fail(BucketError::Write(e.to_string())))?;
                        }
                        tokio::fs::write(&target, &data)
                            .await
                            .map_err(|e| fail(BucketError::Write(e.to_string())))?;
                        Ok(None)
                    }
                })
                .buffer_unordered(concurrency.max(1))
                .collect()
                .await;
        let mut fetched = index.clone();
        for r in results {
            if let Some(gone) = r? {
                fetched.remove(&gone);
            }
        }
        Ok(fetched)
    }
}

/// `: <Code>: <Message>` from an S3 error body, or nothing.
fn s3_error(body: &str) -> String {
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let start = body.find(&open)? + open.len();
        let end = body[start..].find(&close)? + start;
        Some(body[start..end].to_string())
    };
    match (tag("Code"), tag("Message")) {
        (Some(c), Some(m)) => format!(" {c}: {m}"),
        (Some(c), None) => format!(" {c}"),
        _ => String::new(),
    }
}

/// Flux's Bucket revision: `sha256:` and the hex SHA-256 of `"<key> <etag>\n"` for every
/// object, keys in ascending order.
pub fn revision(index: &BTreeMap<String, String>) -> String {
    let mut h = Sha256::new();
    for (key, etag) in index {
        h.update(key.as_bytes());
        h.update(b" ");
        h.update(etag.as_bytes());
        h.update(b"\n");
    }
    format!("sha256:{:x}", h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of Flux's `internal/index` digest: lines sorted by key.
    #[test]
    fn revision_hashes_sorted_key_etag_lines() {
        let mut index = BTreeMap::new();
        index.insert("dir/b.yaml".to_string(), "e2".to_string());
        index.insert("a.yaml".to_string(), "e1".to_string());
        let mut h = Sha256::new();
        h.update(b"a.yaml e1\ndir/b.yaml e2\n");
        assert_eq!(revision(&index), format!("sha256:{:x}", h.finalize()));
        assert_eq!(
            revision(&BTreeMap::new()),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn s3_error_bodies_are_summarized() {
        let body = "<?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>";
        assert_eq!(
            s3_error(body),
            " NoSuchBucket: The specified bucket does not exist"
        );
        assert_eq!(s3_error("nothing"), "");
    }
}
