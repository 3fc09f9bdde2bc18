//! The resources this server serves: the built-in catalogue plus whatever the stored
//! CustomResourceDefinitions declare. Swapped whole (copy on write) when a CRD changes.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use tidegate_schema::ResourceInfo;

/// Subresources of built-in kinds served besides every `status` and `scale`, as `(plural,
/// subresource)` (the connect ones answer as kube-apiserver does without a kubelet); the rest
/// of Kubernetes' list (`pods/proxy`, `pods/resize`, `nodes/proxy`) is neither served nor
/// advertised.
const SERVED_SUBRESOURCES: &[(&str, &str)] = &[
    ("serviceaccounts", "token"),
    ("pods", "log"),
    ("pods", "eviction"),
    ("pods", "binding"),
    ("pods", "ephemeralcontainers"),
    ("pods", "exec"),
    ("pods", "attach"),
    ("pods", "portforward"),
    ("services", "proxy"),
    ("namespaces", "finalize"),
    ("certificatesigningrequests", "approval"),
];

/// An immutable view of every served resource.
#[derive(Default)]
pub struct Catalogue {
    /// Every served resource, in discovery order.
    pub resources: Vec<Arc<ResourceInfo>>,
    by_gvr: HashMap<(String, String, String), Arc<ResourceInfo>>,
    /// CRD name → the resources it serves.
    crds: HashMap<String, Vec<Arc<ResourceInfo>>>,
}

/// One API group with its versions, preferred first.
pub struct GroupVersions {
    /// Group name (empty for core).
    pub name: String,
    /// Versions, preferred first.
    pub versions: Vec<String>,
}

pub use tidegate_schema::version_priority;

impl Catalogue {
    fn rebuild(builtin: &[ResourceInfo], crds: HashMap<String, Vec<Arc<ResourceInfo>>>) -> Self {
        let mut resources: Vec<Arc<ResourceInfo>> = builtin
            .iter()
            .cloned()
            .map(|mut r| {
                // What is not served is not advertised.
                r.subresources.retain(|s| {
                    matches!(s.name.as_str(), "status" | "scale")
                        || SERVED_SUBRESOURCES.contains(&(r.plural.as_str(), s.name.as_str()))
                });
                Arc::new(r)
            })
            .collect();
        let mut custom: Vec<Arc<ResourceInfo>> = crds.values().flatten().cloned().collect();
        custom.sort_by(|a, b| {
            a.group
                .cmp(&b.group)
                .then_with(|| version_priority(&b.version).cmp(&version_priority(&a.version)))
                .then_with(|| a.version.cmp(&b.version))
                .then_with(|| a.plural.cmp(&b.plural))
        });
        resources.extend(custom);
        let by_gvr = resources
            .iter()
            .map(|r| {
                (
                    (r.group.clone(), r.version.clone(), r.plural.clone()),
                    r.clone(),
                )
            })
            .collect();
        Catalogue {
            resources,
            by_gvr,
            crds,
        }
    }

    /// The resource at `group/version/plural`.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.by_gvr
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// The served resource of a kind at a group-version.
    pub fn lookup_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .cloned()
    }

    /// Groups in discovery order, each with its versions, preferred first.
    pub fn groups(&self) -> Vec<GroupVersions> {
        let mut out: Vec<GroupVersions> = Vec::new();
        for r in &self.resources {
            match out.iter_mut().find(|g| g.name == r.group) {
                Some(g) => {
                    if !g.versions.contains(&r.version) {
                        g.versions.push(r.version.clone());
                    }
                }
                None => out.push(GroupVersions {
                    name: r.group.clone(),
                    versions: vec![r.version.clone()],
                }),
            }
        }
        for g in &mut out {
            g.versions
                .sort_by(|a, b| version_priority(b).cmp(&version_priority(a)).then(a.cmp(b)));
        }
        out
    }

    /// Resources served at one group-version, in discovery order.
    pub fn resources_of(&self, group: &str, version: &str) -> Vec<Arc<ResourceInfo>> {
        self.resources
            .iter()
            .filter(|r| r.group == group && r.version == version)
            .cloned()
            .collect()
    }

    /// Whether a CRD other than `except` already serves `group/plural`.
    pub fn plural_taken(&self, group: &str, plural: &str, except: &str) -> bool {
        self.crds.iter().any(|(name, rs)| {
            name != except && rs.iter().any(|r| r.group == group && r.plural == plural)
        }) || self
            .resources
            .iter()
            .any(|r| !r.custom && r.group == group && r.plural == plural)
    }
}

/// The live catalogue, shared by all handlers.
pub struct Registry {
    current: RwLock<Arc<Catalogue>>,
    generation: std::sync::atomic::AtomicU64,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

impl Registry {
    /// The built-in catalogue, no CRDs yet.
    pub fn new() -> Registry {
        Registry {
            current: RwLock::new(Arc::new(Catalogue::rebuild(
                tidegate_schema::builtin_resources(),
                HashMap::new(),
            ))),
            generation: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Counts changes to the catalogue (for OpenAPI hashes).
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The current catalogue.
    pub fn snapshot(&self) -> Arc<Catalogue> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Serves (or stops serving, with an empty list) the resources of one CRD.
    pub fn set_crd(&self, crd_name: &str, resources: Vec<ResourceInfo>) {
        let mut cur = self.current.write().unwrap_or_else(|e| e.into_inner());
        let mut crds = cur.crds.clone();
        let existing = crds
            .get(crd_name)
            .map(|v| v.iter().map(|r| (**r).clone()).collect::<Vec<_>>());
        if existing.as_ref() == Some(&resources) || (existing.is_none() && resources.is_empty()) {
            return;
        }
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if resources.is_empty() {
            crds.remove(crd_name);
        } else {
            crds.insert(
                crd_name.to_string(),
                resources.into_iter().map(Arc::new).collect(),
            );
        }
        *cur = Arc::new(Catalogue::rebuild(
            tidegate_schema::builtin_resources(),
            crds,
        ));
    }
}

/// The storage key prefix of a resource: `group/plural`.
pub fn storage_resource(r: &ResourceInfo) -> String {
    if crate::event_versions::is_events_v1(r) {
        // One store for both kinds of Event, as kube-apiserver keeps them.
        return "/events".into();
    }
    format!("{}/{}", r.group, r.plural)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_priority_orders_like_kubernetes() {
        let mut v = vec![
            "v1beta1", "v1", "v2alpha1", "v2", "v1alpha1", "v1beta2", "foo",
        ];
        v.sort_by_key(|x| std::cmp::Reverse(version_priority(x)));
        assert_eq!(
            v,
            vec![
                "v2", "v1", "v1beta2", "v1beta1", "v2alpha1", "v1alpha1", "foo"
            ]
        );
    }

    #[test]
    fn autoscaling_prefers_v2() {
        let reg = Registry::new();
        let cat = reg.snapshot();
        let groups = cat.groups();
        let auto = groups
            .iter()
            .find(|g| g.name == "autoscaling")
            .expect("autoscaling");
        assert_eq!(auto.versions, vec!["v2", "v1"]);
        assert_eq!(groups[0].name, "");
        assert!(cat.lookup("apps", "v1", "deployments").is_some());
    }
}
