//! Flux's `acl.HasAccessToRef`: an object in another namespace may be referred to when its
//! `accessFrom` has a namespace selector whose labels the referrer's namespace carries.

use k8s_openapi::api::core::v1::Namespace;
use kube::{Api, Client};
use tidegate_api::imagerepository::AccessFrom;

/// `Err` with Flux's message when `referrer_ns` may not use the object `ns/name`.
pub(super) async fn has_access(
    client: &Client,
    referrer_ns: &str,
    ns: &str,
    name: &str,
    access_from: Option<&AccessFrom>,
) -> Result<(), String> {
    if referrer_ns == ns {
        return Ok(());
    }
    let Some(acl) = access_from else {
        return Err(format!(
            "'{ns}/{name}' can't be accessed due to missing ACL labels on 'accessFrom'"
        ));
    };
    let api: Api<Namespace> = Api::all(client.clone());
    let namespace = api
        .get(referrer_ns)
        .await
        .map_err(|e| format!("unable to get namespace '{referrer_ns}': {e}"))?;
    let labels = namespace.metadata.labels.unwrap_or_default();
    let allowed = acl.namespace_selectors.iter().any(|s| {
        s.match_labels
            .as_ref()
            .is_none_or(|m| m.iter().all(|(k, v)| labels.get(k) == Some(v)))
    });
    if allowed {
        Ok(())
    } else {
        Err(format!(
            "'{ns}/{name}' can't be accessed due to ACL labels mismatch on namespace '{referrer_ns}'"
        ))
    }
}
