//! `gcr` Receivers, as Flux checks them: Google Artifact/Container Registry notifications
//! pushed by a Pub/Sub push subscription, whose `Authorization` carries a Google-signed ID
//! token for the service account and audience the Receiver's Secret names. The Pub/Sub
//! envelope is unwrapped, so filters see the registry's event (`action`, `digest`, `tag`).

use base64::Engine;
use serde_json::{Value, json};

use super::jwt::{self, KeySets, ParseError, Token};

/// Where Google publishes the keys that sign ID tokens (RS256).
pub const GOOGLE_RS256_CERTS: &str = "https://www.googleapis.com/oauth2/v3/certs";
/// Where Google publishes its ES256 keys (IAP).
pub const GOOGLE_ES256_CERTS: &str = "https://www.gstatic.com/iap/verify/public_key-jwk";

/// Where the signing keys are read from; Google's unless a test says otherwise.
#[derive(Debug, Clone)]
pub struct GoogleCerts {
    /// The RS256 key set.
    pub rs256: String,
    /// The ES256 key set.
    pub es256: String,
}

impl Default for GoogleCerts {
    fn default() -> Self {
        GoogleCerts {
            rs256: GOOGLE_RS256_CERTS.into(),
            es256: GOOGLE_ES256_CERTS.into(),
        }
    }
}

/// Google's `idtoken.Validate`: the token's audience, expiry and signature.
async fn validate_id_token(
    keys: &KeySets,
    http: &reqwest::Client,
    certs: &GoogleCerts,
    raw: &str,
    audience: &str,
) -> Result<Token, String> {
    let token = Token::parse(raw).map_err(|e| match e {
        ParseError::Parts(n) => {
            format!("idtoken: invalid token, token must have three segments; found {n}")
        }
        ParseError::Header(e) => format!("idtoken: unable to decode JWT header: {e}"),
        ParseError::Payload(e) => format!("idtoken: unable to decode JWT claims: {e}"),
        ParseError::Signature(e) => format!("idtoken: unable to decode JWT signature: {e}"),
    })?;
    let aud = match token.claims.get("aud") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => {
            return Err(
                "idtoken: unable to unmarshal JWT payload: json: cannot unmarshal into Go struct field Payload.aud of type string"
                    .into(),
            );
        }
    };
    if !audience.is_empty() && aud != audience {
        return Err("idtoken: audience provided does not match aud claim in the JWT".into());
    }
    let expires = token.time_claim("exp").unwrap_or(0);
    let now = jwt::now_unix();
    if now > expires {
        return Err(format!(
            "idtoken: token expired: now={now}, expires={expires}"
        ));
    }
    let (alg, url) = match token.alg.as_str() {
        "RS256" => (jsonwebtoken::Algorithm::RS256, &certs.rs256),
        "ES256" => (jsonwebtoken::Algorithm::ES256, &certs.es256),
        other => {
            return Err(format!(
                "idtoken: expected JWT signed with RS256 or ES256 but found {other:?}"
            ));
        }
    };
    let candidates = keys.candidates(http, url, &token.kid).await?;
    let Some(key) = candidates
        .iter()
        .find(|k| k.common.key_id.as_deref().unwrap_or_default() == token.kid)
    else {
        return Err("idtoken: could not find matching cert keyId for the token provided".into());
    };
    if token.verifies_with(key, alg) {
        Ok(token)
    } else if alg == jsonwebtoken::Algorithm::RS256 {
        Err("crypto/rsa: verification error".into())
    } else {
        Err("idtoken: ES256 signature not valid".into())
    }
}

/// Flux's `authenticateGCRRequest`: a Google ID token for `audience`, issued by Google to
/// the service account `email`, whose email Google has verified.
async fn authenticate(
    keys: &KeySets,
    http: &reqwest::Client,
    certs: &GoogleCerts,
    authorization: &str,
    email: &str,
    audience: &str,
) -> Result<(), String> {
    let Some(raw) = authorization.strip_prefix("Bearer ") else {
        return Err("the Authorization header is missing or malformed".into());
    };
    let token = match validate_id_token(keys, http, certs, raw, audience).await {
        Ok(t) => t,
        Err(e) => {
            let got = Token::parse(raw)
                .ok()
                .map(|t| t.string_claim("aud").to_string())
                .filter(|a| !a.is_empty())
                .unwrap_or_else(|| "<unknown>".into());
            return Err(format!(
                "invalid ID token: audience is '{got}', want '{audience}': {e}"
            ));
        }
    };
    let issuer = token.string_claim("iss");
    if issuer != "accounts.google.com" && issuer != "https://accounts.google.com" {
        return Err(format!(
            "token issuer is '{issuer}', want 'accounts.google.com' or 'https://accounts.google.com'"
        ));
    }
    let got = token.string_claim("email");
    if got != email {
        return Err(format!("token email is '{got}', want '{email}'"));
    }
    if token.claims.get("email_verified") != Some(&Value::Bool(true)) {
        return Err(format!("token email '{got}' is not verified"));
    }
    Ok(())
}

/// What the Receiver's Secret holds for a `gcr` Receiver.
pub struct Expected<'a> {
    /// `email`: the push subscription's service account.
    pub email: &'a str,
    /// `audience`: the push subscription's audience.
    pub audience: &'a str,
}

/// Flux's `gcr` case: authenticates the request, then unwraps the Pub/Sub message. Returns
/// the registry event re-encoded as Go encodes it (`{"action":…,"digest":…,"tag":…}`), the
/// body the filters see from then on.
pub async fn validate(
    keys: &KeySets,
    http: &reqwest::Client,
    certs: &GoogleCerts,
    expected: Expected<'_>,
    authorization: &str,
    body: &[u8],
) -> Result<Vec<u8>, String> {
    if expected.email.is_empty() {
        return Err("invalid secret data: required field 'email' for GCR receiver".into());
    }
    if expected.audience.is_empty() {
        return Err("invalid secret data: required field 'audience' for GCR receiver".into());
    }
    authenticate(
        keys,
        http,
        certs,
        authorization,
        expected.email,
        expected.audience,
    )
    .await
    .map_err(|e| format!("cannot authenticate GCR request: {e}"))?;
    let envelope: Value = serde_json::Deserializer::from_slice(body)
        .into_iter::<Value>()
        .next()
        .unwrap_or_else(|| Err(serde::de::Error::custom("EOF")))
        .map_err(|e| format!("cannot decode GCR webhook payload: {e}"))?;
    let message = envelope.get("message").cloned().unwrap_or(Value::Null);
    if !(message.is_object() || message.is_null()) || !envelope.is_object() {
        return Err(
            "cannot decode GCR webhook payload: json: cannot unmarshal into Go value of type payload"
                .into(),
        );
    }
    if let Some(t) = message.get("publishTime").and_then(Value::as_str)
        && t.parse::<k8s_openapi::jiff::Timestamp>().is_err()
    {
        return Err(format!(
            "cannot decode GCR webhook payload: parsing time {t:?} as RFC 3339"
        ));
    }
    let data = message
        .get("data")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // Flux ignores a base64 error: the JSON decode of what is left reports it.
    let raw = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap_or_default();
    let event: Value =
        serde_json::from_slice(&raw).map_err(|e| format!("cannot decode GCR webhook body: {e}"))?;
    let field = |k: &str| -> Result<String, String> {
        match event.get(k) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!(
                "cannot decode GCR webhook body: json: cannot unmarshal into Go struct field data.{k} of type string"
            )),
        }
    };
    if !event.is_object() {
        return Err(
            "cannot decode GCR webhook body: json: cannot unmarshal into Go value of type data"
                .into(),
        );
    }
    let unwrapped = json!({
        "action": field("action")?,
        "digest": field("digest")?,
        "tag": field("tag")?,
    });
    tracing::info!(
        digest = unwrapped["digest"].as_str().unwrap_or_default(),
        tag = unwrapped["tag"].as_str().unwrap_or_default(),
        "handling GCR event"
    );
    Ok(tidegate_core::gojson::marshal(&unwrapped).into_bytes())
}
