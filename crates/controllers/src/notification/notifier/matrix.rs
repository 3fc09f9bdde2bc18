//! `matrix`: an `m.text` message PUT into the room (the channel) on the homeserver (the
//! address), with the access token as a bearer token; the transaction id is the SHA-1 of the
//! event's JSON, so a repeated event is delivered once.

use serde::Serialize;
use sha1::Digest as _;
use tidegate_api::event::{Event, SEVERITY_ERROR};

use super::{Post, Settings, marshal, object_title, parse_request_uri};

/// A Matrix notifier.
pub struct Matrix {
    s: Settings,
}

/// Matrix's message.
#[derive(Serialize)]
pub struct Payload {
    pub body: String,
    pub msgtype: String,
}

/// The message: `💫` (`🚨` for errors) and the object, the message, a `- key: value` line
/// per metadata entry.
pub fn payload(event: &Event) -> Payload {
    let emoji = if event.severity == SEVERITY_ERROR {
        "🚨"
    } else {
        "💫"
    };
    let mut body = format!("{emoji} {}\n{}\n", object_title(event), event.message);
    for (k, v) in &event.metadata {
        body.push_str(&format!("- {k}: {v}\n"));
    }
    Payload {
        body,
        msgtype: "m.text".to_string(),
    }
}

/// Lower-case hex SHA-1 of the event as Go marshals it.
pub fn transaction_id(event: &Event) -> Result<String, String> {
    let json = serde_json::to_value(event)
        .map(|v| tidegate_core::gojson::marshal(&v))
        .map_err(|e| format!("unable to generate unique tx id: {e}"))?;
    Ok(sha1::Sha1::digest(json.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

impl Matrix {
    /// Checks the homeserver URL.
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url)
            .map_err(|e| format!("invalid Matrix homeserver URL {}: '{e}'", s.url))?;
        Ok(Matrix { s })
    }

    /// PUTs the message.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let url = format!(
            "{}/_matrix/client/r0/rooms/{}/send/m.room.message/{}",
            self.s.url,
            self.s.channel,
            transaction_id(event)?
        );
        let body = marshal(&payload(event))?;
        Post::json(&self.s.http, &url, body)
            .method(reqwest::Method::PUT)
            .header("Authorization", format!("Bearer {}", self.s.token))
            .deliver()
            .await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tidegate_api::event::Event;

    use super::super::receiver::{Receiver, build_error, event, settings};
    use super::super::{Settings, build};

    #[test]
    fn transaction_id_is_the_sha1_of_the_event() {
        let e = Event {
            severity: "info".into(),
            timestamp: "2021-08-24T16:18:00Z".into(),
            message: "update successful".into(),
            reason: "update sucesful".into(),
            ..Default::default()
        };
        assert_eq!(
            super::transaction_id(&e).unwrap(),
            "37d91b4f6a1e44c6a38273b0a0fd408fade7b0f5"
        );
    }

    #[tokio::test]
    async fn puts_a_message_into_the_room() {
        let (url, rx) = Receiver::start().await;
        let s = Settings {
            channel: "!room:example.org".into(),
            token: "access".into(),
            ..settings(&url)
        };
        let n = build("matrix", s).unwrap();
        let e = event("info");
        n.post(&e).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "PUT");
        assert_eq!(
            seen.path,
            format!(
                "/_matrix/client/r0/rooms/!room:example.org/send/m.room.message/{}",
                super::transaction_id(&e).unwrap()
            )
        );
        assert_eq!(seen.header("authorization"), "Bearer access");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(
            seen.json(),
            json!({"body":"💫 gitrepository/webapp.gitops-system\nmessage\n- test: metadata\n","msgtype":"m.text"})
        );

        let e = event("error");
        n.post(&e).await.unwrap();
        let seen = rx.one();
        assert!(seen.path.ends_with(&super::transaction_id(&e).unwrap()));
        assert_ne!(
            super::transaction_id(&e),
            super::transaction_id(&event("info"))
        );
        assert_eq!(
            seen.json()["body"],
            "🚨 gitrepository/webapp.gitops-system\nmessage\n- test: metadata\n"
        );
    }

    #[test]
    fn refuses_a_bad_url() {
        assert_eq!(
            build_error("matrix", settings("not a url")),
            "invalid Matrix homeserver URL not a url: 'parse \"not a url\": invalid URI for request'"
        );
    }
}
