//! Custom resources against their CRD's structural schema: pruning of unknown fields and
//! validation (types, required, enum, pattern, bounds, lengths, formats), with
//! kube-apiserver's messages.

use crate::error::Cause;
use serde_json::{Map, Value};
use tidegate_schema::ResourceInfo;

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn child(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

/// Removes fields the schema does not declare (unless it preserves unknown fields).
/// `root` marks the object's top level, where `apiVersion`, `kind` and `metadata` always stay.
pub fn prune(schema: &Value, value: &mut Value, root: bool) {
    let preserve = schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true);
    let embedded = schema
        .get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        == Some(true);
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                if (root || embedded) && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    if k == "metadata"
                        && embedded
                        && let Some(Value::Object(m)) = map.get_mut("metadata")
                    {
                        m.retain(|mk, _| {
                            matches!(
                                mk.as_str(),
                                "name"
                                    | "namespace"
                                    | "labels"
                                    | "annotations"
                                    | "generateName"
                                    | "finalizers"
                            )
                        });
                    }
                    continue;
                }
                if let Some(sub) = props.and_then(|p| p.get(&k)) {
                    if let Some(v) = map.get_mut(&k) {
                        prune(sub, v, false);
                    }
                } else if let Some(add) = additional.filter(|a| a.is_object()) {
                    if let Some(v) = map.get_mut(&k) {
                        prune(add, v, false);
                    }
                } else if !(preserve || additional == Some(&Value::Bool(true))) {
                    map.remove(&k);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for it in items.iter_mut() {
                    prune(item_schema, it, false);
                }
            }
        }
        _ => {}
    }
}

fn check_type(schema: &Value, v: &Value, path: &str, out: &mut Vec<Cause>) -> bool {
    if v.is_null() && schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        return false;
    }
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        if matches!(type_name(v), "integer" | "string") {
            return true;
        }
        out.push(Cause {
            reason: "FieldValueTypeInvalid".into(),
            message: format!(
                "Invalid value: \"{}\": {path} in body must be of type integer-or-string: \"{}\"",
                type_name(v),
                type_name(v)
            ),
            field: path.into(),
        });
        return false;
    }
    let Some(want) = schema.get("type").and_then(Value::as_str) else {
        return true;
    };
    let got = type_name(v);
    let ok = match want {
        "number" => matches!(got, "number" | "integer"),
        "integer" => got == "integer" || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        other => other == got,
    };
    if !ok {
        out.push(Cause {
            reason: "FieldValueTypeInvalid".into(),
            message: format!(
                "Invalid value: \"{got}\": {path} in body must be of type {want}: \"{got}\""
            ),
            field: path.into(),
        });
    }
    ok
}

fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

/// Validates `v` against `schema` at `path`, collecting causes.
#[cfg(test)]
fn validate(schema: &Value, v: &Value, path: &str, out: &mut Vec<Cause>) {
    let mut rules = Vec::new();
    validate_update(schema, v, None, path, &mut rules, out);
    out.extend(rules);
}

/// Validates `v`, which replaces `old` (an update) or nothing, against `schema` at `path`:
/// the structural checks into `out`, the nodes' CEL rules (transition rules see `old`) into
/// `rules`, each node's before its children's.
fn validate_update(
    schema: &Value,
    v: &Value,
    old: Option<&Value>,
    path: &str,
    rules: &mut Vec<Cause>,
    out: &mut Vec<Cause>,
) {
    if !check_type(schema, v, path, out) {
        return;
    }
    crate::crd_cel::check(schema, v, old, path, rules);
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(v)
    {
        let list: Vec<String> = options.iter().map(shown).collect();
        out.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {}: supported values: {}",
                shown(v),
                list.join(", ")
            ),
            field: path.into(),
        });
    }
    match v {
        Value::String(s) => {
            if let Some(p) = schema.get("pattern").and_then(Value::as_str) {
                match compiled(p) {
                    Some(re) if !re.is_match(s) => out.push(Cause {
                        reason: "FieldValueInvalid".into(),
                        message: format!(
                            "Invalid value: \"{s}\": {path} in body should match '{p}'"
                        ),
                        field: path.into(),
                    }),
                    _ => {}
                }
            }
            let len = s.chars().count() as u64;
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                && len > max
            {
                out.push(Cause {
                    reason: "FieldValueTooLong".into(),
                    message: format!("Too long: may not be more than {max} bytes"),
                    field: path.into(),
                });
            }
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                && len < min
            {
                out.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: \"{s}\": {path} in body should be at least {min} chars long"
                    ),
                    field: path.into(),
                });
            }
            if let Some(fmt) = schema.get("format").and_then(Value::as_str)
                && !format_ok(fmt, s)
            {
                out.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: \"{s}\": {path} in body must be of type {fmt}: \"{s}\""
                    ),
                    field: path.into(),
                });
            }
        }
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            let excl_max = schema.get("exclusiveMaximum").and_then(Value::as_bool) == Some(true);
            let excl_min = schema.get("exclusiveMinimum").and_then(Value::as_bool) == Some(true);
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
                && (f > max || excl_max && f == max)
            {
                let rel = if excl_max {
                    "less than"
                } else {
                    "less than or equal to"
                };
                out.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {n}: {path} in body should be {rel} {}",
                        schema["maximum"]
                    ),
                    field: path.into(),
                });
            }
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
                && (f < min || excl_min && f == min)
            {
                let rel = if excl_min {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                out.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {n}: {path} in body should be {rel} {}",
                        schema["minimum"]
                    ),
                    field: path.into(),
                });
            }
        }
        Value::Array(items) => {
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && items.len() as u64 > max
            {
                out.push(Cause {
                    reason: "FieldValueTooMany".into(),
                    message: format!("Too many: {}: must have at most {max} items", items.len()),
                    field: path.into(),
                });
            }
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && (items.len() as u64) < min
            {
                out.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {}: {path} in body should have at least {min} items",
                        items.len()
                    ),
                    field: path.into(),
                });
            }
            list_duplicates(schema, items, path, out);
            if let Some(item_schema) = schema.get("items") {
                for (i, it) in items.iter().enumerate() {
                    let before = old.and_then(|o| correlated_item(schema, it, o));
                    validate_update(item_schema, it, before, &format!("{path}[{i}]"), rules, out);
                }
            }
        }
        Value::Object(map) => {
            validate_object(
                schema,
                map,
                old.and_then(Value::as_object),
                path,
                rules,
                out,
            );
        }
        _ => {}
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(alts) = schema.get(key).and_then(Value::as_array) {
            let results: Vec<Vec<Cause>> = alts
                .iter()
                .map(|s| {
                    let mut c = Vec::new();
                    // An alternative is judged by its structure alone.
                    validate_update(s, v, old, path, &mut Vec::new(), &mut c);
                    c
                })
                .collect();
            let passing = results.iter().filter(|r| r.is_empty()).count();
            match key {
                "allOf" => out.extend(results.into_iter().flatten()),
                "anyOf" if passing == 0 => out.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {}: {path} in body must match at least one schema (anyOf)",
                        shown(v)
                    ),
                    field: path.into(),
                }),
                "oneOf" if passing != 1 => out.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {}: {path} in body must match exactly one schema (oneOf)",
                        shown(v)
                    ),
                    field: path.into(),
                }),
                _ => {}
            }
        }
    }
}

/// `x-kubernetes-list-type` `map` and `set` hold each key (each value) once
/// (`ValidateListSetsAndMaps`): a repeat is `Duplicate` at its index, with the item's keys (a
/// map) or the item (a set) as the value.
fn list_duplicates(schema: &Value, items: &[Value], path: &str, out: &mut Vec<Cause>) {
    let duplicate = |i: usize, value: &Value, out: &mut Vec<Cause>| {
        out.push(Cause {
            reason: "FieldValueDuplicate".into(),
            message: format!("Duplicate value: {}", crate::validate::render(value)),
            field: format!("{path}[{i}]"),
        });
    };
    match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => {
            for (i, it) in items.iter().enumerate() {
                if items[..i].contains(it) {
                    duplicate(i, it, out);
                }
            }
        }
        Some("map") => {
            let keys: Vec<&str> = schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let key_of = |it: &Value| -> Option<Map<String, Value>> {
                let o = it.as_object()?;
                Some(
                    keys.iter()
                        .filter_map(|k| o.get(*k).map(|v| (k.to_string(), v.clone())))
                        .collect(),
                )
            };
            let mut seen: Vec<Map<String, Value>> = Vec::new();
            for (i, it) in items.iter().enumerate() {
                let Some(key) = key_of(it) else { continue };
                if seen.contains(&key) {
                    duplicate(i, &Value::Object(key), out);
                } else {
                    seen.push(key);
                }
            }
        }
        _ => {}
    }
}

/// The item of `old` (a list) that `item` replaces: for `x-kubernetes-list-type: map`, the
/// one with the same keys (other lists do not correlate items, as in Kubernetes).
fn correlated_item<'a>(schema: &Value, item: &Value, old: &'a Value) -> Option<&'a Value> {
    if schema.get("x-kubernetes-list-type").and_then(Value::as_str) != Some("map") {
        return None;
    }
    let keys: Vec<&str> = schema
        .get("x-kubernetes-list-map-keys")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    old.as_array()?
        .iter()
        .find(|o| keys.iter().all(|k| o.get(k) == item.get(k)))
}

fn validate_object(
    schema: &Value,
    map: &Map<String, Value>,
    old: Option<&Map<String, Value>>,
    path: &str,
    rules: &mut Vec<Cause>,
    out: &mut Vec<Cause>,
) {
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if !map.contains_key(r) {
                out.push(Cause::required(&child(path, r)));
            }
        }
    }
    if let Some(max) = schema.get("maxProperties").and_then(Value::as_u64)
        && map.len() as u64 > max
    {
        out.push(Cause {
            reason: "FieldValueTooMany".into(),
            message: format!("Too many: {}: must have at most {max} items", map.len()),
            field: path.into(),
        });
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    for (k, v) in map {
        let before = old.and_then(|o| o.get(k));
        if let Some(sub) = props.and_then(|p| p.get(k)) {
            validate_update(sub, v, before, &child(path, k), rules, out);
        } else if let Some(add) = additional {
            validate_update(add, v, before, &child(path, k), rules, out);
        }
    }
}

fn format_ok(fmt: &str, s: &str) -> bool {
    match fmt {
        "date-time" => chrono::DateTime::parse_from_rfc3339(s).is_ok(),
        "date" => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok(),
        "int32" | "int64" => s.parse::<i64>().is_ok(),
        "byte" => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(s).is_ok()
        }
        "uuid" => uuid::Uuid::parse_str(s).is_ok(),
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<std::net::Ipv6Addr>().is_ok(),
        _ => true,
    }
}

/// Prunes a custom resource in place against its version's schema, then applies the schema's
/// `default`s (structural defaulting, as kube-apiserver does after pruning).
pub fn prune_custom(r: &ResourceInfo, obj: &mut Value) {
    if let Some(schema) = &r.schema {
        prune(schema, obj, true);
        apply_defaults(schema, obj, true);
        prune_nulls(schema, obj, true);
    }
}

/// Whether `v` is a null the schema does not allow (`nullable` not set).
fn non_nullable_null(v: &Value, schema: &Value) -> bool {
    v.is_null() && schema.get("nullable").and_then(Value::as_bool) != Some(true)
}

/// Drops null values of fields that are not `nullable` and have no `default`, as
/// kube-apiserver does after defaulting (`PruneNonNullableNullsWithoutDefaults`): charts that
/// render `color: null` are accepted.
fn prune_nulls(schema: &Value, value: &mut Value, root: bool) {
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, sub) in props {
                    if root && k == "metadata" {
                        continue;
                    }
                    let drop = map
                        .get(k)
                        .is_some_and(|v| non_nullable_null(v, sub) && sub.get("default").is_none());
                    if drop {
                        map.remove(k);
                    } else if let Some(v) = map.get_mut(k) {
                        prune_nulls(sub, v, false);
                    }
                }
            }
            if let Some(add) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                if add.get("default").is_none() {
                    map.retain(|_, v| !non_nullable_null(v, add));
                }
                for v in map.values_mut() {
                    prune_nulls(add, v, false);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for it in items.iter_mut() {
                    prune_nulls(item_schema, it, false);
                }
            }
        }
        _ => {}
    }
}

/// Fills absent fields whose schema has a `default`, recursively (also inside defaulted values,
/// array items and additionalProperties). `metadata` at the root is left alone.
pub fn apply_defaults(schema: &Value, value: &mut Value, root: bool) {
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, sub) in props {
                    if root && k == "metadata" {
                        continue;
                    }
                    // Absent, or null where null is not allowed: the default applies.
                    if map.get(k).is_none_or(|v| non_nullable_null(v, sub))
                        && let Some(d) = sub.get("default")
                    {
                        map.insert(k.clone(), d.clone());
                    }
                    if let Some(v) = map.get_mut(k) {
                        apply_defaults(sub, v, false);
                    }
                }
            }
            if let Some(add) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                for v in map.values_mut() {
                    apply_defaults(add, v, false);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for it in items.iter_mut() {
                    apply_defaults(item_schema, it, false);
                }
            }
        }
        _ => {}
    }
}

/// Validates a custom resource (metadata aside) against its version's schema; `old` is the
/// object it replaces on an update (for CEL transition rules).
pub fn validate_custom(r: &ResourceInfo, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let Some(schema) = &r.schema else {
        return out;
    };
    if let Some(map) = obj.as_object() {
        let body: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut schema = schema.clone();
        if let Some(req) = schema.get_mut("required").and_then(Value::as_array_mut) {
            req.retain(|r| !matches!(r.as_str(), Some("apiVersion" | "kind" | "metadata")));
        }
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            for k in ["apiVersion", "kind", "metadata"] {
                props.remove(k);
            }
        }
        let old_body = old.and_then(Value::as_object);
        // One walk: the structural causes, and apart the validation rules' (the root's, which
        // see the whole object with its metadata, first; a root path prints as `<nil>`, as
        // kube-apiserver prints it). When a structural cause blocks (a wrong type, a required
        // or unsupported value, too long, too many), kube-apiserver reports no rule and says
        // so; otherwise the rules' causes follow the structural ones.
        let mut rules = Vec::new();
        if let Some(root) = r.schema.as_ref() {
            crate::crd_cel::check(root, obj, old, "<nil>", &mut rules);
        }
        validate_object(&schema, &body, old_body, "", &mut rules, &mut out);
        let blocking = out.iter().any(|c| {
            matches!(
                c.reason.as_str(),
                "FieldValueNotSupported"
                    | "FieldValueRequired"
                    | "FieldValueTooLong"
                    | "FieldValueTooMany"
                    | "FieldValueTypeInvalid"
            )
        });
        if blocking {
            out.push(Cause::invalid(
                "<nil>",
                &Value::Null,
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ));
        } else {
            out.extend(rules);
        }
    }
    out
}

/// Patterns compiled at most once per process (a custom resource may hold thousands of
/// strings checked against one pattern), each within a size limit; a pattern that does not
/// compile checks nothing, as before. The cache is bounded: past its size it starts over.
fn compiled(pattern: &str) -> Option<std::sync::Arc<regex::Regex>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    const MAX_PATTERNS: usize = 4096;
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Arc<regex::Regex>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(hit) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(pattern) {
        return hit.clone();
    }
    let re = regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .ok()
        .map(Arc::new);
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    if map.len() >= MAX_PATTERNS {
        map.clear();
    }
    map.insert(pattern.to_string(), re.clone());
    re
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["size"], "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "color": {"type": "string", "enum": ["red", "blue"]},
                "code": {"type": "string", "pattern": "^[0-9]+$"},
                "port": {"x-kubernetes-int-or-string": true},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}}
            }},
            "status": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        }})
    }

    #[test]
    fn applies_structural_defaults() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "timeout": {"type": "string", "default": "60s"},
                "verify": {"type": "object", "properties": {"mode": {"type": "string", "default": "HEAD"}}},
                "items": {"type": "array", "items": {"type": "object", "properties": {"w": {"type": "integer", "default": 1}}}}
            }},
            "status": {"type": "object", "default": {"observedGeneration": -1}}
        }});
        let mut obj =
            json!({"metadata": {"name": "x"}, "spec": {"verify": {}, "items": [{}, {"w": 5}]}});
        apply_defaults(&schema, &mut obj, true);
        assert_eq!(obj["spec"]["timeout"], "60s");
        assert_eq!(obj["spec"]["verify"]["mode"], "HEAD");
        assert_eq!(obj["spec"]["items"], json!([{"w": 1}, {"w": 5}]));
        assert_eq!(obj["status"], json!({"observedGeneration": -1}));
        let mut set = json!({"spec": {"timeout": "5s"}});
        apply_defaults(&schema, &mut set, true);
        assert_eq!(set["spec"]["timeout"], "5s");
        assert!(
            set["spec"].get("verify").is_none(),
            "no default for an absent parent without one"
        );
    }

    #[test]
    fn prunes_unknown_fields_but_keeps_preserved_ones() {
        let mut obj = json!({"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "a"},
            "spec": {"size": 2, "bogus": 1, "free": {"anything": {"goes": 1}}}, "junk": true});
        prune(&schema(), &mut obj, true);
        assert_eq!(
            obj,
            json!({"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "a"},
            "spec": {"size": 2, "free": {"anything": {"goes": 1}}}})
        );
    }

    #[test]
    fn validates_with_kube_messages() {
        let mut out = Vec::new();
        let obj = json!({"spec": {"size": "big", "color": "pink", "code": "x1", "port": true,
                                   "tags": ["a", "b", "c"]}});
        validate(&schema(), &obj, "", &mut out);
        let msgs: Vec<String> = out
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert!(msgs.contains(&"spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"".to_string()), "{msgs:?}");
        assert!(
            msgs.contains(
                &"spec.color: Unsupported value: \"pink\": supported values: \"red\", \"blue\""
                    .to_string()
            ),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|m| m
                .starts_with("spec.code: Invalid value: \"x1\": spec.code in body should match")),
            "{msgs:?}"
        );
        assert!(msgs.iter().any(|m| m.starts_with("spec.port:")), "{msgs:?}");
        assert!(
            msgs.iter().any(|m| m.starts_with("spec.tags: Too many: 3")),
            "{msgs:?}"
        );
        let mut out = Vec::new();
        validate(&schema(), &json!({"spec": {}}), "", &mut out);
        assert_eq!(out[0].field, "spec.size");
        assert_eq!(out[0].message, "Required value");
        let mut out = Vec::new();
        validate(&schema(), &json!({"spec": {"size": 11}}), "", &mut out);
        assert_eq!(
            out[0].message,
            "Invalid value: 11: spec.size in body should be less than or equal to 10"
        );
    }
}
