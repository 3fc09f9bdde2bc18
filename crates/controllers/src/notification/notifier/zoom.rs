//! `zoom`: a message to a Zoom Team Chat incoming webhook, in the `full` format unless the
//! address asks for another, headed by the object and the severity, the metadata as fields;
//! the verification token is sent bare in `Authorization`.

use serde::Serialize;
use tidegate_api::event::Event;

use super::{Post, Settings, gourl, marshal, object_title, parse_request_uri};

/// A Zoom notifier.
pub struct Zoom {
    s: Settings,
    url: String,
}

/// Zoom's message.
#[derive(Serialize)]
pub struct Payload {
    pub content: Content,
}

/// The message's content.
#[derive(Serialize)]
pub struct Content {
    pub head: Head,
    pub body: Vec<BodyItem>,
}

/// The head: the object, the severity below it.
#[derive(Serialize)]
pub struct Head {
    pub text: String,
    pub sub_head: SubHead,
}

/// The sub-head.
#[derive(Serialize)]
pub struct SubHead {
    pub text: String,
}

/// A message or a list of fields.
#[derive(Serialize)]
pub struct BodyItem {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Field>,
}

/// One field.
#[derive(Serialize)]
pub struct Field {
    pub key: String,
    pub value: String,
}

/// The message for `event`.
pub fn payload(event: &Event) -> Payload {
    let mut body = vec![BodyItem {
        type_: "message".to_string(),
        text: event.message.clone(),
        items: Vec::new(),
    }];
    if !event.metadata.is_empty() {
        body.push(BodyItem {
            type_: "fields".to_string(),
            text: String::new(),
            items: event
                .metadata
                .iter()
                .map(|(k, v)| Field {
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect(),
        });
    }
    Payload {
        content: Content {
            head: Head {
                text: object_title(event),
                sub_head: SubHead {
                    text: event.severity.clone(),
                },
            },
            body,
        },
    }
}

/// `address` with `format=full` added when it has no (or an empty) `format`, the query then
/// re-encoded as Go encodes it (sorted by key).
pub fn with_format(address: &str) -> String {
    let Ok(mut u) = reqwest::Url::parse(address) else {
        return address.to_string();
    };
    let mut values = gourl::parse_query(u.query().unwrap_or_default());
    if values
        .get("format")
        .and_then(|v| v.first())
        .is_none_or(|f| f.is_empty())
    {
        values.insert("format".to_string(), vec!["full".to_string()]);
        u.set_query(Some(&gourl::encode_values(&values)));
    }
    u.to_string()
}

impl Zoom {
    /// Checks the URL and that there is a verification token.
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url)
            .map_err(|e| format!("invalid Zoom incoming webhook URL {}: '{e}'", s.url))?;
        if s.token.is_empty() {
            return Err("empty Zoom verification token".into());
        }
        let url = with_format(&s.url);
        Ok(Zoom { s, url })
    }

    /// POSTs the message.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let body = marshal(&payload(event))?;
        Post::json(&self.s.http, &self.url, body)
            .header("Authorization", self.s.token.clone())
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
    async fn posts_a_full_format_message() {
        let (url, rx) = Receiver::start().await;
        let s = Settings {
            token: "verification".into(),
            ..settings(&format!("{url}/inbound/abc"))
        };
        let n = build("zoom", s).unwrap();
        n.post(&event("info")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/inbound/abc?format=full");
        assert_eq!(seen.header("authorization"), "verification");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(
            seen.json(),
            json!({"content":{"head":{"text":"gitrepository/webapp.gitops-system","sub_head":{"text":"info"}},"body":[{"type":"message","text":"message"},{"type":"fields","items":[{"key":"test","value":"metadata"}]}]}})
        );

        let mut e = event("error");
        e.metadata.clear();
        e.message.clear();
        n.post(&e).await.unwrap();
        assert_eq!(
            rx.one().json(),
            json!({"content":{"head":{"text":"gitrepository/webapp.gitops-system","sub_head":{"text":"error"}},"body":[{"type":"message"}]}})
        );
    }

    #[test]
    fn keeps_a_format_and_checks_the_factory() {
        assert_eq!(
            super::with_format("https://z.us/inbound/x?format=message&b=1"),
            "https://z.us/inbound/x?format=message&b=1"
        );
        assert_eq!(
            super::with_format("https://z.us/inbound/x?z=a%20b&format="),
            "https://z.us/inbound/x?format=full&z=a+b"
        );
        assert_eq!(
            build_error("zoom", settings("not a url")),
            "invalid Zoom incoming webhook URL not a url: 'parse \"not a url\": invalid URI for request'"
        );
        assert_eq!(
            build_error("zoom", settings("https://z.us/inbound/x")),
            "empty Zoom verification token"
        );
    }
}
