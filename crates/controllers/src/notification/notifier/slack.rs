//! `slack`: an attachment titled `kind/name.namespace`, `good` or `danger`, the metadata as
//! fields; a token is sent as a bearer token, and the `chat.postMessage` API's answer must say
//! `ok`.

use serde::Serialize;
use tidegate_api::event::{Event, SEVERITY_ERROR};

use super::{Post, Settings, marshal, object_title, parse_request_uri};

/// The Slack API endpoint whose answers are checked.
const POST_MESSAGE_API: &str = "https://slack.com/api/chat.postMessage";

/// A Slack notifier.
pub struct Slack {
    s: Settings,
}

/// Slack's (and Discord's Slack-compatible) message.
#[derive(Serialize)]
pub struct Payload {
    pub channel: String,
    pub username: String,
    pub icon_url: String,
    pub icon_emoji: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

/// One attachment.
#[derive(Serialize)]
pub struct Attachment {
    pub fallback: String,
    pub color: String,
    pub author_name: String,
    pub text: String,
    pub mrkdwn_in: Vec<String>,
    pub fields: Vec<Field>,
}

/// One field.
#[derive(Serialize)]
pub struct Field {
    pub title: String,
    pub value: String,
    pub short: bool,
}

/// The attachment for `event`: colour by severity, metadata as fields (sorted by key; Go's
/// map order is random, so any order is Flux's).
pub fn attachment(event: &Event, fallback: bool) -> Attachment {
    let author = object_title(event);
    let first_line = event.message.split('\n').next().unwrap_or_default();
    Attachment {
        fallback: if fallback {
            format!("{author}: {first_line}")
        } else {
            String::new()
        },
        color: if event.severity == SEVERITY_ERROR {
            "danger"
        } else {
            "good"
        }
        .to_string(),
        author_name: author,
        text: event.message.clone(),
        mrkdwn_in: vec!["text".to_string()],
        fields: event
            .metadata
            .iter()
            .map(|(k, v)| Field {
                title: k.clone(),
                value: v.clone(),
                short: false,
            })
            .collect(),
    }
}

/// The message Flux's Slack notifier sends.
pub fn payload(event: &Event, username: &str, channel: &str) -> Payload {
    Payload {
        channel: channel.to_string(),
        username: if username.is_empty() {
            event.reporting_controller.clone()
        } else {
            username.to_string()
        },
        icon_url: String::new(),
        icon_emoji: String::new(),
        text: String::new(),
        attachments: vec![attachment(event, true)],
    }
}

impl Slack {
    /// Checks the URL.
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url)
            .map_err(|e| format!("invalid Slack hook URL {}: '{e}'", s.url))?;
        Ok(Slack { s })
    }

    /// POSTs the message.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let body = marshal(&payload(event, &self.s.username, &self.s.channel))?;
        let mut post = Post::json(&self.s.http, &self.s.url, body);
        if !self.s.token.is_empty() {
            post = post.header("Authorization", format!("Bearer {}", self.s.token));
        }
        if self.s.url != POST_MESSAGE_API {
            return post.deliver().await;
        }
        let answer = post
            .send_raw()
            .await
            .map_err(|e| format!("postMessage failed: {e}"))?;
        #[derive(serde::Deserialize)]
        struct Reply {
            #[serde(default)]
            ok: bool,
            #[serde(default)]
            error: String,
        }
        let reply: Reply = serde_json::from_slice(&answer.body).map_err(|e| {
            format!("postMessage failed: request failed: unable to unmarshal response body: {e}")
        })?;
        if reply.ok {
            Ok(())
        } else {
            Err(format!(
                "postMessage failed: request failed: Slack responded with error: {}",
                reply.error
            ))
        }
    }
}
