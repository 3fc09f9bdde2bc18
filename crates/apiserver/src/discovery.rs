//! Discovery documents: legacy (`/api`, `/apis`, `/apis/<g>/<v>`) and aggregated (v2).

use crate::registry::Catalogue;
use serde_json::{Value, json};
use tidegate_schema::ResourceInfo;

fn server_address() -> Value {
    json!([{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}])
}

/// `/api`: `APIVersions`.
pub fn core_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": server_address(),
    })
}

fn group_entry(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({
        "name": name,
        "versions": vs,
        "preferredVersion": vs.first().cloned().unwrap_or(Value::Null),
    })
}

/// `/apis`: `APIGroupList` (every group but core).
pub fn group_list(cat: &Catalogue) -> Value {
    let groups: Vec<Value> = cat
        .groups()
        .iter()
        .filter(|g| !g.name.is_empty())
        .map(|g| group_entry(&g.name, &g.versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>`: `APIGroup`.
pub fn group(cat: &Catalogue, name: &str) -> Option<Value> {
    cat.groups()
        .iter()
        .find(|g| g.name == name && !name.is_empty())
        .map(|g| {
            let mut v = group_entry(&g.name, &g.versions);
            if let Some(obj) = v.as_object_mut() {
                let mut out = serde_json::Map::new();
                out.insert("kind".into(), json!("APIGroup"));
                out.insert("apiVersion".into(), json!("v1"));
                out.extend(std::mem::take(obj));
                return Value::Object(out);
            }
            v
        })
}

/// `/api/v1` or `/apis/<g>/<v>`: `APIResourceList`.
pub fn resource_list(cat: &Catalogue, group: &str, version: &str) -> Option<Value> {
    let resources = cat.resources_of(group, version);
    if resources.is_empty() {
        return None;
    }
    let mut items = Vec::new();
    for r in &resources {
        let mut e = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": r.verbs,
        });
        if !r.short_names.is_empty() {
            e["shortNames"] = json!(r.short_names);
        }
        if !r.categories.is_empty() {
            e["categories"] = json!(r.categories);
        }
        items.push(e);
        for s in &r.subresources {
            let mut se = json!({
                "name": format!("{}/{}", r.plural, s.name),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": s.kind,
                "verbs": s.verbs,
            });
            if s.group != r.group || s.version != r.version {
                se["group"] = json!(s.group);
                se["version"] = json!(s.version);
            }
            items.push(se);
        }
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": items,
    }))
}

fn aggregated_resource(r: &ResourceInfo) -> Value {
    let mut e = json!({
        "resource": r.plural,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        e["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        e["categories"] = json!(r.categories);
    }
    if !r.subresources.is_empty() {
        e["subresources"] = Value::Array(
            r.subresources
                .iter()
                .map(|s| {
                    json!({
                        "subresource": s.name,
                        "responseKind": {"group": s.group, "version": s.version, "kind": s.kind},
                        "verbs": s.verbs,
                    })
                })
                .collect(),
        );
    }
    e
}

/// Aggregated discovery (`APIGroupDiscoveryList`) for `/api` (core only) or `/apis` (the rest).
pub fn aggregated(cat: &Catalogue, core: bool, api_version: &str) -> Value {
    let mut items = Vec::new();
    for g in cat.groups() {
        if g.name.is_empty() != core {
            continue;
        }
        let versions: Vec<Value> = g
            .versions
            .iter()
            .map(|v| {
                let resources: Vec<Value> = cat
                    .resources_of(&g.name, v)
                    .iter()
                    .map(|r| aggregated_resource(r))
                    .collect();
                json!({"version": v, "resources": resources, "freshness": "Current"})
            })
            .collect();
        let mut meta = json!({"creationTimestamp": null});
        if !core {
            meta["name"] = json!(g.name);
        }
        items.push(json!({"metadata": meta, "versions": versions}));
    }
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{api_version}"),
        "metadata": {},
        "items": items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn documents_have_kube_shapes() {
        let reg = Registry::new();
        let cat = reg.snapshot();
        let apps = resource_list(&cat, "apps", "v1").expect("apps/v1");
        let names: Vec<&str> = apps["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert!(names.contains(&"deployments") && names.contains(&"deployments/scale"));
        let scale = apps["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .find(|r| r["name"] == "deployments/scale")
            .expect("scale");
        assert_eq!(scale["group"], "autoscaling");
        let agg = aggregated(&cat, true, "v2");
        assert_eq!(agg["items"].as_array().map(Vec::len), Some(1));
        assert!(agg["items"][0]["metadata"].get("name").is_none());
        let groups = group_list(&cat);
        assert_eq!(groups["groups"][0]["name"], "apiregistration.k8s.io");
        assert!(resource_list(&cat, "nope", "v1").is_none());
    }
}
