//! Strategic merge patch as kustomize applies it (kyaml's merge walker): maps merge key by key,
//! `null` deletes, scalars replace. Only lists whose schema says `x-kubernetes-patch-strategy:
//! merge` merge, element by element by their keys, patch elements first; all other lists
//! (every list of a custom resource) are replaced. `$patch: delete|replace|merge` work on maps
//! and keyed lists; other directives are kept as ordinary keys, as kustomize does.

use serde_json::{Map, Value};
use tidegate_schema::{builtin_definitions, builtin_resources};

use crate::error::{Result, invalid};
use crate::resource::Gvk;

/// An OpenAPI document given by a kustomization's `openapi: {path: ...}`: it replaces the
/// built-in Kubernetes schema for the whole build, as in kustomize (kinds it does not define
/// have no schema, so their lists are replaced).
#[derive(Debug)]
pub struct CustomSchema {
    definitions: Map<String, Value>,
}

impl CustomSchema {
    /// Reads an OpenAPI v2 document (JSON or YAML) with `definitions`.
    pub fn parse(doc: Value, file: &str) -> Result<CustomSchema> {
        match doc {
            Value::Object(mut m) => match m.remove("definitions") {
                Some(Value::Object(definitions)) => Ok(CustomSchema { definitions }),
                _ => Err(crate::error::Error::in_file(
                    crate::error::ErrorKind::Invalid,
                    file,
                    "an openapi schema needs a `definitions` map",
                )),
            },
            _ => Err(crate::error::Error::in_file(
                crate::error::ErrorKind::Invalid,
                file,
                "an openapi schema must be a map",
            )),
        }
    }

    /// The definition whose `x-kubernetes-group-version-kind` names `gvk`.
    fn definition(&self, gvk: &Gvk) -> Option<&Map<String, Value>> {
        self.definitions
            .values()
            .filter_map(Value::as_object)
            .find(|d| {
                d.get("x-kubernetes-group-version-kind")
                    .and_then(Value::as_array)
                    .is_some_and(|list| {
                        list.iter().any(|g| {
                            let f = |k: &str| g.get(k).and_then(Value::as_str).unwrap_or("");
                            f("group") == gvk.group
                                && f("version") == gvk.version
                                && f("kind") == gvk.kind
                        })
                    })
            })
    }
}

/// A position in the OpenAPI schema of the patched type.
#[derive(Clone, Copy)]
pub struct Schema<'a> {
    node: Option<&'a Map<String, Value>>,
    /// The definitions `$ref`s point into.
    definitions: &'a Map<String, Value>,
}

impl<'a> Schema<'a> {
    /// The schema of a type: from the custom schema when the build has one, else built in; an
    /// empty one when the type is unknown.
    pub fn for_gvk(gvk: &Gvk, custom: Option<&'a CustomSchema>) -> Schema<'a> {
        if let Some(custom) = custom {
            return Schema {
                node: custom.definition(gvk),
                definitions: &custom.definitions,
            };
        }
        let defs = builtin_definitions();
        let res = builtin_resources();
        let info = res
            .iter()
            .find(|r| r.group == gvk.group && r.version == gvk.version && r.kind == gvk.kind);
        let node = info
            .and_then(|i| i.definition.as_deref())
            .and_then(|d| defs.get(d))
            .and_then(Value::as_object);
        Schema {
            node,
            definitions: defs,
        }
    }

    fn resolve(&self, v: Option<&'a Value>) -> Option<&'a Map<String, Value>> {
        let m = v?.as_object()?;
        match m.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.strip_prefix("#/definitions/")?;
                // A custom schema's references fall back to the built-in definitions, as
                // kustomize's do (kinds are still found only in the custom one).
                self.definitions
                    .get(name)
                    .or_else(|| builtin_definitions().get(name))?
                    .as_object()
            }
            None => match m.get("allOf").and_then(Value::as_array) {
                Some(all) if all.len() == 1 => self.resolve(all.first()),
                _ => Some(m),
            },
        }
    }

    fn at(&self, node: Option<&'a Map<String, Value>>) -> Schema<'a> {
        Schema {
            node,
            definitions: self.definitions,
        }
    }

    fn property(&self, name: &str) -> Option<&'a Map<String, Value>> {
        let props = self.node?.get("properties")?.as_object()?;
        props.get(name)?.as_object()
    }

    /// The schema of a map field.
    fn field(&self, name: &str) -> Schema<'a> {
        let node = self
            .node
            .and_then(|n| n.get("properties"))
            .and_then(Value::as_object)
            .and_then(|p| self.resolve(p.get(name)))
            .or_else(|| {
                self.node
                    .and_then(|n| self.resolve(n.get("additionalProperties")))
            });
        self.at(node)
    }

    /// The schema of a list field's items.
    fn items(&self, field: &str) -> Schema<'a> {
        let node = self
            .property(field)
            .and_then(|p| self.resolve(p.get("items")));
        self.at(node)
    }

    /// The list's merge keys: `x-kubernetes-list-map-keys`, else the patch merge key.
    fn merge_keys(&self, field: &str) -> Vec<String> {
        let Some(p) = self.property(field) else {
            return Vec::new();
        };
        if let Some(Value::Array(keys)) = p.get("x-kubernetes-list-map-keys") {
            return keys
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
        }
        p.get("x-kubernetes-patch-merge-key")
            .and_then(Value::as_str)
            .map(|k| vec![k.to_string()])
            .unwrap_or_default()
    }

    fn strategy(&self, field: &str) -> Option<&'a str> {
        self.property(field)?
            .get("x-kubernetes-patch-strategy")?
            .as_str()
    }
}

/// Applies a strategic merge patch to an object. Returns `false` when the patch deletes the
/// whole object (`$patch: delete` at the top). `$patch: replace` at the top changes nothing.
pub fn apply(
    obj: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    schema: Schema,
) -> Result<bool> {
    match directive(patch) {
        Some("delete") => return Ok(false),
        Some("replace") => return Ok(true),
        Some("merge") | None => {}
        Some(other) => return Err(invalid(format!("unknown patch strategy '{other}'"))),
    }
    let mut dest = Value::Object(std::mem::take(obj));
    if let Some(Value::Object(m)) =
        merge(Some(&mut dest), Some(&Value::Object(patch.clone())), schema)?
    {
        *obj = m;
    } else if let Value::Object(m) = dest {
        *obj = m;
    }
    Ok(true)
}

fn directive(m: &Map<String, Value>) -> Option<&str> {
    m.get("$patch").and_then(Value::as_str)
}

/// Merges patch `p` into `d`. `Ok(None)` removes the field.
fn merge(d: Option<&mut Value>, p: Option<&Value>, schema: Schema) -> Result<Option<Value>> {
    let d = d.filter(|v| !v.is_null());
    match (d, p) {
        (None, None) => Ok(None),
        (Some(d), None) => Ok(Some(d.clone())),
        (_, Some(Value::Null)) => Ok(None),
        (None, Some(Value::Object(pm))) => {
            match directive(pm) {
                Some("delete") => return Ok(None),
                Some("replace") | Some("merge") | None => {}
                Some(other) => return Err(invalid(format!("unknown patch strategy '{other}'"))),
            }
            let mut r = pm.clone();
            r.remove("$patch");
            merge_map_into(&mut r, pm, schema)?;
            Ok(Some(Value::Object(r)))
        }
        (None, Some(p)) => Ok(Some(p.clone())),
        (Some(Value::Object(dm)), Some(Value::Object(pm))) => {
            let mut r = match directive(pm) {
                Some("delete") => return Ok(None),
                Some("replace") => {
                    let mut r = pm.clone();
                    r.remove("$patch");
                    r
                }
                Some("merge") | None => std::mem::take(dm),
                Some(other) => return Err(invalid(format!("unknown patch strategy '{other}'"))),
            };
            merge_map_into(&mut r, pm, schema)?;
            Ok(Some(Value::Object(r)))
        }
        (Some(Value::Object(_)), Some(p)) | (Some(Value::Array(_)), Some(p @ Value::Object(_))) => {
            Err(invalid(format!(
                "wrong node kind: the patch has {p} where the resource has a map or list"
            )))
        }
        (Some(_), Some(p)) => Ok(Some(p.clone())),
    }
}

fn merge_map_into(
    r: &mut Map<String, Value>,
    p: &Map<String, Value>,
    schema: Schema,
) -> Result<()> {
    for (k, pv) in p {
        if k == "$patch" {
            continue;
        }
        let merged = match (r.get_mut(k), pv) {
            (Some(Value::Array(dl)), Value::Array(pl)) => {
                merge_list(Some(dl), pl, &schema, k)?.map(Value::Array)
            }
            (None, Value::Array(pl)) => merge_list(None, pl, &schema, k)?.map(Value::Array),
            (dv, pv) => merge(dv, Some(pv), schema.field(k))?,
        };
        match merged {
            Some(v) => {
                r.insert(k.clone(), v);
            }
            None => {
                r.remove(k);
            }
        }
    }
    Ok(())
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

fn is_empty_elem(v: &Value) -> bool {
    v.is_null() || matches!(v, Value::Object(m) if m.is_empty())
}

fn merge_list(
    d: Option<&mut Vec<Value>>,
    p: &[Value],
    parent: &Schema,
    field: &str,
) -> Result<Option<Vec<Value>>> {
    let associative = parent
        .strategy(field)
        .is_some_and(|s| s.split(',').any(|x| x == "merge"));
    let Some(d) = d else {
        return Ok(Some(p.to_vec()));
    };
    if !associative {
        return Ok(Some(p.to_vec()));
    }
    let items = parent.items(field);
    // A list-level directive: the first map element holding only `$patch`.
    let mut patch: Vec<Value> = p.to_vec();
    let mut base: Vec<Value> = d.clone();
    if let Some(dir) = p.iter().find_map(|e| match e {
        Value::Object(m) if m.contains_key("$patch") => Some(m),
        _ => None,
    }) && dir.len() == 1
    {
        let which = directive(dir).unwrap_or("").to_string();
        match which.as_str() {
            "delete" => return Ok(None),
            "replace" | "merge" => {
                patch.retain(|e| {
                    !is_empty_elem(e)
                        && !matches!(e, Value::Object(m) if directive(m) == Some(which.as_str()))
                });
                if which == "replace" {
                    base = patch.clone();
                }
            }
            other => return Err(invalid(format!("unknown patch strategy '{other}'"))),
        }
    }
    let keys = parent.merge_keys(field);
    if keys.is_empty() {
        // Primitive list: patch values first, then the resource's others, no duplicates.
        let mut out: Vec<Value> = Vec::new();
        for v in patch.iter().chain(base.iter()) {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
        return Ok(Some(out));
    }
    let valid: Vec<&String> = keys
        .iter()
        .filter(|k| {
            patch
                .iter()
                .chain(base.iter())
                .any(|e| !text(e.get(k.as_str())).is_empty())
        })
        .collect();
    if valid.is_empty() {
        return Ok(Some(base));
    }
    let tuple =
        |e: &Value| -> Vec<String> { valid.iter().map(|k| text(e.get(k.as_str()))).collect() };
    let matches = |e: &Value, t: &[String]| -> bool {
        e.is_object()
            && valid.iter().zip(t).all(|(k, v)| {
                v.is_empty() || e.get(k.as_str()).is_some_and(|x| &text(Some(x)) == v)
            })
            && t.iter().any(|v| !v.is_empty())
    };
    let mut out_patch_only: Vec<Value> = Vec::new();
    let mut result: Vec<Value> = base;
    let mut order: Vec<Vec<String>> = Vec::new();
    for e in &patch {
        if !e.is_object() {
            continue;
        }
        let t = tuple(e);
        if t.iter().all(String::is_empty) {
            continue;
        }
        let pos = result.iter().position(|x| {
            let xt = tuple(x);
            xt.iter().any(|v| !v.is_empty())
                && t.iter().zip(&xt).all(|(a, b)| {
                    a == b || (valid.len() > 1 && a.is_empty()) || (valid.len() > 1 && b.is_empty())
                })
                && (valid.len() == 1 || matches(x, &t))
        });
        match pos {
            Some(i) => {
                let merged = merge(Some(&mut result[i]), Some(e), items)?;
                match merged {
                    Some(v) => result[i] = v,
                    None => result[i] = Value::Null,
                }
                order.push(tuple(&result[i]));
            }
            None => {
                if let Some(v) = merge(None, Some(e), items)? {
                    if valid.len() == 1 {
                        order.push(tuple(&v));
                    }
                    out_patch_only.push(v);
                }
            }
        }
    }
    result.retain(|e| !e.is_null());
    if valid.len() > 1 {
        out_patch_only.extend(result);
        return Ok(Some(out_patch_only));
    }
    // One key: elements in order of first appearance in the patch, then the resource.
    let mut out: Vec<Value> = Vec::new();
    let mut pool: Vec<Value> = out_patch_only;
    pool.extend(result.iter().filter(|e| order.contains(&tuple(e))).cloned());
    for t in &order {
        if let Some(i) = pool.iter().position(|e| &tuple(e) == t) {
            out.push(pool.remove(i));
        }
    }
    for e in result {
        if !order.contains(&tuple(&e)) {
            out.push(e);
        }
    }
    Ok(Some(out))
}
