//! Content negotiation, request bodies and responses.

use crate::error::{ApiError, ApiResult};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body_util::BodyExt;
use serde_json::Value;
use std::collections::HashMap;

/// Largest request body accepted (kube-apiserver's limit).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// Serialisation of a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `application/json`
    Json,
    /// `application/yaml`
    Yaml,
}

/// What the client asked for in `Accept`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// Body format.
    pub format: Format,
    /// `as=Table;g=meta.k8s.io` requested.
    pub table: bool,
    /// `as=PartialObjectMetadata[List];g=meta.k8s.io` requested: objects are answered with
    /// their metadata only (what metadata-only informers ask for).
    pub metadata_only: bool,
    /// `as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=<v>` requested: the version.
    pub aggregated: Option<&'static str>,
    /// Only media types this server cannot produce were listed.
    pub unacceptable: bool,
}

/// Parses `Accept` into what this server will produce.
pub fn negotiate(headers: &HeaderMap) -> Negotiated {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mut out = Negotiated {
        format: Format::Json,
        table: false,
        metadata_only: false,
        aggregated: None,
        unacceptable: false,
    };
    if accept.trim().is_empty() {
        return out;
    }
    let mut any_ok = false;
    for part in accept.split(',') {
        let mut params = part.split(';').map(str::trim);
        let media = params.next().unwrap_or("");
        let params: HashMap<&str, &str> = params
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim()))
            .collect();
        let as_ = params.get("as").copied();
        let g = params.get("g").copied();
        let v = params.get("v").copied();
        let json_like = matches!(media, "application/json" | "*/*" | "application/*");
        let yaml = media == "application/yaml";
        if !(json_like || yaml) {
            continue;
        }
        match (as_, g) {
            (Some("Table"), Some("meta.k8s.io")) if matches!(v, Some("v1") | Some("v1beta1")) => {
                if !any_ok {
                    out.table = true;
                    out.format = if yaml { Format::Yaml } else { Format::Json };
                    any_ok = true;
                }
            }
            (Some("PartialObjectMetadata" | "PartialObjectMetadataList"), Some("meta.k8s.io"))
                if matches!(v, Some("v1") | Some("v1beta1")) =>
            {
                if !any_ok {
                    out.metadata_only = true;
                    out.format = if yaml { Format::Yaml } else { Format::Json };
                    any_ok = true;
                }
            }
            (Some("APIGroupDiscoveryList"), Some("apidiscovery.k8s.io")) => {
                if out.aggregated.is_none() && !any_ok {
                    out.aggregated = match v {
                        Some("v2") => Some("v2"),
                        Some("v2beta1") => Some("v2beta1"),
                        _ => None,
                    };
                    if out.aggregated.is_some() {
                        any_ok = true;
                    }
                }
            }
            (Some(_), _) => {}
            (None, _) => {
                if !any_ok {
                    out.format = if yaml { Format::Yaml } else { Format::Json };
                    any_ok = true;
                }
            }
        }
    }
    out.unacceptable = !any_ok;
    out
}

/// The request's query parameters (the last value of a repeated key wins).
pub fn query(uri: &axum::http::Uri) -> HashMap<String, String> {
    uri.query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

/// How much of an oversized body is read and thrown away before the 413 is sent, so a client
/// still sending gets the answer instead of a broken pipe (`SendRequest` errors).
const DRAIN_LIMIT: usize = 4 * MAX_BODY;
/// How long an oversized body is drained at most.
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads a request body up to [`MAX_BODY`] bytes; larger bodies are 413.
pub async fn read_body(mut body: Body) -> ApiResult<Bytes> {
    let mut out = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| ApiError::bad_request(format!("reading the request body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if out.len() + data.len() > MAX_BODY {
            let mut drained = out.len() + data.len();
            let drain = async {
                while drained <= DRAIN_LIMIT {
                    match body.frame().await {
                        Some(Ok(f)) => drained += f.data_ref().map_or(0, Bytes::len),
                        _ => break,
                    }
                }
            };
            let _ = tokio::time::timeout(DRAIN_TIME, drain).await;
            return Err(ApiError::too_large(MAX_BODY));
        }
        out.extend_from_slice(&data);
    }
    Ok(out.freeze())
}

/// The media type of the request body, without parameters.
pub fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Decodes an object body (JSON or YAML) and requires it to be a JSON object.
pub fn decode_object(bytes: &[u8], content_type: &str) -> ApiResult<Value> {
    let value: Value = match content_type {
        "application/yaml" | "application/apply-patch+yaml" => {
            let text = std::str::from_utf8(bytes)
                .map_err(|e| ApiError::bad_request(format!("the body is not valid UTF-8: {e}")))?;
            // Duplicate keys: the last wins, and the field validation directive reports them.
            tidegate_core::yaml::parse_one_with(text, tidegate_core::yaml::Duplicates::LastWins)
                .map(|(v, _)| v)
                .map_err(|e| {
                    ApiError::bad_request(format!("error converting YAML to JSON: {}", e.message))
                })?
        }
        "application/json" | "" | "*/*" => serde_json::from_slice(bytes).map_err(|e| {
            ApiError::bad_request(format!(
                "the object provided is unrecognized: couldn't get version/kind; json parse error: {e}"
            ))
        })?,
        "application/cbor" => {
            return Err(ApiError::unsupported_media_type(&[
                "application/json",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
            ]));
        }
        _ => {
            return Err(ApiError::unsupported_media_type(&[
                "application/json",
                "application/yaml",
            ]));
        }
    };
    if !value.is_object() {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized: expected a JSON object, got {}",
            match value {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                Value::Object(_) => "an object",
            }
        )));
    }
    Ok(value)
}

/// A response with `value` as JSON or YAML.
pub fn respond(status: StatusCode, value: &Value, format: Format) -> Response {
    let (body, ct) = match format {
        Format::Json => (value.to_string(), "application/json"),
        Format::Yaml => (tidegate_core::yaml::to_yaml(value), "application/yaml"),
    };
    let mut resp = (status, body).into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    resp
}

/// A response whose body is already JSON.
pub fn respond_json_bytes(status: StatusCode, body: bytes::Bytes) -> Response {
    let mut resp = (status, body).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn neg(accept: &str) -> Negotiated {
        let mut h = HeaderMap::new();
        h.insert(
            header::ACCEPT,
            HeaderValue::from_str(accept).expect("header"),
        );
        negotiate(&h)
    }

    #[test]
    fn negotiates_like_kubectl_asks() {
        let t = neg(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
        );
        assert!(t.table);
        let d = neg(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
        );
        assert_eq!(d.aggregated, Some("v2"));
        let p = neg("application/vnd.kubernetes.protobuf, */*");
        assert!(!p.unacceptable && p.format == Format::Json);
        assert!(neg("application/vnd.kubernetes.protobuf").unacceptable);
        assert_eq!(neg("application/yaml").format, Format::Yaml);
        let m = neg("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1");
        assert!(m.metadata_only && !m.table && !m.unacceptable);
    }

    #[test]
    fn rejects_non_objects() {
        assert_eq!(
            decode_object(b"[1]", "application/json")
                .expect_err("array")
                .code,
            400
        );
        assert_eq!(
            decode_object(b"{", "application/json")
                .expect_err("broken")
                .code,
            400
        );
        assert!(decode_object(b"a: 1\n", "application/yaml").is_ok());
    }
}
