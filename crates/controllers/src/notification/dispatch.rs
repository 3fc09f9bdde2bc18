//! Sending an event to the Provider of each matching Alert, as Flux's event server does: the
//! cross-namespace rule, suspended Providers skipped, commit-status and change-request events
//! routed only to the providers that want them, the metadata combined, the notifier built from
//! the Provider and its Secrets, and the send done in the background within the Provider's
//! timeout. Failures become `NotificationDispatchFailed` Warning events on the Alert, with
//! the token masked.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use kube::ResourceExt;
use tidegate_api::event::{self, Event, SEVERITY_ERROR};
use tidegate_api::provider::DEFAULT_TIMEOUT;
use tidegate_api::{Alert, Provider};

use super::notifier::{self, Settings};

/// Commit status providers.
pub fn is_commit_status_provider(t: &str) -> bool {
    matches!(
        t,
        "github" | "gitlab" | "gitea" | "bitbucketserver" | "bitbucket" | "azuredevops"
    )
}

/// Pull/merge request comment providers.
pub fn is_change_request_provider(t: &str) -> bool {
    matches!(
        t,
        "githubpullrequestcomment" | "gitlabmergerequestcomment" | "giteapullrequestcomment"
    )
}

fn is_generic_provider(t: &str) -> bool {
    matches!(t, "generic" | "generic-hmac")
}

fn is_commit_status_update(e: &Event) -> bool {
    let key = format!(
        "{}/{}",
        e.involved_object.group(),
        event::META_COMMIT_STATUS
    );
    e.has_metadata(&key, event::META_COMMIT_STATUS_UPDATE)
}

fn has_key(e: &Event, key: &str) -> bool {
    e.metadata
        .get(&format!("{}/{key}", event::GROUP))
        .is_some_and(|v| !v.is_empty())
}

/// Why an event was not sent to an Alert's provider although nothing failed.
#[derive(Debug, PartialEq, Eq)]
pub enum Skip {
    /// The Provider is suspended, or does not take commit status updates.
    Quietly,
    /// A commit status provider and an event without `commit` metadata.
    CommitStatus,
    /// A change request provider and an event without `change_request` metadata.
    ChangeRequest,
}

/// Decides, before anything is read, whether `provider` takes `event` (Flux's order of
/// checks after the Provider is read).
pub fn routes(provider: &Provider, e: &Event) -> Result<(), Skip> {
    let t = provider.spec.type_.as_str();
    if provider.spec.suspend {
        return Err(Skip::Quietly);
    }
    if !is_commit_status_provider(t) && !is_generic_provider(t) && is_commit_status_update(e) {
        return Err(Skip::Quietly);
    }
    if is_commit_status_provider(t)
        && !has_key(e, event::META_COMMIT)
        && !is_commit_status_update(e)
        && e.severity != SEVERITY_ERROR
    {
        return Err(Skip::CommitStatus);
    }
    if is_change_request_provider(t) && !has_key(e, event::META_CHANGE_REQUEST) {
        return Err(Skip::ChangeRequest);
    }
    Ok(())
}

/// `token` replaced by `*****` in `text` (with Flux's quirk: repeats of its last character
/// after it are swallowed too).
pub fn mask_token(text: &str, token: &str) -> String {
    if token.is_empty() {
        return text.to_string();
    }
    match regex::Regex::new(&format!("{}*", regex::escape(token))) {
        Ok(re) => re.replace_all(text, "*****").into_owned(),
        Err(_) => text.replace(token, "*****"),
    }
}

/// HTTP clients by TLS and proxy settings, so that sends to the same place reuse connections.
#[derive(Default)]
pub struct Clients {
    by_key: Mutex<HashMap<[u8; 32], reqwest::Client>>,
}

/// The TLS and proxy settings of a client.
#[derive(Default)]
pub struct ClientOptions {
    /// PEM CA bundle.
    pub ca_pem: Option<Vec<u8>>,
    /// PEM client certificate and key.
    pub client_pem: Option<Vec<u8>>,
    /// Proxy URL.
    pub proxy: Option<String>,
}

impl Clients {
    /// The client for `o`, built once.
    pub fn get(&self, o: &ClientOptions) -> Result<reqwest::Client, String> {
        use sha2::Digest as _;
        let mut h = sha2::Sha256::new();
        for part in [
            o.ca_pem.as_deref(),
            o.client_pem.as_deref(),
            o.proxy.as_deref().map(str::as_bytes),
        ] {
            h.update(part.map(|p| p.len() as u64 + 1).unwrap_or(0).to_le_bytes());
            h.update(part.unwrap_or_default());
        }
        let key: [u8; 32] = h.finalize().into();
        let mut clients = self.by_key.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = clients.get(&key) {
            return Ok(c.clone());
        }
        tidegate_source::tls::ensure_provider();
        let mut b = reqwest::Client::builder().connect_timeout(Duration::from_secs(30));
        if let Some(pem) = &o.ca_pem {
            for cert in reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| format!("failed to get TLS config: invalid CA certificate: {e}"))?
            {
                b = b.add_root_certificate(cert);
            }
        }
        if let Some(pem) = &o.client_pem {
            b = b.identity(reqwest::Identity::from_pem(pem).map_err(|e| {
                format!("failed to get TLS config: invalid client certificate or key: {e}")
            })?);
        }
        if let Some(p) = &o.proxy {
            b = b.proxy(
                reqwest::Proxy::all(p).map_err(|e| format!("unable to parse proxy URL: {e}"))?,
            );
        }
        let client = b.build().map_err(|e| e.to_string())?;
        if clients.len() > 256 {
            clients.clear();
        }
        clients.insert(key, client.clone());
        Ok(client)
    }
}

/// A notifier ready to send, with what its failure messages must hide and its deadline.
pub struct Ready {
    /// The notifier.
    pub notifier: notifier::Notifier,
    /// The Secret's token (masked in errors).
    pub token: String,
    /// The Provider's timeout.
    pub timeout: Duration,
}

/// Builds the notifier of `provider` from its spec and Secrets (Flux's `createNotifier`).
pub async fn notifier_for(
    client: &kube::Client,
    clients: &Clients,
    provider: &Provider,
    commit_status: String,
) -> Result<Ready, String> {
    let ns = provider.namespace().unwrap_or_default();
    let spec = &provider.spec;
    tidegate_source::tls::ensure_provider();
    let mut s = Settings {
        url: spec.address.clone().unwrap_or_default(),
        channel: spec.channel.clone().unwrap_or_default(),
        username: spec.username.clone().unwrap_or_default(),
        commit_status,
        provider_uid: provider.uid().unwrap_or_default(),
        provider_name: provider.name_any(),
        provider_namespace: ns.clone(),
        ..Default::default()
    };
    let mut tls = ClientOptions {
        proxy: spec.proxy.clone().filter(|p| !p.is_empty()),
        ..Default::default()
    };
    let mut token = String::new();
    let mut secret: Option<BTreeMap<String, Vec<u8>>> = None;
    if let Some(r) = &spec.secret_ref {
        let data = crate::source::secret_data(client, &ns, &r.name).await?;
        let text = |k: &str| data.get(k).map(|v| String::from_utf8_lossy(v).into_owned());
        if let Some(a) = data.get("address")
            && a.len() > 2048
        {
            return Err(
                "invalid address in secret: address exceeds maximum length of 2048 bytes".into(),
            );
        }
        if let Some(p) = text("proxy") {
            tls.proxy = Some(p.trim().to_string());
        }
        if let Some(h) = data.get("headers") {
            let text = std::str::from_utf8(h)
                .map_err(|_| "failed to read headers from secret: not UTF-8".to_string())?;
            tidegate_core::yaml::check_nesting(text)
                .map_err(|e| format!("failed to read headers from secret: {e}"))?;
            s.headers = yaml_serde::from_str::<BTreeMap<String, String>>(text)
                .map_err(|e| format!("failed to read headers from secret: {e}"))?;
        }
        // As Flux's secret reader: a username without a password (or the reverse) makes the
        // Secret's credentials unusable, the token included.
        let (user, pass) = (text("username"), text("password"));
        if user.is_some() == pass.is_some() {
            if let Some(t) = text("token") {
                s.token = t;
            }
            if let (Some(u), Some(p)) = (user, pass) {
                s.username = u;
                s.password = p;
            }
        }
        if let Some(a) = text("address") {
            s.url = a.trim().to_string();
        }
        if let Some(t) = text("token") {
            token = t.trim().to_string();
        }
        secret = Some(data.clone());
        s.secret_data = data;
    }
    if let Some(r) = &spec.proxy_secret_ref {
        let data = crate::source::secret_data(client, &ns, &r.name).await?;
        let text = |k: &str| {
            data.get(k)
                .map(|v| String::from_utf8_lossy(v).trim().to_string())
        };
        let Some(address) = text("address").filter(|a| !a.is_empty()) else {
            return Err(format!(
                "failed to get proxy URL: secret '{ns}/{}': key 'address' not found",
                r.name
            ));
        };
        let mut url = reqwest::Url::parse(&address).map_err(|e| {
            format!("failed to get proxy URL: failed to parse proxy address '{address}': {e}")
        })?;
        if let Some(u) = text("username") {
            let _ = url.set_username(&u);
            let _ = url.set_password(text("password").as_deref());
        }
        tls.proxy = Some(url.to_string());
    }
    let tls_data = match &spec.cert_secret_ref {
        Some(r) => Some(crate::source::secret_data(client, &ns, &r.name).await?),
        None if is_commit_status_provider(&spec.type_) => {
            secret.filter(|d| d.contains_key("ca.crt"))
        }
        None => None,
    };
    if let Some(data) = tls_data {
        tls.ca_pem = data.get("ca.crt").or_else(|| data.get("caFile")).cloned();
        tls.client_pem = crate::source::client_pem(&data).map_err(|()| {
            "failed to get TLS config: secret must contain both 'tls.crt' and 'tls.key'".to_string()
        })?;
    }
    s.http = clients.get(&tls)?;
    let timeout = match spec.timeout.as_deref().filter(|t| !t.is_empty()) {
        Some(t) => tidegate_core::duration::parse(t).unwrap_or(DEFAULT_TIMEOUT),
        None => DEFAULT_TIMEOUT,
    };
    let github = matches!(
        spec.type_.as_str(),
        "github" | "githubdispatch" | "githubpullrequestcomment"
    );
    if github
        && s.token.is_empty()
        && s.password.is_empty()
        && notifier::github_app::wanted(&s.secret_data)
    {
        let slug = spec.type_ == "githubpullrequestcomment";
        let app = notifier::github_app::token(&s.http, &s.secret_data, slug)
            .await
            .map_err(|e| format!("failed to initialize notifier: {e}"))?;
        s.token = app.token;
        s.app_slug = app.slug;
    }
    let notifier = notifier::build(&spec.type_, s)
        .map_err(|e| format!("failed to initialize notifier: {e}"))?;
    Ok(Ready {
        notifier,
        token,
        timeout,
    })
}

/// `Kind/namespace/name` of the event's object.
pub fn object_string(e: &Event) -> String {
    let o = &e.involved_object;
    format!("{}/{}/{}", o.kind, o.namespace, o.name)
}

/// The Alert's name as `namespace/name`.
pub fn alert_key(a: &Alert) -> String {
    format!("{}/{}", a.namespace().unwrap_or_default(), a.name_any())
}
