//! Notifiers: one per Provider type, each turning an event into the request Flux's notifier
//! of that type sends. [`build`] checks a Provider's settings as Flux's notifier factory does
//! (same refusals, same messages); [`Notifier::post`] sends one event.

mod alertmanager;
mod azuredevops;
mod bitbucket;
mod client;
mod comment;
mod datadog;
mod discord;
#[cfg(test)]
mod forge_tests;
mod forwarder;
mod git;
mod gitea;
mod github;
pub mod github_app;
mod gitlab;
mod googlechat;
mod gourl;
mod grafana;
mod incidentio;
mod lark;
mod matrix;
mod opsgenie;
mod pagerduty;
#[cfg(test)]
mod receiver;
mod rocket;
mod sentry;
mod slack;
mod teams;
mod telegram;
mod webex;
mod zoom;
mod zulip;

use std::collections::BTreeMap;

use tidegate_api::event::Event;

pub use client::{Answer, Post, chain, redact, status_error};

/// Provider types Flux has that Tidegate does not send to: they need a cloud SDK or a
/// non-HTTP protocol.
pub const UNSUPPORTED: &[&str] = &["googlepubsub", "azureeventhub", "nats", "otel"];

/// Everything a notifier is built from: the Provider's spec and Secrets, resolved.
#[derive(Clone)]
pub struct Settings {
    /// The client to send with (TLS and proxy settings applied).
    pub http: reqwest::Client,
    /// `address` (the Secret's wins over the spec's).
    pub url: String,
    /// `channel`.
    pub channel: String,
    /// `username` (the spec's, else the Secret's).
    pub username: String,
    /// `password` from the Secret.
    pub password: String,
    /// `token` from the Secret.
    pub token: String,
    /// `headers` from the Secret (generic types).
    pub headers: BTreeMap<String, String>,
    /// The commit status context (Git providers).
    pub commit_status: String,
    /// The Provider's UID.
    pub provider_uid: String,
    /// The Provider's name.
    pub provider_name: String,
    /// The Provider's namespace.
    pub provider_namespace: String,
    /// The Secret's data.
    pub secret_data: BTreeMap<String, Vec<u8>>,
    /// The GitHub App's slug when the token is an App installation's (comments are then
    /// written by `<slug>[bot]`).
    pub app_slug: String,
}

impl Default for Settings {
    /// Empty settings with a shared default client (building a client loads the root
    /// certificates, milliseconds that must not be spent per notification).
    fn default() -> Self {
        static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
        let http = CLIENT
            .get_or_init(|| {
                tidegate_source::tls::ensure_provider();
                reqwest::Client::new()
            })
            .clone();
        Settings {
            http,
            url: String::new(),
            channel: String::new(),
            username: String::new(),
            password: String::new(),
            token: String::new(),
            headers: BTreeMap::new(),
            commit_status: String::new(),
            provider_uid: String::new(),
            provider_name: String::new(),
            provider_namespace: String::new(),
            secret_data: BTreeMap::new(),
            app_slug: String::new(),
        }
    }
}

/// A built notifier.
pub enum Notifier {
    /// `generic`, `generic-hmac`.
    Forwarder(forwarder::Forwarder),
    /// `slack`.
    Slack(slack::Slack),
    /// `discord`.
    Discord(discord::Discord),
    /// `msteams`.
    Teams(teams::Teams),
    /// `github` commit statuses.
    GitHub(github::GitHub),
    /// `githubdispatch`.
    GitHubDispatch(github::GitHub),
    /// `gitlab` commit statuses.
    GitLab(gitlab::GitLab),
    /// `gitea` commit statuses.
    Gitea(gitea::Gitea),
    /// `bitbucket` (Cloud) build statuses.
    Bitbucket(bitbucket::Bitbucket),
    /// `bitbucketserver` build statuses.
    BitbucketServer(bitbucket::BitbucketServer),
    /// `azuredevops` commit statuses.
    AzureDevOps(azuredevops::AzureDevOps),
    /// Pull/merge request comments.
    Comments(comment::Comments),
    /// `rocket`.
    Rocket(rocket::Rocket),
    /// `googlechat`.
    GoogleChat(googlechat::GoogleChat),
    /// `webex`.
    Webex(webex::Webex),
    /// `telegram`.
    Telegram(telegram::Telegram),
    /// `lark`.
    Lark(lark::Lark),
    /// `matrix`.
    Matrix(matrix::Matrix),
    /// `zulip`.
    Zulip(zulip::Zulip),
    /// `opsgenie`.
    Opsgenie(opsgenie::Opsgenie),
    /// `alertmanager`.
    Alertmanager(alertmanager::Alertmanager),
    /// `grafana`.
    Grafana(grafana::Grafana),
    /// `pagerduty`.
    PagerDuty(pagerduty::PagerDuty),
    /// `datadog`.
    DataDog(datadog::DataDog),
    /// `zoom`.
    Zoom(zoom::Zoom),
    /// `incident.io`.
    Incidentio(incidentio::Incidentio),
    /// `sentry`.
    Sentry(sentry::Sentry),
}

/// Builds the notifier of `type_` as Flux's factory does.
pub fn build(type_: &str, s: Settings) -> Result<Notifier, String> {
    Ok(match type_ {
        "generic" => Notifier::Forwarder(forwarder::Forwarder::new(s, false)?),
        "generic-hmac" => Notifier::Forwarder(forwarder::Forwarder::new(s, true)?),
        "slack" => Notifier::Slack(slack::Slack::new(s)?),
        "discord" => Notifier::Discord(discord::Discord::new(s)?),
        "msteams" => Notifier::Teams(teams::Teams::new(s)?),
        "github" => Notifier::GitHub(github::GitHub::new(s, false)?),
        "githubdispatch" => Notifier::GitHubDispatch(github::GitHub::new(s, true)?),
        "gitlab" => Notifier::GitLab(gitlab::GitLab::new(s)?),
        "gitea" => Notifier::Gitea(gitea::Gitea::new(s)?),
        "bitbucket" => Notifier::Bitbucket(bitbucket::Bitbucket::new(s)?),
        "bitbucketserver" => Notifier::BitbucketServer(bitbucket::BitbucketServer::new(s)?),
        "azuredevops" => Notifier::AzureDevOps(azuredevops::AzureDevOps::new(s)?),
        "githubpullrequestcomment" => {
            Notifier::Comments(comment::Comments::new(s, comment::Forge::GitHub)?)
        }
        "gitlabmergerequestcomment" => {
            Notifier::Comments(comment::Comments::new(s, comment::Forge::GitLab)?)
        }
        "giteapullrequestcomment" => {
            Notifier::Comments(comment::Comments::new(s, comment::Forge::Gitea)?)
        }
        "rocket" => Notifier::Rocket(rocket::Rocket::new(s)?),
        "googlechat" => Notifier::GoogleChat(googlechat::GoogleChat::new(s)?),
        "webex" => Notifier::Webex(webex::Webex::new(s)?),
        "telegram" => Notifier::Telegram(telegram::Telegram::new(s)?),
        "lark" => Notifier::Lark(lark::Lark::new(s)?),
        "matrix" => Notifier::Matrix(matrix::Matrix::new(s)?),
        "zulip" => Notifier::Zulip(zulip::Zulip::new(s)?),
        "opsgenie" => Notifier::Opsgenie(opsgenie::Opsgenie::new(s)?),
        "alertmanager" => Notifier::Alertmanager(alertmanager::Alertmanager::new(s)?),
        "grafana" => Notifier::Grafana(grafana::Grafana::new(s)?),
        "pagerduty" => Notifier::PagerDuty(pagerduty::PagerDuty::new(s)?),
        "datadog" => Notifier::DataDog(datadog::DataDog::new(s)?),
        "zoom" => Notifier::Zoom(zoom::Zoom::new(s)?),
        "incident.io" => Notifier::Incidentio(incidentio::Incidentio::new(s)?),
        "sentry" => Notifier::Sentry(sentry::Sentry::new(s)?),
        t if UNSUPPORTED.contains(&t) => {
            return Err(format!("provider {t} is not supported by Tidegate"));
        }
        t => return Err(format!("provider {t} not supported")),
    })
}

impl Notifier {
    /// Sends `event`.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        match self {
            Notifier::Forwarder(n) => n.post(event).await,
            Notifier::Slack(n) => n.post(event).await,
            Notifier::Discord(n) => n.post(event).await,
            Notifier::Teams(n) => n.post(event).await,
            Notifier::GitHub(n) => n.post_status(event).await,
            Notifier::GitHubDispatch(n) => n.post_dispatch(event).await,
            Notifier::GitLab(n) => n.post(event).await,
            Notifier::Gitea(n) => n.post(event).await,
            Notifier::Bitbucket(n) => n.post(event).await,
            Notifier::BitbucketServer(n) => n.post(event).await,
            Notifier::AzureDevOps(n) => n.post(event).await,
            Notifier::Comments(n) => n.post(event).await,
            Notifier::Rocket(n) => n.post(event).await,
            Notifier::GoogleChat(n) => n.post(event).await,
            Notifier::Webex(n) => n.post(event).await,
            Notifier::Telegram(n) => n.post(event).await,
            Notifier::Lark(n) => n.post(event).await,
            Notifier::Matrix(n) => n.post(event).await,
            Notifier::Zulip(n) => n.post(event).await,
            Notifier::Opsgenie(n) => n.post(event).await,
            Notifier::Alertmanager(n) => n.post(event).await,
            Notifier::Grafana(n) => n.post(event).await,
            Notifier::PagerDuty(n) => n.post(event).await,
            Notifier::DataDog(n) => n.post(event).await,
            Notifier::Zoom(n) => n.post(event).await,
            Notifier::Incidentio(n) => n.post(event).await,
            Notifier::Sentry(n) => n.post(event).await,
        }
    }
}

/// Go's `url.ParseRequestURI`: an absolute URL or an absolute path; the error as Go words it
/// (`parse "x": invalid URI for request`).
pub fn parse_request_uri(raw: &str) -> Result<(), String> {
    if raw.is_empty() {
        return Err(format!("parse {raw:?}: empty url"));
    }
    if raw.starts_with('/') {
        return Ok(());
    }
    let scheme_end = raw.find(':');
    let valid_scheme = scheme_end.is_some_and(|i| {
        i > 0
            && raw[..i].starts_with(|c: char| c.is_ascii_alphabetic())
            && raw[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    match scheme_end {
        Some(i) if valid_scheme && raw[i + 1..].starts_with('/') => Ok(()),
        Some(0) => Err(format!("parse {raw:?}: missing protocol scheme")),
        _ => Err(format!("parse {raw:?}: invalid URI for request")),
    }
}

/// `kind/name.namespace` with the kind lower-cased: how chat notifiers title an event.
pub fn object_title(event: &Event) -> String {
    let o = &event.involved_object;
    format!("{}/{}.{}", o.kind.to_lowercase(), o.name, o.namespace)
}

/// The event's time as Flux's notifiers read it: the timestamp, or Go's zero time (year 1)
/// when it is empty or unreadable.
pub fn event_time(event: &Event) -> k8s_openapi::jiff::Timestamp {
    event
        .timestamp
        .parse()
        .or_else(|_| k8s_openapi::jiff::Timestamp::from_second(GO_ZERO_TIME))
        .unwrap_or(k8s_openapi::jiff::Timestamp::MIN)
}

/// Unix seconds of Go's zero time, 0001-01-01T00:00:00Z.
const GO_ZERO_TIME: i64 = -62_135_596_800;

/// The event's time in Unix seconds (`Time.Unix()`).
pub fn event_unix(event: &Event) -> i64 {
    event_time(event).as_second()
}

/// The event's time as `time.RFC3339` formats it, in UTC.
pub fn event_rfc3339(event: &Event) -> String {
    event_time(event).strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The value marshalled as Go's `encoding/json` does.
pub fn marshal<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_value(value)
        .map(|v| tidegate_core::gojson::marshal(&v))
        .map_err(|e| format!("marshalling notification payload failed: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn event_times_as_go() {
        let mut e = tidegate_api::event::Event {
            timestamp: "2022-09-30T08:40:29.5+02:00".into(),
            ..Default::default()
        };
        assert_eq!(super::event_unix(&e), 1_664_520_029);
        assert_eq!(super::event_rfc3339(&e), "2022-09-30T06:40:29Z");
        e.timestamp.clear();
        assert_eq!(super::event_unix(&e), -62_135_596_800);
        assert_eq!(super::event_rfc3339(&e), "0001-01-01T00:00:00Z");
    }

    #[test]
    fn request_uris_as_go() {
        assert!(super::parse_request_uri("https://hooks.slack.com/x").is_ok());
        assert!(super::parse_request_uri("/hook").is_ok());
        assert_eq!(
            super::parse_request_uri("foo").unwrap_err(),
            "parse \"foo\": invalid URI for request"
        );
        assert_eq!(
            super::parse_request_uri("").unwrap_err(),
            "parse \"\": empty url"
        );
        assert_eq!(
            super::parse_request_uri("localhost:9090").unwrap_err(),
            "parse \"localhost:9090\": invalid URI for request"
        );
    }
}
