//! The connect subresources that need a kubelet or a backend (`pods/exec`, `pods/attach`,
//! `pods/portforward`, `services/proxy`), answered as kube-apiserver answers them when nothing
//! listens behind the simulated node and pods: the pod's node named, the backend unreachable.

use super::Req;
use crate::error::{ApiError, ApiResult};
use crate::store::Key;
use serde_json::Value;

/// The kubelet port kube-apiserver dials for exec, attach and port-forward.
const KUBELET_PORT: u16 = 10250;

/// Answers a connect request on pod `name`.
pub fn pod(req: &Req, name: &str) -> ApiResult<axum::response::Response> {
    let pod = req
        .state
        .store
        .get(&req.key(name))
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    let node = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if node.is_empty() {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    let node_obj = req
        .state
        .store
        .get(&Key::new("/nodes", "", node))
        .ok_or_else(|| ApiError::not_found("", "nodes", node))?;
    let address = node_obj
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|a| a.get("type").and_then(Value::as_str) == Some("InternalIP"))
        .and_then(|a| a.get("address").and_then(Value::as_str))
        .unwrap_or(node);
    Err(ApiError::unknown(
        500,
        format!(
            "error dialing backend: dial tcp {address}:{KUBELET_PORT}: connect: connection refused"
        ),
    ))
}

/// Answers a proxy request to Service `name` (`name`, `name:port` or `scheme:name:port`).
pub fn service_proxy(req: &Req, name: &str) -> ApiResult<axum::response::Response> {
    let parts: Vec<&str> = name.split(':').collect();
    let service = match parts.as_slice() {
        [svc] | [svc, _] | [_, svc, _] => *svc,
        _ => name,
    };
    req.state
        .store
        .get(&req.key(service))
        .ok_or_else(|| ApiError::not_found("", "services", service))?;
    let endpoints = req
        .state
        .store
        .get(&Key::new("/endpoints", req.namespace(), service));
    let ready = endpoints
        .as_deref()
        .and_then(|e| e.get("subsets"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|s| {
            let ip = s
                .get("addresses")
                .and_then(Value::as_array)?
                .first()?
                .get("ip")?
                .as_str()?
                .to_string();
            let port = s
                .get("ports")
                .and_then(Value::as_array)?
                .first()?
                .get("port")?
                .as_i64()?;
            Some((ip, port))
        });
    match ready {
        None => Err(ApiError::service_unavailable(format!(
            "no endpoints available for service \"{service}\""
        ))),
        Some((ip, port)) => Err(ApiError::service_unavailable(format!(
            "error trying to reach service: dial tcp {ip}:{port}: connect: connection refused"
        ))),
    }
}
