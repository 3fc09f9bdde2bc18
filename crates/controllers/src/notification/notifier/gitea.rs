//! `gitea` commit statuses through Gitea's API (v1), as Flux's notifier writes them
//! (`pending` for Progressing events; an identical newest status is not written again).

use reqwest::Method;
use serde_json::json;
use tidegate_api::event::Event;

use super::Settings;
use super::git::{commit_sha, get_json, name_and_description, owner_repo, parse_address, write};

/// A Gitea repository client.
pub struct Gitea {
    s: Settings,
    api: String,
    owner: String,
    repo: String,
    token: String,
}

impl Gitea {
    /// Checks the credentials, the address and the commit status.
    pub fn new(s: Settings) -> Result<Self, String> {
        if s.commit_status.is_empty() {
            return Err("commit status cannot be empty".into());
        }
        let token = if s.token.is_empty() {
            s.password.clone()
        } else {
            s.token.clone()
        };
        if token.is_empty() {
            return Err("gitea token cannot be empty".into());
        }
        let (host, id) = parse_address(&s.url)?;
        let Some((owner, repo)) = owner_repo(&id) else {
            return Err(format!("invalid repository id \"{id}\""));
        };
        Ok(Gitea {
            api: format!("{host}/api/v1"),
            owner: owner.to_string(),
            repo: repo.to_string(),
            token,
            s,
        })
    }

    /// Sets the commit status unless the newest with the same context says the same.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let sha = commit_sha(event)?;
        let state = if event.reason == "Progressing" {
            "pending"
        } else {
            super::git::state(event, "success", "failure", "gitea")?
        };
        let (_, description) = name_and_description(event);
        let headers = [("Authorization", format!("token {}", self.token))];
        let base = format!("{}/repos/{}/{}", self.api, self.owner, self.repo);
        let list = format!("{base}/commits/{sha}/statuses?limit=50&page=1");
        let existing = get_json(
            &self.s.http,
            &list,
            &headers,
            "could not list commit statuses",
        )
        .await?;
        let newest = existing.as_array().into_iter().flatten().find(|s| {
            s["context"].as_str() == Some(self.s.commit_status.as_str())
                && s["status"].as_str().is_some_and(|v| !v.is_empty())
                && s["description"].as_str().is_some_and(|v| !v.is_empty())
        });
        if let Some(s) = newest
            && s["status"] == state
            && s["description"] == description.as_str()
        {
            return Ok(());
        }
        let create = format!("{base}/statuses/{sha}");
        let payload = json!({"state": state, "target_url": "", "description": description, "context": self.s.commit_status});
        let body = super::marshal(&payload)?;
        write(
            &self.s.http,
            Method::POST,
            &create,
            &headers,
            body,
            None,
            true,
        )
        .await
    }
}
