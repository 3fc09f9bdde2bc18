//! The OCI artifact verbs, as the flux CLI has them: `push artifact`, `pull artifact`,
//! `tag artifact`, `list artifacts` and `diff artifact`. They talk to the registry only; no
//! cluster is needed.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, bail};
use tidegate_source::ignore::{SourceIgnore, exclude_oci};
use tidegate_source::oci::{self, Credentials, Registry, reference};

/// Registry flags every artifact verb takes.
#[derive(clap::Args, Debug, Clone)]
pub struct RegistryArgs {
    /// Credentials for the registry: `<username>[:<password>]` (a value without `:` is a
    /// registry token).
    #[arg(long)]
    creds: Option<String>,
    /// The OCI provider name: generic (aws, azure and gcp are not supported).
    #[arg(long, default_value = "generic")]
    provider: String,
    /// Allow plain HTTP and registries whose certificate does not verify.
    #[arg(long)]
    insecure_registry: bool,
    /// How long the operation may take.
    #[arg(long, default_value = "5m", value_parser = tidegate_core::duration::parse)]
    timeout: Duration,
}

impl RegistryArgs {
    async fn connect(&self, repo: &oci::Repository) -> anyhow::Result<Registry> {
        match self.provider.as_str() {
            "generic" => {}
            "aws" | "azure" | "gcp" => bail!(
                "source OCI provider '{}' is not supported by Tidegate yet; use --creds",
                self.provider
            ),
            other => bail!(
                "source OCI provider '{other}' is not supported, must be one of: generic, aws, azure, gcp"
            ),
        }
        let credentials = match &self.creds {
            Some(c) => {
                super::action("logging in to registry with credentials");
                oci::auth::from_creds_flag(c)
            }
            None => docker_config_credentials(&repo.name()).unwrap_or_default(),
        };
        let options = oci::Options {
            credentials,
            insecure: self.insecure_registry,
            timeout: self.timeout.min(Duration::from_secs(60)),
            user_agent: "tidegate",
            ..Default::default()
        };
        Ok(Registry::connect(repo, &options).await?)
    }
}

/// The Docker config of the user (`$DOCKER_CONFIG/config.json` or `~/.docker/config.json`),
/// as the flux CLI reads it when no `--creds` are given.
fn docker_config_credentials(repository: &str) -> Option<Credentials> {
    let path = match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => PathBuf::from(dir).join("config.json"),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".docker/config.json"),
    };
    let bytes = std::fs::read(path).ok()?;
    oci::auth::from_docker_config(&bytes, repository)
        .ok()
        .flatten()
}

/// `tidegate push …`.
#[derive(clap::Subcommand, Debug)]
pub enum Push {
    /// Push a directory or file as an OCI artifact (`oci://<registry>/<repo>:<tag>`).
    Artifact(PushArgs),
}

/// `push artifact` flags.
#[derive(clap::Args, Debug)]
pub struct PushArgs {
    /// `oci://<registry>/<repository>:<tag>`.
    url: String,
    /// The directory or file to push.
    #[arg(long, short = 'f')]
    path: Option<PathBuf>,
    /// The source address, e.g. the Git URL.
    #[arg(long)]
    source: Option<String>,
    /// The source revision in the format '<branch|tag>@sha1:<commit-sha>'.
    #[arg(long)]
    revision: Option<String>,
    /// Custom annotations in the format '<key>=<value>'.
    #[arg(long = "annotations", short = 'a')]
    annotations: Vec<String>,
    /// Patterns (`.gitignore` syntax) of paths to leave out; replaces the defaults.
    #[arg(long, value_delimiter = ',')]
    ignore_paths: Option<Vec<String>>,
    /// Patterns added to the ignored paths.
    #[arg(long, value_delimiter = ',')]
    add_ignore_paths: Vec<String>,
    /// Set the created annotation to the Unix epoch, so pushing the same content twice gives
    /// the same digest.
    #[arg(long)]
    reproducible: bool,
    /// Print the pushed artifact as `json` or `yaml` on stdout.
    #[arg(long, short = 'o')]
    output: Option<String>,
    #[command(flatten)]
    registry: RegistryArgs,
}

fn ignore_of(ignore_paths: &Option<Vec<String>>, add: &[String]) -> SourceIgnore {
    let mut patterns = ignore_paths.clone().unwrap_or_else(exclude_oci);
    patterns.extend(add.iter().cloned());
    SourceIgnore::from_patterns(&patterns)
}

/// Builds the layer of `path` in memory.
fn build_layer(path: &std::path::Path, ignore: &SourceIgnore) -> anyhow::Result<(Vec<u8>, String)> {
    let (bytes, written) = tidegate_source::oci::layer::build(path, ignore, Vec::new())?;
    Ok((bytes, written.digest))
}

fn created_now(reproducible: bool) -> String {
    if reproducible {
        return "1970-01-01T00:00:00Z".to_string();
    }
    let now = k8s_openapi::jiff::Timestamp::now();
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

async fn push(a: PushArgs) -> anyhow::Result<()> {
    let (repo, r) = reference::parse_artifact_url(&a.url)?;
    let Some(tag) = r.tag().map(str::to_string) else {
        bail!("the artifact URL must name a tag: oci://<registry>/<repository>:<tag>");
    };
    let source = a
        .source
        .clone()
        .filter(|s| !s.is_empty())
        .context("--source is required")?;
    let revision = a
        .revision
        .clone()
        .filter(|s| !s.is_empty())
        .context("--revision is required")?;
    let path = a.path.clone().unwrap_or_default();
    if path.as_os_str().is_empty() {
        bail!("invalid path \"\"");
    }
    let mut annotations = BTreeMap::new();
    annotations.insert(
        "org.opencontainers.image.created".to_string(),
        created_now(a.reproducible),
    );
    annotations.insert("org.opencontainers.image.source".to_string(), source);
    annotations.insert("org.opencontainers.image.revision".to_string(), revision);
    for kv in &a.annotations {
        let parts: Vec<&str> = kv.split('=').collect();
        if parts.len() != 2 {
            bail!("invalid annotation {kv}, must be in the format key=value");
        }
        annotations.insert(parts[0].to_string(), parts[1].to_string());
    }
    let format = a.output.as_deref().unwrap_or("");
    if !matches!(format, "" | "json" | "yaml") {
        bail!("invalid output format '{format}', must be one of: json, yaml");
    }
    let ignore = ignore_of(&a.ignore_paths, &a.add_ignore_paths);
    let (layer, _) = build_layer(&path, &ignore)?;
    let registry = a.registry.connect(&repo).await?;
    if format.is_empty() {
        super::action(&format!("pushing artifact to {}", reference::display(&r)));
    }
    let digest = registry
        .push_artifact(
            &tag,
            layer.into(),
            oci::registry::FLUX_CONTENT,
            &annotations,
        )
        .await
        .map_err(|e| anyhow::anyhow!("pushing artifact failed: {e}"))?;
    let at = format!("{}@{digest}", repo.name());
    match format {
        "json" => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "url": format!("oci://{at}"),
                "repository": repo.name(),
                "tag": tag,
                "digest": digest,
            }))?
        ),
        "yaml" => print!(
            "digest: {digest}\nrepository: {}\ntag: {}\nurl: oci://{at}\n",
            repo.name(),
            yaml_scalar(&tag)
        ),
        _ => super::success(&format!("artifact successfully pushed to {at}")),
    }
    Ok(())
}

/// A tag as a YAML scalar: quoted when YAML would read it as something else than a string.
fn yaml_scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && s.parse::<f64>().is_err()
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n" | "~"
        );
    if plain {
        s.to_string()
    } else {
        format!("\"{s}\"")
    }
}

/// `tidegate pull …`.
#[derive(clap::Subcommand, Debug)]
pub enum Pull {
    /// Pull an OCI artifact and extract its content into a directory.
    Artifact(PullArgs),
}

/// `pull artifact` flags.
#[derive(clap::Args, Debug)]
pub struct PullArgs {
    /// `oci://<registry>/<repository>[:<tag>|@<digest>]`.
    url: String,
    /// The directory to extract the artifact's content into (it must exist).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    #[command(flatten)]
    registry: RegistryArgs,
}

async fn pull(a: PullArgs) -> anyhow::Result<()> {
    let (repo, r) = reference::parse_artifact_url(&a.url)?;
    let output = a.output.clone().unwrap_or_default();
    if output.as_os_str().is_empty() {
        bail!("output path cannot be empty");
    }
    let meta = std::fs::metadata(&output)
        .with_context(|| format!("invalid output path \"{}\"", output.display()))?;
    if !meta.is_dir() {
        bail!(
            "invalid output path \"{}\": not a directory",
            output.display()
        );
    }
    let registry = a.registry.connect(&repo).await?;
    super::action(&format!("pulling artifact from {}", a.url));
    let manifest = registry.manifest(&r).await?;
    let layer = oci::select_layer(&manifest.image, None).map_err(anyhow::Error::msg)?;
    let limits = tidegate_source::extract::Limits::default();
    let blob = registry.blob(layer, limits.max_size).await?;
    if !blob.starts_with(&[0x1f, 0x8b]) {
        bail!(
            "the artifact's layer {} is not a gzip-compressed tarball (media type '{}')",
            layer.digest,
            layer.media_type
        );
    }
    let out = output.clone();
    tokio::task::spawn_blocking(move || {
        tidegate_source::extract::extract_tar_gz(&blob[..], &out, limits)
    })
    .await??;
    let ann = &manifest.image.annotations;
    if let Some(s) = ann
        .get("org.opencontainers.image.source")
        .filter(|s| !s.is_empty())
    {
        super::success(&format!("source {s}"));
    }
    if let Some(s) = ann
        .get("org.opencontainers.image.revision")
        .filter(|s| !s.is_empty())
    {
        super::success(&format!("revision {s}"));
    }
    super::success(&format!("digest {}@{}", repo.name(), manifest.digest));
    super::success(&format!(
        "artifact content extracted to {}",
        output.display()
    ));
    Ok(())
}

/// `tidegate tag …`.
#[derive(clap::Subcommand, Debug)]
pub enum Tag {
    /// Tag an OCI artifact with more tags.
    Artifact(TagArgs),
}

/// `tag artifact` flags.
#[derive(clap::Args, Debug)]
pub struct TagArgs {
    /// `oci://<registry>/<repository>[:<tag>|@<digest>]`.
    url: String,
    /// The tags to add.
    #[arg(long = "tag", value_delimiter = ',')]
    tags: Vec<String>,
    #[command(flatten)]
    registry: RegistryArgs,
}

async fn tag(a: TagArgs) -> anyhow::Result<()> {
    if a.tags.is_empty() {
        bail!("--tag is required");
    }
    let (repo, r) = reference::parse_artifact_url(&a.url)?;
    let registry = a.registry.connect(&repo).await?;
    super::action("tagging artifact");
    for t in &a.tags {
        registry
            .tag(&r, t)
            .await
            .map_err(|e| anyhow::anyhow!("tagging artifact failed: {e}"))?;
        super::success(&format!("artifact tagged as {}:{t}", repo.name()));
    }
    Ok(())
}

/// `tidegate list …`.
#[derive(clap::Subcommand, Debug)]
pub enum List {
    /// List the tags of an OCI repository with their digest, source and revision.
    Artifacts(ListArgs),
}

/// `list artifacts` flags.
#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// `oci://<registry>/<repository>`.
    url: String,
    /// Only tags within this semver range.
    #[arg(long)]
    filter_semver: Option<String>,
    /// Only tags matching this regular expression.
    #[arg(long)]
    filter_regex: Option<String>,
    #[command(flatten)]
    registry: RegistryArgs,
}

async fn list(a: ListArgs) -> anyhow::Result<()> {
    let repo = reference::parse_artifact_url(&a.url)?.0;
    let constraints = a
        .filter_semver
        .as_deref()
        .map(|s| {
            tidegate_core::semver::Constraints::parse(s)
                .map_err(|e| anyhow::anyhow!("semver '{s}' parse error: {e}"))
        })
        .transpose()?;
    let regex = a
        .filter_regex
        .as_deref()
        .map(|s| regex::Regex::new(s).map_err(|e| anyhow::anyhow!("regex '{s}' parse error: {e}")))
        .transpose()?;
    let registry = a.registry.connect(&repo).await?;
    let mut tags = registry
        .list_tags()
        .await
        .map_err(|e| anyhow::anyhow!("listing tags failed: {e}"))?;
    tags.sort_by(|x, y| y.cmp(x));
    let mut rows = vec![vec![
        "ARTIFACT".to_string(),
        "DIGEST".to_string(),
        "SOURCE".to_string(),
        "REVISION".to_string(),
    ]];
    for t in tags {
        if [".att", ".sbom", ".sig"].iter().any(|s| t.ends_with(s)) {
            continue;
        }
        if let Some(c) = &constraints {
            match oci::select::parse_version(&t) {
                Some(v) if c.check(&v) => {}
                _ => continue,
            }
        }
        if regex.as_ref().is_some_and(|r| !r.is_match(&t)) {
            continue;
        }
        let m = registry.manifest(&repo.tag(&t)).await?;
        let get = |k: &str| m.image.annotations.get(k).cloned().unwrap_or_default();
        rows.push(vec![
            format!("{}:{t}", repo.name()),
            m.digest.clone(),
            get("org.opencontainers.image.source"),
            get("org.opencontainers.image.revision"),
        ]);
    }
    print!("{}", super::format_table(&rows));
    Ok(())
}

/// `diff artifact` flags.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// `oci://<registry>/<repository>[:<tag>|@<digest>]`.
    url: String,
    /// The local directory or file to compare with.
    #[arg(long)]
    path: Option<PathBuf>,
    /// Patterns (`.gitignore` syntax) of paths to leave out; replaces the defaults.
    #[arg(long, value_delimiter = ',')]
    ignore_paths: Option<Vec<String>>,
    /// Patterns added to the ignored paths.
    #[arg(long, value_delimiter = ',')]
    add_ignore_paths: Vec<String>,
    #[command(flatten)]
    registry: RegistryArgs,
}

/// Whether the remote artifact's layer differs from the one `path` would give (Flux compares
/// the compressed layer's digest and size).
pub async fn diff(a: DiffArgs) -> anyhow::Result<bool> {
    let path = a.path.clone().unwrap_or_default();
    if path.as_os_str().is_empty() {
        bail!("invalid path \"\"");
    }
    let (repo, r) = reference::parse_artifact_url(&a.url)?;
    let ignore = ignore_of(&a.ignore_paths, &a.add_ignore_paths);
    let (layer, digest) = build_layer(&path, &ignore)?;
    let registry = a.registry.connect(&repo).await?;
    let manifest = registry.manifest(&r).await?;
    let remote = oci::select_layer(&manifest.image, None).map_err(anyhow::Error::msg)?;
    Ok(remote.digest != digest || remote.size != layer.len() as u64)
}

/// Runs `push artifact`.
pub async fn run_push(p: Push) -> anyhow::Result<()> {
    let Push::Artifact(a) = p;
    push(a).await
}

/// Runs `pull artifact`.
pub async fn run_pull(p: Pull) -> anyhow::Result<()> {
    let Pull::Artifact(a) = p;
    pull(a).await
}

/// Runs `tag artifact`.
pub async fn run_tag(t: Tag) -> anyhow::Result<()> {
    let Tag::Artifact(a) = t;
    tag(a).await
}

/// Runs `list artifacts`.
pub async fn run_list(l: List) -> anyhow::Result<()> {
    let List::Artifacts(a) = l;
    list(a).await
}
