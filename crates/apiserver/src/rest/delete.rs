//! DELETE of one object, and deletecollection.

use super::Req;
use crate::error::{ApiError, ApiResult};
use crate::fieldsel::FieldSelector;
use crate::objects::{self, Preconditions, Propagation};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use tidegate_core::LabelSelector;

struct DeleteOptions {
    propagation: Propagation,
    pre: Preconditions,
    dry_run: bool,
}

impl DeleteOptions {
    /// Whether a dry run left the object waiting for its finalizers (answered as an object).
    fn held_by_finalizers(&self, obj: &Value) -> bool {
        self.dry_run && !objects::finalizers(obj).is_empty()
    }
}

fn options(req: &Req, body: &[u8]) -> ApiResult<DeleteOptions> {
    let opts = req.decode_options(body, "DeleteOptions")?;
    let mut propagation = Propagation::Background;
    if let Some(p) = opts.get("propagationPolicy").and_then(Value::as_str) {
        propagation = Propagation::parse(p)?;
    } else if let Some(p) = req.q("propagationPolicy") {
        propagation = Propagation::parse(p)?;
    } else if opts.get("orphanDependents").and_then(Value::as_bool) == Some(true)
        || req.q("orphanDependents") == Some("true")
    {
        propagation = Propagation::Orphan;
    }
    let pre = Preconditions {
        uid: opts
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(str::to_string),
        resource_version: opts
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    let body_dry = opts
        .get("dryRun")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v == "All"));
    Ok(DeleteOptions {
        propagation,
        pre,
        dry_run: body_dry || req.dry_run()?,
    })
}

/// Deletes the named object; answers the object (its last state, or with deletionTimestamp
/// set while finalizers remain).
pub fn delete(req: &Req, name: &str, body: &[u8]) -> ApiResult<Response> {
    let o = options(req, body)?;
    // The NamespaceLifecycle admission plugin keeps the namespaces the system needs.
    if !req.res.custom
        && req.res.group.is_empty()
        && req.res.plural == "namespaces"
        && matches!(name, "default" | "kube-system" | "kube-public")
    {
        return Err(ApiError::forbidden(
            "",
            "namespaces",
            name,
            "this namespace may not be deleted",
        ));
    }
    let out = objects::delete(
        &req.state.store,
        &req.key(name),
        o.propagation,
        &o.pre,
        o.dry_run,
    )?;
    let obj = out
        .object
        .ok_or_else(|| ApiError::not_found(&req.res.group, &req.res.plural, name))?;
    let gone = req.state.store.get(&req.key(name)).is_none();
    if out.written {
        crate::hooks::after_write(&req.state, &req.res, &obj);
    }
    if (gone || o.dry_run) && !returns_deleted_object(req) && !o.held_by_finalizers(&obj) {
        let mut details = json!({"name": name, "kind": req.res.plural});
        if !req.res.group.is_empty() {
            details["group"] = json!(req.res.group);
        }
        if let Some(uid) = obj.pointer("/metadata/uid") {
            details["uid"] = uid.clone();
        }
        let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Success", "details": details});
        return Ok(crate::http::respond(
            StatusCode::OK,
            &status,
            req.neg.format,
        ));
    }
    Ok(req.respond_object(StatusCode::OK, &obj))
}

/// Whether a completed DELETE answers the deleted object (kube-apiserver's registries with
/// `ReturnDeletedObject`) rather than a `Status`. Custom resources answer a `Status`.
fn returns_deleted_object(req: &Req) -> bool {
    !req.res.custom
        && matches!(
            (req.res.group.as_str(), req.res.plural.as_str()),
            (
                "",
                "pods" | "serviceaccounts" | "services" | "namespaces" | "nodes"
            ) | ("storage.k8s.io", "storageclasses")
                | ("apiextensions.k8s.io", "customresourcedefinitions")
        )
}

/// Deletes every object of the collection that the selectors match; answers the list of
/// deleted objects.
pub fn delete_collection(req: &Req, body: &[u8]) -> ApiResult<Response> {
    let o = options(req, body)?;
    let labels = LabelSelector::parse(req.q("labelSelector").unwrap_or(""))
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let fields = FieldSelector::parse(req.q("fieldSelector").unwrap_or(""), &req.res)?;
    let ns = req.path.namespace.as_deref().filter(|_| req.res.namespaced);
    let (items, _) = req.state.store.list(&req.storage(), ns, None);
    let mut deleted = Vec::new();
    for (key, obj) in items {
        let lbl = obj.pointer("/metadata/labels");
        if !labels.matches(|k| lbl.and_then(|l| l.get(k)).and_then(Value::as_str))
            || !fields.matches(&obj)
        {
            continue;
        }
        match objects::delete(&req.state.store, &key, o.propagation, &o.pre, o.dry_run) {
            Ok(out) => {
                if let Some(obj) = out.object {
                    deleted.push(req.present(&obj));
                }
            }
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let list = json!({
        "kind": format!("{}List", req.res.kind),
        "apiVersion": req.res.api_version(),
        "metadata": {"resourceVersion": req.state.store.revision().to_string()},
        "items": deleted,
    });
    Ok(crate::http::respond(StatusCode::OK, &list, req.neg.format))
}
