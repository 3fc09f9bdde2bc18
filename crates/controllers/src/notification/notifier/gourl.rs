//! Go's `net/url` where notifiers depend on its exact behaviour: the lenient `url.Parse` (and
//! its error text), `url.QueryEscape` and `url.Values.Encode`.

use std::collections::BTreeMap;

/// Go's `strconv.Quote`, what `%q` prints.
pub fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `url.Parse`: `Some` for a URL with a scheme, `None` for what Go reads as a bare path
/// (no scheme, so no host either), or Go's error, `parse "<raw>": <reason>` (the reason in
/// Go's words for control characters, a missing scheme and a colon in the first segment).
pub fn parse(raw: &str) -> Result<Option<reqwest::Url>, String> {
    let fail = |reason: &str| Err(format!("parse {}: {reason}", quote(raw)));
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return fail("net/url: invalid control character in URL");
    }
    let without_fragment = raw.split('#').next().unwrap_or_default();
    let has_scheme = match without_fragment.find(':') {
        Some(0) => return fail("missing protocol scheme"),
        Some(i) => {
            let scheme = &without_fragment[..i];
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    };
    if !has_scheme {
        let first_segment = without_fragment
            .split(['/', '?'])
            .next()
            .unwrap_or_default();
        if first_segment.contains(':') {
            return fail("first path segment in URL cannot contain colon");
        }
        return Ok(None);
    }
    match reqwest::Url::parse(raw) {
        Ok(u) => Ok(Some(u)),
        Err(e) => fail(&e.to_string()),
    }
}

/// Go's `url.QueryEscape`: unreserved bytes kept, space as `+`, the rest `%XX`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Go's `url.Values.Encode`: `key=value` pairs sorted by key, joined by `&`.
pub fn encode_values(values: &BTreeMap<String, Vec<String>>) -> String {
    let mut out = String::new();
    for (k, vs) in values {
        for v in vs {
            if !out.is_empty() {
                out.push('&');
            }
            out.push_str(&query_escape(k));
            out.push('=');
            out.push_str(&query_escape(v));
        }
    }
    out
}

/// Go's `url.ParseQuery` (what `URL.Query()` returns): pairs split on `&`, `+` and `%XX`
/// decoded; pairs containing `;` or a bad escape are dropped, as Go drops them.
pub fn parse_query(query: &str) -> BTreeMap<String, Vec<String>> {
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pair in query
        .split('&')
        .filter(|p| !p.is_empty() && !p.contains(';'))
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if let (Some(k), Some(v)) = (unescape(k), unescape(v)) {
            values.entry(k).or_default().push(v);
        }
    }
    values
}

fn unescape(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_go() {
        assert_eq!(
            parse("\x7f").unwrap_err(),
            "parse \"\\x7f\": net/url: invalid control character in URL"
        );
        assert_eq!(
            parse(":foo").unwrap_err(),
            "parse \":foo\": missing protocol scheme"
        );
        assert_eq!(
            parse("a:b/c").unwrap().unwrap().scheme(),
            "a",
            "an opaque URL has a scheme"
        );
        assert!(parse("datadoghq.eu").unwrap().is_none());
        assert!(parse("").unwrap().is_none());
        assert_eq!(
            parse("https://api.datadoghq.eu/x")
                .unwrap()
                .unwrap()
                .host_str(),
            Some("api.datadoghq.eu")
        );
    }

    #[test]
    fn encodes_as_go() {
        assert_eq!(query_escape("a b*~/:é"), "a+b%2A~%2F%3A%C3%A9");
        let values = parse_query("b=2&a=x+y&a=%7E;&c=%zz&a=1");
        assert_eq!(encode_values(&values), "a=x+y&a=1&b=2");
    }
}
