//! Registry failures, worded as go-containerregistry words them (the words Flux's conditions
//! carry): `GET <url>: MANIFEST_UNKNOWN: manifest unknown; map[Tag:nope]`, with query values
//! outside the registry protocol's own parameters redacted.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

/// A registry operation that failed. Messages never hold credentials.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The registry refused the credentials (or their absence).
    #[error("{0}")]
    Unauthorized(String),
    /// The tag, digest or repository does not exist.
    #[error("{0}")]
    NotFound(String),
    /// Anything else the registry or the connection answered.
    #[error("{0}")]
    Other(String),
    /// The manifest is not an image manifest.
    #[error("{0}")]
    Manifest(String),
    /// A blob larger than allowed, or not matching its digest.
    #[error("{0}")]
    Blob(String),
    /// The operation did not finish in time.
    #[error("timeout after {0:?}")]
    Timeout(Duration),
}

/// One entry of the distribution API's error body.
#[derive(Debug, Deserialize)]
struct Diagnostic {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    detail: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Body {
    #[serde(default)]
    errors: Vec<Diagnostic>,
}

/// The query parameters the registry protocol itself sends; any other value in a URL (a
/// redirect's signature, a token) is replaced by `REDACTED` before it is shown.
const SHOWN_PARAMETERS: &[&str] = &["scope", "service", "mount", "from", "digest", "n", "last"];

/// `url` with the values of query parameters outside the protocol's own redacted, the
/// parameters sorted by name (as Go's `url.Values.Encode` writes them).
pub(crate) fn redact_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return url.split('?').next().unwrap_or(url).to_string();
    };
    if parsed.query().is_none() {
        return url.to_string();
    }
    let mut pairs: Vec<(String, String)> = parsed
        .query_pairs()
        .map(|(k, v)| {
            let v = if SHOWN_PARAMETERS.contains(&k.as_ref()) {
                v.into_owned()
            } else {
                "REDACTED".to_string()
            };
            (k.into_owned(), v)
        })
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    parsed.query_pairs_mut().clear().extend_pairs(pairs);
    parsed.to_string()
}

/// A value as Go's `%v` prints a decoded JSON value (`map[Tag:nope]`, `[a b]`).
fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e6 => format!("{}", f as i64),
            Some(f) => {
                // Go's shortest `%g` for float64 switches to an exponent from 1e+06 on.
                let s = format!("{f:e}");
                match s.split_once('e') {
                    Some((m, e)) => {
                        let e: i32 = e.parse().unwrap_or(0);
                        if (-4..6).contains(&e) {
                            f.to_string()
                        } else {
                            format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
                        }
                    }
                    None => s,
                }
            }
            None => n.to_string(),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_value).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_value(&map[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

fn status_text(status: u16) -> &'static str {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("")
}

/// The error for a response of `status` with `body` to `method url`, classified by its status
/// and error codes.
pub(crate) fn response_error(method: &str, url: &str, status: u16, body: &[u8]) -> RegistryError {
    let errors = serde_json::from_slice::<Body>(body)
        .map(|b| b.errors)
        .unwrap_or_default();
    let described = match errors.as_slice() {
        [] if body.is_empty() && method == "HEAD" => format!(
            "unexpected status code {status} {} (HEAD responses have no body, use GET for details)",
            status_text(status)
        ),
        [] if body.is_empty() => {
            format!("unexpected status code {status} {}", status_text(status))
        }
        [] => format!(
            "unexpected status code {status} {}: {}",
            status_text(status),
            String::from_utf8_lossy(body).trim_end()
        ),
        [one] => diagnostic(one),
        many => format!(
            "multiple errors returned: {}",
            many.iter().map(diagnostic).collect::<Vec<_>>().join("; ")
        ),
    };
    let text = format!("{method} {}: {described}", redact_url(url));
    let codes = || errors.iter().map(|d| d.code.as_str());
    if status == 401 || status == 403 || codes().any(|c| c == "UNAUTHORIZED" || c == "DENIED") {
        RegistryError::Unauthorized(text)
    } else if status == 404 || codes().any(|c| c.ends_with("_UNKNOWN")) {
        RegistryError::NotFound(text)
    } else {
        RegistryError::Other(text)
    }
}

fn diagnostic(d: &Diagnostic) -> String {
    match &d.detail {
        Some(detail) if !detail.is_null() => {
            format!("{}: {}; {}", d.code, d.message, go_value(detail))
        }
        _ => format!("{}: {}", d.code, d.message),
    }
}

/// The error for a request that got no answer: the method, the redacted URL and every cause.
pub(crate) fn transport_error(method: &str, url: &str, e: &reqwest::Error) -> RegistryError {
    let mut text = format!("{method} {}: ", redact_url(url));
    let mut causes = Vec::new();
    // reqwest's own words repeat the URL (`error sending request for url (…)`): its causes
    // say what happened.
    let mut source: Option<&dyn std::error::Error> = match std::error::Error::source(e) {
        Some(cause) if e.url().is_some() => Some(cause),
        _ => Some(e),
    };
    while let Some(s) = source {
        let part = s.to_string();
        if !causes.iter().any(|c: &String| c.contains(&part)) {
            causes.push(part);
        }
        source = s.source();
    }
    text.push_str(&causes.join(": "));
    RegistryError::Other(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worded_as_go_containerregistry() {
        let body = br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"nope"}}]}"#;
        let e = response_error("GET", "http://r:5000/v2/app/manifests/nope", 404, body);
        assert!(matches!(e, RegistryError::NotFound(_)));
        assert_eq!(
            e.to_string(),
            "GET http://r:5000/v2/app/manifests/nope: MANIFEST_UNKNOWN: manifest unknown; map[Tag:nope]"
        );
        let body = br#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Class":"","Name":"app","Action":"pull"}]}]}"#;
        let e = response_error("GET", "http://r/v2/app/tags/list?n=1000", 401, body);
        assert!(matches!(e, RegistryError::Unauthorized(_)));
        assert_eq!(
            e.to_string(),
            "GET http://r/v2/app/tags/list?n=1000: UNAUTHORIZED: authentication required; [map[Action:pull Class: Name:app Type:repository]]"
        );
        assert_eq!(
            response_error("HEAD", "https://r/v2/a/manifests/x", 404, b"").to_string(),
            "HEAD https://r/v2/a/manifests/x: unexpected status code 404 Not Found (HEAD responses have no body, use GET for details)"
        );
        assert_eq!(
            response_error("GET", "https://r/v2/", 502, b"bad gateway\n").to_string(),
            "GET https://r/v2/: unexpected status code 502 Bad Gateway: bad gateway"
        );
        let two =
            br#"{"errors":[{"code":"DENIED","message":"no"},{"code":"UNKNOWN","message":"x"}]}"#;
        assert_eq!(
            response_error("PUT", "https://r/v2/a/manifests/v1", 400, two).to_string(),
            "PUT https://r/v2/a/manifests/v1: multiple errors returned: DENIED: no; UNKNOWN: x"
        );
    }

    #[test]
    fn secrets_in_urls_are_redacted() {
        assert_eq!(
            redact_url("https://s3.example/blob?X-Amz-Signature=abc&digest=sha256:1"),
            "https://s3.example/blob?X-Amz-Signature=REDACTED&digest=sha256%3A1"
        );
        assert_eq!(redact_url("https://r/v2/"), "https://r/v2/");
    }

    #[test]
    fn go_values() {
        let v: Value = serde_json::from_str(r#"{"b":[1,2.5,null,true],"a":1000000}"#).unwrap();
        assert_eq!(go_value(&v), "map[a:1e+06 b:[1 2.5 <nil> true]]");
    }
}
