//! The stores: how each file format holds a sops tree and its metadata.

pub mod dotenv;
pub mod ini;
pub mod json;
mod yaml_emit;
mod yaml_load;

use crate::tree::{Branch, Value, format_float_f};

/// Reading or writing one format failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// The input does not parse in its format.
    #[error("{0}")]
    Parse(String),
    /// The tree cannot be written in the output format.
    #[error("{0}")]
    Emit(String),
}

/// Reads YAML documents.
pub fn load_yaml(text: &[u8]) -> Result<Vec<Branch>, StoreError> {
    yaml_load::load(text)
}

/// Writes YAML documents.
pub fn emit_yaml(branches: &[Branch]) -> Result<Vec<u8>, StoreError> {
    yaml_emit::emit(branches)
}

/// sops' `ValToString`: how dotenv and INI write a value that is not a string.
pub(crate) fn value_to_string(v: &Value) -> String {
    match v {
        Value::Str(s) | Value::Time(s) => s.clone(),
        Value::Float(f) => {
            let g = crate::tree::format_float_g(*f).to_uppercase();
            if !g.contains('.') && !g.contains('E') {
                format!("{}.0", format_float_f(*f))
            } else {
                g.replace("+INF", "+Inf").replace("-INF", "-Inf")
            }
        }
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Null => "<nil>".into(),
        Value::Bytes(b) => format!("{b:?}"),
        Value::Comment(c) => c.text.clone(),
        Value::Branch(_) | Value::List(_) => String::new(),
    }
}
