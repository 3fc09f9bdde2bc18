//! POST: create an object.

use super::Req;
use super::write;
use crate::error::ApiResult;
use axum::http::StatusCode;
use axum::response::Response;

/// Creates the object in the body; 201 with the stored object.
pub fn create(req: &Req, body: &[u8]) -> ApiResult<Response> {
    let mut obj = req.decode_body(body)?;
    req.check_fields(&mut obj, Some(body), true)?;
    if let Some(answer) = crate::auth::review::answer(req, obj.clone()) {
        return answer;
    }
    let stored = write::create(req, obj, write::Tracking::Update)?;
    Ok(req.respond_object(StatusCode::CREATED, &stored))
}
