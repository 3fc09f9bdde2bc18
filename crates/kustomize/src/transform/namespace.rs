//! `namespace`: sets metadata.namespace on namespaced objects, renames v1 Namespace objects,
//! fills the namespace of RoleBinding subjects named `default`, and the namespace fields of the
//! configuration.

use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::fieldspec::Config;
use crate::resmap::ResMap;

/// Moves every namespaced object into `ns`.
/// How a namespace transformer treats RoleBinding and ClusterRoleBinding subjects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectMode {
    /// Subjects named `default` (kustomize's default).
    DefaultOnly,
    /// Every ServiceAccount subject.
    AllServiceAccounts,
    /// None.
    None,
}

/// A configured namespace transformer.
#[derive(Debug, Clone)]
pub struct Settings {
    pub namespace: String,
    /// Fields set besides `metadata.namespace` of namespaced objects.
    pub specs: Vec<crate::fieldspec::FieldSpec>,
    /// Only objects (and fields) without a namespace get one.
    pub unset_only: bool,
    pub subjects: SubjectMode,
}

/// The kustomization's `namespace:` field.
pub fn set(res: &mut ResMap, ns: &str, config: &Config) -> Result<()> {
    set_with(
        res,
        &Settings {
            namespace: ns.to_string(),
            specs: config.namespace.clone(),
            unset_only: false,
            subjects: SubjectMode::DefaultOnly,
        },
    )
}

/// A namespace transformer as configured.
pub fn set_with(res: &mut ResMap, settings: &Settings) -> Result<()> {
    let ns = settings.namespace.as_str();
    if ns.is_empty() {
        return Ok(());
    }
    let unset = |v: &Value| v.as_str().is_none_or(str::is_empty);
    for r in &mut res.resources {
        let gvk = r.gvk();
        if !gvk.is_cluster_scoped() && (!settings.unset_only || r.namespace().is_empty()) {
            r.set_namespace(ns);
        }
        if (gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding")
            && settings.subjects != SubjectMode::None
            && let Some(Value::Array(subjects)) = r.obj.get_mut("subjects")
        {
            for s in subjects.iter_mut() {
                let Value::Object(s) = s else { continue };
                let chosen = match settings.subjects {
                    SubjectMode::DefaultOnly => {
                        s.get("name").and_then(Value::as_str) == Some("default")
                    }
                    SubjectMode::AllServiceAccounts => {
                        s.get("kind").and_then(Value::as_str) == Some("ServiceAccount")
                    }
                    SubjectMode::None => false,
                };
                if chosen && (!settings.unset_only || s.get("namespace").is_none_or(unset)) {
                    s.insert("namespace".into(), Value::String(ns.to_string()));
                }
            }
        }
        for spec in settings.specs.iter().filter(|s| s.applies_to(&gvk)) {
            if spec.path == "metadata/namespace" {
                continue;
            }
            if spec.path == "metadata/name" {
                if gvk.kind == "Namespace" && r.api_version() == "v1" {
                    r.set_name(ns);
                }
                continue;
            }
            if (gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding")
                && spec.path.starts_with("subjects")
            {
                continue;
            }
            spec.visit(&mut r.obj, &mut |v| {
                if !settings.unset_only || unset(v) {
                    *v = Value::String(ns.to_string());
                }
                Ok(())
            })?;
        }
    }
    if let Some(r) = res.first_duplicate() {
        return Err(Error::new(
            ErrorKind::IdConflict,
            format!(
                "namespace transformation produces ID conflict: {} (from {})",
                r.id(),
                r.origin
            ),
        ));
    }
    Ok(())
}
