//! Signed JWTs for the receivers that authenticate callers by token (`generic-oidc`, `gcr`):
//! the compact form split and decoded, the signature checked against a JSON Web Key, and the
//! key sets fetched over HTTP and kept until a token names a key they lack.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::{Map, Value};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The most a discovery document or key set may weigh.
const MAX_DOCUMENT: usize = 1 << 20;

/// A compact JWS, decoded but not yet trusted.
#[derive(Debug, Clone)]
pub struct Token {
    /// `alg` of the protected header.
    pub alg: String,
    /// `kid` of the protected header (empty when absent).
    pub kid: String,
    /// The payload's claims.
    pub claims: Map<String, Value>,
    /// `<header>.<payload>`, what the signature covers.
    signing_input: String,
    /// The signature, base64url as sent.
    signature: String,
}

/// Why a token could not be read, in the words of the reader that failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ParseError {
    /// Not three dot-separated parts.
    Parts(usize),
    /// The header is not base64url JSON.
    Header(String),
    /// The payload is not base64url JSON.
    Payload(String),
    /// The signature is not base64url.
    Signature(String),
}

impl Token {
    /// Splits and decodes `raw`; nothing is verified.
    pub fn parse(raw: &str) -> Result<Token, ParseError> {
        let parts: Vec<&str> = raw.split('.').collect();
        if parts.len() != 3 {
            return Err(ParseError::Parts(parts.len()));
        }
        let header: Map<String, Value> = B64
            .decode(parts[0])
            .map_err(|e| ParseError::Header(e.to_string()))
            .and_then(|b| {
                serde_json::from_slice(&b).map_err(|e| ParseError::Header(e.to_string()))
            })?;
        let payload = B64
            .decode(parts[1])
            .map_err(|e| ParseError::Payload(e.to_string()))?;
        let claims: Map<String, Value> =
            serde_json::from_slice(&payload).map_err(|e| ParseError::Payload(e.to_string()))?;
        B64.decode(parts[2])
            .map_err(|e| ParseError::Signature(e.to_string()))?;
        let text = |k: &str| {
            header
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Ok(Token {
            alg: text("alg"),
            kid: text("kid"),
            claims,
            signing_input: format!("{}.{}", parts[0], parts[1]),
            signature: parts[2].to_string(),
        })
    }

    /// A string claim (empty when absent or not a string).
    pub fn string_claim(&self, name: &str) -> &str {
        self.claims
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// A numeric-date claim in Unix seconds, read as Go's `json.Number` then `int64` (a
    /// fraction is cut off); `None` when absent or not a number.
    pub fn time_claim(&self, name: &str) -> Option<i64> {
        let n = self.claims.get(name)?.as_number()?;
        n.as_i64().or_else(|| n.as_f64().map(|f| f as i64))
    }

    /// Whether the signature verifies with `key` under `alg` (the header's algorithm, already
    /// checked by the caller against what it allows).
    pub fn verifies_with(&self, key: &Jwk, alg: Algorithm) -> bool {
        let Ok(decoding) = DecodingKey::from_jwk(key) else {
            return false;
        };
        jsonwebtoken::crypto::verify(
            &self.signature,
            self.signing_input.as_bytes(),
            &decoding,
            alg,
        )
        .unwrap_or(false)
    }
}

/// The asymmetric algorithms a token may be signed with (go-oidc's list less ES512, which
/// the crypto library lacks); HMAC and `none` never.
pub fn asymmetric(alg: &str) -> Option<Algorithm> {
    Some(match alg {
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "EdDSA" => Algorithm::EdDSA,
        _ => return None,
    })
}

/// The keys of a JWKS document; keys this library cannot read are skipped.
fn keys_of(doc: &Value) -> Vec<Jwk> {
    doc.get("keys")
        .and_then(Value::as_array)
        .map(|keys| {
            keys.iter()
                .filter_map(|k| serde_json::from_value(k.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Why a JSON document could not be fetched.
#[derive(Debug, Clone, PartialEq)]
pub enum FetchError {
    /// The request failed or the body could not be read (Go's `Get "<url>": …`).
    Transport(String),
    /// A status other than 200: the status line and the body.
    Status(String, String),
    /// The body is not JSON.
    Decode(String, String),
}

/// GETs `url` and decodes its JSON body (at most 1 MiB).
pub async fn get_json(http: &reqwest::Client, url: &str) -> Result<Value, FetchError> {
    let transport = |e: &dyn std::fmt::Display| FetchError::Transport(format!("Get {url:?}: {e}"));
    let mut resp = http
        .get(url)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| transport(&crate::notification::notifier::chain(&e)))?;
    let status = resp.status();
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| transport(&e))? {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(transport(&format!(
                "response body larger than {MAX_DOCUMENT} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    let text = || String::from_utf8_lossy(&body).into_owned();
    if status != reqwest::StatusCode::OK {
        return Err(FetchError::Status(
            format!(
                "{} {}",
                status.as_u16(),
                status.canonical_reason().unwrap_or_default()
            ),
            text(),
        ));
    }
    serde_json::from_slice(&body).map_err(|e| FetchError::Decode(e.to_string(), text()))
}

/// go-oidc's words for a key set that could not be fetched.
fn keys_error(e: FetchError) -> String {
    match e {
        FetchError::Transport(e) => format!("oidc: get keys failed {e}"),
        FetchError::Status(status, body) => format!("oidc: get keys failed: {status} {body}"),
        FetchError::Decode(e, body) => format!("oidc: failed to decode keys: {e} {body}"),
    }
}

/// Key sets by URL. A set is fetched when first needed and again when a token names a key
/// the cached set lacks (the rotation rule of OpenID Connect), at most once a second per URL.
#[derive(Default)]
pub struct KeySets {
    sets: Mutex<HashMap<String, (Instant, Vec<Jwk>)>>,
}

impl KeySets {
    fn cached(&self, url: &str) -> Option<(Instant, Vec<Jwk>)> {
        self.sets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(url)
            .cloned()
    }

    /// Fetches the set at `url` now and caches it.
    pub async fn refresh(&self, http: &reqwest::Client, url: &str) -> Result<Vec<Jwk>, String> {
        let doc = get_json(http, url).await.map_err(keys_error)?;
        let keys = keys_of(&doc);
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        if sets.len() > 64 {
            sets.clear();
        }
        sets.insert(url.to_string(), (Instant::now(), keys.clone()));
        Ok(keys)
    }

    /// The keys at `url` that may have signed a token naming `kid` (all when `kid` is empty),
    /// from the cache when it has one, else fetched.
    pub async fn candidates(
        &self,
        http: &reqwest::Client,
        url: &str,
        kid: &str,
    ) -> Result<Vec<Jwk>, String> {
        let pick = |keys: &[Jwk]| -> Vec<Jwk> {
            keys.iter()
                .filter(|k| kid.is_empty() || k.common.key_id.as_deref() == Some(kid))
                .cloned()
                .collect()
        };
        if let Some((at, keys)) = self.cached(url) {
            let found = pick(&keys);
            if !found.is_empty() || at.elapsed() < Duration::from_secs(1) {
                return Ok(found);
            }
        }
        Ok(pick(&self.refresh(http, url).await?))
    }
}

/// The current time in Unix seconds.
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rejects_malformed_tokens() {
        assert_eq!(Token::parse("a.b").unwrap_err(), ParseError::Parts(2));
        assert!(matches!(
            Token::parse("!!.e30.AA").unwrap_err(),
            ParseError::Header(_)
        ));
        assert!(matches!(
            Token::parse("e30.bm90IGpzb24.AA").unwrap_err(),
            ParseError::Payload(_)
        ));
        // {"alg":"RS256","kid":"k"} . {"iss":"x","exp":1.5}
        let t = Token::parse("eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJ4IiwiZXhwIjoxLjV9.AA")
            .unwrap();
        assert_eq!((t.alg.as_str(), t.kid.as_str()), ("RS256", "k"));
        assert_eq!(t.string_claim("iss"), "x");
        assert_eq!(t.time_claim("exp"), Some(1));
        assert_eq!(t.time_claim("nbf"), None);
        assert!(asymmetric("HS256").is_none() && asymmetric("none").is_none());
    }
}
