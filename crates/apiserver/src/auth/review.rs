//! The review APIs and token requests: `SelfSubjectAccessReview`, `SubjectAccessReview`,
//! `LocalSubjectAccessReview`, `SelfSubjectRulesReview` (`kubectl auth can-i [--list]`),
//! `SelfSubjectReview` (`kubectl auth whoami`), `TokenReview`, and `serviceaccounts/token`
//! (`kubectl create token`). Reviews are answered, never stored, as kube-apiserver does.

use super::{now, user_of_token};
use crate::error::{ApiError, ApiResult};
use crate::rest::Req;
use crate::store::Key;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

/// What the authorizer allows today: everything, to every authenticated user.
const ALLOWED_REASON: &str = "tidegate allows every authenticated request (no RBAC yet)";

/// Answers a create of a review kind; `None` for other kinds.
pub fn answer(req: &Req, mut obj: Value) -> Option<ApiResult<Response>> {
    let status = match (req.res.group.as_str(), req.res.kind.as_str()) {
        (
            "authorization.k8s.io",
            "SelfSubjectAccessReview" | "SubjectAccessReview" | "LocalSubjectAccessReview",
        ) => {
            if req.res.kind == "LocalSubjectAccessReview"
                && obj
                    .pointer("/spec/resourceAttributes/namespace")
                    .and_then(Value::as_str)
                    != Some(req.namespace())
            {
                return Some(Err(ApiError::bad_request(
                    "spec.resourceAttributes.namespace must match namespace",
                )));
            }
            json!({"allowed": true, "reason": ALLOWED_REASON})
        }
        ("authorization.k8s.io", "SelfSubjectRulesReview") => json!({
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": false,
        }),
        ("authentication.k8s.io", "SelfSubjectReview") => {
            json!({"userInfo": req.user.to_json()})
        }
        ("authentication.k8s.io", "TokenReview") => {
            let token = obj
                .pointer("/spec/token")
                .and_then(Value::as_str)
                .unwrap_or("");
            match user_of_token(&req.state, token) {
                Some(user) => json!({"authenticated": true, "user": user.to_json(),
                    "audiences": obj.pointer("/spec/audiences").cloned().unwrap_or(json!([]))}),
                None => json!({"authenticated": false, "user": {},
                    "error": "[invalid bearer token, token lookup failed]"}),
            }
        }
        _ => return None,
    };
    obj["status"] = status;
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("creationTimestamp".into(), Value::Null);
    }
    Some(Ok(req.respond_object(StatusCode::CREATED, &obj)))
}

/// `POST …/serviceaccounts/<name>/token`: a `TokenRequest` answered with a signed token.
pub fn token_request(req: &Req, name: &str, body: &[u8]) -> ApiResult<Response> {
    let body = req.decode_options(body, "TokenRequest")?;
    let sa = req
        .state
        .store
        .get(&Key::new("/serviceaccounts", req.namespace(), name))
        .ok_or_else(|| ApiError::not_found("", "serviceaccounts", name))?;
    let seconds = body
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(3600);
    if seconds < 600 {
        return Err(ApiError::invalid(
            "authentication.k8s.io",
            "TokenRequest",
            name,
            vec![crate::error::Cause {
                reason: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {seconds}: may not specify a duration less than 10 minutes"
                ),
                field: "spec.expirationSeconds".into(),
            }],
        ));
    }
    let audiences: Vec<String> = body
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let uid = sa
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("");
    let issued_at = now();
    let token = req
        .state
        .issuer
        .issue(req.namespace(), name, uid, &audiences, issued_at, seconds)
        .ok_or_else(|| ApiError::internal("signing the token failed"))?;
    let expires = chrono::DateTime::from_timestamp(issued_at + seconds, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    let audiences = if audiences.is_empty() {
        vec![super::tokens::ISSUER.to_string()]
    } else {
        audiences
    };
    let out = json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": req.namespace(), "creationTimestamp": crate::objects::now()},
        "spec": {"audiences": audiences, "expirationSeconds": seconds,
            "boundObjectRef": body.pointer("/spec/boundObjectRef").cloned().unwrap_or(Value::Null)},
        "status": {"token": token, "expirationTimestamp": expires},
    });
    Ok(crate::http::respond(
        StatusCode::CREATED,
        &out,
        req.neg.format,
    ))
}
