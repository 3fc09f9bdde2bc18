//! `bitbucket` (Cloud) and `bitbucketserver` (Server / Data Center) build statuses, as Flux's
//! notifiers write them: keyed by the SHA-1 of the commit status name, not written again when
//! the existing one says the same.

use base64::Engine as _;
use reqwest::Method;
use serde_json::json;
use tidegate_api::event::Event;

use super::Settings;
use super::git::{
    call, commit_sha, name_and_description, owner_repo, parse_address, sha1_hex, state,
};

/// Bitbucket Cloud's API, unless `BITBUCKET_API_BASE_URL` says otherwise (as the Go client).
fn cloud_api() -> String {
    std::env::var("BITBUCKET_API_BASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "https://api.bitbucket.org/2.0".to_string())
}

/// A Bitbucket Cloud repository client.
pub struct Bitbucket {
    s: Settings,
    owner: String,
    repo: String,
    auth: String,
}

impl Bitbucket {
    /// Checks the `user:password` token, the commit status and the address.
    pub fn new(s: Settings) -> Result<Self, String> {
        if s.token.is_empty() {
            return Err("bitbucket token cannot be empty".into());
        }
        if s.commit_status.is_empty() {
            return Err("commit status cannot be empty".into());
        }
        let parts: Vec<&str> = s.token.split(':').collect();
        if parts.len() != 2 {
            return Err("invalid token format, expected to be <user>:<password>".into());
        }
        let (_, id) = parse_address(&s.url)?;
        let Some((owner, repo)) = owner_repo(&id) else {
            return Err(format!("invalid repository id \"{id}\""));
        };
        Ok(Bitbucket {
            owner: owner.to_string(),
            repo: repo.to_string(),
            auth: format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(&s.token)
            ),
            s,
        })
    }

    /// Sets the build status unless the existing one has the same state and description.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        if event.reason == "Progressing" {
            return Ok(());
        }
        let sha = commit_sha(event)?;
        let state = state(event, "SUCCESSFUL", "FAILED", "bitbucket")?;
        let (name, description) = name_and_description(event);
        let key = sha1_hex(&self.s.commit_status);
        let headers = [("Authorization", self.auth.clone())];
        let base = format!(
            "{}/repositories/{}/{}/commit/{sha}/statuses/build",
            cloud_api(),
            self.owner,
            self.repo
        );
        let (code, body) = call(
            &self.s.http,
            Method::GET,
            &format!("{base}/{key}"),
            &headers,
            None,
        )
        .await
        .map_err(|e| format!("could not get commit status: {e}"))?;
        match code {
            200..=299 => {
                let existing: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                if existing["state"] == state && existing["description"] == description.as_str() {
                    return Ok(());
                }
            }
            404 => {}
            _ => {
                return Err(format!(
                    "could not get commit status: {}",
                    status_text(code)
                ));
            }
        }
        let payload = json!({"key": key, "url": "https://bitbucket.org", "state": state, "name": name, "description": description});
        let (code, _) = call(
            &self.s.http,
            Method::POST,
            &base,
            &headers,
            Some(super::marshal(&payload)?),
        )
        .await?;
        match code {
            200 | 201 | 202 | 204 => Ok(()),
            _ => Err(status_text(code)),
        }
    }
}

/// `401 Unauthorized`: an HTTP status line's code and text.
fn status_text(code: u16) -> String {
    let reason = reqwest::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    format!("{code} {reason}")
}

/// A Bitbucket Server repository client.
pub struct BitbucketServer {
    s: Settings,
    commits: String,
    auth: String,
}

impl BitbucketServer {
    /// Checks the clone URL (`…/scm/<project>/<repo>.git`), the commit status and the
    /// credentials.
    pub fn new(s: Settings) -> Result<Self, String> {
        let fail = |why: String| format!("could not parse git address: {why}");
        let u = reqwest::Url::parse(&s.url).map_err(|e| fail(e.to_string()))?;
        if !matches!(u.scheme(), "http" | "https") {
            return Err(fail(format!(
                "unsupported scheme type in address: {}. Must be http or https",
                u.scheme()
            )));
        }
        let path = u.path();
        let Some(at) = path.rfind("/scm/") else {
            return Err(fail(
                "supplied provider address is not http(s) git clone url".into(),
            ));
        };
        let id = &path[at + 5..];
        let id = id.strip_suffix(".git").unwrap_or(id);
        let Some((project, repo)) = owner_repo(id) else {
            return Err(fail(format!("invalid repository id \"{id}\"")));
        };
        let host = match u.port() {
            Some(p) => format!("{}:{p}", u.host_str().unwrap_or_default()),
            None => u.host_str().unwrap_or_default().to_string(),
        };
        let commits = format!(
            "{}://{host}{}/rest/api/latest/projects/{project}/repos/{repo}/commits",
            u.scheme(),
            &path[..at]
        );
        if s.commit_status.is_empty() {
            return Err("commit status cannot be empty".into());
        }
        let auth = if !s.token.is_empty() {
            format!("Bearer {}", s.token)
        } else if !s.username.is_empty() && !s.password.is_empty() {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD
                    .encode(format!("{}:{}", s.username, s.password))
            )
        } else {
            return Err(
                "invalid credentials, expected to be one of username/password or API Token".into(),
            );
        };
        Ok(BitbucketServer { s, commits, auth })
    }

    /// Sets the build status unless the existing one is the same.
    pub async fn post(&self, event: &Event) -> Result<(), String> {
        if event.reason == "Progressing" {
            return Ok(());
        }
        let revision = event
            .revision()
            .ok_or_else(|| "missing revision metadata".to_string())?;
        let sha = super::git::parse_revision(revision)
            .map_err(|e| format!("could not parse revision: {e}"))?;
        let state = match event.severity.as_str() {
            "info" => "SUCCESSFUL",
            "error" => "FAILED",
            _ => return Err("couldn't convert to bitbucket server state: bitbucket server state generated on info or error events only".into()),
        };
        let (name, description) = name_and_description(event);
        let name = format!("{name} [{description}]");
        let key = sha1_hex(&self.s.commit_status);
        let url = format!("{}/{sha}/builds", self.commits);
        let headers = [
            ("Authorization", self.auth.clone()),
            ("X-Atlassian-Token", "no-check".to_string()),
            ("X-Requested-With", "XMLHttpRequest".to_string()),
        ];
        let dup = "could not get existing commit status: failed api call to check duplicate commit status";
        let (code, body) = call(
            &self.s.http,
            Method::GET,
            &format!("{url}?key={key}"),
            &headers,
            None,
        )
        .await
        .map_err(|e| format!("{dup}: {e}"))?;
        if code >= 400 && code != 404 {
            return Err(format!("{dup}: {}", status_dash(code)));
        }
        if code == 200 {
            let existing: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
                format!("could not get existing commit status: could not unmarshal json response body for duplicate commit status: {e}")
            })?;
            if existing["key"] == key.as_str()
                && existing["state"] == state
                && existing["description"] == description.as_str()
                && existing["name"] == name.as_str()
            {
                return Ok(());
            }
        }
        let payload = json!({"description": description, "key": key, "name": name, "state": state, "url": self.s.url});
        let (code, _) = call(
            &self.s.http,
            Method::POST,
            &url,
            &headers,
            Some(format!("{}\n", super::marshal(&payload)?)),
        )
        .await
        .map_err(|e| format!("could not post build status: {e}"))?;
        if code > 399 {
            return Err(format!(
                "could not post build status: could not post build commit status: {}",
                status_dash(code)
            ));
        }
        Ok(())
    }
}

/// `400 - Bad Request`.
fn status_dash(code: u16) -> String {
    let reason = reqwest::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    format!("{code} - {reason}")
}
