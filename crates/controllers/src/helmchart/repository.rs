//! Where charts are downloaded from, as Flux's `repository.Downloader`: a Helm repository's
//! index (stored by its HelmRepository, or fetched for a dependency nobody declared) or an OCI
//! registry whose tags are chart versions.

use kube::{Api, ResourceExt};
use std::collections::HashMap;
use std::sync::Arc;
use tidegate_api::HelmRepository;
use tidegate_core::semver::{Constraints, Version};

use tidegate_helm::repo::ChartIndex;
use tidegate_source::helm_index::{self, HttpOptions};
use tidegate_source::oci::{self, Credentials, Registry};

use crate::source::{Context, secret_data};

/// The largest chart package accepted (Helm's own limit).
pub(super) const MAX_CHART_SIZE: u64 = 100 << 20;

/// Helm chart config media type.
const HELM_CONFIG: &str = "application/vnd.cncf.helm.config.v1+json";
/// The chart layer media type before Helm 3.7.
const LEGACY_CHART_LAYER: &str = "application/tar+gzip";

/// A chart version in a repository: its name, version and where to download it.
#[derive(Debug, Clone)]
pub(super) struct ChartVersionRef {
    pub name: String,
    pub version: String,
    pub urls: Vec<String>,
}

/// Why no chart version was found: a wrong reference (stalls) or a repository that could not
/// be read (retried).
#[derive(Debug)]
pub(super) enum GetError {
    Reference(String),
    External(String),
    /// The repository's credentials or TLS settings could not be read.
    Auth(String),
}

impl GetError {
    pub fn into_message(self) -> String {
        match self {
            GetError::Reference(m) | GetError::External(m) | GetError::Auth(m) => m,
        }
    }
}

/// A repository charts are downloaded from.
pub(super) enum ChartRepository {
    /// A Helm repository with its index loaded.
    Index {
        url: String,
        index: Arc<ChartIndex>,
        http: HttpOptions,
        pass_credentials: bool,
    },
    /// An OCI registry (`oci://host/path`, charts at `<path>/<name>`).
    Oci {
        url: String,
        options: oci::Options,
        connected: Connections,
    },
}

/// The registry connections of one OCI chart repository, each made once per build (listing
/// tags, verifying and pulling a chart share one).
#[derive(Default)]
pub(super) struct Connections(tokio::sync::Mutex<HashMap<String, Arc<Registry>>>);

impl Connections {
    async fn get(
        &self,
        repo: &oci::Repository,
        options: &oci::Options,
    ) -> Result<Arc<Registry>, oci::RegistryError> {
        let mut connected = self.0.lock().await;
        if let Some(r) = connected.get(&repo.name()) {
            return Ok(r.clone());
        }
        let registry = Arc::new(Registry::connect(repo, options).await?);
        connected.insert(repo.name(), registry.clone());
        Ok(registry)
    }
}

/// Flux's `NormalizeURL`: OCI URLs lose trailing slashes, HTTP URLs get exactly one.
pub(super) fn normalize_url(url: &str) -> String {
    if url.is_empty() {
        return String::new();
    }
    if url.starts_with("oci://") {
        return url.trim_end_matches('/').to_string();
    }
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut out = format!("{}/", base.trim_end_matches('/'));
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// Helm's `ResolveReferenceURL`: a relative chart URL resolved against the repository URL
/// (with a trailing slash), keeping the repository's query string.
pub(super) fn resolve_reference_url(base: &str, reference: &str) -> Result<String, String> {
    if let Ok(abs) = reqwest::Url::parse(reference) {
        return Ok(abs.to_string());
    }
    let mut base_url = reqwest::Url::parse(base).map_err(|e| format!("parse {base:?}: {e}"))?;
    let path = format!("{}/", base_url.path().trim_end_matches('/'));
    base_url.set_path(&path);
    let query = base_url.query().map(str::to_string);
    let mut resolved = base_url
        .join(reference)
        .map_err(|e| format!("parse {reference:?}: {e}"))?;
    resolved.set_query(query.as_deref());
    Ok(resolved.to_string())
}

fn host_of(url: &str) -> &str {
    url.split("://")
        .nth(1)
        .unwrap_or("")
        .split(['/', '?'])
        .next()
        .unwrap_or("")
}

impl ChartRepository {
    /// The version of chart `name` that `version` selects.
    pub async fn get_chart_version(
        &self,
        name: &str,
        version: &str,
    ) -> Result<ChartVersionRef, GetError> {
        match self {
            ChartRepository::Index { index, .. } => {
                let cv = index
                    .get(name, version)
                    .map_err(|e| GetError::Reference(e.to_string()))?;
                Ok(ChartVersionRef {
                    name: name.to_string(),
                    version: cv.version.clone(),
                    urls: cv.urls.clone(),
                })
            }
            ChartRepository::Oci {
                url,
                options,
                connected,
            } => {
                let chart_url = format!("{url}/{name}");
                let found = |v: String| ChartVersionRef {
                    name: name.to_string(),
                    urls: vec![format!("{chart_url}:{v}")],
                    version: v,
                };
                if tidegate_source::oci::select::parse_version(version).is_some() {
                    return Ok(found(version.to_string()));
                }
                let tags = chart_tags(&chart_url, options, connected)
                    .await
                    .map_err(|e| {
                        GetError::External(format!("could not get tags for {name:?}: {e}"))
                    })?;
                if tags.is_empty() {
                    return Err(GetError::External(format!(
                        "unable to locate any tags in provided repository: {name}"
                    )));
                }
                last_matching_version(&tags, version)
                    .map(found)
                    .map_err(GetError::External)
            }
        }
    }

    /// Downloads the chart package of `cv`.
    pub async fn download_chart(&self, cv: &ChartVersionRef) -> Result<Vec<u8>, String> {
        let Some(first) = cv.urls.first() else {
            return Err(format!("chart '{}' has no downloadable URLs", cv.name));
        };
        match self {
            ChartRepository::Index {
                url,
                http,
                pass_credentials,
                ..
            } => {
                let chart_url = resolve_reference_url(url, first)?;
                let mut options = http.clone();
                if !pass_credentials && host_of(&chart_url) != host_of(url) {
                    options.basic_auth = None;
                }
                let client = helm_index::client(&options).map_err(|e| e.to_string())?;
                helm_index::download(&client, &chart_url, &options, MAX_CHART_SIZE)
                    .await
                    .map_err(|e| e.to_string())
            }
            ChartRepository::Oci {
                options, connected, ..
            } => pull_oci_chart(first, options, connected)
                .await
                .map_err(|e| format!("failed to get '{first}': {e}")),
        }
    }
}

impl ChartRepository {
    /// Whether a cosign signature of the chart verifies with one of `keys` (Flux's
    /// `VerifyChart`; only OCI repositories hold signatures).
    pub async fn verify_chart(
        &self,
        cv: &ChartVersionRef,
        keys: &[oci::cosign::PublicKey],
    ) -> Result<bool, String> {
        let ChartRepository::Oci {
            options, connected, ..
        } = self
        else {
            return Err("not implemented".to_string());
        };
        let Some(url) = cv.urls.first() else {
            return Err(format!("chart '{}' has no downloadable URLs", cv.name));
        };
        let (repo_url, tag) = split_tag(url);
        let repo = oci::parse_repository_url(repo_url)
            .map_err(|e| format!("invalid chart reference: {e}"))?;
        let fail = |e: oci::RegistryError| format!("failed to verify {url}: {e}");
        let registry = connected.get(&repo, options).await.map_err(fail)?;
        let digest = registry.digest(&repo.tag(&tag)).await.map_err(fail)?;
        if oci::cosign::verify(&registry, &digest, keys)
            .await
            .map_err(fail)?
        {
            Ok(true)
        } else {
            Err(format!(
                "no matching signatures were found for '{}'",
                url.trim_start_matches("oci://").replace('+', "_")
            ))
        }
    }
}

/// `oci://host/repo/name:version` split into the repository URL and the tag (`+` is `_`).
fn split_tag(reference: &str) -> (&str, String) {
    let last_slash = reference.rfind('/').unwrap_or(0);
    match reference[last_slash..].rfind(':') {
        Some(i) => (
            &reference[..last_slash + i],
            reference[last_slash + i + 1..].replace('+', "_"),
        ),
        None => (reference, "latest".to_string()),
    }
}

/// The chart versions among a repository's tags (`_` read as `+`), highest first, as Helm's
/// registry client lists them.
async fn chart_tags(
    chart_url: &str,
    options: &oci::Options,
    connected: &Connections,
) -> Result<Vec<String>, String> {
    let repo = oci::parse_repository_url(chart_url).map_err(|e| e.to_string())?;
    let fail = |e: oci::RegistryError| format!("could not fetch tags for {chart_url:?}: {e}");
    let registry = connected.get(&repo, options).await.map_err(fail)?;
    let tags = registry.list_tags().await.map_err(fail)?;
    let mut versions: Vec<Version> = tags
        .iter()
        .filter_map(|t| Version::parse_strict(&t.replace('_', "+")).ok())
        .collect();
    versions.sort_by(|a, b| b.cmp(a));
    Ok(versions.iter().map(Version::to_string).collect())
}

/// Flux's `getLastMatchingVersionOrConstraint`: an exact tag first, else the highest version
/// in the range (latest stable for `""` and `*`).
fn last_matching_version(tags: &[String], version: &str) -> Result<String, String> {
    if !version.is_empty()
        && let Some(t) = tags.iter().find(|t| *t == version)
    {
        return Ok(t.clone());
    }
    let range = if version.is_empty() { "*" } else { version };
    let constraint = Constraints::parse(range).map_err(|e| e.to_string())?;
    tags.iter()
        .filter_map(|t| tidegate_source::oci::select::parse_version(t).map(|v| (v, t)))
        .filter(|(v, _)| constraint.check(v))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(v, _)| v.original().to_string())
        .ok_or_else(|| {
            format!("could not locate a version matching provided version string {version}")
        })
}

/// Pulls a chart from `oci://host/repo/name:version` as Helm's registry client does: a Helm
/// config and a chart layer required; `+` in the version is `_` in the tag.
async fn pull_oci_chart(
    reference: &str,
    options: &oci::Options,
    connected: &Connections,
) -> Result<Vec<u8>, String> {
    let (repo_url, tag) = split_tag(reference);
    let repo = oci::parse_repository_url(repo_url).map_err(|e| e.to_string())?;
    let registry = connected
        .get(&repo, options)
        .await
        .map_err(|e| e.to_string())?;
    let manifest = registry
        .manifest(&repo.tag(&tag))
        .await
        .map_err(|e| e.to_string())?;
    let image = &manifest.image;
    let found = 1 + usize::from(!image.config.media_type.is_empty()) + image.layers.len();
    if found < 2 {
        return Err(format!(
            "manifest does not contain minimum number of descriptors (2), descriptors found: {found}"
        ));
    }
    if image.config.media_type != HELM_CONFIG {
        return Err(format!(
            "could not load config with mediatype {HELM_CONFIG}"
        ));
    }
    let Some(layer) = image.layers.iter().find(|l| {
        l.media_type == oci::registry::HELM_CHART_CONTENT || l.media_type == LEGACY_CHART_LAYER
    }) else {
        return Err(format!(
            "manifest does not contain a layer with mediatype {}",
            oci::registry::HELM_CHART_CONTENT
        ));
    };
    let data = registry
        .blob(layer, MAX_CHART_SIZE)
        .await
        .map_err(|e| e.to_string())?;
    Ok(data.to_vec())
}

/// The HTTP options of a `type: default` HelmRepository: basic auth from `secretRef`, TLS from
/// `certSecretRef`, `timeout`.
pub(super) async fn http_options(
    repo: &HelmRepository,
    ctx: &Context,
) -> Result<HttpOptions, String> {
    let ns = repo.namespace().unwrap_or_default();
    let mut options = HttpOptions {
        timeout: tidegate_core::duration::parse(repo.spec.timeout())
            .unwrap_or(std::time::Duration::from_secs(60)),
        insecure_skip_verify: repo.spec.insecure,
        ..Default::default()
    };
    if let Some(r) = &repo.spec.secret_ref {
        let data = secret_data(&ctx.client, &ns, &r.name)
            .await
            .map_err(|m| format!("failed to get authentication secret: {m}"))?;
        let text = |k: &str| data.get(k).map(|v| String::from_utf8_lossy(v).into_owned());
        if let (Some(u), Some(p)) = (text("username"), text("password")) {
            options.basic_auth = Some((u, p));
        }
    }
    if let Some(r) = &repo.spec.cert_secret_ref {
        let data = secret_data(&ctx.client, &ns, &r.name)
            .await
            .map_err(|m| format!("failed to get TLS secret: {m}"))?;
        options.ca_pem = data.get("ca.crt").cloned();
        if let (Some(c), Some(k)) = (data.get("tls.crt"), data.get("tls.key")) {
            let mut pem = c.clone();
            pem.push(b'\n');
            pem.extend_from_slice(k);
            options.client_pem = Some(pem);
        }
    }
    Ok(options)
}

/// The registry options of a `type: oci` HelmRepository: a docker config or `username` and
/// `password` in `secretRef`, a CA in `certSecretRef`, `insecure`, `timeout`.
pub(super) async fn oci_options(
    repo: &HelmRepository,
    ctx: &Context,
) -> Result<oci::Options, String> {
    let ns = repo.namespace().unwrap_or_default();
    let url = normalize_url(&repo.spec.url);
    let mut credentials = Credentials::Anonymous;
    if let Some(r) = &repo.spec.secret_ref {
        let data = secret_data(&ctx.client, &ns, &r.name)
            .await
            .map_err(|m| format!("failed to get authentication secret: {m}"))?;
        if let Some(config) = data.get(".dockerconfigjson") {
            let name = url.trim_start_matches("oci://");
            credentials = oci::auth::from_docker_config(config, name)
                .map_err(|e| format!("secret '{ns}/{}': {e}", r.name))?
                .unwrap_or(Credentials::Anonymous);
        } else {
            let text = |k: &str| data.get(k).map(|v| String::from_utf8_lossy(v).into_owned());
            match (text("username"), text("password")) {
                (Some(username), Some(password)) => {
                    credentials = Credentials::Basic { username, password }
                }
                _ => {
                    return Err(format!(
                        "invalid '{}' secret data: required fields 'username' and 'password'",
                        r.name
                    ));
                }
            }
        }
    }
    let mut ca_pem = None;
    let mut client_pem = None;
    if let Some(r) = &repo.spec.cert_secret_ref {
        let data = secret_data(&ctx.client, &ns, &r.name)
            .await
            .map_err(|m| format!("failed to get TLS secret: {m}"))?;
        client_pem = crate::source::client_pem(&data)
            .map_err(|()| {
            format!(
                "failed to get TLS secret: secret '{ns}/{}' must contain both 'tls.crt' and 'tls.key'",
                r.name
            )
        })?;
        ca_pem = data.get("ca.crt").cloned();
    }
    Ok(oci::Options {
        credentials,
        insecure: repo.spec.insecure,
        ca_pem,
        client_pem,
        timeout: tidegate_core::duration::parse(repo.spec.timeout())
            .unwrap_or(std::time::Duration::from_secs(60)),
        proxy: None,
        user_agent: "tidegate/source-controller",
    })
}

/// The repository a HelmChart of `repo` downloads from, with the index read back from
/// `repo`'s stored artifact (or, when it has none and `fetch_missing`, from its URL).
pub(super) async fn for_helm_repository(
    repo: &HelmRepository,
    ctx: &Context,
    fetch_missing: bool,
) -> Result<ChartRepository, GetError> {
    let url = normalize_url(&repo.spec.url);
    if repo.spec.is_oci() {
        let options = oci_options(repo, ctx).await.map_err(GetError::Auth)?;
        return Ok(ChartRepository::Oci {
            url,
            options,
            connected: Connections::default(),
        });
    }
    let http = http_options(repo, ctx).await.map_err(GetError::Auth)?;
    let artifact = repo.status.as_ref().and_then(|s| s.artifact.as_ref());
    let load = |bytes: &[u8]| {
        tidegate_helm::repo::load_chart_index(bytes)
            .map(Arc::new)
            .map_err(|e| GetError::External(format!("failed to load index: {e}")))
    };
    let index = match artifact {
        Some(a) => match super::cache::global().map(|c| c.get(&a.digest)) {
            Some(Some(index)) => {
                ctx.metrics.record_cache_event(
                    true,
                    &repo.name_any(),
                    &repo.namespace().unwrap_or_default(),
                );
                index
            }
            cached => {
                if cached.is_some() {
                    ctx.metrics.record_cache_event(
                        false,
                        &repo.name_any(),
                        &repo.namespace().unwrap_or_default(),
                    );
                }
                let bytes = tidegate_source::fetch::download(
                    &ctx.http,
                    &a.url,
                    &a.digest,
                    2 * crate::helmrepository::MAX_INDEX_SIZE,
                )
                .await
                .map_err(|e| GetError::External(format!("failed to load index: {e}")))?;
                let index = load(&bytes)?;
                drop(bytes);
                if let Some(cache) = super::cache::global() {
                    cache.insert(&a.digest, index.clone());
                }
                index
            }
        },
        None if fetch_missing => load(&fetch_index(&url, &http).await?)?,
        None => {
            return Err(GetError::External(format!(
                "no artifact available for HelmRepository source '{}'",
                repo.name_any()
            )));
        }
    };
    Ok(ChartRepository::Index {
        url,
        index,
        http,
        pass_credentials: repo.spec.pass_credentials,
    })
}

async fn fetch_index(url: &str, http: &HttpOptions) -> Result<Vec<u8>, GetError> {
    let client = helm_index::client(http).map_err(|e| GetError::External(e.to_string()))?;
    helm_index::download(
        &client,
        &helm_index::index_url(url),
        http,
        crate::helmrepository::MAX_INDEX_SIZE,
    )
    .await
    .map_err(|e| {
        GetError::External(format!(
            "failed to cache index: failed to cache index to temporary file: {e}"
        ))
    })
}

/// The repository for a dependency at `url` (normalized): the namespace's HelmRepository
/// with that URL, or an anonymous one with Flux's defaults.
pub(super) async fn for_dependency(
    url: &str,
    namespace: &str,
    ctx: &Context,
) -> Result<ChartRepository, String> {
    let api: Api<HelmRepository> = Api::namespaced(ctx.client.clone(), namespace);
    let repos = api
        .list(&Default::default())
        .await
        .map_err(|e| format!("unable to retrieve HelmRepositoryList: {e}"))?;
    let found = repos
        .items
        .into_iter()
        .find(|r| normalize_url(&r.spec.url) == url);
    match found {
        Some(repo) => for_helm_repository(&repo, ctx, true)
            .await
            .map_err(GetError::into_message),
        None if url.starts_with("oci://") => Ok(ChartRepository::Oci {
            connected: Connections::default(),
            url: url.to_string(),
            options: oci::Options {
                user_agent: "tidegate/source-controller",
                ..Default::default()
            },
        }),
        None => {
            let http = HttpOptions {
                timeout: std::time::Duration::from_secs(60),
                ..Default::default()
            };
            let bytes = fetch_index(url, &http)
                .await
                .map_err(GetError::into_message)?;
            let index = tidegate_helm::repo::load_chart_index(&bytes)
                .map_err(|e| format!("failed to load index: {e}"))?;
            Ok(ChartRepository::Index {
                url: url.to_string(),
                index: Arc::new(index),
                http,
                pass_credentials: false,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_as_flux_and_helm() {
        assert_eq!(normalize_url("https://h/charts"), "https://h/charts/");
        assert_eq!(normalize_url("https://h/charts//"), "https://h/charts/");
        assert_eq!(normalize_url("oci://h/charts/"), "oci://h/charts");
        assert_eq!(
            resolve_reference_url("https://h/charts/", "podinfo-1.0.0.tgz").unwrap(),
            "https://h/charts/podinfo-1.0.0.tgz"
        );
        assert_eq!(
            resolve_reference_url("https://h/charts?t=1", "p/x.tgz").unwrap(),
            "https://h/charts/p/x.tgz?t=1"
        );
        assert_eq!(
            resolve_reference_url("https://h/charts/", "https://cdn/p.tgz").unwrap(),
            "https://cdn/p.tgz"
        );
        assert_eq!(host_of("https://h:8080/x"), "h:8080");
    }

    #[test]
    fn oci_versions_as_flux() {
        let tags: Vec<String> = ["6.5.0", "6.4.1", "6.5.1-rc.1", "1.0.0+abc"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(last_matching_version(&tags, "").unwrap(), "6.5.0");
        assert_eq!(last_matching_version(&tags, "6.4.x").unwrap(), "6.4.1");
        assert_eq!(
            last_matching_version(&tags, ">=6.5.1-0").unwrap(),
            "6.5.1-rc.1"
        );
        assert_eq!(
            last_matching_version(&tags, "1.0.0+abc").unwrap(),
            "1.0.0+abc"
        );
        assert_eq!(
            last_matching_version(&tags, "7.x").unwrap_err(),
            "could not locate a version matching provided version string 7.x"
        );
    }
}
