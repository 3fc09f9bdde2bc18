//! `telegram`: a MarkdownV2 message through the Bot API's `sendMessage`, to the chat (and
//! optional forum thread, `chat:thread`) of the channel; errors are returned unwrapped.

use serde::Serialize;
use tidegate_api::event::{Event, SEVERITY_ERROR};

use super::{Post, Settings, marshal};

/// The Bot API.
const API: &str = "https://api.telegram.org";

/// A Telegram notifier.
pub struct Telegram {
    s: Settings,
    url: String,
}

/// Telegram's `sendMessage` request.
#[derive(Serialize)]
pub struct Payload {
    pub chat_id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message_thread_id: String,
    pub text: String,
    pub parse_mode: String,
}

/// `s` with a backslash before each character MarkdownV2 reserves.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.-_[]()~>`#+=|{}!*".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The request for `event` to `channel` (`chat` or `chat:thread`).
pub fn payload(event: &Event, channel: &str) -> Payload {
    let emoji = if event.severity == SEVERITY_ERROR {
        "🚨"
    } else {
        "💫"
    };
    let o = &event.involved_object;
    let heading = format!(
        "{emoji} {}/{}/{}",
        o.kind.to_lowercase(),
        o.name,
        o.namespace
    );
    let mut text = format!("*{}*\n{}\n", escape(&heading), escape(&event.message));
    for (k, v) in &event.metadata {
        text.push_str(&format!("\\- *{}*: {}\n", escape(k), escape(v)));
    }
    let (chat, thread) = channel.split_once(':').unwrap_or((channel, ""));
    Payload {
        chat_id: chat.to_string(),
        message_thread_id: thread.to_string(),
        text,
        parse_mode: "MarkdownV2".to_string(),
    }
}

impl Telegram {
    /// Checks the channel and token (the address is not used).
    pub fn new(s: Settings) -> Result<Self, String> {
        Self::with_api(s, API)
    }

    /// As [`Telegram::new`], the Bot API at `api` (tests point it at a local server).
    pub(crate) fn with_api(s: Settings, api: &str) -> Result<Self, String> {
        if s.channel.is_empty() {
            return Err("empty Telegram channel".into());
        }
        if s.token.is_empty() {
            return Err("empty Telegram token".into());
        }
        let url = format!("{api}/bot{}/sendMessage", s.token);
        Ok(Telegram { s, url })
    }

    /// POSTs the message.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let url = reqwest::Url::parse(&self.url)
            .map_err(|e| format!("failed to construct API URL: {e}"))?;
        let body = marshal(&payload(event, &self.s.channel))?;
        Post::json(&self.s.http, url.as_str(), body)
            .send()
            .await
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::receiver::{Receiver, build_error, event, settings};
    use super::super::{Notifier, Settings};
    use super::Telegram;

    #[tokio::test]
    async fn sends_markdown_v2() {
        let (url, rx) = Receiver::start().await;
        let s = Settings {
            channel: "channel".into(),
            token: "123:ABC".into(),
            ..settings("ignored")
        };
        let n = Notifier::Telegram(Telegram::with_api(s, &url).unwrap());
        let mut e = event("info");
        e.metadata
            .insert("kubernetes.io/somekey".into(), "some.value".into());
        n.post(&e).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/bot123:ABC/sendMessage");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(
            seen.json(),
            json!({
                "chat_id": "channel",
                "text": "*💫 gitrepository/webapp/gitops\\-system*\nmessage\n\\- *kubernetes\\.io/somekey*: some\\.value\n\\- *test*: metadata\n",
                "parse_mode": "MarkdownV2",
            })
        );

        // A thread after the colon; errors get the siren.
        let s = Settings {
            channel: "channel:thread".into(),
            token: "t".into(),
            ..settings("")
        };
        let n = Notifier::Telegram(Telegram::with_api(s, &url).unwrap());
        n.post(&event("error")).await.unwrap();
        let body = rx.one().json();
        assert_eq!(body["chat_id"], "channel");
        assert_eq!(body["message_thread_id"], "thread");
        assert_eq!(
            body["text"],
            "*🚨 gitrepository/webapp/gitops\\-system*\nmessage\n\\- *test*: metadata\n"
        );

        // Not wrapped in `postMessage failed`.
        rx.answer(403, "forbidden");
        assert_eq!(
            n.post(&event("info")).await.unwrap_err(),
            "request failed: request failed with status code 403: forbidden"
        );
    }

    #[test]
    fn escapes_reserved_characters() {
        assert_eq!(
            super::escape("a_b*[c](d)~`>#+-=|{}.!\\ /:"),
            "a\\_b\\*\\[c\\]\\(d\\)\\~\\`\\>\\#\\+\\-\\=\\|\\{\\}\\.\\!\\\\ /:"
        );
    }

    #[test]
    fn needs_channel_and_token() {
        let s = |channel: &str, token: &str| Settings {
            channel: channel.into(),
            token: token.into(),
            ..settings("")
        };
        assert_eq!(
            build_error("telegram", s("", "t")),
            "empty Telegram channel"
        );
        assert_eq!(build_error("telegram", s("c", "")), "empty Telegram token");
        assert!(super::super::build("telegram", s("c", "t")).is_ok());
        assert_eq!(
            Telegram::new(s("c", "t")).unwrap().url,
            "https://api.telegram.org/bott/sendMessage"
        );
    }
}
