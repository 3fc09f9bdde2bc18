//! Role-based access control as kube-apiserver's RBAC authorizer decides it: a request is
//! allowed when a rule of a role bound to the user allows it — ClusterRoleBindings for every
//! namespace, RoleBindings (to a Role of their namespace or to a ClusterRole) for theirs.
//! Members of `system:masters` are allowed everything first, as kube-apiserver's privileged
//! group authorizer allows them. Rules are read from the store on each decision.

use serde_json::Value;

use super::UserInfo;
use super::attributes::Attributes;
use crate::store::{Key, Store};

const GROUP: &str = "rbac.authorization.k8s.io";

/// The group allowed everything.
pub const PRIVILEGED_GROUP: &str = "system:masters";

/// A `PolicyRule`.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    /// Verbs, `*` for all.
    #[serde(default)]
    pub verbs: Vec<String>,
    /// API groups, `*` for all.
    #[serde(default, rename = "apiGroups", skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    /// Resources (`pods`, `pods/log`, `*/scale`, `*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Object names; empty for all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    /// Non-resource paths (`/healthz`, `/api/*`).
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub non_resource_urls: Vec<String>,
}

fn has(items: &[String], wanted: &str) -> bool {
    items.iter().any(|i| i == wanted)
}

impl PolicyRule {
    /// Whether this rule allows the request (kube's `RuleAllows`).
    pub fn allows(&self, a: &Attributes) -> bool {
        let verb = has(&self.verbs, "*") || has(&self.verbs, &a.verb);
        if !a.resource_request {
            return verb
                && self.non_resource_urls.iter().any(|u| {
                    u == "*"
                        || *u == a.path
                        || u.strip_suffix('*').is_some_and(|p| a.path.starts_with(p))
                });
        }
        let combined = if a.subresource.is_empty() {
            a.resource.clone()
        } else {
            format!("{}/{}", a.resource, a.subresource)
        };
        verb && (has(&self.api_groups, "*") || has(&self.api_groups, &a.api_group))
            && self.resources.iter().any(|r| {
                r == "*"
                    || *r == combined
                    || (!a.subresource.is_empty() && *r == format!("*/{}", a.subresource))
            })
            && (self.resource_names.is_empty() || has(&self.resource_names, &a.name))
    }
}

/// A binding's subject.
#[derive(Debug, Clone, Default, serde::Deserialize)]
struct Subject {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
}

impl Subject {
    /// kube's `appliesToUser`; `namespace` is the binding's (empty for ClusterRoleBindings).
    fn applies_to(&self, user: &UserInfo, namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => user.username == self.name,
            "Group" => user.groups.contains(&self.name),
            "ServiceAccount" => {
                let ns = if self.namespace.is_empty() {
                    namespace
                } else {
                    &self.namespace
                };
                !ns.is_empty()
                    && user.username == format!("system:serviceaccount:{ns}:{}", self.name)
            }
            _ => false,
        }
    }
}

fn subjects(binding: &Value) -> Vec<Subject> {
    binding
        .get("subjects")
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default()
}

fn rules(role: &Value) -> Vec<PolicyRule> {
    role.get("rules")
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default()
}

/// Where a rule came from, as kube names it in its reasons.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// `ClusterRoleBinding` or `RoleBinding`.
    pub binding_kind: &'static str,
    /// The binding's name.
    pub binding: String,
    /// The binding's namespace (RoleBindings).
    pub namespace: String,
    /// `ClusterRole` or `Role`.
    pub role_kind: String,
    /// The role's name.
    pub role: String,
    /// The subject that matched, as kube describes it (`Group "devs"`, `ServiceAccount
    /// "name/namespace"`).
    pub subject: String,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let binding = if self.namespace.is_empty() {
            self.binding.clone()
        } else {
            format!("{}/{}", self.binding, self.namespace)
        };
        write!(
            f,
            "{} {binding:?} of {} {:?} to {}",
            self.binding_kind, self.role_kind, self.role, self.subject
        )
    }
}

impl Subject {
    /// kube's `describeSubject`.
    fn describe(&self, binding_namespace: &str) -> String {
        if self.kind == "ServiceAccount" {
            let ns = if self.namespace.is_empty() {
                binding_namespace
            } else {
                &self.namespace
            };
            format!("{} {:?}", self.kind, format!("{}/{ns}", self.name))
        } else {
            format!("{} {:?}", self.kind, self.name)
        }
    }
}

/// The first subject of `binding` that is `user`, described.
fn matching_subject(binding: &Value, user: &UserInfo, namespace: &str) -> Option<String> {
    subjects(binding)
        .iter()
        .find(|s| s.applies_to(user, namespace))
        .map(|s| s.describe(namespace))
}

/// kube's `VisitRulesFor`: every rule bound to `user` that applies in `namespace` (cluster
/// bindings first), with its source, or the error of a role that could not be found. The
/// visitor returns false to stop.
pub fn visit_rules(
    store: &Store,
    user: &UserInfo,
    namespace: &str,
    mut visit: impl FnMut(&Source, Result<&PolicyRule, String>) -> bool,
) {
    let (crbs, _) = store.list(&format!("{GROUP}/clusterrolebindings"), None, None);
    if !visit_bindings(store, user, "", &crbs, &mut visit) || namespace.is_empty() {
        return;
    }
    let (rbs, _) = store.list(&format!("{GROUP}/rolebindings"), Some(namespace), None);
    visit_bindings(store, user, namespace, &rbs, &mut visit);
}

/// Visits the rules of the bindings (of `namespace`, "" for ClusterRoleBindings) that name
/// `user`; false when the visitor stopped.
fn visit_bindings(
    store: &Store,
    user: &UserInfo,
    namespace: &str,
    bindings: &[(Key, std::sync::Arc<Value>)],
    visit: &mut impl FnMut(&Source, Result<&PolicyRule, String>) -> bool,
) -> bool {
    for (_, b) in bindings {
        let Some(subject) = matching_subject(b, user, namespace) else {
            continue;
        };
        let role = b
            .pointer("/roleRef/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = b
            .pointer("/roleRef/kind")
            .and_then(Value::as_str)
            .unwrap_or("");
        let source = Source {
            binding_kind: if namespace.is_empty() {
                "ClusterRoleBinding"
            } else {
                "RoleBinding"
            },
            binding: name_of(b),
            namespace: namespace.to_string(),
            role_kind: kind.to_string(),
            role: role.to_string(),
            subject,
        };
        // ClusterRoleBindings may only name ClusterRoles; RoleBindings either.
        let found = match kind {
            "ClusterRole" => Ok(store.get(&Key::new(&format!("{GROUP}/clusterroles"), "", role))),
            "Role" if !namespace.is_empty() => {
                Ok(store.get(&Key::new(&format!("{GROUP}/roles"), namespace, role)))
            }
            other => Err(format!("unsupported role reference kind: {other:?}")),
        };
        let keep_going = match found {
            Ok(Some(r)) => rules(&r).iter().all(|rule| visit(&source, Ok(rule))),
            Ok(None) => visit(
                &source,
                Err(format!(
                    "{}.rbac.authorization.k8s.io {role:?} not found",
                    kind.to_ascii_lowercase()
                )),
            ),
            Err(e) => visit(&source, Err(e)),
        };
        if !keep_going {
            return false;
        }
    }
    true
}

fn name_of(obj: &Value) -> String {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// An authorization decision and kube's reason for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Allowed.
    pub allowed: bool,
    /// `RBAC: allowed by …`, or the errors met while looking (empty when none).
    pub reason: String,
}

/// Decides a request: `system:masters` first, then RBAC.
pub fn authorize(store: &Store, a: &Attributes) -> Decision {
    if a.user.groups.iter().any(|g| g == PRIVILEGED_GROUP) {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    let mut errors: Vec<String> = Vec::new();
    let mut allowed_by: Option<String> = None;
    visit_rules(store, &a.user, &a.namespace, |source, rule| match rule {
        Ok(rule) if rule.allows(a) => {
            allowed_by = Some(format!("RBAC: allowed by {source}"));
            false
        }
        Ok(_) => true,
        Err(e) => {
            errors.push(e);
            true
        }
    });
    match allowed_by {
        Some(reason) => Decision {
            allowed: true,
            reason,
        },
        None => Decision {
            allowed: false,
            reason: match errors.len() {
                0 => String::new(),
                1 => format!("RBAC: {}", errors[0]),
                _ => format!("RBAC: [{}]", errors.join(", ")),
            },
        },
    }
}

/// Every rule that applies to `user` in `namespace` (`SelfSubjectRulesReview`), and whether
/// some could not be read.
pub fn rules_for(
    store: &Store,
    user: &UserInfo,
    namespace: &str,
) -> (Vec<PolicyRule>, Vec<String>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    visit_rules(store, user, namespace, |_, rule| {
        match rule {
            Ok(r) => out.push(r.clone()),
            Err(e) => errors.push(e),
        }
        true
    });
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        s.split(',').map(str::to_string).collect()
    }

    fn rule(r: &Value) -> Value {
        let part = |i: usize| split(r[i].as_str().unwrap());
        serde_json::json!({"verbs": part(0), "apiGroups": part(1), "resources": part(2),
                           "nonResourceURLs": part(3)})
    }

    fn subject(s: &str) -> Value {
        let (kind, name) = s.split_once(':').unwrap();
        match name.split_once('@') {
            Some((n, ns)) => serde_json::json!({"kind": kind, "name": n, "namespace": ns}),
            None => serde_json::json!({"kind": kind, "name": name}),
        }
    }

    fn request(r: &Value) -> Attributes {
        if let Some(path) = r.get("path") {
            let groups = r["groups"].as_str().map(split).unwrap_or_default();
            return Attributes {
                user: UserInfo {
                    username: r["user"].as_str().unwrap_or_default().into(),
                    groups,
                    ..Default::default()
                },
                verb: r["verb"].as_str().unwrap().into(),
                path: path.as_str().unwrap().into(),
                ..Default::default()
            };
        }
        let f = |i: usize| r[i].as_str().unwrap().to_string();
        Attributes {
            user: UserInfo {
                username: f(0),
                groups: split(&f(1)),
                ..Default::default()
            },
            verb: f(2),
            resource_request: true,
            resource: f(3),
            subresource: f(4),
            namespace: f(5),
            api_group: f(6),
            ..Default::default()
        }
    }

    fn create(store: &Store, resource: &str, ns: &str, name: &str, obj: Value) {
        let key = Key::new(&format!("{GROUP}/{resource}"), ns, name);
        crate::objects::create_if_missing(store, &key, obj).unwrap();
    }

    /// Kubernetes' `TestAuthorizer` cases (and one of Tidegate's), as data.
    #[test]
    fn kubernetes_authorizer_cases() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/rbac/authorizer.json");
        let data: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        for (i, case) in data["cases"].as_array().unwrap().iter().enumerate() {
            let store = Store::open(None).unwrap();
            for (name, rules) in case["clusterRoles"].as_object().unwrap() {
                let rules: Vec<Value> = rules.as_array().unwrap().iter().map(rule).collect();
                create(
                    &store,
                    "clusterroles",
                    "",
                    name,
                    serde_json::json!({
                    "metadata": {"name": name}, "rules": rules}),
                );
            }
            for (key, rules) in case["roles"].as_object().into_iter().flatten() {
                let (ns, name) = key.split_once('/').unwrap();
                let rules: Vec<Value> = rules.as_array().unwrap().iter().map(rule).collect();
                create(
                    &store,
                    "roles",
                    ns,
                    name,
                    serde_json::json!({
                    "metadata": {"name": name, "namespace": ns}, "rules": rules}),
                );
            }
            for (j, b) in case["bindings"].as_array().unwrap().iter().enumerate() {
                let ns = b[0].as_str().unwrap();
                let subjects: Vec<Value> = b[3]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| subject(s.as_str().unwrap()))
                    .collect();
                let name = format!("b{j}");
                let obj = serde_json::json!({"metadata": {"name": name},
                    "roleRef": {"kind": b[2], "name": b[1]}, "subjects": subjects});
                let resource = if ns.is_empty() {
                    "clusterrolebindings"
                } else {
                    "rolebindings"
                };
                create(&store, resource, ns, &name, obj);
            }
            for r in case["pass"].as_array().unwrap() {
                let d = authorize(&store, &request(r));
                assert!(d.allowed, "case {i}: incorrectly restricted {r}");
                assert!(d.reason.starts_with("RBAC: allowed by "), "{}", d.reason);
            }
            for r in case["fail"].as_array().unwrap() {
                assert!(
                    !authorize(&store, &request(r)).allowed,
                    "case {i}: incorrectly passed {r}"
                );
            }
        }
    }

    #[test]
    fn reasons_name_the_binding_and_missing_roles() {
        let store = Store::open(None).unwrap();
        create(
            &store,
            "clusterroles",
            "",
            "view",
            serde_json::json!({"metadata": {"name": "view"},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
        );
        create(
            &store,
            "rolebindings",
            "team",
            "viewers",
            serde_json::json!({
            "metadata": {"name": "viewers", "namespace": "team"},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "ci"}]}),
        );
        create(
            &store,
            "clusterrolebindings",
            "",
            "gone",
            serde_json::json!({
            "metadata": {"name": "gone"},
            "roleRef": {"kind": "ClusterRole", "name": "missing"},
            "subjects": [{"kind": "Group", "name": "system:serviceaccounts"}]}),
        );
        let a = Attributes {
            user: UserInfo {
                username: "system:serviceaccount:team:ci".into(),
                groups: vec!["system:serviceaccounts".into()],
                ..Default::default()
            },
            verb: "get".into(),
            resource_request: true,
            resource: "pods".into(),
            namespace: "team".into(),
            ..Default::default()
        };
        assert_eq!(
            authorize(&store, &a),
            Decision {
                allowed: true,
                reason: "RBAC: allowed by RoleBinding \"viewers/team\" of ClusterRole \"view\" to ServiceAccount \"ci/team\"".into()
            }
        );
        let mut denied = a.clone();
        denied.verb = "delete".into();
        assert_eq!(
            authorize(&store, &denied),
            Decision {
                allowed: false,
                reason: "RBAC: clusterrole.rbac.authorization.k8s.io \"missing\" not found".into()
            }
        );
        let mut admin = denied.clone();
        admin.user.groups.push(PRIVILEGED_GROUP.into());
        assert!(authorize(&store, &admin).allowed);
    }
}
