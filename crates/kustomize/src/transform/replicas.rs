//! `replicas`: sets spec.replicas of workloads by name.

use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::fieldspec::FieldSpec;
use crate::kustomization::Replica;
use crate::resmap::ResMap;

/// Applies one `replicas` entry to resources whose current or earlier name is the entry's.
pub fn set(res: &mut ResMap, replica: &Replica, specs: &[FieldSpec]) -> Result<()> {
    let mut matched = false;
    for r in &mut res.resources {
        if !r.any_id(|id| id.name == replica.name) {
            continue;
        }
        let gvk = r.gvk();
        for spec in specs.iter().filter(|s| s.applies_to(&gvk)) {
            matched = true;
            spec.visit(&mut r.obj, &mut |v| {
                *v = Value::from(replica.count);
                Ok(())
            })?;
        }
    }
    if !matched {
        let kinds: Vec<String> = specs
            .iter()
            .map(|s| {
                format!(
                    "{}.{}.{}",
                    s.kind,
                    if s.version.is_empty() {
                        "[noVer]"
                    } else {
                        &s.version
                    },
                    if s.group.is_empty() {
                        "[noGrp]"
                    } else {
                        &s.group
                    }
                )
            })
            .collect();
        return Err(Error::new(
            ErrorKind::NoMatch,
            format!(
                "replicas: resource with name {} does not match a config with the following GVK [{}]",
                replica.name,
                kinds.join(" ")
            ),
        ));
    }
    Ok(())
}
