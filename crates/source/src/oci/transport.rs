//! The HTTP side of a registry connection: one client per connection carrying the trusted CA,
//! the client certificate (mutual TLS), the proxy and the timeouts; HTTPS or HTTP chosen by
//! pinging `/v2/`; and authentication as go-containerregistry does it — nothing when the ping
//! needed none, basic credentials when the registry asks for `Basic`, and for `Bearer` a token
//! from the registry's token service for the repository scope (`repository:<name>:pull` or
//! `push,pull`), fetched with the basic credentials when there are any, cached until it
//! expires, and fetched again when a request is refused with a new challenge.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::Deserialize;

use super::auth::Credentials;
use super::error::{RegistryError, response_error, transport_error};
use super::registry::Options;

/// What a request does in the repository: the scope a token is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reads.
    Pull,
    /// Writes (and the reads a push makes).
    Push,
}

/// What the registry asked for in its `WWW-Authenticate` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Challenge {
    /// Nothing: the registry answered without credentials.
    None,
    /// HTTP basic authentication.
    Basic,
    /// A bearer token from `realm`.
    Bearer {
        /// The token service's URL.
        realm: String,
        /// The `service` parameter to send it.
        service: Option<String>,
        /// The scope the refused request needed, when the registry said.
        scope: Option<String>,
    },
}

/// Parses a `WWW-Authenticate` header value (`Bearer realm="…",service="…",scope="…"`).
pub(crate) fn parse_challenge(header: &str) -> Challenge {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    let params = parse_params(rest);
    match scheme.to_ascii_lowercase().as_str() {
        "basic" => Challenge::Basic,
        "bearer" => match params.get("realm") {
            Some(realm) => Challenge::Bearer {
                realm: realm.clone(),
                service: params.get("service").cloned(),
                scope: params.get("scope").cloned(),
            },
            None => Challenge::None,
        },
        _ => Challenge::None,
    }
}

/// `key=value` and `key="quoted \" value"` pairs separated by commas; keys lower-cased.
fn parse_params(s: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c == ',' {
                break;
            }
            key.push(c);
            chars.next();
        }
        if key.is_empty() && chars.peek().is_none() {
            break;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'=') {
            chars.next();
            if chars.peek() == Some(&'"') {
                chars.next();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(n) = chars.next() {
                                value.push(n);
                            }
                        }
                        '"' => break,
                        c => value.push(c),
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    if c == ',' {
                        break;
                    }
                    value.push(c);
                    chars.next();
                }
            }
        }
        let key = key.trim().to_ascii_lowercase();
        if !key.is_empty() {
            out.insert(key, value.trim_end().to_string());
        }
        if chars.peek().is_none() {
            break;
        }
    }
    out
}

/// The host requests go to: Docker Hub's API lives at `index.docker.io`.
pub(crate) fn api_host(registry: &str) -> &str {
    match registry {
        "docker.io" | "registry-1.docker.io" => "index.docker.io",
        other => other,
    }
}

/// The most an error body or a token answer is read.
const MAX_SMALL_BODY: usize = 1 << 20;

#[derive(Debug, Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    token: String,
    #[serde(default)]
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

/// A connection to one repository of a registry.
pub(crate) struct Transport {
    http: reqwest::Client,
    /// `https://<host>` or `http://<host>`.
    base: String,
    repository: String,
    credentials: Credentials,
    challenge: Mutex<Challenge>,
    tokens: Mutex<HashMap<String, (String, Instant)>>,
    timeout: Duration,
}

/// The reqwest client for `options`: trusted CA, client certificate, proxy, timeouts.
fn http_client(options: &Options, skip_verify: bool) -> Result<reqwest::Client, RegistryError> {
    let builder = reqwest::Client::builder()
        .connect_timeout(options.timeout.min(Duration::from_secs(30)))
        .read_timeout(options.timeout)
        .user_agent(options.user_agent)
        .danger_accept_invalid_certs(skip_verify);
    crate::tls::configure(
        builder,
        options.ca_pem.as_deref(),
        options.client_pem.as_deref(),
        options.proxy.as_deref(),
    )
    .map_err(RegistryError::Other)?
    .build()
    .map_err(|e| RegistryError::Other(format!("building the HTTP client: {e}")))
}

/// Whether go-containerregistry would fall back to HTTP for this registry without `insecure`.
pub(crate) fn http_allowed_by_default(registry: &str) -> bool {
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

/// `GET <base>/v2/`: the status and challenge of any HTTP answer, or why there was none.
async fn ping(
    http: &reqwest::Client,
    base: &str,
    timeout: Duration,
) -> Result<(u16, Challenge), RegistryError> {
    let url = format!("{base}/v2/");
    let resp = http
        .get(&url)
        .timeout(timeout.min(Duration::from_secs(30)))
        .send()
        .await
        .map_err(|e| transport_error("GET", &url, &e))?;
    let challenge = resp
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(parse_challenge)
        .unwrap_or(Challenge::None);
    Ok((resp.status().as_u16(), challenge))
}

impl Transport {
    /// Connects to `repository` on `registry`: HTTPS, or HTTP when allowed and the registry
    /// answers there as a registry does; the ping's challenge says how to authenticate.
    pub(crate) async fn connect(
        registry: &str,
        repository: &str,
        options: &Options,
    ) -> Result<Transport, RegistryError> {
        crate::tls::ensure_provider();
        let skip_verify = options.insecure && options.ca_pem.is_none();
        let http = http_client(options, skip_verify)?;
        let host = api_host(registry);
        let https = format!("https://{host}");
        let (base, ping_answer) = match ping(&http, &https, options.timeout).await {
            Ok(answer) => (https, answer),
            Err(e) if options.insecure || http_allowed_by_default(registry) => {
                let plain = format!("http://{host}");
                match ping(&http, &plain, options.timeout).await {
                    // HTTP only when the registry answers there as a registry does.
                    Ok(answer @ (200 | 401, _)) => {
                        tracing::debug!(registry, error = %e, "HTTPS ping failed, using HTTP");
                        (plain, answer)
                    }
                    // It speaks HTTP but is failing: its answer says more than the TLS error.
                    Ok((code, _)) if code >= 500 => {
                        return Err(response_error("GET", &format!("{plain}/v2/"), code, b""));
                    }
                    _ => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let (status, challenge) = ping_answer;
        let challenge = if status == 401 {
            challenge
        } else {
            Challenge::None
        };
        Ok(Transport {
            http,
            base,
            repository: repository.to_string(),
            credentials: options.credentials.clone(),
            challenge: Mutex::new(challenge),
            tokens: Mutex::new(HashMap::new()),
            timeout: options.timeout,
        })
    }

    /// `<base>/v2/<repository>/<path>`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/v2/{}/{path}", self.base, self.repository)
    }

    /// `location` (a `Location` header) made absolute against the registry's address.
    pub(crate) fn resolve(&self, location: &str) -> Result<String, RegistryError> {
        let base = url::Url::parse(&format!("{}/v2/", self.base))
            .map_err(|e| RegistryError::Other(format!("invalid registry address: {e}")))?;
        base.join(location)
            .map(|u| u.to_string())
            .map_err(|e| RegistryError::Other(format!("invalid location '{location}': {e}")))
    }

    fn scope(&self, access: Access) -> String {
        match access {
            Access::Pull => format!("repository:{}:pull", self.repository),
            Access::Push => format!("repository:{}:push,pull", self.repository),
        }
    }

    /// A bearer token for `scopes`, from the cache or the token service.
    async fn token(
        &self,
        realm: &str,
        service: Option<&str>,
        scopes: &[String],
    ) -> Result<String, RegistryError> {
        let key = scopes.join(" ");
        if let Ok(tokens) = self.tokens.lock()
            && let Some((token, until)) = tokens.get(&key)
            && Instant::now() < *until
        {
            return Ok(token.clone());
        }
        if !(realm.starts_with("https://") || realm.starts_with("http://")) {
            return Err(RegistryError::Other(format!(
                "the registry's token realm '{realm}' is not an HTTP(S) URL"
            )));
        }
        let mut query: Vec<(&str, &str)> = Vec::new();
        if let Some(s) = service {
            query.push(("service", s));
        }
        for s in scopes {
            query.push(("scope", s));
        }
        let mut req = self.http.get(realm).query(&query);
        if let Credentials::Basic { username, password } = &self.credentials {
            req = req.basic_auth(username, Some(password));
        }
        let resp = req
            .send()
            .await
            .map_err(|e| transport_error("GET", realm, &e))?;
        let url = resp.url().to_string();
        let resp = expect(resp, "GET", &url, &[200]).await?;
        let body = read_capped(resp, MAX_SMALL_BODY, "GET", &url).await?;
        let answer: TokenAnswer = serde_json::from_slice(&body).map_err(|e| {
            RegistryError::Other(format!(
                "GET {}: invalid token answer: {e}",
                super::error::redact_url(&url)
            ))
        })?;
        let token = if answer.token.is_empty() {
            answer.access_token
        } else {
            answer.token
        };
        if token.is_empty() {
            return Err(RegistryError::Other(format!(
                "GET {}: the token service answered no token",
                super::error::redact_url(&url)
            )));
        }
        // The distribution spec's default lifetime is 60 s; renew a little early.
        let lifetime = Duration::from_secs(answer.expires_in.unwrap_or(60).max(10) - 5);
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.insert(key, (token.clone(), Instant::now() + lifetime));
        }
        Ok(token)
    }

    async fn authorize(
        &self,
        req: RequestBuilder,
        access: Access,
        extra_scope: Option<&str>,
    ) -> Result<RequestBuilder, RegistryError> {
        if let Credentials::Bearer(token) = &self.credentials {
            return Ok(req.bearer_auth(token));
        }
        let challenge = self
            .challenge
            .lock()
            .map(|c| c.clone())
            .unwrap_or(Challenge::None);
        Ok(match challenge {
            Challenge::None => req,
            Challenge::Basic => match &self.credentials {
                Credentials::Basic { username, password } => {
                    req.basic_auth(username, Some(password))
                }
                _ => req,
            },
            Challenge::Bearer { realm, service, .. } => {
                let mut scopes = vec![self.scope(access)];
                if let Some(s) = extra_scope.filter(|s| !scopes.iter().any(|x| x == s)) {
                    scopes.push(s.to_string());
                }
                let token = self.token(&realm, service.as_deref(), &scopes).await?;
                req.bearer_auth(token)
            }
        })
    }

    /// Sends `method url` (the request finished by `finish`) with the credentials `access`
    /// needs; a refusal carrying a new challenge is answered once. Returns any answer.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &str,
        access: Access,
        finish: impl Fn(RequestBuilder) -> RequestBuilder,
    ) -> Result<Response, RegistryError> {
        let mut extra_scope: Option<String> = None;
        let mut retried = false;
        loop {
            let req = finish(self.http.request(method.clone(), url).timeout(self.timeout));
            let req = self.authorize(req, access, extra_scope.as_deref()).await?;
            let resp = req
                .send()
                .await
                .map_err(|e| transport_error(method.as_str(), url, &e))?;
            if resp.status() != StatusCode::UNAUTHORIZED
                || retried
                || matches!(self.credentials, Credentials::Bearer(_))
            {
                return Ok(resp);
            }
            let Some(challenge) = resp
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(parse_challenge)
            else {
                return Ok(resp);
            };
            let current = self
                .challenge
                .lock()
                .map(|c| c.clone())
                .unwrap_or(Challenge::None);
            match &challenge {
                Challenge::None => return Ok(resp),
                // Basic credentials already sent, or none to send: the refusal stands.
                Challenge::Basic
                    if current == Challenge::Basic
                        || !matches!(self.credentials, Credentials::Basic { .. }) =>
                {
                    return Ok(resp);
                }
                Challenge::Basic => {}
                Challenge::Bearer { scope, .. } => {
                    // A token that expired or lacks a scope the registry named: ask again.
                    if let Ok(mut tokens) = self.tokens.lock() {
                        tokens.clear();
                    }
                    extra_scope = scope.clone();
                }
            }
            if let Ok(mut c) = self.challenge.lock() {
                *c = challenge;
            }
            retried = true;
        }
    }
}

/// `resp` when its status is one of `ok`; otherwise the registry's error.
pub(crate) async fn expect(
    resp: Response,
    method: &str,
    url: &str,
    ok: &[u16],
) -> Result<Response, RegistryError> {
    let status = resp.status().as_u16();
    if ok.contains(&status) {
        return Ok(resp);
    }
    let body = read_capped(resp, MAX_SMALL_BODY, method, url)
        .await
        .unwrap_or_default();
    Err(response_error(method, url, status, &body))
}

/// The body of `resp`, refused beyond `limit` bytes.
pub(crate) async fn read_capped(
    mut resp: Response,
    limit: usize,
    method: &str,
    url: &str,
) -> Result<Bytes, RegistryError> {
    if let Some(len) = resp.content_length()
        && len > limit as u64
    {
        return Err(RegistryError::Other(format!(
            "{method} {}: answer of {len} bytes exceeds the limit of {limit} bytes",
            super::error::redact_url(url)
        )));
    }
    let mut data = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| transport_error(method, url, &e))?
    {
        if data.len() + chunk.len() > limit {
            return Err(RegistryError::Other(format!(
                "{method} {}: answer exceeds the limit of {limit} bytes",
                super::error::redact_url(url)
            )));
        }
        data.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges() {
        assert_eq!(
            parse_challenge(
                r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull""#
            ),
            Challenge::Bearer {
                realm: "https://auth.docker.io/token".into(),
                service: Some("registry.docker.io".into()),
                scope: Some("repository:library/nginx:pull".into()),
            }
        );
        assert_eq!(
            parse_challenge(r#"bearer realm="https://ghcr.io/token", service="ghcr.io""#),
            Challenge::Bearer {
                realm: "https://ghcr.io/token".into(),
                service: Some("ghcr.io".into()),
                scope: None,
            }
        );
        assert_eq!(
            parse_challenge(r#"Basic realm="tidegate-test""#),
            Challenge::Basic
        );
        assert_eq!(parse_challenge("Bearer error=\"x\""), Challenge::None);
        assert_eq!(parse_challenge("Negotiate"), Challenge::None);
        let p = parse_params(r#"a="x,\"y",b=plain, c="""#);
        assert_eq!(p["a"], "x,\"y");
        assert_eq!(p["b"], "plain");
        assert_eq!(p["c"], "");
    }

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
        assert_eq!(api_host("docker.io"), "index.docker.io");
        assert_eq!(api_host("ghcr.io"), "ghcr.io");
    }
}
