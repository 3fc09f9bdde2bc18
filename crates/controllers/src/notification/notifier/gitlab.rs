//! `gitlab` commit statuses through the GitLab REST API (v4), as Flux's notifier writes them:
//! a status with the same commit, state, description and name is not written again.

use reqwest::Method;
use serde_json::json;
use tidegate_api::event::Event;

use super::Settings;
use super::git::{commit_sha, get_json, name_and_description, parse_address, state, write};

/// A GitLab project client.
pub struct GitLab {
    s: Settings,
    api: String,
    project: String,
    token: String,
}

/// The project path as one URL segment (`foo/bar` → `foo%2Fbar`, `.` → `%2E`).
pub fn escape_project(id: &str) -> String {
    let mut out = String::new();
    for b in id.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

impl GitLab {
    /// Checks the credentials, the address and the commit status.
    pub fn new(s: Settings) -> Result<Self, String> {
        let token = if s.token.is_empty() {
            s.password.clone()
        } else {
            s.token.clone()
        };
        if token.is_empty() {
            return Err("gitlab token cannot be empty".into());
        }
        let (host, id) = parse_address(&s.url)?;
        if s.commit_status.is_empty() {
            return Err("commit status cannot be empty".into());
        }
        Ok(GitLab {
            api: format!("{host}/api/v4"),
            project: escape_project(&id),
            token,
            s,
        })
    }

    /// Sets the commit status unless an identical one exists.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        if event.reason == "Progressing" {
            return Ok(());
        }
        let sha = commit_sha(event)?;
        let state = state(event, "success", "failed", "gitlab")?;
        let (_, description) = name_and_description(event);
        let headers = [
            ("PRIVATE-TOKEN", self.token.clone()),
            ("Accept", "application/json".to_string()),
            ("User-Agent", "go-gitlab".to_string()),
        ];
        let name: String =
            form_urlencoded::byte_serialize(self.s.commit_status.as_bytes()).collect();
        let list = format!(
            "{}/projects/{}/repository/commits/{sha}/statuses?name={name}",
            self.api, self.project
        );
        let existing = get_json(
            &self.s.http,
            &list,
            &headers,
            "unable to list commit status",
        )
        .await?;
        if existing.as_array().into_iter().flatten().any(|s| {
            s["sha"] == sha.as_str()
                && s["status"] == state
                && s["description"] == description.as_str()
                && s["name"] == self.s.commit_status.as_str()
        }) {
            return Ok(());
        }
        let create = format!("{}/projects/{}/statuses/{sha}", self.api, self.project);
        let payload =
            json!({"state": state, "name": self.s.commit_status, "description": description});
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
