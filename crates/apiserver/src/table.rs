//! `meta.k8s.io/v1` Table output for `kubectl get`: the columns of kube-apiserver's printers
//! for built-in kinds ([`crate::printers`]), a CRD's `additionalPrinterColumns`, NAME and AGE
//! otherwise.

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

/// The Age cell: the time since the object was created.
pub(crate) fn age(obj: &Value) -> String {
    since(obj.pointer("/metadata/creationTimestamp"))
}

/// A timestamp cell as kube-apiserver renders `date` columns: the time since, or `<unknown>`.
pub(crate) fn since(ts: Option<&Value>) -> String {
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

/// Converts objects into a Table. `include_object` is `None`, `Metadata` or `Object`;
/// `headers` false omits the column definitions (later events of a watch).
pub fn to_table(
    r: &ResourceInfo,
    objects: &[&Value],
    list_meta: Value,
    include_object: &str,
    headers: bool,
) -> Value {
    let printer = (!r.custom)
        .then(|| crate::printers::columns(&r.group, &r.kind))
        .flatten();
    let (columns, cells): (Vec<Value>, Cells<'_>) = match &printer {
        Some(cols) => (
            cols.iter()
                .map(|c| {
                    let description = match c.name {
                        "Name" if c.format == "name" => crate::printers::NAME_DESCRIPTION,
                        "Age" => crate::printers::AGE_DESCRIPTION,
                        _ => "",
                    };
                    json!({"name": c.name, "type": c.type_, "format": c.format,
                        "description": description, "priority": c.priority})
                })
                .collect(),
            Box::new(move |o: &Value| cols.iter().map(|c| (c.cell)(o)).collect()),
        ),
        None => custom_columns(r),
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut row = json!({"cells": cells(o)});
            if r.group.is_empty() && r.kind == "Pod" {
                let completed = match o.pointer("/status/phase").and_then(Value::as_str) {
                    Some("Succeeded") => Some(("Succeeded", "The pod has completed successfully.")),
                    Some("Failed") => Some(("Failed", "The pod failed.")),
                    _ => None,
                };
                if let Some((reason, message)) = completed {
                    row["conditions"] = json!([{"type": "Completed", "status": "True",
                        "reason": reason, "message": message}]);
                }
            }
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

type Cells<'a> = Box<dyn Fn(&Value) -> Vec<Value> + 'a>;

/// Columns of kinds without a printer: NAME, a CRD's `additionalPrinterColumns` (a
/// CustomResourceDefinition's own table: Created At), then AGE unless a column already is one.
fn custom_columns(r: &ResourceInfo) -> (Vec<Value>, Cells<'_>) {
    let is_crd_list = r.group == "apiextensions.k8s.io" && r.plural == "customresourcedefinitions";
    let has_age = r
        .printer_columns
        .iter()
        .any(|c| c.name.eq_ignore_ascii_case("age"));
    let with_age = !(is_crd_list || r.custom && has_age);
    let mut columns = vec![json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": crate::printers::NAME_DESCRIPTION,
    })];
    if is_crd_list {
        columns.push(json!({"name": "Created At", "type": "date", "format": "", "description": "", "priority": 0}));
    }
    for c in &r.printer_columns {
        columns.push(json!({
            "name": c.name, "type": c.type_, "format": c.format,
            "description": c.description, "priority": c.priority,
        }));
    }
    if with_age {
        columns.push(
            json!({"name": "Age", "type": "string", "format": "", "priority": 0,
            "description": crate::printers::AGE_DESCRIPTION}),
        );
    }
    let cells = move |o: &Value| {
        let mut cells = vec![json!(
            o.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
        )];
        if is_crd_list {
            cells.push(json!(
                o.pointer("/metadata/creationTimestamp")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ));
        }
        for c in &r.printer_columns {
            let v = json_path(o, &c.json_path);
            if c.type_ == "date" {
                cells.push(json!(since(v)));
            } else {
                cells.push(v.cloned().unwrap_or(Value::Null));
            }
        }
        if with_age {
            cells.push(json!(age(o)));
        }
        cells
    };
    (columns, Box::new(cells))
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
