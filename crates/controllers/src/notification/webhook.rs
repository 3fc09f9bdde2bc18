//! The sending side of Flux events: every controller's [`crate::events::Recorder`] hands its
//! events to an [`EventWebhook`], which POSTs them in Flux's format to the
//! notification-controller's event server (`--events-addr`).
//!
//! As Flux's recorder: severity `error` for Warning events and `info` otherwise, the object's
//! `event.toolkit.fluxcd.io/` annotations copied into the metadata, retries on connection
//! errors and 5xx answers (four, waits doubling from one second), none on 429 (the server
//! saying "duplicate"). Unlike Flux's the POST never holds up a reconcile: events wait in a
//! bounded queue (a full queue drops the event with a warning) and at most 16 are in flight.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kube::{Resource, ResourceExt};
use tidegate_api::event::{self, Event, ObjectReference};
use tokio::sync::{Semaphore, mpsc};

/// Events waiting to be sent before new ones are dropped.
const QUEUE: usize = 1024;
/// Posts in flight at once.
const IN_FLIGHT: usize = 16;
/// Retries after the first attempt (go-retryablehttp's default).
const RETRIES: u32 = 4;
/// Each attempt's timeout (Flux's recorder: 5s).
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a controller's events go.
pub struct EventWebhook {
    url: String,
    instance: String,
    queue: mpsc::Sender<Event>,
}

impl std::fmt::Debug for EventWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventWebhook")
            .field("url", &self.url)
            .finish()
    }
}

/// The `event.toolkit.fluxcd.io/` annotations of `obj`, which every event about it carries.
pub fn object_annotations<K: Resource>(obj: &K) -> BTreeMap<String, String> {
    let prefix = format!("{}/", event::GROUP);
    obj.annotations()
        .iter()
        .filter(|(k, _)| k.starts_with(&prefix))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// This machine's host name (the event's `reportingInstance`, as Flux's `os.Hostname()`).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Now as `metav1.Time` marshals: RFC 3339 in UTC, whole seconds.
pub fn now_rfc3339() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

impl EventWebhook {
    /// A sender to `url` (an `http://` or `https://` URL); starts its worker on the current
    /// Tokio runtime.
    pub fn start(url: &str) -> Result<Arc<EventWebhook>, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("--events-addr {url:?}: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("--events-addr {url:?}: not an http(s) URL"));
        }
        tidegate_source::tls::ensure_provider();
        let http = reqwest::Client::builder()
            .timeout(ATTEMPT_TIMEOUT)
            .build()
            .map_err(|e| e.to_string())?;
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(worker(http, url.to_string(), rx));
        Ok(Arc::new(EventWebhook {
            url: url.to_string(),
            instance: hostname(),
            queue: tx,
        }))
    }

    /// Queues an event about `obj` (Kubernetes Event semantics: `warning` → `error`).
    pub fn post<K: Resource<DynamicType = ()>>(
        &self,
        obj: &K,
        controller: &str,
        warning: bool,
        reason: &str,
        message: &str,
        metadata: &[(&str, String)],
    ) {
        let mut meta = object_annotations(obj);
        for (k, v) in metadata {
            meta.insert(k.to_string(), v.clone());
        }
        let (name, namespace) = (obj.name_any(), obj.namespace().unwrap_or_default());
        if name.is_empty() || namespace.is_empty() {
            tracing::warn!(
                reason,
                "unable to record event: object without name or namespace"
            );
            return;
        }
        let message: String = message.chars().take(event::MAX_MESSAGE_LEN).collect();
        let ev = Event {
            involved_object: ObjectReference {
                kind: K::kind(&()).into_owned(),
                namespace,
                name,
                uid: obj.uid().unwrap_or_default(),
                api_version: K::api_version(&()).into_owned(),
                resource_version: obj.resource_version().unwrap_or_default(),
                field_path: String::new(),
            },
            severity: if warning {
                event::SEVERITY_ERROR
            } else {
                event::SEVERITY_INFO
            }
            .to_string(),
            timestamp: now_rfc3339(),
            message,
            reason: reason.to_string(),
            metadata: meta,
            reporting_controller: controller.to_string(),
            reporting_instance: self.instance.clone(),
        };
        if let Err(e) = self.queue.try_send(ev) {
            tracing::warn!(reason, error = %e, "unable to record event: the events queue is full");
        }
    }
}

async fn worker(http: reqwest::Client, url: String, mut rx: mpsc::Receiver<Event>) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    while let Some(ev) = rx.recv().await {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let (http, url) = (http.clone(), url.clone());
        tokio::spawn(async move {
            send(&http, &url, &ev).await;
            drop(permit);
        });
    }
}

/// One event with retries: connection errors and 5xx (but 501) are retried, 429 is not.
async fn send(http: &reqwest::Client, url: &str, ev: &Event) {
    let body = match serde_json::to_value(ev) {
        Ok(v) => tidegate_core::gojson::marshal(&v),
        Err(e) => {
            tracing::error!(error = %e, "failed to marshal event");
            return;
        }
    };
    let mut wait = Duration::from_secs(1);
    for attempt in 0..=RETRIES {
        let answer = http
            .post(url)
            .header("Content-Type", "application/json")
            .body(body.clone())
            .send()
            .await;
        let retry = match &answer {
            Ok(r) if r.status().is_success() || r.status().as_u16() == 429 => return,
            Ok(r) => r.status().is_server_error() && r.status().as_u16() != 501,
            Err(_) => true,
        };
        if !retry || attempt == RETRIES {
            let why = match answer {
                Ok(r) => format!("status code {}", r.status().as_u16()),
                Err(e) => e.to_string(),
            };
            tracing::warn!(
                object = format!(
                    "{}/{}/{}",
                    ev.involved_object.kind, ev.involved_object.namespace, ev.involved_object.name
                ),
                reason = ev.reason,
                error = why,
                "unable to record event"
            );
            return;
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_secs(30));
    }
}
