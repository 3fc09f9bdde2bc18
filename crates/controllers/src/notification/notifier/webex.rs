//! `webex`: a Markdown message to a room (the channel) through the messages API, with the
//! token as a bearer token (sent even when empty, as Flux sends it).

use serde::Serialize;
use tidegate_api::event::{Event, SEVERITY_ERROR};

use super::{Post, Settings, marshal, object_title, parse_request_uri};

/// A Webex notifier.
pub struct Webex {
    s: Settings,
}

/// Webex's message.
#[derive(Serialize)]
pub struct Payload {
    #[serde(rename = "roomId", skip_serializing_if = "String::is_empty")]
    pub room_id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub markdown: String,
}

/// The Markdown: `✅` (`💣` for errors) and the object in bold, the message, then a quoted
/// `**key**: value` line per metadata entry.
pub fn markdown(event: &Event) -> String {
    let emoji = if event.severity == SEVERITY_ERROR {
        "💣"
    } else {
        "✅"
    };
    let mut md = format!("{emoji} **{}**\n{}\n", object_title(event), event.message);
    for (k, v) in &event.metadata {
        md.push_str(&format!(">**{k}**: {v}\n"));
    }
    md
}

impl Webex {
    /// Checks the URL.
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url)
            .map_err(|e| format!("invalid Webex hook URL {}: '{e}'", s.url))?;
        Ok(Webex { s })
    }

    /// POSTs the message.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let body = marshal(&Payload {
            room_id: self.s.channel.clone(),
            markdown: markdown(event),
        })?;
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
    async fn posts_markdown_to_the_room() {
        let (url, rx) = Receiver::start().await;
        let s = Settings {
            channel: "room".into(),
            token: "bot-token".into(),
            ..settings(&format!("{url}/v1/messages"))
        };
        let n = build("webex", s).unwrap();
        n.post(&event("info")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/v1/messages");
        assert_eq!(seen.header("authorization"), "Bearer bot-token");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(
            seen.text(),
            "{\"roomId\":\"room\",\"markdown\":\"✅ **gitrepository/webapp.gitops-system**\\nmessage\\n\\u003e**test**: metadata\\n\"}"
        );

        // Errors get the bomb; no room, no roomId; an empty token still goes as `Bearer`.
        let n = build("webex", settings(&url)).unwrap();
        n.post(&event("error")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.header("authorization"), "Bearer");
        assert_eq!(
            seen.json(),
            json!({"markdown":"💣 **gitrepository/webapp.gitops-system**\nmessage\n>**test**: metadata\n"})
        );
    }

    #[test]
    fn refuses_a_bad_url() {
        assert_eq!(
            build_error("webex", settings("not a url")),
            "invalid Webex hook URL not a url: 'parse \"not a url\": invalid URI for request'"
        );
    }
}
