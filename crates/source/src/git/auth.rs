//! Credentials for a Git remote, read from a Secret's data as Flux reads them.

use std::collections::BTreeMap;

use super::GitError;

/// Credentials and trust for one remote.
#[derive(Clone, Default)]
pub struct Auth {
    /// HTTP basic auth user.
    pub username: Option<String>,
    /// HTTP basic auth password.
    pub password: Option<String>,
    /// HTTP bearer token (wins over username/password, as in Flux).
    pub bearer_token: Option<String>,
    /// PEM certificates trusted for HTTPS in addition to the system roots.
    pub ca_pem: Option<Vec<u8>>,
    /// SSH private key (OpenSSH or PEM format).
    pub identity: Option<Vec<u8>>,
    /// SSH known_hosts lines for the server.
    pub known_hosts: Option<Vec<u8>>,
    /// A client certificate and its key (PEM, `tls.crt` then `tls.key`) for mutual TLS.
    pub client_pem: Option<Vec<u8>>,
    /// An HTTP(S) proxy URL (`proxySecretRef`), credentials folded in; HTTP(S) remotes only.
    pub proxy: Option<String>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print secret values.
        f.debug_struct("Auth")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("ca_pem", &self.ca_pem.is_some())
            .field("identity", &self.identity.as_ref().map(|_| "<redacted>"))
            .field("known_hosts", &self.known_hosts.is_some())
            .field(
                "client_pem",
                &self.client_pem.as_ref().map(|_| "<redacted>"),
            )
            .field("proxy", &self.proxy.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// The URL's transport as Flux names it.
fn transport(url: &str) -> Result<&str, GitError> {
    let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or("");
    match scheme {
        "http" | "https" | "ssh" | "git" | "file" => Ok(scheme),
        "" => Err(GitError::Auth("no transport type set".to_string())),
        other => Err(GitError::Auth(format!("unknown transport '{other}'"))),
    }
}

impl Auth {
    /// Reads credentials for `url` from a Secret's data (`None`: no `secretRef`). Follows Flux:
    /// `bearerToken` present → token (username/password ignored); otherwise `username`/`password`;
    /// `ca.crt` before `caFile`; SSH needs `identity` and `known_hosts`.
    pub fn from_secret(
        url: &str,
        data: Option<&BTreeMap<String, Vec<u8>>>,
    ) -> Result<Auth, GitError> {
        let transport = transport(url)?;
        let empty = BTreeMap::new();
        let data = data.unwrap_or(&empty);
        let text = |k: &str| data.get(k).map(|v| String::from_utf8_lossy(v).into_owned());
        let mut auth = Auth::default();
        match transport {
            "ssh" => {
                auth.identity = data.get("identity").cloned();
                auth.known_hosts = data.get("known_hosts").cloned();
                if auth.identity.as_ref().is_none_or(|v| v.is_empty()) {
                    return Err(GitError::Auth(
                        "invalid 'ssh' auth option: 'identity' is required".into(),
                    ));
                }
                if auth.known_hosts.as_ref().is_none_or(|v| v.is_empty()) {
                    return Err(GitError::Auth(
                        "invalid 'ssh' auth option: 'known_hosts' is required".into(),
                    ));
                }
                if let Some(password) = text("password").filter(|p| !p.is_empty()) {
                    auth.identity = auth
                        .identity
                        .as_deref()
                        .map(|key| decrypt_identity(key, &password))
                        .transpose()?;
                }
            }
            "http" | "https" => {
                if data.contains_key("bearerToken") {
                    auth.bearer_token = text("bearerToken");
                } else {
                    auth.username = text("username").filter(|s| !s.is_empty());
                    auth.password = text("password").filter(|s| !s.is_empty());
                }
                auth.ca_pem = data.get("ca.crt").or_else(|| data.get("caFile")).cloned();
                match (data.get("tls.crt"), data.get("tls.key")) {
                    (Some(cert), Some(key)) => {
                        let mut pem = cert.clone();
                        if !pem.ends_with(b"\n") {
                            pem.push(b'\n');
                        }
                        pem.extend_from_slice(key);
                        auth.client_pem = Some(pem);
                    }
                    (None, None) => {}
                    _ => {
                        return Err(GitError::Auth(format!(
                            "invalid '{transport}' auth option: 'tls.crt' and 'tls.key' must be given together"
                        )));
                    }
                }
                if auth.password.is_some() && auth.username.is_none() {
                    return Err(GitError::Auth(format!(
                        "invalid '{transport}' auth option: 'password' requires 'username' to be set"
                    )));
                }
            }
            _ => {}
        }
        Ok(auth)
    }
}

/// An identity protected by `password` (as Flux's `password` key does): an encrypted OpenSSH
/// key is decrypted for the SSH client; an unencrypted key is used as it is, as go-git does.
fn decrypt_identity(key: &[u8], password: &str) -> Result<Vec<u8>, GitError> {
    let text = String::from_utf8_lossy(key);
    if !text.contains("-----BEGIN OPENSSH PRIVATE KEY-----") {
        if text.contains("ENCRYPTED") {
            return Err(GitError::Auth(
                "failed to parse the SSH identity: a password-protected key must be in OpenSSH format".into(),
            ));
        }
        return Ok(key.to_vec());
    }
    let parsed = ssh_key::PrivateKey::from_openssh(text.as_bytes())
        .map_err(|e| GitError::Auth(format!("failed to parse the SSH identity: {e}")))?;
    if !parsed.is_encrypted() {
        return Ok(key.to_vec());
    }
    let plain = parsed
        .decrypt(password)
        .map_err(|_| GitError::Auth("failed to decrypt the SSH identity with 'password'".into()))?;
    let pem = plain
        .to_openssh(ssh_key::LineEnding::LF)
        .map_err(|e| GitError::Auth(format!("failed to write the SSH identity: {e}")))?;
    Ok(pem.as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn flux_rules() {
        let s = secret(&[("username", "u"), ("password", "p"), ("bearerToken", "t")]);
        let a = Auth::from_secret("https://h/r", Some(&s)).unwrap();
        assert_eq!(a.bearer_token.as_deref(), Some("t"));
        assert!(a.username.is_none());
        let s = secret(&[("password", "p")]);
        let e = Auth::from_secret("http://h/r", Some(&s))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid 'http' auth option: 'password' requires 'username' to be set"
        );
        let e = Auth::from_secret("ssh://git@h/r", None)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "invalid 'ssh' auth option: 'identity' is required");
        let s = secret(&[("identity", "k")]);
        let e = Auth::from_secret("ssh://git@h/r", Some(&s))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "invalid 'ssh' auth option: 'known_hosts' is required");
        let s = secret(&[("ca.crt", "a"), ("caFile", "b")]);
        let a = Auth::from_secret("https://h/r", Some(&s)).unwrap();
        assert_eq!(a.ca_pem.as_deref(), Some(b"a".as_slice()));
        assert!(format!("{a:?}").contains("ca_pem: true"));
    }
}
