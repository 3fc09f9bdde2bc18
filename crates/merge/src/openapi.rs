//! Schemas from OpenAPI: the built-in definitions table and CRD structural schemas, converted as
//! kube-openapi's schemaconv converts them for server-side apply.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use crate::schema::{
    Atom, ListType, MapType, Relationship, Scalar, Schema, StructField, TypeRef, UNTYPED_ATOMIC,
    UNTYPED_DEDUCED,
};

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The schema of every built-in definition, built once.
pub fn builtin_schema() -> &'static Schema {
    static SCHEMA: LazyLock<Schema> =
        LazyLock::new(|| schema_from_definitions(tidegate_schema::builtin_definitions()));
    &SCHEMA
}

/// Defaults of list-map key fields that Kubernetes declares with `+default` markers
/// (`ContainerPort.Protocol`, `ServicePort.Protocol`): the OpenAPI v2 document leaves them
/// out, the API server's apply schema has them, and they make `{port: 80}` and
/// `{port: 80, protocol: TCP}` one entry of the list.
const KEY_DEFAULTS: &[(&str, &str, &str)] = &[
    ("io.k8s.api.core.v1.ContainerPort", "protocol", "TCP"),
    ("io.k8s.api.core.v1.ServicePort", "protocol", "TCP"),
];

/// `def` with the key defaults of `name`, when it has any.
fn with_key_defaults(name: &str, def: &Value) -> Option<Value> {
    let mut patched: Option<Value> = None;
    for (n, field, value) in KEY_DEFAULTS {
        if *n != name {
            continue;
        }
        let d = patched.get_or_insert_with(|| def.clone());
        if let Some(p) = d
            .pointer_mut(&format!("/properties/{field}"))
            .and_then(Value::as_object_mut)
        {
            p.insert("default".into(), Value::String((*value).into()));
        }
    }
    patched
}

/// Builds a schema from OpenAPI v2 `definitions` (names as keys, `$ref: #/definitions/NAME`).
pub fn schema_from_definitions(defs: &Map<String, Value>) -> Schema {
    let mut schema = Schema::new();
    for name in defs.keys() {
        schema.declare(name);
    }
    for (name, def) in defs {
        let atom = if name == QUANTITY {
            Atom {
                scalar: Some(Scalar::Untyped),
                ..Atom::default()
            }
        } else if name == RAW_EXTENSION {
            schema.untyped_atomic()
        } else {
            let patched = with_key_defaults(name, def);
            let mut c = Converter {
                schema: &mut schema,
                preserve_unknown: false,
            };
            c.atom(patched.as_ref().unwrap_or(def))
        };
        let i = schema.declare(name);
        schema.define(i, atom);
    }
    schema
}

/// A CRD version's schema: the built-in definitions plus a root type `__root__` from the CRD's
/// `openAPIV3Schema`, whose `metadata` is ObjectMeta.
pub fn schema_for_crd(open_api_v3: Option<&Value>) -> (Schema, TypeRef) {
    let mut schema = builtin_schema().clone();
    let root_index = schema.declare("__root__");
    let atom = match open_api_v3 {
        Some(v) => {
            let mut c = Converter {
                schema: &mut schema,
                preserve_unknown: false,
            };
            let mut atom = c.atom(v);
            add_object_fields(&schema, &mut atom, true);
            atom
        }
        None => {
            let mut atom = Atom {
                map: Some(MapType::new(
                    Vec::new(),
                    Some(schema.deduced()),
                    Relationship::Separable,
                )),
                ..Atom::default()
            };
            add_object_fields(&schema, &mut atom, true);
            atom
        }
    };
    schema.define(root_index, atom);
    (schema, TypeRef::named(root_index))
}

/// Gives a map type the `apiVersion`, `kind` and `metadata` fields every object has.
fn add_object_fields(schema: &Schema, atom: &mut Atom, replace_metadata: bool) {
    let Some(map) = atom.map.as_mut() else {
        return;
    };
    let mut fields: Vec<StructField> = map.fields.clone();
    let string = || {
        TypeRef::inline(Atom {
            scalar: Some(Scalar::String),
            ..Atom::default()
        })
    };
    for name in ["apiVersion", "kind"] {
        if !fields.iter().any(|f| f.name == name) {
            fields.push(StructField {
                name: name.to_string(),
                ty: string(),
                default: None,
            });
        }
    }
    if let Some(meta) = schema.type_ref(OBJECT_META) {
        match fields.iter_mut().find(|f| f.name == "metadata") {
            Some(f) if replace_metadata => f.ty = meta,
            Some(_) => {}
            None => fields.push(StructField {
                name: "metadata".to_string(),
                ty: meta,
                default: None,
            }),
        }
    }
    *map = MapType::new(fields, map.element.clone(), map.relationship);
}

struct Converter<'s> {
    schema: &'s mut Schema,
    preserve_unknown: bool,
}

fn ext_str<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn map_relationship(v: &Value) -> Option<Relationship> {
    match ext_str(v, "x-kubernetes-map-type") {
        Some("atomic") => Some(Relationship::Atomic),
        Some("granular") => Some(Relationship::Separable),
        _ => None,
    }
}

fn list_relationship(v: &Value) -> (Relationship, Vec<String>) {
    match ext_str(v, "x-kubernetes-list-type") {
        Some("set") => (Relationship::Associative, Vec::new()),
        Some("map") => {
            let keys = v
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|k| k.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            (Relationship::Associative, keys)
        }
        Some(_) => (Relationship::Atomic, Vec::new()),
        None => match ext_str(v, "x-kubernetes-patch-strategy") {
            Some("merge") | Some("merge,retainKeys") => {
                let keys = ext_str(v, "x-kubernetes-patch-merge-key")
                    .map(|k| vec![k.to_string()])
                    .unwrap_or_default();
                (Relationship::Associative, keys)
            }
            _ => (Relationship::Atomic, Vec::new()),
        },
    }
}

fn ref_name(v: &Value) -> Option<&str> {
    let r = v.get("$ref").and_then(Value::as_str).or_else(|| {
        let all = v.get("allOf")?.as_array()?;
        if all.len() == 1 {
            all[0].get("$ref")?.as_str()
        } else {
            None
        }
    })?;
    r.rsplit('/').next().filter(|n| !n.is_empty())
}

impl Converter<'_> {
    fn atom(&mut self, v: &Value) -> Atom {
        let saved = self.preserve_unknown;
        if v.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            self.preserve_unknown = true;
        }
        let ty = v.get("type").and_then(|t| match t {
            Value::String(s) => Some(s.as_str()),
            Value::Array(a) => a.first().and_then(Value::as_str),
            _ => None,
        });
        let mut atom = match ty.unwrap_or("") {
            "" => Atom {
                scalar: Some(Scalar::Untyped),
                list: Some(self.list(v)),
                map: Some(self.map(v)),
            },
            "object" => Atom {
                map: Some(self.map(v)),
                ..Atom::default()
            },
            "array" => Atom {
                list: Some(self.list(v)),
                ..Atom::default()
            },
            "integer" | "number" => scalar(Scalar::Numeric),
            "boolean" => scalar(Scalar::Boolean),
            "string" => match v.get("format").and_then(Value::as_str).unwrap_or("") {
                "" | "byte" => scalar(Scalar::String),
                _ => scalar(Scalar::Untyped),
            },
            _ => scalar(Scalar::Untyped),
        };
        if v.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true)) {
            add_object_fields(self.schema, &mut atom, false);
        }
        self.preserve_unknown = saved;
        atom
    }

    fn type_ref(&mut self, v: &Value) -> TypeRef {
        if let Some(name) = ref_name(v) {
            let index = self.schema.declare(name);
            return TypeRef {
                target: crate::schema::Target::Named(index),
                relationship: map_relationship(v),
            };
        }
        TypeRef::inline(self.atom(v))
    }

    fn map(&mut self, v: &Value) -> MapType {
        let mut fields = Vec::new();
        let props = v.get("properties").and_then(Value::as_object);
        if let Some(props) = props {
            for (name, p) in props {
                fields.push(StructField {
                    name: name.clone(),
                    ty: self.type_ref(p),
                    default: p.get("default").cloned(),
                });
            }
        }
        let element = match v.get("additionalProperties") {
            None => {
                if self.preserve_unknown || props.is_none_or(|p| p.is_empty()) {
                    Some(TypeRef::named(self.schema.declare(UNTYPED_DEDUCED)))
                } else {
                    None
                }
            }
            Some(Value::Bool(true)) => Some(TypeRef::named(self.schema.declare(UNTYPED_DEDUCED))),
            Some(Value::Bool(false)) => None,
            Some(s) => Some(self.type_ref(s)),
        };
        MapType::new(
            fields,
            element,
            map_relationship(v).unwrap_or(Relationship::Separable),
        )
    }

    fn list(&mut self, v: &Value) -> ListType {
        let (relationship, keys) = list_relationship(v);
        let element = match v.get("items") {
            Some(items @ Value::Object(_)) => self.type_ref(items),
            _ => TypeRef::named(self.schema.declare(UNTYPED_ATOMIC)),
        };
        ListType {
            element,
            relationship,
            keys,
        }
    }
}

fn scalar(s: Scalar) -> Atom {
    Atom {
        scalar: Some(s),
        ..Atom::default()
    }
}
