//! What the Git commit-status notifiers share, as Flux's notifiers compute it: the commit from
//! the event's revision, the repository from the Provider's address, and the status name and
//! description from the event.

use tidegate_api::event::{Event, SEVERITY_ERROR, SEVERITY_INFO};

/// The commit hash of the event: `commit`, else `originRevision`, else `revision` metadata,
/// its hash after the last `:` (or `/`), which must be 40 characters.
pub fn commit_sha(event: &Event) -> Result<String, String> {
    let revision = event
        .revision()
        .ok_or_else(|| "missing revision metadata".to_string())?;
    parse_revision(revision)
}

/// `main@sha1:<hash>`, `sha1:<hash>`, `main/<hash>` → `<hash>` (Flux only takes SHA-1).
pub fn parse_revision(revision: &str) -> Result<String, String> {
    let hash = match revision.rfind(':') {
        Some(i) => &revision[i + 1..],
        None => revision.rsplit('/').next().unwrap_or(revision),
    };
    if hash.len() == 40 {
        Ok(hash.to_string())
    } else {
        Err(format!(
            "failed to extract commit hash from '{revision}' revision"
        ))
    }
}

/// `(https://host[:port], owner/repo…)` from a repository URL; SSH addresses (also scp-like
/// `git@host:path`) become https, `.git` is dropped.
pub fn parse_address(address: &str) -> Result<(String, String), String> {
    let fail = |why: &str| format!("failed parsing URL {address:?}: {why}");
    let (scheme, host, path) = if let Some((scheme, _)) = address.split_once("://") {
        let u = reqwest::Url::parse(address).map_err(|e| fail(&e.to_string()))?;
        let host = u.host_str().ok_or_else(|| fail("missing host"))?;
        let host = match u.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let scheme = if scheme == "ssh" { "https" } else { scheme };
        (scheme.to_string(), host, u.path().to_string())
    } else if let Some((user_host, path)) = address.split_once(':') {
        let host = user_host.rsplit('@').next().unwrap_or(user_host);
        if host.is_empty() {
            return Err(fail("missing host"));
        }
        ("https".to_string(), host.to_string(), path.to_string())
    } else {
        return Err(fail("unsupported URL"));
    };
    let id = path.trim_start_matches('/');
    let id = id.strip_suffix(".git").unwrap_or(id);
    Ok((format!("{scheme}://{host}"), id.to_string()))
}

/// `(kind/name, reason split into lower-case words)`: `ReconciliationSucceeded` →
/// `reconciliation succeeded`.
pub fn name_and_description(event: &Event) -> (String, String) {
    let o = &event.involved_object;
    let name = format!("{}/{}", o.kind, o.name).to_lowercase();
    (
        name,
        split_camel_case(&event.reason).join(" ").to_lowercase(),
    )
}

/// fatih/camelcase's split: runs of lower, upper, digit and other characters, an upper run
/// followed by a lower one giving its last letter to the lower one.
pub fn split_camel_case(s: &str) -> Vec<String> {
    fn class(c: char) -> u8 {
        if c.is_lowercase() {
            1
        } else if c.is_uppercase() {
            2
        } else if c.is_numeric() {
            3
        } else {
            4
        }
    }
    let mut runs: Vec<Vec<char>> = Vec::new();
    let mut last = 0;
    for c in s.chars() {
        let k = class(c);
        if k == last
            && let Some(run) = runs.last_mut()
        {
            run.push(c);
        } else {
            runs.push(vec![c]);
        }
        last = k;
    }
    for i in 0..runs.len().saturating_sub(1) {
        let upper_then_lower = runs[i].first().is_some_and(|c| c.is_uppercase())
            && runs[i + 1].first().is_some_and(|c| c.is_lowercase());
        if upper_then_lower && let Some(moved) = runs[i].pop() {
            runs[i + 1].insert(0, moved);
        }
    }
    runs.into_iter()
        .filter(|r| !r.is_empty())
        .map(|r| r.into_iter().collect())
        .collect()
}

/// The state of a commit status: `success` for info, `failure` for errors (the words given).
pub fn state<'a>(
    event: &Event,
    success: &'a str,
    failure: &'a str,
    forge: &str,
) -> Result<&'a str, String> {
    match event.severity.as_str() {
        SEVERITY_INFO => Ok(success),
        SEVERITY_ERROR => Ok(failure),
        _ => Err(format!("can't convert to {forge} state")),
    }
}

/// `owner/repo` split in two, or `None` when the id has another shape.
pub fn owner_repo(id: &str) -> Option<(&str, &str)> {
    let (owner, repo) = id.split_once('/')?;
    (!owner.is_empty() && !repo.is_empty() && !repo.contains('/')).then_some((owner, repo))
}

/// Lower-case hex SHA-1.
pub fn sha1_hex(s: &str) -> String {
    use sha1::Digest as _;
    sha1::Sha1::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The error of an API call that answered `status` with `body`, in go-github's and the
/// forges' SDK form: `METHOD URL: CODE MESSAGE`.
pub fn api_error(method: &str, url: &str, status: u16, body: &[u8]) -> String {
    let message = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_string());
    format!("{method} {url}: {status} {message}")
}

/// One API call without retries (the forges' SDKs make one attempt): status and body.
pub async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    headers: &[(&str, String)],
    body: Option<String>,
) -> Result<(u16, Vec<u8>), String> {
    let mut req = http.request(method.clone(), url);
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    if let Some(b) = body {
        req = req.header("Content-Type", "application/json").body(b);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| format!("{method} {url}: {}", super::chain(&e)))?;
    let status = resp.status().as_u16();
    let body = resp
        .bytes()
        .await
        .map_err(|e| format!("{method} {url}: {}", super::chain(&e)))?;
    Ok((status, body.to_vec()))
}

/// A GET that must answer 2xx with JSON (a body that is not JSON reads as `null`, as the
/// SDKs' lenient decoding leaves an empty list); failures are prefixed with `what`.
pub async fn get_json(
    http: &reqwest::Client,
    url: &str,
    headers: &[(&str, String)],
    what: &str,
) -> Result<serde_json::Value, String> {
    let (code, body) = call(http, reqwest::Method::GET, url, headers, None)
        .await
        .map_err(|e| format!("{what}: {e}"))?;
    if !(200..300).contains(&code) {
        return Err(format!("{what}: {}", api_error("GET", url, code, &body)));
    }
    Ok(serde_json::from_slice(&body).unwrap_or_default())
}

/// A write (`POST`, `PATCH`, `PUT`) of `body` that must answer 2xx (go-github also refuses
/// 202: `accept_202` false); failures are prefixed with `what` when given.
pub async fn write(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    headers: &[(&str, String)],
    body: String,
    what: Option<&str>,
    accept_202: bool,
) -> Result<(), String> {
    let prefix = |e: String| match what {
        Some(w) => format!("{w}: {e}"),
        None => e,
    };
    let (code, answer) = call(http, method.clone(), url, headers, Some(body))
        .await
        .map_err(prefix)?;
    if (200..300).contains(&code) && (accept_202 || code != 202) {
        Ok(())
    } else {
        Err(prefix(api_error(method.as_str(), url, code, &answer)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_as_flux() {
        let h = "a1afe267b54f38b46b487f6e938a6fd508278c07";
        for r in [
            format!("sha1:{h}"),
            format!("master@sha1:{h}"),
            format!("environment/dev@sha1:{h}"),
            format!("master/{h}"),
            format!("environment/dev/{h}"),
        ] {
            assert_eq!(parse_revision(&r).unwrap(), h, "{r}");
        }
        assert_eq!(
            parse_revision("master").unwrap_err(),
            "failed to extract commit hash from 'master' revision"
        );
        assert!(parse_revision("badhash").is_err());
    }

    #[test]
    fn addresses_as_flux() {
        for (address, host, id) in [
            (
                "https://github.com/foo/bar",
                "https://github.com",
                "foo/bar",
            ),
            (
                "https://example.com/foo/bar",
                "https://example.com",
                "foo/bar",
            ),
            (
                "https://gitlab.com/foo/bar.git",
                "https://gitlab.com",
                "foo/bar",
            ),
            (
                "git@gitlab.com:foo/bar.git",
                "https://gitlab.com",
                "foo/bar",
            ),
            (
                "ssh://git@github.com/stefanprodan/podinfo",
                "https://github.com",
                "stefanprodan/podinfo",
            ),
            (
                "https://gitlab.com/foo/bar/foo.git",
                "https://gitlab.com",
                "foo/bar/foo",
            ),
            (
                "http://localhost:3000/foo/bar",
                "http://localhost:3000",
                "foo/bar",
            ),
        ] {
            assert_eq!(
                parse_address(address).unwrap(),
                (host.to_string(), id.to_string()),
                "{address}"
            );
        }
    }

    #[test]
    fn camel_case_as_fatih() {
        for (input, want) in [
            ("ReconciliationSucceeded", "reconciliation succeeded"),
            ("ApplySucceeded", "apply succeeded"),
            ("HTTPServer", "http server"),
            ("v1Beta", "v 1 beta"),
            ("Health check", "health   check"),
            ("reason", "reason"),
        ] {
            assert_eq!(
                split_camel_case(input).join(" ").to_lowercase(),
                want,
                "{input}"
            );
        }
        assert_eq!(
            sha1_hex("kustomization/namespace-foo-and-service-bar"),
            "12ea142172e98435e16336acbbed8919610922c3"
        );
    }
}
