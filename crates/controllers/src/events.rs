//! Kubernetes Events (`v1` Event, as Flux's controllers record them): one per distinct
//! (object, type, reason, message); a repeat within the hour bumps `count` and
//! `lastTimestamp` instead of creating another. With an events address (`--events-addr`)
//! each event is also POSTed, in Flux's event format, to the notification-controller
//! ([`crate::notification::webhook`]).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client, Resource, ResourceExt};
use std::sync::Mutex;

/// `Normal` or `Warning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Something happened.
    Normal,
    /// Something went wrong.
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// (object uid, type, reason, message): what makes two events the same.
type EventKey = (String, String, String, String);

/// The recorded event: namespace, name, count, last seen.
struct Recorded {
    namespace: String,
    name: String,
    count: i32,
    at: Instant,
}

/// Records events for one controller.
pub struct Recorder {
    client: Client,
    component: String,
    seen: Mutex<HashMap<EventKey, Recorded>>,
    webhook: Option<std::sync::Arc<crate::notification::webhook::EventWebhook>>,
}

const AGGREGATE_FOR: Duration = Duration::from_secs(3600);

impl Recorder {
    /// A recorder reporting as `component` (`source-controller`).
    pub fn new(client: Client, component: &str) -> Self {
        Recorder {
            client,
            component: component.to_string(),
            seen: Mutex::new(HashMap::new()),
            webhook: None,
        }
    }

    /// The same recorder, also posting every event to `webhook` when given.
    pub fn with_webhook(
        mut self,
        webhook: Option<std::sync::Arc<crate::notification::webhook::EventWebhook>>,
    ) -> Self {
        self.webhook = webhook;
        self
    }

    /// Posts the event to the events address only, without a Kubernetes Event: for the
    /// periodic "Reconciliation finished" of an object whose state did not change, which
    /// Flux's notification providers (commit statuses, webhooks) expect every interval but
    /// which would only add noise to the cluster's Events.
    pub fn notify<K>(
        &self,
        obj: &K,
        kind: EventType,
        reason: &str,
        message: &str,
        metadata: &[(&str, String)],
    ) where
        K: Resource<DynamicType = ()>,
    {
        if let Some(webhook) = &self.webhook {
            webhook.post(
                obj,
                &self.component,
                kind == EventType::Warning,
                reason,
                message,
                metadata,
            );
        }
    }

    /// Records an event about `obj`. Failures are logged, never returned: an event is not worth
    /// failing a reconcile for.
    pub async fn publish<K>(
        &self,
        obj: &K,
        kind: EventType,
        reason: &str,
        message: &str,
        annotations: &[(&str, String)],
    ) where
        K: Resource<DynamicType = ()>,
    {
        self.notify(obj, kind, reason, message, annotations);
        let namespace = obj.namespace().unwrap_or_else(|| "default".to_string());
        let uid = obj.uid().unwrap_or_default();
        let key = (
            uid,
            kind.as_str().to_string(),
            reason.to_string(),
            message.to_string(),
        );
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        let now = k8s_openapi::jiff::Timestamp::now();
        // The lock is held only to read and update the cache, never across a request.
        let repeat = {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            seen.retain(|_, r| r.at.elapsed() < AGGREGATE_FOR);
            seen.get_mut(&key)
                .filter(|r| r.namespace == namespace)
                .map(|r| {
                    r.count += 1;
                    r.at = Instant::now();
                    (r.name.clone(), r.count)
                })
        };
        if let Some((name, count)) = repeat {
            let patch = serde_json::json!({"count": count, "lastTimestamp": Time(now)});
            if let Err(e) = api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                tracing::warn!(error = %e, reason, "updating event failed");
            }
            return;
        }
        let name = format!("{}.{:x}", obj.name_any(), now.as_nanosecond());
        let mut event_annotations = crate::notification::webhook::object_annotations(obj);
        for (k, v) in annotations {
            event_annotations.insert(k.to_string(), v.clone());
        }
        let event = Event {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                annotations: (!event_annotations.is_empty()).then_some(event_annotations),
                ..Default::default()
            },
            involved_object: ObjectReference {
                api_version: Some(K::api_version(&()).into_owned()),
                kind: Some(K::kind(&()).into_owned()),
                name: Some(obj.name_any()),
                namespace: Some(namespace.clone()),
                uid: obj.uid(),
                resource_version: obj.resource_version(),
                ..Default::default()
            },
            reason: Some(reason.to_string()),
            message: Some(message.to_string()),
            type_: Some(kind.as_str().to_string()),
            source: Some(EventSource {
                component: Some(self.component.clone()),
                host: None,
            }),
            reporting_component: Some(self.component.clone()),
            reporting_instance: Some(self.component.clone()),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            event_time: Some(MicroTime(now)),
            action: Some(reason.to_string()),
            count: Some(1),
            ..Default::default()
        };
        match api.create(&PostParams::default(), &event).await {
            Ok(_) => {
                let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
                seen.insert(
                    key,
                    Recorded {
                        namespace,
                        name,
                        count: 1,
                        at: Instant::now(),
                    },
                );
            }
            Err(e) => tracing::warn!(error = %e, reason, "recording event failed"),
        }
    }
}
