//! `buildMetadata`: origin and transformer annotations and the managed-by label.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::fs::BuildRoot;
use crate::resmap::ResMap;
use crate::resource::ConfiguredBy;
use crate::target::{Accumulation, Level};

const ORIGIN: &str = "config.kubernetes.io/origin";
const TRANSFORMATIONS: &str = "alpha.config.kubernetes.io/transformations";
const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// What `kubectl kustomize` (kustomize built into a program without a module version) writes.
const MANAGED_BY_VALUE: &str = "kustomize-(devel)";

/// Notes on every resource that a transformer of `level` ran, when the build tracks it.
pub fn record(acc: &mut Accumulation, level: &Level, kind: &'static str) {
    record_by(acc, &level.file, &ConfiguredBy::field(kind));
}

/// Notes on every resource that a transformer configured in `file` ran, when the build
/// tracks it.
pub fn record_by(acc: &mut Accumulation, file: &str, by: &ConfiguredBy) {
    if !acc.track {
        return;
    }
    for r in &mut acc.res.resources {
        r.transformations.push((file.to_string(), by.clone()));
    }
}

/// The `configuredBy` lines of build metadata, indented by `indent`.
fn configured_by(by: &ConfiguredBy, indent: &str) -> String {
    let mut t = format!("{indent}apiVersion: builtin\n{indent}kind: {}\n", by.kind);
    if !by.name.is_empty() {
        t.push_str(&format!("{indent}name: {}\n", by.name));
    }
    if !by.namespace.is_empty() {
        t.push_str(&format!("{indent}namespace: {}\n", by.namespace));
    }
    t
}

/// Adds what the top-level `buildMetadata` asks for.
pub fn finish(res: &mut ResMap, options: &[String], root: &BuildRoot, top: &Path) -> Result<()> {
    let mut origin = false;
    let mut transformers = false;
    let mut managed = false;
    for o in options {
        match o.as_str() {
            "originAnnotations" => origin = true,
            "transformerAnnotations" => transformers = true,
            "managedByLabel" => managed = true,
            other => {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    format!(
                        "invalid buildMetadata option {other:?}: expected originAnnotations, transformerAnnotations or managedByLabel"
                    ),
                ));
            }
        }
    }
    let rel = |file: &str| -> String {
        let abs = root.path().join(file);
        relative(top, &abs)
    };
    for r in &mut res.resources {
        let origin_text = match &r.generator {
            Some(by) => format!(
                "configuredIn: {}\nconfiguredBy:\n{}",
                rel(&r.origin),
                configured_by(by, "  ")
            ),
            None => format!("path: {}\n", rel(&r.origin)),
        };
        let transformations = if transformers && !r.transformations.is_empty() {
            let mut t = String::new();
            for (file, by) in &r.transformations {
                t.push_str(&format!(
                    "- configuredIn: {}\n  configuredBy:\n{}",
                    rel(file),
                    configured_by(by, "    ")
                ));
            }
            Some(t)
        } else {
            None
        };
        if origin || transformations.is_some() {
            let meta = r.metadata_mut();
            let ann = meta
                .entry("annotations")
                .or_insert_with(|| Value::Object(Map::new()));
            if !ann.is_object() {
                *ann = Value::Object(Map::new());
            }
            if let Value::Object(ann) = ann {
                if origin {
                    ann.insert(ORIGIN.into(), Value::String(origin_text));
                }
                if let Some(t) = transformations {
                    ann.insert(TRANSFORMATIONS.into(), Value::String(t));
                }
            }
        }
        if managed {
            let meta = r.metadata_mut();
            let labels = meta
                .entry("labels")
                .or_insert_with(|| Value::Object(Map::new()));
            if !labels.is_object() {
                *labels = Value::Object(Map::new());
            }
            if let Value::Object(labels) = labels {
                labels.insert(MANAGED_BY.into(), Value::String(MANAGED_BY_VALUE.into()));
            }
        }
    }
    Ok(())
}

/// `to` relative to the directory `from`, with `..` where needed.
fn relative(from: &Path, to: &Path) -> String {
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    out.display().to_string()
}
