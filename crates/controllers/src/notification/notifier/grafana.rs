//! `grafana`: an annotation posted to the annotations endpoint (the address), at the event's
//! time, tagged `flux`, with the controller, the metadata (`:` turned into `|`) and the object.
//! A token goes as a bearer token, else a username and password as basic auth.

use base64::Engine as _;
use serde::Serialize;
use tidegate_api::event::Event;

use super::{Post, Settings, event_unix, marshal, object_title, parse_request_uri};

/// A Grafana notifier.
pub struct Grafana {
    s: Settings,
}

/// Grafana's (Graphite-style) annotation.
#[derive(Serialize)]
pub struct Annotation {
    /// Unix seconds.
    pub when: i64,
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// The annotation for `event`.
pub fn annotation(event: &Event) -> Annotation {
    let o = &event.involved_object;
    let mut tags = vec!["flux".to_string(), event.reporting_controller.clone()];
    for (k, v) in &event.metadata {
        tags.push(format!("{}: {}", k.replace(':', "|"), v.replace(':', "|")));
    }
    tags.push(format!("kind: {}", o.kind));
    tags.push(format!("name: {}", o.name));
    tags.push(format!("namespace: {}", o.namespace));
    Annotation {
        when: event_unix(event),
        text: object_title(event),
        tags,
    }
}

impl Grafana {
    /// Checks the URL (Flux's error does not say why).
    pub fn new(s: Settings) -> Result<Self, String> {
        parse_request_uri(&s.url).map_err(|_| format!("invalid Grafana URL {}", s.url))?;
        Ok(Grafana { s })
    }

    /// POSTs the annotation.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let body = marshal(&annotation(event))?;
        let mut post = Post::json(&self.s.http, &self.s.url, body);
        if !self.s.token.is_empty() {
            post = post.header("Authorization", format!("Bearer {}", self.s.token));
        } else if !self.s.username.is_empty() && !self.s.password.is_empty() {
            let pair = format!("{}:{}", self.s.username, self.s.password);
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            post = post.header("Authorization", format!("Basic {basic}"));
        }
        post.deliver().await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::receiver::{Receiver, build_error, event, settings};
    use super::super::{Settings, build};

    #[tokio::test]
    async fn posts_an_annotation() {
        let (url, rx) = Receiver::start().await;
        let s = Settings {
            token: "glsa".into(),
            username: "admin".into(),
            password: "admin".into(),
            ..settings(&format!("{url}/api/annotations/graphite"))
        };
        let n = build("grafana", s).unwrap();
        n.post(&event("info")).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/api/annotations/graphite");
        assert_eq!(seen.header("authorization"), "Bearer glsa");
        assert_eq!(seen.header("content-type"), "application/json");
        assert_eq!(
            seen.text(),
            r#"{"when":1664520029,"text":"gitrepository/webapp.gitops-system","tags":["flux","source-controller","test: metadata","kind: GitRepository","name: webapp","namespace: gitops-system"]}"#
        );

        // Colons in metadata become pipes; without a token, basic auth.
        let s = Settings {
            username: "admin".into(),
            password: "secret".into(),
            ..settings(&url)
        };
        let n = build("grafana", s).unwrap();
        let mut e = event("error");
        e.metadata.insert("a:b".into(), "sha1:abc".into());
        n.post(&e).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.header("authorization"), "Basic YWRtaW46c2VjcmV0");
        assert_eq!(
            seen.json()["tags"],
            json!([
                "flux",
                "source-controller",
                "a|b: sha1|abc",
                "test: metadata",
                "kind: GitRepository",
                "name: webapp",
                "namespace: gitops-system"
            ])
        );

        // A username alone: no auth.
        let s = Settings {
            username: "admin".into(),
            ..settings(&url)
        };
        build("grafana", s).unwrap().post(&e).await.unwrap();
        assert_eq!(rx.one().header("authorization"), "");
    }

    #[test]
    fn refuses_a_bad_url() {
        assert_eq!(
            build_error("grafana", settings("not a url")),
            "invalid Grafana URL not a url"
        );
    }
}
