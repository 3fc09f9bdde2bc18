//! The parts of a Kustomization's build that need no artifact, shared by the controller and
//! `tidegate build kustomization`: the overlay Flux merges into the kustomization file, the
//! post-build variables (`substituteFrom` read from the cluster), substitution and
//! `commonMetadata`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client};
use serde_json::Value;
use tidegate_api::KustomizationSpec;
use tidegate_kustomize::kustomization::{Image, Selector};
use tidegate_kustomize::{Overlay, postbuild};

/// The spec fields Flux merges into the kustomization file before the build.
pub fn overlay(s: &KustomizationSpec) -> Overlay {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    Overlay {
        target_namespace: s.target_namespace.clone(),
        name_prefix: s.name_prefix.clone(),
        name_suffix: s.name_suffix.clone(),
        patches: s
            .patches
            .iter()
            .map(|p| {
                let target = p.target.as_ref().map(|t| Selector {
                    group: text(&t.group),
                    version: text(&t.version),
                    kind: text(&t.kind),
                    name: text(&t.name),
                    namespace: text(&t.namespace),
                    label_selector: text(&t.label_selector),
                    annotation_selector: text(&t.annotation_selector),
                });
                (p.patch.clone(), target)
            })
            .collect(),
        images: s
            .images
            .iter()
            .map(|i| Image {
                name: i.name.clone(),
                new_name: text(&i.new_name),
                new_tag: text(&i.new_tag),
                digest: text(&i.digest),
            })
            .collect(),
        components: s.components.clone(),
        ignore_missing_components: s.ignore_missing_components.unwrap_or(false),
        build_metadata: s.build_metadata.clone(),
    }
}

/// The variables of `spec.postBuild`: `substituteFrom` in order (later ones win; read from
/// `namespace` through `client`, skipped without one), then the inline `substitute` over all
/// of them. Errors are Flux's messages.
pub async fn variables(
    client: Option<&Client>,
    namespace: &str,
    spec: &KustomizationSpec,
) -> Result<BTreeMap<String, String>, String> {
    let mut vars = BTreeMap::new();
    let Some(pb) = &spec.post_build else {
        return Ok(vars);
    };
    let Some(client) = client else {
        vars.extend(pb.substitute.clone());
        return Ok(vars);
    };
    for r in &pb.substitute_from {
        let fail = |m: String| format!("substitute from '{}/{}' error: {m}", r.kind, r.name);
        match r.kind.as_str() {
            "ConfigMap" => {
                let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
                match api.get_opt(&r.name).await {
                    Ok(Some(cm)) => vars.extend(cm.data.unwrap_or_default()),
                    Ok(None) if r.optional => {}
                    Ok(None) => {
                        return Err(fail(format!("configmaps \"{}\" not found", r.name)));
                    }
                    Err(e) => return Err(fail(tidegate_apply::error::describe(&e))),
                }
            }
            "Secret" => {
                let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
                match api.get_opt(&r.name).await {
                    Ok(Some(s)) => {
                        for (k, v) in s.data.unwrap_or_default() {
                            vars.insert(k, String::from_utf8_lossy(&v.0).into_owned());
                        }
                    }
                    Ok(None) if r.optional => {}
                    Ok(None) => return Err(fail(format!("secrets \"{}\" not found", r.name))),
                    Err(e) => return Err(fail(tidegate_apply::error::describe(&e))),
                }
            }
            other => {
                return Err(fail(format!(
                    "unsupported kind '{other}' (ConfigMap or Secret)"
                )));
            }
        }
    }
    vars.extend(pb.substitute.clone());
    Ok(vars)
}

/// Substitutes `vars` (only with `spec.postBuild`, strict, Flux's strategy) and merges
/// `commonMetadata` into every object.
pub fn post_build(
    objects: &mut [Value],
    spec: &KustomizationSpec,
    vars: &BTreeMap<String, String>,
) -> Result<(), String> {
    if let Some(pb) = &spec.post_build {
        let options = postbuild::Options {
            strict: true,
            always: pb.substitute_strategy.as_deref() == Some("Always"),
        };
        postbuild::substitute(objects, vars, options).map_err(|e| e.to_string())?;
    }
    if let Some(cm) = &spec.common_metadata {
        for o in objects.iter_mut() {
            merge_metadata(o, "labels", &cm.labels);
            merge_metadata(o, "annotations", &cm.annotations);
        }
    }
    Ok(())
}

/// Sets every entry of `values` in `metadata.<field>` (Flux's `SetCommonMetadata`).
fn merge_metadata(obj: &mut Value, field: &str, values: &BTreeMap<String, String>) {
    if values.is_empty() {
        return;
    }
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let entry = meta
        .entry(field)
        .or_insert_with(|| Value::Object(Default::default()));
    if !entry.is_object() {
        *entry = Value::Object(Default::default());
    }
    if let Some(map) = entry.as_object_mut() {
        for (k, v) in values {
            map.insert(k.clone(), Value::String(v.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_metadata_merges_over_existing() {
        let mut o = serde_json::json!({"metadata": {"name": "x", "labels": {"a": "1", "b": "2"}}});
        let labels = BTreeMap::from([("b".to_string(), "3".to_string())]);
        let annotations = BTreeMap::from([("n".to_string(), "v".to_string())]);
        merge_metadata(&mut o, "labels", &labels);
        merge_metadata(&mut o, "annotations", &annotations);
        assert_eq!(
            o["metadata"]["labels"],
            serde_json::json!({"a": "1", "b": "3"})
        );
        assert_eq!(o["metadata"]["annotations"], serde_json::json!({"n": "v"}));
    }
}
