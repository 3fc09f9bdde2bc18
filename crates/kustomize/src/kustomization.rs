//! The kustomization file: `kustomize.config.k8s.io/v1beta1` Kustomization and
//! `v1alpha1` Component, with every field kustomize v5 reads. Unknown fields are errors.

pub(crate) mod field_names;

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// File names that make a directory a kustomization, in the order kustomize tries them.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// A kustomization or component file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Kustomization {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub metadata: Option<Value>,
    pub openapi: Option<Value>,
    #[serde(default)]
    pub name_prefix: Option<String>,
    #[serde(default)]
    pub name_suffix: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default, deserialize_with = "string_map")]
    pub common_labels: BTreeMap<String, String>,
    #[serde(default)]
    pub labels: Vec<Label>,
    #[serde(default, deserialize_with = "string_map")]
    pub common_annotations: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_default")]
    pub patches_strategic_merge: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub patches_json6902: Vec<Patch>,
    #[serde(default, deserialize_with = "null_default")]
    pub patches: Vec<Patch>,
    #[serde(default, deserialize_with = "null_default")]
    pub images: Vec<Image>,
    #[serde(default, deserialize_with = "null_default")]
    pub image_tags: Vec<Image>,
    #[serde(default, deserialize_with = "null_default")]
    pub replacements: Vec<ReplacementField>,
    #[serde(default, deserialize_with = "null_default")]
    pub replicas: Vec<Replica>,
    #[serde(default, deserialize_with = "null_default")]
    pub vars: Vec<Var>,
    pub sort_options: Option<SortOptions>,
    #[serde(default, deserialize_with = "null_default")]
    pub resources: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub components: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub crds: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub bases: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub config_map_generator: Vec<GeneratorArgs>,
    #[serde(default, deserialize_with = "null_default")]
    pub secret_generator: Vec<GeneratorArgs>,
    pub helm_globals: Option<Value>,
    pub helm_charts: Option<Value>,
    pub helm_chart_inflation_generator: Option<Value>,
    pub generator_options: Option<GeneratorOptions>,
    #[serde(default, deserialize_with = "null_default")]
    pub configurations: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub generators: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub transformers: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub validators: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub build_metadata: Vec<String>,
    /// Accepted and ignored, as kustomize v5 does.
    pub inventory: Option<Value>,
}

/// An entry of `labels`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Label {
    #[serde(default, deserialize_with = "string_map")]
    pub pairs: BTreeMap<String, String>,
    #[serde(default)]
    pub include_selectors: bool,
    #[serde(default)]
    pub include_templates: bool,
    #[serde(default, deserialize_with = "null_default")]
    pub fields: Vec<FieldSpec>,
}

/// A field specification as written in kustomizations and transformer configurations.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub create: bool,
}

/// An entry of `images`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Image {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub new_name: String,
    #[serde(default, deserialize_with = "string_scalar")]
    pub new_tag: String,
    #[serde(default)]
    pub digest: String,
}

/// An entry of `replicas`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replica {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub count: i64,
}

/// An entry of `patches` or `patchesJson6902`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub patch: Option<String>,
    #[serde(default)]
    pub target: Option<Selector>,
    #[serde(default, deserialize_with = "null_default")]
    pub options: BTreeMap<String, bool>,
}

/// Which resources a patch or replacement applies to.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Selector {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub label_selector: String,
    #[serde(default)]
    pub annotation_selector: String,
}

/// `configMapGenerator` and `secretGenerator` entries.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeneratorArgs {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub behavior: String,
    #[serde(default, deserialize_with = "null_default")]
    pub files: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub literals: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub envs: Vec<String>,
    #[serde(default)]
    pub env: String,
    pub options: Option<GeneratorOptions>,
    #[serde(default, rename = "type")]
    pub kind: String,
}

/// `generatorOptions`, and `options` of one generator.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeneratorOptions {
    #[serde(default, deserialize_with = "string_map")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "string_map")]
    pub annotations: BTreeMap<String, String>,
    #[serde(default)]
    pub disable_name_suffix_hash: Option<bool>,
    #[serde(default)]
    pub immutable: Option<bool>,
}

/// An entry of `replacements`: inline, or a file holding one or more.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ReplacementField {
    /// `- path: file.yaml`
    Path {
        /// The file.
        path: String,
    },
    /// An inline replacement.
    Inline(Box<Replacement>),
}

/// One replacement: a value copied from a source field into target fields.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Replacement {
    pub source: Option<SourceSelector>,
    #[serde(default, deserialize_with = "null_default")]
    pub targets: Vec<TargetSelector>,
}

/// Where a replacement reads its value.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SourceSelector {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub field_path: String,
    pub options: Option<FieldOptions>,
}

/// Where a replacement writes its value.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TargetSelector {
    pub select: Option<Selector>,
    #[serde(default, deserialize_with = "null_default")]
    pub reject: Vec<Selector>,
    #[serde(default, deserialize_with = "null_default")]
    pub field_paths: Vec<String>,
    pub options: Option<FieldOptions>,
}

/// Options of a replacement source or target.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldOptions {
    #[serde(default)]
    pub delimiter: String,
    #[serde(default)]
    pub index: i64,
    #[serde(default)]
    pub create: bool,
}

/// An entry of `vars`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Var {
    pub name: String,
    pub objref: VarTarget,
    #[serde(default)]
    pub fieldref: Option<FieldRef>,
}

/// The object a var reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VarTarget {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
}

/// The field a var reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldRef {
    #[serde(default)]
    pub fieldpath: String,
}

/// `sortOptions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SortOptions {
    #[serde(default)]
    pub order: String,
    pub legacy_sort_options: Option<LegacySortOptions>,
}

/// `sortOptions.legacySortOptions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LegacySortOptions {
    #[serde(default, deserialize_with = "null_default")]
    pub order_first: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub order_last: Vec<String>,
}

/// A `null` in YAML reads as the type's default (an empty list), as Go's decoder does.
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A kustomization's map of strings, as Go's `encoding/json` decodes a `map[string]string`: a
/// number or a boolean (YAML 1.1 reads `y`, `yes`, `on` as true) is refused, not turned into
/// text.
pub(crate) fn string_map<'de, D>(d: D) -> Result<BTreeMap<String, String>, D::Error>
where
    D: Deserializer<'de>,
{
    read_string_map(d, false)
}

/// A built-in plugin configuration's map of strings, as go-yaml decodes a Go
/// `map[string]string`: a number or a boolean becomes its text (`0755` is `"493"`).
pub(crate) fn scalar_string_map<'de, D>(d: D) -> Result<BTreeMap<String, String>, D::Error>
where
    D: Deserializer<'de>,
{
    read_string_map(d, true)
}

fn read_string_map<'de, D>(
    d: D,
    scalars_as_text: bool,
) -> Result<BTreeMap<String, String>, D::Error>
where
    D: Deserializer<'de>,
{
    let raw = Option::<BTreeMap<String, Value>>::deserialize(d)?.unwrap_or_default();
    raw.into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k, s)),
            Value::Null => Ok((k, String::new())),
            Value::Number(n) if scalars_as_text => Ok((k, crate::yaml::go_json_number(&n))),
            Value::Bool(b) if scalars_as_text => Ok((k, b.to_string())),
            other => {
                let kind = match other {
                    Value::Bool(_) => "bool",
                    Value::Number(_) => "number",
                    Value::Array(_) => "array",
                    _ => "object",
                };
                Err(serde::de::Error::custom(format!(
                    "json: cannot unmarshal {kind} into the string value of {k:?} (quote it: YAML 1.1 reads y, yes, on and true as booleans)"
                )))
            }
        })
        .collect()
}

/// A string where a YAML number is taken as its text (`newTag: 1.2`).
fn string_scalar<'de, D>(d: D) -> Result<String, D::Error>
where
    D: Deserializer<'de>,
{
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(Value::Bool(b)) => Ok(b.to_string()),
        Some(other) => Err(serde::de::Error::custom(format!(
            "expected a string, not {other}"
        ))),
    }
}
