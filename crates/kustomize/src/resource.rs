//! A resource in a build: the object, where it came from, and the names it had before
//! transformers renamed it (so references and patches written against old names still find it).

use std::fmt;

use serde_json::{Map, Value};

/// Group, version and kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Gvk {
    /// API group; empty for the core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl Gvk {
    /// Splits an `apiVersion` and pairs it with a kind.
    pub fn from_api_version(api_version: &str, kind: &str) -> Gvk {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.to_string()),
        };
        Gvk {
            group,
            version,
            kind: kind.to_string(),
        }
    }

    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether this is a cluster-scoped kind, as kustomize decides it.
    pub fn is_cluster_scoped(&self) -> bool {
        crate::scope::is_cluster_scoped(self)
    }
}

impl fmt::Display for Gvk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}.{}", self.kind, self.version)
        } else {
            write!(f, "{}.{}.{}", self.kind, self.version, self.group)
        }
    }
}

/// A resource's identity: kind and name, in a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ResId {
    /// Group, version, kind.
    pub gvk: Gvk,
    /// metadata.name.
    pub name: String,
    /// metadata.namespace; empty when unset.
    pub namespace: String,
}

impl ResId {
    /// Whether two ids name the same object: same group, version, kind and name, and the same
    /// namespace (unset and `default` are the same).
    pub fn same(&self, other: &ResId) -> bool {
        self.gvk == other.gvk
            && self.name == other.name
            && ns_equal(&self.namespace, &other.namespace)
    }
}

/// kustomize treats an unset namespace and `default` as one.
pub fn ns_equal(a: &str, b: &str) -> bool {
    a == b || (is_default_ns(a) && is_default_ns(b))
}

fn is_default_ns(ns: &str) -> bool {
    ns.is_empty() || ns == "default"
}

impl fmt::Display for ResId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = if self.namespace.is_empty() {
            "[noNs]"
        } else {
            &self.namespace
        };
        write!(f, "{}|{}|{}", self.gvk, ns, self.name)
    }
}

/// How a generated resource combines with one of the same id from a base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    /// A new resource; an existing one is a conflict.
    Create,
    /// Merged into the existing resource.
    Merge,
    /// Replaces the existing resource.
    Replace,
}

/// The builtin generator or transformer that made or changed a resource, as build metadata
/// names it: its kind, and the name and namespace of its configuration object if it had one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredBy {
    pub kind: &'static str,
    pub name: String,
    pub namespace: String,
}

impl ConfiguredBy {
    /// A transformer or generator configured by a kustomization field.
    pub fn field(kind: &'static str) -> ConfiguredBy {
        ConfiguredBy {
            kind,
            name: String::new(),
            namespace: String::new(),
        }
    }
}

/// One object of the build.
#[derive(Debug, Clone)]
pub struct Resource {
    /// The object.
    pub obj: Map<String, Value>,
    /// The file (relative to the build root) and line it was read from, or the kustomization
    /// whose generator made it.
    pub origin: String,
    /// The line of the document in `origin`.
    pub line: usize,
    /// Earlier (name, namespace) pairs, oldest first, recorded when a transformer renames.
    pub previous: Vec<(String, String)>,
    /// Set for ConfigMaps and Secrets made by a generator.
    pub generated: Option<Generated>,
    /// The generator (`ConfigMapGenerator`, `SecretGenerator`, ...) when generated; `origin`
    /// is then the file that configured it.
    pub generator: Option<ConfiguredBy>,
    /// Transformers that ran over this resource: (the file configuring it, the transformer).
    pub transformations: Vec<(String, ConfiguredBy)>,
    /// Prefixes added to the name, innermost first.
    pub prefixes: Vec<String>,
    /// Suffixes added to the name, innermost first.
    pub suffixes: Vec<String>,
    /// Identity within a build, stable across renames (vars attach to it).
    pub uid: u64,
}

static NEXT_UID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// What a generator says about its output.
#[derive(Debug, Clone)]
pub struct Generated {
    /// Create, merge or replace.
    pub behavior: Behavior,
    /// Whether the name gets the content-hash suffix.
    pub hash: bool,
}

impl Resource {
    /// Wraps an object read from `origin`.
    pub fn new(obj: Map<String, Value>, origin: impl Into<String>, line: usize) -> Resource {
        Resource {
            obj,
            origin: origin.into(),
            line,
            previous: Vec::new(),
            generated: None,
            generator: None,
            transformations: Vec::new(),
            prefixes: Vec::new(),
            suffixes: Vec::new(),
            uid: NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// A string field at the top level.
    fn top(&self, key: &str) -> &str {
        self.obj.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// `apiVersion`.
    pub fn api_version(&self) -> &str {
        self.top("apiVersion")
    }

    /// `kind`.
    pub fn kind(&self) -> &str {
        self.top("kind")
    }

    /// Group, version and kind.
    pub fn gvk(&self) -> Gvk {
        Gvk::from_api_version(self.api_version(), self.kind())
    }

    /// `metadata`, when it is a map.
    pub fn metadata(&self) -> Option<&Map<String, Value>> {
        self.obj.get("metadata").and_then(Value::as_object)
    }

    /// `metadata`, created when missing.
    pub fn metadata_mut(&mut self) -> &mut Map<String, Value> {
        let meta = self
            .obj
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        meta.as_object_mut().expect("just made an object")
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.metadata()
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// `metadata.namespace`.
    pub fn namespace(&self) -> &str {
        self.metadata()
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// Sets `metadata.name`, remembering the old one.
    pub fn set_name(&mut self, name: &str) {
        if self.name() == name {
            return;
        }
        self.remember();
        self.metadata_mut()
            .insert("name".into(), Value::String(name.to_string()));
    }

    /// Sets `metadata.namespace`, remembering the old one.
    pub fn set_namespace(&mut self, namespace: &str) {
        if self.namespace() == namespace
            && self.metadata().is_some_and(|m| m.contains_key("namespace"))
        {
            return;
        }
        self.remember();
        self.metadata_mut()
            .insert("namespace".into(), Value::String(namespace.to_string()));
    }

    /// Records the current name and namespace among the previous ones (kustomize's
    /// `StorePreviousId`), before a change that may rename the resource.
    pub fn store_previous_id(&mut self) {
        self.remember();
    }

    fn remember(&mut self) {
        let current = (self.name().to_string(), self.namespace().to_string());
        if self.previous.last() != Some(&current) {
            self.previous.push(current);
        }
    }

    /// The current id.
    pub fn id(&self) -> ResId {
        ResId {
            gvk: self.gvk(),
            name: self.name().to_string(),
            namespace: self.namespace().to_string(),
        }
    }

    /// The id the resource had when it was first read.
    pub fn original_id(&self) -> ResId {
        match self.previous.first() {
            Some((name, namespace)) => ResId {
                gvk: self.gvk(),
                name: name.clone(),
                namespace: namespace.clone(),
            },
            None => self.id(),
        }
    }

    /// Names the resource had before its current one.
    pub fn previous_names(&self) -> impl Iterator<Item = &str> {
        self.previous.iter().map(|(n, _)| n.as_str())
    }

    /// The current id and every earlier one, newest first.
    pub fn all_ids(&self) -> Vec<ResId> {
        let gvk = self.gvk();
        let mut ids = vec![self.id()];
        for (name, namespace) in self.previous.iter().rev() {
            ids.push(ResId {
                gvk: gvk.clone(),
                name: name.clone(),
                namespace: namespace.clone(),
            });
        }
        ids
    }

    /// Whether any id this resource has had satisfies `f`.
    pub fn any_id(&self, f: impl Fn(&ResId) -> bool) -> bool {
        self.all_ids().iter().any(f)
    }

    /// A metadata string map (`labels` or `annotations`).
    pub fn string_map(&self, key: &str) -> Map<String, Value> {
        self.metadata()
            .and_then(|m| m.get(key))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }

    /// Where this resource was read, for messages.
    pub fn describe(&self) -> String {
        let ns = self.namespace();
        let kind = self.kind();
        let name = self.name();
        let what = if ns.is_empty() {
            format!("{kind}/{name}")
        } else {
            format!("{kind}/{ns}/{name}")
        };
        format!("{what} (from {})", self.origin)
    }
}
