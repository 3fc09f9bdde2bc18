//! Registry credentials from a Docker config (`.dockerconfigjson` Secrets, `~/.docker/config.json`)
//! or a `user:password` pair, as go-containerregistry's keychain reads them.

use base64::Engine;
use serde_json::Value;

/// How to authenticate to a registry.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum Credentials {
    /// No credentials.
    #[default]
    Anonymous,
    /// Basic authentication (also exchanged for a bearer token when the registry asks).
    Basic {
        /// The user name.
        username: String,
        /// The password or token.
        password: String,
    },
    /// An identity token or registry token sent as a bearer token.
    Bearer(String),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret itself.
        match self {
            Credentials::Anonymous => write!(f, "Anonymous"),
            Credentials::Basic { username, .. } => write!(f, "Basic({username}, ***)"),
            Credentials::Bearer(_) => write!(f, "Bearer(***)"),
        }
    }
}

/// A Docker config that cannot be read. The message never holds credentials.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Not JSON, or not an object.
    #[error("invalid docker config: {0}")]
    Json(String),
    /// An `auth` field that is not base64 of `user:password`.
    #[error("invalid docker config: the auth entry for '{0}' is not base64 of 'username:password'")]
    AuthField(String),
}

/// An `auths` key as go-containerregistry's Kubernetes keychain reads it: the scheme dropped,
/// a leading `/v1/` or `/v2/` of the path dropped, `host` and `path` kept (`docker.io` and
/// `registry-1.docker.io` are Docker Hub's `index.docker.io`).
fn parse_key(key: &str) -> (String, String) {
    let k = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let (host, path) = k.split_once('/').unwrap_or((k, ""));
    let path = path
        .strip_prefix("v1/")
        .or_else(|| path.strip_prefix("v2/"))
        .unwrap_or(if path == "v1" || path == "v2" {
            ""
        } else {
            path
        });
    (
        docker_hub(&host.to_ascii_lowercase()),
        path.trim_end_matches('/').to_string(),
    )
}

fn docker_hub(host: &str) -> String {
    match host {
        "docker.io" | "registry-1.docker.io" => "index.docker.io".to_string(),
        _ => host.to_string(),
    }
}

/// Whether key `(host, path)` covers `repository` (`host[:port]/path`): the same port, the same
/// number of host labels each matching as a glob (`*.azurecr.io`), the key's path a prefix of
/// the repository's.
fn key_matches(key: &(String, String), repository: &str) -> bool {
    let (rhost, rpath) = repository.split_once('/').unwrap_or((repository, ""));
    let rhost = docker_hub(&rhost.to_ascii_lowercase());
    let split_port = |h: &str| match h.rsplit_once(':') {
        Some((n, p)) if p.chars().all(|c| c.is_ascii_digit()) => (n.to_string(), p.to_string()),
        _ => (h.to_string(), String::new()),
    };
    let (kname, kport) = split_port(&key.0);
    let (rname, rport) = split_port(&rhost);
    if kport != rport {
        return false;
    }
    let klabels: Vec<&str> = kname.split('.').collect();
    let rlabels: Vec<&str> = rname.split('.').collect();
    if klabels.len() != rlabels.len() || !klabels.iter().zip(&rlabels).all(|(k, r)| glob(k, r)) {
        return false;
    }
    rpath.starts_with(&key.1)
}

/// A shell glob over one host label (`*`, `?`; no character classes).
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// The credentials a Docker config JSON holds for `repository` (`host[:port]/path`, as
/// `registry.example.com/team/app`), or `None` when no entry covers it. Keys are tried in
/// reverse lexical order (the most specific path first), as go-containerregistry does. An
/// entry's `auth` (base64 `user:password`) wins over its `username`/`password`;
/// `registrytoken` and `identitytoken` are sent as bearer tokens.
pub fn from_docker_config(
    config: &[u8],
    repository: &str,
) -> Result<Option<Credentials>, AuthError> {
    let doc: Value = serde_json::from_slice(config).map_err(|e| AuthError::Json(e.to_string()))?;
    let Some(obj) = doc.as_object() else {
        return Err(AuthError::Json("not a JSON object".into()));
    };
    // `.dockerconfigjson` holds `{"auths": {...}}`; the legacy `.dockercfg` holds the map itself.
    let auths = match obj.get("auths") {
        Some(Value::Object(a)) => a,
        Some(_) => return Err(AuthError::Json("'auths' is not an object".into())),
        None => obj,
    };
    let mut keys: Vec<&String> = auths.keys().collect();
    keys.sort_by(|a, b| b.cmp(a));
    let Some(key) = keys
        .into_iter()
        .find(|k| key_matches(&parse_key(k), repository))
    else {
        return Ok(None);
    };
    let entry = &auths[key.as_str()];
    let field = |name: &str| {
        entry
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if let Some(auth) = field("auth") {
        let trimmed = auth.trim();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(trimmed)
            .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(trimmed))
            .map_err(|_| AuthError::AuthField(key.clone()))?;
        let text = String::from_utf8(decoded).map_err(|_| AuthError::AuthField(key.clone()))?;
        let (username, password) = text
            .split_once(':')
            .ok_or_else(|| AuthError::AuthField(key.clone()))?;
        return Ok(Some(Credentials::Basic {
            username: username.to_string(),
            password: password.to_string(),
        }));
    }
    if let Some(token) = field("registrytoken").or_else(|| field("identitytoken")) {
        return Ok(Some(Credentials::Bearer(token)));
    }
    match (field("username"), field("password")) {
        (Some(username), password) => Ok(Some(Credentials::Basic {
            username,
            password: password.unwrap_or_default(),
        })),
        _ => Ok(Some(Credentials::Anonymous)),
    }
}

/// Flux's `--creds` value: `username:password`, or a bare registry token (sent as a bearer
/// token, as Flux sends a value without `:`).
pub fn from_creds_flag(creds: &str) -> Credentials {
    match creds.split_once(':') {
        Some((username, password)) => Credentials::Basic {
            username: username.to_string(),
            password: password.to_string(),
        },
        None => Credentials::Bearer(creds.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_field_and_user_password() {
        let b64 = base64::engine::general_purpose::STANDARD.encode("alice:s3cr:et");
        let cfg = format!(
            r#"{{"auths":{{"https://registry.example.com:5000/v2/":{{"auth":"{b64}"}},"other.io":{{"username":"bob","password":"pw"}}}}}}"#
        );
        assert_eq!(
            from_docker_config(cfg.as_bytes(), "registry.example.com:5000/team/app").unwrap(),
            Some(Credentials::Basic {
                username: "alice".into(),
                password: "s3cr:et".into()
            })
        );
        assert_eq!(
            from_docker_config(cfg.as_bytes(), "other.io/app").unwrap(),
            Some(Credentials::Basic {
                username: "bob".into(),
                password: "pw".into()
            })
        );
        assert_eq!(
            from_docker_config(cfg.as_bytes(), "missing.io/app").unwrap(),
            None
        );
    }

    #[test]
    fn globs_ports_and_paths() {
        let cfg = r#"{"auths":{"*.azurecr.io":{"username":"glob","password":"p"},"r.io/team":{"username":"team","password":"p"},"r.io":{"username":"all","password":"p"},"r.io:5000":{"username":"port","password":"p"}}}"#;
        let user = |repo: &str| match from_docker_config(cfg.as_bytes(), repo).unwrap() {
            Some(Credentials::Basic { username, .. }) => username,
            other => format!("{other:?}"),
        };
        assert_eq!(user("me.azurecr.io/app"), "glob");
        assert_eq!(user("a.b.azurecr.io/app"), "None");
        assert_eq!(user("r.io/team/app"), "team");
        assert_eq!(user("r.io/other"), "all");
        assert_eq!(user("r.io:5000/other"), "port");
    }

    #[test]
    fn docker_hub_aliases() {
        let cfg = r#"{"auths":{"https://index.docker.io/v1/":{"username":"u","password":"p"}}}"#;
        assert!(matches!(
            from_docker_config(cfg.as_bytes(), "docker.io/library/nginx").unwrap(),
            Some(Credentials::Basic { .. })
        ));
    }

    #[test]
    fn bad_input_is_named_without_secrets() {
        let e = from_docker_config(br#"{"auths":{"r.io":{"auth":"%%%"}}}"#, "r.io/x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid docker config: the auth entry for 'r.io' is not base64 of 'username:password'"
        );
        assert!(from_docker_config(b"[1]", "r.io/x").is_err());
        let shown = format!(
            "{:?}",
            Credentials::Basic {
                username: "u".into(),
                password: "topsecret".into()
            }
        );
        assert!(!shown.contains("topsecret"));
    }
}
