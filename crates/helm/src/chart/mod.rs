//! Helm charts: `Chart.yaml` metadata with Helm's validation, templates, files, values and
//! subcharts, loaded from a directory or a `.tgz` as Helm's loader reads them.

mod dependencies;
pub mod ignore;
mod load;
mod save;

use serde_json::Value as Json;

pub use dependencies::{is_compatible_range, process_dependencies};
pub use ignore::{Rules as IgnoreRules, glob_match, go_match};
pub use load::{
    LoadError, load, load_archive, load_dir, load_files, load_values as load_values_text,
    merge_maps, read_yaml, read_yaml_documents,
};
pub use save::{SaveError, save};

/// A file of a chart, by its path inside the chart.
#[derive(Debug, Clone)]
pub struct File {
    pub name: String,
    /// Shared: `.Files` and the loaded chart hold the same bytes.
    pub data: bytes::Bytes,
}

/// A maintainer in `Chart.yaml`.
#[derive(Debug, Clone, Default)]
pub struct Maintainer {
    pub name: String,
    pub email: String,
    pub url: String,
}

/// A dependency in `Chart.yaml` (or a v1 chart's `requirements.yaml`).
#[derive(Debug, Clone, Default)]
pub struct Dependency {
    pub name: String,
    pub version: String,
    pub repository: String,
    pub condition: String,
    pub tags: Vec<String>,
    pub enabled: bool,
    pub import_values: Vec<Json>,
    pub alias: String,
}

/// `Chart.yaml`, as Helm's `chart.Metadata`.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    pub name: String,
    pub home: String,
    pub sources: Option<Vec<String>>,
    pub version: String,
    pub description: String,
    pub keywords: Option<Vec<String>>,
    pub maintainers: Option<Vec<Maintainer>>,
    pub icon: String,
    pub api_version: String,
    pub condition: String,
    pub tags: String,
    pub app_version: String,
    pub deprecated: bool,
    pub annotations: Option<std::collections::BTreeMap<String, String>>,
    pub kube_version: String,
    pub dependencies: Option<Vec<Dependency>>,
    pub chart_type: String,
}

/// A loaded chart and its subcharts.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    pub metadata: Metadata,
    /// `values.yaml`, read as Helm reads it (YAML 1.1 scalars, documents merged).
    pub values: serde_json::Map<String, Json>,
    /// `values.schema.json`.
    pub schema: Option<bytes::Bytes>,
    pub templates: Vec<File>,
    /// Every other file (not `Chart.yaml`, `values.yaml`, the schema, templates or subcharts).
    pub files: Vec<File>,
    pub dependencies: Vec<Chart>,
    /// The bytes of `values.yaml` as read, which packaging writes back (Helm's `Raw`).
    pub raw_values: Option<bytes::Bytes>,
    /// `Chart.lock` as read.
    pub lock: Option<bytes::Bytes>,
}

impl Chart {
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    /// Whether the chart is a library chart.
    pub fn is_library(&self) -> bool {
        self.metadata.chart_type.eq_ignore_ascii_case("library")
    }

    /// The CRD files of this chart and its subcharts (`crds/*.yaml|yml|json`), with the path
    /// Helm prints for them; `full_path` is the chart's `ChartFullPath`.
    pub fn crd_objects(&self, full_path: &str) -> Vec<(String, &File)> {
        let mut out = Vec::new();
        for f in &self.files {
            if f.name.starts_with("crds/") && has_manifest_extension(&f.name) {
                out.push((format!("{full_path}/{}", f.name), f));
            }
        }
        for dep in &self.dependencies {
            out.extend(dep.crd_objects(&format!("{full_path}/charts/{}", dep.name())));
        }
        out
    }
}

/// `data` as text: borrowed when it is valid UTF-8 (checked a word at a time), otherwise with
/// U+FFFD for each invalid sequence, as Go's string conversion reads it.
pub fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(data) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(data),
    }
}

fn has_manifest_extension(name: &str) -> bool {
    let ext = crate::sprig::path_ext(name).to_ascii_lowercase();
    ext == ".yaml" || ext == ".yml" || ext == ".json"
}

/// Go's `unicode.IsPrint`-based clean-up Helm applies to metadata strings.
fn sanitize(s: &str) -> String {
    s.chars()
        .filter_map(|c| {
            if crate::template::quote::is_print(c) && !c.is_whitespace() {
                Some(c)
            } else if c.is_whitespace() {
                Some(' ')
            } else {
                None
            }
        })
        .collect()
}

/// Helm's `ValidationError` text.
fn validation(message: String) -> String {
    format!("validation: {message}")
}

impl Metadata {
    /// Helm's `Metadata.Validate`: sanitizes strings and checks what Helm checks, with its
    /// messages.
    pub fn validate(&mut self) -> Result<(), String> {
        self.name = sanitize(&self.name);
        self.description = sanitize(&self.description);
        self.home = sanitize(&self.home);
        self.icon = sanitize(&self.icon);
        self.condition = sanitize(&self.condition);
        self.tags = sanitize(&self.tags);
        self.app_version = sanitize(&self.app_version);
        self.kube_version = sanitize(&self.kube_version);
        for s in self.sources.iter_mut().flatten() {
            *s = sanitize(s);
        }
        for s in self.keywords.iter_mut().flatten() {
            *s = sanitize(s);
        }
        if self.api_version.is_empty() {
            return Err(validation("chart.metadata.apiVersion is required".into()));
        }
        if self.name.is_empty() {
            return Err(validation("chart.metadata.name is required".into()));
        }
        if self.name == "." || self.name == ".." {
            return Err(validation(format!(
                "chart.metadata.name {} is not allowed",
                crate::template::quote::quote(&self.name)
            )));
        }
        if self.name.contains('/') {
            return Err(validation(format!(
                "chart.metadata.name {} is invalid",
                crate::template::quote::quote(&self.name)
            )));
        }
        if self.version.is_empty() {
            return Err(validation("chart.metadata.version is required".into()));
        }
        if tidegate_core::semver::Version::parse(&self.version).is_err() {
            return Err(validation(format!(
                "chart.metadata.version {} is invalid",
                crate::template::quote::quote(&self.version)
            )));
        }
        if !matches!(self.chart_type.as_str(), "" | "application" | "library") {
            return Err(validation(
                "chart.metadata.type must be application or library".into(),
            ));
        }
        for m in self.maintainers.iter_mut().flatten() {
            m.name = sanitize(&m.name);
            m.email = sanitize(&m.email);
            m.url = sanitize(&m.url);
        }
        let mut seen = std::collections::HashSet::new();
        for d in self.dependencies.iter_mut().flatten() {
            d.name = sanitize(&d.name);
            d.version = sanitize(&d.version);
            d.repository = sanitize(&d.repository);
            d.condition = sanitize(&d.condition);
            for t in &mut d.tags {
                *t = sanitize(t);
            }
            if !d.alias.is_empty()
                && !d
                    .alias
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(validation(format!(
                    "dependency {} has disallowed characters in the alias",
                    crate::template::quote::quote(&d.name)
                )));
            }
            let key = if d.alias.is_empty() {
                &d.name
            } else {
                &d.alias
            };
            if !seen.insert(key.clone()) {
                return Err(validation(format!(
                    "more than one dependency with name or alias {}",
                    crate::template::quote::quote(key)
                )));
            }
        }
        Ok(())
    }

    /// Reads `Chart.yaml`'s JSON form as Go's `encoding/json` fills `chart.Metadata`, with its
    /// messages for values of the wrong type; `into` keeps fields already set (a v1 chart's
    /// `requirements.yaml` is read into the same metadata).
    pub fn read_into(&mut self, v: &Json) -> Result<(), String> {
        let Json::Object(m) = v else {
            if v.is_null() {
                return Ok(());
            }
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type v2.Metadata",
                json_kind(v)
            ));
        };
        for (key, value) in m {
            let field = |go: &str| format!("Metadata.{go}");
            match key.as_str() {
                "name" => self.name = string_field(value, &field("name"))?,
                "home" => self.home = string_field(value, &field("home"))?,
                "sources" => self.sources = strings_field(value, &field("sources"))?,
                "version" => self.version = string_field(value, &field("version"))?,
                "description" => self.description = string_field(value, &field("description"))?,
                "keywords" => self.keywords = strings_field(value, &field("keywords"))?,
                "maintainers" => self.maintainers = maintainers(value)?,
                "icon" => self.icon = string_field(value, &field("icon"))?,
                "apiVersion" => self.api_version = string_field(value, &field("apiVersion"))?,
                "condition" => self.condition = string_field(value, &field("condition"))?,
                "tags" => self.tags = string_field(value, &field("tags"))?,
                "appVersion" => self.app_version = string_field(value, &field("appVersion"))?,
                "deprecated" => self.deprecated = bool_field(value, &field("deprecated"))?,
                "annotations" => self.annotations = string_map(value, &field("annotations"))?,
                "kubeVersion" => self.kube_version = string_field(value, &field("kubeVersion"))?,
                "dependencies" => self.dependencies = dependencies(value)?,
                "type" => self.chart_type = string_field(value, &field("type"))?,
                _ => {}
            }
        }
        Ok(())
    }
}

/// Go's JSON name of a value's kind, as its unmarshal errors say it.
pub(crate) fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn type_error(v: &Json, field: &str, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go struct field {field} of type {go_type}",
        json_kind(v)
    )
}

/// A string field: sigs.k8s.io/yaml writes numbers and booleans as text for string fields.
fn string_field(v: &Json, field: &str) -> Result<String, String> {
    match v {
        Json::String(s) => Ok(s.clone()),
        Json::Null => Ok(String::new()),
        Json::Bool(b) => Ok(b.to_string()),
        Json::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        Json::Number(n) => Ok(tidegate_core::yaml::go_float32_text(
            n.as_f64().unwrap_or(0.0),
        )),
        other => Err(type_error(other, field, "string")),
    }
}

fn bool_field(v: &Json, field: &str) -> Result<bool, String> {
    match v {
        Json::Bool(b) => Ok(*b),
        Json::Null => Ok(false),
        other => Err(type_error(other, field, "bool")),
    }
}

fn strings_field(v: &Json, field: &str) -> Result<Option<Vec<String>>, String> {
    match v {
        Json::Null => Ok(None),
        Json::Array(items) => items
            .iter()
            .map(|i| string_field(i, field))
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        other => Err(type_error(other, field, "[]string")),
    }
}

fn string_map(
    v: &Json,
    field: &str,
) -> Result<Option<std::collections::BTreeMap<String, String>>, String> {
    match v {
        Json::Null => Ok(None),
        Json::Object(m) => m
            .iter()
            .map(|(k, v)| Ok((k.clone(), string_field(v, field)?)))
            .collect::<Result<_, String>>()
            .map(Some),
        other => Err(type_error(other, field, "map[string]string")),
    }
}

/// The objects of a Chart.yaml list field (`maintainers`, `dependencies`) as Go decodes a
/// `[]*v2.<Item>`: `None` for null, Helm's errors for other types and null entries.
fn object_list<'a>(
    v: &'a Json,
    key: &str,
    item_type: &str,
) -> Result<Option<Vec<&'a serde_json::Map<String, Json>>>, String> {
    let field = format!("Metadata.{key}");
    let items = match v {
        Json::Null => return Ok(None),
        Json::Array(items) => items,
        other => return Err(type_error(other, &field, &format!("[]*v2.{item_type}"))),
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            Json::Object(m) => out.push(m),
            Json::Null => {
                return Err(validation(format!(
                    "{key} must not contain empty or null nodes"
                )));
            }
            other => return Err(type_error(other, &field, &format!("v2.{item_type}"))),
        }
    }
    Ok(Some(out))
}

fn maintainers(v: &Json) -> Result<Option<Vec<Maintainer>>, String> {
    let Some(items) = object_list(v, "maintainers", "Maintainer")? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for m in items {
        let get = |k: &str| {
            m.get(k)
                .map(|v| string_field(v, &format!("Maintainer.{k}")))
                .transpose()
        };
        out.push(Maintainer {
            name: get("name")?.unwrap_or_default(),
            email: get("email")?.unwrap_or_default(),
            url: get("url")?.unwrap_or_default(),
        });
    }
    Ok(Some(out))
}

fn dependencies(v: &Json) -> Result<Option<Vec<Dependency>>, String> {
    let Some(items) = object_list(v, "dependencies", "Dependency")? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for m in items {
        let s = |k: &str| -> Result<String, String> {
            m.get(k)
                .map(|v| string_field(v, &format!("Dependency.{k}")))
                .transpose()
                .map(Option::unwrap_or_default)
        };
        out.push(Dependency {
            name: s("name")?,
            version: s("version")?,
            repository: s("repository")?,
            condition: s("condition")?,
            tags: m
                .get("tags")
                .map(|v| strings_field(v, "Dependency.tags"))
                .transpose()?
                .flatten()
                .unwrap_or_default(),
            enabled: m
                .get("enabled")
                .map(|v| bool_field(v, "Dependency.enabled"))
                .transpose()?
                .unwrap_or(false),
            import_values: match m.get("import-values") {
                None | Some(Json::Null) => Vec::new(),
                Some(Json::Array(a)) => a.clone(),
                Some(other) => {
                    return Err(type_error(
                        other,
                        "Dependency.import-values",
                        "[]interface {}",
                    ));
                }
            },
            alias: s("alias")?,
        });
    }
    Ok(Some(out))
}
