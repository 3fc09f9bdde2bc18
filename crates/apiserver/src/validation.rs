//! Validation of names and metadata, with kube-apiserver's messages.

use crate::error::Cause;
use serde_json::Value;
use tidegate_core::labels::{is_label_value, is_qualified_name};

pub(crate) const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
pub(crate) const LABEL_MSG: &str = tidegate_core::labels::DNS1123_LABEL_MSG;
pub(crate) const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const QUALIFIED_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// How a kind's names are validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// DNS-1123 subdomain (most kinds).
    Subdomain,
    /// DNS-1123 label (Namespace, Service).
    Label,
    /// Any path segment (RBAC kinds).
    PathSegment,
}

/// The name rule of a kind.
pub fn name_rule(group: &str, kind: &str) -> NameRule {
    match (group, kind) {
        ("", "Namespace") | ("", "Service") => NameRule::Label,
        ("rbac.authorization.k8s.io", _) => NameRule::PathSegment,
        _ => NameRule::Subdomain,
    }
}

/// Whether `s` matches the DNS-1123 label pattern, whatever its length.
fn matches_label(s: &str) -> bool {
    is_label_part(s)
}

/// Whether `s` matches the DNS-1123 subdomain pattern, whatever its length.
fn matches_subdomain(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(is_label_part)
}

/// Whether `s` is a DNS-1123 subdomain.
pub fn is_subdomain(s: &str) -> bool {
    s.len() <= 253 && matches_subdomain(s)
}

/// Whether `s` matches the DNS-1123 label pattern (length not checked).
pub(crate) fn is_label_part(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Validates an object name under `rule`; returns the causes (empty when valid).
pub fn validate_name(name: &str, rule: NameRule, field: &str) -> Vec<Cause> {
    let v = Value::from(name);
    let mut out = Vec::new();
    match rule {
        NameRule::Label => {
            if name.len() > 63 {
                out.push(Cause::invalid(
                    field,
                    &v,
                    "must be no more than 63 characters",
                ));
            }
            // The pattern is checked on the whole name, as kube-apiserver does; the length
            // has its own message.
            if !matches_label(name) {
                out.push(Cause::invalid(field, &v, LABEL_MSG));
            }
        }
        NameRule::Subdomain => {
            if name.len() > 253 {
                out.push(Cause::invalid(
                    field,
                    &v,
                    "must be no more than 253 characters",
                ));
            }
            if !matches_subdomain(name) {
                out.push(Cause::invalid(field, &v, SUBDOMAIN_MSG));
            }
        }
        NameRule::PathSegment => {
            if name == "." || name == ".." {
                out.push(Cause::invalid(field, &v, &format!("may not be '{name}'")));
            } else if name.contains('/') || name.contains('%') {
                let bad = if name.contains('/') { "/" } else { "%" };
                out.push(Cause::invalid(
                    field,
                    &v,
                    &format!("may not contain '{bad}'"),
                ));
            }
        }
    }
    out
}

/// Validates labels and annotations of `meta`.
pub fn validate_metadata_maps(meta: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    if let Some(labels) = meta.get("labels") {
        match labels.as_object() {
            Some(map) => {
                for (k, v) in map {
                    if !is_qualified_name(k) {
                        out.push(Cause::invalid(
                            "metadata.labels",
                            &Value::from(k.as_str()),
                            QUALIFIED_MSG,
                        ));
                    }
                    match v.as_str() {
                        Some(s) if is_label_value(s) => {}
                        Some(s) => out.push(Cause::invalid(
                            "metadata.labels",
                            &Value::from(s),
                            LABEL_VALUE_MSG,
                        )),
                        None if v.is_null() => {}
                        None => out.push(Cause::type_invalid(
                            &format!("metadata.labels.{k}"),
                            v,
                            "string",
                        )),
                    }
                }
            }
            None if labels.is_null() => {}
            None => out.push(Cause::type_invalid("metadata.labels", labels, "object")),
        }
    }
    if let Some(ann) = meta.get("annotations") {
        match ann.as_object() {
            Some(map) => {
                let mut total = 0;
                for (k, v) in map {
                    total += k.len() + v.as_str().map_or(0, str::len);
                    // Annotation keys are checked in lower case (`ValidateAnnotations`).
                    if !is_qualified_name(&k.to_lowercase()) {
                        out.push(Cause::invalid(
                            "metadata.annotations",
                            &Value::from(k.as_str()),
                            QUALIFIED_MSG,
                        ));
                    }
                    if !v.is_string() && !v.is_null() {
                        out.push(Cause::type_invalid(
                            &format!("metadata.annotations.{k}"),
                            v,
                            "string",
                        ));
                    }
                }
                if total > 256 * 1024 {
                    out.push(Cause {
                        reason: "FieldValueTooLong".into(),
                        message: "Too long: may not be more than 262144 bytes".to_string(),
                        field: "metadata.annotations".into(),
                    });
                }
            }
            None if ann.is_null() => {}
            None => out.push(Cause::type_invalid("metadata.annotations", ann, "object")),
        }
    }
    if let Some(f) = meta.get("finalizers")
        && !f.is_null()
    {
        match f.as_array() {
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    match item.as_str() {
                        Some(s)
                            if is_qualified_name(s) || s.contains('/') && is_qualified_name(s) => {}
                        Some(s) => out.push(Cause::invalid(
                            &format!("metadata.finalizers[{i}]"),
                            &Value::from(s),
                            QUALIFIED_MSG,
                        )),
                        None => out.push(Cause::type_invalid(
                            &format!("metadata.finalizers[{i}]"),
                            item,
                            "string",
                        )),
                    }
                }
            }
            None => out.push(Cause::type_invalid("metadata.finalizers", f, "array")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(validate_name("web-1", NameRule::Label, "metadata.name").is_empty());
        assert!(validate_name("a.b", NameRule::Subdomain, "metadata.name").is_empty());
        assert_eq!(
            validate_name("a.b", NameRule::Label, "metadata.name").len(),
            1
        );
        assert_eq!(
            validate_name("Bad_Name", NameRule::Subdomain, "metadata.name").len(),
            1
        );
        assert!(validate_name("system:admin", NameRule::PathSegment, "metadata.name").is_empty());
        assert_eq!(
            validate_name("a/b", NameRule::PathSegment, "metadata.name").len(),
            1
        );
        // Too long but well formed: only the length message, as kube-apiserver answers.
        let long = "a".repeat(64);
        let causes = validate_name(&long, NameRule::Label, "metadata.name");
        assert_eq!(causes.len(), 1, "{causes:?}");
        assert!(causes[0].message.contains("no more than 63"), "{causes:?}");
        let causes = validate_name(&"a".repeat(254), NameRule::Subdomain, "metadata.name");
        assert_eq!(causes.len(), 1, "{causes:?}");
    }

    #[test]
    fn multibyte_names_are_refused_not_sliced() {
        // Byte 63 and byte 253 fall inside a character: a byte slice there panicked.
        for rule in [NameRule::Label, NameRule::Subdomain, NameRule::PathSegment] {
            for name in ["é".repeat(200), format!("a{}", "€".repeat(100)), "ü".into()] {
                let causes = validate_name(&name, rule, "metadata.name");
                if rule != NameRule::PathSegment {
                    assert!(!causes.is_empty(), "{rule:?} {name}");
                }
            }
        }
        let causes = validate_name(&"é".repeat(200), NameRule::Subdomain, "metadata.name");
        assert_eq!(causes.len(), 2, "length and pattern: {causes:?}");
    }

    #[test]
    fn labels_and_annotations() {
        let meta = serde_json::json!({"labels": {"app": "web", "bad key!": "x", "ok": "bad value"},
                                      "annotations": {"a": "b"}});
        let causes = validate_metadata_maps(&meta);
        assert_eq!(causes.len(), 2, "{causes:?}");
        assert!(causes.iter().all(|c| c.field == "metadata.labels"));
    }
}
