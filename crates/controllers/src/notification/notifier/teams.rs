//! `msteams`: a legacy MessageCard for Office 365 connector hooks (`*.webhook.office.com`),
//! otherwise an Adaptive Card 1.4 (Power Automate workflows), laid out as Flux lays it out.

use serde_json::{Value, json};
use tidegate_api::event::{Event, SEVERITY_ERROR};

use super::{Post, Settings, object_title, parse_request_uri};

/// A Teams notifier.
pub struct Teams {
    s: Settings,
    legacy: bool,
}

/// The MessageCard of an Office 365 connector.
pub fn message_card(event: &Event) -> Value {
    let title = object_title(event);
    let facts: Vec<Value> = event
        .metadata
        .iter()
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    json!({
        "@type": "MessageCard",
        "@context": "http://schema.org/extensions",
        "themeColor": if event.severity == SEVERITY_ERROR { "FF0000" } else { "0076D7" },
        "summary": title,
        "sections": [{"activityTitle": event.message, "activitySubtitle": title, "facts": facts}],
    })
}

/// The Adaptive Card: the object in large bold type, the message (in the attention colour for
/// errors), then the facts, `summary` first and the rest sorted by name.
pub fn adaptive_card(event: &Event) -> Value {
    let mut message = json!({"type": "TextBlock", "text": event.message});
    if event.message.is_empty() {
        message = json!({"type": "TextBlock"});
    }
    if event.severity == SEVERITY_ERROR {
        message["color"] = json!("attention");
    }
    message["wrap"] = json!(true);
    let mut facts = Vec::new();
    if let Some(summary) = event.metadata.get("summary") {
        facts.push(json!({"title": "summary", "value": summary}));
    }
    for (k, v) in &event.metadata {
        if k != "summary" {
            facts.push(json!({"title": k, "value": v}));
        }
    }
    let mut fact_set = json!({"type": "FactSet"});
    if !facts.is_empty() {
        fact_set["facts"] = Value::Array(facts);
    }
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "content": {
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "type": "AdaptiveCard",
                "version": "1.4",
                "body": [{
                    "type": "Container",
                    "items": [
                        {"type": "TextBlock", "text": object_title(event), "size": "large", "weight": "bolder", "wrap": true},
                        message,
                        fact_set,
                    ],
                }],
                "msteams": {"width": "Full"},
            },
        }],
    })
}

impl Teams {
    /// Checks the URL and picks the card format from its host.
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url)
            .map_err(|e| format!("invalid MS Teams webhook URL {}: '{e}'", s.url))?;
        let legacy = reqwest::Url::parse(&s.url)
            .ok()
            .and_then(|u| u.host_str().map(|h| h.ends_with(".webhook.office.com")))
            .unwrap_or(false);
        Ok(Teams { s, legacy })
    }

    /// POSTs the card.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let card = if self.legacy {
            message_card(event)
        } else {
            adaptive_card(event)
        };
        Post::json(
            &self.s.http,
            &self.s.url,
            tidegate_core::gojson::marshal(&card),
        )
        .deliver()
        .await
    }
}
