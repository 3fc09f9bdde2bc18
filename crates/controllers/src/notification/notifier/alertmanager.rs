//! `alertmanager`: one firing alert posted to the alerts endpoint (the address): the event's
//! fields and metadata as labels, the message (and `summary`) as annotations. A token goes as
//! a bearer token, a username and password as basic auth (which wins when both are set).

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::Serialize;
use tidegate_api::event::Event;

use super::{Post, Settings, event_rfc3339, marshal, parse_request_uri};

/// An Alertmanager notifier.
pub struct Alertmanager {
    s: Settings,
}

/// Alertmanager's alert.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Alert {
    pub status: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub starts_at: String,
    /// Go's zero time: Flux never sets it, and `omitempty` does not drop a struct.
    pub ends_at: String,
}

/// Go's `cases.Title(language.Und)`: each word's first cased letter upper-cased, the rest of
/// the word lower-cased; words end at anything but letters, digits, `_` and single
/// word-joining punctuation (`'`, `.`, `:`).
pub fn title(s: &str) -> String {
    let is_mid = |c: char| {
        matches!(
            c,
            '\'' | '.' | ':' | '·' | '’' | '‘' | '\u{2024}' | '\u{2027}'
        )
    };
    let mut out = String::with_capacity(s.len());
    let mut mid_word = false;
    let mut last_was_mid = false;
    for c in s.chars() {
        if last_was_mid && is_mid(c) {
            mid_word = false;
        }
        if c.is_lowercase() || c.is_uppercase() {
            if mid_word {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
                mid_word = true;
            }
        } else {
            out.push(c);
            if !(c.is_alphanumeric() || c == '_' || is_mid(c)) {
                mid_word = false;
            }
        }
        last_was_mid = is_mid(c);
    }
    out
}

/// The alerts Flux posts for `event` (a list of one).
pub fn alerts(event: &Event) -> Vec<Alert> {
    let mut labels = event.metadata.clone();
    let mut annotations = BTreeMap::from([("message".to_string(), event.message.clone())]);
    if let Some(summary) = labels.remove("summary") {
        annotations.insert("summary".to_string(), summary);
    }
    let o = &event.involved_object;
    for (k, v) in [
        (
            "alertname",
            format!("Flux{}{}", o.kind, title(&event.reason)),
        ),
        ("severity", event.severity.clone()),
        ("reason", event.reason.clone()),
        ("kind", o.kind.clone()),
        ("name", o.name.clone()),
        ("namespace", o.namespace.clone()),
        ("reportingcontroller", event.reporting_controller.clone()),
    ] {
        labels.insert(k.to_string(), v);
    }
    vec![Alert {
        status: "firing".to_string(),
        labels,
        annotations,
        starts_at: event_rfc3339(event),
        ends_at: "0001-01-01T00:00:00Z".to_string(),
    }]
}

impl Alertmanager {
    /// Checks the URL.
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url)
            .map_err(|e| format!("invalid Alertmanager URL {}: '{e}'", s.url))?;
        Ok(Alertmanager { s })
    }

    /// POSTs the alert.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let body = marshal(&alerts(event))?;
        let mut post = Post::json(&self.s.http, &self.s.url, body);
        if !self.s.username.is_empty() && !self.s.password.is_empty() {
            let pair = format!("{}:{}", self.s.username, self.s.password);
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            post = post.header("Authorization", format!("Basic {basic}"));
        } else if !self.s.token.is_empty() {
            post = post.header("Authorization", format!("Bearer {}", self.s.token));
        }
        post.deliver().await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::receiver::{Receiver, build_error, event, settings};
    use super::super::{Settings, build};

    #[tokio::test]
    async fn posts_a_firing_alert() {
        let (url, rx) = Receiver::start().await;
        let n = build("alertmanager", settings(&format!("{url}/api/v2/alerts"))).unwrap();
        n.post(&event("info")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/api/v2/alerts");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(seen.header("authorization"), "");
        assert_eq!(
            seen.text(),
            r#"[{"status":"firing","labels":{"alertname":"FluxGitRepositoryReason","kind":"GitRepository","name":"webapp","namespace":"gitops-system","reason":"reason","reportingcontroller":"source-controller","severity":"info","test":"metadata"},"annotations":{"message":"message"},"startsAt":"2022-09-30T06:40:29Z","endsAt":"0001-01-01T00:00:00Z"}]"#
        );

        // A summary moves to the annotations; labels win over metadata; a token is a bearer.
        let s = Settings {
            token: "tok".into(),
            ..settings(&url)
        };
        let n = build("alertmanager", s).unwrap();
        let mut e = event("error");
        e.reason = "ReconciliationSucceeded".into();
        e.metadata.insert("summary".into(), "cluster one".into());
        e.metadata.insert("kind".into(), "spoofed".into());
        n.post(&e).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.header("authorization"), "Bearer tok");
        assert_eq!(
            seen.json(),
            json!([{"status":"firing","labels":{"alertname":"FluxGitRepositoryReconciliationsucceeded","kind":"GitRepository","name":"webapp","namespace":"gitops-system","reason":"ReconciliationSucceeded","reportingcontroller":"source-controller","severity":"error","test":"metadata"},"annotations":{"message":"message","summary":"cluster one"},"startsAt":"2022-09-30T06:40:29Z","endsAt":"0001-01-01T00:00:00Z"}])
        );

        // Username and password: basic auth only, even with a token.
        let s = Settings {
            token: "tok".into(),
            username: "user".into(),
            password: "password".into(),
            ..settings(&url)
        };
        build("alertmanager", s)
            .unwrap()
            .post(&event("info"))
            .await
            .unwrap();
        assert_eq!(
            rx.one().header("authorization"),
            "Basic dXNlcjpwYXNzd29yZA=="
        );
    }

    #[test]
    fn titles_as_go() {
        for (input, want) in [
            ("reason", "Reason"),
            ("ReconciliationSucceeded", "Reconciliationsucceeded"),
            ("health check failed", "Health Check Failed"),
            ("v1BETA-two_x", "V1beta-Two_x"),
            ("it's a.b:c", "It's A.b:c"),
            ("a..b", "A..B"),
            ("", ""),
        ] {
            assert_eq!(super::title(input), want, "{input}");
        }
    }

    #[test]
    fn refuses_a_bad_url() {
        assert_eq!(
            build_error("alertmanager", settings("localhost:9093")),
            "invalid Alertmanager URL localhost:9093: 'parse \"localhost:9093\": invalid URI for request'"
        );
    }
}
