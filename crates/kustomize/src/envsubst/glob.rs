//! The pattern matcher behind `${v#…}`, `${v##…}`, `${v%…}` and `${v%%…}`: Go's `path.Match`
//! as Flux forked it (`*` and `?` also match `/`; a class is negated with `^` only), on bytes,
//! with Go's rune decoding (an invalid byte is one U+FFFD).

/// A pattern Go calls malformed ("syntax error in pattern").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadPattern;

/// Whether all of `name` matches `pattern`.
pub fn matches(pattern: &[u8], mut name: &[u8]) -> Result<bool, BadPattern> {
    let mut pattern = pattern;
    'chunks: while !pattern.is_empty() {
        let (star, chunk, rest) = split_chunk(pattern);
        pattern = rest;
        if star && chunk.is_empty() {
            return Ok(true);
        }
        let last = pattern.is_empty();
        if let Some(t) = match_chunk(chunk, name)?
            && (t.is_empty() || !last)
        {
            name = t;
            continue;
        }
        if star {
            for i in 0..name.len() {
                if let Some(t) = match_chunk(chunk, &name[i + 1..])? {
                    if last && !t.is_empty() {
                        continue;
                    }
                    name = t;
                    continue 'chunks;
                }
            }
        }
        return Ok(false);
    }
    Ok(name.is_empty())
}

/// Leading stars, then the literal chunk up to the next star outside a class.
fn split_chunk(mut pattern: &[u8]) -> (bool, &[u8], &[u8]) {
    let mut star = false;
    while let [b'*', rest @ ..] = pattern {
        pattern = rest;
        star = true;
    }
    let mut in_class = false;
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            b'\\' if i + 1 < pattern.len() => i += 1,
            b'[' => in_class = true,
            b']' => in_class = false,
            b'*' if !in_class => break,
            _ => {}
        }
        i += 1;
    }
    (star, &pattern[..i], &pattern[i..])
}

/// Matches `chunk` (no stars) against the start of `s`, giving what is left of `s`.
fn match_chunk<'a>(mut chunk: &[u8], mut s: &'a [u8]) -> Result<Option<&'a [u8]>, BadPattern> {
    while let Some(&c) = chunk.first() {
        if s.is_empty() {
            return Ok(None);
        }
        match c {
            b'[' => {
                let (r, n) = decode(s);
                s = &s[n..];
                chunk = &chunk[1..];
                let negated = chunk.first() == Some(&b'^');
                if negated {
                    chunk = &chunk[1..];
                }
                let mut matched = false;
                let mut ranges = 0;
                loop {
                    if chunk.first() == Some(&b']') && ranges > 0 {
                        chunk = &chunk[1..];
                        break;
                    }
                    let (lo, rest) = class_char(chunk)?;
                    chunk = rest;
                    let mut hi = lo;
                    if chunk.first() == Some(&b'-') {
                        let (h, rest) = class_char(&chunk[1..])?;
                        hi = h;
                        chunk = rest;
                    }
                    if lo <= r && r <= hi {
                        matched = true;
                    }
                    ranges += 1;
                }
                if matched == negated {
                    return Ok(None);
                }
            }
            b'?' => {
                let (_, n) = decode(s);
                s = &s[n..];
                chunk = &chunk[1..];
            }
            _ => {
                let literal = if c == b'\\' {
                    chunk = &chunk[1..];
                    *chunk.first().ok_or(BadPattern)?
                } else {
                    c
                };
                if literal != s[0] {
                    return Ok(None);
                }
                s = &s[1..];
                chunk = &chunk[1..];
            }
        }
    }
    Ok(Some(s))
}

/// One (possibly escaped) character of a class; something must follow it.
fn class_char(chunk: &[u8]) -> Result<(char, &[u8]), BadPattern> {
    let chunk = match chunk {
        [] | [b'-' | b']', ..] => return Err(BadPattern),
        [b'\\', rest @ ..] => rest,
        _ => chunk,
    };
    if chunk.is_empty() {
        return Err(BadPattern);
    }
    let (r, n) = decode(chunk);
    if r == char::REPLACEMENT_CHARACTER && n == 1 {
        return Err(BadPattern);
    }
    let rest = &chunk[n..];
    if rest.is_empty() {
        return Err(BadPattern);
    }
    Ok((r, rest))
}

/// Go's `utf8.DecodeRune`: the first character and its width; an invalid byte is U+FFFD of
/// width 1. `s` must not be empty.
pub fn decode(s: &[u8]) -> (char, usize) {
    for n in 1..=s.len().min(4) {
        if let Ok(text) = std::str::from_utf8(&s[..n])
            && let Some(c) = text.chars().next()
        {
            return (c, n);
        }
    }
    (char::REPLACEMENT_CHARACTER, 1)
}

/// Go's `string(bytes)` seen as characters: valid UTF-8 as it is, each invalid byte U+FFFD.
pub fn lossy(mut s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    while !s.is_empty() {
        match std::str::from_utf8(s) {
            Ok(text) => {
                out.push_str(text);
                break;
            }
            Err(e) => {
                let (valid, rest) = s.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push(char::REPLACEMENT_CHARACTER);
                s = rest.get(1..).unwrap_or_default();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> Result<bool, BadPattern> {
        matches(p.as_bytes(), n.as_bytes())
    }

    #[test]
    fn stars_and_classes() {
        assert_eq!(m("*.", "txt."), Ok(true));
        assert_eq!(m("*", "a/b"), Ok(true));
        assert_eq!(m("a?c", "a/c"), Ok(true));
        assert_eq!(m("[a-c]x", "bx"), Ok(true));
        assert_eq!(m("[^a-c]x", "bx"), Ok(false));
        assert_eq!(m("[!a]x", "!x"), Ok(true));
        assert_eq!(m("\\*", "*"), Ok(true));
        assert_eq!(m("a*b*c", "axxbyyc"), Ok(true));
        assert_eq!(m("a*b", "axxbyyc"), Ok(false));
        assert_eq!(m("[", "a"), Err(BadPattern));
        assert_eq!(m("[]a]", "a"), Err(BadPattern));
        assert_eq!(m("x\\", "x"), Ok(false));
        assert_eq!(m("x\\", "xy"), Err(BadPattern));
    }

    #[test]
    fn go_decoding() {
        assert_eq!(decode("é".as_bytes()), ('é', 2));
        assert_eq!(decode(&[0xc3]), (char::REPLACEMENT_CHARACTER, 1));
        assert_eq!(lossy(&[b'a', 0xe4, 0xb8, b'b']), "a\u{fffd}\u{fffd}b");
    }
}
