//! One kustomization level: read its file, accumulate resources, components and generated
//! objects, run its transformers. The top level then adds content hashes, fixes name
//! references, resolves vars and sorts.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::fieldspec::{self, Config};
use crate::fs::BuildRoot;
use crate::generate::{self, GeneratorKind};
use crate::kustomization::{FILE_NAMES, Kustomization, Var};
use crate::plugins;
use crate::resmap::ResMap;
use crate::resource::{Behavior, Resource};
use crate::transform;
use crate::transform::smp::CustomSchema;
use crate::yaml;

/// How files referenced by a kustomization may be placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadRestrictions {
    /// Files (not directories) must sit in or below the kustomization's directory, as
    /// `kubectl kustomize` requires by default.
    #[default]
    RootOnly,
    /// Files may be anywhere inside the build root, as Flux builds.
    None,
}

/// Build options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Where referenced files may be.
    pub load_restrictions: LoadRestrictions,
    /// When the directory to build has no kustomization file, generate one from the manifests
    /// found below it (Flux's behaviour) instead of failing.
    pub generate_missing: bool,
    /// A Flux Kustomization's spec fields merged into the top kustomization before the build.
    pub overlay: Option<crate::flux::Overlay>,
    /// Passes every file read through a filter (SOPS decryption).
    pub filter: Option<crate::fs::Filter>,
}

/// What a kustomization level hands to its parent.
#[derive(Debug, Clone)]
pub(crate) struct Accumulation {
    pub res: ResMap,
    pub config: Config,
    pub vars: Vec<(Var, Option<u64>)>,
    /// Whether transformers record themselves on resources (`transformerAnnotations`).
    pub track: bool,
}

impl Accumulation {
    fn new(track: bool) -> Accumulation {
        Accumulation {
            res: ResMap::new(),
            config: fieldspec::builtin().clone(),
            vars: Vec::new(),
            track,
        }
    }

    fn absorb(&mut self, other: Accumulation) -> Result<()> {
        self.res.append_all(other.res)?;
        self.config.merge(&other.config);
        for (v, uid) in other.vars {
            self.add_var(v, uid, "")?;
        }
        Ok(())
    }

    fn add_var(&mut self, v: Var, uid: Option<u64>, file: &str) -> Result<()> {
        if self.vars.iter().any(|(x, _)| x.name == v.name) {
            return Err(Error::in_file(
                ErrorKind::Invalid,
                file,
                format!("var {:?} already encountered", v.name),
            ));
        }
        self.vars.push((v, uid));
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The directory being built: a Kustomization or a Component.
    Top,
    Kustomization,
    Component,
}

/// Builds kustomizations inside one build root.
#[derive(Debug, Clone)]
pub struct Builder {
    root: BuildRoot,
    options: Options,
    /// The build's OpenAPI schema, set by the first kustomization loaded that has `openapi:`
    /// (`None` inside: the built-in one, chosen by `openapi: {version: ...}`).
    schema: std::sync::OnceLock<Option<std::sync::Arc<CustomSchema>>>,
}

/// A loaded kustomization level.
pub(crate) struct Level {
    pub k: Kustomization,
    pub dir: PathBuf,
    /// The kustomization file, relative to the build root.
    pub file: String,
}

impl Builder {
    /// A builder reading only below `root`.
    pub fn new(root: &Path, options: Options) -> Result<Builder> {
        Ok(Builder {
            root: BuildRoot::new(root)?.with_filter(options.filter.clone()),
            options,
            schema: std::sync::OnceLock::new(),
        })
    }

    /// The build root.
    pub fn root(&self) -> &BuildRoot {
        &self.root
    }

    /// Builds the kustomization in `dir` (inside the root) into its final resources.
    pub fn build(&self, dir: &Path) -> Result<ResMap> {
        // State that lives for one build (the schema) starts afresh each time.
        Builder {
            root: self.root.clone(),
            options: self.options.clone(),
            schema: std::sync::OnceLock::new(),
        }
        .build_once(dir)
    }

    /// The custom OpenAPI schema of this build, if a kustomization gave one.
    pub(crate) fn schema(&self) -> Option<&CustomSchema> {
        self.schema.get().and_then(|s| s.as_deref())
    }

    /// `openapi:`: the first kustomization loaded that sets it chooses the build's schema, as
    /// in kustomize (an overlay's choice wins over its bases').
    fn choose_schema(&self, level: &Level) -> Result<()> {
        let Some(openapi) = &level.k.openapi else {
            return Ok(());
        };
        if self.schema.get().is_some() {
            return Ok(());
        }
        let field = |k: &str| openapi.get(k).and_then(Value::as_str).unwrap_or("");
        let chosen = match (field("path"), field("version")) {
            ("", "") => {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    level.file.clone(),
                    "openapi: give a path to a schema or a version",
                ));
            }
            ("", _) => None,
            (path, _) => {
                let (text, file) = self.read_text(level, path)?;
                let doc = yaml::parse_one_as(&text, &file, yaml::Dialect::Yaml11)?;
                Some(std::sync::Arc::new(CustomSchema::parse(doc, &file)?))
            }
        };
        let _ = self.schema.set(chosen);
        Ok(())
    }

    fn build_once(&self, dir: &Path) -> Result<ResMap> {
        let dir = self.root.locate(dir)?;
        let mut stack = Vec::new();
        let level = self.load(&dir, Role::Top, true)?;
        let track = level
            .k
            .build_metadata
            .iter()
            .any(|m| m == "transformerAnnotations");
        let mut acc = Accumulation::new(track);
        self.accumulate(&level, &mut acc, &mut stack)?;
        transform::hash::add_hashes(&mut acc.res)?;
        transform::nameref::fix(&mut acc.res, &acc.config)?;
        transform::vars::resolve(&mut acc.res, &acc.vars, &acc.config)?;
        // Objects marked local-config take part in the build but are not output.
        acc.res.resources.retain(|r| {
            r.string_map("annotations")
                .get("config.kubernetes.io/local-config")
                .is_none_or(|v| v.as_str() == Some("false"))
        });
        // kustomize's internal annotations are removed at the end of a build, and an
        // `annotations` left empty (or null from the start) goes with them.
        for r in &mut acc.res.resources {
            if let Some(Value::Object(meta)) = r.obj.get_mut("metadata")
                && meta
                    .get("annotations")
                    .is_some_and(|a| a.is_null() || a.as_object().is_some_and(Map::is_empty))
            {
                meta.remove("annotations");
            }
        }
        transform::sort::sort(&mut acc.res, level.k.sort_options.as_ref(), &level.file)?;
        transform::metadata::finish(
            &mut acc.res,
            &level.k.build_metadata,
            &self.root,
            &level.dir,
        )?;
        Ok(acc.res)
    }

    fn load(&self, dir: &Path, role: Role, top: bool) -> Result<Level> {
        let shown = self.root.display(dir);
        let found = FILE_NAMES.iter().map(|n| dir.join(n)).find(|p| p.is_file());
        let Some(path) = found else {
            if top && self.options.generate_missing {
                let mut k = crate::flux::generate(&self.root, dir)?;
                let file = format!("{shown}/kustomization.yaml (generated)");
                if let Some(overlay) = &self.options.overlay {
                    overlay.merge(&mut k, dir, &file)?;
                }
                return Ok(Level {
                    k,
                    dir: dir.to_path_buf(),
                    file,
                });
            }
            return Err(Error::in_file(
                ErrorKind::MissingFile,
                shown,
                "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory",
            ));
        };
        // A kustomization file that is a symlink must still resolve inside the root.
        let real = path.canonicalize().map_err(|e| {
            Error::in_file(
                ErrorKind::MissingFile,
                self.root.display(&path),
                e.to_string(),
            )
        })?;
        if !real.starts_with(self.root.path()) {
            return Err(Error::in_file(
                ErrorKind::OutsideRoot,
                self.root.display(&path),
                "is a symlink that leaves the build root",
            ));
        }
        let file = self.root.display(&path);
        let text = self.root.read_text(&real)?;
        let mut k = parse_kustomization(&text, &file)?;
        let kind = k.kind.clone().unwrap_or_default();
        match (role, kind.as_str()) {
            (Role::Top, "" | "Kustomization" | "Component") => {}
            (Role::Kustomization, "" | "Kustomization") => {}
            (Role::Component, "Component") => {}
            (Role::Kustomization, "Component") => {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    file,
                    "expected kind 'Kustomization' but got 'Component': a Component can only be used in `components`",
                ));
            }
            (Role::Component, _) => {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    file,
                    format!(
                        "expected kind 'Component' but got {:?}: only Components can be used in `components`",
                        if kind.is_empty() {
                            "Kustomization"
                        } else {
                            &kind
                        }
                    ),
                ));
            }
            (_, other) => {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    file,
                    format!("unknown kind {other:?}: expected Kustomization or Component"),
                ));
            }
        }
        self.refuse_unsupported(&k, &file)?;
        // Deprecated spellings, folded into their replacements as kustomize does.
        let bases = std::mem::take(&mut k.bases);
        k.resources.extend(bases);
        let tags = std::mem::take(&mut k.image_tags);
        k.images.extend(tags);
        if top && let Some(overlay) = &self.options.overlay {
            overlay.merge(&mut k, dir, &file)?;
        }
        Ok(Level {
            k,
            dir: dir.to_path_buf(),
            file,
        })
    }

    fn refuse_unsupported(&self, k: &Kustomization, file: &str) -> Result<()> {
        let refuse = |what: &str, why: &str| {
            Err(Error::in_file(
                ErrorKind::Unsupported,
                file,
                format!("{what} is not supported: {why}"),
            ))
        };
        if k.helm_charts.is_some()
            || k.helm_chart_inflation_generator.is_some()
            || k.helm_globals.is_some()
        {
            return refuse(
                "helm chart inflation (helmCharts)",
                "Tidegate never runs helm during a build; use a HelmRelease",
            );
        }
        if !k.validators.is_empty() {
            return refuse(
                "validators",
                "validators are external plugins (exec, Go or KRM functions), which never run",
            );
        }
        Ok(())
    }

    fn accumulate(
        &self,
        level: &Level,
        acc: &mut Accumulation,
        stack: &mut Vec<PathBuf>,
    ) -> Result<()> {
        if stack.contains(&level.dir) {
            let mut chain: Vec<String> = stack.iter().map(|d| self.root.display(d)).collect();
            chain.push(self.root.display(&level.dir));
            return Err(Error::in_file(
                ErrorKind::Cycle,
                level.file.clone(),
                format!("cycle detected: {}", chain.join(" -> ")),
            ));
        }
        stack.push(level.dir.clone());
        self.choose_schema(level)?;
        let k = &level.k;
        for r in &k.resources {
            let path = self.root.resolve(&level.dir, r, &level.file)?;
            if path.is_dir() {
                let sub_level = self.load(&path, Role::Kustomization, false)?;
                let mut sub = Accumulation::new(acc.track);
                self.accumulate(&sub_level, &mut sub, stack)?;
                acc.absorb(sub).map_err(|e| e.or_file(&level.file))?;
            } else {
                self.check_file_placement(level, &path, r)?;
                acc.res.extend(self.read_resources(&path)?)?;
            }
        }
        for c in &k.configurations {
            let path = self.file(level, c)?;
            let text = self.root.read_text(&path)?;
            let cfg = Config::from_file(&text, &self.root.display(&path))?;
            acc.config.merge(&cfg);
        }
        for c in &k.crds {
            let path = self.file(level, c)?;
            let text = self.root.read_text(&path)?;
            let cfg = transform::crds::config_from_crds(&text, &self.root.display(&path))?;
            acc.config.merge(&cfg);
        }
        let generators = [
            (GeneratorKind::ConfigMap, &k.config_map_generator),
            (GeneratorKind::Secret, &k.secret_generator),
        ];
        for (kind, entries) in generators {
            for g in entries {
                let r = generate::generate(
                    kind,
                    g,
                    k.generator_options.as_ref(),
                    &self.root,
                    &level.dir,
                    &level.file,
                )?;
                absorb_generated(&mut acc.res, r, &level.file)?;
            }
        }
        if !k.generators.is_empty() {
            let objects = self.plugin_objects(level, &k.generators, stack)?;
            for p in plugins::configure(objects, "generators")? {
                for r in p.generate(self, level)? {
                    absorb_generated(&mut acc.res, r, &level.file)?;
                }
            }
        }
        for c in &k.components {
            let path = self.root.resolve(&level.dir, c, &level.file)?;
            if !path.is_dir() {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    level.file.clone(),
                    format!(
                        "component {c:?} must be a directory holding a Component kustomization"
                    ),
                ));
            }
            let comp = self.load(&path, Role::Component, false)?;
            self.accumulate(&comp, acc, stack)?;
        }
        let transformers = if k.transformers.is_empty() {
            Vec::new()
        } else {
            let objects = self.plugin_objects(level, &k.transformers, stack)?;
            plugins::configure(objects, "transformers")?
        };
        transform::run(self, level, acc, &transformers).map_err(|e| e.or_file(&level.file))?;
        for v in &k.vars {
            let uid = transform::vars::attach(&acc.res, v).map_err(|e| e.or_file(&level.file))?;
            acc.add_var(v.clone(), uid, &level.file)?;
        }
        stack.pop();
        Ok(())
    }

    /// The plugin configuration objects of `generators:` or `transformers:` entries: files,
    /// kustomization directories (built as a base is) or inline YAML.
    fn plugin_objects(
        &self,
        level: &Level,
        entries: &[String],
        stack: &mut Vec<PathBuf>,
    ) -> Result<Vec<Resource>> {
        let mut acc = Accumulation::new(false);
        for e in entries {
            if e.contains('\n') {
                acc.res.extend(read_objects(e, &level.file)?)?;
                continue;
            }
            let path = self.root.resolve(&level.dir, e, &level.file)?;
            if path.is_dir() {
                let sub_level = self.load(&path, Role::Kustomization, false)?;
                let mut sub = Accumulation::new(false);
                self.accumulate(&sub_level, &mut sub, stack)?;
                acc.absorb(sub).map_err(|err| err.or_file(&level.file))?;
            } else {
                self.check_file_placement(level, &path, e)?;
                acc.res.extend(self.read_resources(&path)?)?;
            }
        }
        Ok(acc.res.resources)
    }

    /// Resolves a file named in a kustomization, applying the load restrictions.
    pub(crate) fn file(&self, level: &Level, reference: &str) -> Result<PathBuf> {
        let path = self.root.resolve(&level.dir, reference, &level.file)?;
        if path.is_dir() {
            return Err(Error::in_file(
                ErrorKind::Invalid,
                level.file.clone(),
                format!("{reference:?} is a directory, a file is expected"),
            ));
        }
        self.check_file_placement(level, &path, reference)?;
        Ok(path)
    }

    fn check_file_placement(&self, level: &Level, path: &Path, reference: &str) -> Result<()> {
        if self.options.load_restrictions == LoadRestrictions::RootOnly
            && !path.starts_with(&level.dir)
        {
            return Err(Error::in_file(
                ErrorKind::OutsideRoot,
                level.file.clone(),
                format!(
                    "security; file {reference:?} ({}) is not in or below the kustomization directory {}",
                    self.root.display(path),
                    self.root.display(&level.dir)
                ),
            ));
        }
        Ok(())
    }

    /// Reads the Kubernetes objects of a manifest file (List kinds are flattened).
    pub(crate) fn read_resources(&self, path: &Path) -> Result<Vec<Resource>> {
        let file = self.root.display(path);
        let text = self.root.read_text(path)?;
        read_objects(&text, &file)
    }

    /// Reads a file named in a kustomization as text.
    pub(crate) fn read_text(&self, level: &Level, reference: &str) -> Result<(String, String)> {
        let path = self.file(level, reference)?;
        Ok((self.root.read_text(&path)?, self.root.display(&path)))
    }
}

/// kustomize's refusal of a kustomization that declares nothing (`CheckEmpty`).
pub const EMPTY_KUSTOMIZATION: &str = "kustomization.yaml is empty";

/// Reads a kustomization file as kustomize does: YAML to JSON (a repeated key keeps its last
/// value), field names matched case-insensitively at every level as Go's `encoding/json`
/// matches them, unknown fields refused.
///
/// A kustomization that declares nothing (an empty file, only comments, only `apiVersion` and
/// `kind`) is refused as kustomize v5 refuses it: its build would be empty, and a Kustomization
/// applying it with `prune: true` would delete everything it manages.
fn parse_kustomization(text: &str, file: &str) -> Result<Kustomization> {
    let empty = || Error::in_file(ErrorKind::Invalid, file, EMPTY_KUSTOMIZATION);
    if text.trim().is_empty() {
        return Err(empty());
    }
    let value = yaml::parse_one_as(text, file, yaml::Dialect::Yaml11)?;
    let Value::Object(map) = value else {
        if value.is_null() {
            return Err(empty());
        }
        return Err(Error::in_file(
            ErrorKind::InvalidYaml,
            file,
            "a kustomization must be a map",
        ));
    };
    // kustomize compares the decoded file with an empty one, its apiVersion and kind aside:
    // a field left null or an empty string is Go's zero value, `resources: []` is not.
    let declares = |(k, v): (&String, &Value)| {
        !k.eq_ignore_ascii_case("apiVersion")
            && !k.eq_ignore_ascii_case("kind")
            && !v.is_null()
            && v.as_str() != Some("")
    };
    if !map.iter().any(declares) {
        return Err(empty());
    }
    let fixed = crate::kustomization::field_names::canonical_kustomization(Value::Object(map));
    serde_json::from_value(fixed).map_err(|e| {
        let message = e.to_string();
        let kind = if message.starts_with("unknown field") {
            ErrorKind::UnknownField
        } else {
            ErrorKind::Invalid
        };
        // Point at the line of the offending field when the message names one.
        let line = message
            .split('`')
            .nth(1)
            .and_then(|field| {
                text.lines()
                    .position(|l| l.trim_start().starts_with(&format!("{field}:")))
            })
            .map(|i| i + 1);
        Error::in_file(kind, file, format!("invalid kustomization: {message}")).at_line(line)
    })
}

/// Parses a manifest stream into resources; `file` names it in errors.
pub(crate) fn read_objects(text: &str, file: &str) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    for doc in yaml::parse_stream(text, file)? {
        let Value::Object(obj) = doc.value else {
            return Err(Error::in_file(
                ErrorKind::InvalidYaml,
                file,
                "a document is not a map; expected a Kubernetes object",
            )
            .at_line(Some(doc.line)));
        };
        flatten(obj, file, doc.line, &mut out)?;
    }
    Ok(out)
}

fn flatten(
    obj: Map<String, Value>,
    file: &str,
    line: usize,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if kind.is_empty() {
        return Err(Error::in_file(
            ErrorKind::InvalidYaml,
            file,
            "missing kind in a Kubernetes object",
        )
        .at_line(Some(line)));
    }
    if kind.ends_with("List") && obj.contains_key("items") {
        if let Some(Value::Array(items)) = obj.get("items") {
            for item in items {
                match item {
                    Value::Object(m) => flatten(m.clone(), file, line, out)?,
                    _ => {
                        return Err(Error::in_file(
                            ErrorKind::InvalidYaml,
                            file,
                            format!("an item of {kind} is not an object"),
                        )
                        .at_line(Some(line)));
                    }
                }
            }
        }
        return Ok(());
    }
    let res = Resource::new(obj, file, line);
    if res.name().is_empty() {
        return Err(Error::in_file(
            ErrorKind::InvalidYaml,
            file,
            format!("missing metadata.name in a {kind} object"),
        )
        .at_line(Some(line)));
    }
    out.push(res);
    Ok(())
}

/// Adds a generated ConfigMap or Secret according to its behavior.
fn absorb_generated(res: &mut ResMap, r: Resource, file: &str) -> Result<()> {
    let behavior = r
        .generated
        .as_ref()
        .map(|g| g.behavior)
        .unwrap_or(Behavior::Create);
    let id = r.id();
    let matches = res.by_any_id(&id);
    match behavior {
        Behavior::Create => res.append(r),
        Behavior::Merge | Behavior::Replace => {
            let [i] = matches.as_slice() else {
                let what = if matches.is_empty() {
                    "no"
                } else {
                    "more than one"
                };
                return Err(Error::in_file(
                    ErrorKind::NoMatch,
                    file,
                    format!(
                        "generator {:?} with behavior {}: found {what} existing resource to {} ({id})",
                        r.name(),
                        if behavior == Behavior::Merge {
                            "merge"
                        } else {
                            "replace"
                        },
                        if behavior == Behavior::Merge {
                            "merge into"
                        } else {
                            "replace"
                        },
                    ),
                ));
            };
            let existing = &mut res.resources[*i];
            transform::generated::combine(existing, r, behavior);
            Ok(())
        }
    }
}
