//! The event server (`--events-addr`, Flux's `:9090`): every controller POSTs its events here.
//! Flux's chain: the body (at most 3 MiB, else 413) must be an event (else 400), its metadata
//! is cleaned, a duplicate within the rate-limit interval is refused with 429, and otherwise
//! the event goes to the Provider of every matching Alert and the answer is 202.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use kube::ResourceExt;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersionKind;
use tidegate_api::event::{Event, ObjectReference};

use super::EventServer;
use super::alerts::{self, Labels};
use super::dispatch::{self, Skip, alert_key, mask_token, object_string};
use super::metadata;
use super::ratelimit::event_key;

/// The largest body read.
const MAX_BODY: usize = 3 * 1024 * 1024;

/// The router: every method and path, as Flux's mux on `/`.
pub fn router(server: Arc<EventServer>) -> axum::Router {
    axum::Router::new()
        .fallback(handle)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY + 1))
        .with_state(server)
}

async fn handle(
    State(s): State<Arc<EventServer>>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> StatusCode {
    let body = match body {
        Ok(b) if b.len() <= MAX_BODY => b,
        Ok(_) => return StatusCode::PAYLOAD_TOO_LARGE,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return StatusCode::PAYLOAD_TOO_LARGE;
        }
        Err(_) => return StatusCode::BAD_REQUEST,
    };
    let mut event: Event = match serde_json::from_slice(&body) {
        Ok(e) => e,
        Err(e) => {
            tracing::error!(error = %e, "decoding the request body failed");
            return StatusCode::BAD_REQUEST;
        }
    };
    metadata::cleanup(&mut event);
    s.synced().await;
    if !s.limiter.take(&event_key(&event)) {
        tracing::debug!(
            object = object_string(&event),
            "Discarding event, rate limiting duplicate events"
        );
        return StatusCode::TOO_MANY_REQUESTS;
    }
    s.handle_event(event).await;
    StatusCode::ACCEPTED
}

/// Reads labels through the API (a `PartialObjectMetadata` GET in Flux).
struct ApiLabels<'a> {
    client: &'a kube::Client,
}

impl Labels for ApiLabels<'_> {
    async fn labels(&self, o: &ObjectReference) -> Result<BTreeMap<String, String>, String> {
        let (group, version) = match o.api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", o.api_version.as_str()),
        };
        let gvk = GroupVersionKind::gvk(group, version, &o.kind);
        let ar = ApiResource::from_gvk(&gvk);
        let api: Api<DynamicObject> = Api::namespaced_with(self.client.clone(), &o.namespace, &ar);
        let meta = api.get_metadata(&o.name).await.map_err(|e| e.to_string())?;
        Ok(meta.labels().clone())
    }
}

impl EventServer {
    /// Routes one accepted event (Flux's `handleEvent`).
    pub async fn handle_event(self: &Arc<Self>, mut event: Event) {
        metadata::exclude_internal(&mut event);
        let alerts = self.alerts.state();
        let labels = ApiLabels {
            client: &self.client,
        };
        let (matched, complaints) = alerts::filter(&alerts, &event, &labels, &self.regexes).await;
        for (alert, reason, message) in complaints {
            self.warn(&alert, reason, &message, &[]).await;
        }
        if matched.is_empty() {
            tracing::debug!(
                object = object_string(&event),
                "discarding event, no alerts found for the involved object"
            );
            return;
        }
        tracing::info!(
            object = object_string(&event),
            message = event.message,
            "dispatching event"
        );
        let mut dropped_commit = Vec::new();
        let mut dropped_change = Vec::new();
        for alert in matched {
            match self.dispatch(&event, &alert).await {
                Ok(None) => {}
                Ok(Some(Skip::CommitStatus)) => dropped_commit.push(alert_key(&alert)),
                Ok(Some(Skip::ChangeRequest)) => dropped_change.push(alert_key(&alert)),
                Ok(Some(Skip::Quietly)) => {}
                Err(e) => {
                    tracing::error!(alert = alert_key(&alert), error = %e, "failed to dispatch notification");
                    let message = format!(
                        "failed to dispatch notification for {}: {e}",
                        object_string(&event)
                    );
                    self.warn(&alert, "NotificationDispatchFailed", &message, &[])
                        .await;
                }
            }
        }
        if !dropped_commit.is_empty() {
            tracing::info!(
                alerts = ?dropped_commit,
                "event dropped for commit status providers due to missing commit metadata key"
            );
        }
        if !dropped_change.is_empty() {
            tracing::info!(
                alerts = ?dropped_change,
                "event dropped for change request providers due to missing change request metadata key"
            );
        }
    }

    /// Sends `event` to the Provider of `alert` in the background; `Ok(Some)` when skipped.
    async fn dispatch(
        self: &Arc<Self>,
        event: &Event,
        alert: &Arc<tidegate_api::Alert>,
    ) -> Result<Option<Skip>, String> {
        let alert_ns = alert.namespace().unwrap_or_default();
        if self.options.no_cross_namespace_refs && event.involved_object.namespace != alert_ns {
            return Err(format!(
                "discarding event, access denied to cross-namespace sources: alert '{}' can't process event from '{}', cross-namespace references have been blocked",
                alert_key(alert),
                object_string(event)
            ));
        }
        let provider_name = &alert.spec.provider_ref.name;
        let provider = self
            .providers
            .get(&kube::runtime::reflector::ObjectRef::new(provider_name).within(&alert_ns))
            .ok_or_else(|| {
                format!(
                    "failed to read provider: providers.notification.toolkit.fluxcd.io \"{provider_name}\" not found"
                )
            })?;
        if let Err(skip) = dispatch::routes(&provider, event) {
            return Ok(Some(skip));
        }
        if provider
            .spec
            .service_account_name
            .as_deref()
            .is_some_and(|s| !s.is_empty())
        {
            return Err("to use spec.serviceAccountName for provider authentication please enable the ObjectLevelWorkloadIdentity feature gate in the controller".into());
        }
        let mut notification = event.clone();
        let (combined, conflicts) = metadata::combine(event, alert);
        notification.metadata = combined;
        if !conflicts.is_empty() {
            tracing::info!(alert = alert_key(alert), conflicts = ?conflicts, "warning: metadata key conflicts detected");
            let annotations: Vec<(&str, String)> = conflicts
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            self.warn(
                alert,
                "MetadataAppendFailed",
                "metadata key conflicts detected (please refer to the Alert API docs and Flux RFC 0008 for more information)",
                &annotations,
            )
            .await;
        }
        let commit_status = super::commit_status::for_event(&provider, &notification, alert)
            .map_err(|e| format!("failed to create commit status: {e}"))?;
        let ready = dispatch::notifier_for(&self.client, &self.clients, &provider, commit_status)
            .await
            .map_err(|e| {
                format!(
                    "failed to initialize notifier for provider '{}': {e}",
                    provider.name_any()
                )
            })?;
        let server = self.clone();
        let alert = alert.clone();
        tokio::spawn(async move {
            // Bounded sends: a burst queues here instead of opening thousands of
            // connections at once; the Provider's timeout starts once a slot is free.
            let Ok(_slot) = server.sending.acquire().await else {
                return;
            };
            let sent = tokio::time::timeout(ready.timeout, ready.notifier.post(&notification))
                .await
                .unwrap_or_else(|_| {
                    Err(
                        "postMessage failed: failed to execute request: context deadline exceeded"
                            .into(),
                    )
                });
            match sent {
                Ok(()) => {}
                Err(e) => {
                    let e = mask_token(&e, &ready.token);
                    tracing::error!(alert = alert_key(&alert), error = %e, "failed to send notification");
                    let message = format!(
                        "failed to send notification for {}: {e}",
                        object_string(&notification)
                    );
                    server
                        .warn(&alert, "NotificationDispatchFailed", &message, &[])
                        .await;
                }
            }
        });
        Ok(None)
    }

    async fn warn(
        &self,
        alert: &tidegate_api::Alert,
        reason: &str,
        message: &str,
        annotations: &[(&str, String)],
    ) {
        self.recorder
            .publish(
                alert,
                crate::events::EventType::Warning,
                reason,
                message,
                annotations,
            )
            .await;
    }
}
