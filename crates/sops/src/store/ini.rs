//! The INI store, as go-ini reads and writes what sops gives it: sections of `key = value`,
//! comments above a key belonging to that key, the `[sops]` section holding flattened metadata.

use super::StoreError;
use crate::tree::{Branch, Item, Key, Value};

/// go-ini's name for keys before any section.
const DEFAULT: &str = "DEFAULT";

/// Reads sections into items whose values are branches.
pub fn load(text: &[u8]) -> Result<Vec<Branch>, StoreError> {
    let text = String::from_utf8_lossy(text);
    let mut sections: Vec<(String, Branch)> = vec![(DEFAULT.to_string(), Branch::new())];
    let mut pending: Vec<String> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(raw) = lines.next() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with(';') || line.starts_with('#') {
            pending.push(line.to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.split(']').next().unwrap_or("").trim().to_string();
            let mut branch = Branch::new();
            if !pending.is_empty() {
                branch.push(Item::comment(strip_comment_char(&pending.join("\n"))));
                pending.clear();
            }
            sections.push((name, branch));
            continue;
        }
        let (key, value) = match line.find(['=', ':']) {
            Some(i) => (
                line[..i].trim().to_string(),
                line[i + 1..].trim().to_string(),
            ),
            None => (line.to_string(), String::new()),
        };
        let key = unquote_key(&key);
        let value = if let Some(rest) = value.strip_prefix("\"\"\"") {
            // A multi-line value up to the closing triple quote.
            let mut v = String::new();
            if let Some(end) = rest.find("\"\"\"") {
                v.push_str(&rest[..end]);
            } else {
                v.push_str(rest);
                for next in lines.by_ref() {
                    v.push('\n');
                    if let Some(end) = next.find("\"\"\"") {
                        v.push_str(&next[..end]);
                        break;
                    }
                    v.push_str(next);
                }
            }
            v
        } else {
            unquote_value(&value)
        };
        // The list starts with the default section, so there is always a last one.
        if let Some((_, branch)) = sections.last_mut() {
            branch.push(Item::new(key, Value::Str(value)));
            if !pending.is_empty() {
                branch.push(Item::comment(strip_comment_char(&pending.join("\n"))));
                pending.clear();
            }
        }
    }
    let branch = sections
        .into_iter()
        .map(|(name, b)| Item::new(name, Value::Branch(b)))
        .collect();
    Ok(vec![branch])
}

fn unquote_key(k: &str) -> String {
    for q in ["`", "\""] {
        if k.len() >= 2 && k.starts_with(q) && k.ends_with(q) {
            return k[1..k.len() - 1].to_string();
        }
    }
    k.to_string()
}

fn unquote_value(v: &str) -> String {
    if v.len() >= 2 {
        for q in ['`', '"', '\''] {
            if v.starts_with(q) && v[1..].contains(q) {
                let end = v[1..].find(q).map(|i| i + 1).unwrap_or(v.len());
                return v[1..end].to_string();
            }
        }
    }
    // An unquoted value ends at an inline comment.
    match v.find(['#', ';']) {
        Some(i) => v[..i].trim_end().to_string(),
        None => v.to_string(),
    }
}

fn strip_comment_char(c: &str) -> String {
    if c.starts_with(';') {
        c.trim_start_matches([';', ' ']).to_string()
    } else if c.starts_with('#') {
        c.trim_start_matches(['#', ' ']).to_string()
    } else {
        c.to_string()
    }
}

/// Takes the `[sops]` section out as flattened metadata.
pub fn take_metadata(branches: &mut [Branch]) -> Vec<(String, String)> {
    let mut flat = Vec::new();
    if let Some(branch) = branches.first_mut() {
        branch.retain(|it| {
            if it.key_str() != Some("sops") {
                return true;
            }
            if let Value::Branch(b) = &it.value {
                for kv in b {
                    if let (Key::Str(k), Value::Str(v)) = (&kv.key, &kv.value) {
                        flat.push((k.clone(), v.clone()));
                    }
                }
            }
            false
        });
    }
    flat
}

/// Writes sections as go-ini does: `=` aligned within a section, a blank line between
/// sections, an empty `DEFAULT` section left out.
pub fn emit(branches: &[Branch]) -> Result<Vec<u8>, StoreError> {
    let mut out = String::new();
    let mut first = true;
    for it in branches.first().map(Vec::as_slice).unwrap_or_default() {
        let name = match &it.key {
            Key::Comment(_) => continue,
            Key::Str(k) | Key::Other(_, k) => k,
        };
        let Value::Branch(items) = &it.value else {
            return Err(StoreError::Emit(
                "Error encoding section: Section values should always be TreeBranches".into(),
            ));
        };
        let mut section_comment = None;
        let mut keys: Vec<(String, String, Option<String>)> = Vec::new();
        for (i, kv) in items.iter().enumerate() {
            match &kv.key {
                Key::Comment(c) if i == 0 => section_comment = Some(c.text.clone()),
                Key::Comment(c) => {
                    if let Some(last) = keys.last_mut() {
                        last.2 = Some(c.text.clone());
                    }
                }
                Key::Str(k) | Key::Other(_, k) => {
                    keys.push((k.clone(), super::value_to_string(&kv.value), None))
                }
            }
        }
        if name == DEFAULT && keys.is_empty() && section_comment.is_none() {
            continue;
        }
        if !first {
            out.push('\n');
        }
        first = false;
        if let Some(c) = &section_comment {
            write_comment(&mut out, c);
        }
        if name != DEFAULT {
            out.push('[');
            out.push_str(name);
            out.push_str("]\n");
        }
        let width = keys
            .iter()
            .map(|(k, _, _)| key_text(k).chars().count())
            .max()
            .unwrap_or(0);
        for (k, v, comment) in &keys {
            if let Some(c) = comment {
                write_comment(&mut out, c);
            }
            let k = key_text(k);
            out.push_str(&k);
            for _ in k.chars().count()..width {
                out.push(' ');
            }
            out.push_str(" = ");
            out.push_str(&value_text(v));
            out.push('\n');
        }
    }
    Ok(out.into_bytes())
}

fn write_comment(out: &mut String, c: &str) {
    for line in c.split('\n') {
        if !(line.starts_with(';') || line.starts_with('#')) {
            out.push_str("; ");
        }
        out.push_str(line);
        out.push('\n');
    }
}

fn key_text(k: &str) -> String {
    if k.contains(['"', '=', ':']) {
        format!("`{k}`")
    } else if k.contains('`') {
        format!("\"\"\"{k}\"\"\"")
    } else {
        k.to_string()
    }
}

fn value_text(v: &str) -> String {
    if v.contains('\n') || v.contains('`') {
        format!("\"\"\"{v}\"\"\"")
    } else if v.contains(['#', ';']) {
        format!("`{v}`")
    } else if v != v.trim() {
        format!("\"{v}\"")
    } else {
        v.to_string()
    }
}
