//! `namePrefix` and `nameSuffix`.

use serde_json::Value;

use crate::error::Result;
use crate::fieldspec::FieldSpec;
use crate::resmap::ResMap;
use crate::resource::Resource;

/// Kinds that never get a prefix or suffix: their names are fixed by Kubernetes or shared.
fn skipped(r: &Resource) -> bool {
    let g = r.gvk();
    g.kind == "CustomResourceDefinition"
        || g.kind == "Namespace"
        || (g.kind == "APIService" && g.group == "apiregistration.k8s.io")
}

/// Adds `prefix` and `suffix` to the fields `specs` name.
pub fn add(res: &mut ResMap, prefix: &str, suffix: &str, specs: &[FieldSpec]) -> Result<()> {
    for r in &mut res.resources {
        if skipped(r) {
            continue;
        }
        let gvk = r.gvk();
        for spec in specs.iter().filter(|s| s.applies_to(&gvk)) {
            if spec.path == "metadata/name" {
                let name = format!("{prefix}{}{suffix}", r.name());
                r.set_name(&name);
                if !prefix.is_empty() {
                    r.prefixes.push(prefix.to_string());
                }
                if !suffix.is_empty() {
                    r.suffixes.push(suffix.to_string());
                }
                continue;
            }
            spec.visit(&mut r.obj, &mut |v| {
                if let Value::String(s) = v {
                    *s = format!("{prefix}{s}{suffix}");
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}
