//! `datadog`: an event through the Events API v1 (`POST /api/v1/events` on the address's
//! host, `api.datadoghq.com` when there is none) with the token as `DD-API-KEY`, as Flux's
//! Datadog client sends it: keys sorted, a trailing newline, no retries.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tidegate_api::event::{Event, SEVERITY_ERROR};

use super::{Settings, chain, event_unix, gourl, redact};

/// Where the client sends without an address.
const DEFAULT_HOST: &str = "api.datadoghq.com";

/// A Datadog notifier.
pub struct DataDog {
    s: Settings,
    url: String,
}

/// The event request for `event` (a sorted map, as the client marshals it).
pub fn request(event: &Event) -> BTreeMap<&'static str, Value> {
    let o = &event.involved_object;
    let mut tags = vec![
        format!("flux_reporting_controller:{}", event.reporting_controller),
        format!("flux_reason:{}", event.reason),
        format!("kube_kind:{}", o.kind),
        format!("kube_name:{}", o.name),
        format!("kube_namespace:{}", o.namespace),
    ];
    tags.extend(event.metadata.iter().map(|(k, v)| format!("{k}:{v}")));
    let tags: Vec<String> = tags.iter().map(|t| t.to_lowercase()).collect();
    let alert_type = if event.severity == SEVERITY_ERROR {
        "error"
    } else {
        "info"
    };
    BTreeMap::from([
        ("alert_type", json!(alert_type)),
        ("date_happened", json!(event_unix(event))),
        ("source_type_name", json!("fluxcd")),
        ("tags", json!(tags)),
        ("text", json!(event.message)),
        (
            "title",
            json!(format!(
                "Events from the {} {}/{}",
                o.kind, o.name, o.namespace
            )),
        ),
    ])
}

impl DataDog {
    /// Checks the token and takes the scheme and host of the address.
    pub fn new(s: Settings) -> Result<Self, String> {
        if s.token.is_empty() {
            return Err("token cannot be empty".into());
        }
        let base = gourl::parse(&s.url)
            .map_err(|e| format!("failed to parse address {}: {e}", gourl::quote(&s.url)))?;
        let scheme = base.as_ref().map_or("https", |u| u.scheme()).to_string();
        let host = match base.as_ref().and_then(|u| u.host_str()) {
            Some(h) => match base.as_ref().and_then(|u| u.port()) {
                Some(p) => format!("{h}:{p}"),
                None => h.to_string(),
            },
            None => DEFAULT_HOST.to_string(),
        };
        let url = format!("{scheme}://{host}/api/v1/events");
        Ok(DataDog { s, url })
    }

    /// POSTs the event once.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let fail = |e: String| format!("failed to post event to DataDog: {e}");
        let body = serde_json::to_value(request(event))
            .map(|v| tidegate_core::gojson::marshal(&v) + "\n")
            .map_err(|e| fail(e.to_string()))?;
        let resp = self
            .s
            .http
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .header("DD-API-KEY", self.s.token.trim_matches([' ', '\t']))
            .body(body)
            .send()
            .await
            .map_err(|e| fail(format!("Post {:?}: {}", redact(&self.url), chain(&e))))?;
        let status = resp.status();
        let answer = resp.bytes().await.map_err(|e| fail(chain(&e)))?;
        if status.as_u16() >= 300 {
            return Err(fail(format!(
                "{} {}",
                status.as_u16(),
                status.canonical_reason().unwrap_or_default()
            )));
        }
        if !answer.is_empty() {
            serde_json::from_slice::<Value>(&answer).map_err(|e| fail(e.to_string()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::receiver::{Receiver, build_error, event, settings};
    use super::super::{Settings, build};

    #[tokio::test]
    async fn posts_an_event_with_the_api_key() {
        let (url, rx) = Receiver::start().await;
        rx.answer(202, r#"{"status":"ok"}"#);
        let s = Settings {
            token: "dd-key".into(),
            ..settings(&format!("{url}/path/ignored"))
        };
        let n = build("datadog", s).unwrap();
        n.post(&event("info")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/api/v1/events");
        assert_eq!(seen.header("dd-api-key"), "dd-key");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(seen.header("accept"), "application/json");
        assert_eq!(
            seen.text(),
            "{\"alert_type\":\"info\",\"date_happened\":1664520029,\"source_type_name\":\"fluxcd\",\"tags\":[\"flux_reporting_controller:source-controller\",\"flux_reason:reason\",\"kube_kind:gitrepository\",\"kube_name:webapp\",\"kube_namespace:gitops-system\",\"test:metadata\"],\"text\":\"message\",\"title\":\"Events from the GitRepository webapp/gitops-system\"}\n"
        );

        let mut e = event("error");
        e.metadata.insert("Revision".into(), "Main@SHA1:ABC".into());
        n.post(&e).await.unwrap();
        let body = rx.one().json();
        assert_eq!(body["alert_type"], "error");
        assert_eq!(body["tags"][5], "revision:main@sha1:abc");

        // No retries; the status line is the error.
        rx.answer(403, r#"{"errors":["Forbidden"]}"#);
        assert_eq!(
            n.post(&event("info")).await.unwrap_err(),
            "failed to post event to DataDog: 403 Forbidden"
        );
        rx.answer(503, "");
        assert_eq!(
            n.post(&event("info")).await.unwrap_err(),
            "failed to post event to DataDog: 503 Service Unavailable"
        );
        assert_eq!(rx.take().len(), 2);
    }

    #[test]
    fn needs_a_token_and_defaults_the_host() {
        let s = |url: &str, token: &str| Settings {
            token: token.into(),
            ..settings(url)
        };
        assert_eq!(build_error("datadog", s("", "")), "token cannot be empty");
        assert_eq!(
            build_error("datadog", s(":x", "k")),
            "failed to parse address \":x\": parse \":x\": missing protocol scheme"
        );
        let url = |address: &str| super::DataDog::new(s(address, "k")).unwrap().url;
        assert_eq!(url(""), "https://api.datadoghq.com/api/v1/events");
        assert_eq!(
            url("datadoghq.eu"),
            "https://api.datadoghq.com/api/v1/events"
        );
        assert_eq!(
            url("https://api.datadoghq.eu/whatever"),
            "https://api.datadoghq.eu/api/v1/events"
        );
        assert_eq!(
            url("http://127.0.0.1:8126"),
            "http://127.0.0.1:8126/api/v1/events"
        );
    }
}
