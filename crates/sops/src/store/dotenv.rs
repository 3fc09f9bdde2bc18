//! The dotenv store: one `KEY=value` per line (`\n` escapes a newline), `#` comment lines,
//! metadata flattened into `sops_`-prefixed lines.

use super::StoreError;
use crate::tree::{Branch, Item, Key, Value};

/// Reads the lines into one branch.
pub fn load(text: &[u8]) -> Result<Vec<Branch>, StoreError> {
    let mut branch = Branch::new();
    for line in text.split(|b| *b == b'\n') {
        if line.is_empty() {
            continue;
        }
        let line = String::from_utf8_lossy(line);
        if let Some(comment) = line.strip_prefix('#') {
            branch.push(Item::comment(comment));
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            // The line's content may be a secret: say where, not what.
            return Err(StoreError::Parse(
                "invalid dotenv input line: a line has no '='".into(),
            ));
        };
        branch.push(Item::new(key, Value::Str(value.replace("\\n", "\n"))));
    }
    Ok(vec![branch])
}

/// Takes the `sops_` lines out as flattened metadata.
pub fn take_metadata(branches: &mut [Branch]) -> Vec<(String, String)> {
    let mut flat = Vec::new();
    if let Some(branch) = branches.first_mut() {
        branch.retain(|it| match (&it.key, &it.value) {
            (Key::Str(k), Value::Str(v)) if k.starts_with("sops_") => {
                flat.push((k["sops_".len()..].to_string(), v.clone()));
                false
            }
            _ => true,
        });
    }
    flat
}

/// Writes the first branch as dotenv.
pub fn emit(branches: &[Branch]) -> Result<Vec<u8>, StoreError> {
    let mut out = String::new();
    for it in branches.first().map(Vec::as_slice).unwrap_or_default() {
        if matches!(it.value, Value::Branch(_) | Value::List(_)) {
            let key = match &it.key {
                Key::Str(k) | Key::Other(_, k) => k.clone(),
                Key::Comment(c) => c.text.clone(),
            };
            return Err(StoreError::Emit(format!(
                "cannot use complex value in dotenv file; offending key {key}"
            )));
        }
        match &it.key {
            Key::Comment(c) => {
                out.push('#');
                out.push_str(&c.text);
                out.push('\n');
            }
            Key::Str(k) | Key::Other(_, k) => {
                out.push_str(k);
                out.push('=');
                match &it.value {
                    Value::Str(s) => out.push_str(&s.replace('\n', "\\n")),
                    other => out.push_str(&super::value_to_string(other)),
                }
                out.push('\n');
            }
        }
    }
    Ok(out.into_bytes())
}
