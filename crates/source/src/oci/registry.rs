//! Talking to an OCI distribution registry: tags, digests, manifests, blobs, pushes and tags,
//! over [`super::transport`] (our own HTTP client: no maintained registry client takes a TLS
//! client certificate). Plain HTTP is chosen the way go-containerregistry chooses it: HTTPS
//! first, HTTP as a fallback only for `insecure` repositories, `localhost`, loopback and
//! private (RFC 1918) addresses.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use oci_client::Reference;
use reqwest::Method;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::auth::Credentials;
pub use super::error::RegistryError;
use super::reference::Repository;
use super::transport::{Access, Transport, expect, read_capped};

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
    /// The client certificate and its key, PEM (`tls.crt` and `tls.key`), for registries
    /// that require mutual TLS.
    pub client_pem: Option<Vec<u8>>,
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
            client_pem: None,
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
    transport: Transport,
    repo: Repository,
    timeout: Duration,
}

/// OCI image index media type.
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// Docker manifest list media type.
pub const DOCKER_MANIFEST_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";

/// The most a tag list page may weigh.
const MAX_TAGS_PAGE_BYTES: usize = 64 << 20;

fn sha256_hex(data: &[u8]) -> String {
    format!("sha256:{}", crate::archive::hex(&Sha256::digest(data)))
}

/// The tag or digest a reference names in a URL path (the digest when it has both).
fn path_reference(reference: &Reference) -> &str {
    reference
        .digest()
        .or_else(|| reference.tag())
        .unwrap_or("latest")
}

#[derive(Deserialize)]
struct TagList {
    #[serde(default)]
    tags: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct IndexEntry {
    digest: String,
    #[serde(default, rename = "artifactType")]
    artifact_type: Option<String>,
}

#[derive(Deserialize)]
struct Index {
    #[serde(default)]
    manifests: Vec<IndexEntry>,
}

/// The `rel="next"` target of a `Link` header.
fn next_link(headers: &reqwest::header::HeaderMap) -> Option<String> {
    let link = headers.get(reqwest::header::LINK)?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let (target, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"" || p.trim() == "rel=next")
            .then(|| {
                target
                    .trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string()
            })
    })
}

impl Registry {
    /// Connects to `repo`: decides between HTTPS and HTTP (one ping of `/v2/`) and learns how
    /// the registry wants to be authenticated.
    pub async fn connect(repo: &Repository, options: &Options) -> Result<Registry, RegistryError> {
        let transport = Transport::connect(&repo.registry, &repo.repository, options).await?;
        Ok(Registry {
            transport,
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

    /// `GET url` with `accept`, expecting 200: the body, refused beyond `limit` bytes, and
    /// the answer's headers.
    async fn get_small(
        &self,
        url: &str,
        accept: &str,
        limit: usize,
    ) -> Result<(Bytes, reqwest::header::HeaderMap), RegistryError> {
        let resp = self
            .transport
            .send(Method::GET, url, Access::Pull, |r| {
                r.header(reqwest::header::ACCEPT, accept)
            })
            .await?;
        let resp = expect(resp, "GET", url, &[200]).await?;
        let headers = resp.headers().clone();
        let body = read_capped(resp, limit, "GET", url).await?;
        Ok((body, headers))
    }

    /// Every tag of the repository, in the registry's order.
    pub async fn list_tags(&self) -> Result<Vec<String>, RegistryError> {
        self.timed(async {
            let page = 1000;
            let mut tags: Vec<String> = Vec::new();
            let mut seen: std::collections::HashSet<String> = Default::default();
            let mut url = self.transport.url(&format!("tags/list?n={page}"));
            loop {
                let (body, headers) = self
                    .get_small(&url, "application/json", MAX_TAGS_PAGE_BYTES)
                    .await?;
                let list: TagList = serde_json::from_slice(&body).map_err(|e| {
                    RegistryError::Other(format!(
                        "GET {}: invalid tag list: {e}",
                        super::error::redact_url(&url)
                    ))
                })?;
                let got = list.tags.unwrap_or_default();
                let n = got.len();
                let mut added = 0;
                for t in got {
                    if seen.insert(t.clone()) {
                        tags.push(t);
                        added += 1;
                    }
                }
                if added == 0 {
                    break;
                }
                if let Some(next) = next_link(&headers) {
                    url = self.transport.resolve(&next)?;
                    continue;
                }
                // Without a Link, a full page may have a successor: ask from the last tag.
                // A registry that ignores `n` (Debian's docker-registry does) returns everything
                // at once; one that ignores `last` repeats itself and adds nothing.
                if n != page {
                    break;
                }
                let last = tags.last().cloned().unwrap_or_default();
                url = self.transport.url(&format!(
                    "tags/list?n={page}&last={}",
                    percent_encoding::utf8_percent_encode(
                        &last,
                        percent_encoding::NON_ALPHANUMERIC
                    )
                ));
            }
            Ok(tags)
        })
        .await
    }

    /// The manifest digest a reference resolves to (`HEAD`, falling back to `GET`, as
    /// `crane digest` does); an index's own digest for a multi-platform tag.
    pub async fn digest(&self, reference: &Reference) -> Result<String, RegistryError> {
        if let Some(d) = reference.digest() {
            return Ok(d.to_string());
        }
        let accept = [
            OCI_MANIFEST,
            DOCKER_MANIFEST,
            OCI_INDEX,
            DOCKER_MANIFEST_LIST,
        ]
        .join(", ");
        let url = self
            .transport
            .url(&format!("manifests/{}", path_reference(reference)));
        self.timed(async {
            let head = self
                .transport
                .send(Method::HEAD, &url, Access::Pull, |r| {
                    r.header(reqwest::header::ACCEPT, &accept)
                })
                .await;
            if let Ok(resp) = head
                && resp.status() == reqwest::StatusCode::OK
                && let Some(d) = resp
                    .headers()
                    .get("docker-content-digest")
                    .and_then(|v| v.to_str().ok())
                    .filter(|d| d.starts_with("sha256:"))
            {
                return Ok(d.to_string());
            }
            let (body, _) = self.get_small(&url, &accept, MAX_MANIFEST_BYTES).await?;
            Ok(sha256_hex(&body))
        })
        .await
    }

    /// The image manifest at `reference` (an OCI or Docker schema 2 manifest; an index is
    /// refused).
    pub async fn manifest(&self, reference: &Reference) -> Result<Manifest, RegistryError> {
        let url = self
            .transport
            .url(&format!("manifests/{}", path_reference(reference)));
        let accept = [OCI_MANIFEST, DOCKER_MANIFEST].join(", ");
        let (raw, headers) = self
            .timed(self.get_small(&url, &accept, MAX_MANIFEST_BYTES))
            .await?;
        let content_type = headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or(v).trim().to_string());
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
            .or(content_type.filter(|c| c != "application/json" && !c.is_empty()))
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
        let url = self.transport.url(&format!("blobs/{}", desc.digest));
        self.timed(async {
            let resp = self
                .transport
                .send(Method::GET, &url, Access::Pull, |r| r)
                .await?;
            let mut resp = expect(resp, "GET", &url, &[200]).await?;
            let mut data = Vec::with_capacity(desc.size as usize);
            while let Some(chunk) = resp
                .chunk()
                .await
                .map_err(|e| RegistryError::Blob(format!("reading blob {}: {e}", desc.digest)))?
            {
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
        self.timed(self.put_manifest(tag, raw.clone(), OCI_MANIFEST))
            .await?;
        Ok(sha256_hex(&raw))
    }

    /// `PUT` of the manifest `raw` of `media_type` at `reference` (a tag or a digest).
    async fn put_manifest(
        &self,
        reference: &str,
        raw: Bytes,
        media_type: &str,
    ) -> Result<(), RegistryError> {
        let url = self.transport.url(&format!("manifests/{reference}"));
        let resp = self
            .transport
            .send(Method::PUT, &url, Access::Push, |r| {
                r.header(reqwest::header::CONTENT_TYPE, media_type)
                    .body(raw.clone())
            })
            .await?;
        expect(resp, "PUT", &url, &[200, 201, 202]).await?;
        Ok(())
    }

    /// The manifests that refer to `digest` (OCI 1.1 referrers: the registry's API, else the
    /// `sha256-<hex>` tag schema), as `(manifest digest, artifact type)`; none when the
    /// registry knows of none.
    pub async fn referrers(&self, digest: &str) -> Result<Vec<(String, String)>, RegistryError> {
        let url = self.transport.url(&format!("referrers/{digest}"));
        let index: Index = self
            .timed(async {
                let resp = self
                    .transport
                    .send(Method::GET, &url, Access::Pull, |r| {
                        r.header(reqwest::header::ACCEPT, OCI_INDEX)
                    })
                    .await?;
                let is_index = resp
                    .headers()
                    .get(reqwest::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.starts_with(OCI_INDEX));
                let body = if resp.status() == reqwest::StatusCode::OK && is_index {
                    read_capped(resp, MAX_MANIFEST_BYTES, "GET", &url).await?
                } else if matches!(resp.status().as_u16(), 200 | 400 | 404 | 405) {
                    // No referrers API here: the tag schema.
                    let tag = digest.replace(':', "-");
                    let tag_url = self.transport.url(&format!("manifests/{tag}"));
                    match self
                        .get_small(&tag_url, OCI_INDEX, MAX_MANIFEST_BYTES)
                        .await
                    {
                        Ok((body, _)) => body,
                        Err(RegistryError::NotFound(_)) => return Ok(Index { manifests: vec![] }),
                        Err(e) => return Err(e),
                    }
                } else {
                    expect(resp, "GET", &url, &[200]).await?;
                    return Ok(Index { manifests: vec![] });
                };
                serde_json::from_slice(&body)
                    .map_err(|e| RegistryError::Manifest(format!("invalid referrers index: {e}")))
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
        self.timed(async {
            let url = self.transport.url(&format!("blobs/{digest}"));
            let exists = self
                .transport
                .send(Method::HEAD, &url, Access::Push, |r| r)
                .await
                .is_ok_and(|r| r.status() == reqwest::StatusCode::OK);
            if exists {
                return Ok(());
            }
            let start = self.transport.url("blobs/uploads/");
            let resp = self
                .transport
                .send(Method::POST, &start, Access::Push, |r| {
                    r.header(reqwest::header::CONTENT_LENGTH, 0)
                })
                .await?;
            let resp = expect(resp, "POST", &start, &[202]).await?;
            let location = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| {
                    RegistryError::Other(format!(
                        "POST {start}: the registry gave no upload location"
                    ))
                })?;
            let mut upload = url::Url::parse(&self.transport.resolve(location)?)
                .map_err(|e| RegistryError::Other(format!("invalid upload location: {e}")))?;
            upload.query_pairs_mut().append_pair("digest", &digest);
            let upload = upload.to_string();
            let resp = self
                .transport
                .send(Method::PUT, &upload, Access::Push, |r| {
                    r.header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                        .body(data.clone())
                })
                .await?;
            expect(resp, "PUT", &upload, &[201]).await?;
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
        let reference = tag.unwrap_or(&digest).to_string();
        self.timed(self.put_manifest(&reference, raw, media_type))
            .await?;
        Ok(digest)
    }

    /// Points `tag` at the manifest `from` resolves to; returns the manifest digest.
    pub async fn tag(&self, from: &Reference, tag: &str) -> Result<String, RegistryError> {
        let manifest = self.manifest(from).await?;
        self.timed(self.put_manifest(tag, manifest.raw.clone(), &manifest.media_type))
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

#[cfg(test)]
mod tests {
    use super::*;

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
