//! Who a request comes from, what it may do, and the review APIs that ask about it.
//! Authentication, first match wins as in kube-apiserver's union: a client certificate
//! signed by the client CA (common name the user, organizations the groups), the admin bearer
//! token (user `admin`, group `system:masters`), a token of the static token file, or a
//! service account token this server issued (for a service account that still exists with the
//! same uid); `Impersonate-*` headers then change who the request acts as. Authorization:
//! every authenticated request (the default), or RBAC as kube-apiserver decides it.

pub mod aggregation;
pub mod attributes;
pub mod bootstrap;
pub mod escalation;
pub mod impersonate;
pub mod legacy;
pub mod rbac;
pub mod review;
pub mod tokenfile;
pub mod tokens;

/// How requests are authorized.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AuthorizationMode {
    /// Every authenticated request is allowed (Tidegate's single-user default).
    #[default]
    AlwaysAllow,
    /// Kubernetes RBAC (`system:masters` allowed everything).
    Rbac,
}

use crate::server::ServerState;
use crate::store::Key;
use axum::http::{HeaderMap, header};
use serde_json::{Value, json};

/// The admin's user name.
pub const ADMIN_USER: &str = "admin";

/// An authenticated user, as `UserInfo` in the authentication API.
#[derive(Debug, Clone, PartialEq)]
pub struct UserInfo {
    /// User name (`system:serviceaccount:<ns>:<name>` for service accounts).
    pub username: String,
    /// The user's uid, if any.
    pub uid: String,
    /// Groups.
    pub groups: Vec<String>,
    /// Extra attributes.
    pub extra: Value,
}

impl UserInfo {
    /// The admin, holder of the server's token.
    pub fn admin() -> UserInfo {
        UserInfo {
            username: ADMIN_USER.into(),
            uid: String::new(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            extra: json!({}),
        }
    }

    /// `system:anonymous`, who a request without credentials is.
    pub fn anonymous() -> UserInfo {
        UserInfo {
            username: "system:anonymous".into(),
            uid: String::new(),
            groups: vec!["system:unauthenticated".into()],
            extra: json!({}),
        }
    }

    /// Its JSON form.
    pub fn to_json(&self) -> Value {
        let mut v = json!({"username": self.username, "groups": self.groups});
        if !self.uid.is_empty() {
            v["uid"] = json!(self.uid);
        }
        if self.extra.as_object().is_some_and(|m| !m.is_empty()) {
            v["extra"] = self.extra.clone();
        }
        v
    }
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The user a bearer token stands for.
pub fn user_of_token(state: &ServerState, token: &str) -> Option<UserInfo> {
    if constant_time_eq(token.as_bytes(), state.token().as_bytes()) {
        return Some(UserInfo::admin());
    }
    if let Some(user) = state.static_tokens.get(token) {
        return Some(user.clone());
    }
    let claims = state.issuer.verify(token, now())?;
    // A token stops working when its service account is deleted (or replaced).
    let sa_key = Key::new("/serviceaccounts", &claims.namespace, &claims.name);
    if claims.uid.is_empty() {
        state.store.get(&sa_key)?;
    } else if state.store.key_of_uid(&claims.uid).as_ref() != Some(&sa_key) {
        return None;
    }
    // A legacy token lives while its Secret holds it.
    if let Some(secret) = &claims.legacy_secret
        && !legacy::secret_holds(state, &claims.namespace, secret, token)
    {
        return None;
    }
    // A bound token also stops with its Pod or Secret.
    if let Some(b) = &claims.bound {
        let resource = match b.kind.as_str() {
            "Pod" => "/pods",
            "Secret" => "/secrets",
            _ => "/nodes",
        };
        let ns = if b.kind == "Node" {
            ""
        } else {
            &claims.namespace
        };
        let obj = state.store.get(&Key::new(resource, ns, &b.name))?;
        if !b.uid.is_empty()
            && obj.pointer("/metadata/uid").and_then(Value::as_str) != Some(b.uid.as_str())
        {
            return None;
        }
    }
    Some(UserInfo {
        username: format!("system:serviceaccount:{}:{}", claims.namespace, claims.name),
        uid: claims.uid,
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{}", claims.namespace),
            "system:authenticated".into(),
        ],
        extra: json!({}),
    })
}

/// The user a request authenticates as, if any.
pub fn authenticate(
    state: &ServerState,
    headers: &HeaderMap,
    extensions: &axum::http::Extensions,
) -> Option<UserInfo> {
    if let Some(cert) = extensions.get::<crate::listen::ClientCertificate>() {
        let (user, groups) = &*cert.0;
        let mut groups = groups.clone();
        groups.push("system:authenticated".into());
        return Some(UserInfo {
            username: user.clone(),
            uid: String::new(),
            groups,
            extra: json!({}),
        });
    }
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let token = value.strip_prefix("Bearer ")?.trim();
    user_of_token(state, token)
}

/// Whether a request carries no credentials at all (neither a client certificate nor an
/// `Authorization` header): only such a request is anonymous; one whose credentials fail is
/// refused.
pub fn presents_no_credentials(headers: &HeaderMap, extensions: &axum::http::Extensions) -> bool {
    extensions
        .get::<crate::listen::ClientCertificate>()
        .is_none()
        && headers.get(header::AUTHORIZATION).is_none()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
