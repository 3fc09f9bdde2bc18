//! `namespace`: sets metadata.namespace on namespaced objects, renames v1 Namespace objects,
//! fills the namespace of RoleBinding subjects named `default`, and the namespace fields of the
//! configuration.

use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::fieldspec::Config;
use crate::resmap::ResMap;

/// Moves every namespaced object into `ns`.
pub fn set(res: &mut ResMap, ns: &str, config: &Config) -> Result<()> {
    for r in &mut res.resources {
        let gvk = r.gvk();
        if !gvk.is_cluster_scoped() {
            r.set_namespace(ns);
        }
        if (gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding")
            && let Some(Value::Array(subjects)) = r.obj.get_mut("subjects")
        {
            for s in subjects.iter_mut() {
                if let Value::Object(s) = s
                    && s.get("name").and_then(Value::as_str) == Some("default")
                {
                    s.insert("namespace".into(), Value::String(ns.to_string()));
                }
            }
        }
        for spec in config.namespace.iter().filter(|s| s.applies_to(&gvk)) {
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
                *v = Value::String(ns.to_string());
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
