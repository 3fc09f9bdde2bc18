//! `zulip`: a stream message posted as a form to `/api/v1/messages` on the address's server,
//! to the stream and topic of the channel (`stream/topic`), with basic auth (the bot's e-mail
//! and API key as username and password); the content is Flux's Markdown status post. Errors
//! are returned unwrapped.

use std::collections::BTreeMap;

use tidegate_api::event::{Event, META_CHANGE_REQUEST, SEVERITY_ERROR};

use super::{Post, Settings, gourl};

/// The form's content type.
const FORM: &str = "application/x-www-form-urlencoded";

/// A Zulip notifier.
pub struct Zulip {
    s: Settings,
    endpoint: String,
    stream: String,
    topic: String,
}

/// Flux's Markdown status post (`formatMarkdownPost`): a heading, `⚠️` for errors (`ℹ️`
/// otherwise) with `Kind/namespace/name`, the message, and the metadata sorted by key,
/// without `change_request`.
pub fn markdown_post(event: &Event) -> String {
    let emoji = if event.severity == SEVERITY_ERROR {
        "⚠️"
    } else {
        "ℹ️"
    };
    let o = &event.involved_object;
    let mut lines = String::new();
    for (k, v) in event
        .metadata
        .iter()
        .filter(|(k, _)| *k != META_CHANGE_REQUEST)
    {
        lines.push_str(&format!("* `{k}`: {v}\n"));
    }
    format!(
        "## Flux Status\n\n{emoji} {}/{}/{}\n\n{}\n\nMetadata:\n{lines}",
        o.kind, o.namespace, o.name, event.message
    )
}

/// The form for `event`: `content`, `to`, `topic` and `type`, encoded as Go encodes it.
pub fn form(event: &Event, stream: &str, topic: &str) -> String {
    let values = BTreeMap::from([
        ("content".to_string(), vec![markdown_post(event)]),
        ("to".to_string(), vec![stream.to_string()]),
        ("topic".to_string(), vec![topic.to_string()]),
        ("type".to_string(), vec!["stream".to_string()]),
    ]);
    gourl::encode_values(&values)
}

impl Zulip {
    /// Parses the address (leniently, as Go's `url.Parse`), points it at the messages API
    /// and splits the channel into stream and topic.
    pub fn new(s: Settings) -> Result<Self, String> {
        let endpoint = match gourl::parse(&s.url)
            .map_err(|e| format!("invalid Zulip endpoint URL: {e}"))?
        {
            Some(mut u) => {
                u.set_path("/api/v1/messages");
                u.to_string()
            }
            // No scheme nor host: Go keeps the query after the new path.
            None => match s.url.split_once('?') {
                Some((_, q)) => format!("/api/v1/messages?{}", q.split('#').next().unwrap_or("")),
                None => "/api/v1/messages".to_string(),
            },
        };
        let (stream, topic) = match s.channel.split_once('/') {
            Some((c, t)) if !c.is_empty() && !t.is_empty() => (c.to_string(), t.to_string()),
            _ => {
                return Err(format!(
                    "invalid Zulip channel format, expected <channel>/<topic>, got '{}'",
                    s.channel
                ));
            }
        };
        Ok(Zulip {
            s,
            endpoint,
            stream,
            topic,
        })
    }

    /// POSTs the form.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let mut post = Post::json(&self.s.http, &self.endpoint, String::new());
        post.body = form(event, &self.stream, &self.topic).into_bytes();
        post.content_type = Some(FORM);
        post.basic = Some((self.s.username.as_str(), self.s.password.as_str()));
        post.send().await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use tidegate_api::event::{Event, ObjectReference};

    use super::super::receiver::{Receiver, build_error, settings};
    use super::super::{Settings, build};

    fn event(severity: &str) -> Event {
        Event {
            involved_object: ObjectReference {
                kind: "Kustomization".into(),
                namespace: "default".into(),
                name: "test-ks".into(),
                ..Default::default()
            },
            severity: severity.into(),
            message: "Test event message".into(),
            metadata: BTreeMap::from([
                ("key2".into(), "value2".into()),
                ("key1".into(), "value1".into()),
                ("change_request".into(), "42".into()),
            ]),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn posts_a_form_with_basic_auth() {
        let (url, rx) = Receiver::start().await;
        let s = Settings {
            channel: "general/announcements".into(),
            username: "user".into(),
            password: "pass".into(),
            ..settings(&format!("{url}/some/path?x=1"))
        };
        let n = build("zulip", s).unwrap();
        n.post(&event("info")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/api/v1/messages?x=1");
        assert_eq!(
            seen.header("content-type"),
            "application/x-www-form-urlencoded"
        );
        assert_eq!(seen.header("authorization"), "Basic dXNlcjpwYXNz");
        let content = "## Flux Status\n\nℹ️ Kustomization/default/test-ks\n\nTest event message\n\nMetadata:\n* `key1`: value1\n* `key2`: value2\n";
        let form: Vec<(String, String)> = form_urlencoded::parse(&seen.body).into_owned().collect();
        assert_eq!(
            form,
            [
                ("content".to_string(), content.to_string()),
                ("to".into(), "general".into()),
                ("topic".into(), "announcements".into()),
                ("type".into(), "stream".into()),
            ]
        );
        // Go's escaping: `*` and backticks escaped, spaces as `+`.
        assert!(seen.text().starts_with(
            "content=%23%23+Flux+Status%0A%0A%E2%84%B9%EF%B8%8F+Kustomization%2Fdefault%2Ftest-ks"
        ));
        assert!(seen.text().contains("%2A+%60key1%60%3A+value1"));

        n.post(&event("error")).await.unwrap();
        let body = rx.one().text();
        assert!(
            body.starts_with("content=%23%23+Flux+Status%0A%0A%E2%9A%A0%EF%B8%8F+"),
            "{body}"
        );

        // Not wrapped in `postMessage failed`.
        rx.answer(401, "no");
        assert_eq!(
            n.post(&event("info")).await.unwrap_err(),
            "request failed: request failed with status code 401: no"
        );
    }

    #[test]
    fn checks_endpoint_and_channel() {
        let s = |url: &str, channel: &str| Settings {
            channel: channel.into(),
            ..settings(url)
        };
        assert_eq!(
            build_error("zulip", s("\x7f", "a/b")),
            "invalid Zulip endpoint URL: parse \"\\x7f\": net/url: invalid control character in URL"
        );
        for channel in ["", "general", "/topic", "general/"] {
            assert_eq!(
                build_error("zulip", s("https://zulip.example.com", channel)),
                format!(
                    "invalid Zulip channel format, expected <channel>/<topic>, got '{channel}'"
                )
            );
        }
        let z = super::Zulip::new(s("https://bot:key@zulip.example.com/x/y", "a/b/c")).unwrap();
        assert_eq!(
            z.endpoint,
            "https://bot:key@zulip.example.com/api/v1/messages"
        );
        assert_eq!((z.stream.as_str(), z.topic.as_str()), ("a", "b/c"));
    }
}
