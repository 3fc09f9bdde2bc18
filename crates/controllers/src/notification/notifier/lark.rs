//! `lark`: an interactive card, titled with `💫` (`🚨` for errors) and the object, coloured
//! `turquoise` (`red`), the message in bold and a `key: value` line per metadata entry. Flux
//! sends it without proxy or TLS settings and returns errors unwrapped.

use serde_json::{Value, json};
use tidegate_api::event::{Event, SEVERITY_ERROR};

use super::{Post, Settings, object_title, parse_request_uri};

/// A Lark notifier.
pub struct Lark {
    s: Settings,
}

/// The card Flux's Lark notifier sends.
pub fn payload(event: &Event) -> Value {
    let (emoji, color) = if event.severity == SEVERITY_ERROR {
        ("🚨", "red")
    } else {
        ("💫", "turquoise")
    };
    let mut content = format!("**{}**\n\n", event.message);
    for (k, v) in &event.metadata {
        content.push_str(&format!("{k}: {v}\n"));
    }
    json!({
        "msg_type": "interactive",
        "card": {
            "config": {"wide_screen_mode": true},
            "header": {
                "title": {"tag": "plain_text", "content": format!("{emoji} {}", object_title(event))},
                "template": color,
            },
            "elements": [{"tag": "div", "text": {"tag": "lark_md", "content": content}}],
        },
    })
}

impl Lark {
    /// Checks the URL (with the error text Flux copied from its Slack notifier).
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url).map_err(|_| format!("invalid Slack hook URL {}", s.url))?;
        Ok(Lark { s })
    }

    /// POSTs the card.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let body = tidegate_core::gojson::marshal(&payload(event));
        Post::json(&self.s.http, &self.s.url, body)
            .send()
            .await
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::build;
    use super::super::receiver::{Receiver, build_error, event, settings};

    #[tokio::test]
    async fn posts_an_interactive_card() {
        let (url, rx) = Receiver::start().await;
        let n = build("lark", settings(&format!("{url}/open-apis/bot/v2/hook/x"))).unwrap();
        n.post(&event("info")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/open-apis/bot/v2/hook/x");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(
            seen.json(),
            json!({"msg_type":"interactive","card":{"config":{"wide_screen_mode":true},"header":{"title":{"tag":"plain_text","content":"💫 gitrepository/webapp.gitops-system"},"template":"turquoise"},"elements":[{"tag":"div","text":{"tag":"lark_md","content":"**message**\n\ntest: metadata\n"}}]}})
        );

        n.post(&event("error")).await.unwrap();
        let header = rx.one().json()["card"]["header"].clone();
        assert_eq!(
            header,
            json!({"title":{"tag":"plain_text","content":"🚨 gitrepository/webapp.gitops-system"},"template":"red"})
        );

        rx.answer(404, "gone");
        assert_eq!(
            n.post(&event("info")).await.unwrap_err(),
            "request failed: request failed with status code 404: gone"
        );
    }

    #[test]
    fn refuses_a_bad_url() {
        assert_eq!(
            build_error("lark", settings("not a url")),
            "invalid Slack hook URL not a url"
        );
    }
}
