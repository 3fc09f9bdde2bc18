//! Checking a webhook as its Receiver's type says (Flux's `validate`): signatures, tokens,
//! the event allow-list and the payload shape. The errors are Flux's.

use hmac::{Hmac, Mac};

/// A request as the server read it.
pub struct Request<'a> {
    /// Its headers.
    pub headers: &'a axum::http::HeaderMap,
    /// The raw body.
    pub body: &'a [u8],
}

impl Request<'_> {
    /// A header's value (names are case-insensitive).
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }
}

/// Whether `event` is allowed by `events` (all when empty), case-insensitively.
fn allowed(events: &[String], event: &str) -> bool {
    events.is_empty() || events.iter().any(|e| e.eq_ignore_ascii_case(event))
}

/// The HMAC of `body` keyed with `key` (HMAC accepts keys of any length, so `None` is never
/// seen in practice; it reads as a failed check).
fn mac_of<M: Mac + hmac::digest::KeyInit>(key: &[u8], body: &[u8]) -> Option<Vec<u8>> {
    let mut m = <M as hmac::digest::KeyInit>::new_from_slice(key).ok()?;
    m.update(body);
    Some(m.finalize().into_bytes().to_vec())
}

/// `sha1=<hex>`, `sha256=<hex>` or `sha512=<hex>` over `body` keyed with `token` (go-github's
/// `ValidateSignature`), compared in constant time.
pub fn validate_signature(signature: &str, body: &[u8], token: &[u8]) -> Result<(), String> {
    if signature.is_empty() {
        return Err("missing signature".into());
    }
    let Some((kind, hex)) = signature.split_once('=') else {
        return Err(format!("error parsing signature {signature:?}"));
    };
    let given = decode_hex(hex).ok_or_else(|| {
        format!("error decoding signature {signature:?}: encoding/hex: invalid byte")
    })?;
    let expected = match kind {
        "sha1" => mac_of::<Hmac<sha1::Sha1>>(token, body),
        "sha256" => mac_of::<Hmac<sha2::Sha256>>(token, body),
        "sha512" => mac_of::<Hmac<sha2::Sha512>>(token, body),
        other => return Err(format!("unknown hash type prefix: {other:?}")),
    };
    if expected.is_some_and(|e| constant_time_eq(&given, &e)) {
        Ok(())
    } else {
        Err("payload signature check failed".into())
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// go-github's `ValidatePayload`: the signature from `X-Hub-Signature-256` (else
/// `X-Hub-Signature`), a JSON body or a form body whose `payload` field is the payload (the MAC
/// is over the raw body).
fn validate_github_payload(req: &Request<'_>, token: &str) -> Result<Vec<u8>, String> {
    let signature = req
        .header("X-Hub-Signature-256")
        .filter(|s| !s.is_empty())
        .or_else(|| req.header("X-Hub-Signature"))
        .unwrap_or_default();
    let content_type = req.header("Content-Type").unwrap_or_default();
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if media.is_empty() {
        return Err("mime: no media type".into());
    }
    let payload = match media.as_str() {
        "application/json" => req.body.to_vec(),
        "application/x-www-form-urlencoded" => form_urlencoded::parse(req.body)
            .find(|(k, _)| k == "payload")
            .map(|(_, v)| v.into_owned().into_bytes())
            .unwrap_or_default(),
        _ => {
            return Err(format!(
                "webhook request has unsupported Content-Type {media:?}"
            ));
        }
    };
    if !token.is_empty() || !signature.is_empty() {
        validate_signature(&signature, req.body, token.as_bytes())?;
    }
    Ok(payload)
}

/// Validates a request for a Receiver of `type_` with `token` and the `events` allow-list.
pub fn validate(
    type_: &str,
    token: &str,
    events: &[String],
    req: &Request<'_>,
) -> Result<(), String> {
    let header = |name: &str| req.header(name).unwrap_or_default();
    match type_ {
        "generic" => Ok(()),
        "generic-hmac" => validate_signature(&header("X-Signature"), req.body, token.as_bytes())
            .map_err(|e| format!("unable to validate HMAC signature: {e}")),
        "github" => {
            validate_github_payload(req, token)
                .map_err(|e| format!("the GitHub signature header is invalid, err: {e}"))?;
            let event = header("X-GitHub-Event");
            if !allowed(events, &event) {
                return Err(format!("the GitHub event {event:?} is not authorised"));
            }
            Ok(())
        }
        "gitlab" => {
            if header("X-Gitlab-Token") != token {
                return Err(
                    "the X-Gitlab-Token header value does not match the receiver token".into(),
                );
            }
            let event = header("X-Gitlab-Event");
            if !allowed(events, &event) {
                return Err(format!("the GitLab event {event:?} is not authorised"));
            }
            Ok(())
        }
        "bitbucket" => {
            validate_github_payload(req, token).map_err(|e| {
                format!("the Bitbucket server signature header is invalid, err: {e}")
            })?;
            let event = header("X-Event-Key");
            if !allowed(events, &event) {
                return Err(format!(
                    "the Bitbucket server event {event:?} is not authorised"
                ));
            }
            Ok(())
        }
        "harbor" => {
            if header("Authorization") != token {
                return Err(
                    "the Harbor Authorization header value does not match the receiver token"
                        .into(),
                );
            }
            Ok(())
        }
        "nexus" => {
            let signature = header("X-Nexus-Webhook-Signature");
            if signature.is_empty() {
                return Err("the Nexus signature is missing from header".into());
            }
            let expected = mac_of::<Hmac<sha1::Sha1>>(token.as_bytes(), req.body);
            let ok = decode_hex(&signature)
                .zip(expected)
                .is_some_and(|(s, e)| constant_time_eq(&s, &e));
            if !ok {
                return Err("invalid Nexus signature".into());
            }
            serde_json::from_slice::<serde_json::Value>(req.body)
                .map_err(|e| format!("cannot decode Nexus webhook payload: {e}"))?;
            Ok(())
        }
        "quay" => {
            decode_object(req.body).map_err(|e| format!("cannot decode Quay webhook payload: {e}"))
        }
        "dockerhub" => {
            decode_object(req.body).map_err(|_| "cannot decode DockerHub webhook payload".into())
        }
        "acr" => {
            decode_object(req.body).map_err(|e| format!("cannot decode ACR webhook payload: {e}"))
        }
        "cdevents" => super::cdevents::validate(req.body, &header("Ce-Type"), events),
        other => Err(format!("recevier type {other:?} not supported")),
    }
}

/// Go's `json.Decoder.Decode` into a struct: the body must start with a JSON object.
fn decode_object(body: &[u8]) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_slice(body).into_iter::<serde_json::Value>();
    match de.next() {
        Some(Ok(serde_json::Value::Object(_))) => Ok(()),
        Some(Ok(other)) => Err(format!(
            "json: cannot unmarshal {} into Go value of type server.payload",
            tidegate_core::gojson::kind(&other)
        )),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("EOF".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(kind: &str, token: &str, body: &[u8]) -> String {
        let mac = match kind {
            "sha1" => mac_of::<Hmac<sha1::Sha1>>(token.as_bytes(), body),
            "sha256" => mac_of::<Hmac<sha2::Sha256>>(token.as_bytes(), body),
            _ => mac_of::<Hmac<sha2::Sha512>>(token.as_bytes(), body),
        }
        .unwrap();
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        format!("{kind}={hex}")
    }

    #[test]
    fn signatures() {
        let body = b"{\"ref\":\"refs/heads/main\"}";
        for kind in ["sha1", "sha256", "sha512"] {
            assert_eq!(
                validate_signature(&sign(kind, "t", body), body, b"t"),
                Ok(())
            );
            assert_eq!(
                validate_signature(&sign(kind, "t", body), b"{}", b"t").unwrap_err(),
                "payload signature check failed"
            );
            assert_eq!(
                validate_signature(&sign(kind, "other", body), body, b"t").unwrap_err(),
                "payload signature check failed"
            );
        }
        assert_eq!(
            validate_signature("", body, b"t").unwrap_err(),
            "missing signature"
        );
        assert_eq!(
            validate_signature("md5=00", body, b"t").unwrap_err(),
            "unknown hash type prefix: \"md5\""
        );
        assert!(
            validate_signature("sha256", body, b"t")
                .unwrap_err()
                .starts_with("error parsing signature")
        );
        // HMAC-SHA256 of "hello" keyed "key", computed with Python's hmac module.
        assert_eq!(
            sign("sha256", "key", b"hello"),
            "sha256=9307b3b915efb5171ff14d8cb55fbcc798c6c0ef1456d66ded1a6aa723a58b7b"
        );
    }
}
