//! `tidegate create secret helm|oci NAME …`: Secrets for HelmRepositories and OCI registries, as
//! Flux's CLI makes them. `helm`: a `kubernetes.io/tls` Secret when a client certificate is
//! given, else `kubernetes.io/basic-auth` with `username`/`password` (and `ca.crt`), else an
//! Opaque one with only `ca.crt`. `oci`: a `kubernetes.io/dockerconfigjson` Secret for one
//! registry.

use std::collections::BTreeMap;
use std::path::PathBuf;

use base64::Engine;
use serde_json::{Value, json};

use super::{Global, action};

/// Flags of `create secret helm`.
#[derive(clap::Args, Debug)]
pub struct SecretHelmArgs {
    /// The Secret's name.
    pub name: String,
    /// Basic authentication user name.
    #[arg(short = 'u', long)]
    username: Option<String>,
    /// Basic authentication password.
    #[arg(short = 'p', long)]
    password: Option<String>,
    /// TLS client certificate file (`tls.crt`).
    #[arg(long)]
    tls_crt_file: Option<PathBuf>,
    /// TLS client key file (`tls.key`).
    #[arg(long)]
    tls_key_file: Option<PathBuf>,
    /// CA certificate file (`ca.crt`).
    #[arg(long)]
    ca_crt_file: Option<PathBuf>,
    /// Print the Secret as YAML instead of applying it.
    #[arg(long)]
    pub export: bool,
    #[command(flatten)]
    pub global: Global,
}

/// Flags of `create secret oci`.
#[derive(clap::Args, Debug)]
pub struct SecretOciArgs {
    /// The Secret's name.
    pub name: String,
    /// The registry address, e.g. ghcr.io or ghcr.io/org/charts.
    #[arg(long)]
    url: Option<String>,
    /// Basic authentication user name.
    #[arg(short = 'u', long)]
    username: Option<String>,
    /// Basic authentication password.
    #[arg(short = 'p', long)]
    password: Option<String>,
    /// Print the Secret as YAML instead of applying it.
    #[arg(long)]
    pub export: bool,
    #[command(flatten)]
    pub global: Global,
}

fn read(path: &Option<PathBuf>, what: &str) -> anyhow::Result<Option<String>> {
    path.as_ref()
        .map(|p| {
            std::fs::read_to_string(p)
                .map_err(|e| anyhow::anyhow!("failed to read {what} file '{}': {e}", p.display()))
        })
        .transpose()
}

fn secret(name: &str, namespace: &str, type_: Option<&str>, data: BTreeMap<&str, String>) -> Value {
    let mut obj = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "stringData": data,
    });
    if let Some(t) = type_ {
        obj["type"] = json!(t);
    }
    obj
}

/// The Secret `create secret helm` makes.
pub fn helm_secret_object(a: &SecretHelmArgs) -> anyhow::Result<Value> {
    let text = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
    let (user, pass) = (text(&a.username), text(&a.password));
    let ca = read(&a.ca_crt_file, "TLS CA")?;
    let cert = read(&a.tls_crt_file, "cert")?;
    let key = read(&a.tls_key_file, "key")?;
    let mut data = BTreeMap::new();
    let type_ = if cert.is_some() || key.is_some() {
        let (Some(cert), Some(key)) = (cert, key) else {
            anyhow::bail!("a client certificate needs both --tls-crt-file and --tls-key-file");
        };
        data.insert("tls.crt", cert);
        data.insert("tls.key", key);
        Some("kubernetes.io/tls")
    } else if user.is_some() || pass.is_some() {
        let Some(user) = user else {
            anyhow::bail!("username is required");
        };
        let Some(pass) = pass else {
            anyhow::bail!("password is required");
        };
        data.insert("username", user);
        data.insert("password", pass);
        Some("kubernetes.io/basic-auth")
    } else if ca.is_some() {
        Some("Opaque")
    } else {
        None
    };
    if let Some(ca) = ca {
        data.insert("ca.crt", ca);
    }
    Ok(secret(&a.name, &a.global.namespace, type_, data))
}

/// The Secret `create secret oci` makes: a Docker config for the registry in `--url`.
pub fn oci_secret_object(a: &SecretOciArgs) -> anyhow::Result<Value> {
    let required = |v: &Option<String>, flag: &str| {
        v.clone()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| anyhow::anyhow!("--{flag} is required"))
    };
    let url = required(&a.url, "url")?;
    let username = required(&a.username, "username")?;
    let password = required(&a.password, "password")?;
    if url.contains("://") || url.starts_with('/') || url.contains(char::is_whitespace) {
        anyhow::bail!(
            "error parsing url: '{url}': expected a registry address such as ghcr.io/org/charts"
        );
    }
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
    let config = json!({"auths": {url.as_str(): {
        "username": username,
        "password": password,
        "auth": auth,
    }}});
    // Go's json.MarshalIndent: two spaces, `<`, `>` and `&` escaped.
    let text = serde_json::to_string_pretty(&config)?
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    let mut data = BTreeMap::new();
    data.insert(".dockerconfigjson", text);
    Ok(secret(
        &a.name,
        &a.global.namespace,
        Some("kubernetes.io/dockerconfigjson"),
        data,
    ))
}

async fn apply_or_export(
    obj: Value,
    export: bool,
    global: &Global,
    what: &str,
) -> anyhow::Result<()> {
    if export {
        print!("{}", super::create::export_yaml(&obj));
        return Ok(());
    }
    let client = global.cluster.client().await?;
    crate::cluster::apply(&client, vec![obj.clone()], "applying secret").await?;
    action(&format!(
        "{what} secret '{}' created in '{}' namespace",
        obj["metadata"]["name"].as_str().unwrap_or_default(),
        global.namespace
    ));
    Ok(())
}

/// Runs `create secret helm`.
pub async fn run_helm(a: SecretHelmArgs) -> anyhow::Result<()> {
    let obj = helm_secret_object(&a)?;
    apply_or_export(obj, a.export, &a.global, "helm").await
}

/// Runs `create secret oci`.
pub async fn run_oci(a: SecretOciArgs) -> anyhow::Result<()> {
    let obj = oci_secret_object(&a)?;
    apply_or_export(obj, a.export, &a.global, "oci").await
}
