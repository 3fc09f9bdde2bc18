//! GET of one object (or its status).

use super::Req;
use crate::error::{ApiError, ApiResult};
use axum::http::StatusCode;
use axum::response::Response;

/// Answers the named object.
pub fn get(req: &Req, name: &str) -> ApiResult<Response> {
    let json = req
        .state
        .store
        .get_json(&req.key(name))
        .ok_or_else(|| ApiError::not_found(&req.res.group, &req.res.plural, name))?;
    if req.stored_shape().is_some_and(|shape| shape.matches(&json)) {
        return Ok(crate::http::respond_json_bytes(StatusCode::OK, json));
    }
    let obj: serde_json::Value = serde_json::from_slice(&json)
        .map_err(|e| ApiError::internal(format!("stored object: {e}")))?;
    Ok(req.respond_object(StatusCode::OK, &obj))
}
