//! PATCH: JSON patch (RFC 6902) and JSON merge patch (RFC 7386).
//!
//! Strategic merge patch and server-side apply are answered 415 until the structured-merge
//! work lands (see `docs/apiserver.md`).

use super::Req;
use super::write::{self, Part};
use crate::error::{ApiError, ApiResult};
use crate::http::content_type;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

const SUPPORTED: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
];

/// Patches the named object.
pub fn patch(req: &Req, name: &str, sub: Option<&str>, body: &[u8]) -> ApiResult<Response> {
    let ct = content_type(&req.headers);
    let part = Part::of(sub)?;
    let stored = match ct.as_str() {
        "application/merge-patch+json" => {
            let p: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding merge patch: {e}")))?;
            if !p.is_object() {
                return Err(ApiError::bad_request(
                    "error decoding merge patch: the patch must be a JSON object",
                ));
            }
            write::update(req, name, part, |cur| {
                let mut next = cur.clone();
                json_patch::merge(&mut next, &p);
                Ok(next)
            })?
        }
        "application/json-patch+json" => {
            let p: json_patch::Patch = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding json patch: {e}")))?;
            write::update(req, name, part, |cur| {
                let mut next = cur.clone();
                json_patch::patch(&mut next, &p).map_err(|e| {
                    ApiError::invalid(
                        &req.res.group,
                        &req.res.kind,
                        name,
                        vec![crate::error::Cause {
                            reason: "FieldValueInvalid".into(),
                            message: format!("the server rejected our request due to an error in our request: {e}"),
                            field: String::new(),
                        }],
                    )
                })?;
                Ok(next)
            })?
        }
        _ => {
            return Err(ApiError::unsupported_media_type(SUPPORTED));
        }
    };
    Ok(req.respond_object(StatusCode::OK, &stored))
}
