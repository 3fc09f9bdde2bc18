//! Flux's rule for a directory without a kustomization file: every `.yaml`/`.yml` file below it
//! (hidden ones included) becomes a resource, and a sub-directory holding its own kustomization
//! file becomes a resource directory that is not descended into. Files are visited in lexical
//! order, depth first; each must hold Kubernetes objects.

use std::path::Path;

use crate::error::{Error, ErrorKind, Result};
use crate::fs::BuildRoot;
use crate::kustomization::{FILE_NAMES, Kustomization};

/// Generates the kustomization Flux would write for `dir`.
pub fn generate(root: &BuildRoot, dir: &Path) -> Result<Kustomization> {
    let mut resources = Vec::new();
    walk(root, dir, dir, &mut resources)?;
    let mut k = Kustomization {
        api_version: Some("kustomize.config.k8s.io/v1beta1".into()),
        kind: Some("Kustomization".into()),
        ..Kustomization::default()
    };
    if resources.is_empty() {
        k.namespace = Some("_placeholder".into());
    }
    k.resources = resources;
    Ok(k)
}

fn walk(root: &BuildRoot, top: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
    let shown = root.display(dir);
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::in_file(ErrorKind::MissingFile, shown.clone(), e.to_string()))?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let rel = path
            .strip_prefix(top)
            .map(|p| format!("./{}", p.display()))
            .unwrap_or_else(|_| path.display().to_string());
        let meta = std::fs::symlink_metadata(&path).map_err(|err| {
            Error::in_file(ErrorKind::MissingFile, root.display(&path), err.to_string())
        })?;
        if meta.is_symlink() {
            // Resolve to check it stays inside the root.
            let real = path.canonicalize().map_err(|err| {
                Error::in_file(ErrorKind::MissingFile, root.display(&path), err.to_string())
            })?;
            if !real.starts_with(root.path()) {
                return Err(Error::in_file(
                    ErrorKind::OutsideRoot,
                    root.display(&path),
                    "is a symlink that leaves the build root",
                ));
            }
            if real.is_dir() {
                continue;
            }
        }
        if meta.is_dir() {
            if FILE_NAMES.iter().any(|n| path.join(n).is_file()) {
                out.push(rel);
            } else {
                walk(root, top, &path, out)?;
            }
            continue;
        }
        let ext = path.extension().and_then(|x| x.to_str()).unwrap_or("");
        if ext != "yaml" && ext != "yml" {
            continue;
        }
        let text = root.read_text(&path)?;
        crate::target::read_objects(&text, &root.display(&path)).map_err(|e| Error {
            message: format!("failed to decode Kubernetes YAML: {}", e.message),
            ..e
        })?;
        out.push(rel);
    }
    Ok(())
}

/// The parts of a Flux Kustomization's spec that Flux merges into the kustomization file before
/// the build (its generator): `targetNamespace`, `namePrefix`, `nameSuffix`, `patches`,
/// `images`, `components` (with `ignoreMissingComponents`) and `buildMetadata`.
/// (`commonMetadata` and the owner labels are set after the build, not here.)
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    /// Replaces `namespace`.
    pub target_namespace: Option<String>,
    /// Replaces `namePrefix`.
    pub name_prefix: Option<String>,
    /// Replaces `nameSuffix`.
    pub name_suffix: Option<String>,
    /// Appended to `patches` (inline patch, optional target).
    pub patches: Vec<(String, Option<crate::kustomization::Selector>)>,
    /// Merged into `images` by name.
    pub images: Vec<crate::kustomization::Image>,
    /// Appended to `components`; must be local relative paths.
    pub components: Vec<String>,
    /// Skip components that do not exist instead of failing the build.
    pub ignore_missing_components: bool,
    /// Replaces `buildMetadata` when not empty.
    pub build_metadata: Vec<String>,
}

impl Overlay {
    /// Merges the overlay into the top kustomization of `dir`, as Flux's generator does.
    pub(crate) fn merge(&self, k: &mut Kustomization, dir: &Path, file: &str) -> Result<()> {
        if let Some(ns) = self.target_namespace.as_ref().filter(|s| !s.is_empty()) {
            k.namespace = Some(ns.clone());
        }
        if let Some(p) = &self.name_prefix {
            k.name_prefix = Some(p.clone());
        }
        if let Some(s) = &self.name_suffix {
            k.name_suffix = Some(s.clone());
        }
        for (patch, target) in &self.patches {
            k.patches.push(crate::kustomization::Patch {
                path: None,
                patch: Some(patch.clone()),
                target: target.clone(),
                options: Default::default(),
            });
        }
        for c in &self.components {
            if !is_local_relative(c) {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    file,
                    format!("component path '{c}' must be local and relative"),
                ));
            }
            if self.ignore_missing_components && !dir.join(c).exists() {
                continue;
            }
            k.components.push(c.clone());
        }
        for image in &self.images {
            match k.images.iter_mut().find(|i| i.name == image.name) {
                Some(existing) => {
                    if !image.new_name.is_empty() {
                        existing.new_name = image.new_name.clone();
                    }
                    // Tag and digest are replaced together: setting one clears the other.
                    if !image.new_tag.is_empty() || !image.digest.is_empty() {
                        existing.new_tag = image.new_tag.clone();
                        existing.digest = image.digest.clone();
                    }
                }
                None => k.images.push(image.clone()),
            }
        }
        if !self.build_metadata.is_empty() {
            k.build_metadata = self.build_metadata.clone();
        }
        Ok(())
    }
}

/// Flux's rule for component paths: no remote forms, no absolute paths.
fn is_local_relative(path: &str) -> bool {
    let lower = path.to_lowercase();
    let remote = [
        "git::",
        "gh:",
        "ssh://",
        "https://",
        "http://",
        "git@",
        "github.com:",
        "github.com/",
        "file://",
    ];
    !remote.iter().any(|p| lower.starts_with(p)) && !Path::new(path).is_absolute()
}
