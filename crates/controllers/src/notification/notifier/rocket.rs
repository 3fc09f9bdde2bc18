//! `rocket`: Slack's message to a Rocket.Chat incoming webhook: the Provider's channel and
//! username as given (no falling back to the controller's name), no fallback text, the colour
//! `#FF0000` for errors and `#0076D7` otherwise.

use tidegate_api::event::{Event, SEVERITY_ERROR};

use super::slack::{Payload, attachment};
use super::{Post, Settings, marshal, parse_request_uri};

/// A Rocket.Chat notifier.
pub struct Rocket {
    s: Settings,
}

/// The message Flux's Rocket notifier sends.
pub fn payload(event: &Event, username: &str, channel: &str) -> Payload {
    let mut a = attachment(event, false);
    a.color = if event.severity == SEVERITY_ERROR {
        "#FF0000"
    } else {
        "#0076D7"
    }
    .to_string();
    Payload {
        channel: channel.to_string(),
        username: username.to_string(),
        icon_url: String::new(),
        icon_emoji: String::new(),
        text: String::new(),
        attachments: vec![a],
    }
}

impl Rocket {
    /// Checks the URL.
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url)
            .map_err(|e| format!("invalid Rocket hook URL {}: '{e}'", s.url))?;
        Ok(Rocket { s })
    }

    /// POSTs the message.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let body = marshal(&payload(event, &self.s.username, &self.s.channel))?;
        Post::json(&self.s.http, &self.s.url, body).deliver().await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::receiver::{Receiver, build_error, event, settings};
    use super::super::{Settings, build};

    #[tokio::test]
    async fn posts_a_slack_attachment() {
        let (url, rx) = Receiver::start().await;
        let n = build(
            "rocket",
            Settings {
                username: "test".into(),
                channel: "test".into(),
                ..settings(&format!("{url}/hooks/abc"))
            },
        )
        .unwrap();
        n.post(&event("info")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/hooks/abc");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(seen.header("authorization"), "");
        assert_eq!(
            seen.json(),
            json!({"channel":"test","username":"test","icon_url":"","icon_emoji":"","attachments":[{"fallback":"","color":"#0076D7","author_name":"gitrepository/webapp.gitops-system","text":"message","mrkdwn_in":["text"],"fields":[{"title":"test","value":"metadata","short":false}]}]})
        );

        // Errors in red; no username stays empty.
        let n = build("rocket", settings(&url)).unwrap();
        n.post(&event("error")).await.unwrap();
        let body = rx.one().json();
        assert_eq!(body["attachments"][0]["color"], "#FF0000");
        assert_eq!(body["username"], "");
        assert_eq!(body["channel"], "");

        rx.answer(400, "nope");
        assert_eq!(
            n.post(&event("info")).await.unwrap_err(),
            "postMessage failed: request failed: request failed with status code 400: nope"
        );
    }

    #[test]
    fn refuses_a_bad_url() {
        assert_eq!(
            build_error("rocket", settings("not a url")),
            "invalid Rocket hook URL not a url: 'parse \"not a url\": invalid URI for request'"
        );
    }
}
