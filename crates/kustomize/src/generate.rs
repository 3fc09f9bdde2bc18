//! `configMapGenerator` and `secretGenerator`, and the content-hash name suffix.
//!
//! The suffix is kustomize's: SHA-256 over the JSON of `{"data", "kind", "name", ...}` as Go's
//! encoder writes it (sorted keys, HTML characters escaped), shortened to ten hex digits with
//! `0 1 3 a e` replaced by `g h k m t`. kustomize looks the name up under a path that never
//! matches, so `name` is always empty in the hashed text; the suffix depends on content only.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorKind, Result};
use crate::fs::BuildRoot;
use crate::kustomization::{GeneratorArgs, GeneratorOptions};
use crate::resource::{Behavior, ConfiguredBy, Generated, Resource};

/// Which generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneratorKind {
    /// configMapGenerator
    ConfigMap,
    /// secretGenerator
    Secret,
}

/// Builds the object one generator entry describes.
pub fn generate(
    kind: GeneratorKind,
    args: &GeneratorArgs,
    global: Option<&GeneratorOptions>,
    root: &BuildRoot,
    dir: &Path,
    file: &str,
) -> Result<Resource> {
    let what = match kind {
        GeneratorKind::ConfigMap => "configMapGenerator",
        GeneratorKind::Secret => "secretGenerator",
    };
    if args.name.is_empty() {
        return Err(Error::in_file(
            ErrorKind::Invalid,
            file,
            format!("{what}: an entry needs a name"),
        ));
    }
    // kustomize's NewGenerationBehavior: any other word (`add`) is "unspecified", which the
    // accumulator treats as create.
    let behavior = match args.behavior.as_str() {
        "merge" => Behavior::Merge,
        "replace" => Behavior::Replace,
        _ => Behavior::Create,
    };
    let mut pairs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut envs = args.envs.clone();
    if !args.env.is_empty() {
        envs.push(args.env.clone());
    }
    for env in &envs {
        let path = root.resolve(dir, env, file)?;
        let text = root.read_text(&path)?;
        for (k, v) in parse_env(&text) {
            pairs.push((k, v.into_bytes()));
        }
    }
    for lit in &args.literals {
        let Some((k, v)) = lit.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            return Err(Error::in_file(
                ErrorKind::Invalid,
                file,
                format!("{what} {:?}: literal {lit:?} is not key=value", args.name),
            ));
        };
        pairs.push((k.to_string(), unquote(v).as_bytes().to_vec()));
    }
    for f in &args.files {
        let (key, rel) = match f.split_once('=') {
            Some((k, p)) if !k.is_empty() => (k.to_string(), p),
            Some(_) => {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    file,
                    format!("{what} {:?}: file source {f:?} has an empty key", args.name),
                ));
            }
            None => {
                let base = Path::new(f)
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_else(|| f.clone());
                (base, f.as_str())
            }
        };
        let path = root.resolve(dir, rel, file)?;
        if path.is_dir() {
            return Err(Error::in_file(
                ErrorKind::Invalid,
                file,
                format!("{what} {:?}: file source {rel:?} is a directory", args.name),
            ));
        }
        pairs.push((key, root.read(&path)?));
    }
    let mut data: BTreeMap<String, Value> = BTreeMap::new();
    let mut binary: BTreeMap<String, Value> = BTreeMap::new();
    for (k, v) in pairs {
        if data.contains_key(&k) || binary.contains_key(&k) {
            return Err(Error::in_file(
                ErrorKind::Invalid,
                file,
                format!("{what} {:?} illegally repeats the key `{k}`", args.name),
            ));
        }
        match kind {
            GeneratorKind::Secret => {
                data.insert(k, Value::String(b64(&v)));
            }
            GeneratorKind::ConfigMap => match String::from_utf8(v) {
                Ok(s) => {
                    data.insert(k, Value::String(s));
                }
                Err(e) => {
                    binary.insert(k, Value::String(b64(e.as_bytes())));
                }
            },
        }
    }
    let mut meta = Map::new();
    meta.insert("name".into(), Value::String(args.name.clone()));
    if !args.namespace.is_empty() {
        meta.insert("namespace".into(), Value::String(args.namespace.clone()));
    }
    let mut labels = BTreeMap::new();
    let mut annotations = BTreeMap::new();
    let mut disable_hash = false;
    let mut immutable = false;
    for opts in [global, args.options.as_ref()].into_iter().flatten() {
        labels.extend(opts.labels.clone());
        annotations.extend(opts.annotations.clone());
        if let Some(d) = opts.disable_name_suffix_hash {
            disable_hash = d;
        }
        if let Some(i) = opts.immutable {
            immutable = i;
        }
    }
    if !labels.is_empty() {
        meta.insert("labels".into(), string_map(labels));
    }
    if !annotations.is_empty() {
        meta.insert("annotations".into(), string_map(annotations));
    }
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), Value::String("v1".into()));
    obj.insert(
        "kind".into(),
        Value::String(match kind {
            GeneratorKind::ConfigMap => "ConfigMap".into(),
            GeneratorKind::Secret => "Secret".into(),
        }),
    );
    obj.insert("metadata".into(), Value::Object(meta));
    if !data.is_empty() {
        obj.insert("data".into(), Value::Object(data.into_iter().collect()));
    }
    if !binary.is_empty() {
        obj.insert(
            "binaryData".into(),
            Value::Object(binary.into_iter().collect()),
        );
    }
    if kind == GeneratorKind::Secret && !obj.contains_key("data") {
        obj.insert("data".into(), Value::Object(Map::new()));
    }
    if kind == GeneratorKind::Secret {
        let t = if args.kind.is_empty() {
            "Opaque"
        } else {
            &args.kind
        };
        obj.insert("type".into(), Value::String(t.to_string()));
    }
    if immutable {
        obj.insert("immutable".into(), Value::Bool(true));
    }
    let mut res = Resource::new(obj, file, 0);
    res.generator = Some(ConfiguredBy::field(match kind {
        GeneratorKind::ConfigMap => "ConfigMapGenerator",
        GeneratorKind::Secret => "SecretGenerator",
    }));
    res.generated = Some(Generated {
        behavior,
        hash: !disable_hash,
    });
    Ok(res)
}

fn string_map(m: BTreeMap<String, String>) -> Value {
    Value::Object(m.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
}

/// Base64 as kustomize writes generated values: 70-character lines, each ending in a newline,
/// once the text reaches 70 characters.
fn b64(bytes: &[u8]) -> String {
    let text = base64::engine::general_purpose::STANDARD.encode(bytes);
    if text.len() < 70 {
        return text;
    }
    let mut out = String::with_capacity(text.len() + text.len() / 70 + 1);
    for chunk in text.as_bytes().chunks(70) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// Strips one pair of matching surrounding quotes, as kustomize does for literals.
fn unquote(v: &str) -> &str {
    if v.len() >= 2 {
        let b = v.as_bytes();
        let (first, last) = (b[0], b[v.len() - 1]);
        if (first == b'"' || first == b'\'') && first == last {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// Reads an env file: `KEY=value` lines; blank lines and `#` comments skipped; leading
/// whitespace of a line dropped; a line without `=` gives an empty value (the process
/// environment is never read).
pub fn parse_env(text: &str) -> Vec<(String, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.split_once('=') {
            Some((k, v)) => out.push((k.to_string(), v.to_string())),
            None => out.push((line.to_string(), String::new())),
        }
    }
    out
}

/// The content-hash suffix of a ConfigMap or Secret (other kinds hash their whole JSON).
pub fn content_hash(obj: &Map<String, Value>) -> String {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let field = |k: &str| obj.get(k).cloned().unwrap_or(Value::String(String::new()));
    let mut m = Map::new();
    match kind {
        "ConfigMap" => {
            m.insert("kind".into(), Value::String("ConfigMap".into()));
            m.insert("name".into(), Value::String(String::new()));
            m.insert("data".into(), scalar_or_map(field("data")));
            if let Some(b @ Value::Object(_)) = obj.get("binaryData") {
                m.insert("binaryData".into(), b.clone());
            }
        }
        "Secret" => {
            m.insert("kind".into(), Value::String("Secret".into()));
            m.insert("type".into(), scalar_or_map(field("type")));
            m.insert("name".into(), Value::String(String::new()));
            m.insert("data".into(), scalar_or_map(field("data")));
            if let Some(s @ Value::Object(_)) = obj.get("stringData") {
                m.insert("stringData".into(), s.clone());
            }
        }
        _ => {
            m = obj.clone();
        }
    }
    let mut text = String::new();
    go_json(&Value::Object(m), &mut text);
    let hex = format!("{:x}", Sha256::digest(text.as_bytes()));
    hex[..10]
        .chars()
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            c => c,
        })
        .collect()
}

/// A scalar field is hashed as its text; a map as itself; a missing one as "".
fn scalar_or_map(v: Value) -> Value {
    match v {
        Value::Object(_) | Value::String(_) => v,
        Value::Null => Value::String(String::new()),
        Value::Array(_) => v,
        other => Value::String(other.to_string()),
    }
}

/// JSON as Go's `encoding/json` writes it: map keys sorted, `<`, `>`, `&`, U+2028 and U+2029
/// escaped.
fn go_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_string(k, out);
                out.push(':');
                go_json(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json(x, out);
            }
            out.push(']');
        }
        Value::String(s) => go_string(s, out),
        other => out.push_str(&other.to_string()),
    }
}

fn go_string(s: &str, out: &mut String) {
    tidegate_core::gojson::write_string(out, s, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("map")
    }

    #[test]
    fn hashes_match_kustomize() {
        // Suffixes kubectl kustomize v5.5 printed for these generators.
        let cm = obj(
            json!({"kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1", "b": "2"}}),
        );
        assert_eq!(content_hash(&cm), "7gdc49gk6d");
        let empty = obj(json!({"kind": "ConfigMap", "metadata": {"name": "empty"}}));
        assert_eq!(content_hash(&empty), "6ct58987ht");
        let secret = obj(
            json!({"kind": "Secret", "type": "Opaque", "metadata": {"name": "s"},
            "data": {"A": "MQ==", "B": "", "C ": "IHgg", "E": "InEi", "export D": "eQ=="}}),
        );
        assert_eq!(content_hash(&secret), "679b5fh966");
    }

    #[test]
    fn env_files_keep_what_kustomize_keeps() {
        let pairs = parse_env("A=1\n# c\n\nB\n C = x \nE=\"q\"\n");
        assert_eq!(
            pairs,
            vec![
                ("A".to_string(), "1".to_string()),
                ("B".to_string(), String::new()),
                ("C ".to_string(), " x ".to_string()),
                ("E".to_string(), "\"q\"".to_string()),
            ]
        );
    }
}
