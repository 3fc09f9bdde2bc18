//! ImageUpdateAutomation's `Setters` strategy: YAML scalars marked with a line comment
//! `# {"$imagepolicy": "<namespace>:<name>[:tag|:name|:digest]"}` get the image an
//! ImagePolicy selected, as Flux's image-automation-controller sets them through kyaml.
//!
//! Which files and scalars are touched follows Flux: files named `*.yaml`, `*.yml` or
//! `Kustomization` whose text holds `"$imagepolicy"`; every scalar that is a mapping value, a
//! sequence element or a document, whose line comment (after the `#` signs) is a JSON object of
//! strings naming a known setter (the long form `{"$ref":
//! "#/definitions/io.k8s.cli.setters.<setter>"}` too); files that do not parse are skipped.
//!
//! **Departure, on purpose:** kyaml re-serialises every changed file (indentation normalised,
//! blank lines dropped); here only the value's characters change and everything else in the
//! file stays byte for byte. A file already in kyaml's layout (Flux's golden trees) comes out
//! the same either way.

use std::collections::BTreeMap;

use saphyr_parser::{Event, Parser, ScalarStyle};
use tidegate_core::yaml::{Resolver, resolve_plain};

/// The token a file must contain to be read at all.
pub const TOKEN: &str = "\"$imagepolicy\"";

/// The prefix of setter definitions in kyaml's long form.
const REF_PREFIX: &str = "#/definitions/io.k8s.cli.setters.";

/// The image an ImagePolicy selected (`status.latestRef`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LatestRef {
    /// The image name (`ghcr.io/org/app`).
    pub name: String,
    /// The tag.
    pub tag: String,
    /// The digest, when the policy reflects digests.
    pub digest: String,
}

impl LatestRef {
    /// `name[:tag][@digest]`, as Flux's `ImageRef.String()`.
    pub fn image(&self) -> String {
        let mut s = self.name.clone();
        if !self.tag.is_empty() {
            s.push(':');
            s.push_str(&self.tag);
        }
        if !self.digest.is_empty() {
            s.push('@');
            s.push_str(&self.digest);
        }
        s
    }
}

/// The values every setter gives: four per policy (`ns:name`, `ns:name:tag`, `ns:name:name`,
/// `ns:name:digest`).
#[derive(Debug, Clone, Default)]
pub struct Setters {
    values: BTreeMap<String, String>,
}

impl Setters {
    /// No setters.
    pub fn new() -> Setters {
        Setters::default()
    }

    /// Adds the four setters of the policy `namespace/name`.
    pub fn add_policy(&mut self, namespace: &str, name: &str, latest: &LatestRef) {
        let base = format!("{namespace}:{name}");
        self.values
            .insert(format!("{base}:tag"), latest.tag.clone());
        self.values
            .insert(format!("{base}:name"), latest.name.clone());
        self.values
            .insert(format!("{base}:digest"), latest.digest.clone());
        self.values.insert(base, latest.image());
    }

    /// The value of a setter.
    pub fn get(&self, setter: &str) -> Option<&str> {
        self.values.get(setter).map(String::as_str)
    }

    /// Whether there are no setters.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// What identifies the object a change was made in (kyaml's `ResourceIdentifier`); a
/// kustomization file has no name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ObjectIdentifier {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
}

/// One value changed by a setter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Change {
    /// The value before.
    pub old_value: String,
    /// The value written.
    pub new_value: String,
    /// The setter's name (`ns:name:tag`).
    pub setter: String,
}

/// The changes made in one file, per object, in the order the objects appear.
pub type ObjectChanges = Vec<(ObjectIdentifier, Vec<Change>)>;

/// A file after its setters ran.
#[derive(Debug, Clone)]
pub struct UpdatedFile {
    /// The new text.
    pub text: String,
    /// What changed, per object.
    pub changes: ObjectChanges,
}

/// Whether a file of this name is considered (`*.yaml`, `*.yml`, `Kustomization`).
pub fn is_candidate(file_name: &str) -> bool {
    file_name.ends_with(".yaml") || file_name.ends_with(".yml") || file_name == "Kustomization"
}

struct Scalar {
    start: usize,
    end: usize,
    value: String,
    style: ScalarStyle,
    /// A mapping value, a sequence element or the document itself (keys are not set).
    settable: bool,
}

enum Frame {
    /// A mapping; `key` is the pending key (`None` when the next scalar is a key).
    Map {
        key: Option<String>,
        depth_path: Vec<String>,
    },
    Seq,
}

/// Runs the setters over one file's text. `None` when the file has no marker token, does not
/// parse, or nothing in it changes.
pub fn update_text(text: &str, setters: &Setters) -> Option<UpdatedFile> {
    if !text.contains(TOKEN) {
        return None;
    }
    let docs = scan(text)?;
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut changes: ObjectChanges = Vec::new();
    for doc in docs {
        let mut doc_changes = Vec::new();
        for s in doc.scalars.iter().filter(|s| s.settable) {
            let Some(setter) = marker(text, s) else {
                continue;
            };
            let Some(new) = setters.get(&setter) else {
                continue;
            };
            if new == s.value {
                continue;
            }
            edits.push((s.start, s.end, render(new, s.style)));
            doc_changes.push(Change {
                old_value: s.value.clone(),
                new_value: new.to_string(),
                setter,
            });
        }
        if doc_changes.is_empty() {
            continue;
        }
        match changes.iter_mut().find(|(id, _)| *id == doc.id) {
            Some((_, list)) => list.extend(doc_changes),
            None => changes.push((doc.id, doc_changes)),
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|e| e.0);
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (start, end, with) in edits {
        out.push_str(&text[at..start]);
        out.push_str(&with);
        at = end;
    }
    out.push_str(&text[at..]);
    Some(UpdatedFile { text: out, changes })
}

struct Doc {
    scalars: Vec<Scalar>,
    id: ObjectIdentifier,
}

/// Parses every document, collecting scalars with their byte spans and each document's
/// identifier. `None` when the text is not YAML.
fn scan(text: &str) -> Option<Vec<Doc>> {
    // saphyr reports positions in characters; map them to bytes.
    let offsets: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    let byte = |chars: usize| offsets.get(chars).copied();
    let mut docs = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut current: Option<Doc> = None;
    for ev in Parser::new_from_str(text) {
        let (ev, span) = ev.ok()?;
        match ev {
            Event::DocumentStart(_) => {
                stack.clear();
                current = Some(Doc {
                    scalars: Vec::new(),
                    id: ObjectIdentifier::default(),
                });
            }
            Event::DocumentEnd => {
                if let Some(d) = current.take() {
                    docs.push(d);
                }
            }
            Event::MappingStart(..) => {
                let path = child_path(&mut stack);
                stack.push(Frame::Map {
                    key: None,
                    depth_path: path,
                });
            }
            Event::SequenceStart(..) => {
                let _ = child_path(&mut stack);
                stack.push(Frame::Seq);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
            }
            Event::Scalar(value, style, _, _) => {
                let value = value.to_string();
                let (settable, path) = match stack.last_mut() {
                    None => (true, None),
                    Some(Frame::Seq) => (true, None),
                    Some(Frame::Map { key, depth_path }) => match key.take() {
                        None => {
                            *key = Some(value.clone());
                            (false, None)
                        }
                        Some(k) => {
                            let mut p = depth_path.clone();
                            p.push(k);
                            (true, Some(p))
                        }
                    },
                };
                let doc = current.as_mut()?;
                if let Some(p) = path {
                    let p: Vec<&str> = p.iter().map(String::as_str).collect();
                    match p.as_slice() {
                        ["apiVersion"] => doc.id.api_version = value.clone(),
                        ["kind"] => doc.id.kind = value.clone(),
                        ["metadata", "name"] => doc.id.name = value.clone(),
                        ["metadata", "namespace"] => doc.id.namespace = value.clone(),
                        _ => {}
                    }
                }
                if settable {
                    let start = byte(span.start.index())?;
                    // The parser's end of a quoted scalar runs past its closing quote.
                    let end = match style {
                        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                            quoted_end(text, start, style)?
                        }
                        _ => byte(span.end.index())?,
                    };
                    doc.scalars.push(Scalar {
                        start,
                        end,
                        value,
                        style,
                        settable,
                    });
                }
            }
            Event::Alias(_) => {
                // An alias as a value consumes the pending key.
                if let Some(Frame::Map { key, .. }) = stack.last_mut()
                    && key.take().is_none()
                {
                    *key = Some(String::new());
                }
            }
            _ => {}
        }
    }
    Some(docs)
}

/// The byte after the closing quote of the quoted scalar starting at `start`.
fn quoted_end(text: &str, start: usize, style: ScalarStyle) -> Option<usize> {
    let bytes = text.as_bytes();
    let quote = if style == ScalarStyle::SingleQuoted {
        b'\''
    } else {
        b'"'
    };
    if bytes.get(start) != Some(&quote) {
        return None;
    }
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The path of the collection starting now (consuming a pending mapping key), for the
/// identifier fields; collections inside sequences get no path.
fn child_path(stack: &mut [Frame]) -> Vec<String> {
    match stack.last_mut() {
        None => Vec::new(),
        Some(Frame::Seq) => vec!["[]".into()],
        Some(Frame::Map { key, depth_path }) => {
            let mut p = depth_path.clone();
            match key.take() {
                Some(k) => p.push(k),
                // A collection used as a key.
                None => {
                    *key = Some(String::new());
                    p.push("{}".into());
                }
            }
            p
        }
    }
}

/// The setter named by the comment after a scalar on its last line, if any.
fn marker(text: &str, s: &Scalar) -> Option<String> {
    if matches!(s.style, ScalarStyle::Literal | ScalarStyle::Folded) {
        return None;
    }
    let rest = &text[s.end..];
    let line = rest.split('\n').next().unwrap_or_default();
    let line = line.strip_suffix('\r').unwrap_or(line);
    let trimmed = line.trim_start_matches([' ', '\t']);
    if !trimmed.starts_with('#') {
        return None;
    }
    // A plain scalar's comment needs a blank before `#`.
    if trimmed.len() == line.len() && s.style == ScalarStyle::Plain {
        return None;
    }
    setter_of_comment(trimmed.trim_start_matches('#'))
}

/// Reads a comment (without its `#`) as kyaml's field metadata: a JSON object of strings with
/// `$imagepolicy`, or a schema whose `$ref` names a setter definition.
pub fn setter_of_comment(comment: &str) -> Option<String> {
    let parsed: serde_json::Map<String, serde_json::Value> = serde_json::from_str(comment).ok()?;
    if parsed.values().all(|v| v.is_string())
        && let Some(serde_json::Value::String(name)) = parsed.get("$imagepolicy")
        && !name.is_empty()
    {
        return Some(name.clone());
    }
    match parsed.get("$ref") {
        Some(serde_json::Value::String(r)) => r.strip_prefix(REF_PREFIX).map(str::to_string),
        _ => None,
    }
}

/// The new value written in the scalar's style; a plain scalar whose text would read as
/// something other than a string is double-quoted (kyaml's `FormatNonStringStyle`).
fn render(value: &str, style: ScalarStyle) -> String {
    match style {
        ScalarStyle::SingleQuoted => format!("'{}'", value.replace('\'', "''")),
        ScalarStyle::DoubleQuoted => double_quoted(value),
        _ if plain_is_safe(value) => value.to_string(),
        _ => double_quoted(value),
    }
}

fn double_quoted(value: &str) -> String {
    let mut s = String::with_capacity(value.len() + 2);
    s.push('"');
    for c in value.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            c if c.is_control() => s.push_str(&format!("\\u{:04x}", c as u32)),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// Whether `value` can be written plain and still read back as this string, under YAML 1.1
/// (go-yaml v2) and YAML 1.2 (go-yaml v3) alike.
fn plain_is_safe(value: &str) -> bool {
    if value.is_empty()
        || value != value.trim()
        || value.contains(": ")
        || value.contains(" #")
        || value.ends_with(':')
        || value.chars().any(|c| c.is_control())
    {
        return false;
    }
    let first = value.chars().next().unwrap_or(' ');
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        // `-` and `?`/`:` are fine when followed by a non-blank, but a leading indicator is
        // rare in images; quote to be safe.
        return false;
    }
    if resolve_plain(value, Resolver::GoV2).is_some()
        || resolve_plain(value, Resolver::GoV3).is_some()
    {
        return false;
    }
    // The YAML 1.2 core schema (numbers, booleans, null).
    !matches!(
        yaml_serde::from_str::<serde_json::Value>(value),
        Ok(v) if !v.is_string()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setters() -> Setters {
        let mut s = Setters::new();
        s.add_policy(
            "ns",
            "p",
            &LatestRef {
                name: "reg.example/app".into(),
                tag: "1.2".into(),
                digest: String::new(),
            },
        );
        s
    }

    #[test]
    fn numeric_looking_tags_are_quoted_and_quotes_kept() {
        let text = "a: x # {\"$imagepolicy\": \"ns:p:tag\"}\nb: 'x' # {\"$imagepolicy\": \"ns:p:tag\"}\nc: \"x\" # {\"$imagepolicy\": \"ns:p\"}\n";
        let out = update_text(text, &setters()).expect("changed");
        assert_eq!(
            out.text,
            "a: \"1.2\" # {\"$imagepolicy\": \"ns:p:tag\"}\nb: '1.2' # {\"$imagepolicy\": \"ns:p:tag\"}\nc: \"reg.example/app:1.2\" # {\"$imagepolicy\": \"ns:p\"}\n"
        );
        assert_eq!(out.changes.len(), 1);
        assert_eq!(out.changes[0].1.len(), 3);
    }

    #[test]
    fn keys_unknown_setters_and_non_json_comments_are_left() {
        let text = "k: v # {\"$imagepolicy\": \"ns:other\"}\nl: v # \"$imagepolicy\" is mentioned\nm: v #{\"$imagepolicy\": \"ns:p:tag\"}\nn: v#x\n";
        let out = update_text(text, &setters()).expect("changed");
        // `#{` after a blank is a comment.
        assert_eq!(
            out.text,
            "k: v # {\"$imagepolicy\": \"ns:other\"}\nl: v # \"$imagepolicy\" is mentioned\nm: \"1.2\" #{\"$imagepolicy\": \"ns:p:tag\"}\nn: v#x\n"
        );
    }

    #[test]
    fn no_token_or_invalid_yaml_is_skipped() {
        assert!(update_text("a: b # {\"$ref\": \"x\"}\n", &setters()).is_none());
        assert!(update_text("a: [b # {\"$imagepolicy\": \"ns:p\"}\n", &setters()).is_none());
    }

    #[test]
    fn documents_and_identifiers() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  namespace: n\nspec:\n  containers:\n  - image: old # {\"$imagepolicy\": \"ns:p\"}\n---\nkind: Other\nmetadata: {name: b}\nlist:\n- old # {\"$imagepolicy\": \"ns:p:name\"}\n";
        let out = update_text(text, &setters()).expect("changed");
        assert!(out.text.contains("- image: reg.example/app:1.2 # "));
        assert!(out.text.contains("- reg.example/app # "));
        assert_eq!(out.changes.len(), 2);
        assert_eq!(
            out.changes[0].0,
            ObjectIdentifier {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name: "a".into(),
                namespace: "n".into()
            }
        );
        assert_eq!(out.changes[1].0.name, "b");
        assert_eq!(out.changes[1].1[0].old_value, "old");
    }
}
