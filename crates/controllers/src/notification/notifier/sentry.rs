//! `sentry`: events to a Sentry project named by its DSN (the Provider's address), as Flux's
//! notifier hands them to sentry-go: error events as Sentry events (level, server name = the
//! reporting controller, transaction `Kind: namespace/name`, the metadata as the `metadata`
//! context, the message), info events as transactions with one `event` span tagged with the
//! object and the metadata. Sent as sentry-go's HTTP transport sends them: one envelope POSTed
//! to `<scheme>://<host>[:port][/path]/api/<project>/envelope/` with `X-Sentry-Auth`. Like
//! sentry-go's `CaptureEvent`, sending never fails the notification; a failure is logged.
//!
//! What sentry-go adds from the Go runtime (the device, os and runtime contexts, the module
//! list, its integration names) is not invented here.

use serde_json::{Map, Value, json};
use tidegate_api::event::Event;

use super::Settings;

/// The sentry-go release Flux's notification-controller is built with.
const SDK_VERSION: &str = "0.46.2";

/// A parsed DSN (sentry-go's `protocol.NewDsn`).
#[derive(Debug, Clone, PartialEq)]
pub struct Dsn {
    scheme: String,
    public_key: String,
    secret_key: String,
    host: String,
    port: u16,
    path: String,
    project: String,
}

impl Dsn {
    /// Parses `raw`, with sentry-go's errors.
    pub fn parse(raw: &str) -> Result<Dsn, String> {
        let url = url::Url::parse(raw)
            .map_err(|e| format!("[Sentry] DsnParseError: invalid url: {e}"))?;
        let scheme = match url.scheme() {
            s @ ("http" | "https") => s.to_string(),
            _ => return Err("[Sentry] DsnParseError: invalid scheme".into()),
        };
        let public_key = url.username().to_string();
        if public_key.is_empty() {
            return Err("[Sentry] DsnParseError: empty username".into());
        }
        let host = url.host_str().unwrap_or_default().to_string();
        if host.is_empty() {
            return Err("[Sentry] DsnParseError: empty host".into());
        }
        let port = url
            .port()
            .unwrap_or(if scheme == "https" { 443 } else { 80 });
        let full = url.path();
        if full.is_empty() || full == "/" {
            return Err("[Sentry] DsnParseError: empty project id".into());
        }
        let segments: Vec<&str> = full[1..].split('/').collect();
        let project = segments.last().copied().unwrap_or_default().to_string();
        if project.is_empty() {
            return Err("[Sentry] DsnParseError: empty project id".into());
        }
        let path = if segments.len() > 1 {
            format!("/{}", segments[..segments.len() - 1].join("/"))
        } else {
            String::new()
        };
        Ok(Dsn {
            secret_key: url.password().unwrap_or_default().to_string(),
            scheme,
            public_key,
            host,
            port,
            path,
            project,
        })
    }

    fn default_port(&self) -> u16 {
        if self.scheme == "https" { 443 } else { 80 }
    }

    fn host_port(&self) -> String {
        if self.port == self.default_port() {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// Where envelopes go.
    pub fn envelope_url(&self) -> String {
        format!(
            "{}://{}{}/api/{}/envelope/",
            self.scheme,
            self.host_port(),
            self.path,
            self.project
        )
    }

    /// The DSN written back (`Dsn.String`).
    fn to_dsn_string(&self) -> String {
        let secret = if self.secret_key.is_empty() {
            String::new()
        } else {
            format!(":{}", self.secret_key)
        };
        format!(
            "{}://{}{secret}@{}{}/{}",
            self.scheme,
            self.public_key,
            self.host_port(),
            self.path,
            self.project
        )
    }

    /// `X-Sentry-Auth`.
    fn auth(&self) -> String {
        let mut auth = format!(
            "Sentry sentry_version=7, sentry_client=sentry.go/{SDK_VERSION}, sentry_key={}",
            self.public_key
        );
        if !self.secret_key.is_empty() {
            auth.push_str(&format!(", sentry_secret={}", self.secret_key));
        }
        auth
    }
}

/// A Sentry notifier.
pub struct Sentry {
    s: Settings,
    dsn: Dsn,
}

fn random_hex(bytes: usize) -> String {
    (0..bytes)
        .map(|_| format!("{:02x}", rand::random::<u8>()))
        .collect()
}

/// A version 4 UUID as sentry-go writes event ids: 32 hex digits.
fn event_id() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Go's `time.Time` JSON (RFC 3339 with nanoseconds trimmed).
fn go_time(event: &Event) -> String {
    let t = super::event_time(event);
    let s = t.strftime("%Y-%m-%dT%H:%M:%S%.f").to_string();
    format!("{}Z", s.trim_end_matches('0').trim_end_matches('.'))
}

/// `Kind: namespace/name`.
fn summary(event: &Event) -> String {
    let o = &event.involved_object;
    format!("{}: {}/{}", o.kind, o.namespace, o.name)
}

impl Sentry {
    /// Checks the DSN.
    pub fn new(s: Settings) -> Result<Self, String> {
        if s.url.is_empty() {
            return Err("DSN cannot be empty".into());
        }
        let dsn = Dsn::parse(&s.url)?;
        Ok(Sentry { s, dsn })
    }

    /// The Sentry event Flux builds for `event`, with what sentry-go's client adds (id,
    /// platform, SDK, environment = the Provider's channel).
    pub fn sentry_event(&self, event: &Event) -> Value {
        let mut e = Map::new();
        let o = &event.involved_object;
        let at = go_time(event);
        if event.severity == "error" {
            let metadata: Map<String, Value> = event
                .metadata
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.clone())))
                .collect();
            e.insert("contexts".into(), json!({"metadata": metadata}));
        } else {
            let mut tags = Map::new();
            for (k, v) in [
                ("flux_involved_object_kind", &o.kind),
                ("flux_involved_object_namespace", &o.namespace),
                ("flux_involved_object_name", &o.name),
                ("flux_reporting_controller", &event.reporting_controller),
                ("flux_reporting_instance", &event.reporting_instance),
                ("flux_reason", &event.reason),
            ] {
                tags.insert(k.into(), Value::from(v.clone()));
            }
            for (k, v) in &event.metadata {
                tags.insert(k.clone(), Value::from(v.clone()));
            }
            let (trace_id, span_id) = (random_hex(16), random_hex(8));
            e.insert(
                "contexts".into(),
                json!({"trace": {"trace_id": trace_id, "span_id": span_id, "op": "event"}}),
            );
            e.insert(
                "spans".into(),
                json!([{
                "trace_id": trace_id, "span_id": span_id, "op": "event", "tags": tags,
                "start_timestamp": at, "timestamp": at, "origin": "manual"}]),
            );
            e.insert("tags".into(), Value::Object(tags));
            e.insert("type".into(), "transaction".into());
            e.insert("start_timestamp".into(), at.clone().into());
        }
        if !self.s.channel.is_empty() {
            e.insert("environment".into(), self.s.channel.clone().into());
        }
        e.insert("event_id".into(), event_id().into());
        let level = if event.severity == "error" {
            "error".to_string()
        } else {
            // Transactions carry no level of Flux's; the client defaults it to info.
            "info".to_string()
        };
        e.insert("level".into(), level.into());
        if !event.message.is_empty() {
            e.insert("message".into(), event.message.clone().into());
        }
        e.insert("platform".into(), "go".into());
        e.insert(
            "sdk".into(),
            json!({"name": "sentry.go", "version": SDK_VERSION,
                   "packages": [{"name": "sentry-go", "version": SDK_VERSION}]}),
        );
        let server = if event.severity == "error" {
            event.reporting_controller.clone()
        } else {
            String::new()
        };
        let server = if server.is_empty() {
            hostname()
        } else {
            server
        };
        if !server.is_empty() {
            e.insert("server_name".into(), server.into());
        }
        e.insert("timestamp".into(), at.into());
        e.insert("transaction".into(), summary(event).into());
        Value::Object(e)
    }

    /// The envelope: its header, the item header and the event, one JSON document a line.
    pub fn envelope(&self, event: &Value) -> Result<String, String> {
        let body = tidegate_core::gojson::marshal(event);
        let item_type = if event["type"] == "transaction" {
            "transaction"
        } else {
            "event"
        };
        let sent_at = k8s_openapi::jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%S%.fZ")
            .to_string();
        let header = json!({
            "event_id": event["event_id"],
            "sent_at": sent_at,
            "dsn": self.dsn.to_dsn_string(),
            "sdk": {"name": "sentry.go", "version": SDK_VERSION},
        });
        let item = json!({"type": item_type, "length": body.len()});
        Ok(format!(
            "{}\n{}\n{body}\n",
            tidegate_core::gojson::marshal(&header),
            tidegate_core::gojson::marshal(&item)
        ))
    }

    /// Sends the event; a failure is logged, not returned (sentry-go captures in the
    /// background and Flux's notifier always succeeds).
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let e = self.sentry_event(event);
        let envelope = self.envelope(&e)?;
        let sent = self
            .s
            .http
            .post(self.dsn.envelope_url())
            .header("User-Agent", format!("sentry.go/{SDK_VERSION}"))
            .header("Content-Type", "application/x-sentry-envelope")
            .header("X-Sentry-Auth", self.dsn.auth())
            .body(envelope)
            .send()
            .await;
        match sent {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => tracing::warn!(status = r.status().as_u16(), "sentry refused the event"),
            Err(e) => tracing::warn!(error = %super::chain(&e), "sending to sentry failed"),
        }
        Ok(())
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::build;
    use super::super::receiver::{Receiver, event, settings};
    use super::*;

    /// The envelope's three lines: header, item header, event.
    fn lines(body: &[u8]) -> (Value, Value, Value, usize) {
        let text = std::str::from_utf8(body).unwrap();
        let l: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
        assert_eq!(l.len(), 3, "{text}");
        (
            serde_json::from_str(l[0]).unwrap(),
            serde_json::from_str(l[1]).unwrap(),
            serde_json::from_str(l[2]).unwrap(),
            l[2].len(),
        )
    }

    #[tokio::test]
    async fn errors_as_events_and_infos_as_transactions() {
        let (url, rx) = Receiver::start().await;
        let port = url.rsplit(':').next().unwrap();
        let dsn = format!("http://public@127.0.0.1:{port}/sub/7");
        let s = Settings {
            channel: "production".into(),
            ..settings(&dsn)
        };
        let n = build("sentry", s).unwrap();
        let mut e = event("error");
        e.reporting_controller = "source-controller".into();
        n.post(&e).await.unwrap();
        let seen = rx.one();
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.path, "/sub/api/7/envelope/");
        assert_eq!(seen.header("content-type"), "application/x-sentry-envelope");
        assert_eq!(
            seen.header("x-sentry-auth"),
            "Sentry sentry_version=7, sentry_client=sentry.go/0.46.2, sentry_key=public"
        );
        let (header, item, ev, len) = lines(&seen.body);
        assert_eq!(item, json!({"type": "event", "length": len}));
        assert_eq!(header["event_id"], ev["event_id"]);
        assert_eq!(header["dsn"], dsn);
        assert_eq!(ev["event_id"].as_str().unwrap().len(), 32);
        assert_eq!(ev["level"], "error");
        assert_eq!(ev["server_name"], "source-controller");
        assert_eq!(ev["transaction"], "GitRepository: gitops-system/webapp");
        assert_eq!(ev["contexts"], json!({"metadata": {"test": "metadata"}}));
        assert_eq!(ev["message"], "message");
        assert_eq!(ev["environment"], "production");
        assert_eq!(ev["platform"], "go");
        assert!(ev.get("type").is_none());

        n.post(&event("info")).await.unwrap();
        let (_, item, ev, len) = lines(&rx.one().body);
        assert_eq!(item, json!({"type": "transaction", "length": len}));
        assert_eq!(ev["type"], "transaction");
        assert_eq!(ev["level"], "info");
        assert_eq!(ev["transaction"], "GitRepository: gitops-system/webapp");
        assert_eq!(ev["tags"]["flux_involved_object_kind"], "GitRepository");
        assert_eq!(ev["tags"]["flux_involved_object_name"], "webapp");
        assert_eq!(ev["tags"]["test"], "metadata");
        assert_eq!(ev["start_timestamp"], ev["timestamp"]);
        let span = &ev["spans"][0];
        assert_eq!(span["op"], "event");
        assert_eq!(span["trace_id"], ev["contexts"]["trace"]["trace_id"]);
        assert_eq!(span["tags"], ev["tags"]);

        // A refusal is logged, never a failed notification (sentry-go captures in the
        // background).
        rx.answer(500, "no");
        assert_eq!(n.post(&event("error")).await, Ok(()));
        assert_eq!(rx.take().len(), 1);
        assert_eq!(
            build("sentry", settings("")).err().unwrap(),
            "DSN cannot be empty"
        );
    }

    #[test]
    fn dsns_as_sentry_go_reads_them() {
        let d = Dsn::parse("https://key:secret@o1.ingest.sentry.io:8443/base/42").unwrap();
        assert_eq!(
            d.envelope_url(),
            "https://o1.ingest.sentry.io:8443/base/api/42/envelope/"
        );
        assert_eq!(
            d.to_dsn_string(),
            "https://key:secret@o1.ingest.sentry.io:8443/base/42"
        );
        assert_eq!(
            d.auth(),
            "Sentry sentry_version=7, sentry_client=sentry.go/0.46.2, sentry_key=key, sentry_secret=secret"
        );
        let d = Dsn::parse("http://key@localhost/1").unwrap();
        assert_eq!(d.envelope_url(), "http://localhost/api/1/envelope/");
        for (raw, err) in [
            ("ftp://key@host/1", "invalid scheme"),
            ("https://host/1", "empty username"),
            ("https://key@host", "empty project id"),
            ("https://key@host/", "empty project id"),
            ("https://key@host/a/", "empty project id"),
        ] {
            assert_eq!(
                Dsn::parse(raw).unwrap_err(),
                format!("[Sentry] DsnParseError: {err}"),
                "{raw}"
            );
        }
    }
}
