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
}
