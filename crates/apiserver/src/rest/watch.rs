//! Watches: a stream of `{"type": …, "object": …}` lines, started from a resourceVersion, from
//! the current state, or with `sendInitialEvents`.

use super::list::Selectors;
use super::{Req, StoredShape};
use crate::error::{ApiError, ApiResult};
use crate::store::{EventType, StoreEvent};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// How often a watcher that asked for bookmarks gets one (kube-apiserver's watch cache: about
/// every minute, and two seconds before the watch's deadline).
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);
const BOOKMARK_BEFORE_DEADLINE: Duration = Duration::from_secs(2);
/// The deadline of a watch whose `timeoutSeconds` lies beyond what a clock can hold.
const FOREVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
const DEFAULT_TIMEOUT: u64 = 1800;
/// Events a watcher takes from the log at a time (and so keeps alive while its client reads).
const BATCH: usize = 64;

struct Watcher {
    req: Req,
    sel: Selectors,
    /// How encodings shown as stored begin (`None`: every object is presented anew).
    shape: Option<StoredShape>,
    storage: String,
    namespace: Option<String>,
    headers_sent: bool,
}

impl Watcher {
    /// Whether the object with this encoding is selected; decoded only when a selector asks.
    fn selects(&self, json: &[u8]) -> bool {
        self.sel.is_empty() || self.sel.matches_encoded(json)
    }

    fn in_scope(&self, e: &StoreEvent) -> bool {
        e.key.resource == self.storage
            && self
                .namespace
                .as_deref()
                .is_none_or(|ns| e.key.namespace == ns)
    }

    /// The event type this watcher reports for a store event, if any.
    fn translate(&self, e: &StoreEvent) -> Option<&'static str> {
        if !self.in_scope(e) {
            return None;
        }
        let was = e.prev_json.as_ref().is_some_and(|p| self.selects(p));
        match e.kind {
            EventType::Deleted => was.then_some("DELETED"),
            EventType::Added => self.selects(&e.json).then_some("ADDED"),
            EventType::Modified => match (was, self.selects(&e.json)) {
                (true, true) => Some("MODIFIED"),
                (false, true) => Some("ADDED"),
                (true, false) => Some("DELETED"),
                (false, false) => None,
            },
        }
    }

    /// An event line for the object encoded as `json`: the encoding itself when it is shown as
    /// stored, else the decoded object presented anew.
    fn line_encoded(&mut self, type_: &str, json: &[u8]) -> Bytes {
        if !self.shape.as_ref().is_some_and(|s| s.matches(json)) {
            return self.line(type_, &crate::store::decode(json));
        }
        let head = format!(r#"{{"type":"{type_}","object":"#);
        let mut out = Vec::with_capacity(head.len() + json.len() + 2);
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(json);
        out.extend_from_slice(b"}\n");
        Bytes::from(out)
    }

    fn line(&mut self, type_: &str, obj: &Value) -> Bytes {
        let shown = self.req.present(obj);
        let object = if self.req.neg.table {
            let rv = obj
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(Value::Null);
            let t = crate::table::to_table(
                &self.req.res,
                &[&shown],
                json!({"resourceVersion": rv}),
                self.req.q("includeObject").unwrap_or("Metadata"),
                !self.headers_sent,
            );
            self.headers_sent = true;
            t
        } else {
            shown
        };
        let mut s = json!({"type": type_, "object": object}).to_string();
        s.push('\n');
        Bytes::from(s)
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let (kind, api_version) = if self.req.neg.metadata_only {
            (
                "PartialObjectMetadata".to_string(),
                "meta.k8s.io/v1".to_string(),
            )
        } else {
            (self.req.res.kind.clone(), self.req.res.api_version())
        };
        let mut s = json!({"type": "BOOKMARK", "object": {
            "kind": kind, "apiVersion": api_version, "metadata": meta}})
        .to_string();
        s.push('\n');
        Bytes::from(s)
    }
}

/// Starts a watch and answers with the streaming response.
pub async fn watch(req: Req) -> ApiResult<Response> {
    let sel = Selectors::from_req(&req)?;
    let rv_param = req.q("resourceVersion").unwrap_or("").to_string();
    let options = super::listoptions::ListOptions::from_req(&req, true)?;
    let send_initial = options.send_initial_events == Some(true);
    let bookmarks = options.allow_watch_bookmarks;
    if send_initial && !bookmarks {
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "ListOptions",
            "",
            vec![crate::error::Cause::forbidden(
                "allowWatchBookmarks",
                "allowWatchBookmarks required when sendInitialEvents is set",
            )],
        ));
    }
    let timeout = options
        .timeout_seconds
        .filter(|t| *t > 0)
        .map_or(DEFAULT_TIMEOUT, |t| t as u64);
    let storage = req.storage();
    let namespace = req.path.namespace.clone().filter(|_| req.res.namespaced);
    let store = req.state.store.clone();
    // Initial objects (synthetic ADDED events) and where the live stream starts.
    // Told of every revision after this point; the events themselves are read from the log.
    let mut changes = store.revision_changes();
    changes.borrow_and_update();
    let (initial, start_rv) = if rv_param.is_empty() || rv_param == "0" || send_initial {
        let (items, rv) = store.snapshot(&storage, namespace.as_deref());
        (items.into_iter().map(|(_, v)| v).collect::<Vec<_>>(), rv)
    } else {
        let from = rv_param.parse::<u64>().map_err(|_| {
            ApiError::bad_request(format!(
                "resourceVersion: Invalid value: \"{rv_param}\": must be an integer"
            ))
        })?;
        // History the log no longer holds: kube-apiserver's watch cache answers with a stream
        // whose one event is an ERROR carrying the 410 Expired status.
        if let Err(e) = store.events_after(&storage, from, 0) {
            let status = ApiError::from(e).status_body();
            let mut line = json!({"type": "ERROR", "object": status}).to_string();
            line.push('\n');
            return Ok(stream_response(Body::from(line)));
        }
        (Vec::new(), from)
    };
    let mut w = Watcher {
        shape: req.stored_shape(),
        req,
        sel,
        storage,
        namespace,
        headers_sent: false,
    };
    // A few lines in flight: a client that stops reading holds back its watcher, not memory.
    let (tx, body_rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        // A client may ask for any number of seconds; beyond what an Instant can hold the
        // watch simply has no deadline of its own.
        let now = tokio::time::Instant::now();
        let deadline = now
            .checked_add(Duration::from_secs(timeout))
            .unwrap_or_else(|| now + FOREVER);
        let mut last_rv = start_rv;
        for json in &initial {
            if w.selects(json) {
                let line = w.line_encoded("ADDED", json);
                if tx.send(Ok(line)).await.is_err() {
                    return;
                }
            }
        }
        if send_initial {
            let b = w.bookmark(start_rv, true);
            if tx.send(Ok(b)).await.is_err() {
                return;
            }
        }
        let mut next_bookmark = next_bookmark_at(tokio::time::Instant::now(), deadline);
        loop {
            // Everything logged since the last line sent. A watcher whose client read too
            // slowly for the log to still hold its place is ended; the client resumes from its
            // last resourceVersion, or re-lists on 410 Gone.
            let Ok((events, seen)) = store.events_after(&w.storage, last_rv, BATCH) else {
                return;
            };
            let more = events.len() == BATCH;
            for e in events {
                if let Some(t) = w.translate(&e) {
                    let line = match (&e.kind, &e.prev_json) {
                        // Leaving the selector: the last state that matched, at the event's
                        // revision, as kube-apiserver's watch cache reports it.
                        (EventType::Modified, Some(prev)) if t == "DELETED" => {
                            let mut obj = (*crate::store::decode(prev)).clone();
                            if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut)
                            {
                                m.insert("resourceVersion".into(), json!(e.rv.to_string()));
                            }
                            w.line(t, &obj)
                        }
                        _ => w.line_encoded(t, &e.json),
                    };
                    tokio::select! {
                        sent = tx.send(Ok(line)) => if sent.is_err() { return; },
                        _ = tokio::time::sleep_until(deadline) => return,
                    }
                }
            }
            // Nothing else of this resource happened up to `seen`: bookmarks and resumptions
            // start there, as kube-apiserver's watch cache moves on with etcd's progress.
            last_rv = seen;
            if more {
                continue;
            }
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => return,
                _ = tx.closed() => return,
                _ = sleep_until_some(next_bookmark), if bookmarks && next_bookmark.is_some() => {
                    let b = w.bookmark(last_rv, false);
                    if tx.send(Ok(b)).await.is_err() { return; }
                    next_bookmark = next_bookmark_at(tokio::time::Instant::now(), deadline);
                }
                changed = changes.changed() => if changed.is_err() { return; },
            }
        }
    });
    Ok(stream_response(Body::from_stream(ReceiverStream::new(
        body_rx,
    ))))
}

/// A watch's 200 answer with `body` as its stream of event lines.
fn stream_response(body: Body) -> Response {
    let mut resp = (StatusCode::OK, body).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// When the next bookmark is due: a minute on, or two seconds before the deadline if that
/// comes first; none once that moment has passed.
fn next_bookmark_at(
    now: tokio::time::Instant,
    deadline: tokio::time::Instant,
) -> Option<tokio::time::Instant> {
    let heartbeat = now + BOOKMARK_EVERY;
    let at = deadline
        .checked_sub(BOOKMARK_BEFORE_DEADLINE)
        .map_or(heartbeat, |pre| pre.min(heartbeat));
    (at >= now).then_some(at)
}

async fn sleep_until_some(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
