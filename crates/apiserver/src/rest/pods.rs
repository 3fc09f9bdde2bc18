//! Pod subresources: `log` (a line per simulated container start), `eviction` (a delete) and
//! `binding` (assigns the node).

use super::Req;
use crate::error::{ApiError, ApiResult};
use crate::objects::{self, Preconditions, Propagation};
use crate::store::{Change, Key};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

fn pod(req: &Req, name: &str) -> ApiResult<std::sync::Arc<Value>> {
    req.state
        .store
        .get(&req.key(name))
        .ok_or_else(|| ApiError::not_found("", "pods", name))
}

/// `GET …/pods/<name>/log`: what the simulated containers "printed": the line each logs when
/// it starts. `container` picks one (required when there are several).
pub fn log(req: &Req, name: &str) -> ApiResult<Response> {
    let pod = pod(req, name)?;
    let containers: Vec<(&str, &str)> = ["/spec/initContainers", "/spec/containers"]
        .iter()
        .filter_map(|p| pod.pointer(p).and_then(Value::as_array))
        .flatten()
        .map(|c| {
            (
                c.get("name").and_then(Value::as_str).unwrap_or(""),
                c.get("image").and_then(Value::as_str).unwrap_or(""),
            )
        })
        .collect();
    let regular: Vec<&str> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let container = match req.q("container").filter(|c| !c.is_empty()) {
        Some(c) => c.to_string(),
        None if regular.len() == 1 => regular[0].to_string(),
        None => {
            return Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                regular.join(" ")
            )));
        }
    };
    let Some((_, image)) = containers.iter().find(|(c, _)| *c == container) else {
        return Err(ApiError::bad_request(format!(
            "container {container} is not valid for pod {name}"
        )));
    };
    let status = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .and_then(|s| s.iter().find(|s| s["name"] == container.as_str()));
    let started = status
        .and_then(|s| {
            s.pointer("/state/running/startedAt")
                .or_else(|| s.pointer("/state/terminated/startedAt"))
        })
        .and_then(Value::as_str);
    let Some(started) = started else {
        let reason = status
            .and_then(|s| s.pointer("/state/waiting/reason"))
            .and_then(Value::as_str)
            .unwrap_or("ContainerCreating");
        return Err(ApiError::bad_request(format!(
            "container \"{container}\" in pod \"{name}\" is waiting to start: {reason}"
        )));
    };
    let mut text = format!(
        "container {container} started from image {image} (simulated by tidegate: nothing runs, so this is all it printed)\n"
    );
    if req.q("timestamps") == Some("true") {
        let ts = chrono::DateTime::parse_from_rfc3339(started)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true))
            .unwrap_or_else(|_| started.to_string());
        text = format!("{ts} {text}");
    }
    if req.q("tailLines") == Some("0") || req.q("limitBytes") == Some("0") {
        text.clear();
    }
    let mut resp = (StatusCode::OK, text).into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    Ok(resp)
}

fn success() -> Response {
    crate::http::respond(
        StatusCode::CREATED,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
        crate::http::Format::Json,
    )
}

/// `POST …/pods/<name>/eviction`: deletes the pod with the Eviction's delete options.
pub fn eviction(req: &Req, name: &str, body: &[u8]) -> ApiResult<Response> {
    let eviction = req.decode_options(body, "Eviction")?;
    pod(req, name)?;
    let opts = eviction.get("deleteOptions");
    let pre = Preconditions {
        uid: opts
            .and_then(|o| o.pointer("/preconditions/uid"))
            .and_then(Value::as_str)
            .map(str::to_string),
        resource_version: opts
            .and_then(|o| o.pointer("/preconditions/resourceVersion"))
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    let dry_run = opts
        .and_then(|o| o.get("dryRun"))
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v == "All"))
        || req.dry_run()?;
    objects::delete(
        &req.state.store,
        &req.key(name),
        Propagation::Background,
        &pre,
        dry_run,
    )?;
    Ok(success())
}

/// `POST …/pods/<name>/binding`: assigns the pod to the Binding's target node.
pub fn binding(req: &Req, name: &str, body: &[u8]) -> ApiResult<Response> {
    let binding = req.decode_options(body, "Binding")?;
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| ApiError::bad_request("Binding target.name is required"))?
        .to_string();
    let key: Key = req.key(name);
    req.state.store.mutate::<ApiError>(&key, |cur| {
        let Some(cur) = cur else {
            return Err(ApiError::not_found("", "pods", name));
        };
        match cur.pointer("/spec/nodeName").and_then(Value::as_str) {
            Some(n) if !n.is_empty() => Err(ApiError::conflict(
                "",
                "pods",
                name,
                &format!("pod {name} is already assigned to node \"{n}\""),
            )),
            _ => {
                let mut next = (**cur).clone();
                next["spec"]["nodeName"] = json!(node);
                Ok(Change::Put(next))
            }
        }
    })?;
    Ok(success())
}
