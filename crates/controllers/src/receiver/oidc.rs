//! `generic-oidc` Receivers, as Flux checks them: the bearer token's issuer picks one of the
//! Receiver's `oidcProviders`, the token is verified as an OpenID Connect ID token of that
//! issuer (discovery, the issuer's keys, `iss`, `aud`, `exp`, `nbf`), then the provider's CEL
//! `variables` and `validations` run over its claims. The verified claims reach the
//! Receiver's filters as `claims`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tidegate_api::receiver::OidcProvider;
use tidegate_apply::cel::Expression;

use super::jwt::{self, FetchError, KeySets, ParseError, Token};

/// How long a discovery document is trusted before it is read again.
const DISCOVERY_TTL: Duration = Duration::from_secs(300);

/// What discovery says about an issuer.
#[derive(Clone)]
struct Discovery {
    jwks_uri: String,
    /// The signing algorithms it names that Tidegate supports; empty means RS256 only.
    algorithms: Vec<String>,
}

/// Discovery documents and key sets of the issuers seen, shared by all requests.
#[derive(Default)]
pub struct Issuers {
    discovery: Mutex<HashMap<String, (Instant, Discovery)>>,
    keys: KeySets,
}

impl Issuers {
    /// go-oidc's `NewProvider`: the discovery document at
    /// `<issuer>/.well-known/openid-configuration`, whose `issuer` must be `issuer`.
    async fn discover(&self, http: &reqwest::Client, issuer: &str) -> Result<Discovery, String> {
        if let Some((at, d)) = self
            .discovery
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(issuer)
            && at.elapsed() < DISCOVERY_TTL
        {
            return Ok(d.clone());
        }
        let url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let doc = jwt::get_json(http, &url).await.map_err(|e| match e {
            FetchError::Transport(e) => e,
            FetchError::Status(status, body) => format!("{status}: {body}"),
            FetchError::Decode(e, _) => {
                format!("oidc: failed to decode provider discovery object: {e}")
            }
        })?;
        let got = doc
            .get("issuer")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if got != issuer {
            return Err(format!(
                "oidc: issuer did not match the issuer returned by provider, expected {issuer:?} got {got:?}"
            ));
        }
        let d = Discovery {
            jwks_uri: doc
                .get("jwks_uri")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            algorithms: doc
                .get("id_token_signing_alg_values_supported")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .filter(|a| jwt::asymmetric(a).is_some())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        };
        let mut cache = self.discovery.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > 64 {
            cache.clear();
        }
        cache.insert(issuer.to_string(), (Instant::now(), d.clone()));
        Ok(d)
    }
}

/// Go's `time.Time.String()` of a Unix time in UTC.
fn go_time(unix: i64) -> String {
    k8s_openapi::jiff::Timestamp::from_second(unix)
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string())
        .unwrap_or_else(|_| unix.to_string())
}

/// Go's `%q` of a string slice: `["a" "b"]`.
fn go_quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

/// The audiences of a token: `aud` as one string or a list.
fn audiences(token: &Token) -> Result<Vec<String>, String> {
    match token.claims.get("aud") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    "json: cannot unmarshal number into Go value of type string".to_string()
                })
            })
            .collect(),
        Some(_) => Err("json: cannot unmarshal number into Go value of type []string".into()),
    }
}

/// go-oidc's `IDTokenVerifier.Verify` for `issuer` and `audience`.
async fn verify(
    issuers: &Issuers,
    http: &reqwest::Client,
    discovery: &Discovery,
    issuer: &str,
    audience: &str,
    raw: &str,
) -> Result<Token, String> {
    let token = Token::parse(raw).map_err(|e| match e {
        ParseError::Parts(n) => {
            format!("oidc: malformed jwt: malformed jwt, expected 3 parts got {n}")
        }
        ParseError::Payload(e) => format!("oidc: malformed jwt: malformed jwt payload: {e}"),
        ParseError::Header(e) | ParseError::Signature(e) => format!("oidc: malformed jwt: {e}"),
    })?;
    for name in ["iss", "sub", "nonce", "at_hash"] {
        if token
            .claims
            .get(name)
            .is_some_and(|v| !v.is_string() && !v.is_null())
        {
            return Err(format!(
                "oidc: failed to unmarshal claims: json: cannot unmarshal into Go struct field idToken.{name} of type string"
            ));
        }
    }
    let aud = audiences(&token).map_err(|e| format!("oidc: failed to unmarshal claims: {e}"))?;
    let iss = token.string_claim("iss");
    if iss != issuer {
        return Err(format!(
            "oidc: id token issued by a different provider, expected {issuer:?} got {iss:?}"
        ));
    }
    if !aud.iter().any(|a| a == audience) {
        return Err(format!(
            "oidc: expected audience {audience:?} got {}",
            go_quoted_list(&aud)
        ));
    }
    let now = jwt::now_unix();
    // A missing `exp` reads as Go's zero time, long past.
    let expiry = token.time_claim("exp").unwrap_or(-62_135_596_800);
    if expiry < now {
        return Err(format!(
            "oidc: token is expired (Token Expiry: {})",
            go_time(expiry)
        ));
    }
    if let Some(nbf) = token.time_claim("nbf")
        && now + 300 < nbf
    {
        return Err(format!(
            "oidc: current time {} before the nbf (not before) time: {}",
            go_time(now),
            go_time(nbf)
        ));
    }
    let allowed: Vec<String> = if discovery.algorithms.is_empty() {
        vec!["RS256".into()]
    } else {
        discovery.algorithms.clone()
    };
    let alg = match jwt::asymmetric(&token.alg).filter(|_| allowed.contains(&token.alg)) {
        Some(a) => a,
        None => {
            return Err(format!(
                "oidc: malformed jwt: go-jose/go-jose: unexpected signature algorithm {:?}; expected {}",
                token.alg,
                go_quoted_list(&allowed)
            ));
        }
    };
    let verified =
        |keys: &[jsonwebtoken::jwk::Jwk]| keys.iter().any(|k| token.verifies_with(k, alg));
    let keys = issuers
        .keys
        .candidates(http, &discovery.jwks_uri, &token.kid)
        .await
        .map_err(|e| format!("failed to verify signature: fetching keys {e}"))?;
    if verified(&keys) {
        return Ok(token);
    }
    // A key may have rotated in since the set was cached: read it again once.
    let keys = issuers
        .keys
        .refresh(http, &discovery.jwks_uri)
        .await
        .map_err(|e| format!("failed to verify signature: fetching keys {e}"))?;
    let matching: Vec<_> = keys
        .into_iter()
        .filter(|k| token.kid.is_empty() || k.common.key_id.as_deref() == Some(token.kid.as_str()))
        .collect();
    if verified(&matching) {
        Ok(token)
    } else {
        Err("failed to verify signature: failed to verify id token signature".into())
    }
}

/// The issuer named by a token, read before anything is verified (only to pick the provider).
fn unverified_issuer(raw: &str) -> Result<String, String> {
    let parts: Vec<&str> = raw.split('.').collect();
    if parts.len() != 3 {
        return Err("token is not a JWT".into());
    }
    use base64::Engine;
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(parts[1])
        .map_err(|e| format!("failed to decode token payload: {e}"))?;
    let claims: Value = serde_json::from_slice(&payload)
        .map_err(|e| format!("failed to parse token payload: {e}"))?;
    let iss = match claims.get("iss") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s,
        Some(_) => {
            return Err(
                "failed to parse token payload: json: cannot unmarshal into Go struct field .iss of type string"
                    .into(),
            );
        }
    };
    if iss.is_empty() {
        return Err("token is missing the 'iss' claim".into());
    }
    Ok(iss.to_string())
}

/// A provider's CEL, compiled: variables in order, then validations with their messages.
pub struct ClaimsProcessor {
    variables: Vec<(String, Expression)>,
    validations: Vec<(Expression, String)>,
}

impl ClaimsProcessor {
    /// Compiles the provider's expressions (Flux's messages for one that does not compile).
    pub fn new(p: &OidcProvider) -> Result<ClaimsProcessor, String> {
        let variables = p
            .variables
            .iter()
            .map(|v| {
                Expression::parse(&v.expression)
                    .map(|e| (v.name.clone(), e))
                    .map_err(|e| format!("invalid expression for variable {:?}: {e}", v.name))
            })
            .collect::<Result<_, _>>()?;
        let validations = p
            .validations
            .iter()
            .map(|v| {
                Expression::parse(&v.expression)
                    .map(|e| (e, v.message.clone()))
                    .map_err(|e| format!("invalid expression for validation {:?}: {e}", v.message))
            })
            .collect::<Result<_, _>>()?;
        Ok(ClaimsProcessor {
            variables,
            validations,
        })
    }

    /// Runs the variables, then every validation; the failing validations' messages joined.
    pub fn evaluate(&self, claims: &Map<String, Value>) -> Result<(), String> {
        let mut vars = Map::new();
        let data = |vars: &Map<String, Value>| {
            let mut data = Map::new();
            data.insert("claims".into(), Value::Object(claims.clone()));
            data.insert("vars".into(), Value::Object(vars.clone()));
            data
        };
        for (name, expr) in &self.variables {
            let value = expr
                .evaluate_json(&data(&vars))
                .map_err(|e| format!("failed to evaluate variable {name:?}: {e}"))?;
            vars.insert(name.clone(), value);
        }
        let data = data(&vars);
        let mut failures = Vec::new();
        for (expr, message) in &self.validations {
            if !expr
                .evaluate_bool(&data)
                .map_err(|e| format!("failed to evaluate validation: {e}"))?
            {
                failures.push(message.as_str());
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(format!("token validation failed: {}", failures.join("; ")))
        }
    }
}

/// Flux's `ValidateOIDCProvidersSpec`: what the CRD's schema says, checked again for API
/// servers that skip it.
pub fn validate_spec(providers: &[OidcProvider]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for (i, p) in providers.iter().enumerate() {
        let issuer = &p.issuer_url;
        if issuer.is_empty() {
            return Err(format!("oidcProviders[{i}]: issuerURL is required"));
        }
        if !(issuer.starts_with("http://") || issuer.starts_with("https://")) {
            return Err(format!(
                "oidcProviders[{i}]: issuerURL {issuer:?} must start with http:// or https://"
            ));
        }
        if !seen.insert(issuer.as_str()) {
            return Err(format!(
                "oidcProviders[{i}]: duplicate issuerURL {issuer:?}"
            ));
        }
        if p.validations.is_empty() {
            return Err(format!(
                "oidcProviders[{i}] (issuerURL={issuer:?}): at least one validation is required; without validations any caller able to obtain a token from this issuer can trigger the Receiver"
            ));
        }
        for (j, v) in p.variables.iter().enumerate() {
            if v.name.is_empty() {
                return Err(format!(
                    "oidcProviders[{i}] (issuerURL={issuer:?}): variables[{j}]: name is required"
                ));
            }
            if v.expression.is_empty() {
                return Err(format!(
                    "oidcProviders[{i}] (issuerURL={issuer:?}): variables[{j}] (name={:?}): expression is required",
                    v.name
                ));
            }
        }
        for (j, v) in p.validations.iter().enumerate() {
            if v.expression.is_empty() {
                return Err(format!(
                    "oidcProviders[{i}] (issuerURL={issuer:?}): validations[{j}]: expression is required"
                ));
            }
            if v.message.is_empty() {
                return Err(format!(
                    "oidcProviders[{i}] (issuerURL={issuer:?}): validations[{j}]: message is required"
                ));
            }
        }
    }
    Ok(())
}

/// Flux's `CompileOIDCProviders`: the first provider whose CEL does not compile.
pub fn compile_spec(providers: &[OidcProvider]) -> Result<(), String> {
    for (i, p) in providers.iter().enumerate() {
        ClaimsProcessor::new(p)
            .map_err(|e| format!("oidcProviders[{i}] (issuerURL={:?}): {e}", p.issuer_url))?;
    }
    Ok(())
}

/// Flux's `validateGenericOIDC`: the verified claims, or why the request is refused.
pub async fn validate(
    issuers: &Issuers,
    http: &reqwest::Client,
    providers: &[OidcProvider],
    authorization: &str,
) -> Result<Map<String, Value>, String> {
    if providers.is_empty() {
        return Err("generic-oidc receiver has no oidcProviders configured".into());
    }
    let Some(raw) = authorization.strip_prefix("Bearer ") else {
        return Err("the Authorization header is missing or malformed".into());
    };
    let raw = raw.trim();
    if raw.is_empty() {
        return Err("the Authorization header is missing a bearer token".into());
    }
    let iss = unverified_issuer(raw).map_err(|e| format!("failed to parse bearer token: {e}"))?;
    let Some(provider) = providers.iter().find(|p| p.issuer_url == iss) else {
        return Err(format!("no oidcProvider configured for issuer {iss:?}"));
    };
    let issuer = provider.issuer_url.as_str();
    let discovery = issuers
        .discover(http, issuer)
        .await
        .map_err(|e| format!("failed to initialize OIDC provider for issuer {issuer:?}: {e}"))?;
    let token = verify(issuers, http, &discovery, issuer, provider.audience(), raw)
        .await
        .map_err(|e| format!("failed to verify OIDC token: {e}"))?;
    let processor = ClaimsProcessor::new(provider)
        .map_err(|e| format!("invalid oidcProvider configuration for issuer {issuer:?}: {e}"))?;
    processor.evaluate(&token.claims)?;
    Ok(token.claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tidegate_api::receiver::{OidcValidation, OidcVariable};

    fn provider(issuer: &str) -> OidcProvider {
        OidcProvider {
            issuer_url: issuer.into(),
            validations: vec![OidcValidation {
                expression: "true".into(),
                message: "m".into(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn spec_checks_are_flux_s() {
        assert_eq!(validate_spec(&[provider("https://a")]), Ok(()));
        assert_eq!(
            validate_spec(&[provider("ftp://a")]).unwrap_err(),
            "oidcProviders[0]: issuerURL \"ftp://a\" must start with http:// or https://"
        );
        assert_eq!(
            validate_spec(&[provider("https://a"), provider("https://a")]).unwrap_err(),
            "oidcProviders[1]: duplicate issuerURL \"https://a\""
        );
        let mut p = provider("https://a");
        p.validations.clear();
        assert!(validate_spec(&[p]).unwrap_err().starts_with(
            "oidcProviders[0] (issuerURL=\"https://a\"): at least one validation is required"
        ));
        let mut p = provider("https://a");
        p.variables.push(OidcVariable {
            name: "v".into(),
            expression: "claims.sub ==".into(),
        });
        assert!(
            compile_spec(&[p]).unwrap_err().starts_with(
                "oidcProviders[0] (issuerURL=\"https://a\"): invalid expression for variable \"v\": failed to parse the CEL expression"
            )
        );
    }

    #[test]
    fn claims_run_through_variables_then_validations() {
        let p = OidcProvider {
            issuer_url: "https://a".into(),
            variables: vec![OidcVariable {
                name: "owner".into(),
                expression: "claims.repository.split('/')[0]".into(),
            }],
            validations: vec![
                OidcValidation {
                    expression: "vars.owner == 'fluxcd'".into(),
                    message: "wrong owner".into(),
                },
                OidcValidation {
                    expression: "claims.ref == 'refs/heads/main'".into(),
                    message: "wrong ref".into(),
                },
            ],
            ..Default::default()
        };
        let processor = ClaimsProcessor::new(&p).unwrap();
        let claims = |repo: &str, r: &str| {
            serde_json::json!({"repository": repo, "ref": r})
                .as_object()
                .cloned()
                .unwrap()
        };
        assert_eq!(
            processor.evaluate(&claims("fluxcd/flux2", "refs/heads/main")),
            Ok(())
        );
        assert_eq!(
            processor.evaluate(&claims("other/flux2", "refs/heads/dev")),
            Err("token validation failed: wrong owner; wrong ref".into())
        );
        let missing = processor.evaluate(&serde_json::Map::new()).unwrap_err();
        assert!(
            missing.starts_with("failed to evaluate variable \"owner\": "),
            "{missing}"
        );
    }

    #[test]
    fn unverified_issuer_messages() {
        assert_eq!(unverified_issuer("a.b").unwrap_err(), "token is not a JWT");
        // {"sub":"x"}
        assert_eq!(
            unverified_issuer("e30.eyJzdWIiOiJ4In0.AA").unwrap_err(),
            "token is missing the 'iss' claim"
        );
        // {"iss":"https://i"}
        assert_eq!(
            unverified_issuer("e30.eyJpc3MiOiJodHRwczovL2kifQ.AA").unwrap(),
            "https://i"
        );
        assert_eq!(go_time(0), "1970-01-01 00:00:00 +0000 UTC");
        assert_eq!(go_quoted_list(&["a".into(), "b".into()]), "[\"a\" \"b\"]");
    }
}
