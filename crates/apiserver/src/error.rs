//! API errors, answered as `metav1.Status` bodies with kube-apiserver's codes, reasons and
//! message shapes.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One cause of an `Invalid` (422) error: which field, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// `FieldValueRequired`, `FieldValueInvalid`, `FieldValueNotSupported`, …
    pub reason: String,
    /// Human message for this field.
    pub message: String,
    /// Field path, for example `metadata.name`.
    pub field: String,
}

/// An error the API answers with a `Status` body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, `BadRequest`, …
    pub reason: String,
    /// The message kubectl prints after `Error from server (<reason>):`.
    pub message: String,
    /// `details.name`
    pub name: Option<String>,
    /// `details.group`
    pub group: Option<String>,
    /// `details.kind` (the resource, as kube-apiserver reports it)
    pub kind: Option<String>,
    /// `details.causes`
    pub causes: Vec<Cause>,
    /// `details.retryAfterSeconds`
    pub retry_after: Option<u64>,
}

/// Shorthand for results in handlers.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    fn new(code: u16, reason: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason: reason.to_string(),
            message: message.into(),
            name: None,
            group: None,
            kind: None,
            causes: Vec::new(),
            retry_after: None,
        }
    }

    fn with_details(mut self, group: &str, resource: &str, name: &str) -> ApiError {
        self.group = Some(group.to_string()).filter(|g| !g.is_empty());
        self.kind = Some(resource.to_string()).filter(|k| !k.is_empty());
        self.name = Some(name.to_string()).filter(|n| !n.is_empty());
        self
    }

    /// 404 `configmaps "x" not found`.
    pub fn not_found(group: &str, resource: &str, name: &str) -> ApiError {
        ApiError::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified(group, resource)),
        )
        .with_details(group, resource, name)
    }

    /// 404 for a path that names no resource at all.
    pub fn not_found_path() -> ApiError {
        ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 409 `configmaps "x" already exists`.
    pub fn already_exists(group: &str, resource: &str, name: &str) -> ApiError {
        ApiError::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified(group, resource)),
        )
        .with_details(group, resource, name)
    }

    /// 409 Conflict with kube-apiserver's "operation cannot be fulfilled" wording.
    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> ApiError {
        ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified(group, resource)
            ),
        )
        .with_details(group, resource, name)
    }

    /// 409 for a server-side apply conflict (no details besides the causes).
    pub fn apply_conflict(message: String, causes: Vec<Cause>) -> ApiError {
        let mut e = ApiError::new(409, "Conflict", message);
        e.causes = causes;
        e
    }

    /// 409 for a stale resourceVersion.
    pub fn stale(group: &str, resource: &str, name: &str) -> ApiError {
        ApiError::conflict(
            group,
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 Invalid: `Kind.group "name" is invalid: field: message`.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> ApiError {
        let qualified_kind = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        // Identical messages are shown once (the causes keep every one), as
        // `ErrorList.ToAggregate` does.
        let mut parts: Vec<String> = Vec::new();
        for c in &causes {
            let part = if c.field.is_empty() {
                c.message.clone()
            } else {
                format!("{}: {}", c.field, c.message)
            };
            if !parts.contains(&part) {
                parts.push(part);
            }
        }
        let joined = if parts.len() == 1 {
            parts[0].clone()
        } else {
            format!("[{}]", parts.join(", "))
        };
        let mut e = ApiError::new(
            422,
            "Invalid",
            format!("{qualified_kind} \"{name}\" is invalid: {joined}"),
        )
        .with_details(group, kind, name);
        e.causes = causes;
        e
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", message)
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> ApiError {
        ApiError::new(401, "Unauthorized", "Unauthorized")
    }

    /// 403 Forbidden.
    pub fn forbidden(group: &str, resource: &str, name: &str, why: &str) -> ApiError {
        ApiError::new(
            403,
            "Forbidden",
            format!(
                "{} \"{name}\" is forbidden: {why}",
                qualified(group, resource)
            ),
        )
        .with_details(group, resource, name)
    }

    /// 403 as kube's `NewForbidden` words it for an authorization refusal: `secrets "x" is
    /// forbidden: …`, `secrets is forbidden: …` without a name, `forbidden: …` for a path.
    pub fn forbidden_request(group: &str, resource: &str, name: &str, why: &str) -> ApiError {
        let message = if resource.is_empty() {
            format!("forbidden: {why}")
        } else if name.is_empty() {
            format!("{} is forbidden: {why}", qualified(group, resource))
        } else {
            format!(
                "{} \"{name}\" is forbidden: {why}",
                qualified(group, resource)
            )
        };
        let e = ApiError::new(403, "Forbidden", message);
        if resource.is_empty() {
            e
        } else {
            e.with_details(group, resource, name)
        }
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed() -> ApiError {
        ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    /// 406 NotAcceptable.
    pub fn not_acceptable(accept: &str) -> ApiError {
        ApiError::new(
            406,
            "NotAcceptable",
            format!(
                "only the following media types are accepted: application/json, application/yaml (asked for {accept})"
            ),
        )
    }

    /// 410 Gone for a watch or list from a compacted resourceVersion.
    pub fn gone(message: impl Into<String>) -> ApiError {
        ApiError::new(410, "Expired", message)
    }

    /// 504 for a read at a revision the store has not reached (`NewTooLargeResourceVersionError`:
    /// a Timeout asking the client to retry in a second).
    pub fn too_large_resource_version(requested: u64, current: u64) -> ApiError {
        let mut e = ApiError::new(
            504,
            "Timeout",
            format!("Timeout: Too large resource version: {requested}, current: {current}"),
        );
        e.causes = vec![Cause {
            reason: "ResourceVersionTooLarge".into(),
            message: "Too large resource version".into(),
            field: String::new(),
        }];
        e.retry_after = Some(1);
        e
    }

    /// 503 ServiceUnavailable.
    pub fn service_unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(503, "ServiceUnavailable", message)
    }

    /// An error kube-apiserver reports without a reason (`StatusReasonUnknown`): what a
    /// backend it could not reach answered.
    pub fn unknown(code: u16, message: impl Into<String>) -> ApiError {
        ApiError::new(code, "", message)
    }

    /// 413 RequestEntityTooLarge.
    pub fn too_large(limit: usize) -> ApiError {
        ApiError::entity_too_large(format!("Request entity too large: limit is {limit}"))
    }

    /// 413 RequestEntityTooLarge with its own message.
    pub fn entity_too_large(message: impl Into<String>) -> ApiError {
        ApiError::new(413, "RequestEntityTooLarge", message)
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(supported: &[&str]) -> ApiError {
        ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                supported.join(", ")
            ),
        )
    }

    /// 500 InternalError; the store's failures end here.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(
            500,
            "InternalError",
            format!("Internal error occurred: {}", message.into()),
        )
    }

    /// The `metav1.Status` body.
    pub fn status_body(&self) -> Value {
        let mut body = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        });
        // An unknown reason is omitted, as metav1.Status's JSON omits it.
        if !self.reason.is_empty() {
            body["reason"] = json!(self.reason);
        }
        let mut details = serde_json::Map::new();
        if let Some(n) = &self.name {
            details.insert("name".into(), json!(n));
        }
        if let Some(g) = &self.group {
            details.insert("group".into(), json!(g));
        }
        if let Some(k) = &self.kind {
            details.insert("kind".into(), json!(k));
        }
        if !self.causes.is_empty() {
            details.insert(
                "causes".into(),
                Value::Array(
                    self.causes
                        .iter()
                        .map(|c| {
                            let mut cause = json!({"reason": c.reason, "message": c.message});
                            // `field` is omitted when empty, as metav1.StatusCause's JSON does.
                            if !c.field.is_empty() {
                                cause["field"] = json!(c.field);
                            }
                            cause
                        })
                        .collect(),
                ),
            );
        }
        if let Some(r) = self.retry_after {
            details.insert("retryAfterSeconds".into(), json!(r));
        }
        // Every NotFound carries details, empty or not (client-go code reads them unchecked:
        // `kubectl debug` looks at `details.name` of a 404).
        if !details.is_empty() || self.code == 404 {
            body["details"] = Value::Object(details);
        }
        body["code"] = json!(self.code);
        body
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

impl Cause {
    /// A cause with reason `FieldValueRequired`.
    pub fn required(field: &str) -> Cause {
        Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value".into(),
            field: field.into(),
        }
    }

    /// A cause with reason `FieldValueInvalid`, message `Invalid value: <value>: <why>`.
    pub fn invalid(field: &str, value: &Value, why: &str) -> Cause {
        let shown = match value {
            Value::String(s) => format!("\"{s}\""),
            other => other.to_string(),
        };
        Cause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: {shown}: {why}"),
            field: field.into(),
        }
    }

    /// A cause with reason `FieldValueForbidden`.
    pub fn forbidden(field: &str, why: &str) -> Cause {
        Cause {
            reason: "FieldValueForbidden".into(),
            message: format!("Forbidden: {why}"),
            field: field.into(),
        }
    }

    /// A cause with reason `FieldValueNotSupported`.
    pub fn not_supported(field: &str, value: &Value, supported: &[String]) -> Cause {
        let quoted: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
        Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {value}: supported values: {}",
                quoted.join(", ")
            ),
            field: field.into(),
        }
    }

    /// A cause with reason `FieldValueTypeInvalid`.
    pub fn type_invalid(field: &str, value: &Value, expected: &str) -> Cause {
        let shown = match value {
            Value::String(s) => format!("\"{s}\""),
            other => other.to_string(),
        };
        Cause {
            reason: "FieldValueTypeInvalid".into(),
            message: format!("Invalid value: {shown}: {field} in body must be of type {expected}"),
            field: field.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.status_body().to_string();
        let mut resp = (
            StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body,
        )
            .into_response();
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        // As kube-apiserver's response writer: a status asking to retry says when.
        if let Some(seconds) = self.retry_after {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_kube_apiserver() {
        assert_eq!(
            ApiError::not_found("", "configmaps", "x").message,
            "configmaps \"x\" not found"
        );
        assert_eq!(
            ApiError::not_found("apps", "deployments", "web").message,
            "deployments.apps \"web\" not found"
        );
        assert_eq!(
            ApiError::stale("", "configmaps", "x").message,
            "Operation cannot be fulfilled on configmaps \"x\": the object has been modified; please apply your changes to the latest version and try again"
        );
        let inv = ApiError::invalid(
            "",
            "ConfigMap",
            "Bad_Name",
            vec![Cause::invalid(
                "metadata.name",
                &Value::from("Bad_Name"),
                "a lowercase RFC 1123 subdomain",
            )],
        );
        assert_eq!(
            inv.message,
            "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"
        );
        assert_eq!(
            inv.status_body()["details"]["causes"][0]["field"],
            "metadata.name"
        );
        assert_eq!(inv.status_body()["code"], 422);
    }
}
