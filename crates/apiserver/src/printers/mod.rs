//! The columns kube-apiserver's printers (`pkg/printers/internalversion/printers.go`) give each
//! built-in kind in `meta.k8s.io/v1` Tables: names, types, priorities (1 = `-o wide` only) and
//! how each cell is computed. The server always fills every column, as kube-apiserver does;
//! kubectl hides the priority-1 ones unless asked.

mod cluster;
mod network;
mod workloads;

use crate::table::{age, since};
use serde_json::{Value, json};

/// One Table column and how its cell is computed.
pub struct Column {
    /// Column name (kubectl prints it in upper case).
    pub name: &'static str,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    pub type_: &'static str,
    /// `name` for the Name column, otherwise empty.
    pub format: &'static str,
    /// 0, or 1 for columns shown only with `-o wide`.
    pub priority: u8,
    /// The cell of an object.
    pub cell: fn(&Value) -> Value,
}

/// Describes the Name column's cells.
pub const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// Describes the Age column's cells.
pub const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// The columns of a built-in kind, `None` for kinds without a printer.
pub fn columns(group: &str, kind: &str) -> Option<Vec<Column>> {
    workloads::columns(group, kind)
        .or_else(|| network::columns(group, kind))
        .or_else(|| cluster::columns(group, kind))
}

/// A column of priority 0.
const fn col(name: &'static str, type_: &'static str, cell: fn(&Value) -> Value) -> Column {
    Column {
        name,
        type_,
        format: "",
        priority: 0,
        cell,
    }
}

/// A column shown only with `-o wide`.
const fn wide(name: &'static str, cell: fn(&Value) -> Value) -> Column {
    Column {
        name,
        type_: "string",
        format: "",
        priority: 1,
        cell,
    }
}

/// The Name column.
const NAME: Column = Column {
    name: "Name",
    type_: "string",
    format: "name",
    priority: 0,
    cell: |o| json!(s(o, "/metadata/name")),
};

/// The Age column.
const AGE: Column = col("Age", "string", |o| json!(age(o)));

/// The string at `pointer`, or "".
fn s<'a>(o: &'a Value, pointer: &str) -> &'a str {
    o.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The integer at `pointer`, or 0.
fn i(o: &Value, pointer: &str) -> i64 {
    o.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// The string at `pointer`, or `fallback` when missing or empty.
fn or<'a>(o: &'a Value, pointer: &str, fallback: &'a str) -> &'a str {
    Some(s(o, pointer))
        .filter(|v| !v.is_empty())
        .unwrap_or(fallback)
}

/// The objects of the array at `pointer`.
fn items<'a>(o: &'a Value, pointer: &str) -> &'a [Value] {
    o.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `labels.FormatLabels`: sorted `k=v` joined with commas, `<none>` when empty.
fn format_labels(map: Option<&Value>) -> String {
    let mut pairs: Vec<String> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    if pairs.is_empty() {
        "<none>".into()
    } else {
        pairs.join(",")
    }
}

/// A label selector as `Selector.String()` writes it: requirements sorted by key.
fn selector_string(sel: Option<&Value>) -> String {
    let Some(sel) = sel.filter(|v| v.is_object()) else {
        return String::new();
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in items(sel, "/matchExpressions") {
        let key = s(e, "/key").to_string();
        let mut values: Vec<&str> = items(e, "/values")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match s(e, "/operator") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            _ => continue,
        };
        reqs.push((key, text));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    reqs.into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(",")
}

/// `metav1.FormatLabelSelector`: the selector string, `<none>` when empty.
fn format_selector(sel: Option<&Value>) -> String {
    let text = selector_string(sel);
    if text.is_empty() {
        "<none>".into()
    } else {
        text
    }
}

/// Container names and images of a pod spec, each joined with commas.
fn containers(spec: Option<&Value>, field: &str) -> String {
    spec.and_then(|s| s.get("containers"))
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| c.get(field).and_then(Value::as_str).unwrap_or(""))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// The first `max` items joined with commas, then ` + N more...`; `<unset>` when empty.
fn list_with_more(list: &[String], max: usize) -> String {
    let mut out = list.iter().take(max).cloned().collect::<Vec<_>>().join(",");
    if list.len() > max {
        out.push_str(&format!(" + {} more...", list.len() - max));
    }
    if out.is_empty() {
        "<unset>".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_print_as_kubernetes_does() {
        let sel = json!({"matchLabels": {"tier": "fe", "app": "web"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "dev"]},
                {"key": "gone", "operator": "DoesNotExist"}]});
        assert_eq!(
            selector_string(Some(&sel)),
            "app=web,env in (dev,prod),!gone,tier=fe"
        );
        assert_eq!(format_selector(Some(&json!({}))), "<none>");
        assert_eq!(format_labels(Some(&json!({"b": "2", "a": "1"}))), "a=1,b=2");
        assert_eq!(
            list_with_more(&["a".into(), "b".into(), "c".into(), "d".into()], 3),
            "a,b,c + 1 more..."
        );
    }
}
