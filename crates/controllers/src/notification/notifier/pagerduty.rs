//! `pagerduty`: Events API v2 on the address's host, keyed by the routing key (the channel)
//! and deduplicated by the object's UID: an error triggers an alert, anything else resolves
//! it, and an info event is also recorded as a change event. `Progressing` is not sent.

use serde::Serialize;
use serde_json::{Value, json};
use tidegate_api::event::{Event, SEVERITY_ERROR, SEVERITY_INFO};

use super::git::name_and_description;
use super::{Post, Settings, event_rfc3339, gourl, marshal, parse_request_uri};

/// A PagerDuty notifier.
pub struct PagerDuty {
    s: Settings,
    /// `scheme://host[:port]` of the address.
    endpoint: String,
}

/// go-pagerduty's `V2Event`.
#[derive(Serialize)]
pub struct V2Event {
    pub routing_key: String,
    pub event_action: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub dedup_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<V2Payload>,
}

/// go-pagerduty's `V2Payload`.
#[derive(Serialize)]
pub struct V2Payload {
    pub summary: String,
    pub source: String,
    pub severity: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub timestamp: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub component: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    pub custom_details: Value,
}

/// `{"message": …, "metadata": {…}}`.
fn details(event: &Event) -> Value {
    json!({"message": event.message, "metadata": event.metadata})
}

/// `<description>: <kind/name>`, as Flux summarises an event.
fn summary(event: &Event) -> String {
    let (name, desc) = name_and_description(event);
    format!("{desc}: {name}")
}

/// The alert event: `trigger` with details for errors, `resolve` otherwise.
pub fn v2_event(event: &Event, routing_key: &str) -> V2Event {
    let o = &event.involved_object;
    let error = event.severity == SEVERITY_ERROR;
    V2Event {
        routing_key: routing_key.to_string(),
        event_action: if error { "trigger" } else { "resolve" }.to_string(),
        dedup_key: o.uid.clone(),
        payload: error.then(|| V2Payload {
            summary: summary(event),
            source: format!("Flux {}", event.reporting_controller),
            severity: "error".to_string(),
            timestamp: event_rfc3339(event),
            component: o.name.clone(),
            group: o.kind.clone(),
            custom_details: details(event),
        }),
    }
}

/// The change event recorded for info events.
pub fn change_event(event: &Event, routing_key: &str) -> Value {
    json!({
        "routing_key": routing_key,
        "payload": {
            "summary": summary(event),
            "source": format!("Flux {}", event.reporting_controller),
            "timestamp": event_rfc3339(event),
            "custom_details": details(event),
        },
    })
}

impl PagerDuty {
    /// Checks the URL and keeps its scheme and host.
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url).map_err(|e| {
            format!(
                "invalid PagerDuty endpoint URL {}: '{e}'",
                gourl::quote(&s.url)
            )
        })?;
        let endpoint = match reqwest::Url::parse(&s.url) {
            Ok(u) => match (u.host_str(), u.port()) {
                (Some(h), Some(p)) => format!("{}://{h}:{p}", u.scheme()),
                (Some(h), None) => format!("{}://{h}", u.scheme()),
                (None, _) => format!("{}://", u.scheme()),
            },
            Err(_) => "://".to_string(),
        };
        Ok(PagerDuty { s, endpoint })
    }

    /// Sends the alert event, then for info events the change event.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        if event.reason == "Progressing" {
            return Ok(());
        }
        let url = format!("{}/v2/enqueue", self.endpoint);
        let body = marshal(&v2_event(event, &self.s.channel))
            .map_err(|e| format!("failed sending event: {e}"))?;
        Post::json(&self.s.http, &url, body)
            .send()
            .await
            .map_err(|e| format!("failed sending event: {e}"))?;
        if event.severity == SEVERITY_INFO {
            let url = format!("{}/v2/change/enqueue", self.endpoint);
            let body = tidegate_core::gojson::marshal(&change_event(event, &self.s.channel));
            Post::json(&self.s.http, &url, body)
                .send()
                .await
                .map_err(|e| format!("failed sending change event: {e}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;
    use tidegate_api::event::{Event, ObjectReference};

    use super::super::receiver::{Receiver, build_error, settings};
    use super::super::{Settings, build};

    fn event(severity: &str, reason: &str) -> Event {
        Event {
            involved_object: ObjectReference {
                kind: "GitRepository".into(),
                namespace: "flux-system".into(),
                name: "test-app".into(),
                uid: "1234".into(),
                ..Default::default()
            },
            severity: severity.into(),
            timestamp: "2020-01-01T00:00:00Z".into(),
            message: "message".into(),
            reason: reason.into(),
            metadata: BTreeMap::from([
                ("key1".into(), "val1".into()),
                ("key2".into(), "val2".into()),
            ]),
            reporting_controller: "source-controller".into(),
            reporting_instance: String::new(),
        }
    }

    #[tokio::test]
    async fn resolves_triggers_and_records_changes() {
        let (url, rx) = Receiver::start().await;
        let s = Settings {
            channel: "notARealRoutingKey".into(),
            ..settings(&format!("{url}/ignored/path?x=1"))
        };
        let n = build("pagerduty", s).unwrap();
        n.post(&event("info", "Succeeded")).await.unwrap();
        let seen = rx.take();
        assert_eq!(seen.len(), 2);
        assert_eq!(
            (seen[0].method.as_str(), seen[0].path.as_str()),
            ("POST", "/v2/enqueue")
        );
        assert_eq!(seen[0].header("content-type"), "application/json");
        assert_eq!(
            seen[0].text(),
            r#"{"routing_key":"notARealRoutingKey","event_action":"resolve","dedup_key":"1234"}"#
        );
        assert_eq!(seen[1].path, "/v2/change/enqueue");
        assert_eq!(
            seen[1].json(),
            json!({"routing_key":"notARealRoutingKey","payload":{"summary":"succeeded: gitrepository/test-app","source":"Flux source-controller","timestamp":"2020-01-01T00:00:00Z","custom_details":{"message":"message","metadata":{"key1":"val1","key2":"val2"}}}})
        );

        n.post(&event("error", "Failed")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.path, "/v2/enqueue");
        assert_eq!(
            seen.text(),
            r#"{"routing_key":"notARealRoutingKey","event_action":"trigger","dedup_key":"1234","payload":{"summary":"failed: gitrepository/test-app","source":"Flux source-controller","severity":"error","timestamp":"2020-01-01T00:00:00Z","component":"test-app","group":"GitRepository","custom_details":{"message":"message","metadata":{"key1":"val1","key2":"val2"}}}}"#
        );

        // Progressing is not sent; a trace event only resolves.
        n.post(&event("info", "Progressing")).await.unwrap();
        assert!(rx.take().is_empty());
        n.post(&event("trace", "Succeeded")).await.unwrap();
        assert_eq!(rx.one().json()["event_action"], "resolve");

        rx.answer(400, "bad");
        assert_eq!(
            n.post(&event("info", "Succeeded")).await.unwrap_err(),
            "failed sending event: request failed: request failed with status code 400: bad"
        );
    }

    #[test]
    fn keeps_only_scheme_and_host() {
        let n =
            super::PagerDuty::new(settings("https://events.eu.pagerduty.com/v2/enqueue")).unwrap();
        assert_eq!(n.endpoint, "https://events.eu.pagerduty.com");
        let n = super::PagerDuty::new(settings("http://u:p@127.0.0.1:8080/x")).unwrap();
        assert_eq!(n.endpoint, "http://127.0.0.1:8080");
        assert_eq!(
            build_error("pagerduty", settings("not a url")),
            "invalid PagerDuty endpoint URL \"not a url\": 'parse \"not a url\": invalid URI for request'"
        );
    }
}
