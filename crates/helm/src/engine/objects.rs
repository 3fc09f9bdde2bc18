//! The Go objects a chart's templates see besides maps: `.Files` (Helm's `engine.files`) and
//! `.Capabilities` (`*common.Capabilities`: the Kubernetes version, API versions and the Helm
//! version).

use std::any::Any;
use std::rc::Rc;

use base64::Engine as _;

use crate::chart::File;
use crate::template::func::{Func, Ty};
use crate::template::value::{ListKind, Object, Value};

/// `.Files`: the chart's non-template files by path.
#[derive(Debug, Clone, Default)]
pub struct Files {
    pub entries: Vec<(String, bytes::Bytes)>,
}

impl Files {
    pub fn new(files: &[File]) -> Files {
        let mut entries: Vec<(String, bytes::Bytes)> = files
            .iter()
            .map(|f| (f.name.clone(), f.data.clone()))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|a, b| a.0 == b.0);
        Files { entries }
    }

    fn get(&self, name: &str) -> Option<&bytes::Bytes> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }

    /// `AsConfig`/`AsSecrets`: base names to contents as `toYaml` writes them.
    fn as_yaml(&self, encode: bool) -> String {
        let mut m = std::collections::BTreeMap::new();
        for (name, data) in &self.entries {
            let text = if encode {
                base64::engine::general_purpose::STANDARD.encode(data)
            } else {
                String::from_utf8_lossy(data).into_owned()
            };
            m.insert(crate::sprig::path_base(name), Value::str(&text));
        }
        super::funcs::to_yaml(&Value::map(m))
    }
}

impl Object for Files {
    fn type_name(&self) -> String {
        "engine.files".into()
    }
    fn field(&self, _: &str) -> Option<Value> {
        None
    }
    fn method(self: Rc<Self>, name: &str) -> Option<Rc<Func>> {
        let files = self.clone();
        let f = match name {
            "Get" => Func::new(name, &[Ty::String], None, move |_, a| {
                let data = files.get(crate::sprig::s(&a[0]));
                Ok(Value::str(
                    &data
                        .map(|d| String::from_utf8_lossy(d).into_owned())
                        .unwrap_or_default(),
                ))
            }),
            "GetBytes" => Func::new(name, &[Ty::String], None, move |_, a| {
                let data = files
                    .get(crate::sprig::s(&a[0]))
                    .map(|d| &d[..])
                    .unwrap_or(b"");
                Ok(Value::Bytes(Rc::from(data)))
            }),
            "Glob" => Func::new(name, &[Ty::String], None, move |_, a| {
                let pattern = crate::sprig::s(&a[0]);
                let entries = files
                    .entries
                    .iter()
                    .filter(|(n, _)| crate::chart::glob_match(pattern, n))
                    .cloned()
                    .collect();
                Ok(Value::Object(Rc::new(Files { entries })))
            }),
            "AsConfig" => Func::new(name, &[], None, move |_, _| {
                Ok(Value::str(&files.as_yaml(false)))
            }),
            "AsSecrets" => Func::new(name, &[], None, move |_, _| {
                Ok(Value::str(&files.as_yaml(true)))
            }),
            "Lines" => Func::new(name, &[Ty::String], None, move |_, a| {
                let Some(data) = files.get(crate::sprig::s(&a[0])) else {
                    return Ok(Value::List(Rc::new(Vec::new()), ListKind::String));
                };
                let mut text = String::from_utf8_lossy(data).into_owned();
                if text.ends_with('\n') {
                    text.pop();
                }
                Ok(Value::string_list(
                    text.split('\n').map(String::from).collect(),
                ))
            }),
            _ => return None,
        };
        Some(Rc::new(f))
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn string(&self) -> Option<String> {
        let items: Vec<String> = self
            .entries
            .iter()
            .map(|(n, d)| {
                format!(
                    "{n}:{}",
                    crate::template::fmt::print_value(&Value::Bytes(Rc::from(&d[..])))
                )
            })
            .collect();
        Some(format!("map[{}]", items.join(" ")))
    }
    fn json(&self) -> Value {
        Value::map(
            self.entries
                .iter()
                .map(|(n, d)| (n.clone(), Value::Bytes(Rc::from(&d[..]))))
                .collect(),
        )
    }
    fn map_entries(&self) -> Option<Vec<(String, Value)>> {
        Some(
            self.entries
                .iter()
                .map(|(n, d)| (n.clone(), Value::Bytes(Rc::from(&d[..]))))
                .collect(),
        )
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The Kubernetes API versions Helm v4.1.4 assumes when it renders without a cluster
/// (client-go v0.35's scheme, and the apiextensions groups).
pub const DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

/// The Kubernetes version Helm v4.1.4 assumes without a cluster.
pub const DEFAULT_KUBE_VERSION: &str = "v1.35.0";

/// `common.KubeVersion`.
#[derive(Debug, Clone)]
pub struct KubeVersion {
    /// As given (`v1.33.4-gke.1245000`).
    pub version: String,
    /// For constraint checks and `String()` (`v1.33.4`).
    pub normalized: String,
    pub major: String,
    pub minor: String,
}

impl KubeVersion {
    /// Helm's `ParseKubeVersion` (Kubernetes' `ParseGeneric`: `1.2`, `v1.2.3`, `1.2.3-x`).
    pub fn parse(text: &str) -> Result<KubeVersion, String> {
        let trimmed = text.trim();
        let body = trimmed.strip_prefix('v').unwrap_or(trimmed);
        let numeric_end = body
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(body.len());
        let numeric = &body[..numeric_end];
        let parts: Vec<&str> = numeric.split('.').collect();
        if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) || parts.len() > 3 {
            return Err(format!(
                "could not parse {} as version",
                crate::template::quote::quote(text)
            ));
        }
        let nums: Vec<u64> = parts
            .iter()
            .map(|p| p.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| {
                format!(
                    "could not parse {} as version",
                    crate::template::quote::quote(text)
                )
            })?;
        let patch = nums.get(2).copied().unwrap_or(0);
        let git = if text.starts_with('v') {
            text.to_string()
        } else {
            format!("v{text}")
        };
        Ok(KubeVersion {
            version: git,
            normalized: format!("v{}.{}.{patch}", nums[0], nums[1]),
            major: nums[0].to_string(),
            minor: nums[1].to_string(),
        })
    }
}

impl Object for KubeVersion {
    fn type_name(&self) -> String {
        "common.KubeVersion".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::str(match name {
            "Version" => &self.version,
            "Major" => &self.major,
            "Minor" => &self.minor,
            _ => return None,
        }))
    }
    fn method(self: Rc<Self>, name: &str) -> Option<Rc<Func>> {
        let kv = self.clone();
        Some(Rc::new(match name {
            "String" => Func::new(name, &[], None, move |_, _| Ok(Value::str(&kv.normalized))),
            "GitVersion" => Func::new(name, &[], None, move |_, _| Ok(Value::str(&kv.version))),
            _ => return None,
        }))
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("Version", Value::str(&self.version)),
            ("Major", Value::str(&self.major)),
            ("Minor", Value::str(&self.minor)),
        ]
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn string(&self) -> Option<String> {
        Some(self.normalized.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `common.VersionSet`: API versions, with `Has`.
#[derive(Debug, Clone)]
pub struct VersionSet(pub Vec<String>);

impl Object for VersionSet {
    fn type_name(&self) -> String {
        "common.VersionSet".into()
    }
    fn field(&self, _: &str) -> Option<Value> {
        None
    }
    fn method(self: Rc<Self>, name: &str) -> Option<Rc<Func>> {
        let set = self.clone();
        (name == "Has").then(|| {
            Rc::new(Func::new(name, &[Ty::String], None, move |_, a| {
                let want = crate::sprig::s(&a[0]);
                Ok(Value::Bool(set.0.iter().any(|v| v == want)))
            }))
        })
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn string(&self) -> Option<String> {
        Some(format!("[{}]", self.0.join(" ")))
    }
    fn json(&self) -> Value {
        Value::string_list(self.0.clone())
    }
    fn list_items(&self) -> Option<Vec<Value>> {
        Some(self.0.iter().map(|v| Value::str(v)).collect())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `version.BuildInfo`: the Helm version templates see. Tidegate reports the Helm release
/// whose rendering it reproduces; the build fields are its own.
#[derive(Debug, Clone)]
pub struct HelmVersion {
    pub version: String,
    pub kube_client_version: String,
}

impl Object for HelmVersion {
    fn type_name(&self) -> String {
        "version.BuildInfo".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::str(match name {
            "Version" => &self.version,
            "GitCommit" | "GitTreeState" => "",
            "GoVersion" => "",
            "KubeClientVersion" => &self.kube_client_version,
            _ => return None,
        }))
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("Version", Value::str(&self.version)),
            ("GitCommit", Value::str("")),
            ("GitTreeState", Value::str("")),
            ("GoVersion", Value::str("")),
            ("KubeClientVersion", Value::str(&self.kube_client_version)),
        ]
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn json_fields(&self) -> Vec<(String, Value)> {
        vec![
            ("version".to_string(), Value::str(&self.version)),
            (
                "kube_client_version".to_string(),
                Value::str(&self.kube_client_version),
            ),
        ]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `*common.Capabilities`.
#[derive(Debug, Clone)]
pub struct Capabilities {
    pub kube_version: KubeVersion,
    pub api_versions: Vec<String>,
    pub helm_version: HelmVersion,
}

impl Capabilities {
    /// Helm's defaults without a cluster, with `--kube-version` and `--api-versions` applied.
    pub fn client_only(kube_version: Option<KubeVersion>, extra_apis: &[String]) -> Capabilities {
        let default = KubeVersion {
            version: DEFAULT_KUBE_VERSION.into(),
            normalized: DEFAULT_KUBE_VERSION.into(),
            major: "1".into(),
            minor: "35".into(),
        };
        let mut api_versions: Vec<String> =
            DEFAULT_API_VERSIONS.iter().map(|s| s.to_string()).collect();
        api_versions.extend(extra_apis.iter().cloned());
        Capabilities {
            kube_version: kube_version.unwrap_or(default),
            api_versions,
            helm_version: HelmVersion {
                version: "v4.1.4".into(),
                kube_client_version: "v1.35".into(),
            },
        }
    }
}

impl Object for Capabilities {
    fn type_name(&self) -> String {
        "*common.Capabilities".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(match name {
            "KubeVersion" => Value::Object(Rc::new(self.kube_version.clone())),
            "APIVersions" => Value::Object(Rc::new(VersionSet(self.api_versions.clone()))),
            "HelmVersion" => Value::Object(Rc::new(self.helm_version.clone())),
            _ => return None,
        })
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        vec![
            (
                "KubeVersion",
                Value::Object(Rc::new(self.kube_version.clone())),
            ),
            (
                "APIVersions",
                Value::Object(Rc::new(VersionSet(self.api_versions.clone()))),
            ),
            (
                "HelmVersion",
                Value::Object(Rc::new(self.helm_version.clone())),
            ),
        ]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
