//! Tests' stand-in for a chat or alerting service: a local HTTP server that records every
//! request and answers with the status and body the test sets; and Flux's test event.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use serde_json::Value;
use tidegate_api::event::{Event, ObjectReference};

use super::Settings;

/// One request received.
pub struct Seen {
    pub method: Method,
    /// Path and query.
    pub path: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Seen {
    /// The body decoded as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("a UTF-8 body")
    }

    /// A header's value ("" when absent).
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("a text header"))
            .unwrap_or_default()
    }
}

/// The recording server.
#[derive(Clone)]
pub struct Receiver {
    seen: Arc<Mutex<Vec<Seen>>>,
    answer: Arc<Mutex<(u16, String)>>,
}

impl Receiver {
    /// Starts a server answering `200 {}`; returns its base URL (`http://127.0.0.1:port`).
    pub async fn start() -> (String, Receiver) {
        let r = Receiver {
            seen: Arc::default(),
            answer: Arc::new(Mutex::new((200, "{}".to_string()))),
        };
        let rec = r.clone();
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let rec = rec.clone();
                async move {
                    let path = uri
                        .path_and_query()
                        .map(|p| p.to_string())
                        .unwrap_or_default();
                    rec.seen.lock().unwrap().push(Seen {
                        method,
                        path,
                        headers,
                        body: body.to_vec(),
                    });
                    let (code, body) = rec.answer.lock().unwrap().clone();
                    (StatusCode::from_u16(code).unwrap(), body)
                }
            },
        );
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(l, app).await });
        (url, r)
    }

    /// Answers later requests with `status` and `body`.
    pub fn answer(&self, status: u16, body: &str) {
        *self.answer.lock().unwrap() = (status, body.to_string());
    }

    /// The requests seen so far (and forgets them).
    pub fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }

    /// The one request seen so far.
    pub fn one(&self) -> Seen {
        let mut seen = self.take();
        assert_eq!(seen.len(), 1, "exactly one request");
        seen.remove(0)
    }
}

/// Settings sending to `url` with a plain client.
pub fn settings(url: &str) -> Settings {
    tidegate_source::tls::ensure_provider();
    Settings {
        url: url.to_string(),
        http: reqwest::Client::new(),
        ..Default::default()
    }
}

/// Flux's `testEvent()`: GitRepository `gitops-system/webapp`, metadata `test: metadata`,
/// reason `reason`, sent by source-controller on 2022-09-30T06:40:29Z, with `severity`.
pub fn event(severity: &str) -> Event {
    Event {
        involved_object: ObjectReference {
            kind: "GitRepository".into(),
            namespace: "gitops-system".into(),
            name: "webapp".into(),
            ..Default::default()
        },
        severity: severity.into(),
        timestamp: "2022-09-30T06:40:29Z".into(),
        message: "message".into(),
        reason: "reason".into(),
        metadata: BTreeMap::from([("test".to_string(), "metadata".to_string())]),
        reporting_controller: "source-controller".into(),
        reporting_instance: "source-controller-xyz".into(),
    }
}

/// The error of building `type_` from `s`.
pub fn build_error(type_: &str, s: Settings) -> String {
    match super::build(type_, s) {
        Ok(_) => panic!("{type_}: built, expected an error"),
        Err(e) => e,
    }
}
