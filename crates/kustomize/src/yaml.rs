//! Reading YAML streams into JSON values; writing them back as `kustomize build` prints them is
//! core's go-yaml v2 emitter, re-exported here.

use serde_json::Value;

pub use tidegate_core::yaml::gov2::{go_json_number, key_order, to_stream, to_yaml};
use tidegate_core::yaml::{Duplicates, ReadOptions, Resolver, StreamReader};

use crate::error::{Error, ErrorKind, Result};

/// One document of a YAML stream and the line it starts on.
#[derive(Debug, Clone)]
pub struct Document {
    /// The document's content.
    pub value: Value,
    /// 1-based line of the document's first line.
    pub line: usize,
}

/// Which of kustomize's readers a text goes through; they type plain scalars differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Resources and strategic-merge patches, read by kyaml (go-yaml v3): `0755` is 493,
    /// `2001-12-14` a timestamp, annotation values keep the text written.
    Objects,
    /// Strategic merge patches: as `Objects`, but a plain null annotation value stays null (it
    /// removes the annotation).
    Patches,
    /// Kustomization files and JSON 6902 patches, read by sigs.k8s.io/yaml (go-yaml v2, YAML
    /// 1.1): `0640` is 416, `yes` and `on` are true.
    Yaml11,
}

impl Dialect {
    fn options(self) -> ReadOptions {
        let mut o = ReadOptions::new(Duplicates::Refuse);
        match self {
            Dialect::Objects | Dialect::Patches => {
                o.resolver = Resolver::GoV3;
                o.annotations_as_text = true;
                o.annotation_nulls = self == Dialect::Patches;
                o.go_folded_round_trip = true;
            }
            Dialect::Yaml11 => {
                // Go's YAML-to-JSON keeps the last of repeated keys.
                o.duplicates = Duplicates::LastWins;
                o.resolver = Resolver::GoV2;
            }
        }
        o
    }
}

/// Parses every non-empty document of a stream of Kubernetes objects (resources, strategic
/// merge patches). `file` names the file in errors.
pub fn parse_stream(text: &str, file: &str) -> Result<Vec<Document>> {
    parse_stream_as(text, file, Dialect::Objects)
}

/// Parses every non-empty document of a YAML stream read as `dialect`.
pub fn parse_stream_as(text: &str, file: &str, dialect: Dialect) -> Result<Vec<Document>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    check_nesting(text, file)?;
    let starts = document_starts(text);
    let mut out = Vec::new();
    let reader = StreamReader::new(text, dialect.options());
    for (i, doc) in yaml_serde::Deserializer::from_str(text).enumerate() {
        // Duplicate keys are refused (kustomize refuses them when it writes the resource out)
        // and alias expansion is bounded.
        let (value, _) = reader.read(doc).map_err(|e| yaml_error(&e, file))?;
        if !value.is_null() {
            out.push(Document {
                value,
                line: starts.get(i).copied().unwrap_or(1),
            });
        }
    }
    Ok(out)
}

/// Parses a text holding one YAML document, read as `dialect`.
pub fn parse_one_as(text: &str, file: &str, dialect: Dialect) -> Result<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    check_nesting(text, file)?;
    StreamReader::new(text, dialect.options())
        .read(yaml_serde::Deserializer::from_str(text))
        .map(|(v, _)| v)
        .map_err(|e| yaml_error(&e, file))
}

/// Parses one YAML document (a kustomization file, a patch) into a type, naming the file and
/// line on error.
pub fn parse_as<T: serde::de::DeserializeOwned>(text: &str, file: &str) -> Result<T> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    tidegate_core::yaml::check_aliasing(text)
        .map_err(|message| Error::in_file(ErrorKind::InvalidYaml, file, message))?;
    yaml_serde::from_str(text).map_err(|e| yaml_error(&e, file))
}

/// Refuses flow collections nested past the reader's limit before the parser spends time on
/// them (see `tidegate_core::yaml::check_nesting`).
fn check_nesting(text: &str, file: &str) -> Result<()> {
    tidegate_core::yaml::check_nesting(text).map_err(|e| {
        Error::in_file(ErrorKind::InvalidYaml, file, e.to_string()).at_line(Some(e.line))
    })
}

fn yaml_error(e: &yaml_serde::Error, file: &str) -> Error {
    let line = e.location().map(|l| l.line());
    let mut message = e.to_string();
    // The parser appends "at line L column C"; the line is reported separately.
    if let Some(at) = message.find(" at line ") {
        message.truncate(at);
    }
    let kind = if message.starts_with("unknown field") {
        ErrorKind::UnknownField
    } else {
        ErrorKind::InvalidYaml
    };
    Error::in_file(kind, file, message).at_line(line)
}

/// The 1-based first line of each document: after each `---` marker line.
fn document_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut seen_content = false;
    for (i, line) in text.lines().enumerate() {
        let is_marker = line == "---" || line.starts_with("--- ") || line.starts_with("---\t");
        if is_marker {
            if (seen_content || !starts.is_empty()) && starts.is_empty() {
                starts.push(1);
            }
            starts.push(i + 2);
            seen_content = false;
            continue;
        }
        let t = line.trim();
        if !t.is_empty() && !t.starts_with('#') {
            seen_content = true;
        }
    }
    if starts.is_empty() {
        starts.push(1);
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_file_and_line_of_bad_yaml() {
        let err = parse_stream("a: 1\n---\nb: [\n", "x.yaml").expect_err("invalid");
        assert_eq!(err.file.as_deref(), Some("x.yaml"));
        assert!(err.line.is_some(), "{err}");
    }

    #[test]
    fn document_lines() {
        let docs = parse_stream("# c\na: 1\n---\nb: 2\n---\n\nc: 3\n", "f").expect("parses");
        let lines: Vec<usize> = docs.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![1, 4, 6]);
    }
}
