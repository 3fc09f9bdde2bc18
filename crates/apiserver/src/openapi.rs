//! `/openapi/v2` and `/openapi/v3`: the built-in types from the generated table and every
//! served CRD's schema, with the paths and operations (and `fieldValidation` parameters)
//! kubectl inspects.

use crate::registry::Catalogue;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use tidegate_schema::{ResourceInfo, builtin_definitions};

/// The definition name of a kind: built-ins use the generated name, CRDs the reversed group
/// (`com.example.v1.Widget`) as kube-apiserver names them.
pub fn definition_name(r: &ResourceInfo) -> String {
    if let Some(d) = &r.definition {
        return d.clone();
    }
    let reversed: Vec<&str> = r.group.split('.').rev().collect();
    format!("{}.{}.{}", reversed.join("."), r.version, r.kind)
}

fn crd_definition(r: &ResourceInfo) -> Value {
    let mut schema = r
        .schema
        .clone()
        .unwrap_or_else(|| json!({"type": "object"}));
    if let Some(obj) = schema.as_object_mut() {
        let props = obj
            .entry("properties")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        let mut all = Map::new();
        all.insert("apiVersion".into(), json!({"type": "string"}));
        all.insert("kind".into(), json!({"type": "string"}));
        all.insert(
            "metadata".into(),
            json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}),
        );
        for (k, v) in props {
            if !matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                all.insert(k, v);
            }
        }
        obj.insert("properties".into(), Value::Object(all));
        obj.insert(
            "x-kubernetes-group-version-kind".into(),
            json!([{"group": r.group, "version": r.version, "kind": r.kind}]),
        );
    }
    schema
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref"
                    && let Some(s) = x.as_str()
                    && let Some(name) = s.strip_prefix("#/definitions/")
                {
                    out.push(name.to_string());
                }
                collect_refs(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

/// Definitions for `resources`, with everything they reference.
fn definitions_for(resources: &[&ResourceInfo]) -> Map<String, Value> {
    let builtin = builtin_definitions();
    let mut out = Map::new();
    let mut todo: Vec<String> = Vec::new();
    for r in resources {
        let name = definition_name(r);
        let def = if r.custom {
            crd_definition(r)
        } else {
            match builtin.get(&name) {
                Some(d) => d.clone(),
                None => continue,
            }
        };
        collect_refs(&def, &mut todo);
        if r.custom {
            // kube-apiserver publishes each custom kind's list type beside it.
            let list = json!({"type": "object", "required": ["items"],
                "properties": {
                    "apiVersion": {"type": "string"},
                    "items": {"type": "array", "items": {"$ref": format!("#/definitions/{name}")}},
                    "kind": {"type": "string"},
                    "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}},
                "x-kubernetes-group-version-kind": [{"group": r.group, "version": r.version,
                    "kind": format!("{}List", r.kind)}]});
            collect_refs(&list, &mut todo);
            out.insert(format!("{name}List"), list);
        }
        out.insert(name, def);
    }
    for extra in [
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
        // The body of every `scale` subresource.
        "io.k8s.api.autoscaling.v1.Scale",
    ] {
        todo.push(extra.to_string());
    }
    let mut seen: BTreeSet<String> = out.keys().cloned().collect();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(d) = builtin.get(&name) {
            collect_refs(d, &mut todo);
            out.insert(name, d.clone());
        }
    }
    out
}

fn query_param(name: &str, v3: bool) -> Value {
    if v3 {
        json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}})
    } else {
        json!({"name": name, "in": "query", "type": "string", "uniqueItems": true})
    }
}

fn operation(r: &ResourceInfo, action: &str, params: &[&str], v3: bool, def_ref: &str) -> Value {
    let gvk = json!({"group": r.group, "version": r.version, "kind": r.kind});
    let ok = if v3 {
        json!({"description": "OK", "content": {"application/json": {"schema": {"$ref": def_ref}}}})
    } else {
        json!({"description": "OK", "schema": {"$ref": def_ref}})
    };
    json!({
        "operationId": format!("{action}{}", r.kind),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
        "parameters": params.iter().map(|p| query_param(p, v3)).collect::<Vec<_>>(),
        "responses": {"200": ok},
    })
}

fn paths_for(resources: &[&ResourceInfo], v3: bool) -> Map<String, Value> {
    let prefix = if v3 {
        "#/components/schemas/"
    } else {
        "#/definitions/"
    };
    let mut paths = Map::new();
    for r in resources {
        let base = if r.group.is_empty() {
            format!("/api/{}", r.version)
        } else {
            format!("/apis/{}/{}", r.group, r.version)
        };
        let coll = if r.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}", r.plural)
        } else {
            format!("{base}/{}", r.plural)
        };
        let item = format!("{coll}/{{name}}");
        let def_ref = format!("{prefix}{}", definition_name(r));
        let write = ["dryRun", "fieldManager", "fieldValidation"];
        let mut c = Map::new();
        if r.has_verb("list") {
            c.insert(
                "get".into(),
                operation(
                    r,
                    "list",
                    &[
                        "labelSelector",
                        "fieldSelector",
                        "limit",
                        "continue",
                        "resourceVersion",
                        "watch",
                    ],
                    v3,
                    &def_ref,
                ),
            );
        }
        if r.has_verb("create") {
            c.insert("post".into(), operation(r, "post", &write, v3, &def_ref));
        }
        if r.has_verb("deletecollection") {
            c.insert(
                "delete".into(),
                operation(
                    r,
                    "deletecollection",
                    &["labelSelector", "fieldSelector", "dryRun"],
                    v3,
                    &def_ref,
                ),
            );
        }
        if !c.is_empty() {
            paths.insert(coll.clone(), Value::Object(c));
        }
        let mut i = Map::new();
        if r.has_verb("get") {
            i.insert("get".into(), operation(r, "get", &[], v3, &def_ref));
        }
        if r.has_verb("update") {
            i.insert("put".into(), operation(r, "put", &write, v3, &def_ref));
        }
        if r.has_verb("patch") {
            i.insert(
                "patch".into(),
                operation(
                    r,
                    "patch",
                    &["dryRun", "fieldManager", "fieldValidation", "force"],
                    v3,
                    &def_ref,
                ),
            );
        }
        if r.has_verb("delete") {
            i.insert(
                "delete".into(),
                operation(
                    r,
                    "delete",
                    &["dryRun", "propagationPolicy", "gracePeriodSeconds"],
                    v3,
                    &def_ref,
                ),
            );
        }
        if !i.is_empty() {
            paths.insert(item.clone(), Value::Object(i));
        }
        for s in &r.subresources {
            if s.name != "status" && s.name != "scale" {
                continue;
            }
            let mut ops = Map::new();
            let sub_ref = if s.name == "scale" {
                format!("{prefix}io.k8s.api.autoscaling.v1.Scale")
            } else {
                def_ref.clone()
            };
            let sub_r = ResourceInfo {
                group: s.group.clone(),
                version: s.version.clone(),
                kind: s.kind.clone(),
                ..(*r).clone()
            };
            ops.insert("get".into(), operation(&sub_r, "get", &[], v3, &sub_ref));
            ops.insert("put".into(), operation(&sub_r, "put", &write, v3, &sub_ref));
            ops.insert(
                "patch".into(),
                operation(
                    &sub_r,
                    "patch",
                    &["dryRun", "fieldManager", "fieldValidation", "force"],
                    v3,
                    &sub_ref,
                ),
            );
            paths.insert(format!("{item}/{}", s.name), Value::Object(ops));
        }
    }
    paths
}

/// The OpenAPI v2 document of everything served.
pub fn v2(cat: &Catalogue) -> Value {
    let resources: Vec<&ResourceInfo> = cat.resources.iter().map(|r| r.as_ref()).collect();
    let defs = definitions_for(&resources);
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": crate::server::GIT_VERSION},
        "paths": paths_for(&resources, false),
        "definitions": defs,
        "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}],
    })
}

/// `/openapi/v3`: one entry per served group-version.
pub fn v3_root(cat: &Catalogue, hash: &str) -> Value {
    let mut paths = Map::new();
    for g in cat.groups() {
        for v in &g.versions {
            let p = if g.name.is_empty() {
                format!("api/{v}")
            } else {
                format!("apis/{}/{v}", g.name)
            };
            paths.insert(
                p.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={hash}")}),
            );
        }
    }
    json!({"paths": paths})
}

fn to_v3_refs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(s)) = m.get_mut("$ref")
                && let Some(rest) = s.strip_prefix("#/definitions/")
            {
                *s = format!("#/components/schemas/{rest}");
            }
            m.values_mut().for_each(to_v3_refs);
        }
        Value::Array(a) => a.iter_mut().for_each(to_v3_refs),
        _ => {}
    }
}

/// `/openapi/v3/apis/<g>/<v>`: the group-version's paths and schemas.
pub fn v3(cat: &Catalogue, group: &str, version: &str) -> Option<Value> {
    let served = cat.resources_of(group, version);
    if served.is_empty() {
        return None;
    }
    let resources: Vec<&ResourceInfo> = served.iter().map(|r| r.as_ref()).collect();
    let mut schemas = Value::Object(definitions_for(&resources));
    if resources.iter().any(|r| r.subresource("scale").is_some())
        && let Some(d) = builtin_definitions().get("io.k8s.api.autoscaling.v1.Scale")
    {
        schemas["io.k8s.api.autoscaling.v1.Scale"] = d.clone();
    }
    to_v3_refs(&mut schemas);
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": crate::server::GIT_VERSION},
        "paths": paths_for(&resources, true),
        "components": {"schemas": schemas},
    }))
}
