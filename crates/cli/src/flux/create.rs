//! `tidegate create source git|oci|helm|chart|bucket NAME …` and `tidegate create kustomization NAME …`: build the
//! object from flags, print it (`--export`, Flux's YAML with `---` and sorted keys) or apply it
//! with server-side apply and wait for it to become ready.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::kind::{
    GIT_REPOSITORY, HELM_CHART, HELM_RELEASE, HELM_REPOSITORY, KUSTOMIZATION, Kind, OCI_REPOSITORY,
};
use super::reconcile::wait_handled;
use super::secret::SecretGitArgs;
use super::{Global, action, generate, success, waiting};

/// What to create.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// A source.
    #[command(subcommand)]
    Source(SourceWhat),
    /// A Secret for a source.
    #[command(subcommand)]
    Secret(SecretWhat),
    /// A Kustomization.
    #[command(alias = "ks")]
    Kustomization(KsArgs),
    /// A HelmRelease.
    #[command(alias = "hr")]
    Helmrelease(super::create_helmrelease::HrArgs),
    /// A notification Provider.
    #[command(name = "alert-provider")]
    AlertProvider(super::create_notification::ProviderArgs),
    /// A notification Alert.
    Alert(super::create_notification::AlertArgs),
    /// A notification Receiver.
    Receiver(super::create_notification::ReceiverArgs),
    /// An image automation object (`image repository|policy|update`).
    #[command(subcommand)]
    Image(ImageWhat),
}

/// Image automation kinds.
#[derive(clap::Subcommand, Debug)]
pub enum ImageWhat {
    /// An ImageRepository.
    Repository(super::create_image::RepositoryArgs),
    /// An ImagePolicy.
    Policy(super::create_image::PolicyArgs),
    /// An ImageUpdateAutomation.
    Update(super::create_image::UpdateArgs),
}

/// Source kinds.
#[derive(clap::Subcommand, Debug)]
pub enum SourceWhat {
    /// A GitRepository.
    Git(GitArgs),
    /// An OCIRepository.
    Oci(OciArgs),
    /// A HelmRepository (`oci://` URLs make one of type `oci`).
    Helm(HelmArgs),
    /// A HelmChart.
    Chart(ChartArgs),
    /// A Bucket (S3-compatible object storage).
    Bucket(super::create_bucket::BucketArgs),
}

/// Flags of `create source chart`.
#[derive(clap::Args, Debug)]
pub struct ChartArgs {
    /// The HelmChart's name.
    name: String,
    /// The source: `<kind>/<name>` (HelmRepository, GitRepository or Bucket).
    #[arg(long)]
    source: String,
    /// The chart's name in the repository, or its path in a Git or Bucket source.
    #[arg(long)]
    chart: String,
    /// A version or a semver constraint.
    #[arg(long)]
    chart_version: Option<String>,
    /// `ChartVersion` or `Revision`.
    #[arg(long, default_value = "ChartVersion", value_parser = ["ChartVersion", "Revision"])]
    reconcile_strategy: String,
    /// Source sync interval.
    #[arg(long, default_value = "1m")]
    interval: String,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// Flags of `create source helm`.
#[derive(clap::Args, Debug)]
pub struct HelmArgs {
    /// The HelmRepository's name.
    name: String,
    /// The repository URL (`https://…` or `oci://…`).
    #[arg(long)]
    url: String,
    /// The name of an existing Secret with `username`/`password`.
    #[arg(long)]
    secret_ref: Option<String>,
    /// The name of an existing Secret with TLS keys (`ca.crt`, `tls.crt`, `tls.key`).
    #[arg(long)]
    cert_ref: Option<String>,
    /// Pass credentials to every host the charts are downloaded from.
    #[arg(long)]
    pass_credentials: bool,
    /// Source sync interval.
    #[arg(long, default_value = "1m")]
    interval: String,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// Flags of `create source oci`.
#[derive(clap::Args, Debug)]
pub struct OciArgs {
    /// The OCIRepository's name.
    name: String,
    /// The repository URL (`oci://<registry>/<repository>`).
    #[arg(long)]
    url: String,
    /// The artifact's tag.
    #[arg(long)]
    tag: Option<String>,
    /// A semver range over the tags.
    #[arg(long)]
    tag_semver: Option<String>,
    /// The artifact's digest.
    #[arg(long)]
    digest: Option<String>,
    /// The name of an existing docker-config Secret with registry credentials.
    #[arg(long)]
    secret_ref: Option<String>,
    /// The name of an existing Secret with a CA (`ca.crt`).
    #[arg(long)]
    cert_ref: Option<String>,
    /// The OCI provider: generic, aws, azure or gcp.
    #[arg(long, default_value = "generic", value_parser = ["generic", "aws", "azure", "gcp"])]
    provider: String,
    /// Allow plain HTTP to the registry.
    #[arg(long)]
    insecure: bool,
    /// Paths to leave out of the artifact (`.gitignore` syntax), comma-separated.
    #[arg(long, value_delimiter = ',')]
    ignore_paths: Vec<String>,
    /// Source sync interval.
    #[arg(long, default_value = "1m")]
    interval: String,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// Secret kinds.
#[derive(clap::Subcommand, Debug)]
pub enum SecretWhat {
    /// Credentials for a GitRepository: an SSH deploy key and the host's key, or HTTP(S) basic
    /// auth or a bearer token, and a CA.
    Git(SecretGitArgs),
    /// Credentials for a HelmRepository: basic auth, a client certificate, a CA.
    Helm(super::secret_registry::SecretHelmArgs),
    /// Registry credentials (a Docker config) for OCIRepositories and OCI HelmRepositories.
    Oci(super::secret_registry::SecretOciArgs),
}

/// Flags of `create source git`.
#[derive(clap::Args, Debug)]
pub struct GitArgs {
    /// The GitRepository's name.
    name: String,
    /// The repository URL.
    #[arg(long)]
    url: String,
    #[command(flatten)]
    reference: crate::git_ref::RefArgs,
    /// The name of an existing secret with Git credentials.
    #[arg(long)]
    secret_ref: Option<String>,
    /// Source sync interval.
    #[arg(long, default_value = "1m")]
    interval: String,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// Flags of `create kustomization`.
#[derive(clap::Args, Debug)]
pub struct KsArgs {
    /// The Kustomization's name.
    name: String,
    /// The source: `[<kind>/]<name>[.<namespace>]` (kind GitRepository by default).
    #[arg(long)]
    source: String,
    /// Path to the directory containing a kustomization.yaml file.
    #[arg(long, default_value = "./")]
    path: String,
    /// Enable garbage collection (`--prune` or `--prune=true|false`).
    #[arg(long, num_args = 0..=1, default_value_t = false, default_missing_value = "true", action = clap::ArgAction::Set)]
    prune: bool,
    /// Reconcile interval.
    #[arg(long, default_value = "1m")]
    interval: String,
    /// Kustomizations that must be ready first: `[<namespace>/]<name>`, repeatable.
    #[arg(long = "depends-on", value_delimiter = ',')]
    depends_on: Vec<String>,
    /// Overrides the namespace of every object.
    #[arg(long)]
    target_namespace: Option<String>,
    /// Wait for every applied object to become ready.
    #[arg(long, num_args = 0..=1, default_value_t = false, default_missing_value = "true", action = clap::ArgAction::Set)]
    wait: bool,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// A Go duration as Flux writes it (`1m` → `1m0s`), or the flag's error.
pub(super) fn interval(text: &str) -> anyhow::Result<String> {
    let d = tidegate_core::duration::parse(text).map_err(|e| anyhow::anyhow!("--interval: {e}"))?;
    Ok(tidegate_core::duration::format(d))
}

/// The scheme of `url` as Go's `url.Parse` finds it (lower-cased; empty when there is none),
/// or its error.
fn go_url_scheme(url: &str) -> Result<String, String> {
    for (i, c) in url.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => {
                return Err(format!("parse \"{url}\": missing protocol scheme"));
            }
            ':' => return Ok(url[..i].to_ascii_lowercase()),
            _ => return Ok(String::new()),
        }
    }
    Ok(String::new())
}

/// Refuses a Git URL `flux create source git` refuses: one that does not parse, or whose
/// scheme Tidegate cannot fetch (Flux's ssh, http and https, and Tidegate's git and file).
fn check_git_url(url: &str) -> anyhow::Result<()> {
    if url.is_empty() {
        anyhow::bail!("url is required");
    }
    if url.chars().any(|c| c.is_ascii_control()) {
        anyhow::bail!(
            "git URL parse failed: parse {url:?}: net/url: invalid control character in URL"
        );
    }
    let scheme = go_url_scheme(url).map_err(|e| anyhow::anyhow!("git URL parse failed: {e}"))?;
    if !matches!(scheme.as_str(), "ssh" | "http" | "https" | "git" | "file") {
        anyhow::bail!(
            "git URL scheme '{scheme}' not supported, can be: ssh, http, https, git and file"
        );
    }
    Ok(())
}

fn git_object(a: &GitArgs) -> anyhow::Result<Value> {
    check_git_url(&a.url)?;
    let mut spec = Map::new();
    spec.insert("interval".into(), json!(interval(&a.interval)?));
    spec.insert("ref".into(), a.reference.spec_ref());
    if let Some(s) = &a.secret_ref {
        spec.insert("secretRef".into(), json!({"name": s}));
    }
    spec.insert("url".into(), json!(a.url));
    Ok(json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    }))
}

fn oci_object(a: &OciArgs) -> anyhow::Result<Value> {
    tidegate_source::oci::parse_repository_url(&a.url)
        .map_err(|e| anyhow::anyhow!("--url: {e}"))?;
    let mut spec = Map::new();
    if let Some(c) = &a.cert_ref {
        spec.insert("certSecretRef".into(), json!({"name": c}));
    }
    if !a.ignore_paths.is_empty() {
        spec.insert("ignore".into(), json!(a.ignore_paths.join("\n")));
    }
    if a.insecure {
        spec.insert("insecure".into(), json!(true));
    }
    spec.insert("interval".into(), json!(interval(&a.interval)?));
    if a.provider != "generic" {
        spec.insert("provider".into(), json!(a.provider));
    }
    let mut r = Map::new();
    if let Some(d) = &a.digest {
        r.insert("digest".into(), json!(d));
    }
    if let Some(v) = &a.tag_semver {
        r.insert("semver".into(), json!(v));
    }
    if let Some(t) = &a.tag {
        r.insert("tag".into(), json!(t));
    }
    if r.is_empty() {
        anyhow::bail!("one of --tag, --tag-semver or --digest is required");
    }
    spec.insert("ref".into(), Value::Object(r));
    if let Some(s) = &a.secret_ref {
        spec.insert("secretRef".into(), json!({"name": s}));
    }
    spec.insert("url".into(), json!(a.url));
    Ok(json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "OCIRepository",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    }))
}

fn helm_object(a: &HelmArgs) -> anyhow::Result<Value> {
    let oci = a.url.starts_with("oci://");
    if !(oci || a.url.starts_with("http://") || a.url.starts_with("https://")) {
        anyhow::bail!("--url: the URL must start with http://, https:// or oci://");
    }
    let mut spec = Map::new();
    if let Some(c) = &a.cert_ref {
        spec.insert("certSecretRef".into(), json!({"name": c}));
    }
    spec.insert("interval".into(), json!(interval(&a.interval)?));
    if a.pass_credentials {
        spec.insert("passCredentials".into(), json!(true));
    }
    if let Some(s) = &a.secret_ref {
        spec.insert("secretRef".into(), json!({"name": s}));
    }
    if oci {
        spec.insert("type".into(), json!("oci"));
    }
    spec.insert("url".into(), json!(a.url));
    Ok(json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmRepository",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    }))
}

fn chart_object(a: &ChartArgs) -> anyhow::Result<Value> {
    let Some((kind, name)) = a.source.split_once('/') else {
        anyhow::bail!("--source: expected <kind>/<name> (HelmRepository, GitRepository, Bucket)");
    };
    if !matches!(kind, "HelmRepository" | "GitRepository" | "Bucket") || name.is_empty() {
        anyhow::bail!("--source: expected <kind>/<name> (HelmRepository, GitRepository, Bucket)");
    }
    let mut spec = Map::new();
    spec.insert("chart".into(), json!(a.chart));
    spec.insert("interval".into(), json!(interval(&a.interval)?));
    spec.insert("reconcileStrategy".into(), json!(a.reconcile_strategy));
    spec.insert("sourceRef".into(), json!({"kind": kind, "name": name}));
    if let Some(v) = &a.chart_version {
        spec.insert("version".into(), json!(v));
    }
    Ok(json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmChart",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    }))
}

/// `[<kind>/]<name>[.<namespace>]`.
fn source_ref(text: &str) -> anyhow::Result<Value> {
    let (kind, rest) = match text.split_once('/') {
        Some((k, r)) => (k, r),
        None => ("GitRepository", text),
    };
    if !matches!(kind, "GitRepository" | "OCIRepository" | "Bucket") {
        anyhow::bail!("--source: unsupported kind '{kind}' (GitRepository, OCIRepository, Bucket)");
    }
    let (name, namespace) = match rest.split_once('.') {
        Some((n, ns)) => (n, Some(ns)),
        None => (rest, None),
    };
    if name.is_empty() {
        anyhow::bail!("--source: a name is required");
    }
    let mut r = Map::new();
    r.insert("kind".into(), json!(kind));
    r.insert("name".into(), json!(name));
    if let Some(ns) = namespace {
        r.insert("namespace".into(), json!(ns));
    }
    Ok(Value::Object(r))
}

/// `--depends-on` entries (`<name>` or `<namespace>/<name>`) as `spec.dependsOn`.
pub(super) fn depends_on(entries: &[String]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|d| match d.split_once('/') {
                Some((ns, n)) => json!({"name": n, "namespace": ns}),
                None => json!({"name": d}),
            })
            .collect(),
    )
}

fn kustomization_object(a: &KsArgs) -> anyhow::Result<Value> {
    let mut spec = Map::new();
    if !a.depends_on.is_empty() {
        spec.insert("dependsOn".into(), depends_on(&a.depends_on));
    }
    spec.insert("interval".into(), json!(interval(&a.interval)?));
    spec.insert("path".into(), json!(a.path));
    spec.insert("prune".into(), json!(a.prune));
    spec.insert("sourceRef".into(), source_ref(&a.source)?);
    if let Some(t) = &a.target_namespace {
        spec.insert("targetNamespace".into(), json!(t));
    }
    if a.wait {
        spec.insert("wait".into(), json!(true));
    }
    Ok(json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    }))
}

/// Flux's export form of one object.
pub fn export_yaml(obj: &Value) -> String {
    format!("---\n{}", tidegate_core::yaml::to_yaml(obj))
}

async fn create(
    kind: Kind,
    label: &str,
    obj: Value,
    global: &Global,
    timeout: Duration,
) -> anyhow::Result<()> {
    create_with_secret(kind, label, obj, None, global, timeout).await
}

/// [`create`], applying `secret` (credentials the flags gave) before the object.
pub(super) async fn create_with_secret(
    kind: Kind,
    label: &str,
    obj: Value,
    secret: Option<Value>,
    global: &Global,
    timeout: Duration,
) -> anyhow::Result<()> {
    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
    let client = global.cluster.client().await?;
    generate(&format!("generating {label}"));
    if let Some(secret) = secret {
        action("applying secret with the credentials");
        crate::cluster::apply(&client, vec![secret], "applying the secret").await?;
        success("authentication configured");
    }
    action(&format!("applying {label}"));
    crate::cluster::apply(&client, vec![obj], &format!("applying {label}")).await?;
    success(&format!("{label} created"));
    waiting(&format!("waiting for {label} reconciliation"));
    let obj = wait_handled(kind, &client, &global.namespace, &name, None, timeout).await?;
    success(&format!("{label} reconciliation completed"));
    // Flux reports a source's revision; image objects have none to report.
    if !kind.kind.starts_with("Image") {
        success(&format!(
            "{} revision: {}",
            kind.verb,
            kind.revision_of(&obj)
        ));
    }
    Ok(())
}

/// Runs `create`.
pub async fn run(what: What) -> anyhow::Result<()> {
    match what {
        What::Source(SourceWhat::Git(a)) => {
            let obj = git_object(&a)?;
            if a.export {
                print!("{}", export_yaml(&obj));
                return Ok(());
            }
            create(
                GIT_REPOSITORY,
                "GitRepository source",
                obj,
                &a.global,
                a.global.timeout,
            )
            .await
        }
        What::Source(SourceWhat::Bucket(a)) => super::create_bucket::run(a).await,
        What::Source(SourceWhat::Oci(a)) => {
            let obj = oci_object(&a)?;
            if a.export {
                print!("{}", export_yaml(&obj));
                return Ok(());
            }
            create(
                OCI_REPOSITORY,
                "OCIRepository source",
                obj,
                &a.global,
                a.global.timeout,
            )
            .await
        }
        What::Source(SourceWhat::Helm(a)) => {
            let obj = helm_object(&a)?;
            if a.export {
                print!("{}", export_yaml(&obj));
                return Ok(());
            }
            create(
                HELM_REPOSITORY,
                "HelmRepository source",
                obj,
                &a.global,
                a.global.timeout,
            )
            .await
        }
        What::Source(SourceWhat::Chart(a)) => {
            let obj = chart_object(&a)?;
            if a.export {
                print!("{}", export_yaml(&obj));
                return Ok(());
            }
            create(
                HELM_CHART,
                "HelmChart source",
                obj,
                &a.global,
                a.global.timeout,
            )
            .await
        }
        What::Secret(SecretWhat::Git(a)) => super::secret::run(a).await,
        What::Secret(SecretWhat::Helm(a)) => super::secret_registry::run_helm(a).await,
        What::Secret(SecretWhat::Oci(a)) => super::secret_registry::run_oci(a).await,
        What::Kustomization(a) => {
            let obj = kustomization_object(&a)?;
            if a.export {
                print!("{}", export_yaml(&obj));
                return Ok(());
            }
            create(
                KUSTOMIZATION,
                "Kustomization",
                obj,
                &a.global,
                a.global.timeout,
            )
            .await
        }
        What::AlertProvider(a) => super::create_notification::run_provider(a).await,
        What::Alert(a) => super::create_notification::run_alert(a).await,
        What::Receiver(a) => super::create_notification::run_receiver(a).await,
        What::Image(ImageWhat::Repository(a)) => super::create_image::run_repository(a).await,
        What::Image(ImageWhat::Policy(a)) => super::create_image::run_policy(a).await,
        What::Image(ImageWhat::Update(a)) => super::create_image::run_update(a).await,
        What::Helmrelease(a) => {
            let obj = super::create_helmrelease::helmrelease_object(&a)?;
            if a.export {
                print!("{}", export_yaml(&obj));
                return Ok(());
            }
            create(
                HELM_RELEASE,
                "HelmRelease",
                obj,
                &a.global,
                a.global.timeout,
            )
            .await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(subcommand)]
        what: What,
    }

    #[test]
    fn create_source_git_refuses_what_flux_refuses() {
        let err = |url: &str| {
            let t = T::try_parse_from([
                "create", "source", "git", "x", "--url", url, "--branch", "main",
            ])
            .unwrap();
            let What::Source(SourceWhat::Git(a)) = t.what else {
                unreachable!()
            };
            git_object(&a).unwrap_err().to_string()
        };
        assert_eq!(
            err("not a url"),
            "git URL scheme '' not supported, can be: ssh, http, https, git and file"
        );
        assert_eq!(
            err("ftp://example.com/r.git"),
            "git URL scheme 'ftp' not supported, can be: ssh, http, https, git and file"
        );
        assert_eq!(
            err("://x"),
            "git URL parse failed: parse \"://x\": missing protocol scheme"
        );
        assert_eq!(err(""), "url is required");
        for ok in [
            "https://github.com/stefanprodan/podinfo",
            "HTTPS://github.com/x",
            "ssh://git@github.com/x/y",
            "git://127.0.0.1/r.git",
            "file:///srv/r.git",
        ] {
            let t = T::try_parse_from([
                "create", "source", "git", "x", "--url", ok, "--branch", "main",
            ])
            .unwrap();
            let What::Source(SourceWhat::Git(a)) = t.what else {
                unreachable!()
            };
            git_object(&a).unwrap();
        }
    }

    #[test]
    fn namespaces_are_checked_as_kube_checks_them() {
        let e = T::try_parse_from([
            "create",
            "source",
            "git",
            "x",
            "-n",
            "Bad NS!",
            "--url",
            "https://x",
        ])
        .err()
        .expect("refused")
        .to_string();
        assert!(
            e.contains(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters"
            ),
            "{e}"
        );
    }

    fn exported(args: &[&str]) -> String {
        let t = T::try_parse_from(std::iter::once("create").chain(args.iter().copied())).unwrap();
        match t.what {
            What::Source(SourceWhat::Git(a)) => export_yaml(&git_object(&a).unwrap()),
            What::Source(SourceWhat::Oci(a)) => export_yaml(&oci_object(&a).unwrap()),
            What::Source(SourceWhat::Helm(a)) => export_yaml(&helm_object(&a).unwrap()),
            What::Source(SourceWhat::Chart(a)) => export_yaml(&chart_object(&a).unwrap()),
            What::Source(SourceWhat::Bucket(a)) => {
                export_yaml(&super::super::create_bucket::bucket_object(&a, None).unwrap())
            }
            What::Kustomization(a) => export_yaml(&kustomization_object(&a).unwrap()),
            What::AlertProvider(a) => {
                export_yaml(&super::super::create_notification::provider_object(&a).unwrap())
            }
            What::Alert(a) => {
                export_yaml(&super::super::create_notification::alert_object(&a).unwrap())
            }
            What::Receiver(a) => {
                export_yaml(&super::super::create_notification::receiver_object(&a).unwrap())
            }
            What::Image(ImageWhat::Repository(a)) => {
                export_yaml(&super::super::create_image::repository_object(&a).unwrap())
            }
            What::Image(ImageWhat::Policy(a)) => {
                export_yaml(&super::super::create_image::policy_object(&a).unwrap())
            }
            What::Image(ImageWhat::Update(a)) => {
                export_yaml(&super::super::create_image::update_object(&a).unwrap())
            }
            What::Helmrelease(a) => {
                export_yaml(&super::super::create_helmrelease::helmrelease_object(&a).unwrap())
            }
            What::Secret(SecretWhat::Git(a)) => {
                export_yaml(&super::super::secret::secret_object(&a).unwrap())
            }
            What::Secret(SecretWhat::Helm(a)) => {
                export_yaml(&super::super::secret_registry::helm_secret_object(&a).unwrap())
            }
            What::Secret(SecretWhat::Oci(a)) => {
                export_yaml(&super::super::secret_registry::oci_secret_object(&a).unwrap())
            }
        }
    }

    #[test]
    fn exports_notification_objects_as_flux_does() {
        assert_eq!(
            exported(&[
                "alert-provider",
                "slack",
                "--type",
                "slack",
                "--channel",
                "general",
                "--address",
                "https://hooks.slack.com/services/x",
                "--secret-ref",
                "webhook-url",
                "--export",
            ]),
            "---\napiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Provider\nmetadata:\n  name: slack\n  namespace: flux-system\nspec:\n  address: https://hooks.slack.com/services/x\n  channel: general\n  secretRef:\n    name: webhook-url\n  type: slack\n"
        );
        assert_eq!(
            exported(&[
                "alert",
                "podinfo",
                "--provider-ref",
                "slack",
                "--event-severity",
                "info",
                "--event-source",
                "GitRepository/podinfo,Kustomization/*.apps",
                "--export",
            ]),
            "---\napiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Alert\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n  eventSeverity: info\n  eventSources:\n  - kind: GitRepository\n    name: podinfo\n  - kind: Kustomization\n    name: '*'\n    namespace: apps\n  providerRef:\n    name: slack\n"
        );
        assert_eq!(
            exported(&[
                "receiver",
                "github-receiver",
                "--type",
                "github",
                "--event",
                "ping",
                "--event",
                "push",
                "--secret-ref",
                "webhook-token",
                "--resource",
                "GitRepository/webapp",
                "--export",
            ]),
            "---\napiVersion: notification.toolkit.fluxcd.io/v1\nkind: Receiver\nmetadata:\n  name: github-receiver\n  namespace: flux-system\nspec:\n  events:\n  - ping\n  - push\n  resources:\n  - kind: GitRepository\n    name: webapp\n  secretRef:\n    name: webhook-token\n  type: github\n"
        );
        let t = T::try_parse_from(["create", "alert", "x", "--provider-ref", "p"]).unwrap();
        let What::Alert(a) = t.what else {
            unreachable!()
        };
        assert_eq!(
            super::super::create_notification::alert_object(&a)
                .unwrap_err()
                .to_string(),
            "at least one event source is required"
        );
    }

    #[test]
    fn exports_image_update_automations_as_flux_does() {
        // flux2's `cmd/flux/testdata/create_image_update/*.yaml`.
        let base = [
            "image",
            "update",
            "flux-system",
            "--git-repo-ref=flux-system",
            "--checkout-branch=main",
            "--author-name=flux",
            "--author-email=flux@example.com",
            "--interval=1m0s",
            "--namespace=flux-system",
            "--export",
        ];
        let head = "---\napiVersion: image.toolkit.fluxcd.io/v1\nkind: ImageUpdateAutomation\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  git:\n    checkout:\n      ref:\n        branch: main\n    commit:\n      author:\n        email: flux@example.com\n        name: flux\n";
        let tail =
            "  interval: 1m0s\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n";
        assert_eq!(exported(&base), format!("{head}{tail}"));
        let mut gpg = base.to_vec();
        gpg.push("--signing-key-secret=my-key");
        assert_eq!(
            exported(&gpg),
            format!("{head}      signingKey:\n        secretRef:\n          name: my-key\n{tail}")
        );
        let mut ssh = base.to_vec();
        ssh.extend([
            "--signing-key-secret=my-deploy-key",
            "--signing-key-type=ssh",
        ]);
        assert_eq!(
            exported(&ssh),
            format!(
                "{head}      signingKey:\n        secretRef:\n          name: my-deploy-key\n        type: ssh\n{tail}"
            )
        );
        let refused = |extra: &[&str]| {
            let mut args = vec!["create"];
            args.extend(
                base.iter()
                    .copied()
                    .filter(|a| !a.starts_with("--author-name")),
            );
            args.push("--author-name=flux");
            args.extend(extra);
            let t = T::try_parse_from(args).unwrap();
            match t.what {
                What::Image(ImageWhat::Update(a)) => super::super::create_image::update_object(&a)
                    .unwrap_err()
                    .to_string(),
                _ => unreachable!(),
            }
        };
        assert_eq!(
            refused(&["--signing-key-type=ssh"]),
            "--signing-key-type requires --signing-key-secret"
        );
        assert_eq!(
            refused(&["--signing-key-secret=k", "--signing-key-type=pgp"]),
            "--signing-key-type must be one of: gpg, ssh"
        );
    }

    #[test]
    fn exports_image_objects_as_flux_does() {
        // `flux create image repository alpine-repo --image alpine --interval 20m --export`.
        assert_eq!(
            exported(&[
                "image",
                "repository",
                "alpine-repo",
                "--image",
                "alpine",
                "--interval",
                "20m",
                "--export",
            ]),
            "---\napiVersion: image.toolkit.fluxcd.io/v1\nkind: ImageRepository\nmetadata:\n  name: alpine-repo\n  namespace: flux-system\nspec:\n  image: alpine\n  interval: 20m0s\n"
        );
        // `flux create image policy podinfo --image-ref=podinfo --select-semver=">=4.0.0"
        // --filter-regex='^main-[a-f0-9]+-(?P<ts>[0-9]+)' --filter-extract='$ts' --export`.
        assert_eq!(
            exported(&[
                "image",
                "policy",
                "podinfo",
                "--image-ref=podinfo",
                "--select-numeric=asc",
                "--filter-regex=^main-[a-f0-9]+-(?P<ts>[0-9]+)",
                "--filter-extract=$ts",
                "--export",
            ]),
            "---\napiVersion: image.toolkit.fluxcd.io/v1\nkind: ImagePolicy\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n  filterTags:\n    extract: $ts\n    pattern: ^main-[a-f0-9]+-(?P<ts>[0-9]+)\n  imageRepositoryRef:\n    name: podinfo\n  policy:\n    numerical:\n      order: asc\n"
        );
        let refused = |args: &[&str]| {
            let t =
                T::try_parse_from(std::iter::once("create").chain(args.iter().copied())).unwrap();
            match t.what {
                What::Image(ImageWhat::Policy(a)) => super::super::create_image::policy_object(&a),
                What::Image(ImageWhat::Repository(a)) => {
                    super::super::create_image::repository_object(&a)
                }
                What::Image(ImageWhat::Update(a)) => super::super::create_image::update_object(&a),
                _ => unreachable!(),
            }
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            refused(&[
                "image",
                "policy",
                "p",
                "--image-ref=r",
                "--select-semver=1.x",
                "--select-alpha=asc"
            ]),
            "only one of --select-semver, --select-alpha or --select-numeric can be specified"
        );
        assert_eq!(
            refused(&["image", "policy", "p", "--image-ref=r", "--select-alpha=up"]),
            "--select-alpha must be one of [\"asc\", \"desc\"]"
        );
        assert_eq!(
            refused(&[
                "image",
                "policy",
                "p",
                "--image-ref=r",
                "--select-alpha=asc",
                "--filter-regex=v(?P<n>.*)",
                "--filter-extract=$m"
            ]),
            "capture group $m used in --filter-extract not found in --filter-regex"
        );
        assert_eq!(
            refused(&[
                "image",
                "policy",
                "p",
                "--image-ref=r",
                "--select-alpha=asc",
                "--interval=5m"
            ]),
            "the --interval flag can only be used with the 'Always' digest reflection policy, use --reflect-digest=Always"
        );
        assert_eq!(
            refused(&["image", "repository", "r", "--image", "ghcr.io/org/app:v1"]),
            "unable to parse image value: image 'ghcr.io/org/app:v1' should not include a tag; remove ':v1'"
        );
        assert_eq!(
            refused(&["image", "repository", "r"]),
            "an image repository (--image) is required"
        );
    }

    #[test]
    fn exports_as_flux_does() {
        // The output of `flux create source git podinfo --url=… --branch=master
        // --interval=1m --export`.
        assert_eq!(
            exported(&[
                "source",
                "git",
                "podinfo",
                "--url=https://github.com/stefanprodan/podinfo",
                "--branch=master",
                "--interval=1m",
                "--export",
            ]),
            "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n  interval: 1m0s\n  ref:\n    branch: master\n  url: https://github.com/stefanprodan/podinfo\n"
        );
        // `flux create source oci podinfo --url=oci://ghcr.io/stefanprodan/manifests/podinfo
        // --tag=6.6.2 --interval=10m --export`.
        assert_eq!(
            exported(&[
                "source",
                "oci",
                "podinfo",
                "--url=oci://ghcr.io/stefanprodan/manifests/podinfo",
                "--tag=6.6.2",
                "--interval=10m",
                "--export",
            ]),
            "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n  interval: 10m0s\n  ref:\n    tag: 6.6.2\n  url: oci://ghcr.io/stefanprodan/manifests/podinfo\n"
        );
        // `flux create source helm podinfo --url=https://stefanprodan.github.io/podinfo
        // --interval=10m --export`.
        assert_eq!(
            exported(&[
                "source",
                "helm",
                "podinfo",
                "--url=https://stefanprodan.github.io/podinfo",
                "--interval=10m",
                "--export",
            ]),
            "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n  interval: 10m0s\n  url: https://stefanprodan.github.io/podinfo\n"
        );
        // The fields flux's `create source chart` sets, with its default strategy.
        assert_eq!(
            exported(&[
                "source",
                "chart",
                "podinfo",
                "--source=HelmRepository/podinfo",
                "--chart=podinfo",
                "--chart-version=>6.0.0",
                "--interval=10m",
                "--export",
            ]),
            "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n  chart: podinfo\n  interval: 10m0s\n  reconcileStrategy: ChartVersion\n  sourceRef:\n    kind: HelmRepository\n    name: podinfo\n  version: '>6.0.0'\n"
        );
        // `flux create kustomization podinfo --source=podinfo --path=./kustomize --prune=true
        // --interval=5m --export`.
        assert_eq!(
            exported(&[
                "kustomization",
                "podinfo",
                "--source=podinfo",
                "--path=./kustomize",
                "--prune=true",
                "--interval=5m",
                "--export",
            ]),
            "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n  interval: 5m0s\n  path: ./kustomize\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: podinfo\n"
        );
        let out = exported(&[
            "kustomization",
            "apps",
            "--source=GitRepository/repo.shared",
            "--depends-on=infra,ops/base",
            "--target-namespace=apps",
            "--export",
        ]);
        assert!(
            out.contains("  dependsOn:\n  - name: infra\n  - name: base\n    namespace: ops\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "  sourceRef:\n    kind: GitRepository\n    name: repo\n    namespace: shared\n"
            ),
            "{out}"
        );
        assert!(out.contains("  targetNamespace: apps\n"), "{out}");
        assert_eq!(
            exported(&[
                "secret",
                "git",
                "podinfo-auth",
                "--url=https://github.com/stefanprodan/podinfo",
                "--username=git",
                "--password=token",
                "--export",
            ]),
            "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: podinfo-auth\n  namespace: flux-system\nstringData:\n  password: token\n  username: git\n"
        );
        assert_eq!(
            exported(&[
                "secret",
                "helm",
                "repo-auth",
                "-n",
                "apps",
                "-u",
                "me",
                "-p",
                "pw"
            ]),
            "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: repo-auth\n  namespace: apps\nstringData:\n  password: pw\n  username: me\ntype: kubernetes.io/basic-auth\n"
        );
        let oci = exported(&[
            "secret",
            "oci",
            "ghcr-auth",
            "--url=ghcr.io",
            "--username=me",
            "--password=p&w",
        ]);
        assert!(
            oci.starts_with("---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: ghcr-auth\n  namespace: flux-system\nstringData:\n  .dockerconfigjson: |-\n    {\n      \"auths\": {\n        \"ghcr.io\": {\n"),
            "{oci}"
        );
        assert!(
            oci.ends_with("type: kubernetes.io/dockerconfigjson\n"),
            "{oci}"
        );
    }

    #[test]
    fn registry_secrets_are_read_back_by_the_sources() {
        let t = T::try_parse_from([
            "create",
            "secret",
            "oci",
            "auth",
            "--url=registry.example.com:5000",
            "-u",
            "fleet",
            "-p",
            "s3cr&t",
        ])
        .unwrap();
        let What::Secret(SecretWhat::Oci(a)) = t.what else {
            panic!("parsed as oci");
        };
        let obj = super::super::secret_registry::oci_secret_object(&a).unwrap();
        let config = obj["stringData"][".dockerconfigjson"].as_str().unwrap();
        let creds = tidegate_source::oci::auth::from_docker_config(
            config.as_bytes(),
            "registry.example.com:5000/app",
        )
        .unwrap();
        assert_eq!(
            creds,
            Some(tidegate_source::oci::Credentials::Basic {
                username: "fleet".into(),
                password: "s3cr&t".into()
            })
        );
        let t = T::try_parse_from(["create", "secret", "helm", "x", "-u", "me"]).unwrap();
        let What::Secret(SecretWhat::Helm(a)) = t.what else {
            panic!("parsed as helm");
        };
        assert_eq!(
            super::super::secret_registry::helm_secret_object(&a)
                .unwrap_err()
                .to_string(),
            "password is required"
        );
        for missing in [
            vec!["create", "secret", "oci", "x", "-u", "a", "-p", "b"],
            vec!["create", "secret", "oci", "x", "--url=ghcr.io", "-p", "b"],
        ] {
            let t = T::try_parse_from(missing).unwrap();
            let What::Secret(SecretWhat::Oci(a)) = t.what else {
                panic!("parsed as oci");
            };
            assert!(
                super::super::secret_registry::oci_secret_object(&a)
                    .unwrap_err()
                    .to_string()
                    .ends_with("is required")
            );
        }
    }
}
