//! `tidegate create image repository|policy|update NAME …`: ImageRepositories, ImagePolicies
//! and ImageUpdateAutomations from flags, checked as `flux create image` checks them; `--export` prints them, otherwise they
//! are applied and waited for.

use serde_json::{Value, json};

use super::Global;
use super::create::{export_yaml, interval};
use super::create_notification::sorted;
use super::kind::{IMAGE_POLICY, IMAGE_REPOSITORY, IMAGE_UPDATE};

/// Flags of `create image repository`.
#[derive(clap::Args, Debug)]
pub struct RepositoryArgs {
    /// The ImageRepository's name.
    name: String,
    /// The image repository to scan, e.g. `library/alpine`.
    #[arg(long)]
    image: Option<String>,
    /// The name of a docker-registry Secret with credentials.
    #[arg(long)]
    secret_ref: Option<String>,
    /// The name of a Secret with TLS certificates.
    #[arg(long = "cert-ref")]
    cert_secret_ref: Option<String>,
    /// A timeout for scanning (default: the interval).
    #[arg(long)]
    scan_timeout: Option<String>,
    /// How often to scan.
    #[arg(long, default_value = "1m")]
    interval: String,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// Flags of `create image policy`.
#[derive(clap::Args, Debug)]
pub struct PolicyArgs {
    /// The ImagePolicy's name.
    name: String,
    /// The name of an ImageRepository in the namespace.
    #[arg(long)]
    image_ref: Option<String>,
    /// A semver range to apply to tags, e.g. `1.x`.
    #[arg(long)]
    select_semver: Option<String>,
    /// Alphabetical order: `asc` selects the last, `desc` the first.
    #[arg(long)]
    select_alpha: Option<String>,
    /// Numerical order: `asc` selects the last, `desc` the first.
    #[arg(long)]
    select_numeric: Option<String>,
    /// Regular expression tags must match.
    #[arg(long)]
    filter_regex: Option<String>,
    /// What to sort by instead of the tag (capture groups of `--filter-regex`).
    #[arg(long)]
    filter_extract: Option<String>,
    /// `Never`, `IfNotPresent` or `Always`.
    #[arg(long)]
    reflect_digest: Option<String>,
    /// How often to check digests (only with `--reflect-digest Always`).
    #[arg(long)]
    interval: Option<String>,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// Flags of `create image update`.
#[derive(clap::Args, Debug)]
pub struct UpdateArgs {
    /// The ImageUpdateAutomation's name.
    name: String,
    /// The name of a GitRepository resource with details of the upstream Git repository.
    #[arg(long)]
    git_repo_ref: Option<String>,
    /// The namespace of the GitRepository (default: the automation's).
    #[arg(long)]
    git_repo_namespace: Option<String>,
    /// Path to the directory containing the manifests to be updated (default: the root).
    #[arg(long)]
    git_repo_path: Option<String>,
    /// The branch to check out.
    #[arg(long)]
    checkout_branch: Option<String>,
    /// The branch to push commits to (default: the checkout branch).
    #[arg(long)]
    push_branch: Option<String>,
    /// A template for commit messages.
    #[arg(long)]
    commit_template: Option<String>,
    /// The name to use for the commit author.
    #[arg(long)]
    author_name: Option<String>,
    /// The email to use for the commit author.
    #[arg(long)]
    author_email: Option<String>,
    /// Name of the Secret holding the signing key (`spec.git.commit.signingKey`).
    #[arg(long)]
    signing_key_secret: Option<String>,
    /// The signing key's format: `gpg` or `ssh` (default gpg with --signing-key-secret).
    #[arg(long)]
    signing_key_type: Option<String>,
    /// How often to run.
    #[arg(long, default_value = "1m")]
    interval: String,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// The ImageUpdateAutomation the flags describe.
pub fn update_object(a: &UpdateArgs) -> anyhow::Result<Value> {
    fn set(v: &Option<String>) -> Option<&str> {
        v.as_deref().filter(|s| !s.is_empty())
    }
    let Some(repo) = set(&a.git_repo_ref) else {
        anyhow::bail!("a reference to a GitRepository is required (--git-repo-ref)");
    };
    let Some(branch) = set(&a.checkout_branch) else {
        anyhow::bail!("the Git repository branch is required (--checkout-branch)");
    };
    let Some(author_name) = set(&a.author_name) else {
        anyhow::bail!("the author name is required (--author-name)");
    };
    let Some(author_email) = set(&a.author_email) else {
        anyhow::bail!("the author email is required (--author-email)");
    };
    let key_type = set(&a.signing_key_type);
    if key_type.is_some() && set(&a.signing_key_secret).is_none() {
        anyhow::bail!("--signing-key-type requires --signing-key-secret");
    }
    if key_type.is_some_and(|t| t != "gpg" && t != "ssh") {
        anyhow::bail!("--signing-key-type must be one of: gpg, ssh");
    }
    let mut source = json!({"kind": "GitRepository", "name": repo});
    if let Some(ns) = set(&a.git_repo_namespace) {
        source["namespace"] = json!(ns);
    }
    let mut commit = json!({"author": {"name": author_name, "email": author_email}});
    if let Some(t) = set(&a.commit_template) {
        commit["messageTemplate"] = json!(t);
    }
    if let Some(secret) = set(&a.signing_key_secret) {
        let mut key = json!({"secretRef": {"name": secret}});
        if let Some(t) = key_type {
            key["type"] = json!(t);
        }
        commit["signingKey"] = key;
    }
    let mut git = json!({"checkout": {"ref": {"branch": branch}}, "commit": commit});
    if let Some(p) = set(&a.push_branch) {
        git["push"] = json!({"branch": p});
    }
    let mut spec = json!({"sourceRef": source, "git": git, "interval": interval(&a.interval)?});
    if let Some(path) = set(&a.git_repo_path) {
        spec["update"] = json!({"path": path, "strategy": "Setters"});
    }
    Ok(sorted(json!({
        "apiVersion": "image.toolkit.fluxcd.io/v1",
        "kind": "ImageUpdateAutomation",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    })))
}

/// The ImageRepository the flags describe.
pub fn repository_object(a: &RepositoryArgs) -> anyhow::Result<Value> {
    let Some(image) = a.image.as_deref().filter(|i| !i.is_empty()) else {
        anyhow::bail!("an image repository (--image) is required");
    };
    if let Err(e) = tidegate_source::image::reference::parse_image(image) {
        anyhow::bail!("unable to parse image value: {e}");
    }
    let mut spec = json!({"image": image, "interval": interval(&a.interval)?});
    if let Some(t) = &a.scan_timeout {
        spec["timeout"] = json!(interval(t).map_err(|e| anyhow::anyhow!("--scan-timeout: {e}"))?);
    }
    for (field, value) in [
        ("secretRef", &a.secret_ref),
        ("certSecretRef", &a.cert_secret_ref),
    ] {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            spec[field] = json!({"name": v});
        }
    }
    Ok(sorted(json!({
        "apiVersion": "image.toolkit.fluxcd.io/v1",
        "kind": "ImageRepository",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    })))
}

fn order(flag: &str, value: &str) -> anyhow::Result<String> {
    match value {
        "asc" | "desc" => Ok(value.to_string()),
        _ => anyhow::bail!("--{flag} must be one of [\"asc\", \"desc\"]"),
    }
}

/// The ImagePolicy the flags describe.
pub fn policy_object(a: &PolicyArgs) -> anyhow::Result<Value> {
    let Some(image_ref) = a.image_ref.as_deref().filter(|i| !i.is_empty()) else {
        anyhow::bail!("the name of an ImageRepository in the namespace is required (--image-ref)");
    };
    fn set(v: &Option<String>) -> Option<&str> {
        v.as_deref().filter(|s| !s.is_empty())
    }
    let chosen = [
        set(&a.select_semver),
        set(&a.select_alpha),
        set(&a.select_numeric),
    ];
    if chosen.iter().filter(|c| c.is_some()).count() > 1 {
        anyhow::bail!(
            "only one of --select-semver, --select-alpha or --select-numeric can be specified"
        );
    }
    let policy = match chosen {
        [Some(range), _, _] => {
            if let Err(e) = tidegate_core::semver::Constraints::parse(range) {
                anyhow::bail!("semver parse error: {e}");
            }
            json!({"semver": {"range": range}})
        }
        [_, Some(o), _] => json!({"alphabetical": {"order": order("select-alpha", o)?}}),
        [_, _, Some(o)] => json!({"numerical": {"order": order("select-numeric", o)?}}),
        _ => {
            anyhow::bail!("a policy must be provided with either --select-semver or --select-alpha")
        }
    };
    let mut spec = json!({"imageRepositoryRef": {"name": image_ref}, "policy": policy});
    match (set(&a.filter_regex), set(&a.filter_extract)) {
        (Some(pattern), extract) => {
            let re = regex::Regex::new(pattern)
                .map_err(|_| anyhow::anyhow!("--filter-regex is an invalid regex pattern"))?;
            let mut filter = json!({"pattern": pattern});
            if let Some(x) = extract {
                check_extract(x, &re)?;
                filter["extract"] = json!(x);
            }
            spec["filterTags"] = filter;
        }
        (None, Some(_)) => {
            anyhow::bail!("cannot specify --filter-extract without specifying --filter-regex")
        }
        (None, None) => {}
    }
    if let Some(p) = set(&a.reflect_digest) {
        if !["Never", "IfNotPresent", "Always"].contains(&p) {
            anyhow::bail!(
                "invalid value for --reflect-digest, must be one of 'Never', 'IfNotPresent', 'Always'"
            );
        }
        spec["digestReflectionPolicy"] = json!(p);
    }
    if let Some(i) = set(&a.interval) {
        if set(&a.reflect_digest) != Some("Always") {
            anyhow::bail!(
                "the --interval flag can only be used with the 'Always' digest reflection policy, use --reflect-digest=Always"
            );
        }
        spec["interval"] = json!(interval(i)?);
    }
    Ok(sorted(json!({
        "apiVersion": "image.toolkit.fluxcd.io/v1",
        "kind": "ImagePolicy",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    })))
}

/// Flux's dry run of `--filter-extract`: every named group it uses exists in the regex.
fn check_extract(template: &str, re: &regex::Regex) -> anyhow::Result<()> {
    let names: Vec<&str> = re.capture_names().flatten().collect();
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("$$") {
            rest = after;
            continue;
        }
        let body = &rest[1..];
        let (name, used) = match body.strip_prefix('{') {
            Some(b) => match b.find('}') {
                Some(end) => (&b[..end], end + 3),
                None => anyhow::bail!("--filter-extract is malformed"),
            },
            None => {
                let end = body
                    .char_indices()
                    .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
                    .map_or(body.len(), |(i, _)| i);
                (&body[..end], end + 1)
            }
        };
        if name.is_empty() {
            anyhow::bail!("--filter-extract is malformed");
        }
        let numeric = name.bytes().all(|b| b.is_ascii_digit());
        if !numeric && !names.contains(&name) {
            anyhow::bail!(
                "capture group ${name} used in --filter-extract not found in --filter-regex"
            );
        }
        rest = &rest[used..];
    }
    Ok(())
}

/// Prints `obj` (`--export`) or applies it and waits for it to be ready.
async fn export_or_apply(
    obj: Value,
    export: bool,
    kind: super::kind::Kind,
    global: &Global,
) -> anyhow::Result<()> {
    if export {
        print!("{}", export_yaml(&obj));
        return Ok(());
    }
    super::create::create_with_secret(kind, kind.kind, obj, None, global, global.timeout).await
}

/// Runs `create image repository`.
pub async fn run_repository(a: RepositoryArgs) -> anyhow::Result<()> {
    export_or_apply(
        repository_object(&a)?,
        a.export,
        IMAGE_REPOSITORY,
        &a.global,
    )
    .await
}

/// Runs `create image policy`.
pub async fn run_policy(a: PolicyArgs) -> anyhow::Result<()> {
    export_or_apply(policy_object(&a)?, a.export, IMAGE_POLICY, &a.global).await
}

/// Runs `create image update`.
pub async fn run_update(a: UpdateArgs) -> anyhow::Result<()> {
    export_or_apply(update_object(&a)?, a.export, IMAGE_UPDATE, &a.global).await
}
