//! ClusterRole aggregation, as kube-controller-manager's `clusterrole-aggregation-controller`
//! keeps it: a ClusterRole with an `aggregationRule` holds the rules of every other ClusterRole
//! its selectors pick (selectors in order, roles by name, each distinct rule once), rewritten
//! whenever a ClusterRole changes.

use serde_json::Value;

use crate::server::ServerState;
use crate::store::{Change, Key};

const CLUSTER_ROLES: &str = "rbac.authorization.k8s.io/clusterroles";

/// Whether a store resource is ClusterRoles (their changes re-aggregate).
pub fn is_cluster_roles(resource: &str) -> bool {
    resource == CLUSTER_ROLES
}

/// The rules an aggregated ClusterRole should hold, from `roles` (all ClusterRoles).
pub fn aggregated_rules(
    role: &Value,
    roles: &[(Key, std::sync::Arc<Value>)],
) -> Option<Vec<Value>> {
    let selectors = role
        .pointer("/aggregationRule/clusterRoleSelectors")?
        .as_array()?;
    let name = role.pointer("/metadata/name").and_then(Value::as_str);
    let mut rules: Vec<Value> = Vec::new();
    for selector in selectors {
        let mut picked: Vec<&Value> = roles
            .iter()
            .map(|(_, r)| r.as_ref())
            .filter(|r| r.pointer("/metadata/name").and_then(Value::as_str) != name)
            .filter(|r| crate::validate::selector_matches(selector, r.pointer("/metadata/labels")))
            .collect();
        picked.sort_by_key(|r| {
            r.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
        });
        for r in picked {
            for rule in r
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if !rules.iter().any(|have| same_rule(have, rule)) {
                    rules.push(rule.clone());
                }
            }
        }
    }
    Some(rules)
}

/// Rules are equal when their fields are, empty lists and absent ones alike (Go's semantic
/// equality of the decoded structs).
fn same_rule(a: &Value, b: &Value) -> bool {
    [
        "verbs",
        "apiGroups",
        "resources",
        "resourceNames",
        "nonResourceURLs",
    ]
    .iter()
    .all(|f| {
        let list = |v: &Value| {
            v.get(*f)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        list(a) == list(b)
    })
}

/// Re-aggregates every ClusterRole that has an `aggregationRule`, writing only those whose
/// rules change.
pub fn sync_all(state: &ServerState) {
    let (roles, _) = state.store.list(CLUSTER_ROLES, None, None);
    for (key, role) in &roles {
        let Some(rules) = aggregated_rules(role, &roles) else {
            continue;
        };
        let current = role
            .get("rules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if current.len() == rules.len() && current.iter().zip(&rules).all(|(a, b)| same_rule(a, b))
        {
            continue;
        }
        let result = state.store.mutate(key, |cur| {
            let Some(cur) = cur else {
                return Ok::<_, crate::error::ApiError>(Change::Keep);
            };
            let mut next = (**cur).clone();
            next["rules"] = Value::Array(rules.clone());
            Ok(Change::Put(next))
        });
        if let Err(e) = result {
            tracing::warn!(error = %e, role = key.name, "aggregating ClusterRole");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_are_gathered_by_selector_then_name_once_each() {
        let role = |name: &str, labels: Value, rules: Value| {
            (
                Key::new(CLUSTER_ROLES, "", name),
                std::sync::Arc::new(
                    json!({"metadata": {"name": name, "labels": labels}, "rules": rules}),
                ),
            )
        };
        let get = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]});
        let list = json!({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]});
        let roles = vec![
            role(
                "b-view",
                json!({"agg": "view"}),
                json!([list.clone(), get.clone()]),
            ),
            role("a-view", json!({"agg": "view"}), json!([get.clone()])),
            role("other", json!({}), json!([{"verbs": ["*"]}])),
        ];
        let agg = json!({"metadata": {"name": "view", "labels": {"agg": "view"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "view"}}]}});
        assert_eq!(aggregated_rules(&agg, &roles), Some(vec![get, list]));
        assert_eq!(aggregated_rules(&json!({"rules": []}), &roles), None);
    }
}
