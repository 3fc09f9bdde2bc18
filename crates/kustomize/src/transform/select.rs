//! Target selectors of patches and replacements: group, version, kind, name and namespace as
//! anchored regular expressions, label and annotation selectors. Names and namespaces match the
//! resource's original or current ones.

use regex::Regex;
use serde_json::Value;
use tidegate_core::labels::LabelSelector;

use crate::error::{Result, invalid};
use crate::kustomization::Selector;
use crate::resource::Resource;

/// A compiled selector.
pub struct Matcher {
    group: Option<Regex>,
    version: Option<Regex>,
    kind: Option<Regex>,
    name: Option<Regex>,
    namespace: Option<Regex>,
    labels: LabelSelector,
    annotations: LabelSelector,
}

fn anchored(pattern: &str, field: &str) -> Result<Option<Regex>> {
    if pattern.is_empty() {
        return Ok(None);
    }
    Regex::new(&format!("^(?:{pattern})$"))
        .map(Some)
        .map_err(|e| {
            invalid(format!(
                "target {field} {pattern:?} is not a valid regular expression: {e}"
            ))
        })
}

impl Matcher {
    /// Compiles a selector.
    pub fn new(s: &Selector) -> Result<Matcher> {
        Ok(Matcher {
            group: anchored(&s.group, "group")?,
            version: anchored(&s.version, "version")?,
            kind: anchored(&s.kind, "kind")?,
            name: anchored(&s.name, "name")?,
            namespace: anchored(&s.namespace, "namespace")?,
            labels: LabelSelector::parse(&s.label_selector).map_err(|e| {
                invalid(format!(
                    "target labelSelector {:?}: {}",
                    s.label_selector, e.0
                ))
            })?,
            annotations: LabelSelector::parse(&s.annotation_selector).map_err(|e| {
                invalid(format!(
                    "target annotationSelector {:?}: {}",
                    s.annotation_selector, e.0
                ))
            })?,
        })
    }

    /// A selector whose group, version, kind, name and namespace must match exactly (the
    /// replacements' `source`, `select` and `reject` of kustomize v5.5).
    pub fn exact(s: &Selector) -> Result<Matcher> {
        let quoted = |p: &str| {
            if p.is_empty() {
                String::new()
            } else {
                regex::escape(p)
            }
        };
        Matcher::new(&Selector {
            group: quoted(&s.group),
            version: quoted(&s.version),
            kind: quoted(&s.kind),
            name: quoted(&s.name),
            namespace: quoted(&s.namespace),
            label_selector: s.label_selector.clone(),
            annotation_selector: s.annotation_selector.clone(),
        })
    }

    /// Whether the resource is selected.
    pub fn matches(&self, r: &Resource) -> bool {
        let gvk = r.gvk();
        let current = r.id();
        let original = r.original_id();
        let effective = |ns: &str| -> String {
            if gvk.is_cluster_scoped() {
                String::new()
            } else if ns.is_empty() {
                "default".to_string()
            } else {
                ns.to_string()
            }
        };
        if let Some(re) = &self.namespace
            && !re.is_match(&effective(&original.namespace))
            && !re.is_match(&effective(&current.namespace))
        {
            return false;
        }
        if let Some(re) = &self.name
            && !re.is_match(&original.name)
            && !re.is_match(&current.name)
        {
            return false;
        }
        if self
            .group
            .as_ref()
            .is_some_and(|re| !re.is_match(&gvk.group))
            || self
                .version
                .as_ref()
                .is_some_and(|re| !re.is_match(&gvk.version))
            || self.kind.as_ref().is_some_and(|re| !re.is_match(&gvk.kind))
        {
            return false;
        }
        let labels = r.string_map("labels");
        if !self.labels.is_empty()
            && !self
                .labels
                .matches(|k| labels.get(k).and_then(Value::as_str))
        {
            return false;
        }
        let annotations = r.string_map("annotations");
        if !self.annotations.is_empty()
            && !self
                .annotations
                .matches(|k| annotations.get(k).and_then(Value::as_str))
        {
            return false;
        }
        true
    }
}
