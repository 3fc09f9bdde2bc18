//! Field names matched as Go's `encoding/json` matches them: kustomize decodes a kustomization
//! into Go structs, so `Target:` fills `target`, `fieldPath:` fills `fieldpath` and `Literals:`
//! fills `literals`, at every level, not only the top. An exact match is preferred; a key that
//! matches no field is left as written, for the strict decoder to refuse.

use serde_json::{Map, Value};

/// How one value of a kustomization is laid out, as far as field names go.
#[derive(Clone, Copy)]
enum Shape {
    /// A Go struct: its JSON field names, each with the shape of its value.
    Struct(&'static [(&'static str, Shape)]),
    /// A list of values of one shape.
    List(&'static Shape),
    /// A Go map or a free-form value: keys are data and kept exactly.
    Opaque,
}

use Shape::{List, Opaque, Struct};

const FIELD_SPEC: Shape = Struct(&[
    ("group", Opaque),
    ("version", Opaque),
    ("kind", Opaque),
    ("path", Opaque),
    ("create", Opaque),
]);

const SELECTOR: Shape = Struct(&[
    ("group", Opaque),
    ("version", Opaque),
    ("kind", Opaque),
    ("name", Opaque),
    ("namespace", Opaque),
    ("labelSelector", Opaque),
    ("annotationSelector", Opaque),
]);

const LABEL: Shape = Struct(&[
    ("pairs", Opaque),
    ("includeSelectors", Opaque),
    ("includeTemplates", Opaque),
    ("fields", List(&FIELD_SPEC)),
]);

const PATCH: Shape = Struct(&[
    ("path", Opaque),
    ("patch", Opaque),
    ("target", SELECTOR),
    ("options", Opaque),
]);

const IMAGE: Shape = Struct(&[
    ("name", Opaque),
    ("newName", Opaque),
    ("newTag", Opaque),
    ("digest", Opaque),
]);

const REPLICA: Shape = Struct(&[("name", Opaque), ("count", Opaque)]);

const FIELD_OPTIONS: Shape =
    Struct(&[("delimiter", Opaque), ("index", Opaque), ("create", Opaque)]);

const SOURCE_SELECTOR: Shape = Struct(&[
    ("group", Opaque),
    ("version", Opaque),
    ("kind", Opaque),
    ("name", Opaque),
    ("namespace", Opaque),
    ("fieldPath", Opaque),
    ("options", FIELD_OPTIONS),
]);

const TARGET_SELECTOR: Shape = Struct(&[
    ("select", SELECTOR),
    ("reject", List(&SELECTOR)),
    ("fieldPaths", Opaque),
    ("options", FIELD_OPTIONS),
]);

/// An entry of `replacements`: a file (`path`) or an inline replacement.
const REPLACEMENT: Shape = Struct(&[
    ("path", Opaque),
    ("source", SOURCE_SELECTOR),
    ("targets", List(&TARGET_SELECTOR)),
]);

const VAR_TARGET: Shape = Struct(&[
    ("apiVersion", Opaque),
    ("group", Opaque),
    ("version", Opaque),
    ("kind", Opaque),
    ("name", Opaque),
    ("namespace", Opaque),
]);

const VAR: Shape = Struct(&[
    ("name", Opaque),
    ("objref", VAR_TARGET),
    ("fieldref", Struct(&[("fieldpath", Opaque)])),
]);

const GENERATOR_OPTIONS: Shape = Struct(&[
    ("labels", Opaque),
    ("annotations", Opaque),
    ("disableNameSuffixHash", Opaque),
    ("immutable", Opaque),
]);

const GENERATOR: Shape = Struct(&[
    ("name", Opaque),
    ("namespace", Opaque),
    ("behavior", Opaque),
    ("files", Opaque),
    ("literals", Opaque),
    ("envs", Opaque),
    ("env", Opaque),
    ("options", GENERATOR_OPTIONS),
    ("type", Opaque),
]);

const SORT_OPTIONS: Shape = Struct(&[
    ("order", Opaque),
    (
        "legacySortOptions",
        Struct(&[("orderFirst", Opaque), ("orderLast", Opaque)]),
    ),
]);

/// The kustomization file itself.
const KUSTOMIZATION: Shape = Struct(&[
    ("apiVersion", Opaque),
    ("kind", Opaque),
    ("metadata", Opaque),
    ("openapi", Opaque),
    ("namePrefix", Opaque),
    ("nameSuffix", Opaque),
    ("namespace", Opaque),
    ("commonLabels", Opaque),
    ("labels", List(&LABEL)),
    ("commonAnnotations", Opaque),
    ("patchesStrategicMerge", Opaque),
    ("patchesJson6902", List(&PATCH)),
    ("patches", List(&PATCH)),
    ("images", List(&IMAGE)),
    ("imageTags", List(&IMAGE)),
    ("replacements", List(&REPLACEMENT)),
    ("replicas", List(&REPLICA)),
    ("vars", List(&VAR)),
    ("sortOptions", SORT_OPTIONS),
    ("resources", Opaque),
    ("components", Opaque),
    ("crds", Opaque),
    ("bases", Opaque),
    ("configMapGenerator", List(&GENERATOR)),
    ("secretGenerator", List(&GENERATOR)),
    ("helmGlobals", Opaque),
    ("helmCharts", Opaque),
    ("helmChartInflationGenerator", Opaque),
    ("generatorOptions", GENERATOR_OPTIONS),
    ("configurations", Opaque),
    ("generators", Opaque),
    ("transformers", Opaque),
    ("validators", Opaque),
    ("buildMetadata", Opaque),
    ("inventory", Opaque),
]);

/// Renames the keys of a decoded kustomization to the field names they fill, at every level.
pub(crate) fn canonical_kustomization(value: Value) -> Value {
    canonical(value, KUSTOMIZATION)
}

/// A replacement file's entry (`replacements: [{path: file}]`), matched as inline ones are.
pub(crate) fn canonical_replacement(value: Value) -> Value {
    canonical(value, REPLACEMENT)
}

fn canonical(value: Value, shape: Shape) -> Value {
    match (shape, value) {
        (Struct(fields), Value::Object(map)) => {
            let mut out = Map::with_capacity(map.len());
            for (key, v) in map {
                let field = fields.iter().find(|(name, _)| *name == key).or_else(|| {
                    fields
                        .iter()
                        .find(|(name, _)| name.eq_ignore_ascii_case(&key))
                });
                match field {
                    // Two spellings of one field: the later one wins, as in Go.
                    Some((name, inner)) => {
                        out.insert((*name).to_string(), canonical(v, *inner));
                    }
                    None => {
                        out.insert(key, v);
                    }
                }
            }
            Value::Object(out)
        }
        (List(inner), Value::Array(items)) => {
            Value::Array(items.into_iter().map(|v| canonical(v, *inner)).collect())
        }
        (_, v) => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_names_match_regardless_of_case() {
        let got = canonical_kustomization(json!({
            "Resources": ["cm.yaml"],
            "vars": [{"name": "N", "ObjRef": {"Kind": "ConfigMap", "APIVERSION": "v1"},
                      "fieldref": {"fieldPath": "metadata.name"}}],
            "patches": [{"Target": {"Kind": "Deployment", "LABELSELECTOR": "a=b"}}],
            "configMapGenerator": [{"Literals": ["a=b"], "Options": {"Labels": {"Keep": "x"}}}],
            "commonLabels": {"App": "x"},
        }));
        assert_eq!(
            got,
            json!({
                "resources": ["cm.yaml"],
                "vars": [{"name": "N", "objref": {"kind": "ConfigMap", "apiVersion": "v1"},
                          "fieldref": {"fieldpath": "metadata.name"}}],
                "patches": [{"target": {"kind": "Deployment", "labelSelector": "a=b"}}],
                "configMapGenerator": [{"literals": ["a=b"], "options": {"labels": {"Keep": "x"}}}],
                "commonLabels": {"App": "x"},
            })
        );
    }

    #[test]
    fn unknown_keys_are_kept_for_the_strict_decoder() {
        let got = canonical_kustomization(json!({"patches": [{"targt": {}}], "nope": 1}));
        assert_eq!(got, json!({"patches": [{"targt": {}}], "nope": 1}));
    }

    #[test]
    fn the_later_of_two_spellings_wins() {
        let got = canonical_kustomization(json!({"namePrefix": "a-", "NamePrefix": "b-"}));
        assert_eq!(got, json!({"namePrefix": "b-"}));
    }
}
