//! `tidegate create secret git NAME --url …`: a Secret with Git credentials, as Flux's CLI makes
//! it. For `ssh://` a deploy key pair is generated (ECDSA P-384 unless `--ssh-key-algorithm`
//! says otherwise) or read from `--private-key-file`, and the server's host key is scanned into
//! `known_hosts`; for `http(s)://` basic auth or a bearer token, and a CA, are stored.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tidegate_source::ssh::{KeyAlgorithm, KeyPair, scan_host_key};

use super::{Global, action, generate};

/// How long the host key scan may take (Flux's).
const SCAN_TIMEOUT: Duration = Duration::from_secs(30);

/// `--ssh-key-algorithm`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Algorithm {
    /// RSA (`--ssh-rsa-bits`).
    Rsa,
    /// ECDSA (`--ssh-ecdsa-curve`).
    Ecdsa,
    /// Ed25519.
    Ed25519,
}

/// `--ssh-ecdsa-curve`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Curve {
    /// NIST P-256.
    P256,
    /// NIST P-384.
    P384,
    /// NIST P-521.
    P521,
}

/// Flags of `create secret git`.
#[derive(clap::Args, Debug)]
pub struct SecretGitArgs {
    /// The Secret's name.
    pub name: String,
    /// The Git address, e.g. ssh://git@host/org/repository or https://host/org/repository.
    #[arg(long)]
    url: String,
    /// Basic authentication user name (HTTP/S).
    #[arg(short = 'u', long)]
    username: Option<String>,
    /// Basic authentication password (HTTP/S), or the password of --private-key-file (SSH).
    #[arg(short = 'p', long)]
    password: Option<String>,
    /// Bearer authentication token (HTTP/S).
    #[arg(long)]
    bearer_token: Option<String>,
    /// A CA certificate file for self-signed servers (`ca.crt`).
    #[arg(long, alias = "ca-file")]
    ca_crt_file: Option<PathBuf>,
    /// SSH key algorithm of the generated deploy key.
    #[arg(long, value_enum, default_value = "ecdsa")]
    ssh_key_algorithm: Algorithm,
    /// SSH RSA key size in bits (a multiple of 8, at least 2048).
    #[arg(long, default_value_t = 2048)]
    ssh_rsa_bits: usize,
    /// SSH ECDSA curve.
    #[arg(long, value_enum, default_value = "p384")]
    ssh_ecdsa_curve: Curve,
    /// An OpenSSH private key file to use instead of generating one (with --password when it
    /// is encrypted).
    #[arg(long)]
    private_key_file: Option<PathBuf>,
    /// Print the Secret as YAML instead of applying it.
    #[arg(long)]
    pub export: bool,
    #[command(flatten)]
    pub global: Global,
}

/// The scheme and the `host[:port]` of a URL.
fn scheme_and_host(url: &str) -> anyhow::Result<(&str, &str)> {
    let Some((scheme, rest)) = url.split_once("://") else {
        anyhow::bail!("git URL parse failed: --url {url:?} has no scheme");
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    Ok((scheme, host))
}

impl SecretGitArgs {
    fn algorithm(&self) -> anyhow::Result<KeyAlgorithm> {
        Ok(match self.ssh_key_algorithm {
            Algorithm::Rsa => {
                let bits = self.ssh_rsa_bits;
                if bits < 2048 {
                    anyhow::bail!("--ssh-rsa-bits: RSA key bit size must be at least 2048");
                }
                if !bits.is_multiple_of(8) {
                    anyhow::bail!("--ssh-rsa-bits: RSA key bit size must be a multiples of 8");
                }
                KeyAlgorithm::Rsa(bits)
            }
            Algorithm::Ecdsa => KeyAlgorithm::Ecdsa(match self.ssh_ecdsa_curve {
                Curve::P256 => 256,
                Curve::P384 => 384,
                Curve::P521 => 521,
            }),
            Algorithm::Ed25519 => KeyAlgorithm::Ed25519,
        })
    }

    /// The deploy key pair: read from `--private-key-file` or generated.
    fn key_pair(&self) -> anyhow::Result<KeyPair> {
        match &self.private_key_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    anyhow::anyhow!("failed to open private key file {}: {e}", path.display())
                })?;
                KeyPair::load(&text, self.password.as_deref())
                    .map_err(|e| anyhow::anyhow!("--private-key-file {}: {e}", path.display()))
            }
            None => Ok(KeyPair::generate(self.algorithm()?)?),
        }
    }
}

/// The Secret the flags describe (for SSH this generates or reads the key and scans the host).
pub fn secret_object(a: &SecretGitArgs) -> anyhow::Result<Value> {
    let (scheme, host) = scheme_and_host(&a.url)?;
    let mut data: BTreeMap<&str, String> = BTreeMap::new();
    match scheme {
        "ssh" => {
            let pair = a.key_pair()?;
            let known_hosts = scan_host_key(host, SCAN_TIMEOUT)?;
            data.insert("identity", pair.private_key);
            data.insert("identity.pub", pair.public_key);
            data.insert("known_hosts", known_hosts);
            if let Some(p) = a.password.as_ref().filter(|p| !p.is_empty()) {
                data.insert("password", p.clone());
            }
        }
        "http" | "https" => {
            let user = a.username.as_deref().filter(|s| !s.is_empty());
            let pass = a.password.as_deref().filter(|s| !s.is_empty());
            let token = a.bearer_token.as_deref().filter(|s| !s.is_empty());
            if (user.is_none() || pass.is_none()) && token.is_none() {
                anyhow::bail!(
                    "for Git over HTTP/S the username and password, or a bearer token is required"
                );
            }
            if user.is_some() && pass.is_some() && token.is_some() {
                anyhow::bail!("user credentials and bearer token cannot be used together");
            }
            if let (Some(u), Some(p)) = (user, pass) {
                data.insert("username", u.to_string());
                data.insert("password", p.to_string());
            }
            if let Some(t) = token {
                data.insert("bearerToken", t.to_string());
            }
            if let Some(path) = &a.ca_crt_file {
                let ca = std::fs::read_to_string(path)
                    .map_err(|e| anyhow::anyhow!("unable to read TLS CA file: {e}"))?;
                data.insert("ca.crt", ca);
            }
        }
        other => {
            anyhow::bail!("git URL scheme '{other}' not supported, can be: ssh, http and https")
        }
    }
    Ok(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "stringData": data,
    }))
}

/// Runs `create secret git`.
pub async fn run(a: SecretGitArgs) -> anyhow::Result<()> {
    let obj = tokio::task::block_in_place(|| secret_object(&a))?;
    if a.export {
        print!("{}", super::create::export_yaml(&obj));
        return Ok(());
    }
    if let Some(key) = obj["stringData"]["identity.pub"].as_str() {
        generate(&format!("deploy key: {}", key.trim_end()));
    }
    let client = a.global.cluster.client().await?;
    crate::cluster::apply(&client, vec![obj], "applying secret").await?;
    action(&format!(
        "git secret '{}' created in '{}' namespace",
        a.name, a.global.namespace
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            scheme_and_host("ssh://git@github.com/org/repo").unwrap(),
            ("ssh", "github.com")
        );
        assert_eq!(
            scheme_and_host("ssh://git@127.0.0.1:2222/srv/r.git").unwrap(),
            ("ssh", "127.0.0.1:2222")
        );
        assert!(scheme_and_host("git@github.com:org/repo").is_err());
    }
}
