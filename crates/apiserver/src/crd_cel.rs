//! `x-kubernetes-validations`: the CEL rules of a CRD's schema, evaluated as kube-apiserver
//! evaluates them — at each schema node whose value is present, with `self` bound to that
//! value and, for transition rules, `oldSelf` to the value it replaces (rules that use
//! `oldSelf` run only on updates where an old value exists). Failures read as
//! kube-apiserver's: `<path>: Invalid value: "<type>": <message>`.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::Value;
use tidegate_core::cel::Program;

use crate::error::Cause;

/// Compiled rules, at most once per process per rule text. A rule that does not compile is
/// remembered as such and checks nothing (the CRD that carries it was accepted as written).
fn program(rule: &str) -> Option<Arc<Program>> {
    const MAX_RULES: usize = 4096;
    static CACHE: LazyLock<Mutex<HashMap<String, Option<Arc<Program>>>>> =
        LazyLock::new(Mutex::default);
    if let Some(hit) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).get(rule) {
        return hit.clone();
    }
    let compiled = match tidegate_core::cel::env().compile(rule) {
        Ok(p) => Some(Arc::new(p)),
        Err(e) => {
            tracing::debug!(rule, error = %e, "CEL validation rule does not compile");
            None
        }
    };
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= MAX_RULES {
        cache.clear();
    }
    cache.insert(rule.to_string(), compiled.clone());
    compiled
}

/// Whether `rule` refers to `oldSelf` (a transition rule).
fn uses_old_self(rule: &str) -> bool {
    rule.match_indices("oldSelf").any(|(i, _)| {
        let before = rule[..i].chars().next_back();
        let after = rule[i + "oldSelf".len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

enum Outcome {
    Pass,
    Fail,
    Error(String),
}

fn evaluate(program: &Program, v: &Value, old: Option<&Value>) -> Outcome {
    let mut ctx = tidegate_core::cel::context();
    if let Err(e) = ctx.add_variable("self", v.clone()) {
        return Outcome::Error(e.to_string());
    }
    if let Some(old) = old
        && let Err(e) = ctx.add_variable("oldSelf", old.clone())
    {
        return Outcome::Error(e.to_string());
    }
    match program.execute(&ctx) {
        Ok(tidegate_core::cel::Value::Bool(true)) => Outcome::Pass,
        Ok(tidegate_core::cel::Value::Bool(false)) => Outcome::Fail,
        Ok(_) => Outcome::Error("rule did not evaluate to a boolean".to_string()),
        Err(e) => Outcome::Error(e.to_string()),
    }
}

/// The message of a failed rule: `messageExpression`'s string when it evaluates to one,
/// else `message`, else `failed rule: <rule>`.
fn message_of(rule: &Value, text: &str, v: &Value, old: Option<&Value>) -> String {
    if let Some(expr) = rule.get("messageExpression").and_then(Value::as_str)
        && let Some(p) = program(expr)
    {
        let mut ctx = tidegate_core::cel::context();
        let mut ok = ctx.add_variable("self", v.clone()).is_ok();
        if let Some(old) = old {
            ok &= ctx.add_variable("oldSelf", old.clone()).is_ok();
        }
        if ok
            && let Ok(tidegate_core::cel::Value::String(s)) = p.execute(&ctx)
            && !s.trim().is_empty()
        {
            return s.to_string();
        }
    }
    match rule.get("message").and_then(Value::as_str) {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => format!("failed rule: {text}"),
    }
}

/// Evaluates the `x-kubernetes-validations` of `schema` against `v` (at `path`), with the
/// value it replaces, `old`, for transition rules.
pub(crate) fn check(
    schema: &Value,
    v: &Value,
    old: Option<&Value>,
    path: &str,
    out: &mut Vec<Cause>,
) {
    let Some(rules) = schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    else {
        return;
    };
    let type_name = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or(match v {
            Value::Object(_) => "object",
            Value::Array(_) => "array",
            Value::String(_) => "string",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::Null => "null",
        });
    for rule in rules {
        let Some(text) = rule.get("rule").and_then(Value::as_str) else {
            continue;
        };
        let transition = uses_old_self(text);
        let optional_old = rule.get("optionalOldSelf").and_then(Value::as_bool) == Some(true);
        if transition && old.is_none() && !optional_old {
            continue;
        }
        let Some(p) = program(text) else { continue };
        let old_value = if transition { old } else { None };
        let field = match rule.get("fieldPath").and_then(Value::as_str) {
            Some(fp) if !fp.is_empty() => format!("{path}{fp}"),
            _ => path.to_string(),
        };
        match evaluate(&p, v, old_value) {
            Outcome::Pass => {}
            Outcome::Fail => {
                let message = message_of(rule, text, v, old_value);
                let (reason, message) = match rule.get("reason").and_then(Value::as_str) {
                    Some("FieldValueForbidden") => {
                        ("FieldValueForbidden", format!("Forbidden: {message}"))
                    }
                    Some("FieldValueRequired") => {
                        ("FieldValueRequired", format!("Required value: {message}"))
                    }
                    Some("FieldValueDuplicate") => (
                        "FieldValueDuplicate",
                        format!("Duplicate value: \"{type_name}\""),
                    ),
                    _ => (
                        "FieldValueInvalid",
                        format!("Invalid value: \"{type_name}\": {message}"),
                    ),
                };
                out.push(Cause {
                    reason: reason.into(),
                    message,
                    field,
                });
            }
            Outcome::Error(e) => out.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: format!("Invalid value: \"{type_name}\": {e} evaluating rule: {text}"),
                field,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn causes(schema: Value, v: Value, old: Option<Value>) -> Vec<String> {
        let mut out = Vec::new();
        check(&schema, &v, old.as_ref(), "spec", &mut out);
        out.into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn rules_messages_and_transitions() {
        let schema = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "self.provider == 'aws' || !has(self.sts)",
             "message": "STS only for aws"},
            {"rule": "self.replicas <= 3"},
            {"rule": "self.name == oldSelf.name", "message": "name is immutable",
             "fieldPath": ".name"},
            {"rule": "self.replicas < 2", "reason": "FieldValueForbidden",
             "messageExpression": "'too many: ' + string(self.replicas)"},
        ]});
        assert!(
            causes(
                schema.clone(),
                json!({"provider": "aws", "sts": {}, "replicas": 1, "name": "a"}),
                None
            )
            .iter()
            .all(|c| !c.contains("STS") && !c.contains("failed rule"))
        );
        let got = causes(
            schema.clone(),
            json!({"provider": "gcp", "sts": {}, "replicas": 5, "name": "b"}),
            Some(json!({"name": "a"})),
        );
        assert!(
            got.contains(&"spec: Invalid value: \"object\": STS only for aws".to_string()),
            "{got:?}"
        );
        assert!(
            got.contains(
                &"spec: Invalid value: \"object\": failed rule: self.replicas <= 3".to_string()
            ),
            "{got:?}"
        );
        assert!(
            got.contains(&"spec: Forbidden: too many: 5".to_string()),
            "{got:?}"
        );
        assert!(
            got.contains(&"spec.name: Invalid value: \"object\": name is immutable".to_string()),
            "{got:?}"
        );
        // Without an old value the transition rule does not run.
        let got = causes(
            schema,
            json!({"provider": "aws", "replicas": 1, "name": "b"}),
            None,
        );
        assert!(!got.iter().any(|c| c.contains("immutable")), "{got:?}");
        assert!(uses_old_self("oldSelf == self") && !uses_old_self("self.oldSelfish"));
    }
}
