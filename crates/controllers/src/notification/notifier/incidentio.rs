//! `incident.io`: an alert event to an HTTP alert source (the address) with the token as a
//! bearer token: `firing` for errors, `resolved` otherwise, deduplicated by the object's UID.
//! `Progressing` is not sent.

use std::collections::BTreeMap;

use serde::Serialize;
use tidegate_api::event::{Event, SEVERITY_ERROR};

use super::{Post, Settings, marshal, object_title, parse_request_uri};

/// An incident.io notifier.
pub struct Incidentio {
    s: Settings,
}

/// incident.io's alert event.
#[derive(Serialize)]
pub struct Payload {
    pub title: String,
    pub status: String,
    pub deduplication_key: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source_url: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

/// The alert event for `event`: the metadata plus severity, reason and controller.
pub fn payload(event: &Event) -> Payload {
    let mut metadata = event.metadata.clone();
    metadata.insert("severity".to_string(), event.severity.clone());
    metadata.insert("reason".to_string(), event.reason.clone());
    if !event.reporting_controller.is_empty() {
        metadata.insert(
            "reportingController".to_string(),
            event.reporting_controller.clone(),
        );
    }
    Payload {
        title: format!("{}: {}", object_title(event), event.reason),
        status: if event.severity == SEVERITY_ERROR {
            "firing"
        } else {
            "resolved"
        }
        .to_string(),
        deduplication_key: event.involved_object.uid.clone(),
        description: event.message.clone(),
        source_url: String::new(),
        metadata,
    }
}

impl Incidentio {
    /// Checks the URL and that there is a token.
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url)
            .map_err(|e| format!("invalid incident.io alert source URL {}: '{e}'", s.url))?;
        if s.token.is_empty() {
            return Err("empty incident.io API token".into());
        }
        Ok(Incidentio { s })
    }

    /// POSTs the alert event.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        if event.reason == "Progressing" {
            return Ok(());
        }
        let body = marshal(&payload(event))?;
        Post::json(&self.s.http, &self.s.url, body)
            .header("Authorization", format!("Bearer {}", self.s.token))
            .deliver()
            .await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::receiver::{Receiver, build_error, event, settings};
    use super::super::{Settings, build};

    #[tokio::test]
    async fn posts_an_alert_event() {
        let (url, rx) = Receiver::start().await;
        rx.answer(202, r#"{"status":"success"}"#);
        let s = Settings {
            token: "inc-token".into(),
            ..settings(&format!("{url}/v2/alert_events/http/01ABC"))
        };
        let n = build("incident.io", s).unwrap();
        let mut e = event("info");
        e.involved_object.uid = "2f5c9d21-b62c-4a35-9b17-1b0f4c8e2d3a".into();
        n.post(&e).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/v2/alert_events/http/01ABC");
        assert_eq!(seen.header("authorization"), "Bearer inc-token");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(
            seen.text(),
            r#"{"title":"gitrepository/webapp.gitops-system: reason","status":"resolved","deduplication_key":"2f5c9d21-b62c-4a35-9b17-1b0f4c8e2d3a","description":"message","metadata":{"reason":"reason","reportingController":"source-controller","severity":"info","test":"metadata"}}"#
        );

        // Errors fire; no UID is still a (empty) key; no controller, no such metadata.
        let mut e = event("error");
        e.reporting_controller.clear();
        e.message.clear();
        n.post(&e).await.unwrap();
        assert_eq!(
            rx.one().json(),
            json!({"title":"gitrepository/webapp.gitops-system: reason","status":"firing","deduplication_key":"","metadata":{"reason":"reason","severity":"error","test":"metadata"}})
        );

        e.reason = "Progressing".into();
        n.post(&e).await.unwrap();
        assert!(rx.take().is_empty());
    }

    #[test]
    fn needs_url_and_token() {
        assert_eq!(
            build_error("incident.io", settings("not a url")),
            "invalid incident.io alert source URL not a url: 'parse \"not a url\": invalid URI for request'"
        );
        assert_eq!(
            build_error(
                "incident.io",
                settings("https://api.incident.io/v2/alert_events/http/x")
            ),
            "empty incident.io API token"
        );
    }
}
