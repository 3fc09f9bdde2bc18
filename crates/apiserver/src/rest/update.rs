//! PUT: replace an object, its status, or a namespace's finalizers.

use super::Req;
use super::write::{self, Part, Tracking};
use crate::error::ApiResult;
use axum::http::StatusCode;
use axum::response::Response;

/// Replaces the named object with the body.
pub fn update(req: &Req, name: &str, sub: Option<&str>, body: &[u8]) -> ApiResult<Response> {
    let mut obj = req.decode_body(body)?;
    req.check_fields(&mut obj, Some(body), true)?;
    let part = Part::of(sub)?;
    let stored = write::update(req, name, part, Tracking::Update, None, |_| Ok(obj.clone()))?;
    Ok(req.respond_object(StatusCode::OK, &stored))
}
