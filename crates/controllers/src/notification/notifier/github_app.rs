//! GitHub App authentication for the GitHub providers (`github`, `githubdispatch`,
//! `githubpullrequestcomment`), as fluxcd/pkg's `githubapp` does it: when the Secret has no
//! token but `githubAppID`, a short RS256 JWT signed with `githubAppPrivateKey` is exchanged
//! for an installation token (`githubAppInstallationID`, or the installation found for
//! `githubAppInstallationOwner` as an organization, then as a user) at `githubAppBaseURL`
//! (default `https://api.github.com/`). Tokens are kept until a minute before they expire.

use std::collections::{BTreeMap, HashMap};
use std::sync::{LazyLock, Mutex};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::git::{call, get_json};

/// The Secret keys (fluxcd/pkg's names).
pub const KEY_APP_ID: &str = "githubAppID";
const KEY_INSTALLATION_OWNER: &str = "githubAppInstallationOwner";
const KEY_INSTALLATION_ID: &str = "githubAppInstallationID";
const KEY_PRIVATE_KEY: &str = "githubAppPrivateKey";
const KEY_BASE_URL: &str = "githubAppBaseURL";

/// An installation token and, when asked for, the App's slug (its comments are written by
/// `<slug>[bot]`).
#[derive(Debug, Clone)]
pub struct AppToken {
    /// The installation token.
    pub token: String,
    /// The App's slug (empty unless asked for).
    pub slug: String,
    expires_at: Timestamp,
}

static TOKENS: LazyLock<Mutex<HashMap<String, AppToken>>> = LazyLock::new(Default::default);

/// The App's settings read from the Secret, checked as fluxcd/pkg checks them.
struct App {
    id: i64,
    installation_owner: String,
    installation_id: i64,
    private_key: Vec<u8>,
    api: String,
}

/// Go's `strconv.ParseInt` with the error ignored, as fluxcd/pkg reads the numbers.
fn number(data: &BTreeMap<String, Vec<u8>>, key: &str) -> i64 {
    data.get(key)
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn text(data: &BTreeMap<String, Vec<u8>>, key: &str) -> String {
    data.get(key)
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .unwrap_or_default()
}

impl App {
    fn from_secret(data: &BTreeMap<String, Vec<u8>>) -> Result<App, String> {
        let app = App {
            id: number(data, KEY_APP_ID),
            installation_owner: text(data, KEY_INSTALLATION_OWNER),
            installation_id: number(data, KEY_INSTALLATION_ID),
            private_key: data.get(KEY_PRIVATE_KEY).cloned().unwrap_or_default(),
            api: match text(data, KEY_BASE_URL) {
                u if u.is_empty() => "https://api.github.com/".into(),
                u if u.ends_with('/') => u,
                u => format!("{u}/"),
            },
        };
        if app.id == 0 {
            return Err("app ID must be provided to use github app authentication".into());
        }
        if app.installation_owner.is_empty() && app.installation_id == 0 {
            return Err(
                "app installation owner or ID must be provided to use github app authentication"
                    .into(),
            );
        }
        if !app.installation_owner.is_empty() && app.installation_id != 0 {
            return Err("only one of app installation owner or ID must be provided to use github app authentication".into());
        }
        if app.private_key.is_empty() {
            return Err("private key must be provided to use github app authentication".into());
        }
        Ok(app)
    }

    /// The JWT that authenticates as the App: issued 30 seconds ago (clock drift), valid two
    /// minutes, signed RS256.
    fn jwt(&self) -> Result<String, String> {
        let key = EncodingKey::from_rsa_pem(&self.private_key)
            .map_err(|e| format!("could not parse private key: {e}"))?;
        let iat = Timestamp::now().as_second() - 30;
        let claims = serde_json::json!({"iss": self.id.to_string(), "exp": iat + 120, "iat": iat});
        jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, &key)
            .map_err(|e| e.to_string())
    }

    fn cache_key(&self, slug: bool) -> String {
        let raw = format!(
            "{KEY_APP_ID}={},{KEY_INSTALLATION_OWNER}={},{KEY_INSTALLATION_ID}={},{KEY_BASE_URL}={},{KEY_PRIVATE_KEY}={},reflectSlug={slug}",
            self.id,
            self.installation_owner,
            self.installation_id,
            self.api,
            String::from_utf8_lossy(&self.private_key)
        );
        format!("{:x}", Sha256::digest(raw.as_bytes()))
    }

    /// The installation's id: given, else the organization's installation, else the user's.
    async fn installation_id(
        &self,
        http: &reqwest::Client,
        headers: &[(&str, String)],
    ) -> Result<i64, String> {
        if self.installation_id != 0 {
            return Ok(self.installation_id);
        }
        let owner = &self.installation_owner;
        let org = get_json(
            http,
            &format!("{}orgs/{owner}/installation", self.api),
            headers,
            "failed to find organization installation",
        )
        .await;
        let org_error = match org {
            Ok(v) => return Ok(v["id"].as_i64().unwrap_or_default()),
            Err(e) => e,
        };
        match get_json(
            http,
            &format!("{}users/{owner}/installation", self.api),
            headers,
            "failed to find user installation",
        )
        .await
        {
            Ok(v) => Ok(v["id"].as_i64().unwrap_or_default()),
            Err(user_error) => Err(format!("{org_error}\n{user_error}")),
        }
    }

    async fn create_token(&self, http: &reqwest::Client, slug: bool) -> Result<AppToken, String> {
        let headers = super::github::headers(&self.jwt()?);
        let slug = if slug {
            let app = get_json(
                http,
                &format!("{}app", self.api),
                &headers,
                "failed to get app information",
            )
            .await?;
            app["slug"].as_str().unwrap_or_default().to_string()
        } else {
            String::new()
        };
        let id = self.installation_id(http, &headers).await?;
        let url = format!("{}app/installations/{id}/access_tokens", self.api);
        let (code, body) = call(http, reqwest::Method::POST, &url, &headers, None).await?;
        if !(200..300).contains(&code) {
            return Err(super::git::api_error("POST", &url, code, &body));
        }
        let answer: Value = serde_json::from_slice(&body).unwrap_or_default();
        let expires_at = answer["expires_at"]
            .as_str()
            .and_then(|t| t.parse::<Timestamp>().ok())
            .unwrap_or_else(Timestamp::now);
        Ok(AppToken {
            token: answer["token"].as_str().unwrap_or_default().to_string(),
            slug,
            expires_at,
        })
    }
}

/// Whether the Secret asks for GitHub App authentication.
pub fn wanted(data: &BTreeMap<String, Vec<u8>>) -> bool {
    data.contains_key(KEY_APP_ID)
}

/// An installation token for the App the Secret describes (from the cache while it has more
/// than a minute left); `slug` also reads the App's slug.
pub async fn token(
    http: &reqwest::Client,
    data: &BTreeMap<String, Vec<u8>>,
    slug: bool,
) -> Result<AppToken, String> {
    let app = App::from_secret(data)?;
    let key = app.cache_key(slug);
    let fresh = |t: &AppToken| t.expires_at.as_second() - Timestamp::now().as_second() > 60;
    if let Some(t) = TOKENS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .filter(|t| fresh(t))
    {
        return Ok(t.clone());
    }
    let t = app.create_token(http, slug).await?;
    let mut tokens = TOKENS.lock().unwrap_or_else(|e| e.into_inner());
    if tokens.len() > 256 {
        tokens.retain(|_, t| fresh(t));
    }
    tokens.insert(key, t.clone());
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn settings_are_checked_as_fluxcd_pkg_checks_them() {
        let err = |pairs: &[(&str, &str)]| App::from_secret(&data(pairs)).err().unwrap();
        assert_eq!(
            err(&[(KEY_APP_ID, "x")]),
            "app ID must be provided to use github app authentication"
        );
        assert_eq!(
            err(&[(KEY_APP_ID, "1")]),
            "app installation owner or ID must be provided to use github app authentication"
        );
        assert_eq!(
            err(&[
                (KEY_APP_ID, "1"),
                (KEY_INSTALLATION_ID, "2"),
                (KEY_INSTALLATION_OWNER, "o")
            ]),
            "only one of app installation owner or ID must be provided to use github app authentication"
        );
        assert_eq!(
            err(&[(KEY_APP_ID, "1"), (KEY_INSTALLATION_ID, "2")]),
            "private key must be provided to use github app authentication"
        );
        let app = App::from_secret(&data(&[
            (KEY_APP_ID, "1"),
            (KEY_INSTALLATION_ID, "2"),
            (KEY_PRIVATE_KEY, "not a key"),
            (KEY_BASE_URL, "https://ghe.example.com/api/v3"),
        ]))
        .unwrap();
        assert_eq!(app.api, "https://ghe.example.com/api/v3/");
        assert!(
            app.jwt()
                .unwrap_err()
                .starts_with("could not parse private key: ")
        );
    }
}
