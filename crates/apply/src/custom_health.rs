//! Custom health checks (`healthCheckExprs` of Kustomizations and HelmReleases) as Flux's
//! `runtime/cel` status evaluator runs them (RFC 0009): for the objects of a group and kind
//! (or of a whole group), a stale `status.observedGeneration` is InProgress; then the
//! `inProgress`, `failed` and `current` expressions, in that order, over the object's
//! top-level fields; none true is InProgress.

use std::collections::HashMap;

use serde_json::Value;
use tidegate_core::object_ref::split_api_version;

use crate::cel::Expression;
use crate::health::Status;

/// One `healthCheckExprs` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HealthCheckExpr {
    pub api_version: String,
    /// Empty: every kind of the group.
    pub kind: String,
    pub current: String,
    pub failed: String,
    pub in_progress: String,
}

struct Evaluator {
    current: Expression,
    failed: Option<Expression>,
    in_progress: Option<Expression>,
}

/// Compiled custom health checks.
#[derive(Default)]
pub struct CustomHealth {
    /// Keyed by (group, kind); an empty kind covers the group.
    evaluators: HashMap<(String, String), Evaluator>,
}

fn group_kind(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    }
}

fn optional(expr: &str, name: &str) -> Result<Option<Expression>, String> {
    if expr.is_empty() {
        return Ok(None);
    }
    Expression::parse(expr)
        .map(Some)
        .map_err(|e| format!("failed to parse the expression {name}: {e}"))
}

impl std::fmt::Debug for CustomHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut keys: Vec<String> = self
            .evaluators
            .keys()
            .map(|(g, k)| group_kind(g, k))
            .collect();
        keys.sort();
        f.debug_tuple("CustomHealth").field(&keys).finish()
    }
}

impl CustomHealth {
    /// Compiles the checks with Flux's messages: a repeated group and kind, a missing
    /// `current`, an expression that does not parse.
    pub fn new(checks: &[HealthCheckExpr]) -> Result<CustomHealth, String> {
        let mut evaluators = HashMap::new();
        for (i, hc) in checks.iter().enumerate() {
            let (group, _) = split_api_version(&hc.api_version);
            let key = (group.to_string(), hc.kind.clone());
            if evaluators.contains_key(&key) {
                return Err(format!(
                    "duplicate custom health check for GroupKind {} at healthchecks[{i}]",
                    group_kind(group, &hc.kind)
                ));
            }
            let compiled = (|| {
                if hc.current.is_empty() {
                    return Err("expression Current not specified".to_string());
                }
                let current = Expression::parse(&hc.current)
                    .map_err(|e| format!("failed to parse the expression Current: {e}"))?;
                Ok(Evaluator {
                    current,
                    failed: optional(&hc.failed, "Failed")?,
                    in_progress: optional(&hc.in_progress, "InProgress")?,
                })
            })()
            .map_err(|e| {
                format!("failed to create custom status evaluator for healthchecks[{i}]: {e}")
            })?;
            evaluators.insert(key, compiled);
        }
        Ok(CustomHealth { evaluators })
    }

    /// Whether there are no checks.
    pub fn is_empty(&self) -> bool {
        self.evaluators.is_empty()
    }

    fn evaluator(&self, group: &str, kind: &str) -> Option<&Evaluator> {
        self.evaluators
            .get(&(group.to_string(), kind.to_string()))
            .or_else(|| self.evaluators.get(&(group.to_string(), String::new())))
    }

    /// Whether objects of `group` and `kind` have a custom check.
    pub fn supports(&self, group: &str, kind: &str) -> bool {
        self.evaluator(group, kind).is_some()
    }

    /// The status of `obj` by its custom check; `None` without one. An expression that fails
    /// to evaluate is an error.
    pub fn evaluate(&self, obj: &Value) -> Option<Result<Status, String>> {
        let (group, _) = split_api_version(obj["apiVersion"].as_str().unwrap_or_default());
        let e = self.evaluator(group, obj["kind"].as_str().unwrap_or_default())?;
        let observed = obj
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64);
        let generation = obj.pointer("/metadata/generation").and_then(Value::as_i64);
        if let (Some(o), Some(g)) = (observed, generation)
            && o != g
        {
            return Some(Ok(Status::InProgress));
        }
        let Some(vars) = obj.as_object() else {
            return Some(Ok(Status::InProgress));
        };
        for (expr, status) in [
            (e.in_progress.as_ref(), Status::InProgress),
            (e.failed.as_ref(), Status::Failed),
            (Some(&e.current), Status::Current),
        ] {
            let Some(expr) = expr else { continue };
            match expr.evaluate_bool(vars) {
                Ok(true) => return Some(Ok(status)),
                Ok(false) => {}
                Err(err) => return Some(Err(err)),
            }
        }
        Some(Ok(Status::InProgress))
    }

    /// The status of `obj`: its custom check when it has one (an evaluation error is
    /// `Unknown`, logged), else kstatus.
    pub fn status_of(custom: Option<&CustomHealth>, obj: &Value) -> Status {
        match custom.and_then(|c| c.evaluate(obj)) {
            Some(Ok(s)) => s,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "custom health check failed");
                Status::Unknown
            }
            None => crate::health::compute(obj).status,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sealed_secret(observed: i64, synced: &str) -> Value {
        json!({
            "apiVersion": "bitnami.com/v1alpha1", "kind": "SealedSecret",
            "metadata": {"name": "s", "generation": 2},
            "status": {"observedGeneration": observed,
                       "conditions": [{"type": "Synced", "status": synced}]}
        })
    }

    fn checks() -> Vec<HealthCheckExpr> {
        vec![HealthCheckExpr {
            api_version: "bitnami.com/v1alpha1".into(),
            kind: "SealedSecret".into(),
            current: "status.conditions.filter(e, e.type == 'Synced').all(e, e.status == 'True')"
                .into(),
            failed: "status.conditions.filter(e, e.type == 'Synced').all(e, e.status == 'False')"
                .into(),
            in_progress: String::new(),
        }]
    }

    #[test]
    fn rfc_0009_order() {
        let c = CustomHealth::new(&checks()).unwrap();
        assert!(c.supports("bitnami.com", "SealedSecret"));
        assert!(!c.supports("bitnami.com", "Other"));
        assert_eq!(
            c.evaluate(&sealed_secret(2, "True")),
            Some(Ok(Status::Current))
        );
        assert_eq!(
            c.evaluate(&sealed_secret(2, "False")),
            Some(Ok(Status::Failed))
        );
        assert_eq!(
            c.evaluate(&sealed_secret(1, "True")),
            Some(Ok(Status::InProgress)),
            "stale observedGeneration"
        );
        assert_eq!(
            c.evaluate(&sealed_secret(2, "Unknown")),
            Some(Ok(Status::InProgress))
        );
        assert!(
            c.evaluate(&json!({"apiVersion": "v1", "kind": "Pod"}))
                .is_none()
        );
        // A group-wide check.
        let g = CustomHealth::new(&[HealthCheckExpr {
            api_version: "bitnami.com/v1alpha1".into(),
            current: "status.missing".into(),
            ..Default::default()
        }])
        .unwrap();
        assert!(g.supports("bitnami.com", "Anything"));
        assert!(g.evaluate(&sealed_secret(2, "True")).unwrap().is_err());
        assert_eq!(
            CustomHealth::status_of(Some(&g), &sealed_secret(2, "True")),
            Status::Unknown
        );
    }

    #[test]
    fn flux_messages_for_bad_checks() {
        let mut dup = checks();
        dup.push(dup[0].clone());
        assert_eq!(
            CustomHealth::new(&dup).err().unwrap(),
            "duplicate custom health check for GroupKind SealedSecret.bitnami.com at healthchecks[1]"
        );
        let missing = CustomHealth::new(&[HealthCheckExpr {
            api_version: "v1".into(),
            kind: "Pod".into(),
            ..Default::default()
        }]);
        assert_eq!(
            missing.err().unwrap(),
            "failed to create custom status evaluator for healthchecks[0]: expression Current not specified"
        );
        let bad = CustomHealth::new(&[HealthCheckExpr {
            api_version: "v1".into(),
            kind: "Pod".into(),
            current: "true".into(),
            failed: "status.(".into(),
            ..Default::default()
        }]);
        assert!(
            bad.err().unwrap().starts_with(
                "failed to create custom status evaluator for healthchecks[0]: failed to parse the expression Failed: failed to parse the CEL expression 'status.(': "
            )
        );
    }
}
