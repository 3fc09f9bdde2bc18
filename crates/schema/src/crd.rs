//! Resources described by a CustomResourceDefinition (`apiextensions.k8s.io/v1`).

use crate::resource::{PrinterColumn, ResourceInfo, ScalePaths, SubresourceInfo};
use serde_json::Value;

/// A CustomResourceDefinition that cannot be served, with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct CrdError {
    /// Field path, for example `spec.names.plural`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

fn err(field: &str, message: impl Into<String>) -> CrdError {
    CrdError {
        field: field.to_string(),
        message: message.into(),
    }
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str()
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The warning for a `deprecated` version: its `deprecationWarning`, else kube's default
/// (`<group>/<version> <Kind> is deprecated; use <group>/<newest> <Kind>`, naming the
/// highest-priority served, non-deprecated version that outranks it).
fn deprecation_warning(
    v: &Value,
    name: &str,
    group: &str,
    kind: &str,
    versions: &[Value],
) -> Option<String> {
    if v.get("deprecated").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    if let Some(w) = v.get("deprecationWarning").and_then(Value::as_str) {
        return Some(w.to_string());
    }
    let mut msg = format!("{group}/{name} {kind} is deprecated");
    let newer = versions
        .iter()
        .filter(|o| {
            o.get("served").and_then(Value::as_bool) == Some(true)
                && o.get("deprecated").and_then(Value::as_bool) != Some(true)
        })
        .filter_map(|o| o.get("name").and_then(Value::as_str))
        .filter(|o| crate::version_priority(o) > crate::version_priority(name))
        .max_by_key(|o| crate::version_priority(o));
    if let Some(newer) = newer {
        msg.push_str(&format!("; use {group}/{newer} {kind}"));
    }
    Some(msg)
}

/// The resources a CRD serves, one per served version, in the order of `spec.versions`.
///
/// Errors name the offending field so the API server can answer 422 Invalid with it.
pub fn resources_from_crd(crd: &Value) -> Result<Vec<ResourceInfo>, CrdError> {
    let spec = crd
        .get("spec")
        .ok_or_else(|| err("spec", "Required value"))?;
    let group = str_at(spec, &["group"]).ok_or_else(|| err("spec.group", "Required value"))?;
    let plural = str_at(spec, &["names", "plural"])
        .ok_or_else(|| err("spec.names.plural", "Required value"))?;
    let kind =
        str_at(spec, &["names", "kind"]).ok_or_else(|| err("spec.names.kind", "Required value"))?;
    let singular = str_at(spec, &["names", "singular"])
        .map(str::to_string)
        .unwrap_or_else(|| kind.to_lowercase());
    let namespaced = match str_at(spec, &["scope"]) {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        Some(other) => {
            return Err(err(
                "spec.scope",
                format!(
                    "Unsupported value: \"{other}\": supported values: \"Cluster\", \"Namespaced\""
                ),
            ));
        }
        None => return Err(err("spec.scope", "Required value")),
    };
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .ok_or_else(|| err("spec.versions", "Required value"))?;
    if versions.is_empty() {
        return Err(err(
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version",
        ));
    }
    let storage: Vec<&str> = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    if storage.len() != 1 {
        return Err(err(
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version",
        ));
    }
    let storage_version = storage[0].to_string();
    let short_names = strings(spec.pointer("/names/shortNames"));
    let categories = strings(spec.pointer("/names/categories"));
    let mut out = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| err(&format!("spec.versions[{i}].name"), "Required value"))?;
        if v.get("served").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let mut subresources = Vec::new();
        let mut scale = None;
        let subs = v.get("subresources");
        if subs.and_then(|s| s.get("status")).is_some() {
            subresources.push(SubresourceInfo {
                name: "status".into(),
                group: group.into(),
                version: name.into(),
                kind: kind.into(),
                verbs: vec!["get".into(), "patch".into(), "update".into()],
            });
        }
        if let Some(sc) = subs.and_then(|s| s.get("scale")) {
            let spec_path = sc
                .get("specReplicasPath")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    err(
                        &format!("spec.versions[{i}].subresources.scale.specReplicasPath"),
                        "Required value",
                    )
                })?;
            let status_path = sc
                .get("statusReplicasPath")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    err(
                        &format!("spec.versions[{i}].subresources.scale.statusReplicasPath"),
                        "Required value",
                    )
                })?;
            scale = Some(ScalePaths {
                spec_replicas_path: spec_path.into(),
                status_replicas_path: status_path.into(),
                label_selector_path: sc
                    .get("labelSelectorPath")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            });
            subresources.push(SubresourceInfo {
                name: "scale".into(),
                group: "autoscaling".into(),
                version: "v1".into(),
                kind: "Scale".into(),
                verbs: vec!["get".into(), "patch".into(), "update".into()],
            });
        }
        let printer_columns = match v.get("additionalPrinterColumns") {
            Some(cols) => {
                serde_json::from_value::<Vec<PrinterColumn>>(cols.clone()).map_err(|e| {
                    err(
                        &format!("spec.versions[{i}].additionalPrinterColumns"),
                        e.to_string(),
                    )
                })?
            }
            None => Vec::new(),
        };
        out.push(ResourceInfo {
            group: group.into(),
            version: name.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: singular.clone(),
            namespaced,
            verbs: [
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "create",
                "update",
                "watch",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            short_names: short_names.clone(),
            categories: categories.clone(),
            subresources,
            definition: None,
            storage_version: Some(storage_version.clone()),
            printer_columns,
            schema: v.pointer("/schema/openAPIV3Schema").cloned(),
            scale,
            custom: true,
            selectable_fields: v
                .get("selectableFields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                .map(|p| p.trim_start_matches('.').to_string())
                .collect(),
            deprecation_warning: deprecation_warning(v, name, group, kind, versions),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                          "shortNames": ["wd"]},
                "versions": [
                    {"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object"}},
                     "subresources": {"status": {}, "scale": {
                         "specReplicasPath": ".spec.replicas",
                         "statusReplicasPath": ".status.replicas"}},
                     "additionalPrinterColumns": [
                         {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]},
                    {"name": "v1beta1", "served": false, "storage": false}
                ]
            }
        })
    }

    #[test]
    fn serves_the_served_versions() {
        let res = resources_from_crd(&crd()).expect("valid CRD");
        assert_eq!(res.len(), 1);
        let r = &res[0];
        assert_eq!(r.api_version(), "example.com/v1");
        assert_eq!(r.short_names, vec!["wd"]);
        assert!(r.subresource("status").is_some());
        assert_eq!(
            r.subresource("scale").map(|s| s.kind.as_str()),
            Some("Scale")
        );
        assert_eq!(r.printer_columns[0].json_path, ".spec.size");
        assert_eq!(r.storage_version.as_deref(), Some("v1"));
    }

    #[test]
    fn names_the_bad_field() {
        let mut bad = crd();
        bad["spec"]["scope"] = json!("Galaxy");
        let e = resources_from_crd(&bad).expect_err("bad scope");
        assert_eq!(e.field, "spec.scope");
        let mut two = crd();
        two["spec"]["versions"][1]["storage"] = json!(true);
        assert_eq!(
            resources_from_crd(&two).expect_err("two storage").field,
            "spec.versions"
        );
    }
}
