//! YAML streams: many documents separated by `---`, as kubectl and kustomize read them.

use serde::Deserialize;
use serde_json::Value;

/// A YAML stream could not be read.
#[derive(Debug, thiserror::Error)]
#[error("invalid YAML in document {document}: {message}")]
pub struct YamlError {
    /// 1-based index of the document that failed.
    pub document: usize,
    /// The parser's message, which names the line and column.
    pub message: String,
}

/// Parses every document of a YAML stream into JSON values, skipping empty documents.
pub fn parse_stream(text: &str) -> Result<Vec<Value>, YamlError> {
    let mut out = Vec::new();
    for (i, doc) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(doc).map_err(|e| YamlError {
            document: i + 1,
            message: e.to_string(),
        })?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

/// Parses a single YAML (or JSON) document.
pub fn parse_one(text: &str) -> Result<Value, YamlError> {
    yaml_serde::from_str(text).map_err(|e| YamlError {
        document: 1,
        message: e.to_string(),
    })
}

/// Renders a value as one YAML document.
pub fn to_yaml(value: &Value) -> String {
    yaml_serde::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_streams_and_skips_empty_documents() {
        let docs = parse_stream("a: 1\n---\n---\nb: [x]\n").expect("parses");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["b"][0], "x");
    }

    #[test]
    fn names_the_bad_document() {
        let err = parse_stream("a: 1\n---\nb: [\n").expect_err("must fail");
        assert_eq!(err.document, 2);
        assert!(err.to_string().contains("document 2"), "{err}");
    }
}
