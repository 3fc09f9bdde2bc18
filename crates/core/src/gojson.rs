//! Text as Go's `encoding/json` writes it, for outputs that must match Go programs byte for byte.

/// Appends `s` as a JSON string the way Go's encoder writes it: `"`, `\` and control characters
/// escaped (`\b`, `\f`, `\n`, `\r`, `\t` by name, others as `\u00XX`), U+2028 and U+2029 always,
/// and `<`, `>`, `&` when `escape_html` (Go's default).
pub fn write_string(out: &mut String, s: &str, escape_html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' if escape_html => out.push_str(&format!("\\u{:04x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The name Go's `encoding/json` gives the kind of a JSON value in its errors (`json: cannot
/// unmarshal array into Go value of type …`).
pub fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Array(_) => "array",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Object(_) => "object",
        serde_json::Value::Null => "null",
    }
}

/// `v` as Go's `json.Marshal` writes it (compact, HTML characters escaped). Objects keep the
/// order they have, so a struct serialized through serde comes out in declaration order and a
/// `BTreeMap` sorted, as Go writes structs and maps.
pub fn marshal(v: &serde_json::Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v);
    out
}

fn write_value(out: &mut String, v: &serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(out, s, true),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k, true);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_as_go() {
        let mut out = String::new();
        super::write_string(&mut out, "a\"<b>&\u{1}\u{8}\n\u{2028}", true);
        assert_eq!(out, "\"a\\\"\\u003cb\\u003e\\u0026\\u0001\\b\\n\\u2028\"");
        out.clear();
        super::write_string(&mut out, "<&>", false);
        assert_eq!(out, "\"<&>\"");
    }

    #[test]
    fn marshals_compact_in_order() {
        let v = serde_json::json!({"b": [1, true, null], "a": {"m": "<x>"}});
        assert_eq!(
            super::marshal(&v),
            r#"{"b":[1,true,null],"a":{"m":"\u003cx\u003e"}}"#
        );
    }
}
