//! `github` (commit statuses) and `githubdispatch` (repository dispatch events) through the
//! GitHub REST API, as Flux's go-github notifiers call it: the newest status with the same
//! context is compared first, and an identical one is not written again.

use reqwest::Method;
use serde_json::json;
use tidegate_api::event::Event;

use super::Settings;
use super::git::{
    commit_sha, get_json, name_and_description, owner_repo, parse_address, state, write,
};

/// The REST API of a GitHub host: `api.github.com` for github.com, else GitHub Enterprise's
/// `<host>/api/v3`.
pub fn api_base(host: &str) -> String {
    if host == "https://github.com" || host == "http://github.com" {
        "https://api.github.com".to_string()
    } else {
        format!("{host}/api/v3")
    }
}

/// go-github's request headers with a token.
pub fn headers(token: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Authorization", format!("Bearer {token}")),
        ("Accept", "application/vnd.github.v3+json".into()),
        ("User-Agent", "go-github/v64.0.0".into()),
        ("X-GitHub-Api-Version", "2022-11-28".into()),
    ]
}

/// A GitHub repository client.
pub struct GitHub {
    s: Settings,
    api: String,
    owner: String,
    repo: String,
    token: String,
}

impl GitHub {
    /// Checks the address and the credentials (`dispatch`: no commit status needed).
    pub fn new(s: Settings, dispatch: bool) -> Result<Self, String> {
        if !dispatch && s.commit_status.is_empty() {
            return Err("commit status cannot be empty".into());
        }
        let token = if s.token.is_empty() {
            s.password.clone()
        } else {
            s.token.clone()
        };
        if token.is_empty() {
            return Err("github token or github app details must be specified".into());
        }
        let (host, id) = parse_address(&s.url)?;
        let Some((owner, repo)) = owner_repo(&id) else {
            return Err(format!("invalid repository id: '{id}'"));
        };
        let api = api_base(&host);
        Ok(GitHub {
            owner: owner.to_string(),
            repo: repo.to_string(),
            api,
            token,
            s,
        })
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        headers(&self.token)
    }

    /// Sets the commit status of the event's commit, unless the newest one with the same
    /// context already says the same.
    pub async fn post_status(&self, event: &Event) -> Result<(), String> {
        if event.reason == "Progressing" {
            return Ok(());
        }
        let sha = commit_sha(event)?;
        let state = state(event, "success", "failure", "github")?;
        let (_, description) = name_and_description(event);
        let base = format!("{}/repos/{}/{}", self.api, self.owner, self.repo);
        let list = format!("{base}/commits/{sha}/statuses?per_page=50");
        let existing = get_json(
            &self.s.http,
            &list,
            &self.headers(),
            "could not list commit statuses",
        )
        .await?;
        let newest = existing
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["state"].is_string() && s["description"].is_string())
            .find(|s| s["context"].as_str() == Some(self.s.commit_status.as_str()));
        if let Some(s) = newest
            && s["state"] == state
            && s["description"] == description.as_str()
        {
            return Ok(());
        }
        let create = format!("{base}/statuses/{sha}");
        let payload =
            json!({"state": state, "description": description, "context": self.s.commit_status});
        let text = format!(
            "{}\n",
            serde_json::to_string(&payload).map_err(|e| e.to_string())?
        );
        let what = Some("could not create commit status");
        write(
            &self.s.http,
            Method::POST,
            &create,
            &self.headers(),
            text,
            what,
            false,
        )
        .await
    }

    /// Sends a `repository_dispatch` event: `event_type` `Kind/name.namespace`, the event as
    /// `client_payload`.
    pub async fn post_dispatch(&self, event: &Event) -> Result<(), String> {
        let o = &event.involved_object;
        let payload = super::marshal(event)?;
        let body = format!(
            "{{\"event_type\":{},\"client_payload\":{payload}}}\n",
            serde_json::to_string(&format!("{}/{}.{}", o.kind, o.name, o.namespace))
                .map_err(|e| e.to_string())?
        );
        let url = format!("{}/repos/{}/{}/dispatches", self.api, self.owner, self.repo);
        let what = Some("could not send github repository dispatch webhook");
        write(
            &self.s.http,
            Method::POST,
            &url,
            &self.headers(),
            body,
            what,
            false,
        )
        .await
    }
}
