//! Field specifications: which fields of which kinds a transformer touches, and the walker that
//! visits them (through every element of a list, creating missing maps when asked).
//!
//! The built-in table (`fieldspecs.yaml`) is kustomize's default transformer configuration;
//! kustomizations extend it with `configurations:` files and `crds:`.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result, invalid};
use crate::kustomization::FieldSpec as RawSpec;
use crate::resource::Gvk;

/// A field specification, with its path split.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldSpec {
    /// Group to match; empty matches any.
    pub group: String,
    /// Version to match; empty matches any.
    pub version: String,
    /// Kind to match; empty matches any.
    pub kind: String,
    /// The path as written.
    pub path: String,
    /// The path's segments.
    pub segments: Vec<String>,
    /// Whether missing fields along the path are created.
    pub create: bool,
}

impl FieldSpec {
    /// Builds a spec from its serialized form.
    pub fn from_raw(raw: &RawSpec) -> FieldSpec {
        FieldSpec {
            group: raw.group.clone(),
            version: raw.version.clone(),
            kind: raw.kind.clone(),
            path: raw.path.clone(),
            segments: split_path(&raw.path),
            create: raw.create,
        }
    }

    /// A spec for every kind.
    pub fn any(path: &str, create: bool) -> FieldSpec {
        FieldSpec::from_raw(&RawSpec {
            path: path.to_string(),
            create,
            ..RawSpec::default()
        })
    }

    /// Whether the spec applies to objects of this type.
    pub fn applies_to(&self, gvk: &Gvk) -> bool {
        (self.group.is_empty() || self.group == gvk.group)
            && (self.version.is_empty() || self.version == gvk.version)
            && (self.kind.is_empty() || self.kind == gvk.kind)
    }

    /// Calls `f` on every field the path reaches in `obj` (creating maps along it when the spec
    /// says so). `f` may replace the value; a `Value::Null` it leaves behind at a created leaf is
    /// removed again.
    pub fn visit(
        &self,
        obj: &mut Map<String, Value>,
        f: &mut dyn FnMut(&mut Value) -> Result<()>,
    ) -> Result<()> {
        walk_map(obj, &self.segments, self.create, &self.path, f)
    }
}

fn walk_map(
    map: &mut Map<String, Value>,
    segments: &[String],
    create: bool,
    path: &str,
    f: &mut dyn FnMut(&mut Value) -> Result<()>,
) -> Result<()> {
    let Some((seg, rest)) = segments.split_first() else {
        return Ok(());
    };
    let (name, all_items) = match seg.strip_suffix("[]") {
        Some(n) => (n, true),
        None => (seg.as_str(), false),
    };
    if let Some((field, key, value)) = parse_selector(name) {
        // `containers[name=web]`: only the matching items.
        if let Some(Value::Array(items)) = map.get_mut(field) {
            for item in items.iter_mut() {
                if item.get(key).and_then(Value::as_str) == Some(value) {
                    walk_value(item, rest, create, path, f)?;
                }
            }
        }
        return Ok(());
    }
    if map.get(name).is_none_or(Value::is_null) {
        if !create || all_items {
            return Ok(());
        }
        if rest.is_empty() {
            let slot = map.entry(name.to_string()).or_insert(Value::Null);
            f(slot)?;
            if slot.is_null() {
                map.remove(name);
            }
            return Ok(());
        }
        map.insert(name.to_string(), Value::Object(Map::new()));
    }
    let Some(child) = map.get_mut(name) else {
        return Ok(());
    };
    if rest.is_empty() {
        return match child {
            Value::Array(items) if all_items => {
                for item in items.iter_mut() {
                    f(item)?;
                }
                Ok(())
            }
            other => f(other),
        };
    }
    walk_value(child, rest, create, path, f)
}

fn walk_value(
    value: &mut Value,
    segments: &[String],
    create: bool,
    path: &str,
    f: &mut dyn FnMut(&mut Value) -> Result<()>,
) -> Result<()> {
    match value {
        Value::Object(m) => walk_map(m, segments, create, path, f),
        Value::Array(items) => {
            for item in items.iter_mut() {
                walk_value(item, segments, create, path, f)?;
            }
            Ok(())
        }
        Value::Null => Ok(()),
        _ => Err(invalid(format!(
            "field path {path:?}: expected a map or a list on the way to the field, found a scalar"
        ))),
    }
}

fn parse_selector(seg: &str) -> Option<(&str, &str, &str)> {
    let open = seg.find('[')?;
    let inner = seg[open + 1..].strip_suffix(']')?;
    let (k, v) = inner.split_once('=')?;
    Some((&seg[..open], k, v))
}

/// Splits a slash path; `\/` is a literal slash and slashes inside `[...]` do not split.
pub fn split_path(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'/') => {
                cur.push('/');
                chars.next();
            }
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            '/' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() || !out.is_empty() {
        out.push(cur);
    }
    out.retain(|s| !s.is_empty());
    out
}

/// A kind that other objects refer to by name, and the fields that refer to it.
#[derive(Debug, Clone)]
pub struct NameBackRef {
    /// The referenced type.
    pub gvk: Gvk,
    /// The referring fields.
    pub referrers: Vec<FieldSpec>,
}

/// A transformer configuration: the field specs of each built-in transformer.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// `namePrefix`.
    pub name_prefix: Vec<FieldSpec>,
    /// `nameSuffix`.
    pub name_suffix: Vec<FieldSpec>,
    /// `namespace`.
    pub namespace: Vec<FieldSpec>,
    /// `commonLabels` (metadata, templates and selectors).
    pub common_labels: Vec<FieldSpec>,
    /// Labels on metadata and pod templates, not selectors.
    pub template_labels: Vec<FieldSpec>,
    /// Labels on metadata only.
    pub metadata_labels: Vec<FieldSpec>,
    /// `commonAnnotations`.
    pub common_annotations: Vec<FieldSpec>,
    /// `images`.
    pub images: Vec<FieldSpec>,
    /// `replicas`.
    pub replicas: Vec<FieldSpec>,
    /// Fields where `$(VAR)` is substituted.
    pub var_reference: Vec<FieldSpec>,
    /// Name references.
    pub name_reference: Vec<NameBackRef>,
    /// Extra fields every `labels:` entry writes (`labels` of a configurations file).
    pub labels: Vec<FieldSpec>,
}

fn specs(raw: &[RawSpec]) -> Vec<FieldSpec> {
    raw.iter().map(FieldSpec::from_raw).collect()
}

static BUILTIN: LazyLock<Config> = LazyLock::new(|| {
    // The table is committed with the source and checked by this module's tests.
    let table: ConfigFile =
        yaml_serde::from_str(include_str!("fieldspecs.yaml")).expect("fieldspecs.yaml is valid");
    Config::from_parsed(&table)
});

/// kustomize's default transformer configuration.
pub fn builtin() -> &'static Config {
    &BUILTIN
}

/// A transformer configuration file in kustomize's format (`configurations:` files, and the
/// built-in table, which also has `metadataLabels` and names referrers `referrers`).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    name_prefix: Vec<RawSpec>,
    #[serde(default)]
    name_suffix: Vec<RawSpec>,
    #[serde(default)]
    namespace: Vec<RawSpec>,
    #[serde(default)]
    common_labels: Vec<RawSpec>,
    #[serde(default)]
    template_labels: Vec<RawSpec>,
    #[serde(default)]
    metadata_labels: Vec<RawSpec>,
    #[serde(default)]
    labels: Vec<RawSpec>,
    #[serde(default)]
    common_annotations: Vec<RawSpec>,
    #[serde(default)]
    images: Vec<RawSpec>,
    #[serde(default)]
    replicas: Vec<RawSpec>,
    #[serde(default)]
    var_reference: Vec<RawSpec>,
    #[serde(default)]
    name_reference: Vec<FileBackRef>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileBackRef {
    #[serde(default)]
    group: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    kind: String,
    #[serde(default, alias = "referrers")]
    field_specs: Vec<RawSpec>,
}

impl Config {
    /// Parses a `configurations:` file.
    pub fn from_file(text: &str, file: &str) -> Result<Config> {
        let f: ConfigFile = crate::yaml::parse_as(text, file)?;
        Ok(Config::from_parsed(&f))
    }

    fn from_parsed(f: &ConfigFile) -> Config {
        Config {
            name_prefix: specs(&f.name_prefix),
            name_suffix: specs(&f.name_suffix),
            namespace: specs(&f.namespace),
            common_labels: specs(&f.common_labels),
            template_labels: specs(&f.template_labels),
            metadata_labels: specs(&f.metadata_labels),
            common_annotations: specs(&f.common_annotations),
            images: specs(&f.images),
            replicas: specs(&f.replicas),
            var_reference: specs(&f.var_reference),
            labels: specs(&f.labels),
            name_reference: f
                .name_reference
                .iter()
                .map(|b| NameBackRef {
                    gvk: Gvk {
                        group: b.group.clone(),
                        version: b.version.clone(),
                        kind: b.kind.clone(),
                    },
                    referrers: specs(&b.field_specs),
                })
                .collect(),
        }
    }

    /// Adds another configuration's specs (duplicates are dropped), in time linear in the
    /// number of specs: every kustomization directory of a build merges its configuration
    /// (the built-in one at least) into its parent's.
    pub fn merge(&mut self, other: &Config) {
        fn add(into: &mut Vec<FieldSpec>, from: &[FieldSpec]) {
            // Most often `from` is what `into` starts with (both the built-in configuration).
            if from.len() <= into.len() && into[..from.len()] == *from {
                return;
            }
            let fresh: Vec<FieldSpec> = {
                let mut known: std::collections::HashSet<&FieldSpec> = into.iter().collect();
                from.iter().filter(|s| known.insert(*s)).cloned().collect()
            };
            into.extend(fresh);
        }
        add(&mut self.name_prefix, &other.name_prefix);
        add(&mut self.name_suffix, &other.name_suffix);
        add(&mut self.namespace, &other.namespace);
        add(&mut self.common_labels, &other.common_labels);
        add(&mut self.template_labels, &other.template_labels);
        add(&mut self.metadata_labels, &other.metadata_labels);
        add(&mut self.common_annotations, &other.common_annotations);
        add(&mut self.images, &other.images);
        add(&mut self.replicas, &other.replicas);
        add(&mut self.var_reference, &other.var_reference);
        add(&mut self.labels, &other.labels);
        let mut by_gvk: std::collections::HashMap<Gvk, usize> = self
            .name_reference
            .iter()
            .enumerate()
            .map(|(i, r)| (r.gvk.clone(), i))
            .collect();
        for b in &other.name_reference {
            match by_gvk.get(&b.gvk) {
                Some(&i) => add(&mut self.name_reference[i].referrers, &b.referrers),
                None => {
                    by_gvk.insert(b.gvk.clone(), self.name_reference.len());
                    self.name_reference.push(b.clone());
                }
            }
        }
    }
}

/// Checks a spec list read from a kustomization (`labels[].fields`).
pub fn from_kustomization(raw: &[RawSpec], file: &str) -> Result<Vec<FieldSpec>> {
    for r in raw {
        if r.path.is_empty() {
            return Err(Error::in_file(
                ErrorKind::Invalid,
                file,
                "a field spec needs a path",
            ));
        }
    }
    Ok(specs(raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtin_table_loads() {
        let c = builtin();
        assert!(!c.name_prefix.is_empty());
        assert!(c.name_reference.iter().any(|b| b.gvk.kind == "ConfigMap"));
    }

    #[test]
    fn walks_lists_and_creates_maps() {
        let mut obj = json!({"spec": {"containers": [{"image": "a"}, {"image": "b"}]}})
            .as_object()
            .cloned()
            .expect("map");
        let spec = FieldSpec::any("spec/containers[]/image", false);
        spec.visit(&mut obj, &mut |v| {
            *v = json!(format!("{}:1", v.as_str().unwrap_or("")));
            Ok(())
        })
        .expect("walks");
        assert_eq!(obj["spec"]["containers"][1]["image"], "b:1");
        let spec = FieldSpec::any("metadata/labels", true);
        spec.visit(&mut obj, &mut |v| {
            *v = json!({"a": "b"});
            Ok(())
        })
        .expect("creates");
        assert_eq!(obj["metadata"]["labels"]["a"], "b");
    }

    #[test]
    fn splits_escaped_paths() {
        assert_eq!(
            split_path(r"metadata/annotations/a.b\/c/x[name=a/b]"),
            vec!["metadata", "annotations", "a.b/c", "x[name=a/b]"]
        );
    }
}
