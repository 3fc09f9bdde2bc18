//! The `scale` subresource (`autoscaling/v1` Scale) of Deployments, ReplicaSets,
//! StatefulSets, ReplicationControllers and CRDs that declare one.

use super::Req;
use super::write::{self, Part};
use crate::error::{ApiError, ApiResult};
use crate::http::content_type;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

fn paths(req: &Req) -> (String, String, Option<String>) {
    match &req.res.scale {
        Some(s) => (
            s.spec_replicas_path.clone(),
            s.status_replicas_path.clone(),
            s.label_selector_path.clone(),
        ),
        None => (
            ".spec.replicas".into(),
            ".status.replicas".into(),
            Some(".spec.selector".into()),
        ),
    }
}

fn pointer(path: &str) -> String {
    path.split('.')
        .filter(|s| !s.is_empty())
        .map(|s| format!("/{s}"))
        .collect()
}

fn selector_string(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Object(sel) => {
            let mut parts = Vec::new();
            if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
                for (k, v) in m {
                    parts.push(format!("{k}={}", v.as_str().unwrap_or("")));
                }
            }
            if let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) {
                for e in exprs {
                    let key = e.get("key").and_then(Value::as_str).unwrap_or("");
                    let vals: Vec<&str> = e
                        .get("values")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                        "In" => parts.push(format!("{key} in ({})", vals.join(","))),
                        "NotIn" => parts.push(format!("{key} notin ({})", vals.join(","))),
                        "Exists" => parts.push(key.to_string()),
                        "DoesNotExist" => parts.push(format!("!{key}")),
                        _ => {}
                    }
                }
            }
            Some(parts.join(","))
        }
        _ => None,
    }
}

fn to_scale(req: &Req, obj: &Value) -> Value {
    let (spec_p, status_p, sel_p) = paths(req);
    let meta = obj.get("metadata").cloned().unwrap_or(json!({}));
    let mut status =
        json!({"replicas": obj.pointer(&pointer(&status_p)).and_then(Value::as_i64).unwrap_or(0)});
    if let Some(sel) = sel_p.and_then(|p| selector_string(obj.pointer(&pointer(&p)))) {
        status["selector"] = json!(sel);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
            "creationTimestamp": meta.get("creationTimestamp"),
        },
        "spec": {"replicas": obj.pointer(&pointer(&spec_p)).and_then(Value::as_i64).unwrap_or(0)},
        "status": status,
    })
}

fn set_replicas(req: &Req, cur: &Value, replicas: i64) -> ApiResult<Value> {
    let (spec_p, _, _) = paths(req);
    let mut next = cur.clone();
    let ptr = pointer(&spec_p);
    let segs: Vec<&str> = ptr.split('/').filter(|s| !s.is_empty()).collect();
    // kube-apiserver only accepts a replicas path under .spec.
    if segs.len() < 2 || segs[0] != "spec" {
        return Err(ApiError::internal(format!(
            "the scale subresource's specReplicasPath {spec_p} is not under .spec"
        )));
    }
    let mut target = &mut next;
    for (i, s) in segs.iter().enumerate() {
        let Some(map) = target.as_object_mut() else {
            return Err(ApiError::internal(format!(
                "the object has no field at {spec_p}"
            )));
        };
        if i + 1 == segs.len() {
            map.insert((*s).to_string(), json!(replicas));
            break;
        }
        let child = map.entry(*s).or_insert_with(|| json!({}));
        if !child.is_object() {
            *child = json!({});
        }
        target = child;
    }
    Ok(next)
}

/// GET scale.
pub fn get(req: &Req, name: &str) -> ApiResult<Response> {
    let obj = req
        .state
        .store
        .get(&req.key(name))
        .ok_or_else(|| ApiError::not_found(&req.res.group, &req.res.plural, name))?;
    Ok(crate::http::respond(
        StatusCode::OK,
        &to_scale(req, &obj),
        req.neg.format,
    ))
}

fn write_scale(
    req: &Req,
    name: &str,
    f: impl Fn(&Value) -> ApiResult<Value>,
) -> ApiResult<Response> {
    let stored = write::update(
        req,
        name,
        Part::Main,
        write::Tracking::Update,
        Some("scale"),
        |cur| {
            let scale = f(&to_scale(req, cur))?;
            if let Some(rv) = scale
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                && !rv.is_empty()
                && Some(rv)
                    != cur
                        .pointer("/metadata/resourceVersion")
                        .and_then(Value::as_str)
            {
                return Err(ApiError::stale(&req.res.group, &req.res.plural, name));
            }
            let replicas = scale
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .ok_or_else(|| {
                    ApiError::invalid(
                        "autoscaling",
                        "Scale",
                        name,
                        vec![crate::error::Cause::required("spec.replicas")],
                    )
                })?;
            if replicas < 0 {
                return Err(ApiError::invalid(
                    "autoscaling",
                    "Scale",
                    name,
                    vec![crate::error::Cause::invalid(
                        "spec.replicas",
                        &json!(replicas),
                        "must be greater than or equal to 0",
                    )],
                ));
            }
            let mut next = set_replicas(req, cur, replicas)?;
            let rv = cur
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(Value::Null);
            crate::objects::meta_mut(&mut next).insert("resourceVersion".into(), rv);
            Ok(next)
        },
    )?;
    Ok(crate::http::respond(
        StatusCode::OK,
        &to_scale(req, &stored),
        req.neg.format,
    ))
}

/// PUT scale.
pub fn update(req: &Req, name: &str, body: &[u8]) -> ApiResult<Response> {
    let scale = req.decode_body(body)?;
    write_scale(req, name, |_| Ok(scale.clone()))
}

/// PATCH scale (merge or JSON patch).
pub fn patch(req: &Req, name: &str, body: &[u8]) -> ApiResult<Response> {
    let ct = content_type(&req.headers);
    write_scale(req, name, |cur| {
        let mut next = cur.clone();
        match ct.as_str() {
            "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
                let p: Value = serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
                json_patch::merge(&mut next, &p);
            }
            "application/json-patch+json" => {
                let p: json_patch::Patch = serde_json::from_slice(body).map_err(|e| {
                    ApiError::bad_request(format!("error decoding json patch: {e}"))
                })?;
                crate::jsonpatch::apply(&mut next, &p)
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
            }
            _ => {
                return Err(ApiError::unsupported_media_type(&[
                    "application/json-patch+json",
                    "application/merge-patch+json",
                ]));
            }
        }
        Ok(next)
    })
}
