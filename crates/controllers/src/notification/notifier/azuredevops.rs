//! `azuredevops` commit statuses through the Azure DevOps Git API (6.0), as Flux's notifier
//! writes them: genre `fluxcd` (or `fluxcd:<summary>`), the first status with the same name
//! and genre compared, `error` for failures.

use base64::Engine as _;
use reqwest::Method;
use serde_json::json;
use tidegate_api::event::Event;

use super::Settings;
use super::git::{commit_sha, get_json, name_and_description, parse_address, state, write};

/// An Azure DevOps repository client.
pub struct AzureDevOps {
    s: Settings,
    statuses: String,
    auth: String,
}

impl AzureDevOps {
    /// Checks the token, the address (`…/<org>/<project>/_git/<repo>`) and the commit status.
    pub fn new(s: Settings) -> Result<Self, String> {
        if s.token.is_empty() {
            return Err("azure devops token cannot be empty (workload identity is not supported by Tidegate)".into());
        }
        let (host, id) = parse_address(&s.url)?;
        if s.commit_status.is_empty() {
            return Err("commit status cannot be empty".into());
        }
        let parts: Vec<&str> = id.split('/').collect();
        if parts.len() != 4 {
            return Err(format!("invalid repository id \"{id}\""));
        }
        let org = format!("{host}/{}", parts[0]).to_lowercase();
        let statuses = format!(
            "{org}/{}/_apis/git/repositories/{}/commits",
            parts[1], parts[3]
        );
        let auth = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!(":{}", s.token))
        );
        Ok(AzureDevOps { s, statuses, auth })
    }

    /// Sets the commit status unless the first with the same name and genre says the same.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        if event.reason == "Progressing" {
            return Ok(());
        }
        let sha = commit_sha(event)?;
        let state = state(event, "succeeded", "error", "azure devops")?;
        let (_, description) = name_and_description(event);
        let genre = match event.metadata.get("summary") {
            Some(s) => format!("fluxcd:{s}"),
            None => "fluxcd".to_string(),
        };
        let url = format!("{}/{sha}/statuses?api-version=6.0", self.statuses);
        let headers = [
            ("Authorization", self.auth.clone()),
            ("Accept", "application/json;api-version=6.0".to_string()),
            ("X-TFS-FedAuthRedirect", "Suppress".to_string()),
        ];
        let listed = get_json(
            &self.s.http,
            &url,
            &headers,
            "could not list commit statuses",
        )
        .await?;
        let first = listed["value"].as_array().and_then(|items| {
            items.iter().find(|s| {
                s["context"]["name"] == self.s.commit_status.as_str()
                    && s["context"]["genre"] == genre.as_str()
            })
        });
        if let Some(s) = first
            && s["state"] == state
            && s["description"] == description.as_str()
        {
            return Ok(());
        }
        let payload = json!({"context": {"genre": genre, "name": self.s.commit_status}, "description": description, "state": state});
        let body = super::marshal(&payload)?;
        let what = Some("could not create commit status");
        write(&self.s.http, Method::POST, &url, &headers, body, what, true).await
    }
}
