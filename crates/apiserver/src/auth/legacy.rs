//! Legacy service account token Secrets, as kube-controller-manager's token controller keeps
//! them: a Secret of type `kubernetes.io/service-account-token` annotated
//! `kubernetes.io/service-account.name` gets `data.token` (a non-expiring JWT with the legacy
//! claims), `data["ca.crt"]` and `data.namespace`, and the service account's uid as an
//! annotation. The token authenticates while the Secret holds it and the service account
//! lives with that uid. Unlike kube's controller, a Secret naming a service account that does
//! not exist yet is left alone (and filled once it appears) rather than deleted.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::objects::meta_str;
use crate::server::ServerState;
use crate::store::{Change, Key};

/// The Secret type.
pub const TOKEN_SECRET_TYPE: &str = "kubernetes.io/service-account-token";
const SA_NAME: &str = "kubernetes.io/service-account.name";
const SA_UID: &str = "kubernetes.io/service-account.uid";
const SECRETS: &str = "/secrets";

fn b64(s: &str) -> Value {
    json!(base64::engine::general_purpose::STANDARD.encode(s))
}

/// Fills the token Secret at `key` if it needs it.
pub fn populate(state: &ServerState, key: &Key) {
    let Some(secret) = state.store.get(key) else {
        return;
    };
    if secret.get("type").and_then(Value::as_str) != Some(TOKEN_SECRET_TYPE)
        || meta_str(&secret, "deletionTimestamp").is_some()
        || secret.pointer("/data/token").is_some_and(|t| t.is_string())
    {
        return;
    }
    let Some(sa_name) = secret
        .pointer(&format!(
            "/metadata/annotations/{}",
            SA_NAME.replace('/', "~1")
        ))
        .and_then(Value::as_str)
    else {
        return;
    };
    let Some(sa) = state
        .store
        .get(&Key::new("/serviceaccounts", &key.namespace, sa_name))
    else {
        return;
    };
    let sa_uid = meta_str(&sa, "uid").unwrap_or_default().to_string();
    let wanted_uid = secret
        .pointer(&format!(
            "/metadata/annotations/{}",
            SA_UID.replace('/', "~1")
        ))
        .and_then(Value::as_str);
    if wanted_uid.is_some_and(|u| !u.is_empty() && u != sa_uid) {
        return;
    }
    let Some(token) = state
        .issuer
        .issue_legacy(&key.namespace, sa_name, &sa_uid, &key.name)
    else {
        return;
    };
    let (ca, ns) = (state.ca_pem.clone(), key.namespace.clone());
    let result = state.store.mutate(key, |cur| {
        let Some(cur) = cur else {
            return Ok::<_, crate::error::ApiError>(Change::Keep);
        };
        let mut next = (**cur).clone();
        if next.pointer("/data/token").is_some_and(|t| t.is_string()) {
            return Ok(Change::Keep);
        }
        if !next.get("data").is_some_and(Value::is_object) {
            next["data"] = json!({});
        }
        next["data"]["token"] = b64(&token);
        next["data"]["ca.crt"] = b64(&ca);
        next["data"]["namespace"] = b64(&ns);
        if !next
            .pointer("/metadata/annotations")
            .is_some_and(Value::is_object)
        {
            next["metadata"]["annotations"] = json!({});
        }
        next["metadata"]["annotations"][SA_UID] = json!(sa_uid);
        Ok(Change::Put(next))
    });
    if let Err(e) = result {
        tracing::warn!(error = %e, secret = key.name, namespace = key.namespace, "service account token Secret");
    }
}

/// Fills the token Secrets of namespace `ns` (every namespace when `None`).
pub fn populate_all(state: &ServerState, ns: Option<&str>) {
    let (secrets, _) = state.store.list(SECRETS, ns, None);
    for (key, s) in secrets {
        if s.get("type").and_then(Value::as_str) == Some(TOKEN_SECRET_TYPE) {
            populate(state, &key);
        }
    }
}

/// Whether the legacy `token` still stands: its Secret holds exactly it.
pub fn secret_holds(state: &ServerState, namespace: &str, secret: &str, token: &str) -> bool {
    state
        .store
        .get(&Key::new(SECRETS, namespace, secret))
        .and_then(|s| {
            s.pointer("/data/token")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .and_then(|t| base64::engine::general_purpose::STANDARD.decode(t).ok())
        .is_some_and(|held| held == token.as_bytes())
}
