//! `labels`, `commonLabels` and `commonAnnotations`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::fieldspec::{self, Config, FieldSpec};
use crate::kustomization::Label;
use crate::resmap::ResMap;

/// Writes `pairs` into the string maps the specs name (created where the spec says so).
pub fn apply(
    res: &mut ResMap,
    pairs: &BTreeMap<String, String>,
    specs: &[FieldSpec],
) -> Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    for r in &mut res.resources {
        let gvk = r.gvk();
        for spec in specs.iter().filter(|s| s.applies_to(&gvk)) {
            spec.visit(&mut r.obj, &mut |v| {
                if !v.is_object() {
                    *v = Value::Object(Map::new());
                }
                if let Value::Object(m) = v {
                    for (k, val) in pairs {
                        m.insert(k.clone(), Value::String(val.clone()));
                    }
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}

/// One `labels:` entry: metadata labels, plus templates or selectors when asked, plus its own
/// `fields`.
pub fn labels_entry(res: &mut ResMap, label: &Label, config: &Config, file: &str) -> Result<()> {
    let mut specs = fieldspec::from_kustomization(&label.fields, file)?;
    let add = |specs: &mut Vec<FieldSpec>, more: &[FieldSpec]| {
        for s in more {
            if !specs.iter().any(|x| {
                x.path == s.path && x.kind == s.kind && x.group == s.group && x.version == s.version
            }) {
                specs.push(s.clone());
            }
        }
    };
    add(&mut specs, &config.labels);
    if label.include_selectors {
        add(&mut specs, &config.common_labels);
    } else {
        if label.include_templates {
            add(&mut specs, &config.template_labels);
        }
        add(&mut specs, &[FieldSpec::any("metadata/labels", true)]);
    }
    apply(res, &label.pairs, &specs)
}

/// `commonAnnotations`.
pub fn annotate(
    res: &mut ResMap,
    pairs: &BTreeMap<String, String>,
    specs: &[FieldSpec],
) -> Result<()> {
    apply(res, pairs, specs)
}
