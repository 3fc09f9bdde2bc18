//! Go's string quoting (`strconv.Quote`, `strconv.Unquote`, `strconv.UnquoteChar`), which
//! template error messages, `printf "%q"` and the parser's string constants follow.

/// Whether Go's `unicode.IsPrint` holds for `c`: letters, marks, numbers, punctuation,
/// symbols and the ASCII space. Approximated on the character classes Rust's standard library
/// knows, with the format, separator and private-use characters Go rejects listed here.
pub fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32,
        0xAD
        | 0x600..=0x605
        | 0x61C
        | 0x6DD
        | 0x70F
        | 0x180E
        | 0x200B..=0x200F
        | 0x202A..=0x202E
        | 0x2060..=0x206F
        | 0xD800..=0xF8FF
        | 0xFEFF
        | 0xFFF9..=0xFFFB
        | 0xFFFE..=0xFFFF
        | 0xE0001
        | 0xE0020..=0xE007F
        | 0xF0000..=0x10FFFF)
}

fn escape_into(out: &mut String, c: char, quote: char, ascii_only: bool) {
    if c == quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if (!ascii_only || c.is_ascii()) && is_print(c) {
        out.push(c);
        return;
    }
    match c {
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => {
            out.push_str(&format!("\\x{:02x}", c as u32));
        }
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// `strconv.Quote`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        escape_into(&mut out, c, '"', false);
    }
    out.push('"');
    out
}

/// `strconv.Quote` of bytes that may not be UTF-8: invalid bytes become `\xNN`.
pub fn quote_bytes(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() + 2);
    out.push('"');
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            escape_into(&mut out, c, '"', false);
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out.push('"');
    out
}

/// `strconv.QuoteToASCII`.
pub fn quote_ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        escape_into(&mut out, c, '"', true);
    }
    out.push('"');
    out
}

/// `strconv.QuoteRune`.
pub fn quote_rune(c: char) -> String {
    let mut out = String::from("'");
    escape_into(&mut out, c, '\'', false);
    out.push('\'');
    out
}

/// Go's `strconv.ErrSyntax` text.
pub const INVALID_SYNTAX: &str = "invalid syntax";

/// `strconv.UnquoteChar`: the first character of `s` (escapes decoded) and the rest, for a
/// literal quoted with `quote`.
pub fn unquote_char(s: &str, quote: char) -> Result<(char, &str), &'static str> {
    let mut chars = s.chars();
    let c = chars.next().ok_or(INVALID_SYNTAX)?;
    if c == quote && (quote == '\'' || quote == '"') {
        return Err(INVALID_SYNTAX);
    }
    if c != '\\' {
        return Ok((c, chars.as_str()));
    }
    let e = chars.next().ok_or(INVALID_SYNTAX)?;
    let simple = match e {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        '\\' => Some('\\'),
        '\'' | '"' => {
            if e != quote {
                return Err(INVALID_SYNTAX);
            }
            Some(e)
        }
        _ => None,
    };
    if let Some(c) = simple {
        return Ok((c, chars.as_str()));
    }
    let rest = chars.as_str();
    let hex = |n: usize| -> Result<(u32, &str), &'static str> {
        let digits = rest.get(..n).ok_or(INVALID_SYNTAX)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(INVALID_SYNTAX);
        }
        let v = u32::from_str_radix(digits, 16).map_err(|_| INVALID_SYNTAX)?;
        Ok((v, &rest[n..]))
    };
    match e {
        'x' => {
            let (v, rest) = hex(2)?;
            // A byte value; as a character it is the code point of that value.
            let c = char::from_u32(v).ok_or(INVALID_SYNTAX)?;
            Ok((c, rest))
        }
        'u' => {
            let (v, rest) = hex(4)?;
            Ok((char::from_u32(v).ok_or(INVALID_SYNTAX)?, rest))
        }
        'U' => {
            let (v, rest) = hex(8)?;
            Ok((char::from_u32(v).ok_or(INVALID_SYNTAX)?, rest))
        }
        '0'..='7' => {
            let digits = s.get(1..4).ok_or(INVALID_SYNTAX)?;
            if !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return Err(INVALID_SYNTAX);
            }
            let v = u32::from_str_radix(digits, 8).map_err(|_| INVALID_SYNTAX)?;
            if v > 255 {
                return Err(INVALID_SYNTAX);
            }
            Ok((char::from_u32(v).ok_or(INVALID_SYNTAX)?, &s[4..]))
        }
        _ => Err(INVALID_SYNTAX),
    }
}

/// `strconv.Unquote` of a `"…"`, `` `…` `` or `'…'` literal. Bytes written as `\xNN` with
/// NN ≥ 0x80 in a double-quoted string are raw bytes in Go; they are kept as the code point
/// here, which only differs for strings that are not UTF-8.
pub fn unquote(s: &str) -> Result<String, &'static str> {
    let quote = s.chars().next().ok_or(INVALID_SYNTAX)?;
    if s.len() < 2 || !s.ends_with(quote) {
        return Err(INVALID_SYNTAX);
    }
    let body = &s[1..s.len() - 1];
    match quote {
        '`' => {
            if body.contains('`') {
                return Err(INVALID_SYNTAX);
            }
            Ok(body.replace('\r', ""))
        }
        '"' | '\'' => {
            if body.contains('\n') {
                return Err(INVALID_SYNTAX);
            }
            let mut out = String::with_capacity(body.len());
            let mut rest = body;
            while !rest.is_empty() {
                let (c, tail) = unquote_char(rest, quote)?;
                out.push(c);
                rest = tail;
                if quote == '\'' && !rest.is_empty() {
                    return Err(INVALID_SYNTAX);
                }
            }
            if quote == '\'' && out.is_empty() {
                return Err(INVALID_SYNTAX);
            }
            Ok(out)
        }
        _ => Err(INVALID_SYNTAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_as_go() {
        assert_eq!(quote("a\"b\\\n\t\u{1}é"), r#""a\"b\\\n\t\x01é""#);
        assert_eq!(quote("\u{200b}"), r#""\u200b""#);
        assert_eq!(quote_ascii("é"), r#""\u00e9""#);
        assert_eq!(quote_rune('\''), r"'\''");
        assert_eq!(unquote(r#""a\tb\u00e9""#).as_deref(), Ok("a\tbé"));
        assert_eq!(unquote("`a\\n`").as_deref(), Ok("a\\n"));
        assert_eq!(unquote(r#""a"#), Err(INVALID_SYNTAX));
        assert_eq!(unquote(r#""\q""#), Err(INVALID_SYNTAX));
        assert_eq!(unquote("'ab'"), Err(INVALID_SYNTAX));
    }
}
