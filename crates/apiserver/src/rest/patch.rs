//! PATCH: JSON patch (RFC 6902), JSON merge patch (RFC 7386), strategic merge patch (built-in
//! kinds) and server-side apply (`application/apply-patch+yaml`).

use super::Req;
use super::write::{self, Part, Tracking};
use crate::error::{ApiError, ApiResult, Cause};
use crate::fieldmanager::FieldManager;
use crate::http::content_type;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

const SUPPORTED: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

const SUPPORTED_CUSTOM: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

fn patch_options_invalid(field: &str, reason: &str, message: &str) -> ApiError {
    ApiError::invalid(
        "meta.k8s.io",
        "PatchOptions",
        "",
        vec![Cause {
            reason: reason.into(),
            message: message.into(),
            field: field.into(),
        }],
    )
}

fn patch_invalid(req: &Req, name: &str, message: String) -> ApiError {
    ApiError::invalid(
        &req.res.group,
        &req.res.kind,
        name,
        vec![Cause {
            reason: "FieldValueInvalid".into(),
            message,
            field: String::new(),
        }],
    )
}

/// Patches the named object.
pub fn patch(req: &Req, name: &str, sub: Option<&str>, body: &[u8]) -> ApiResult<Response> {
    let ct = content_type(&req.headers);
    let part = Part::of(sub)?;
    if ct != "application/apply-patch+yaml" && req.q("force").is_some() {
        return Err(patch_options_invalid(
            "force",
            "FieldValueForbidden",
            "Forbidden: may not be specified for non-apply patch",
        ));
    }
    let stored = match ct.as_str() {
        "application/merge-patch+json" => {
            let p: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding merge patch: {e}")))?;
            if !p.is_object() {
                return Err(ApiError::bad_request(
                    "error decoding merge patch: the patch must be a JSON object",
                ));
            }
            write::update(req, name, part, Tracking::Update, None, |cur| {
                let mut next = cur.clone();
                json_patch::merge(&mut next, &p);
                req.check_patched(&mut next, Some(body))?;
                Ok(next)
            })?
        }
        "application/json-patch+json" => {
            let p: json_patch::Patch = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding json patch: {e}")))?;
            write::update(req, name, part, Tracking::Update, None, |cur| {
                let mut next = cur.clone();
                crate::jsonpatch::apply(&mut next, &p)
                    .map_err(|e| e.to_api(&req.res.group, &req.res.kind, name))?;
                req.check_patched(&mut next, None)?;
                Ok(next)
            })?
        }
        "application/strategic-merge-patch+json" if !req.res.custom => {
            let p: Value = serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!("error decoding strategic merge patch: {e}"))
            })?;
            let definition = req.res.definition.clone().unwrap_or_default();
            write::update(req, name, part, Tracking::Update, None, |cur| {
                let mut next = tidegate_merge::smp::apply_builtin(cur, &p, &definition)
                    .map_err(|e| patch_invalid(req, name, e.to_string()))?;
                req.check_fields(&mut next, Some(body), false)?;
                Ok(next)
            })?
        }
        "application/apply-patch+yaml" => return apply(req, name, part, sub, body),
        _ => {
            return Err(ApiError::unsupported_media_type(if req.res.custom {
                SUPPORTED_CUSTOM
            } else {
                SUPPORTED
            }));
        }
    };
    Ok(req.respond_object(StatusCode::OK, &stored))
}

/// Server-side apply: creates the object when it does not exist.
fn apply(req: &Req, name: &str, part: Part, sub: Option<&str>, body: &[u8]) -> ApiResult<Response> {
    let manager = req.q("fieldManager").unwrap_or("").to_string();
    if manager.is_empty() {
        return Err(patch_options_invalid(
            "fieldManager",
            "FieldValueRequired",
            "Required value: is required for apply patch",
        ));
    }
    // Its length and characters are checked as for every other write.
    write::manager_name(req)?;
    let force = match req.q("force") {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "invalid value for force: {other:?}"
            )));
        }
    };
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("error decoding YAML: the body is not UTF-8"))?;
    let (mut patch, _) =
        tidegate_core::yaml::parse_one_with(text, tidegate_core::yaml::Duplicates::LastWins)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {}", e.message)))?;
    req.check_fields(&mut patch, Some(body), false)?;
    if !patch.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the apply patch must be a YAML or JSON object",
        ));
    }
    // A value of the wrong type for its field cannot become a typed patch object.
    if !req.res.custom
        && let Some(def) = req.res.definition.as_deref()
        && let Some(err) = crate::typecheck::first_error(def, &patch)
    {
        let group_version = if req.res.group.is_empty() {
            format!("/{}", req.res.version)
        } else {
            format!("{}/{}", req.res.group, req.res.version)
        };
        return Err(ApiError::bad_request(format!(
            "failed to create typed patch object ({group_version}, Kind={}): {err}",
            req.res.kind
        )));
    }
    if let Some(n) = patch.pointer("/metadata/name").and_then(Value::as_str)
        && n != name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        )));
    }
    let typed = req
        .state
        .types
        .get(&req.res, req.state.registry.generation());
    let fm = FieldManager::new(&typed, &req.res, sub.unwrap_or(""));
    let create = || {
        let mut obj = fm.apply(&req.res, None, &patch, &manager, force)?;
        crate::objects::meta_mut(&mut obj).insert("name".into(), Value::String(name.into()));
        Ok(obj)
    };
    let (stored, created) = write::upsert(
        req,
        name,
        part,
        Tracking::Applied,
        sub,
        Some(create),
        |cur| fm.apply(&req.res, Some(cur), &patch, &manager, force),
    )?;
    let code = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(req.respond_object(code, &stored))
}
