//! Validation of built-in kinds with kube-apiserver's messages (`pkg/apis/*/validation`): the
//! rules a user is likely to hit — selectors matching templates, containers and images
//! required, port ranges and names, restart and pull policies, Service ports and types, Ingress
//! paths, cron schedules, RBAC references, ConfigMap keys, Secret types, HPA and PDB bounds,
//! PVC access modes. Runs after defaulting, as in kube-apiserver; messages render values as
//! Kubernetes 1.34+ does (JSON). What is not checked is listed in docs/apiserver.md.

mod kinds;
mod pod;

use crate::error::Cause;
use serde_json::{Map, Value, json};

/// The causes why a built-in object is invalid (`old`: the stored object on update).
pub fn validate(group: &str, kind: &str, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut v = Causes::default();
    kinds::validate(&mut v, group, kind, obj, old);
    v.0
}

/// Causes in the order validation finds them.
#[derive(Default)]
pub(crate) struct Causes(Vec<Cause>);

impl Causes {
    fn required(&mut self, field: &str) {
        self.0.push(Cause::required(field));
    }

    fn required_because(&mut self, field: &str, detail: &str) {
        self.0.push(Cause {
            reason: "FieldValueRequired".into(),
            message: format!("Required value: {detail}"),
            field: field.into(),
        });
    }

    fn invalid(&mut self, field: &str, value: &Value, why: &str) {
        self.0.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: {}: {why}", render(value)),
            field: field.into(),
        });
    }

    fn not_supported(&mut self, field: &str, value: &Value, supported: &[&str]) {
        let quoted: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
        self.0.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {}: supported values: {}",
                render(value),
                quoted.join(", ")
            ),
            field: field.into(),
        });
    }

    fn duplicate(&mut self, field: &str, value: &Value) {
        self.0.push(Cause {
            reason: "FieldValueDuplicate".into(),
            message: format!("Duplicate value: {}", render(value)),
            field: field.into(),
        });
    }

    fn not_found(&mut self, field: &str, value: &Value) {
        self.0.push(Cause {
            reason: "FieldValueNotFound".into(),
            message: format!("Not found: {}", render(value)),
            field: field.into(),
        });
    }

    fn too_long(&mut self, field: &str, max: usize) {
        self.0.push(Cause {
            reason: "FieldValueTooLong".into(),
            message: format!("Too long: may not be more than {max} bytes"),
            field: field.into(),
        });
    }

    fn forbidden(&mut self, field: &str, why: &str) {
        self.0.push(Cause::forbidden(field, why));
    }

    /// `value` must be one of `supported` (when set).
    fn one_of(&mut self, field: &str, value: Option<&Value>, supported: &[&str]) {
        if let Some(v) = value.filter(|v| !v.is_null())
            && !v.as_str().is_some_and(|s| supported.contains(&s))
        {
            self.not_supported(field, v, supported);
        }
    }

    /// An integer that must not be negative.
    fn non_negative(&mut self, field: &str, value: Option<&Value>) {
        if let Some(n) = value.and_then(Value::as_i64)
            && n < 0
        {
            self.invalid(field, &json!(n), "must be greater than or equal to 0");
        }
    }

    /// A DNS-1123 label (container, port and volume names).
    fn dns_label(&mut self, field: &str, s: &str) {
        let v = json!(s);
        if s.len() > 63 {
            self.invalid(field, &v, "must be no more than 63 characters");
        }
        if !crate::validation::is_label_part(s) {
            let why = if crate::validation::is_subdomain(s) {
                "must not contain dots"
            } else {
                crate::validation::LABEL_MSG
            };
            self.invalid(field, &v, why);
        }
    }

    /// A named port (`IsValidPortName`).
    fn port_name(&mut self, field: &str, name: &str) {
        let v = json!(name);
        if name.len() > 15 {
            self.invalid(field, &v, "must be no more than 15 characters");
        }
        if !name
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        {
            self.invalid(
                field,
                &v,
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
            );
        }
        if !name.bytes().any(|c| c.is_ascii_lowercase()) {
            self.invalid(field, &v, "must contain at least one letter (a-z)");
        }
        if name.contains("--") {
            self.invalid(field, &v, "must not contain consecutive hyphens");
        }
        if name.starts_with('-') || name.ends_with('-') {
            self.invalid(field, &v, "must not begin or end with a hyphen");
        }
    }

    /// A port number in 1–65535.
    fn port_number(&mut self, field: &str, n: i64) {
        if !(1..=65535).contains(&n) {
            self.invalid(field, &json!(n), "must be between 1 and 65535, inclusive");
        }
    }
}

/// A value as Kubernetes 1.34+ renders it in errors: strings quoted, maps as JSON with sorted
/// keys, `null` for nothing.
pub(crate) fn render(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let sorted: Map<String, Value> = keys
                .into_iter()
                .map(|k| (k.clone(), m[k].clone()))
                .collect();
            Value::Object(sorted).to_string()
        }
        other => other.to_string(),
    }
}

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn items(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Whether a label selector selects these labels (matchLabels and matchExpressions).
pub(crate) fn selector_matches(sel: &Value, labels: Option<&Value>) -> bool {
    let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let labels_ok = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|m| m.iter().all(|(k, v)| get(k) == v.as_str()));
    let exprs_ok = items(sel.get("matchExpressions")).iter().all(|e| {
        let key = s(e, "key").unwrap_or("");
        let values: Vec<&str> = items(e.get("values"))
            .iter()
            .filter_map(Value::as_str)
            .collect();
        match s(e, "operator") {
            Some("In") => get(key).is_some_and(|v| values.contains(&v)),
            Some("NotIn") => get(key).is_none_or(|v| !values.contains(&v)),
            Some("Exists") => get(key).is_some(),
            Some("DoesNotExist") => get(key).is_none(),
            _ => false,
        }
    });
    labels_ok && exprs_ok
}

/// Whether a selector selects nothing in particular (`{}`).
fn selector_empty(sel: &Value) -> bool {
    sel.get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty)
        && items(sel.get("matchExpressions")).is_empty()
}
