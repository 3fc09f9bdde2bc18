//! What a request asks to do, as kube-apiserver's `RequestInfoFactory` reads it from the
//! method, path and query (verb, API group, resource, subresource, namespace, name; or a
//! non-resource path), and kube's words for a refusal.

use axum::http::Method;

use super::UserInfo;
use crate::error::ApiError;
use crate::route::{ResourcePath, Route};

/// The attributes an authorizer decides on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`,
    /// `impersonate`, … (lower-case method for non-resource requests).
    pub verb: String,
    /// Whether a resource is addressed (else `path` is).
    pub resource_request: bool,
    /// API group ("" for core).
    pub api_group: String,
    /// Version.
    pub api_version: String,
    /// Plural resource.
    pub resource: String,
    /// Subresource.
    pub subresource: String,
    /// Namespace ("" cluster-wide).
    pub namespace: String,
    /// Object name.
    pub name: String,
    /// The URL path (non-resource requests).
    pub path: String,
}

impl Default for UserInfo {
    fn default() -> Self {
        UserInfo {
            username: String::new(),
            uid: String::new(),
            groups: Vec::new(),
            extra: serde_json::json!({}),
        }
    }
}

/// Whether the query asks for a watch: a `watch` parameter other than `false` or `0`, as
/// kube-apiserver's request info reads it.
fn watch_query(query: &str) -> bool {
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "watch")
        .is_some_and(|(_, v)| crate::rest::listoptions::go_bool(&v))
}

impl Attributes {
    /// The attributes of a request to `route` (or to an unserved `path`).
    pub fn of_request(
        user: &UserInfo,
        method: &Method,
        path: &str,
        query: &str,
        route: Option<&Route>,
    ) -> Attributes {
        let mut a = Attributes {
            user: user.clone(),
            path: path.to_string(),
            ..Default::default()
        };
        let Some(Route::Resource(r)) = route else {
            a.verb = method.as_str().to_ascii_lowercase();
            return a;
        };
        a.fill(r, method, query);
        a
    }

    fn fill(&mut self, r: &ResourcePath, method: &Method, query: &str) {
        self.resource_request = true;
        self.api_group = r.group.clone();
        self.api_version = r.version.clone();
        self.resource = r.plural.clone();
        self.subresource = r.subresource.clone().unwrap_or_default();
        self.name = r.name.clone().unwrap_or_default();
        self.namespace = r.namespace.clone().unwrap_or_default();
        if self.resource == "namespaces" && self.namespace.is_empty() {
            // A namespace object is addressed in its own namespace.
            self.namespace = self.name.clone();
        }
        let named = !self.name.is_empty();
        self.verb = match *method {
            Method::POST => "create",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE if named => "delete",
            Method::DELETE => "deletecollection",
            Method::GET | Method::HEAD if r.watch_prefix || watch_query(query) => "watch",
            Method::GET | Method::HEAD if named => "get",
            Method::GET | Method::HEAD => "list",
            _ => "",
        }
        .to_string();
        if self.verb.is_empty() {
            self.verb = method.as_str().to_ascii_lowercase();
        }
    }

    /// kube's `forbiddenMessage`.
    pub fn forbidden_message(&self) -> String {
        let user = &self.user.username;
        if !self.resource_request {
            return format!("User {user:?} cannot {} path {:?}", self.verb, self.path);
        }
        let mut resource = self.resource.clone();
        if !self.subresource.is_empty() {
            resource = format!("{resource}/{}", self.subresource);
        }
        if self.namespace.is_empty() {
            format!(
                "User {user:?} cannot {} resource {resource:?} in API group {:?} at the cluster scope",
                self.verb, self.api_group
            )
        } else {
            format!(
                "User {user:?} cannot {} resource {resource:?} in API group {:?} in the namespace {:?}",
                self.verb, self.api_group, self.namespace
            )
        }
    }

    /// The 403 for a refusal with the authorizer's `reason` (kube's `responsewriters.Forbidden`).
    pub fn forbidden(&self, reason: &str) -> ApiError {
        let mut why = self.forbidden_message();
        if !reason.is_empty() {
            why = format!("{why}: {reason}");
        }
        if self.resource_request {
            ApiError::forbidden_request(&self.api_group, &self.resource, &self.name, &why)
        } else {
            ApiError::forbidden_request("", "", "", &why)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(method: Method, path: &str, query: &str) -> Attributes {
        let route = crate::route::parse(path);
        Attributes::of_request(
            &UserInfo {
                username: "jane".into(),
                ..Default::default()
            },
            &method,
            path,
            query,
            route.as_ref(),
        )
    }

    #[test]
    fn request_info_as_kube_reads_it() {
        for (method, path, query, verb, group, resource, sub, ns, name) in [
            (
                Method::GET,
                "/api/v1/namespaces/a/pods",
                "",
                "list",
                "",
                "pods",
                "",
                "a",
                "",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/a/pods",
                "watch=true",
                "watch",
                "",
                "pods",
                "",
                "a",
                "",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/a/pods/p",
                "",
                "get",
                "",
                "pods",
                "",
                "a",
                "p",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/a/pods/p/log",
                "",
                "get",
                "",
                "pods",
                "log",
                "a",
                "p",
            ),
            (
                Method::POST,
                "/apis/apps/v1/namespaces/a/deployments",
                "",
                "create",
                "apps",
                "deployments",
                "",
                "a",
                "",
            ),
            (
                Method::PUT,
                "/apis/apps/v1/namespaces/a/deployments/d/status",
                "",
                "update",
                "apps",
                "deployments",
                "status",
                "a",
                "d",
            ),
            (
                Method::PATCH,
                "/apis/apps/v1/namespaces/a/deployments/d/scale",
                "",
                "patch",
                "apps",
                "deployments",
                "scale",
                "a",
                "d",
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/a/configmaps",
                "",
                "deletecollection",
                "",
                "configmaps",
                "",
                "a",
                "",
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/a/configmaps/c",
                "",
                "delete",
                "",
                "configmaps",
                "",
                "a",
                "c",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/a",
                "",
                "get",
                "",
                "namespaces",
                "",
                "a",
                "a",
            ),
            (
                Method::GET,
                "/api/v1/nodes",
                "",
                "list",
                "",
                "nodes",
                "",
                "",
                "",
            ),
        ] {
            let a = attrs(method, path, query);
            assert!(a.resource_request, "{path}");
            assert_eq!(
                (
                    a.verb.as_str(),
                    a.api_group.as_str(),
                    a.resource.as_str(),
                    a.subresource.as_str(),
                    a.namespace.as_str(),
                    a.name.as_str()
                ),
                (verb, group, resource, sub, ns, name),
                "{path}"
            );
        }
        let a = attrs(Method::GET, "/healthz/ping", "");
        assert!(!a.resource_request);
        assert_eq!((a.verb.as_str(), a.path.as_str()), ("get", "/healthz/ping"));
    }

    #[test]
    fn refusals_as_kube_words_them() {
        let a = attrs(Method::GET, "/api/v1/namespaces/y/secrets", "");
        let e = a.forbidden("");
        assert_eq!(
            e.message,
            "secrets is forbidden: User \"jane\" cannot list resource \"secrets\" in API group \"\" in the namespace \"y\""
        );
        let a = attrs(
            Method::GET,
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin",
            "",
        );
        assert_eq!(
            a.forbidden("").message,
            "clusterroles.rbac.authorization.k8s.io \"admin\" is forbidden: User \"jane\" cannot get resource \"clusterroles\" in API group \"rbac.authorization.k8s.io\" at the cluster scope"
        );
        let a = attrs(Method::GET, "/logs", "");
        assert_eq!(
            a.forbidden("RBAC: x").message,
            "forbidden: User \"jane\" cannot get path \"/logs\": RBAC: x"
        );
    }
}
