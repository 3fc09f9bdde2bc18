//! GET of a collection: selectors, paging (`limit`/`continue`) and Table output.

use super::{Req, StoredShape};
use crate::error::{ApiError, ApiResult};
use crate::fieldsel::FieldSelector;
use crate::store::Key;
use axum::http::StatusCode;
use axum::response::Response;
use base64::Engine;
use bytes::Bytes;
use serde_json::{Value, json};
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

    /// Whether the object with this encoding is selected (decoded only to be matched).
    pub fn matches_encoded(&self, json: &[u8]) -> bool {
        self.matches(&crate::store::decode(json))
    }

    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.terms.is_empty()
    }
}

/// A `resourceVersion` parameter's revision (400 when it is not a number, as kube-apiserver
/// answers).
fn parse_version(v: &str) -> ApiResult<u64> {
    v.parse::<u64>().map_err(|_| {
        ApiError::bad_request(format!(
            "resourceVersion: Invalid value: \"{v}\": strconv.ParseUint: parsing \"{v}\": invalid syntax"
        ))
    })
}

fn version_number(v: &str) -> Option<u64> {
    v.parse().ok().filter(|n| *n > 0)
}

/// kube-apiserver's answers for a list at a revision it cannot serve: the continue token's
/// wording when a page's snapshot is gone, 410 for other compacted revisions, and the 504 that
/// asks a client to retry a revision the store has not reached.
fn list_error(e: crate::store::StoreError, paging: bool) -> ApiError {
    match e {
        crate::store::StoreError::Expired { .. } if paging => ApiError::gone(CONTINUE_EXPIRED),
        crate::store::StoreError::Expired { .. } => {
            ApiError::gone("The resourceVersion for the provided list is too old.")
        }
        crate::store::StoreError::TooLarge { requested, current } => {
            ApiError::too_large_resource_version(requested, current)
        }
        other => ApiError::from(other),
    }
}

const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

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
    let version = req.q("resourceVersion").unwrap_or("");
    let matching = req.q("resourceVersionMatch").unwrap_or("");
    // `resourceVersion=0` is served from kube-apiserver's watch cache, which ignores `limit`.
    let limit = super::listoptions::ListOptions::from_req(req, false)?
        .limit
        .filter(|n| *n > 0 && !(version == "0" && matching != "Exact"))
        .map(|n| n as usize);
    let storage = req.storage();
    let (token_rv, after) = match req.q("continue") {
        Some(t) if !t.is_empty() => {
            let (rv, k) = decode_continue(t, &storage)?;
            (Some(rv), Some(k))
        }
        _ => (None, None),
    };
    // The revision the list is read at: a continue token's (each page of one list is a
    // snapshot), `resourceVersionMatch=Exact`'s, or a paged list's legacy exact version.
    let exact = match token_rv {
        Some(rv) => Some(rv),
        None if matching == "Exact" || (matching.is_empty() && limit.is_some()) => match version {
            "" | "0" => None,
            v => Some(parse_version(v)?),
        },
        None => None,
    };
    let ns = req.path.namespace.as_deref().filter(|_| req.res.namespaced);
    let mut items: Vec<Bytes> = Vec::new();
    let mut last_key = None;
    let mut more = false;
    let mut remaining = 0usize;
    let unfiltered = sel.is_empty();
    let visit = |key: &Key, json: &Bytes| {
        if let Some(l) = limit
            && items.len() >= l
        {
            // A full page with anything after it hands out a continue token, whether or not
            // what follows matches the selector (kube-apiserver reads on by keys).
            more = true;
            if unfiltered {
                remaining += 1;
            }
            // Without a selector the remaining count is cheap to finish.
            return unfiltered;
        }
        if !unfiltered && !sel.matches_encoded(json) {
            return true;
        }
        if limit.is_some() {
            last_key = Some(key.clone());
        }
        items.push(json.clone());
        true
    };
    let store = &req.state.store;
    let rv = match exact {
        Some(at) => store
            .visit_at(&storage, ns, after.as_ref(), at, visit)
            .map_err(|e| list_error(e, token_rv.is_some()))?,
        None => {
            if let (Some(min), "NotOlderThan" | "") = (version_number(version), matching) {
                let current = store.revision();
                if min > current {
                    return Err(ApiError::too_large_resource_version(min, current));
                }
            }
            store.visit(&storage, ns, after.as_ref(), visit)
        }
    };
    let list_rv = rv;
    let mut meta = json!({"resourceVersion": list_rv.to_string()});
    if more && let Some(k) = &last_key {
        meta["continue"] = json!(encode_continue(list_rv, k));
        if sel.is_empty() {
            meta["remainingItemCount"] = json!(remaining);
        }
    }
    if let Some(shape) = req.stored_shape() {
        return Ok(encoded_list(req, &shape, &meta, &items));
    }
    let shown: Vec<Value> = items
        .iter()
        .map(|json| req.present(&crate::store::decode(json)))
        .collect();
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

/// A JSON list written from the stored encodings: objects shown as stored are copied, others
/// are decoded, presented and serialised. The body is sent as a stream of
/// chunks of about 64 KiB, so a large list costs neither one huge allocation (and its page
/// faults) nor a copy of every object's value.
fn encoded_list(req: &Req, shape: &StoredShape, meta: &Value, items: &[Bytes]) -> Response {
    const CHUNK: usize = 64 << 10;
    let api_version = req.res.api_version();
    let mut chunks: Vec<Bytes> = Vec::with_capacity(items.len() / 64 + 2);
    let mut buf = Vec::with_capacity(CHUNK);
    buf.extend_from_slice(
        format!(
            r#"{{"kind":{},"apiVersion":{},"metadata":{meta},"items":["#,
            Value::String(format!("{}List", req.res.kind)),
            Value::String(api_version.clone()),
        )
        .as_bytes(),
    );
    for (i, json) in items.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        if shape.matches(json) {
            buf.extend_from_slice(json);
        } else {
            buf.extend_from_slice(
                req.present(&crate::store::decode(json))
                    .to_string()
                    .as_bytes(),
            );
        }
        if buf.len() >= CHUNK {
            chunks.push(Bytes::from(std::mem::replace(
                &mut buf,
                Vec::with_capacity(CHUNK),
            )));
        }
    }
    buf.extend_from_slice(b"]}");
    chunks.push(Bytes::from(buf));
    let stream = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
    let mut resp = Response::new(axum::body::Body::from_stream(stream));
    resp.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    resp
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
