//! Post-build variable substitution, as Flux's kustomize-controller does it after the build:
//! each object's YAML is expanded with [`crate::envsubst`] and parsed again (so a substituted
//! `"3"` in `replicas: ${n}` becomes a number, as in Flux).

use std::collections::BTreeMap;

use serde_json::Value;
use tidegate_core::ObjectRef;

use crate::envsubst::{EnvsubstError, expand};

/// The label or annotation (value `disabled`) that keeps an object out of substitution.
pub const SUBSTITUTE: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// What Flux's variable names must look like.
pub const VAR_NAME_PATTERN: &str = "^[_[:alpha:]][_[:alpha:][:digit:]]*$";

/// How to substitute.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// An undefined variable without a default is an error (Flux's default since v1.9).
    pub strict: bool,
    /// Substitute even when no variable is defined (`substituteStrategy: Always`); otherwise
    /// an empty variable set leaves the objects untouched (`WithVariables`).
    pub always: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            strict: true,
            always: false,
        }
    }
}

/// Why substitution failed; the message names the object.
#[derive(Debug, thiserror::Error)]
pub enum PostBuildError {
    /// A variable name Flux refuses.
    #[error("'{0}' var name is invalid, must match '{VAR_NAME_PATTERN}'")]
    VarName(String),
    /// Expansion failed for one object.
    #[error(
        "post build failed for '{object}': envsubst error: variable substitution failed: {source}"
    )]
    Substitution {
        /// `Kind/namespace/name`.
        object: String,
        /// The expansion error.
        source: EnvsubstError,
    },
    /// The expanded text is no longer one valid object.
    #[error("post build failed for '{object}': envsubst error: YAMLToJSON: {message}")]
    Yaml {
        /// `Kind/namespace/name`.
        object: String,
        /// The parser's message.
        message: String,
    },
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn disabled(obj: &Value) -> bool {
    ["labels", "annotations"].iter().any(|m| {
        obj.get("metadata")
            .and_then(|md| md.get(*m))
            .and_then(|x| x.get(SUBSTITUTE))
            .and_then(Value::as_str)
            == Some("disabled")
    })
}

/// Substitutes `vars` into every object not opted out. Values lose their newlines (Flux).
/// Nothing is changed unless every object succeeds.
pub fn substitute(
    objects: &mut [Value],
    vars: &BTreeMap<String, String>,
    options: Options,
) -> Result<(), PostBuildError> {
    if vars.is_empty() && !options.always {
        return Ok(());
    }
    if let Some(bad) = vars.keys().find(|k| !valid_name(k)) {
        return Err(PostBuildError::VarName(bad.clone()));
    }
    let vars: BTreeMap<&str, String> = vars
        .iter()
        .map(|(k, v)| (k.as_str(), v.replace('\n', "")))
        .collect();
    let lookup = |name: &str| vars.get(name).cloned();
    let mut replaced = Vec::with_capacity(objects.len());
    for (i, obj) in objects.iter().enumerate() {
        if disabled(obj) {
            continue;
        }
        let object = ObjectRef::from_object(obj).to_string();
        // Flux writes the object as kustomize does, expands, and reads it back with
        // sigs.k8s.io/yaml (YAML 1.1: a substituted `yes` or `0755` is typed).
        let text = crate::yaml::to_yaml(obj);
        let expanded = expand(&text, &lookup, options.strict).map_err(|source| {
            PostBuildError::Substitution {
                object: object.clone(),
                source,
            }
        })?;
        if expanded != text {
            let value = crate::yaml::parse_one_as(&expanded, "", crate::yaml::Dialect::Yaml11)
                .map_err(|e| PostBuildError::Yaml {
                    object,
                    message: e.message,
                })?;
            replaced.push((i, value));
        }
    }
    for (i, value) in replaced {
        objects[i] = value;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn substitutes_retypes_and_respects_opt_out() {
        let mut objs = vec![
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web-${env}", "namespace": "apps"},
                   "spec": {"replicas": "${replicas}", "template": {"metadata": {"annotations": {"escaped": "$${keep}"}}}}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "raw", "annotations": {SUBSTITUTE: "disabled"}},
                   "data": {"x": "${undefined}"}}),
        ];
        substitute(
            &mut objs,
            &vars(&[("env", "prod"), ("replicas", "3\n")]),
            Options::default(),
        )
        .unwrap();
        assert_eq!(objs[0]["metadata"]["name"], "web-prod");
        // YAML re-types the substituted value, as Flux's YAMLToJSON does.
        assert_eq!(objs[0]["spec"]["replicas"], json!(3));
        assert_eq!(
            objs[0]["spec"]["template"]["metadata"]["annotations"]["escaped"],
            "${keep}"
        );
        assert_eq!(objs[1]["data"]["x"], "${undefined}");
    }

    /// Flux reads the substituted text with sigs.k8s.io/yaml (go-yaml v2, YAML 1.1): a
    /// substituted `yes` is a boolean and `0755` an octal number; text that was already a
    /// string before substitution stays one (it is written quoted).
    #[test]
    fn substituted_text_is_read_with_yaml_1_1_rules() {
        let mut objs = vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "annotations": {"flag": "${flag}"}},
            "data": {"flag": "${flag}", "mode": "${mode}", "kept": "yes", "octal": "0755", "x": "${x}"}})];
        substitute(
            &mut objs,
            &vars(&[("flag", "yes"), ("mode", "0755"), ("x", "1")]),
            Options::default(),
        )
        .unwrap();
        assert_eq!(objs[0]["data"]["flag"], json!(true));
        assert_eq!(objs[0]["data"]["mode"], json!(493));
        assert_eq!(objs[0]["data"]["kept"], "yes");
        assert_eq!(objs[0]["data"]["octal"], "0755");
        assert_eq!(objs[0]["metadata"]["annotations"]["flag"], json!(true));
    }

    #[test]
    fn strict_errors_name_the_object_and_change_nothing() {
        let original = vec![
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}, "data": {"x": "${env}"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "ns"}, "data": {"x": "${missing}"}}),
        ];
        let mut objs = original.clone();
        let err = substitute(&mut objs, &vars(&[("env", "prod")]), Options::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "post build failed for 'ConfigMap/ns/b': envsubst error: variable substitution failed: variable not set (strict mode): \"missing\""
        );
        assert_eq!(objs, original, "a failed substitution changes nothing");
        // Not strict: undefined is empty. No variables and WithVariables: untouched.
        substitute(
            &mut objs,
            &vars(&[("env", "prod")]),
            Options {
                strict: false,
                always: false,
            },
        )
        .unwrap();
        assert_eq!(objs[1]["data"]["x"], Value::Null);
        let mut untouched = original.clone();
        substitute(&mut untouched, &BTreeMap::new(), Options::default()).unwrap();
        assert_eq!(untouched, original);
        let err =
            substitute(&mut untouched, &vars(&[("1bad", "x")]), Options::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("'1bad' var name is invalid, must match '{VAR_NAME_PATTERN}'")
        );
    }
}
