//! The `crds:` field: OpenAPI definition files (type name → `{Schema, Dependencies}`, as
//! openapi-gen writes them) whose property extensions declare what transformers should touch:
//! `x-kubernetes-object-ref-kind` (a name reference), `x-kubernetes-annotation`,
//! `x-kubernetes-label-selector` and `x-kubernetes-identity`.

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::fieldspec::{Config, FieldSpec, NameBackRef};
use crate::kustomization::FieldSpec as RawSpec;
use crate::resource::Gvk;

/// Reads the transformer configuration a `crds:` file declares.
pub fn config_from_crds(text: &str, file: &str) -> Result<Config> {
    let doc: Value = crate::yaml::parse_as(text, file)?;
    let Value::Object(defs) = doc else {
        return Err(Error::in_file(
            ErrorKind::Invalid,
            file,
            "unable to parse open API definition: expected a map of type names to {Schema, Dependencies}",
        ));
    };
    let mut config = Config::default();
    for (name, def) in &defs {
        let Some(schema) = def.get("Schema").and_then(Value::as_object) else {
            return Err(Error::in_file(
                ErrorKind::Invalid,
                file,
                format!(
                    "unable to parse open API definition {name:?}: expected {{Schema, Dependencies}} (a CustomResourceDefinition manifest is not accepted here)"
                ),
            ));
        };
        let props = schema.get("properties").and_then(Value::as_object);
        let is_resource = props.is_some_and(|p| {
            ["kind", "apiVersion", "metadata"]
                .iter()
                .all(|k| p.contains_key(*k))
        });
        if !is_resource {
            continue;
        }
        let kind = name.rsplit('.').next().unwrap_or(name).to_string();
        walk(schema, &defs, &kind, &mut Vec::new(), &mut config, 0);
    }
    Ok(config)
}

fn spec(kind: &str, path: &[String]) -> FieldSpec {
    FieldSpec::from_raw(&RawSpec {
        kind: kind.to_string(),
        path: path.join("/"),
        ..RawSpec::default()
    })
}

fn walk(
    schema: &Map<String, Value>,
    defs: &Map<String, Value>,
    kind: &str,
    path: &mut Vec<String>,
    config: &mut Config,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (k, p) in props {
        let Some(p) = p.as_object() else { continue };
        path.push(k.clone());
        let ext = |name: &str| p.get(name).and_then(Value::as_str);
        if ext("x-kubernetes-annotation").is_some() {
            config.common_annotations.push(spec(kind, path));
        }
        if ext("x-kubernetes-label-selector").is_some() {
            config.common_labels.push(spec(kind, path));
        }
        if ext("x-kubernetes-identity").is_some() {
            config.name_prefix.push(spec(kind, path));
            config.name_suffix.push(spec(kind, path));
        }
        if let Some(ref_kind) = ext("x-kubernetes-object-ref-kind") {
            let version = ext("x-kubernetes-object-ref-api-version")
                .unwrap_or("")
                .to_string();
            let key = ext("x-kubernetes-object-ref-name-key").unwrap_or("name");
            let mut full = path.clone();
            full.push(key.to_string());
            let target = Gvk {
                kind: ref_kind.to_string(),
                version,
                group: String::new(),
            };
            let referrer = spec(kind, &full);
            match config.name_reference.iter_mut().find(|b| b.gvk == target) {
                Some(b) => b.referrers.push(referrer),
                None => config.name_reference.push(NameBackRef {
                    gvk: target,
                    referrers: vec![referrer],
                }),
            }
        }
        let referenced = p
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| defs.get(r))
            .and_then(|d| d.get("Schema"))
            .and_then(Value::as_object);
        match referenced {
            Some(t) => walk(t, defs, kind, path, config, depth + 1),
            None => walk(p, defs, kind, path, config, depth + 1),
        }
        path.pop();
    }
}
