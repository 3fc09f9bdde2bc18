//! `googlechat`: a card headed by the object and the reporting controller, the message in a
//! text paragraph (in red for errors), the metadata as key/value widgets; Go's nil pointers
//! go out as `null`.

use serde_json::{Value, json};
use tidegate_api::event::{Event, SEVERITY_ERROR};

use super::{Post, Settings, object_title, parse_request_uri};

/// A Google Chat notifier.
pub struct GoogleChat {
    s: Settings,
}

/// The card Flux's Google Chat notifier sends.
pub fn payload(event: &Event) -> Value {
    let text = if event.severity == SEVERITY_ERROR {
        format!("<font color=\"#ff0000\">{}</font>", event.message)
    } else {
        event.message.clone()
    };
    let mut sections = vec![json!({
        "header": "",
        "widgets": [{"textParagraph": {"text": text}, "keyValue": null}],
    })];
    if !event.metadata.is_empty() {
        let widgets: Vec<Value> = event
            .metadata
            .iter()
            .map(|(k, v)| {
                json!({
                    "textParagraph": null,
                    "keyValue": {
                        "topLabel": k,
                        "content": v,
                        "contentMultiline": false,
                        "bottomLabel": null,
                        "icon": null,
                    },
                })
            })
            .collect();
        sections.push(json!({"header": "", "widgets": widgets}));
    }
    json!({
        "cards": [{
            "header": {
                "title": object_title(event),
                "subtitle": event.reporting_controller,
                "imageUrl": null,
                "imageStyle": null,
            },
            "sections": sections,
        }],
    })
}

impl GoogleChat {
    /// Checks the URL (Flux's error does not say why).
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url).map_err(|_| format!("invalid Google Chat hook URL {}", s.url))?;
        Ok(GoogleChat { s })
    }

    /// POSTs the card.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let body = tidegate_core::gojson::marshal(&payload(event));
        Post::json(&self.s.http, &self.s.url, body).deliver().await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::build;
    use super::super::receiver::{Receiver, build_error, event, settings};

    #[tokio::test]
    async fn posts_a_card() {
        let (url, rx) = Receiver::start().await;
        let n = build(
            "googlechat",
            settings(&format!("{url}/v1/spaces/x/messages?key=k")),
        )
        .unwrap();
        n.post(&event("info")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/v1/spaces/x/messages?key=k");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(
            seen.json(),
            json!({"cards":[{"header":{"title":"gitrepository/webapp.gitops-system","subtitle":"source-controller","imageUrl":null,"imageStyle":null},"sections":[{"header":"","widgets":[{"textParagraph":{"text":"message"},"keyValue":null}]},{"header":"","widgets":[{"textParagraph":null,"keyValue":{"topLabel":"test","content":"metadata","contentMultiline":false,"bottomLabel":null,"icon":null}}]}]}]})
        );

        // Errors in red (HTML-escaped as Go writes it); no metadata, no second section.
        let mut e = event("error");
        e.metadata.clear();
        n.post(&e).await.unwrap();
        let seen = rx.one();
        assert!(
            seen.text().contains(
                r##"{"text":"\u003cfont color=\"#ff0000\"\u003emessage\u003c/font\u003e"}"##
            ),
            "{}",
            seen.text()
        );
        let sections = &seen.json()["cards"][0]["sections"];
        assert_eq!(sections.as_array().unwrap().len(), 1);
    }

    #[test]
    fn refuses_a_bad_url() {
        assert_eq!(
            build_error("googlechat", settings("not a url")),
            "invalid Google Chat hook URL not a url"
        );
    }
}
