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
