//! The review APIs and token requests: `SelfSubjectAccessReview`, `SubjectAccessReview`,
//! `LocalSubjectAccessReview`, `SelfSubjectRulesReview` (`kubectl auth can-i [--list]`),
//! `SelfSubjectReview` (`kubectl auth whoami`), `TokenReview`, and `serviceaccounts/token`
//! (`kubectl create token`). Reviews are answered, never stored, as kube-apiserver does.

use super::attributes::Attributes;
use super::{AuthorizationMode, now, user_of_token};
use crate::error::{ApiError, ApiResult};
use crate::rest::Req;
use crate::store::Key;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

/// The reason given when every authenticated request is allowed.
const ALLOWED_REASON: &str =
    "tidegate allows every authenticated request (--authorization-mode=AlwaysAllow)";

/// The user a `SubjectAccessReview` asks about: `spec.user`, `spec.groups`, `spec.uid`,
/// `spec.extra`.
fn spec_user(obj: &Value) -> super::UserInfo {
    let text = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    super::UserInfo {
        username: text("/spec/user"),
        uid: text("/spec/uid"),
        groups: obj
            .pointer("/spec/groups")
            .and_then(Value::as_array)
            .map(|g| {
                g.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        extra: obj.pointer("/spec/extra").cloned().unwrap_or(json!({})),
    }
}

/// The attributes a review's spec asks about, for `user`.
fn spec_attributes(obj: &Value, user: super::UserInfo) -> Attributes {
    let text = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    if obj.pointer("/spec/resourceAttributes").is_some() {
        Attributes {
            user,
            verb: text("/spec/resourceAttributes/verb"),
            resource_request: true,
            api_group: text("/spec/resourceAttributes/group"),
            api_version: text("/spec/resourceAttributes/version"),
            resource: text("/spec/resourceAttributes/resource"),
            subresource: text("/spec/resourceAttributes/subresource"),
            namespace: text("/spec/resourceAttributes/namespace"),
            name: text("/spec/resourceAttributes/name"),
            path: String::new(),
        }
    } else {
        Attributes {
            user,
            verb: text("/spec/nonResourceAttributes/verb"),
            path: text("/spec/nonResourceAttributes/path"),
            ..Default::default()
        }
    }
}

/// An access review's status: the authorizer's decision and reason.
fn access_status(req: &Req, a: &Attributes) -> Value {
    match req.state.authorization {
        AuthorizationMode::AlwaysAllow => json!({"allowed": true, "reason": ALLOWED_REASON}),
        AuthorizationMode::Rbac => {
            let d = super::rbac::authorize(&req.state.rbac_index(), a);
            let mut status = json!({"allowed": d.allowed});
            if !d.reason.is_empty() {
                status["reason"] = json!(d.reason);
            }
            status
        }
    }
}

/// `SelfSubjectRulesReview`: the rules that apply to the requester in the namespace asked.
fn rules_status(req: &Req, namespace: &str) -> Value {
    let star_rules = || {
        (
            vec![json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})],
            vec![json!({"verbs": ["*"], "nonResourceURLs": ["*"]})],
        )
    };
    let (mut resource, mut non_resource, mut errors) = match req.state.authorization {
        AuthorizationMode::AlwaysAllow => {
            let (r, n) = star_rules();
            return json!({"resourceRules": r, "nonResourceRules": n, "incomplete": false});
        }
        AuthorizationMode::Rbac
            if req
                .user
                .groups
                .iter()
                .any(|g| g == super::rbac::PRIVILEGED_GROUP) =>
        {
            let (r, n) = star_rules();
            (r, n, Vec::new())
        }
        AuthorizationMode::Rbac => (Vec::new(), Vec::new(), Vec::new()),
    };
    let (rules, errs) = super::rbac::rules_for(&req.state.rbac_index(), &req.user, namespace);
    errors.extend(errs);
    for r in rules {
        if !r.resources.is_empty() {
            let mut v =
                json!({"verbs": r.verbs, "apiGroups": r.api_groups, "resources": r.resources});
            if !r.resource_names.is_empty() {
                v["resourceNames"] = json!(r.resource_names);
            }
            resource.push(v);
        }
        if !r.non_resource_urls.is_empty() {
            non_resource.push(json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}));
        }
    }
    let mut status = json!({"resourceRules": resource, "nonResourceRules": non_resource,
                            "incomplete": false});
    if !errors.is_empty() {
        status["evaluationError"] = json!(errors.join(", "));
    }
    status
}

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
            let user = if req.res.kind == "SelfSubjectAccessReview" {
                req.user.clone()
            } else {
                spec_user(&obj)
            };
            access_status(req, &spec_attributes(&obj, user))
        }
        ("authorization.k8s.io", "SelfSubjectRulesReview") => {
            let ns = obj
                .pointer("/spec/namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            rules_status(req, &ns)
        }
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
    // Reviews answer with metadata, empty if the request had none (clients decode the answer as
    // an object and read its metadata); kube 1.35+ omits the zero creationTimestamp.
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        && m.get("creationTimestamp").is_some_and(Value::is_null)
    {
        m.remove("creationTimestamp");
    }
    Some(Ok(req.respond_object(StatusCode::CREATED, &obj)))
}

/// A TokenRequest's `spec.boundObjectRef`, checked as kube checks it: a Pod, Secret or Node
/// that exists (with the uid given, if any).
fn bound_object(
    req: &Req,
    name: &str,
    body: &Value,
) -> ApiResult<Option<super::tokens::BoundObject>> {
    let Some(r) = body
        .pointer("/spec/boundObjectRef")
        .filter(|r| !r.is_null())
    else {
        return Ok(None);
    };
    let field = |f: &str| r.get(f).and_then(Value::as_str).unwrap_or_default();
    let (kind, obj_name, uid) = (field("kind"), field("name"), field("uid"));
    let (resource, ns) = match kind {
        "Pod" => ("pods", req.namespace()),
        "Secret" => ("secrets", req.namespace()),
        "Node" => ("nodes", ""),
        other => {
            return Err(ApiError::bad_request(format!(
                "cannot bind token for serviceaccount {name:?} to object of kind {other:?}"
            )));
        }
    };
    let obj = req
        .state
        .store
        .get(&Key::new(&format!("/{resource}"), ns, obj_name))
        .ok_or_else(|| ApiError::not_found("", resource, obj_name))?;
    let actual = obj
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind == "Pod"
        && obj
            .pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
            .unwrap_or("default")
            != name
    {
        return Err(ApiError::bad_request(format!(
            "cannot bind token for serviceaccount {name:?} to pod running with different serviceaccount name."
        )));
    }
    if !uid.is_empty() && uid != actual {
        return Err(ApiError::conflict(
            "",
            resource,
            obj_name,
            &format!(
                "the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated"
            ),
        ));
    }
    Ok(Some(super::tokens::BoundObject {
        kind: kind.into(),
        name: obj_name.into(),
        uid: actual.into(),
    }))
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
    let bound = bound_object(req, name, &body)?;
    let issued_at = now();
    let token = req
        .state
        .issuer
        .issue(
            req.namespace(),
            name,
            uid,
            &audiences,
            issued_at,
            seconds,
            bound.as_ref(),
        )
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
            "boundObjectRef": bound.map(|b| json!({"kind": b.kind, "apiVersion": "v1", "name": b.name, "uid": b.uid})).unwrap_or(Value::Null)},
        "status": {"token": token, "expirationTimestamp": expires},
    });
    Ok(crate::http::respond(
        StatusCode::CREATED,
        &out,
        req.neg.format,
    ))
}
