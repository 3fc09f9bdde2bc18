//! One served resource: its names, scope, verbs and subresources.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A subresource such as `status` or `scale`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SubresourceInfo {
    /// The path segment, for example `status`.
    pub name: String,
    /// Group of the kind the subresource speaks (empty for core).
    #[serde(default)]
    pub group: String,
    /// Version of that kind.
    #[serde(default)]
    pub version: String,
    /// The kind the subresource speaks (`Scale` for `scale`).
    #[serde(default)]
    pub kind: String,
    /// Verbs the subresource answers.
    #[serde(default)]
    pub verbs: Vec<String>,
}

/// A column of `kubectl get` output, as a CRD's `additionalPrinterColumns` declares it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PrinterColumn {
    /// Column header.
    pub name: String,
    /// OpenAPI type of the column (`string`, `integer`, `date`, …).
    #[serde(rename = "type")]
    pub type_: String,
    /// Optional format.
    #[serde(default)]
    pub format: String,
    /// Description shown in the Table's column definition.
    #[serde(default)]
    pub description: String,
    /// 0 shows the column always; higher only with `-o wide`.
    #[serde(default)]
    pub priority: i64,
    /// Simple JSONPath (`.spec.replicas`) of the value.
    #[serde(rename = "jsonPath")]
    pub json_path: String,
}

/// A resource the server serves at one group-version.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ResourceInfo {
    /// API group, empty for the core group.
    pub group: String,
    /// Version, for example `v1`.
    pub version: String,
    /// Kind, for example `Deployment`.
    pub kind: String,
    /// Plural resource name used in URLs, for example `deployments`.
    pub plural: String,
    /// Singular name (lower-case kind for built-ins).
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Verbs the resource answers.
    pub verbs: Vec<String>,
    /// Short names kubectl accepts (`deploy`).
    #[serde(default, rename = "shortNames")]
    pub short_names: Vec<String>,
    /// Categories (`all`).
    #[serde(default)]
    pub categories: Vec<String>,
    /// Subresources (`status`, `scale`, …).
    #[serde(default)]
    pub subresources: Vec<SubresourceInfo>,
    /// Name of the OpenAPI definition of the kind (built-ins).
    #[serde(default)]
    pub definition: Option<String>,
    /// The version objects are stored in (CRDs: the storage version; built-ins: this version).
    #[serde(default, rename = "storageVersion")]
    pub storage_version: Option<String>,
    /// Extra `kubectl get` columns (CRDs' `additionalPrinterColumns`).
    #[serde(default, rename = "printerColumns")]
    pub printer_columns: Vec<PrinterColumn>,
    /// The CRD's `openAPIV3Schema` for this version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// `scale` subresource paths of a CRD: spec replicas, status replicas, label selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScalePaths>,
    /// Whether this resource comes from a CustomResourceDefinition.
    #[serde(default)]
    pub custom: bool,
    /// Fields a CRD version lets field selectors use (`selectableFields`, as dotted paths
    /// without the leading dot: `spec.color`).
    #[serde(
        default,
        rename = "selectableFields",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub selectable_fields: Vec<String>,
    /// The warning every request to this version gets when the CRD marks it `deprecated`.
    #[serde(
        default,
        rename = "deprecationWarning",
        skip_serializing_if = "Option::is_none"
    )]
    pub deprecation_warning: Option<String>,
}

/// JSON paths a CRD's `scale` subresource reads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScalePaths {
    /// `.spec.replicas`
    #[serde(rename = "specReplicasPath")]
    pub spec_replicas_path: String,
    /// `.status.replicas`
    #[serde(rename = "statusReplicasPath")]
    pub status_replicas_path: String,
    /// `.status.selector`, optional.
    #[serde(default, rename = "labelSelectorPath")]
    pub label_selector_path: Option<String>,
}

impl ResourceInfo {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `plural.group` (`deployments.apps`), or the plural for the core group.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// Whether the resource answers `verb`.
    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// The named subresource, if served.
    pub fn subresource(&self, name: &str) -> Option<&SubresourceInfo> {
        self.subresources.iter().find(|s| s.name == name)
    }
}

/// Kubernetes' version priority: GA before beta before alpha, higher numbers first.
pub fn version_priority(v: &str) -> (u8, u32, u32) {
    let rest = v.strip_prefix('v').unwrap_or("");
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let major = digits.parse::<u32>().unwrap_or(0);
    let tail = &rest[digits.len()..];
    if digits.is_empty() {
        return (0, 0, 0);
    }
    let (stage, minor) = if tail.is_empty() {
        (3, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n.parse().unwrap_or(0))
    } else {
        (0, 0)
    };
    (stage, major, minor)
}
