//! GET of a collection: selectors, paging (`limit`/`continue`) and Table output.

use super::Req;
use crate::error::{ApiError, ApiResult};
use crate::fieldsel::FieldSelector;
use crate::store::Key;
use axum::http::StatusCode;
use axum::response::Response;
use base64::Engine;
use serde_json::{Value, json};
use std::sync::Arc;
use tidegate_core::LabelSelector;

/// Label and field selectors of a request.
pub struct Selectors {
    /// `labelSelector`
    pub labels: LabelSelector,
    /// `fieldSelector`
    pub fields: FieldSelector,
}

impl Selectors {
    /// Parses both selectors from the query; bad ones are 400.
    pub fn from_req(req: &Req) -> ApiResult<Selectors> {
        Ok(Selectors {
            labels: LabelSelector::parse(req.q("labelSelector").unwrap_or(""))
                .map_err(|e| ApiError::bad_request(e.to_string()))?,
            fields: FieldSelector::parse(req.q("fieldSelector").unwrap_or(""), &req.res)?,
        })
    }

    /// Whether the object is selected.
    pub fn matches(&self, obj: &Value) -> bool {
        let lbl = obj.pointer("/metadata/labels");
        self.labels
            .matches(|k| lbl.and_then(|l| l.get(k)).and_then(Value::as_str))
            && self.fields.matches(obj)
    }

    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.terms.is_empty()
    }
}

fn encode_continue(rv: u64, key: &Key) -> String {
    let token = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{}\u{0}{}", key.namespace, key.name)});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token.to_string())
}

fn decode_continue(token: &str, resource: &str) -> ApiResult<(u64, Key)> {
    let bad = || {
        ApiError::bad_request("continue key is not valid: the continue token could not be decoded")
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    let rv = v.get("rv").and_then(Value::as_u64).ok_or_else(bad)?;
    let start = v.get("start").and_then(Value::as_str).ok_or_else(bad)?;
    let (ns, name) = start.split_once('\u{0}').ok_or_else(bad)?;
    Ok((rv, Key::new(resource, ns, name)))
}

/// Lists the collection.
pub fn list(req: &Req) -> ApiResult<Response> {
    let sel = Selectors::from_req(req)?;
    let limit = match req.q("limit") {
        None | Some("") => None,
        Some(l) => match l.parse::<i64>() {
            Ok(n) if n > 0 => Some(n as usize),
            Ok(_) => None,
            Err(_) => {
                return Err(ApiError::bad_request(format!(
                    "limit: Invalid value: \"{l}\": must be an integer"
                )));
            }
        },
    };
    let storage = req.storage();
    let (token_rv, after) = match req.q("continue") {
        Some(t) if !t.is_empty() => {
            let (rv, k) = decode_continue(t, &storage)?;
            (Some(rv), Some(k))
        }
        _ => (None, None),
    };
    let ns = req.path.namespace.as_deref().filter(|_| req.res.namespaced);
    let (all, rv) = req.state.store.list(&storage, ns, after.as_ref());
    let list_rv = token_rv.unwrap_or(rv);
    let mut items: Vec<Arc<Value>> = Vec::new();
    let mut last_key = None;
    let mut more = false;
    let mut remaining = 0usize;
    for (key, obj) in all {
        if !sel.matches(&obj) {
            continue;
        }
        if let Some(l) = limit
            && items.len() >= l
        {
            more = true;
            remaining += 1;
            if !sel.is_empty() {
                break;
            }
            continue;
        }
        last_key = Some(key);
        items.push(obj);
    }
    let mut meta = json!({"resourceVersion": list_rv.to_string()});
    if more && let Some(k) = &last_key {
        meta["continue"] = json!(encode_continue(list_rv, k));
        if sel.is_empty() {
            meta["remainingItemCount"] = json!(remaining);
        }
    }
    let shown: Vec<Value> = items.iter().map(|o| req.present(o)).collect();
    if req.neg.table {
        let refs: Vec<&Value> = shown.iter().collect();
        let table = crate::table::to_table(
            &req.res,
            &refs,
            meta,
            req.q("includeObject").unwrap_or("Metadata"),
            true,
        );
        return Ok(crate::http::respond(StatusCode::OK, &table, req.neg.format));
    }
    let (kind, api_version) = if req.neg.metadata_only {
        (
            "PartialObjectMetadataList".to_string(),
            "meta.k8s.io/v1".to_string(),
        )
    } else {
        (format!("{}List", req.res.kind), req.res.api_version())
    };
    let list = json!({
        "kind": kind,
        "apiVersion": api_version,
        "metadata": meta,
        "items": shown,
    });
    Ok(crate::http::respond(StatusCode::OK, &list, req.neg.format))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        let k = Key::new("/configmaps", "default", "cm-9");
        let t = encode_continue(42, &k);
        assert_eq!(
            decode_continue(&t, "/configmaps").expect("decodes"),
            (42, k)
        );
        assert_eq!(
            decode_continue("!!", "/configmaps").expect_err("bad").code,
            400
        );
    }
}
