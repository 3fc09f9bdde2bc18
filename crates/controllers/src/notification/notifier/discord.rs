//! `discord`: Slack's message through Discord's Slack-compatible endpoint (`/slack` appended
//! to the webhook path), without channel or fallback.

use tidegate_api::event::Event;

use super::slack::{Payload, attachment};
use super::{Post, Settings, marshal, parse_request_uri};

/// A Discord notifier.
pub struct Discord {
    s: Settings,
}

impl Discord {
    /// Checks the URL and points it at `…/slack`.
    pub fn new(mut s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url)
            .map_err(|e| format!("invalid Discord hook URL {}: '{e}'", s.url))?;
        if !s.url.ends_with("/slack")
            && let Ok(mut u) = reqwest::Url::parse(&s.url)
        {
            let path = format!("{}/slack", u.path().trim_end_matches('/'));
            u.set_path(&path);
            s.url = u.to_string();
        }
        Ok(Discord { s })
    }

    /// POSTs the message.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let payload = Payload {
            channel: String::new(),
            username: if self.s.username.is_empty() {
                event.reporting_controller.clone()
            } else {
                self.s.username.clone()
            },
            icon_url: String::new(),
            icon_emoji: String::new(),
            text: String::new(),
            attachments: vec![attachment(event, false)],
        };
        Post::json(&self.s.http, &self.s.url, marshal(&payload)?)
            .deliver()
            .await
    }
}
