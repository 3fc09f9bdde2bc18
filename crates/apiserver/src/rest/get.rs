//! GET of one object (or its status).

use super::Req;
use crate::error::{ApiError, ApiResult};
use axum::http::StatusCode;
use axum::response::Response;

/// Answers the named object.
pub fn get(req: &Req, name: &str) -> ApiResult<Response> {
    let (obj, json) = req
        .state
        .store
        .get_encoded(&req.key(name))
        .ok_or_else(|| ApiError::not_found(&req.res.group, &req.res.plural, name))?;
    if req.encoded(&obj, &json).is_some() {
        return Ok(crate::http::respond_json_bytes(StatusCode::OK, json));
    }
    Ok(req.respond_object(StatusCode::OK, &obj))
}
