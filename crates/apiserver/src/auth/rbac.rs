//! Role-based access control as kube-apiserver's RBAC authorizer decides it: a request is
//! allowed when a rule of a role bound to the user allows it — ClusterRoleBindings for every
//! namespace, RoleBindings (to a Role of their namespace or to a ClusterRole) for theirs.
//! Members of `system:masters` are allowed everything first, as kube-apiserver's privileged
//! group authorizer allows them. Decisions read an index of the store's roles and bindings ([`Cache`]), rebuilt
//! after any of them is written.

use serde_json::Value;

use super::UserInfo;
use super::attributes::Attributes;
use std::collections::HashMap;
use std::sync::Arc;

use crate::store::Store;

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
                    && user
                        .username
                        .strip_prefix("system:serviceaccount:")
                        .and_then(|rest| rest.strip_prefix(ns))
                        .and_then(|rest| rest.strip_prefix(':'))
                        == Some(self.name.as_str())
            }
            _ => false,
        }
    }
}

fn rules(role: &Value) -> Vec<PolicyRule> {
    role.get("rules")
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default()
}

/// Where a rule came from, as kube names it in its reasons (borrowed from the index: made
/// for every binding visited, described only when a reason needs it).
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// `ClusterRoleBinding` or `RoleBinding`.
    pub binding_kind: &'static str,
    /// The binding's name.
    pub binding: &'a str,
    /// The binding's namespace (RoleBindings).
    pub namespace: &'a str,
    /// `ClusterRole` or `Role`.
    pub role_kind: &'a str,
    /// The role's name.
    pub role: &'a str,
    /// The subject that matched.
    subject: &'a Subject,
}

impl std::fmt::Display for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let binding = if self.namespace.is_empty() {
            self.binding.to_string()
        } else {
            format!("{}/{}", self.binding, self.namespace)
        };
        write!(
            f,
            "{} {binding:?} of {} {:?} to {}",
            self.binding_kind,
            self.role_kind,
            self.role,
            self.subject.describe(self.namespace)
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

/// A binding as the authorizer needs it.
#[derive(Debug)]
struct Binding {
    name: String,
    role_kind: String,
    role: String,
    subjects: Vec<Subject>,
}

/// The bindings of one namespace (or the ClusterRoleBindings), in the store's order, with the
/// positions of those naming each user and group.
#[derive(Debug, Default)]
struct Bindings {
    all: Vec<Binding>,
    by_user: HashMap<String, Vec<usize>>,
    by_group: HashMap<String, Vec<usize>>,
}

impl Bindings {
    fn push(&mut self, b: Binding, namespace: &str) {
        let at = self.all.len();
        for s in &b.subjects {
            let user = match s.kind.as_str() {
                "User" => Some(s.name.clone()),
                "ServiceAccount" => {
                    let ns = if s.namespace.is_empty() {
                        namespace
                    } else {
                        &s.namespace
                    };
                    (!ns.is_empty()).then(|| format!("system:serviceaccount:{ns}:{}", s.name))
                }
                _ => None,
            };
            let slot = match (user, s.kind.as_str()) {
                (Some(u), _) => self.by_user.entry(u).or_default(),
                (None, "Group") => self.by_group.entry(s.name.clone()).or_default(),
                _ => continue,
            };
            if slot.last() != Some(&at) {
                slot.push(at);
            }
        }
        self.all.push(b);
    }

    /// The bindings that may name `user`, in order.
    fn for_user(&self, user: &UserInfo) -> Vec<&Binding> {
        let mut at: Vec<usize> = self
            .by_user
            .get(&user.username)
            .into_iter()
            .chain(user.groups.iter().filter_map(|g| self.by_group.get(g)))
            .flatten()
            .copied()
            .collect();
        at.sort_unstable();
        at.dedup();
        at.into_iter().filter_map(|i| self.all.get(i)).collect()
    }
}

/// The RBAC objects of a store, parsed and indexed by subject: what every decision reads.
#[derive(Debug, Default)]
pub struct RbacIndex {
    cluster_bindings: Bindings,
    role_bindings: HashMap<String, Bindings>,
    cluster_roles: HashMap<String, Vec<PolicyRule>>,
    roles: HashMap<(String, String), Vec<PolicyRule>>,
}

/// The RBAC resources, as the store names them.
pub const RESOURCES: [&str; 4] = [
    "rbac.authorization.k8s.io/clusterrolebindings",
    "rbac.authorization.k8s.io/rolebindings",
    "rbac.authorization.k8s.io/clusterroles",
    "rbac.authorization.k8s.io/roles",
];

fn binding_of(obj: &Value) -> Binding {
    let s = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Binding {
        name: s("/metadata/name"),
        role_kind: s("/roleRef/kind"),
        role: s("/roleRef/name"),
        subjects: obj
            .get("subjects")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default(),
    }
}

impl RbacIndex {
    /// Reads and indexes the store's roles and bindings.
    pub fn build(store: &Store) -> RbacIndex {
        let mut index = RbacIndex::default();
        let [crbs, rbs, crs, rs] = RESOURCES;
        for (_, b) in store.list(crbs, None, None).0 {
            index.cluster_bindings.push(binding_of(&b), "");
        }
        for (key, b) in store.list(rbs, None, None).0 {
            index
                .role_bindings
                .entry(key.namespace.clone())
                .or_default()
                .push(binding_of(&b), &key.namespace);
        }
        for (key, r) in store.list(crs, None, None).0 {
            index.cluster_roles.insert(key.name.clone(), rules(&r));
        }
        for (key, r) in store.list(rs, None, None).0 {
            index
                .roles
                .insert((key.namespace.clone(), key.name.clone()), rules(&r));
        }
        index
    }

    /// The rules of the ClusterRole `name` (namespace "") or the Role `namespace/name`.
    pub fn role(&self, namespace: &str, name: &str) -> Option<&[PolicyRule]> {
        if namespace.is_empty() {
            self.cluster_roles.get(name).map(Vec::as_slice)
        } else {
            self.roles
                .get(&(namespace.to_string(), name.to_string()))
                .map(Vec::as_slice)
        }
    }
}

/// A store's [`RbacIndex`], rebuilt when an RBAC object was written since it was made.
#[derive(Default)]
pub struct Cache {
    current: std::sync::RwLock<Option<(u64, Arc<RbacIndex>)>>,
}

impl Cache {
    /// The index of `store` as of now.
    pub fn index(&self, store: &Store) -> Arc<RbacIndex> {
        // Read before building: a write landing during the build leaves the index marked
        // older than its content, so the next call builds again.
        let written = store.last_written(&RESOURCES);
        if let Some((at, index)) = self
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            && *at == written
        {
            return index.clone();
        }
        let index = Arc::new(RbacIndex::build(store));
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        if current.as_ref().is_none_or(|(at, _)| *at <= written) {
            *current = Some((written, index.clone()));
        }
        index
    }
}

/// kube's `VisitRulesFor`: every rule bound to `user` that applies in `namespace` (cluster
/// bindings first), with its source, or the error of a role that could not be found. The
/// visitor returns false to stop.
pub fn visit_rules(
    index: &RbacIndex,
    user: &UserInfo,
    namespace: &str,
    mut visit: impl FnMut(&Source, Result<&PolicyRule, String>) -> bool,
) {
    if !visit_bindings(index, user, "", &index.cluster_bindings, &mut visit) || namespace.is_empty()
    {
        return;
    }
    if let Some(rbs) = index.role_bindings.get(namespace) {
        visit_bindings(index, user, namespace, rbs, &mut visit);
    }
}

/// Visits the rules of the bindings (of `namespace`, "" for ClusterRoleBindings) that name
/// `user`; false when the visitor stopped.
fn visit_bindings(
    index: &RbacIndex,
    user: &UserInfo,
    namespace: &str,
    bindings: &Bindings,
    visit: &mut impl FnMut(&Source, Result<&PolicyRule, String>) -> bool,
) -> bool {
    for b in bindings.for_user(user) {
        let Some(subject) = b.subjects.iter().find(|s| s.applies_to(user, namespace)) else {
            continue;
        };
        let source = Source {
            binding_kind: if namespace.is_empty() {
                "ClusterRoleBinding"
            } else {
                "RoleBinding"
            },
            binding: &b.name,
            namespace,
            role_kind: &b.role_kind,
            role: &b.role,
            subject,
        };
        // ClusterRoleBindings may only name ClusterRoles; RoleBindings either.
        let found = match b.role_kind.as_str() {
            "ClusterRole" => Ok(index.role("", &b.role)),
            "Role" if !namespace.is_empty() => Ok(index.role(namespace, &b.role)),
            other => Err(format!("unsupported role reference kind: {other:?}")),
        };
        let keep_going = match found {
            Ok(Some(rules)) => rules.iter().all(|rule| visit(&source, Ok(rule))),
            Ok(None) => visit(
                &source,
                Err(format!(
                    "{}.rbac.authorization.k8s.io {:?} not found",
                    b.role_kind.to_ascii_lowercase(),
                    b.role
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

/// An authorization decision and kube's reason for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Allowed.
    pub allowed: bool,
    /// `RBAC: allowed by …`, or the errors met while looking (empty when none).
    pub reason: String,
}

/// Decides a request: `system:masters` first, then RBAC.
pub fn authorize(index: &RbacIndex, a: &Attributes) -> Decision {
    if a.user.groups.iter().any(|g| g == PRIVILEGED_GROUP) {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    let mut errors: Vec<String> = Vec::new();
    let mut allowed_by: Option<String> = None;
    visit_rules(index, &a.user, &a.namespace, |source, rule| match rule {
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
    index: &RbacIndex,
    user: &UserInfo,
    namespace: &str,
) -> (Vec<PolicyRule>, Vec<String>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    visit_rules(index, user, namespace, |_, rule| {
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
    use crate::store::Key;

    const GROUP: &str = "rbac.authorization.k8s.io";

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
                let d = authorize(&RbacIndex::build(&store), &request(r));
                assert!(d.allowed, "case {i}: incorrectly restricted {r}");
                assert!(d.reason.starts_with("RBAC: allowed by "), "{}", d.reason);
            }
            for r in case["fail"].as_array().unwrap() {
                assert!(
                    !authorize(&RbacIndex::build(&store), &request(r)).allowed,
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
            authorize(&RbacIndex::build(&store), &a),
            Decision {
                allowed: true,
                reason: "RBAC: allowed by RoleBinding \"viewers/team\" of ClusterRole \"view\" to ServiceAccount \"ci/team\"".into()
            }
        );
        let mut denied = a.clone();
        denied.verb = "delete".into();
        assert_eq!(
            authorize(&RbacIndex::build(&store), &denied),
            Decision {
                allowed: false,
                reason: "RBAC: clusterrole.rbac.authorization.k8s.io \"missing\" not found".into()
            }
        );
        let mut admin = denied.clone();
        admin.user.groups.push(PRIVILEGED_GROUP.into());
        assert!(authorize(&RbacIndex::build(&store), &admin).allowed);
    }

    #[test]
    fn the_cached_index_follows_every_rbac_write() {
        let store = Store::open(None).unwrap();
        let cache = Cache::default();
        let a = Attributes {
            user: UserInfo {
                username: "jane".into(),
                ..Default::default()
            },
            verb: "list".into(),
            resource_request: true,
            resource: "secrets".into(),
            namespace: "team".into(),
            ..Default::default()
        };
        assert!(!authorize(&cache.index(&store), &a).allowed);
        create(
            &store,
            "roles",
            "team",
            "reader",
            serde_json::json!({"metadata": {"name": "reader", "namespace": "team"},
            "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["secrets"]}]}),
        );
        let first = cache.index(&store);
        assert!(
            Arc::ptr_eq(&first, &cache.index(&store)),
            "kept while unchanged"
        );
        assert!(
            !authorize(&first, &a).allowed,
            "a role alone grants nothing"
        );
        create(
            &store,
            "rolebindings",
            "team",
            "jane",
            serde_json::json!({"metadata": {"name": "jane", "namespace": "team"},
            "roleRef": {"kind": "Role", "name": "reader"},
            "subjects": [{"kind": "User", "name": "jane"}]}),
        );
        assert!(authorize(&cache.index(&store), &a).allowed, "binding seen");
        // A write elsewhere keeps the index.
        let kept = cache.index(&store);
        crate::objects::create_if_missing(
            &store,
            &Key::new("/configmaps", "team", "c"),
            serde_json::json!({"metadata": {"name": "c", "namespace": "team"}}),
        )
        .unwrap();
        assert!(Arc::ptr_eq(&kept, &cache.index(&store)));
        store
            .mutate::<crate::store::StoreError>(
                &Key::new(&format!("{GROUP}/roles"), "team", "reader"),
                |_| Ok(crate::store::Change::Delete),
            )
            .unwrap();
        let d = authorize(&cache.index(&store), &a);
        assert!(!d.allowed, "role deletion seen");
        assert_eq!(
            d.reason,
            "RBAC: role.rbac.authorization.k8s.io \"reader\" not found"
        );
    }
}
