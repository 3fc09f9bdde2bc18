//! `meta.k8s.io/v1` Table output for `kubectl get`: NAME and AGE for every kind, a few familiar
//! columns for common built-ins, and a CRD's `additionalPrinterColumns`.

use serde_json::{Value, json};
use tidegate_schema::ResourceInfo;

/// kube-apiserver's human duration (`45s`, `5m3s`, `3h10m`, `12d`, `2y40d`).
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{}h", hours / 24, h)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{}d", hours / 24 / 365, dy)
        };
    }
    format!("{}y", hours / 24 / 365)
}

fn age(obj: &Value) -> String {
    since(obj.pointer("/metadata/creationTimestamp"))
}

/// A timestamp cell as kube-apiserver renders `date` columns: the time since, or `<unknown>`.
fn since(ts: Option<&Value>) -> String {
    let Some(ts) = ts.and_then(Value::as_str) else {
        return "<unknown>".into();
    };
    match chrono::DateTime::parse_from_rfc3339(ts) {
        Ok(t) => human_duration((chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds()),
        Err(_) => "<unknown>".into(),
    }
}

/// Evaluates a simple JSONPath (`.spec.replicas`, `.status.conditions[0].type`,
/// `.status.conditions[?(@.type=="Ready")].status`).
pub fn json_path<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    let path = path.strip_prefix('$').unwrap_or(path);
    let mut cur = obj;
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let field = &r[..end];
            if !field.is_empty() {
                cur = cur.get(field)?;
            }
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inner = &r[..end];
            rest = &r[end + 1..];
            if let Some(filter) = inner.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')')) {
                let (field, want) = filter.split_once("==")?;
                let want = want.trim().trim_matches('"').trim_matches('\'');
                cur = cur.as_array()?.iter().find(|item| {
                    item.get(field.trim())
                        .map(|v| v.as_str().map(str::to_string).unwrap_or(v.to_string()))
                        .as_deref()
                        == Some(want)
                })?;
            } else if let Ok(i) = inner.parse::<i64>() {
                let arr = cur.as_array()?;
                let idx = if i < 0 { arr.len() as i64 + i } else { i };
                cur = arr.get(usize::try_from(idx).ok()?)?;
            } else {
                cur = cur.get(inner.trim_matches('\'').trim_matches('"'))?;
            }
        } else {
            return None;
        }
    }
    Some(cur)
}

struct Column {
    name: &'static str,
    type_: &'static str,
    format: &'static str,
    cell: fn(&Value) -> Value,
}

fn count_keys(v: Option<&Value>) -> usize {
    v.and_then(Value::as_object).map_or(0, |m| m.len())
}

fn int_at(obj: &Value, p: &str) -> i64 {
    obj.pointer(p).and_then(Value::as_i64).unwrap_or(0)
}

fn builtin_columns(r: &ResourceInfo) -> Vec<Column> {
    match (r.group.as_str(), r.plural.as_str()) {
        ("", "namespaces") => vec![Column {
            name: "Status",
            type_: "string",
            format: "",
            cell: |o| {
                json!(
                    o.pointer("/status/phase")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                )
            },
        }],
        ("", "configmaps") => vec![Column {
            name: "Data",
            type_: "integer",
            format: "",
            cell: |o| json!(count_keys(o.get("data")) + count_keys(o.get("binaryData"))),
        }],
        ("", "secrets") => vec![
            Column {
                name: "Type",
                type_: "string",
                format: "",
                cell: |o| json!(o.get("type").and_then(Value::as_str).unwrap_or("")),
            },
            Column {
                name: "Data",
                type_: "integer",
                format: "",
                cell: |o| json!(count_keys(o.get("data"))),
            },
        ],
        ("", "serviceaccounts") => vec![Column {
            name: "Secrets",
            type_: "string",
            format: "",
            cell: |o| {
                json!(
                    o.get("secrets")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len)
                )
            },
        }],
        ("apps", "deployments") => vec![
            Column {
                name: "Ready",
                type_: "string",
                format: "",
                cell: |o| {
                    json!(format!(
                        "{}/{}",
                        int_at(o, "/status/readyReplicas"),
                        o.pointer("/spec/replicas")
                            .and_then(Value::as_i64)
                            .unwrap_or(1)
                    ))
                },
            },
            Column {
                name: "Up-to-date",
                type_: "integer",
                format: "",
                cell: |o| json!(int_at(o, "/status/updatedReplicas")),
            },
            Column {
                name: "Available",
                type_: "integer",
                format: "",
                cell: |o| json!(int_at(o, "/status/availableReplicas")),
            },
        ],
        ("apiextensions.k8s.io", "customresourcedefinitions") => vec![Column {
            name: "Created At",
            type_: "date",
            format: "",
            cell: |o| {
                json!(
                    o.pointer("/metadata/creationTimestamp")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                )
            },
        }],
        _ => Vec::new(),
    }
}

/// Converts objects into a Table. `include_object` is `None`, `Metadata` or `Object`;
/// `headers` false omits the column definitions (later events of a watch).
pub fn to_table(
    r: &ResourceInfo,
    objects: &[&Value],
    list_meta: Value,
    include_object: &str,
    headers: bool,
) -> Value {
    let mut columns = vec![json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
    })];
    let builtin = builtin_columns(r);
    let crd_age_last = r.custom;
    for c in &builtin {
        columns.push(json!({"name": c.name, "type": c.type_, "format": c.format, "description": "", "priority": 0}));
    }
    for c in &r.printer_columns {
        columns.push(json!({
            "name": c.name, "type": c.type_, "format": c.format,
            "description": c.description, "priority": c.priority,
        }));
    }
    let custom_has_age = r
        .printer_columns
        .iter()
        .any(|c| c.name.eq_ignore_ascii_case("age"));
    let is_crd_list = r.group == "apiextensions.k8s.io" && r.plural == "customresourcedefinitions";
    if !(is_crd_list || crd_age_last && custom_has_age) {
        columns.push(json!({
            "name": "Age", "type": "string", "format": "", "priority": 0,
            "description": "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
        }));
    }
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut cells = vec![json!(
                o.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            )];
            for c in &builtin {
                cells.push((c.cell)(o));
            }
            for c in &r.printer_columns {
                let v = json_path(o, &c.json_path);
                if c.type_ == "date" {
                    cells.push(json!(since(v)));
                } else {
                    cells.push(v.cloned().unwrap_or(Value::Null));
                }
            }
            if !(is_crd_list || crd_age_last && custom_has_age) {
                cells.push(json!(age(o)));
            }
            let mut row = json!({"cells": cells});
            match include_object {
                "None" => {}
                "Object" => row["object"] = (*o).clone(),
                _ => {
                    row["object"] = json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1",
                        "metadata": o.get("metadata").cloned().unwrap_or(json!({})),
                    })
                }
            }
            row
        })
        .collect();
    let mut table = json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
    });
    if headers {
        table["columnDefinitions"] = Value::Array(columns);
    } else {
        table["columnDefinitions"] = Value::Null;
    }
    table["rows"] = Value::Array(rows);
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_kubectl() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(119), "119s");
        assert_eq!(human_duration(125), "2m5s");
        assert_eq!(human_duration(600), "10m");
        assert_eq!(human_duration(3 * 3600 + 600), "3h10m");
        assert_eq!(human_duration(30 * 3600), "30h");
        assert_eq!(human_duration(3 * 86400 + 3600), "3d1h");
        assert_eq!(human_duration(40 * 86400), "40d");
        assert_eq!(human_duration(3 * 365 * 86400 + 86400), "3y1d");
    }

    #[test]
    fn json_paths() {
        let o = json!({"spec": {"replicas": 3}, "status": {"conditions": [
            {"type": "Ready", "status": "True"}, {"type": "Other", "status": "False"}]}});
        assert_eq!(json_path(&o, ".spec.replicas"), Some(&json!(3)));
        assert_eq!(
            json_path(&o, ".status.conditions[1].type"),
            Some(&json!("Other"))
        );
        assert_eq!(
            json_path(&o, ".status.conditions[?(@.type==\"Ready\")].status"),
            Some(&json!("True"))
        );
        assert_eq!(json_path(&o, ".spec.missing"), None);
    }
}
