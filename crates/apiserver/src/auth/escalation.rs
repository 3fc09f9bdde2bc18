//! RBAC escalation prevention, as kube-apiserver's RBAC storage enforces it (`rbac/validation`):
//! a Role or ClusterRole may only be written by a user who holds every rule in it (or may
//! `escalate` roles); a binding only by one who holds every rule of the role it names (or may
//! `bind` that role). `system:masters` may do anything; writes that touch only ownerReferences
//! or finalizers are not checked. Only under RBAC.

use serde_json::Value;

use super::UserInfo;
use super::attributes::Attributes;
use super::rbac::{PRIVILEGED_GROUP, PolicyRule, RbacIndex};
use crate::error::{ApiError, ApiResult};

const GROUP: &str = "rbac.authorization.k8s.io";

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

fn has_all(set: &[String], items: &[String]) -> bool {
    items.iter().all(|i| has(set, i))
}

/// kube's `BreakdownRule`: one rule per group, resource, verb (and name), and per
/// non-resource URL and verb.
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let base = PolicyRule {
                    api_groups: vec![group.clone()],
                    resources: vec![resource.clone()],
                    verbs: vec![verb.clone()],
                    ..Default::default()
                };
                if rule.resource_names.is_empty() {
                    out.push(base);
                } else {
                    for name in &rule.resource_names {
                        out.push(PolicyRule {
                            resource_names: vec![name.clone()],
                            ..base.clone()
                        });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: vec![url.clone()],
                verbs: vec![verb.clone()],
                ..Default::default()
            });
        }
    }
    out
}

fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, "*") || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        has(owner, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

fn url_covers(owner: &str, path: &str) -> bool {
    owner == path || (owner.ends_with('*') && path.starts_with(owner.trim_end_matches('*')))
}

/// kube's `ruleCovers`.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resources_cover(&owner.resources, &sub.resources);
    let urls = sub
        .non_resource_urls
        .iter()
        .all(|p| owner.non_resource_urls.iter().any(|o| url_covers(o, p)));
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && urls && names
}

/// kube's `Covers`: the parts of `wanted` that `owner` does not hold.
pub fn uncovered(owner: &[PolicyRule], wanted: &[PolicyRule]) -> Vec<PolicyRule> {
    wanted
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect()
}

/// kube's `CompactRules`: rules for one group and resource (and at most one name) merged,
/// their verbs joined.
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let is_simple = rule.resource_names.len() <= 1
            && rule.non_resource_urls.is_empty()
            && rule.api_groups.len() == 1
            && rule.resources.len() == 1;
        if !is_simple {
            out.push(rule);
            continue;
        }
        match simple.iter_mut().find(|s| {
            s.api_groups == rule.api_groups
                && s.resources == rule.resources
                && s.resource_names == rule.resource_names
        }) {
            Some(s) => s.verbs.extend(rule.verbs),
            None => simple.push(rule),
        }
    }
    out.extend(simple);
    out
}

/// Go's `%q` of a string slice.
fn go_quoted(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", q.join(" "))
}

/// kube's `CompactString`.
fn compact_string(r: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (name, items) in [
        ("APIGroups", &r.api_groups),
        ("Resources", &r.resources),
        ("NonResourceURLs", &r.non_resource_urls),
        ("ResourceNames", &r.resource_names),
        ("Verbs", &r.verbs),
    ] {
        if !items.is_empty() {
            parts.push(format!("{name}:{}", go_quoted(items)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// kube's `ConfirmNoEscalation`: `Err` with its message when `user` does not hold `rules` in
/// `namespace`.
pub fn confirm_no_escalation(
    rbac: &RbacIndex,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (owner, errors) = super::rbac::rules_for(rbac, user, namespace);
    let missing = uncovered(&owner, rules);
    if missing.is_empty() {
        return Ok(());
    }
    let mut described: Vec<String> = compact(missing).iter().map(compact_string).collect();
    described.sort();
    described.dedup();
    let mut msg = format!(
        "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        user.username,
        go_quoted(&user.groups),
        described.join("\n")
    );
    if !errors.is_empty() {
        msg.push_str(&format!("; resolution errors: [{}]", errors.join(" ")));
    }
    Err(msg)
}

fn rules_of(obj: &Value) -> Vec<PolicyRule> {
    obj.get("rules")
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default()
}

/// Whether a write changes only ownerReferences, finalizers or managed fields (kube's
/// `IsOnlyMutatingGCFields`).
fn only_gc_fields(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in [
                "ownerReferences",
                "finalizers",
                "managedFields",
                "resourceVersion",
                "generation",
            ] {
                m.remove(k);
            }
        }
        v
    };
    strip(old) == strip(new)
}

/// What the user may do, asked of the authorizer.
fn may(
    rbac: &RbacIndex,
    user: &UserInfo,
    verb: &str,
    resource: &str,
    namespace: &str,
    name: &str,
) -> bool {
    let a = Attributes {
        user: user.clone(),
        verb: verb.into(),
        resource_request: true,
        api_group: GROUP.into(),
        api_version: "*".into(),
        resource: resource.into(),
        namespace: namespace.into(),
        name: name.into(),
        ..Default::default()
    };
    super::rbac::authorize(rbac, &a).allowed
}

/// The check for a write of `obj` (replacing `old`) to `resource` of the RBAC group in
/// `namespace`; `url_name` is the name the request URL carries ("" for a create).
pub fn check(
    rbac: &RbacIndex,
    user: &UserInfo,
    resource: &str,
    namespace: &str,
    url_name: &str,
    obj: &Value,
    old: Option<&Value>,
) -> ApiResult<()> {
    if user.groups.iter().any(|g| g == PRIVILEGED_GROUP) {
        return Ok(());
    }
    if old.is_some_and(|o| only_gc_fields(o, obj)) {
        return Ok(());
    }
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let forbidden = |why: &str| ApiError::forbidden_request(GROUP, resource, name, why);
    match resource {
        "roles" | "clusterroles" => {
            if may(rbac, user, "escalate", resource, namespace, url_name) {
                return Ok(());
            }
            confirm_no_escalation(rbac, user, namespace, &rules_of(obj))
                .map_err(|m| forbidden(&m))?;
            if resource == "clusterroles"
                && obj.get("aggregationRule").is_some_and(|a| !a.is_null())
            {
                let full = [
                    PolicyRule {
                        verbs: vec!["*".into()],
                        api_groups: vec!["*".into()],
                        resources: vec!["*".into()],
                        ..Default::default()
                    },
                    PolicyRule {
                        verbs: vec!["*".into()],
                        non_resource_urls: vec!["*".into()],
                        ..Default::default()
                    },
                ];
                confirm_no_escalation(rbac, user, namespace, &full).map_err(|_| {
                    forbidden("must have cluster-admin privileges to use the aggregationRule")
                })?;
            }
            Ok(())
        }
        "rolebindings" | "clusterrolebindings" => {
            let kind = obj
                .pointer("/roleRef/kind")
                .and_then(Value::as_str)
                .unwrap_or("");
            let role = obj
                .pointer("/roleRef/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            let role_resource = match kind {
                "ClusterRole" => "clusterroles",
                "Role" => "roles",
                _ => return Err(forbidden("unknown role reference kind")),
            };
            if may(rbac, user, "bind", role_resource, namespace, role) {
                return Ok(());
            }
            let role_ns = if role_resource == "roles" {
                namespace
            } else {
                ""
            };
            let found = rbac
                .role(role_ns, role)
                .ok_or_else(|| ApiError::not_found(GROUP, role_resource, role))?;
            confirm_no_escalation(rbac, user, namespace, found).map_err(|m| forbidden(&m))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect();
        PolicyRule {
            verbs: v(verbs),
            api_groups: v(groups),
            resources: v(resources),
            ..Default::default()
        }
    }

    #[test]
    fn coverage_as_kube_computes_it() {
        let owner = [rule(&["get", "list"], &[""], &["pods", "*/status"])];
        assert!(
            uncovered(
                &owner,
                &[rule(&["get"], &[""], &["pods", "deployments/status"])]
            )
            .is_empty()
        );
        let missing = uncovered(
            &owner,
            &[rule(&["get", "delete"], &["", "apps"], &["pods"])],
        );
        let described: Vec<String> = compact(missing).iter().map(compact_string).collect();
        assert_eq!(
            described,
            [
                "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}",
                "{APIGroups:[\"apps\"], Resources:[\"pods\"], Verbs:[\"get\" \"delete\"]}",
            ]
        );
        let star = [rule(&["*"], &["*"], &["*"])];
        assert!(uncovered(&star, &[rule(&["escalate"], &["x"], &["y/z"])]).is_empty());
        let named = PolicyRule {
            resource_names: vec!["a".into()],
            ..rule(&["get"], &[""], &["secrets"])
        };
        assert!(
            !uncovered(
                std::slice::from_ref(&named),
                &[rule(&["get"], &[""], &["secrets"])]
            )
            .is_empty()
        );
        assert!(uncovered(&[rule(&["get"], &[""], &["secrets"])], &[named]).is_empty());
        let urls = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/apis/*".into()],
            ..Default::default()
        };
        let want = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/apis/v1".into()],
            ..Default::default()
        };
        assert!(uncovered(&[urls], &[want]).is_empty());
    }
}
