//! Helpers shared by the data-driven tests: JSON test data read as the Go values Helm's
//! tests hold.

// Each test binary uses a part of these.
#![allow(dead_code)]

use std::rc::Rc;

use tidegate_helm::template::Value;
use tidegate_helm::template::value::{IntKind, ListKind, MapKind};
use tidegate_helm::values::{Values, new_map};

/// JSON as a Go literal holds it: integers of kind `ints`, other numbers `float64`.
pub fn go_value(v: &serde_json::Value, ints: IntKind) -> Value {
    match v {
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) if !n.is_f64() => Value::Int(i, ints),
            _ => Value::Float(n.as_f64().unwrap_or(0.0)),
        },
        serde_json::Value::Array(items) => Value::List(
            Rc::new(items.iter().map(|i| go_value(i, ints)).collect()),
            ListKind::Any,
        ),
        serde_json::Value::Object(m) => Value::Map(go_table(m, ints), MapKind::Any),
        other => Value::from_json(other),
    }
}

/// A JSON object as a values table (see [`go_value`]).
pub fn go_table(m: &serde_json::Map<String, serde_json::Value>, ints: IntKind) -> Values {
    let t = new_map();
    for (k, v) in m {
        t.borrow_mut().insert(k.clone(), go_value(v, ints));
    }
    t
}

/// The helm binary a differential test runs: `$<env>`, else
/// `$TIDEGATE_TOOLS/helm-<version>/helm` (default `~/.cache/tidegate-tools`, where
/// `scripts/install-test-tools.sh` puts it).
pub fn helm_binary(version: &str, env: &str) -> std::path::PathBuf {
    use std::path::PathBuf;
    if let Ok(p) = std::env::var(env) {
        return PathBuf::from(p);
    }
    let tools = std::env::var("TIDEGATE_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/tidegate-tools")
        });
    tools.join(format!("helm-{version}/helm"))
}
