//! Posting a notification as Flux's `postMessage` does: JSON (or given bytes), basic auth when
//! set, retries on connection errors, 429 and 5xx (but 501) with waits doubling from two
//! seconds up to thirty (honouring `Retry-After` on 429 and 503), four retries; any answer
//! outside 2xx is "request failed with status code N: <body>".

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// Retries after the first attempt.
const RETRIES: u32 = 4;
/// The first wait.
const WAIT_MIN: Duration = Duration::from_secs(2);
/// The longest wait.
const WAIT_MAX: Duration = Duration::from_secs(30);
/// The most of an error body quoted.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// One request.
pub struct Post<'a> {
    /// The client (TLS and proxy settings).
    pub http: &'a reqwest::Client,
    /// Where to.
    pub url: &'a str,
    /// The body.
    pub body: Vec<u8>,
    /// `application/json` unless set.
    pub content_type: Option<&'a str>,
    /// Basic auth, when either is non-empty.
    pub basic: Option<(&'a str, &'a str)>,
    /// Other headers (set, replacing; values trimmed of spaces and tabs as Go writes them).
    pub headers: Vec<(String, String)>,
    /// `POST` unless set (Matrix `PUT`s).
    pub method: reqwest::Method,
}

/// What a successful request answered.
pub struct Answer {
    /// Status.
    pub status: u16,
    /// Body.
    pub body: Vec<u8>,
}

impl<'a> Post<'a> {
    /// A JSON POST of `body` (already marshalled as Go does).
    pub fn json(http: &'a reqwest::Client, url: &'a str, body: String) -> Post<'a> {
        Post {
            http,
            url,
            body: body.into_bytes(),
            content_type: None,
            basic: None,
            headers: Vec::new(),
            method: reqwest::Method::POST,
        }
    }

    /// Sends with `method` instead of `POST`.
    pub fn method(mut self, method: reqwest::Method) -> Self {
        self.method = method;
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }

    /// Sends with retries; a 2xx answer is returned, anything else is an error in Flux's
    /// words (without the `postMessage failed: ` prefix the notifiers add).
    pub async fn send(self) -> Result<Answer, String> {
        let answer = self.send_raw().await?;
        if (200..300).contains(&answer.status) {
            Ok(answer)
        } else {
            Err(status_error(&answer))
        }
    }

    /// [`Post::send`], the answer dropped and a failure worded as Flux's notifiers word it
    /// (`postMessage failed: …`).
    pub async fn deliver(self) -> Result<(), String> {
        self.send()
            .await
            .map(|_| ())
            .map_err(|e| format!("postMessage failed: {e}"))
    }

    /// Sends with retries and returns whatever final answer came (a connection failure is
    /// still an error).
    pub async fn send_raw(self) -> Result<Answer, String> {
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_str(self.content_type.unwrap_or("application/json"))
                .map_err(|e| format!("failed to create a new request: {e}"))?,
        );
        for (k, v) in &self.headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| format!("failed to create a new request: header {k:?}: {e}"))?;
            let value = HeaderValue::from_str(v.trim_matches([' ', '\t']))
                .map_err(|e| format!("failed to create a new request: header {k:?}: {e}"))?;
            headers.insert(name, value);
        }
        let mut wait = WAIT_MIN;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut req = self
                .http
                .request(self.method.clone(), self.url)
                .headers(headers.clone())
                .body(self.body.clone());
            if let Some((user, pass)) = self.basic
                && (!user.is_empty() || !pass.is_empty())
            {
                req = req.basic_auth(user, Some(pass));
            }
            let result = req.send().await;
            let (retry, last_error, retry_after) = match result {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let retry_after = resp
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    let body = read_body(resp).await;
                    let retry = status == 429 || (status >= 500 && status != 501);
                    if !retry {
                        return Ok(Answer { status, body });
                    }
                    (
                        true,
                        None,
                        retry_after.filter(|_| status == 429 || status == 503),
                    )
                }
                Err(e) => {
                    let text = chain(&e);
                    // As go-retryablehttp: a request that cannot be built or a certificate
                    // that is not trusted will not get better by retrying.
                    let retry = !e.is_builder() && !text.contains("certificate");
                    (retry, Some(text), None)
                }
            };
            if !retry || attempt > RETRIES {
                let mut text = format!(
                    "failed to execute request: {} {} giving up after {attempt} attempt(s)",
                    self.method,
                    redact(self.url)
                );
                if let Some(e) = last_error {
                    text.push_str(": ");
                    text.push_str(&e);
                }
                return Err(text);
            }
            tokio::time::sleep(retry_after.unwrap_or(wait)).await;
            wait = (wait * 2).min(WAIT_MAX);
        }
    }
}

/// "request failed: request failed with status code N: <body>", as `postMessage`'s default
/// response check words it.
pub fn status_error(answer: &Answer) -> String {
    format!(
        "request failed: request failed with status code {}: {}",
        answer.status,
        String::from_utf8_lossy(&answer.body)
    )
}

async fn read_body(mut resp: reqwest::Response) -> Vec<u8> {
    let mut out = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        let room = MAX_ERROR_BODY.saturating_sub(out.len());
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if out.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    out
}

/// The error and its causes, as Go's wrapped errors print.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text = format!("{text}: {s_text}");
        }
        source = s.source();
    }
    text
}

/// The URL with any password replaced by `xxxxx`, as Go's `URL.Redacted`.
pub fn redact(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("xxxxx"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}
