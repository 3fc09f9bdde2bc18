//! Field selectors (`metadata.name=x,status.phase!=Running`).

use crate::error::{ApiError, ApiResult};
use serde_json::Value;
use tidegate_schema::ResourceInfo;

/// One `field=value` or `field!=value` term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// Dotted field path.
    pub field: String,
    /// Wanted (or unwanted) value.
    pub value: String,
    /// `!=`
    pub negate: bool,
}

/// A parsed field selector: all terms must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// The terms.
    pub terms: Vec<Term>,
}

fn supported(r: &ResourceInfo, field: &str) -> bool {
    if matches!(field, "metadata.name" | "metadata.namespace") {
        return true;
    }
    if r.custom {
        return r.selectable_fields.iter().any(|f| f == field);
    }
    let extra: &[&str] = match (r.group.as_str(), r.plural.as_str()) {
        ("", "pods") => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        ("", "secrets") => &["type"],
        ("", "namespaces") => &["status.phase"],
        ("", "nodes") => &["spec.unschedulable"],
        ("", "events") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ("events.k8s.io", "events") => &[
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "reason",
            "type",
        ],
        ("batch", "jobs") => &["status.successful"],
        ("apps", "replicasets") => &["status.replicas"],
        ("certificates.k8s.io", "certificatesigningrequests") => &["spec.signerName"],
        _ => &[],
    };
    extra.contains(&field)
}

impl FieldSelector {
    /// Parses a selector for resource `r`; unknown fields are 400 as kube-apiserver answers.
    pub fn parse(input: &str, r: &ResourceInfo) -> ApiResult<FieldSelector> {
        let mut terms = Vec::new();
        for part in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, value, negate) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, false)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{input}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            if !supported(r, field) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            terms.push(Term {
                field: field.to_string(),
                value: value.trim().to_string(),
                negate,
            });
        }
        Ok(FieldSelector { terms })
    }

    /// Whether `obj` satisfies every term.
    pub fn matches(&self, obj: &Value) -> bool {
        self.terms.iter().all(|t| {
            let mut cur = Some(obj);
            for seg in t.field.split('.') {
                cur = cur.and_then(|c| c.get(seg));
            }
            let actual = match cur {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (actual == t.value) != t.negate
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selects_by_metadata() {
        let r = tidegate_schema::builtin_resources()
            .iter()
            .find(|r| r.plural == "configmaps")
            .expect("configmaps");
        let s = FieldSelector::parse("metadata.name=a,metadata.namespace!=kube-system", r)
            .expect("parse");
        assert!(s.matches(&json!({"metadata": {"name": "a", "namespace": "default"}})));
        assert!(!s.matches(&json!({"metadata": {"name": "a", "namespace": "kube-system"}})));
        let e = FieldSelector::parse("spec.foo=1", r).expect_err("unsupported");
        assert_eq!(e.message, "field label not supported: spec.foo");
    }
}
