//! kustomize's builtin generators and transformers configured as objects: the entries of
//! `generators:` and `transformers:` whose `apiVersion` is `builtin` (`LabelTransformer`,
//! `PatchTransformer`, `ConfigMapGenerator`, ...). They are the same code as the
//! kustomization's own fields, configured from the object instead. External plugins (exec and
//! Go plugins, KRM functions in containers or executables) never run.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::fieldspec::{self, FieldSpec};
use crate::generate::{self, GeneratorKind};
use crate::kustomization::{
    FieldSpec as RawSpec, GeneratorArgs, Image, Patch, ReplacementField, Replica, Selector,
    SortOptions,
};
use crate::resmap::ResMap;
use crate::resource::{ConfiguredBy, Resource};
use crate::target::{Builder, Level};
use crate::transform::{self, namespace::SubjectMode};

/// One configured builtin plugin.
#[derive(Debug)]
pub(crate) struct Plugin {
    /// The kind (`LabelTransformer`, ...), with the configuration's name and namespace, as
    /// build metadata records it.
    pub by: ConfiguredBy,
    config: Configured,
    /// The file the configuration was read from (the kustomization for inline ones).
    pub origin: String,
}

#[derive(Debug)]
enum Configured {
    Labels(BTreeMap<String, String>, Vec<FieldSpec>),
    Annotations(BTreeMap<String, String>, Vec<FieldSpec>),
    Namespace(transform::namespace::Settings),
    Names {
        prefix: String,
        suffix: String,
        specs: Vec<FieldSpec>,
    },
    ImageTag(Image, Vec<FieldSpec>),
    Replicas(Replica, Vec<FieldSpec>),
    Patch(Patch),
    StrategicMerge {
        paths: Vec<String>,
        patches: String,
    },
    Json6902(Patch),
    Hash,
    Replacements(Vec<ReplacementField>),
    ValueAdd(ValueAdd),
    Sort(SortOptions),
    Generator(GeneratorKind, GeneratorArgs),
    IamPolicy(IamPolicy),
}

/// Every builtin plugin kind kustomize v5 knows, in the words its loader uses.
const BUILTIN_KINDS: [&str; 20] = [
    "AnnotationsTransformer",
    "ConfigMapGenerator",
    "IAMPolicyGenerator",
    "HashTransformer",
    "ImageTagTransformer",
    "LabelTransformer",
    "NamespaceTransformer",
    "PatchJson6902Transformer",
    "PatchStrategicMergeTransformer",
    "PatchTransformer",
    "PrefixSuffixTransformer",
    "PrefixTransformer",
    "SuffixTransformer",
    "ReplicaCountTransformer",
    "SecretGenerator",
    "ValueAddTransformer",
    "HelmChartInflationGenerator",
    "ReplacementTransformer",
    "SortOrderTransformer",
    "LegacyOrderTransformer",
];

fn de<T: for<'de> Deserialize<'de>>(obj: &Map<String, Value>, origin: &str) -> Result<T> {
    serde_json::from_value(Value::Object(obj.clone())).map_err(|e| {
        Error::in_file(
            ErrorKind::Invalid,
            origin,
            format!(
                "invalid {} configuration {:?}: {e}",
                obj.get("kind").and_then(Value::as_str).unwrap_or(""),
                name_of(obj)
            ),
        )
    })
}

fn meta_of(obj: &Map<String, Value>) -> Meta {
    obj.get("metadata")
        .cloned()
        .and_then(|m| serde_json::from_value(m).ok())
        .unwrap_or_default()
}

fn name_of(obj: &Map<String, Value>) -> &str {
    obj.get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// A field spec in a plugin configuration, where unknown fields are ignored as kustomize
/// ignores them there.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct PluginSpec {
    group: String,
    version: String,
    kind: String,
    path: String,
    create: bool,
}

fn specs(raw: &[PluginSpec], origin: &str) -> Result<Vec<FieldSpec>> {
    let raw: Vec<RawSpec> = raw
        .iter()
        .map(|s| RawSpec {
            group: s.group.clone(),
            version: s.version.clone(),
            kind: s.kind.clone(),
            path: s.path.clone(),
            create: s.create,
        })
        .collect();
    fieldspec::from_kustomization(&raw, origin)
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct Meta {
    name: String,
    namespace: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct MapConfig {
    #[serde(deserialize_with = "crate::kustomization::scalar_string_map")]
    labels: BTreeMap<String, String>,
    #[serde(deserialize_with = "crate::kustomization::scalar_string_map")]
    annotations: BTreeMap<String, String>,
    field_specs: Vec<PluginSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct NamespaceConfig {
    metadata: Meta,
    field_specs: Vec<PluginSpec>,
    unset_only: bool,
    set_role_binding_subjects: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct NamesConfig {
    prefix: String,
    suffix: String,
    field_specs: Vec<PluginSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ImageTagConfig {
    image_tag: Option<Image>,
    field_specs: Vec<PluginSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ReplicaConfig {
    replica: Option<Replica>,
    field_specs: Vec<PluginSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PatchConfig {
    path: Option<String>,
    patch: Option<String>,
    target: Option<Selector>,
    options: BTreeMap<String, bool>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Json6902Config {
    target: Option<Selector>,
    path: Option<String>,
    json_op: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct StrategicMergeConfig {
    paths: Vec<String>,
    patches: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ReplacementConfig {
    replacements: Vec<ReplacementField>,
}

/// `ValueAddTransformer`: a value written into fields, or into a position of a file path held
/// in a field.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct ValueAdd {
    value: String,
    targets: Vec<ValueAddTarget>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ValueAddTarget {
    selector: Option<Selector>,
    file_path_position: usize,
    field_path: String,
}

/// `IAMPolicyGenerator`: a ServiceAccount bound to a GKE service account.
#[derive(Debug, Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct IamPolicy {
    cloud: String,
    kubernetes_service: Meta,
    service_account: GcpServiceAccount,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct GcpServiceAccount {
    name: String,
    project_id: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct SortConfig {
    sort_options: Option<SortOptions>,
}

/// Reads plugin configuration objects. Each must be a builtin (`apiVersion: builtin`); anything
/// else is an external plugin and refused.
pub(crate) fn configure(objects: Vec<Resource>, field: &str) -> Result<Vec<Plugin>> {
    objects
        .into_iter()
        .map(|r| configure_one(&r.obj, &r.origin, field))
        .collect()
}

fn configure_one(obj: &Map<String, Value>, origin: &str, field: &str) -> Result<Plugin> {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let annotations = obj
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object);
    let function = annotations.is_some_and(|a| {
        a.contains_key("config.kubernetes.io/function") || a.contains_key("config.k8s.io/function")
    });
    let refuse = |why: String| Err(Error::in_file(ErrorKind::Unsupported, origin, why));
    if function {
        return refuse(format!(
            "{field}: {kind} {:?} is a KRM function (container or exec); Tidegate runs only kustomize's builtin generators and transformers",
            name_of(obj)
        ));
    }
    let Some(&kind) = BUILTIN_KINDS.iter().find(|k| **k == kind) else {
        return refuse(format!(
            "{field}: {kind}.{api_version} {:?} is an external plugin (exec or Go); Tidegate runs only kustomize's builtin generators and transformers (apiVersion: builtin)",
            name_of(obj)
        ));
    };
    if api_version != "builtin" {
        return refuse(format!(
            "{field}: {kind}.{api_version} {:?} is an external plugin (exec or Go); kustomize's builtin {kind} is configured with apiVersion: builtin",
            name_of(obj)
        ));
    }
    let config = match kind {
        "LabelTransformer" => {
            let c: MapConfig = de(obj, origin)?;
            Configured::Labels(c.labels, specs(&c.field_specs, origin)?)
        }
        "AnnotationsTransformer" => {
            let c: MapConfig = de(obj, origin)?;
            Configured::Annotations(c.annotations, specs(&c.field_specs, origin)?)
        }
        "NamespaceTransformer" => {
            let c: NamespaceConfig = de(obj, origin)?;
            let subjects = match c.set_role_binding_subjects.as_str() {
                "" | "defaultOnly" => SubjectMode::DefaultOnly,
                "allServiceAccounts" => SubjectMode::AllServiceAccounts,
                "none" => SubjectMode::None,
                other => {
                    return Err(Error::in_file(
                        ErrorKind::Invalid,
                        origin,
                        format!(
                            "NamespaceTransformer: invalid setRoleBindingSubjects {other:?} (defaultOnly, allServiceAccounts or none)"
                        ),
                    ));
                }
            };
            Configured::Namespace(transform::namespace::Settings {
                namespace: c.metadata.namespace,
                specs: specs(&c.field_specs, origin)?,
                unset_only: c.unset_only,
                subjects,
            })
        }
        "PrefixSuffixTransformer" | "PrefixTransformer" | "SuffixTransformer" => {
            let c: NamesConfig = de(obj, origin)?;
            Configured::Names {
                prefix: if kind == "SuffixTransformer" {
                    String::new()
                } else {
                    c.prefix
                },
                suffix: if kind == "PrefixTransformer" {
                    String::new()
                } else {
                    c.suffix
                },
                specs: specs(&c.field_specs, origin)?,
            }
        }
        "ImageTagTransformer" => {
            let c: ImageTagConfig = de(obj, origin)?;
            Configured::ImageTag(
                c.image_tag.unwrap_or_default(),
                specs(&c.field_specs, origin)?,
            )
        }
        "ReplicaCountTransformer" => {
            let c: ReplicaConfig = de(obj, origin)?;
            Configured::Replicas(
                c.replica.unwrap_or_default(),
                specs(&c.field_specs, origin)?,
            )
        }
        "PatchTransformer" => {
            let c: PatchConfig = de(obj, origin)?;
            Configured::Patch(Patch {
                path: c.path.filter(|p| !p.is_empty()),
                patch: c.patch.filter(|p| !p.trim().is_empty()),
                target: c.target,
                options: c.options,
            })
        }
        "PatchStrategicMergeTransformer" => {
            let c: StrategicMergeConfig = de(obj, origin)?;
            Configured::StrategicMerge {
                paths: c.paths,
                patches: c.patches,
            }
        }
        "PatchJson6902Transformer" => {
            let c: Json6902Config = de(obj, origin)?;
            Configured::Json6902(Patch {
                path: c.path.filter(|p| !p.is_empty()),
                patch: c.json_op.filter(|p| !p.trim().is_empty()),
                target: c.target,
                options: BTreeMap::new(),
            })
        }
        "HashTransformer" => Configured::Hash,
        "ReplacementTransformer" => {
            let c: ReplacementConfig = de(obj, origin)?;
            Configured::Replacements(c.replacements)
        }
        "ValueAddTransformer" => Configured::ValueAdd(de(obj, origin)?),
        "SortOrderTransformer" | "LegacyOrderTransformer" => {
            let c: SortConfig = de(obj, origin)?;
            Configured::Sort(c.sort_options.unwrap_or_else(|| SortOptions {
                order: "legacy".into(),
                ..SortOptions::default()
            }))
        }
        "ConfigMapGenerator" | "SecretGenerator" => {
            let meta: Meta = meta_of(obj);
            // Fields other than the generator's are ignored, as kustomize ignores them.
            const FIELDS: [&str; 9] = [
                "name",
                "namespace",
                "behavior",
                "files",
                "literals",
                "envs",
                "env",
                "options",
                "type",
            ];
            let body: Map<String, Value> = obj
                .iter()
                .filter(|(k, _)| FIELDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let mut args: GeneratorArgs = de(&body, origin)?;
            if args.name.is_empty() {
                args.name = meta.name;
            }
            if args.namespace.is_empty() {
                args.namespace = meta.namespace;
            }
            let g = if kind == "ConfigMapGenerator" {
                GeneratorKind::ConfigMap
            } else {
                GeneratorKind::Secret
            };
            Configured::Generator(g, args)
        }
        "IAMPolicyGenerator" => Configured::IamPolicy(de(obj, origin)?),
        _ => {
            return refuse(format!(
                "{field}: builtin {kind} is not supported: Tidegate never runs helm during a build; use a HelmRelease"
            ));
        }
    };
    let meta = meta_of(obj);
    Ok(Plugin {
        by: ConfiguredBy {
            kind,
            name: meta.name,
            namespace: meta.namespace,
        },
        config,
        origin: origin.to_string(),
    })
}

impl Plugin {
    /// Generates this plugin's objects.
    pub fn generate(&self, b: &Builder, level: &Level) -> Result<Vec<Resource>> {
        let mut r = match &self.config {
            Configured::Generator(kind, args) => {
                generate::generate(*kind, args, None, b.root(), &level.dir, &level.file)?
            }
            Configured::IamPolicy(p) => iam_policy(p, &self.origin)?,
            _ => Err(Error::in_file(
                ErrorKind::Invalid,
                &self.origin,
                format!(
                    "generators: {} is a transformer, not a generator",
                    self.by.kind
                ),
            ))?,
        };
        r.origin = self.origin.clone();
        r.generator = Some(self.by.clone());
        Ok(vec![r])
    }

    /// Runs this transformer over `res`.
    pub fn transform(&self, b: &Builder, level: &Level, res: &mut ResMap) -> Result<()> {
        match &self.config {
            Configured::Labels(pairs, specs) | Configured::Annotations(pairs, specs) => {
                transform::labels::apply(res, pairs, specs)
            }
            Configured::Namespace(settings) => transform::namespace::set_with(res, settings),
            Configured::Names {
                prefix,
                suffix,
                specs,
            } => transform::names::add(res, prefix, suffix, specs),
            Configured::ImageTag(image, specs) => transform::images::set(res, image, specs),
            Configured::Replicas(replica, specs) => transform::replicas::set(res, replica, specs),
            Configured::Patch(p) => transform::patch::patch(b, level, p, res),
            Configured::StrategicMerge { paths, patches } => {
                let mut entries = paths.clone();
                if !patches.trim().is_empty() {
                    entries.push(patches.clone());
                }
                transform::patch::strategic_merge_entries(b, level, &entries, res)
            }
            Configured::Json6902(p) => transform::patch::json6902_entry(b, level, p, res),
            Configured::Hash => transform::hash::add_hashes(res),
            Configured::Replacements(list) => {
                transform::replacements::run_list(b, level, list, res)
            }
            Configured::ValueAdd(v) => value_add(v, &level.dir, res),
            Configured::Sort(options) => transform::sort::sort(res, Some(options), &self.origin),
            Configured::Generator(..) | Configured::IamPolicy(_) => Err(Error::in_file(
                ErrorKind::Invalid,
                &self.origin,
                format!(
                    "transformers: {} is a generator, not a transformer",
                    self.by.kind
                ),
            )),
        }
    }
}

fn iam_policy(p: &IamPolicy, origin: &str) -> Result<Resource> {
    if p.cloud != "gke" {
        return Err(Error::in_file(
            ErrorKind::Invalid,
            origin,
            format!(
                "IAMPolicyGenerator: cloud {:?} is not supported (gke)",
                p.cloud
            ),
        ));
    }
    let mut meta = Map::new();
    meta.insert(
        "annotations".into(),
        serde_json::json!({
            "iam.gke.io/gcp-service-account": format!(
                "{}@{}.iam.gserviceaccount.com",
                p.service_account.name, p.service_account.project_id
            )
        }),
    );
    meta.insert(
        "name".into(),
        Value::String(p.kubernetes_service.name.clone()),
    );
    if !p.kubernetes_service.namespace.is_empty() {
        meta.insert(
            "namespace".into(),
            Value::String(p.kubernetes_service.namespace.clone()),
        );
    }
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), Value::String("v1".into()));
    obj.insert("kind".into(), Value::String("ServiceAccount".into()));
    obj.insert("metadata".into(), Value::Object(meta));
    Ok(Resource::new(obj, origin, 0))
}

/// `ValueAddTransformer`: writes the value into each target field (`/`-separated, created when
/// missing; `metadata/namespace` by default and then only on namespaced kinds); with
/// `filePathPosition` (1-based), into that position of a path held in the field.
/// Without a value, the name of the kustomization's directory is the value.
fn value_add(v: &ValueAdd, dir: &std::path::Path, res: &mut ResMap) -> Result<()> {
    let value = match v.value.trim() {
        "" => dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default(),
        given => given.to_string(),
    };
    if v.targets.is_empty() {
        return Err(Error::new(
            ErrorKind::Invalid,
            "ValueAddTransformer: must specify at least one target",
        ));
    }
    for t in &v.targets {
        let matcher = match &t.selector {
            Some(s) => Some(transform::select::Matcher::new(s)?),
            None => None,
        };
        let path = if t.field_path.is_empty() {
            "metadata/namespace"
        } else {
            t.field_path.as_str()
        };
        let spec = FieldSpec::any(path, true);
        for r in res
            .resources
            .iter_mut()
            .filter(|r| matcher.as_ref().is_none_or(|m| m.matches(r)))
        {
            if path == "metadata/namespace" && r.gvk().is_cluster_scoped() {
                continue;
            }
            spec.visit(&mut r.obj, &mut |field| {
                let new = if t.file_path_position == 0 {
                    value.clone()
                } else {
                    insert_path_part(
                        field.as_str().unwrap_or(""),
                        t.file_path_position - 1,
                        &value,
                    )
                };
                *field = Value::String(new);
                Ok(())
            })?;
        }
        if path == "metadata/namespace"
            && let Some(r) = res.first_duplicate()
        {
            return Err(Error::new(
                ErrorKind::IdConflict,
                format!("namespace transformation produces ID conflict: {}", r.id()),
            ));
        }
    }
    Ok(())
}

/// kustomize's `InsertPathPart`: `part` becomes element `pos` of a `/`-separated path (an
/// absolute path's root stays first; past the end it is appended).
fn insert_path_part(path: &str, pos: usize, part: &str) -> String {
    let mut parts: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    };
    let mut pos = pos.min(parts.len());
    if pos == 0 && parts.first() == Some(&"") {
        pos = 1;
    }
    parts.insert(pos, part);
    parts.join("/")
}
