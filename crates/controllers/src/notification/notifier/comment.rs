//! Pull/merge request comments: `githubpullrequestcomment`, `gitlabmergerequestcomment` and
//! `giteapullrequestcomment`, as Flux's notifiers write them. One comment per Provider and
//! object, found again by a hidden marker
//! (`<!-- flux-pr-comment-key:<provider UID>/<Kind>/<namespace>/<name> -->`) among the
//! comments of the authenticated user, updated in place; the text is Flux's Markdown status.

use reqwest::Method;
use serde_json::Value;
use tidegate_api::event::Event;

use super::Settings;
use super::git::{get_json, owner_repo, parse_address, write};

/// Which forge.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Forge {
    /// GitHub pull requests.
    GitHub,
    /// GitLab merge requests.
    GitLab,
    /// Gitea pull requests.
    Gitea,
}

/// A change-request commenter.
pub struct Comments {
    s: Settings,
    forge: Forge,
    api: String,
    /// `owner/repo`, or GitLab's escaped project path.
    repo: String,
    headers: Vec<(&'static str, String)>,
}

impl Comments {
    /// Checks the Provider UID, the token and the address as Flux's factories do.
    pub fn new(s: Settings, forge: Forge) -> Result<Self, String> {
        if s.provider_uid.is_empty() {
            return Err("provider UID cannot be empty".into());
        }
        let token = if s.token.is_empty() {
            s.password.clone()
        } else {
            s.token.clone()
        };
        let (host, id) = parse_address(&s.url)?;
        let (api, repo, headers) = match forge {
            Forge::GitHub => {
                if token.is_empty() {
                    return Err("github token or github app details must be specified".into());
                }
                let Some((o, r)) = owner_repo(&id) else {
                    return Err(format!("invalid repository id: '{id}'"));
                };
                (
                    super::github::api_base(&host),
                    format!("{o}/{r}"),
                    super::github::headers(&token),
                )
            }
            Forge::GitLab => {
                if token.is_empty() {
                    return Err("gitlab token cannot be empty".into());
                }
                let headers = vec![
                    ("PRIVATE-TOKEN", token),
                    ("Accept", "application/json".to_string()),
                    ("User-Agent", "go-gitlab".to_string()),
                ];
                (
                    format!("{host}/api/v4"),
                    super::gitlab::escape_project(&id),
                    headers,
                )
            }
            Forge::Gitea => {
                if token.is_empty() {
                    return Err("gitea token cannot be empty".into());
                }
                let Some((o, r)) = owner_repo(&id) else {
                    return Err(format!("invalid repository id \"{id}\""));
                };
                (
                    format!("{host}/api/v1"),
                    format!("{o}/{r}"),
                    vec![("Authorization", format!("token {token}"))],
                )
            }
        };
        Ok(Comments {
            s,
            forge,
            api,
            repo,
            headers,
        })
    }

    /// The hidden marker and the comment text for `event`.
    pub fn body(&self, event: &Event) -> (String, String) {
        let o = &event.involved_object;
        let prefix = if self.forge == Forge::GitLab {
            "flux-mr-comment-key"
        } else {
            "flux-pr-comment-key"
        };
        let marker = format!(
            "<!-- {prefix}:{}/{}/{}/{} -->",
            self.s.provider_uid, o.kind, o.namespace, o.name
        );
        let text = format!("{marker}\n\n{}", super::zulip::markdown_post(event));
        (marker, text)
    }

    /// Creates or updates the comment for the event's change request.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        let Some(number) = event.metadata.get("change_request") else {
            return Err("missing \"change_request\" metadata key".into());
        };
        let number: i64 = number.parse().map_err(|_| {
            let func = if self.forge == Forge::GitLab {
                "strconv.ParseInt"
            } else {
                "strconv.Atoi"
            };
            format!(
                "invalid \"change_request\" metadata value \"{number}\": {func}: parsing \"{number}\": invalid syntax"
            )
        })?;
        let me = if self.forge == Forge::GitHub && !self.s.app_slug.is_empty() {
            // A GitHub App's comments are written by its bot user.
            format!("{}[bot]", self.s.app_slug)
        } else {
            let user_url = format!("{}/user", self.api);
            let what = "failed to get authenticated user info";
            let user = get_json(&self.s.http, &user_url, &self.headers, what).await?;
            match self.forge {
                Forge::GitLab => user["username"].as_str(),
                _ => user["login"].as_str(),
            }
            .unwrap_or_default()
            .to_string()
        };
        let (marker, text) = self.body(event);
        let (list, author, noun) = match self.forge {
            Forge::GitHub => (
                format!(
                    "{}/repos/{}/issues/{number}/comments?direction=asc&per_page=100&sort=created",
                    self.api, self.repo
                ),
                "/user/login",
                "pull request comment",
            ),
            Forge::Gitea => (
                format!(
                    "{}/repos/{}/issues/{number}/comments?limit=100&page=1",
                    self.api, self.repo
                ),
                "/user/login",
                "pull request comment",
            ),
            Forge::GitLab => (
                format!(
                    "{}/projects/{}/merge_requests/{number}/notes?order_by=created_at&per_page=100&sort=asc",
                    self.api, self.repo
                ),
                "/author/username",
                "merge request note",
            ),
        };
        let what = format!("failed to list {noun}s");
        let listed = get_json(&self.s.http, &list, &self.headers, &what).await?;
        let existing = listed.as_array().and_then(|items| {
            items.iter().find(|c| {
                c.pointer(author).and_then(Value::as_str) == Some(me.as_str())
                    && c["body"].as_str().is_some_and(|b| b.contains(&marker))
            })
        });
        let payload = serde_json::json!({"body": text});
        // go-github writes JSON without HTML escaping; the GitLab and Gitea clients escape.
        let body = if self.forge == Forge::GitHub {
            format!("{payload}\n")
        } else {
            super::marshal(&payload)?
        };
        let (method, url, verb) = match (existing.and_then(|c| c["id"].as_i64()), self.forge) {
            (Some(id), Forge::GitLab) => (
                Method::PUT,
                format!(
                    "{}/projects/{}/merge_requests/{number}/notes/{id}",
                    self.api, self.repo
                ),
                "update",
            ),
            (Some(id), _) => (
                Method::PATCH,
                format!("{}/repos/{}/issues/comments/{id}", self.api, self.repo),
                "update",
            ),
            (None, Forge::GitLab) => (
                Method::POST,
                format!(
                    "{}/projects/{}/merge_requests/{number}/notes",
                    self.api, self.repo
                ),
                "create",
            ),
            (None, _) => (
                Method::POST,
                format!("{}/repos/{}/issues/{number}/comments", self.api, self.repo),
                "create",
            ),
        };
        let what = format!("failed to {verb} {noun}");
        write(
            &self.s.http,
            method,
            &url,
            &self.headers,
            body,
            Some(&what),
            true,
        )
        .await
    }
}
