//! Reading schemas written in structured-merge-diff's own YAML schema format (`types:` with
//! `scalar`/`list`/`map` atoms), used by the conformance data.

use serde_json::Value;

use crate::schema::{
    Atom, ListType, MapType, Relationship, Scalar, Schema, StructField, Target, TypeRef,
};

/// Parses a schema document in structured-merge-diff's YAML format.
pub fn schema_from_smd_yaml(text: &str) -> Result<Schema, String> {
    let doc: Value = yaml_serde::from_str(text).map_err(|e| format!("invalid schema YAML: {e}"))?;
    let types = doc
        .get("types")
        .and_then(Value::as_array)
        .ok_or("schema has no `types` list")?;
    let mut schema = Schema::new();
    for t in types {
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .ok_or("type without a name")?;
        schema.declare(name);
    }
    for t in types {
        let name = t.get("name").and_then(Value::as_str).unwrap_or_default();
        let atom = atom(&mut schema, t)?;
        let i = schema.declare(name);
        schema.define(i, atom);
    }
    Ok(schema)
}

fn relationship(v: Option<&Value>, default: Relationship) -> Result<Relationship, String> {
    match v.and_then(Value::as_str) {
        None | Some("") => Ok(default),
        Some("atomic") => Ok(Relationship::Atomic),
        Some("associative") => Ok(Relationship::Associative),
        Some("separable") => Ok(Relationship::Separable),
        Some(other) => Err(format!("unknown elementRelationship {other:?}")),
    }
}

fn atom(schema: &mut Schema, v: &Value) -> Result<Atom, String> {
    let scalar = match v.get("scalar").and_then(Value::as_str) {
        None => None,
        Some("numeric") => Some(Scalar::Numeric),
        Some("string") => Some(Scalar::String),
        Some("boolean") => Some(Scalar::Boolean),
        Some("untyped") => Some(Scalar::Untyped),
        Some(other) => return Err(format!("unknown scalar type {other:?}")),
    };
    let list = match v.get("list") {
        None => None,
        Some(l) => Some(ListType {
            element: type_ref(schema, l.get("elementType"))?.unwrap_or_else(|| schema.deduced()),
            relationship: relationship(l.get("elementRelationship"), Relationship::Atomic)?,
            keys: l
                .get("keys")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|k| k.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        }),
    };
    let map = match v.get("map") {
        None => None,
        Some(m) => {
            let mut fields = Vec::new();
            for f in m
                .get("fields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = f
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("field without a name")?;
                fields.push(StructField {
                    name: name.to_string(),
                    ty: type_ref(schema, f.get("type"))?
                        .ok_or_else(|| format!("field {name:?} has no type"))?,
                    default: f.get("default").cloned(),
                });
            }
            Some(MapType::new(
                fields,
                type_ref(schema, m.get("elementType"))?,
                relationship(m.get("elementRelationship"), Relationship::Separable)?,
            ))
        }
    };
    Ok(Atom { scalar, list, map })
}

fn type_ref(schema: &mut Schema, v: Option<&Value>) -> Result<Option<TypeRef>, String> {
    let Some(v) = v else {
        return Ok(None);
    };
    let rel = match v.get("elementRelationship") {
        Some(r) => Some(relationship(Some(r), Relationship::Separable)?),
        None => None,
    };
    if let Some(name) = v.get("namedType").and_then(Value::as_str) {
        let i = schema
            .lookup(name)
            .ok_or_else(|| format!("unknown named type {name:?}"))?;
        return Ok(Some(TypeRef {
            target: Target::Named(i),
            relationship: rel,
        }));
    }
    let a = atom(schema, v)?;
    if a.scalar.is_none() && a.list.is_none() && a.map.is_none() {
        return Ok(None);
    }
    Ok(Some(TypeRef {
        target: Target::Inline(Box::new(a)),
        relationship: rel,
    }))
}
