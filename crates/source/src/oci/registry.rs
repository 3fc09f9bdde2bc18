//! Talking to an OCI distribution registry: tags, digests, manifests, blobs, pushes and tags,
//! over the `oci-client` crate. Plain HTTP is chosen the way go-containerregistry chooses it:
//! HTTPS first, HTTP as a fallback only for `insecure` repositories, `localhost`, loopback and
//! private (RFC 1918) addresses.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::auth::Credentials;
use super::reference::Repository;

/// OCI image manifest media type.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// Docker image manifest (schema 2) media type, accepted on reads.
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Flux's artifact config media type.
pub const FLUX_CONFIG: &str = "application/vnd.cncf.flux.config.v1+json";
/// Flux's artifact content (layer) media type.
pub const FLUX_CONTENT: &str = "application/vnd.cncf.flux.content.v1.tar+gzip";
/// Helm chart content layer media type.
pub const HELM_CHART_CONTENT: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/// The config blob `flux push artifact` uploads (go-containerregistry's empty image config,
/// which it keeps as-is for non-image config media types).
pub const FLUX_CONFIG_BLOB: &str = r#"{"architecture":"","created":"0001-01-01T00:00:00Z","os":"","rootfs":{"type":"layers","diff_ids":null},"config":{}}"#;

/// The most a manifest may weigh (the distribution registry's own limit).
pub const MAX_MANIFEST_BYTES: usize = 4 << 20;

/// A registry operation that failed. Messages never hold credentials.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The registry refused the credentials (or their absence).
    #[error("{0}")]
    Unauthorized(String),
    /// The tag, digest or repository does not exist.
    #[error("{0}")]
    NotFound(String),
    /// Anything else the registry or the connection answered.
    #[error("{0}")]
    Other(String),
    /// The manifest is not an image manifest.
    #[error("{0}")]
    Manifest(String),
    /// A blob larger than allowed, or not matching its digest.
    #[error("{0}")]
    Blob(String),
    /// The operation did not finish in time.
    #[error("timeout after {0:?}")]
    Timeout(Duration),
}

fn classify(e: oci_client::errors::OciDistributionError) -> RegistryError {
    use oci_client::errors::OciDistributionError as E;
    let text = e.to_string().trim().replace('\n', " ");
    match &e {
        E::AuthenticationFailure(_) | E::UnauthorizedError { .. } => {
            RegistryError::Unauthorized(text)
        }
        E::ImageManifestNotFoundError(_) => RegistryError::NotFound(text),
        E::RegistryError { envelope, .. }
            if envelope
                .errors
                .iter()
                .any(|x| matches!(format!("{:?}", x.code).as_str(), "Unauthorized" | "Denied")) =>
        {
            RegistryError::Unauthorized(text)
        }
        E::RegistryError { envelope, .. }
            if envelope
                .errors
                .iter()
                .any(|x| format!("{:?}", x.code).ends_with("Unknown")) =>
        {
            RegistryError::NotFound(text)
        }
        _ => RegistryError::Other(text),
    }
}

/// How to reach a registry.
#[derive(Debug, Clone)]
pub struct Options {
    /// Credentials.
    pub credentials: Credentials,
    /// Allow plain HTTP, and skip TLS verification when no CA is given (`spec.insecure`,
    /// `--insecure-registry`).
    pub insecure: bool,
    /// PEM certificates trusted besides the system roots (`ca.crt`).
    pub ca_pem: Option<Vec<u8>>,
    /// Timeout of each connection attempt and read.
    pub timeout: Duration,
    /// Proxy URL for every request.
    pub proxy: Option<String>,
    /// The `User-Agent` sent.
    pub user_agent: &'static str,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            credentials: Credentials::Anonymous,
            insecure: false,
            ca_pem: None,
            timeout: Duration::from_secs(60),
            proxy: None,
            user_agent: "tidegate",
        }
    }
}

/// An image manifest as read: the raw bytes, their digest and the parsed form.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The bytes as served.
    pub raw: Bytes,
    /// `sha256:<hex>` of [`Manifest::raw`].
    pub digest: String,
    /// The media type the registry served it as.
    pub media_type: String,
    /// The parsed manifest.
    pub image: ImageManifest,
}

/// The fields of an image manifest Tidegate reads.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageManifest {
    /// `2`.
    #[serde(default)]
    pub schema_version: u32,
    /// The manifest's own media type, when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The config blob.
    pub config: Descriptor,
    /// The layers, in order.
    #[serde(default)]
    pub layers: Vec<Descriptor>,
    /// Annotations (`org.opencontainers.image.*`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// A content descriptor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// Media type.
    pub media_type: String,
    /// Size in bytes.
    pub size: u64,
    /// `sha256:<hex>`.
    pub digest: String,
    /// Annotations (cosign keeps its signature here).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// A connection to one repository of a registry.
pub struct Registry {
    client: Client,
    repo: Repository,
    timeout: Duration,
}

/// Whether go-containerregistry would fall back to HTTP for this registry without `insecure`.
fn http_allowed_by_default(registry: &str) -> bool {
    let host = match registry.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => registry,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => v4.is_loopback() || v4.is_private(),
        Ok(std::net::IpAddr::V6(v6)) => v6.is_loopback(),
        Err(_) => false,
    }
}

fn sha256_hex(data: &[u8]) -> String {
    format!("sha256:{}", crate::archive::hex(&Sha256::digest(data)))
}

impl Registry {
    /// Connects to `repo`: decides between HTTPS and HTTP (one ping of `/v2/`) and sets up
    /// the credentials.
    pub async fn connect(repo: &Repository, options: &Options) -> Result<Registry, RegistryError> {
        crate::tls::ensure_provider();
        let mut roots = Vec::new();
        if let Some(pem) = &options.ca_pem {
            roots.push(Certificate {
                encoding: CertificateEncoding::Pem,
                data: pem.clone(),
            });
        }
        let skip_verify = options.insecure && options.ca_pem.is_none();
        let https = ping("https", &repo.registry, options, skip_verify).await;
        let protocol = match https {
            Ok(_) => ClientProtocol::Https,
            Err(e) if options.insecure || http_allowed_by_default(&repo.registry) => {
                // HTTP only when the registry answers there as a registry does (200 or 401);
                // otherwise the HTTPS failure is the one to report.
                match ping("http", &repo.registry, options, false).await {
                    Ok(200 | 401) => {
                        tracing::debug!(registry = repo.registry, error = %e, "HTTPS ping failed, using HTTP");
                        ClientProtocol::Http
                    }
                    // It speaks HTTP but is failing: its answer says more than the TLS error.
                    Ok(code) if code >= 500 => {
                        return Err(RegistryError::Other(format!(
                            "GET http://{}/v2/: unexpected status code {code} {}",
                            repo.registry,
                            reqwest::StatusCode::from_u16(code)
                                .ok()
                                .and_then(|c| c.canonical_reason())
                                .unwrap_or_default()
                        )));
                    }
                    _ => return Err(RegistryError::Other(e)),
                }
            }
            Err(e) => return Err(RegistryError::Other(e)),
        };
        let config = ClientConfig {
            protocol,
            accept_invalid_certificates: skip_verify,
            extra_root_certificates: roots,
            read_timeout: Some(options.timeout),
            connect_timeout: Some(options.timeout),
            user_agent: options.user_agent,
            https_proxy: options.proxy.clone(),
            http_proxy: options.proxy.clone(),
            platform_resolver: None,
            ..Default::default()
        };
        let client = Client::new(config);
        let auth = match &options.credentials {
            Credentials::Anonymous => RegistryAuth::Anonymous,
            Credentials::Basic { username, password } => {
                RegistryAuth::Basic(username.clone(), password.clone())
            }
            Credentials::Bearer(t) => RegistryAuth::Bearer(t.clone()),
        };
        client.store_auth_if_needed(&repo.registry, &auth).await;
        Ok(Registry {
            client,
            repo: repo.clone(),
            timeout: options.timeout,
        })
    }

    /// The repository.
    pub fn repository(&self) -> &Repository {
        &self.repo
    }

    async fn timed<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, RegistryError>>,
    ) -> Result<T, RegistryError> {
        // Each request is bounded by the client's timeouts; this bounds the whole exchange
        // (token round trips, pagination) at a few times that.
        let limit = self.timeout.saturating_mul(4);
        tokio::time::timeout(limit, f)
            .await
            .unwrap_or(Err(RegistryError::Timeout(limit)))
    }

    /// Every tag of the repository, in the registry's order.
    pub async fn list_tags(&self) -> Result<Vec<String>, RegistryError> {
        self.timed(async {
            let probe = self.repo.tag("latest");
            let mut tags: Vec<String> = Vec::new();
            let mut seen: std::collections::HashSet<String> = Default::default();
            let page = 1000;
            loop {
                let last = tags.last().cloned();
                let resp = self
                    .client
                    .list_tags(
                        &probe,
                        &RegistryAuth::Anonymous,
                        Some(page),
                        last.as_deref(),
                    )
                    .await
                    .map_err(classify)?;
                let n = resp.tags.len();
                let mut added = 0;
                for t in resp.tags {
                    if seen.insert(t.clone()) {
                        tags.push(t);
                        added += 1;
                    }
                }
                // A short page is the last. A registry that ignores `n` (Debian's
                // docker-registry does) returns everything at once; one that ignores `last`
                // repeats itself: stop when a page is longer than asked or adds nothing.
                if n != page || added == 0 {
                    break;
                }
            }
            Ok(tags)
        })
        .await
    }

    /// The manifest digest a reference resolves to (`HEAD`, falling back to `GET`).
    pub async fn digest(&self, reference: &Reference) -> Result<String, RegistryError> {
        if let Some(d) = reference.digest() {
            return Ok(d.to_string());
        }
        self.timed(async {
            self.client
                .fetch_manifest_digest(reference, &RegistryAuth::Anonymous)
                .await
                .map_err(classify)
        })
        .await
    }

    /// The image manifest at `reference` (an OCI or Docker schema 2 manifest; an index is
    /// refused).
    pub async fn manifest(&self, reference: &Reference) -> Result<Manifest, RegistryError> {
        let (raw, _) = self
            .timed(async {
                self.client
                    .pull_manifest_raw(
                        reference,
                        &RegistryAuth::Anonymous,
                        &[OCI_MANIFEST, DOCKER_MANIFEST],
                    )
                    .await
                    .map_err(classify)
            })
            .await?;
        if raw.len() > MAX_MANIFEST_BYTES {
            return Err(RegistryError::Manifest(format!(
                "manifest of {} bytes exceeds the limit of {MAX_MANIFEST_BYTES} bytes",
                raw.len()
            )));
        }
        let digest = sha256_hex(&raw);
        if let Some(want) = reference.digest()
            && want != digest
        {
            return Err(RegistryError::Manifest(format!(
                "manifest digest {digest} does not match {want}"
            )));
        }
        let image: ImageManifest = serde_json::from_slice(&raw)
            .map_err(|e| RegistryError::Manifest(format!("not an image manifest: {e}")))?;
        let media_type = image
            .media_type
            .clone()
            .unwrap_or_else(|| OCI_MANIFEST.to_string());
        if media_type != OCI_MANIFEST && media_type != DOCKER_MANIFEST {
            return Err(RegistryError::Manifest(format!(
                "unsupported manifest media type '{media_type}'"
            )));
        }
        Ok(Manifest {
            raw,
            digest,
            media_type,
            image,
        })
    }

    /// The blob `desc` describes, whole, refused beyond `limit` bytes and checked against its
    /// digest.
    pub async fn blob(&self, desc: &Descriptor, limit: u64) -> Result<Bytes, RegistryError> {
        if desc.size > limit {
            return Err(RegistryError::Blob(format!(
                "blob {} of {} bytes exceeds the limit of {limit} bytes",
                desc.digest, desc.size
            )));
        }
        let reference = self.repo.digest(&desc.digest);
        self.timed(async {
            let mut stream = self
                .client
                .pull_blob_stream(&reference, desc.digest.as_str())
                .await
                .map_err(classify)?;
            let mut data = Vec::with_capacity(desc.size as usize);
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| {
                    RegistryError::Blob(format!("reading blob {}: {e}", desc.digest))
                })?;
                if data.len() as u64 + chunk.len() as u64 > limit.min(desc.size) {
                    return Err(RegistryError::Blob(format!(
                        "blob {} is larger than its descriptor's {} bytes",
                        desc.digest, desc.size
                    )));
                }
                data.extend_from_slice(&chunk);
            }
            let got = sha256_hex(&data);
            if got != desc.digest {
                return Err(RegistryError::Blob(format!(
                    "blob digest {got} does not match {}",
                    desc.digest
                )));
            }
            Ok(Bytes::from(data))
        })
        .await
    }

    /// Pushes a Flux artifact (Flux's config blob, one `layer` of `layer_media_type`, the
    /// manifest `annotations`) and tags it `tag`; returns the manifest digest.
    pub async fn push_artifact(
        &self,
        tag: &str,
        layer: Bytes,
        layer_media_type: &str,
        annotations: &BTreeMap<String, String>,
    ) -> Result<String, RegistryError> {
        self.push_image(
            tag,
            (FLUX_CONFIG, Bytes::from_static(FLUX_CONFIG_BLOB.as_bytes())),
            vec![(layer_media_type.to_string(), BTreeMap::new(), layer)],
            annotations,
        )
        .await
    }

    /// Pushes an OCI image manifest with `config` (media type, bytes) and `layers` (media
    /// type, layer annotations, bytes), tagged `tag`; blobs already there are not sent
    /// again. Returns the manifest digest.
    pub async fn push_image(
        &self,
        tag: &str,
        config: (&str, Bytes),
        layers: Vec<(String, BTreeMap<String, String>, Bytes)>,
        annotations: &BTreeMap<String, String>,
    ) -> Result<String, RegistryError> {
        let reference = self.repo.tag(tag);
        let descriptor =
            |media_type: &str, data: &Bytes, annotations: BTreeMap<String, String>| Descriptor {
                media_type: media_type.to_string(),
                size: data.len() as u64,
                digest: sha256_hex(data),
                annotations,
            };
        let manifest = ImageManifest {
            schema_version: 2,
            media_type: Some(OCI_MANIFEST.to_string()),
            config: descriptor(config.0, &config.1, BTreeMap::new()),
            layers: layers
                .iter()
                .map(|(m, a, d)| descriptor(m, d, a.clone()))
                .collect(),
            annotations: annotations.clone(),
        };
        let raw = go_json(&manifest)?;
        for data in layers.into_iter().map(|(_, _, d)| d).chain([config.1]) {
            self.push_blob(data).await?;
        }
        self.timed(self.put_manifest(&reference, raw.clone(), OCI_MANIFEST))
            .await?;
        Ok(sha256_hex(&raw))
    }

    async fn put_manifest(
        &self,
        reference: &Reference,
        raw: Bytes,
        media_type: &str,
    ) -> Result<(), RegistryError> {
        let content_type = http::HeaderValue::from_str(media_type)
            .map_err(|_| RegistryError::Manifest(format!("invalid media type '{media_type}'")))?;
        self.client
            .push_manifest_raw(reference, raw, content_type)
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// The manifests that refer to `digest` (OCI 1.1 referrers: the registry's API, else the
    /// `sha256-<hex>` tag schema), as `(manifest digest, artifact type)`; none when the
    /// registry knows of none.
    pub async fn referrers(&self, digest: &str) -> Result<Vec<(String, String)>, RegistryError> {
        let reference = self.repo.digest(digest);
        let index = self
            .timed(async {
                self.client
                    .pull_referrers(&reference, None)
                    .await
                    .map_err(classify)
            })
            .await?;
        Ok(index
            .manifests
            .into_iter()
            .map(|m| (m.digest, m.artifact_type.unwrap_or_default()))
            .collect())
    }

    /// Uploads `data` as a blob (when not there yet); returns its digest.
    pub async fn push_blob(&self, data: Bytes) -> Result<String, RegistryError> {
        let digest = sha256_hex(&data);
        let reference = self.repo.tag("blob");
        self.timed(async {
            let exists = self
                .client
                .blob_exists(&reference, &digest)
                .await
                .unwrap_or(false);
            if !exists {
                self.client
                    .push_blob(&reference, data, &digest)
                    .await
                    .map_err(classify)?;
            }
            Ok(())
        })
        .await?;
        Ok(digest)
    }

    /// Stores the manifest bytes `raw` (of `media_type`) under `tag`, or under their digest
    /// when `tag` is `None`; returns the digest.
    pub async fn push_manifest_bytes(
        &self,
        tag: Option<&str>,
        raw: Bytes,
        media_type: &str,
    ) -> Result<String, RegistryError> {
        let digest = sha256_hex(&raw);
        let reference = match tag {
            Some(t) => self.repo.tag(t),
            None => self.repo.digest(&digest),
        };
        self.timed(self.put_manifest(&reference, raw, media_type))
            .await?;
        Ok(digest)
    }

    /// Points `tag` at the manifest `from` resolves to; returns the manifest digest.
    pub async fn tag(&self, from: &Reference, tag: &str) -> Result<String, RegistryError> {
        let manifest = self.manifest(from).await?;
        let to = self.repo.tag(tag);
        self.timed(self.put_manifest(&to, manifest.raw.clone(), &manifest.media_type))
            .await?;
        Ok(manifest.digest)
    }
}

/// JSON as Go's encoding/json writes it: `<`, `>` and `&` escaped.
fn go_json(value: &impl Serialize) -> Result<Bytes, RegistryError> {
    let text = serde_json::to_string(value)
        .map_err(|e| RegistryError::Manifest(format!("encoding the manifest: {e}")))?;
    let escaped = text
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    Ok(Bytes::from(escaped))
}

/// `GET <scheme>://<registry>/v2/`: the status of any HTTP answer, or why there was none.
async fn ping(
    scheme: &str,
    registry: &str,
    options: &Options,
    skip_verify: bool,
) -> Result<u16, String> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(options.timeout.min(Duration::from_secs(10)))
        .timeout(options.timeout.min(Duration::from_secs(30)))
        .danger_accept_invalid_certs(skip_verify);
    if let Some(pem) = &options.ca_pem {
        for cert in reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| format!("invalid CA certificate: {e}"))?
        {
            builder = builder.add_root_certificate(cert);
        }
    }
    if let Some(proxy) = &options.proxy {
        builder =
            builder.proxy(reqwest::Proxy::all(proxy).map_err(|e| format!("invalid proxy: {e}"))?);
    }
    let client = builder.build().map_err(|e| e.to_string())?;
    client
        .get(format!("{scheme}://{registry}/v2/"))
        .send()
        .await
        .map(|r| r.status().as_u16())
        .map_err(|e| {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                text = format!("{text}: {s}");
                source = s.source();
            }
            text
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_fallback_hosts() {
        for r in [
            "localhost:5000",
            "127.0.0.1:5000",
            "10.1.2.3",
            "192.168.0.1:80",
            "[::1]:5000",
            "a.localhost",
        ] {
            assert!(http_allowed_by_default(r), "{r}");
        }
        for r in ["ghcr.io", "8.8.8.8:5000", "registry.example.com:5000"] {
            assert!(!http_allowed_by_default(r), "{r}");
        }
    }

    #[test]
    fn manifest_json_is_gos() {
        let mut annotations = BTreeMap::new();
        annotations.insert("b".to_string(), "x<y&z".to_string());
        annotations.insert("a".to_string(), "1".to_string());
        let m = ImageManifest {
            schema_version: 2,
            media_type: Some(OCI_MANIFEST.into()),
            config: Descriptor {
                media_type: FLUX_CONFIG.into(),
                size: 115,
                digest: "sha256:c".into(),
                annotations: BTreeMap::new(),
            },
            layers: vec![],
            annotations,
        };
        assert_eq!(
            std::str::from_utf8(&go_json(&m).unwrap()).unwrap(),
            r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.cncf.flux.config.v1+json","size":115,"digest":"sha256:c"},"layers":[],"annotations":{"a":"1","b":"x\u003cy\u0026z"}}"#
        );
        assert_eq!(
            sha256_hex(FLUX_CONFIG_BLOB.as_bytes()),
            "sha256:5b943e2b943f6c81dbbd4e2eca5121f4fcc39139e3d1219d6d89bd925b77d9fe"
        );
    }
}
