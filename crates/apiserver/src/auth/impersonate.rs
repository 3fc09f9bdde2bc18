//! `Impersonate-*` headers as kube-apiserver's impersonation filter reads them: each requested
//! user, service account, group, extra and uid must be allowed to the requester with the verb
//! `impersonate`; then the request goes on as the impersonated user (a service account's
//! groups when none are named, `system:authenticated` always).

use axum::http::HeaderMap;
use serde_json::{Map, Value};

use super::UserInfo;
use super::attributes::Attributes;
use crate::error::ApiError;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA: &str = "impersonate-extra-";

/// Whether the request asks to impersonate.
pub fn requested(headers: &HeaderMap) -> bool {
    headers
        .keys()
        .any(|k| k.as_str().starts_with("impersonate-"))
}

fn values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect()
}

/// The user the request acts as: the requester when nothing is impersonated, else the
/// impersonated identity once `allowed` agrees to each part (a 403 as kube words it if not,
/// 400 for groups, extras or a uid without a user).
pub fn impersonate(
    requester: UserInfo,
    headers: &HeaderMap,
    allowed: impl Fn(&Attributes) -> Result<(), String>,
) -> Result<UserInfo, ApiError> {
    if !requested(headers) {
        return Ok(requester);
    }
    let user = values(headers, USER).first().map(|s| s.to_string());
    let groups: Vec<String> = values(headers, GROUP)
        .iter()
        .map(|s| s.to_string())
        .collect();
    let uid = values(headers, UID).first().map(|s| s.to_string());
    let mut extras: Vec<(String, String)> = Vec::new();
    for (name, value) in headers {
        if let Some(key) = name.as_str().strip_prefix(EXTRA)
            && let Ok(v) = value.to_str()
        {
            let key = percent_encoding::percent_decode_str(key)
                .decode_utf8_lossy()
                .to_lowercase();
            extras.push((key, v.to_string()));
        }
    }
    let Some(username) = user else {
        let mut asked = Vec::new();
        asked.extend(groups.iter().map(|g| format!("{{Group {g}}}")));
        asked.extend(extras.iter().map(|(k, v)| format!("{{UserExtra {v} {k}}}")));
        if let Some(u) = &uid {
            asked.push(format!("{{UID {u}}}"));
        }
        return Err(ApiError::bad_request(format!(
            "requested [{}] without impersonating a user",
            asked.join(" ")
        )));
    };
    let check = |resource: &str, subresource: &str, group: &str, namespace: &str, name: &str| {
        let a = Attributes {
            user: requester.clone(),
            verb: "impersonate".into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
            ..Default::default()
        };
        allowed(&a).map_err(|reason| a.forbidden(&reason))
    };
    let mut out_groups: Vec<String> = Vec::new();
    match username
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
        .filter(|(ns, name)| !ns.is_empty() && !name.is_empty() && !name.contains(':'))
    {
        Some((ns, name)) => {
            check("serviceaccounts", "", "", ns, name)?;
            if groups.is_empty() {
                out_groups.push("system:serviceaccounts".into());
                out_groups.push(format!("system:serviceaccounts:{ns}"));
            }
        }
        None => check("users", "", "", "", &username)?,
    }
    for g in &groups {
        check("groups", "", "", "", g)?;
        out_groups.push(g.clone());
    }
    let mut extra = Map::new();
    for (k, v) in &extras {
        check("userextras", k, "authentication.k8s.io", "", v)?;
        let entry = extra
            .entry(k.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(items) = entry {
            items.push(Value::from(v.clone()));
        }
    }
    if let Some(u) = &uid {
        check("uids", "", "authentication.k8s.io", "", u)?;
    }
    if username == "system:anonymous" {
        if !out_groups.iter().any(|g| g == "system:unauthenticated") {
            out_groups.push("system:unauthenticated".into());
        }
    } else if !out_groups.iter().any(|g| g == "system:authenticated") {
        out_groups.push("system:authenticated".into());
    }
    Ok(UserInfo {
        username,
        uid: uid.unwrap_or_default(),
        groups: out_groups,
        extra: Value::Object(extra),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    fn bob() -> UserInfo {
        UserInfo {
            username: "bob".into(),
            groups: vec!["system:authenticated".into()],
            ..Default::default()
        }
    }

    #[test]
    fn identities_as_kube_derives_them() {
        let allow = |_: &Attributes| Ok(());
        let u = impersonate(
            bob(),
            &headers(&[("Impersonate-User", "system:serviceaccount:team:deployer")]),
            allow,
        )
        .unwrap();
        assert_eq!(u.username, "system:serviceaccount:team:deployer");
        assert_eq!(
            u.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:team",
                "system:authenticated"
            ]
        );
        let u = impersonate(
            bob(),
            &headers(&[
                ("Impersonate-User", "jane"),
                ("Impersonate-Group", "devs"),
                ("Impersonate-Group", "ops"),
                ("Impersonate-Extra-Scopes", "view"),
            ]),
            allow,
        )
        .unwrap();
        assert_eq!(u.groups, ["devs", "ops", "system:authenticated"]);
        assert_eq!(u.extra, serde_json::json!({"scopes": ["view"]}));
        assert_eq!(impersonate(bob(), &headers(&[]), allow).unwrap(), bob());
        let e = impersonate(bob(), &headers(&[("Impersonate-Group", "devs")]), allow).unwrap_err();
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            "requested [{Group devs}] without impersonating a user"
        );
    }

    #[test]
    fn each_part_needs_the_impersonate_verb() {
        let only_users = |a: &Attributes| {
            assert_eq!(a.verb, "impersonate");
            if a.resource == "users" {
                Ok(())
            } else {
                Err(String::new())
            }
        };
        let e = impersonate(
            bob(),
            &headers(&[
                ("Impersonate-User", "jane"),
                ("Impersonate-Group", "system:masters"),
            ]),
            only_users,
        )
        .unwrap_err();
        assert_eq!(e.code, 403);
        assert_eq!(
            e.message,
            "groups \"system:masters\" is forbidden: User \"bob\" cannot impersonate resource \"groups\" in API group \"\" at the cluster scope"
        );
        let e = impersonate(
            bob(),
            &headers(&[("Impersonate-User", "system:serviceaccount:team:deployer")]),
            only_users,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "serviceaccounts \"deployer\" is forbidden: User \"bob\" cannot impersonate resource \"serviceaccounts\" in API group \"\" in the namespace \"team\""
        );
    }
}
