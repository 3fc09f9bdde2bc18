//! CEL expressions as Flux evaluates them (fluxcd/pkg `runtime/cel`): the standard library
//! with optional values, cel-go's string and encoder extensions, and the variables of an
//! activation given as JSON. Flux's error texts.

use serde_json::{Map, Value};
use tidegate_core::cel::Program;

/// A parsed expression.
pub struct Expression {
    source: String,
    program: Program,
}

impl std::fmt::Debug for Expression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Expression").field(&self.source).finish()
    }
}

impl Expression {
    /// Parses `expr`: `failed to parse the CEL expression '<expr>': <issues>` when it is not
    /// valid CEL.
    pub fn parse(expr: &str) -> Result<Expression, String> {
        let program = tidegate_core::cel::env()
            .compile(expr)
            .map_err(|e| format!("failed to parse the CEL expression '{expr}': {e}"))?;
        Ok(Expression {
            source: expr.to_string(),
            program,
        })
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates with each entry of `variables` as a variable (an object's top-level fields,
    /// or `self` and `dep`), expecting a boolean.
    pub fn evaluate_bool(&self, variables: &Map<String, Value>) -> Result<bool, String> {
        match self.execute(variables)? {
            tidegate_core::cel::Value::Bool(b) => Ok(b),
            _ => Err(format!(
                "failed to evaluate CEL expression as boolean: '{}'",
                self.source
            )),
        }
    }

    /// Evaluates as [`Expression::evaluate_bool`] does, expecting a string.
    pub fn evaluate_string(&self, variables: &Map<String, Value>) -> Result<String, String> {
        match self.execute(variables)? {
            tidegate_core::cel::Value::String(s) => Ok(s.to_string()),
            _ => Err(format!(
                "failed to evaluate CEL expression as string: '{}'",
                self.source
            )),
        }
    }

    /// Evaluates as [`Expression::evaluate_bool`] does, giving the result as JSON (what Go's
    /// `Evaluate` hands back as a native value); a result JSON cannot hold is an error.
    pub fn evaluate_json(&self, variables: &Map<String, Value>) -> Result<Value, String> {
        let result = self.execute(variables)?;
        result.json().map_err(|e| {
            format!(
                "failed to evaluate the CEL expression '{}': {e}",
                self.source
            )
        })
    }

    fn execute(&self, variables: &Map<String, Value>) -> Result<tidegate_core::cel::Value, String> {
        let failed = |e: &dyn std::fmt::Display| {
            format!(
                "failed to evaluate the CEL expression '{}': {e}",
                self.source
            )
        };
        let mut ctx = tidegate_core::cel::context();
        for (k, v) in variables {
            ctx.add_variable(k.clone(), v.clone())
                .map_err(|e| failed(&e))?;
        }
        self.program.execute(&ctx).map_err(|e| failed(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eval(expr: &str, vars: Value) -> Result<bool, String> {
        Expression::parse(expr)?.evaluate_bool(vars.as_object().unwrap())
    }

    #[test]
    fn flux_style_expressions() {
        let obj = json!({
            "metadata": {"generation": 2},
            "status": {"phase": "Running", "replicas": 3,
                       "conditions": [{"type": "Ready", "status": "True"}]}
        });
        for expr in [
            "status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')",
            "has(status.phase) && status.phase.lowerAscii() == 'running'",
            "status.?missing.orValue('x') == 'x'",
            "status.replicas > 2.5 && status.replicas == 3u",
            "'a,b'.split(',').size() == 2 && base64.encode(b'a') == 'YQ=='",
            "status.phase in ['Running', 'Done'] && !has(status.foo)",
        ] {
            assert_eq!(eval(expr, obj.clone()), Ok(true), "{expr}");
        }
        assert_eq!(eval("status.phase == 'Failed'", obj.clone()), Ok(false));
        assert_eq!(
            eval("status.phase", obj.clone()),
            Err("failed to evaluate CEL expression as boolean: 'status.phase'".into())
        );
        let missing = eval("status.missing == 1", obj).unwrap_err();
        assert!(
            missing.starts_with("failed to evaluate the CEL expression 'status.missing == 1': "),
            "{missing}"
        );
        let bad = Expression::parse("status.x == (").unwrap_err();
        assert!(
            bad.starts_with(
                "failed to parse the CEL expression 'status.x == (': ERROR: <input>:1:"
            ),
            "{bad}"
        );
    }
}
