//! `opsgenie`: an alert through the Alert API with the token as a `GenieKey`; the alias is
//! the SHA-256 of the Provider's UID, the object and the reason, so Opsgenie folds repeats of
//! one condition into one alert.

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::{Digest as _, Sha256};
use tidegate_api::event::Event;

use super::{Post, Settings, marshal, parse_request_uri};

/// An Opsgenie notifier.
pub struct Opsgenie {
    s: Settings,
}

/// Opsgenie's alert.
#[derive(Serialize)]
pub struct Alert {
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub alias: String,
    pub description: String,
    pub details: BTreeMap<String, String>,
}

/// `sha256("<provider UID>/<Kind>/<namespace>/<name>/<reason>")` in lower-case hex.
pub fn alias(provider_uid: &str, event: &Event) -> String {
    let o = &event.involved_object;
    let key = format!(
        "{provider_uid}/{}/{}/{}/{}",
        o.kind, o.namespace, o.name, event.reason
    );
    Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The alert for `event`: `Kind/name`, the message, the metadata plus the severity.
pub fn alert(provider_uid: &str, event: &Event) -> Alert {
    let mut details = event.metadata.clone();
    details.insert("severity".to_string(), event.severity.clone());
    let o = &event.involved_object;
    Alert {
        message: format!("{}/{}", o.kind, o.name),
        alias: alias(provider_uid, event),
        description: event.message.clone(),
        details,
    }
}

impl Opsgenie {
    /// Checks the URL and that there is an API key.
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url)
            .map_err(|e| format!("invalid Opsgenie hook URL {}: '{e}'", s.url))?;
        if s.token.is_empty() {
            return Err("empty Opsgenie apikey/token".into());
        }
        Ok(Opsgenie { s })
    }

    /// POSTs the alert.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let body = marshal(&alert(&self.s.provider_uid, event))?;
        Post::json(&self.s.http, &self.s.url, body)
            .header("Authorization", format!("GenieKey {}", self.s.token))
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
    async fn posts_an_alert_with_the_genie_key() {
        let (url, rx) = Receiver::start().await;
        let s = Settings {
            token: "api-key".into(),
            provider_uid: "test-provider-uid-123".into(),
            ..settings(&format!("{url}/v2/alerts"))
        };
        let n = build("opsgenie", s).unwrap();
        n.post(&event("info")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/v2/alerts");
        assert_eq!(seen.header("authorization"), "GenieKey api-key");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(
            seen.text(),
            r#"{"message":"GitRepository/webapp","alias":"fe0de7c3e730984dc8fa97aa4e3564e679cce5c2fa3103734a603115c16f7156","description":"message","details":{"severity":"info","test":"metadata"}}"#
        );

        // The severity overrides a metadata `severity`; the alias does not follow the message.
        let mut e = event("error");
        e.metadata.insert("severity".into(), "low".into());
        e.message = "another".into();
        n.post(&e).await.unwrap();
        assert_eq!(
            rx.one().json(),
            json!({"message":"GitRepository/webapp","alias":"fe0de7c3e730984dc8fa97aa4e3564e679cce5c2fa3103734a603115c16f7156","description":"another","details":{"severity":"error","test":"metadata"}})
        );
        e.reason = "other".into();
        assert_ne!(
            super::alias("test-provider-uid-123", &e),
            "fe0de7c3e730984dc8fa97aa4e3564e679cce5c2fa3103734a603115c16f7156"
        );
    }

    #[test]
    fn needs_url_and_key() {
        assert_eq!(
            build_error("opsgenie", settings("not a url")),
            "invalid Opsgenie hook URL not a url: 'parse \"not a url\": invalid URI for request'"
        );
        assert_eq!(
            build_error("opsgenie", settings("https://api.opsgenie.com/v2/alerts")),
            "empty Opsgenie apikey/token"
        );
    }
}
