//! `generic` and `generic-hmac`: the event itself, as JSON, with a `gotk-component` header,
//! the Secret's headers, and for `generic-hmac` `X-Signature: sha256=<HMAC of the body>`.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tidegate_api::event::Event;

use super::{Post, Settings, marshal, parse_request_uri};

/// The header naming the controller that sent the event.
pub const COMPONENT_HEADER: &str = "gotk-component";

/// A forwarder.
pub struct Forwarder {
    s: Settings,
    hmac: bool,
}

impl Forwarder {
    /// Checks the URL (and, signing, that there is a key).
    pub fn new(s: Settings, hmac: bool) -> Result<Self, String> {
        parse_request_uri(&s.url).map_err(|e| format!("invalid hook URL {}: {e}", s.url))?;
        if hmac && s.token.is_empty() {
            return Err("HMAC key is empty".to_string());
        }
        Ok(Forwarder { s, hmac })
    }

    /// POSTs the event.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let body = marshal(event).map_err(|e| format!("failed marshalling event: {e}"))?;
        let mut post = Post::json(&self.s.http, &self.s.url, body.clone())
            .header(COMPONENT_HEADER, event.reporting_controller.clone());
        for (k, v) in &self.s.headers {
            post = post.header(k, v.clone());
        }
        if self.hmac {
            post = post.header(
                "X-Signature",
                format!("sha256={}", sign(body.as_bytes(), self.s.token.as_bytes())),
            );
        }
        post.deliver().await
    }
}

/// Hex HMAC-SHA256 of `payload` under `key`.
pub fn sign(payload: &[u8], key: &[u8]) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => return String::new(),
    };
    mac.update(payload);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
