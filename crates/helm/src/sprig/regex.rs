//! Sprig's regular expressions (Go's RE2 syntax, rewritten where Rust's `regex` crate reads
//! it differently; see [`go_syntax`]):
//! `regexMatch`, `regexFind`, `regexFindAll`, `regexReplaceAll` (with `$1` expansion),
//! `regexReplaceAllLiteral`, `regexSplit`, `regexQuoteMeta`, and their `must` forms.

use regex::Regex;

use super::{i, s};
use crate::template::FuncMap;
use crate::template::func::{Func, Ty};
use crate::template::value::Value;

/// Go's RE2 Perl classes are ASCII (`\d` is `[0-9]`, `\w` `[0-9A-Za-z_]`, `\s`
/// `[\t\n\f\r ]`, `\b` an ASCII word boundary); Rust's are Unicode. Go reads `[` and
/// `&&`/`~~` inside a class as literals where Rust nests or combines classes, and knows
/// `\Q…\E`. Rewrites a Go pattern into the Rust pattern that matches the same text.
fn go_syntax(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains(['\\', '[', '&', '~']) {
        return pattern.into();
    }
    const DIGIT: &str = "0-9";
    const WORD: &str = "0-9A-Za-z_";
    const SPACE: &str = "\\t\\n\\x0C\\r ";
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut in_class = false;
    // The position in a class where `]` is still a literal (`[]a]`, `[^]a]`).
    let mut class_start = false;
    let mut chars = pattern.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let after_open = std::mem::take(&mut class_start);
        match c {
            '\\' => {
                let Some((_, e)) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let class = match e {
                    'd' | 'D' => Some(DIGIT),
                    'w' | 'W' => Some(WORD),
                    's' | 'S' => Some(SPACE),
                    _ => None,
                };
                match (class, in_class) {
                    (Some(set), false) if e.is_ascii_lowercase() => {
                        out.push('[');
                        out.push_str(set);
                        out.push(']');
                    }
                    (Some(set), _) if e.is_ascii_uppercase() => {
                        out.push_str("[^");
                        out.push_str(set);
                        out.push(']');
                    }
                    (Some(set), _) => out.push_str(set),
                    (None, false) if e == 'b' || e == 'B' => {
                        out.push_str("(?-u:\\");
                        out.push(e);
                        out.push(')');
                    }
                    (None, _) if e == 'Q' => {
                        let rest = &pattern[at + 2..];
                        let (literal, skip) = match rest.find("\\E") {
                            Some(end) => (&rest[..end], end + 2),
                            None => (rest, rest.len()),
                        };
                        for l in literal.chars() {
                            if in_class {
                                if l.is_ascii_punctuation() {
                                    out.push('\\');
                                }
                                out.push(l);
                            } else {
                                out.push_str(&regex::escape(l.encode_utf8(&mut [0; 4])));
                            }
                        }
                        let resume = at + 2 + skip;
                        while chars.peek().is_some_and(|(i, _)| *i < resume) {
                            chars.next();
                        }
                    }
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                if chars.peek().is_some_and(|(_, n)| *n == '^') {
                    chars.next();
                    out.push('^');
                }
                class_start = true;
            }
            '[' => {
                // `[:alpha:]` stays a POSIX class; any other `[` is a literal in Go.
                let rest = &pattern[at..];
                match rest.strip_prefix("[:").and_then(|r| r.find(":]")) {
                    Some(end) => {
                        out.push_str(&rest[..end + 4]);
                        let resume = at + end + 4;
                        while chars.peek().is_some_and(|(i, _)| *i < resume) {
                            chars.next();
                        }
                    }
                    None => out.push_str("\\["),
                }
            }
            ']' if in_class && after_open => out.push_str("\\]"),
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.into()
}

thread_local! {
    /// Patterns compiled on this thread: charts call the same few expressions for every
    /// image and name (bitnami's `common` library, once per container).
    static COMPILED: std::cell::RefCell<std::collections::HashMap<String, Regex>> =
        Default::default();
}

/// Compiles as Go's `regexp.Compile`, with its error text.
fn compile(pattern: &str) -> Result<Regex, String> {
    if let Some(re) = COMPILED.with(|c| c.borrow().get(pattern).cloned()) {
        return Ok(re);
    }
    let re = compile_uncached(pattern)?;
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 128 {
            c.clear();
        }
        c.insert(pattern.to_string(), re.clone());
    });
    Ok(re)
}

fn compile_uncached(pattern: &str) -> Result<Regex, String> {
    Regex::new(&go_syntax(pattern)).map_err(|e| {
        let detail = match &e {
            regex::Error::Syntax(text) => text
                .lines()
                .last()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string(),
            other => other.to_string(),
        };
        format!("error parsing regexp: {detail}: `{pattern}`")
    })
}

/// As `regexp.MustCompile` panics.
fn must_compile(pattern: &str) -> Result<Regex, String> {
    compile(pattern).map_err(|e| {
        format!(
            "regexp: Compile({}): {e}",
            crate::template::quote::quote(pattern).replace('"', "`")
        )
    })
}

/// Go's `FindAllString` limit: n < 0 means all.
fn limit(n: i64) -> usize {
    if n < 0 { usize::MAX } else { n as usize }
}

/// Go's `Expand` template syntax is Rust's replacement syntax, except that Go leaves a `$`
/// that starts no valid reference as nothing; both read `$1x` as a group named `1x`.
fn replace_all(re: &Regex, text: &str, repl: &str) -> String {
    re.replace_all(text, repl).into_owned()
}

fn split(re: &Regex, text: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if re.as_str().is_empty() && !text.is_empty() {
        let chars: Vec<String> = text.chars().map(String::from).collect();
        if n > 0 && chars.len() > n as usize {
            let mut head = chars[..n as usize - 1].to_vec();
            head.push(chars[n as usize - 1..].concat());
            return head;
        }
        return chars;
    }
    let mut out = Vec::new();
    let mut last = 0;
    for m in re.find_iter(text) {
        if n > 0 && out.len() == n as usize - 1 {
            break;
        }
        if m.end() == 0 {
            continue;
        }
        out.push(text[last..m.start()].to_string());
        last = m.end();
    }
    out.push(text[last..].to_string());
    out
}

/// Go's `regexp.QuoteMeta`.
fn quote_meta(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub(super) fn register(m: &mut FuncMap) {
    use Ty::{Int, String as Str};
    m.insert(Func::new("regexMatch", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(
            compile(s(&a[0]))
                .map(|r| r.is_match(s(&a[1])))
                .unwrap_or(false),
        ))
    }));
    m.insert(Func::new("mustRegexMatch", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(compile(s(&a[0]))?.is_match(s(&a[1]))))
    }));
    for (name, must) in [("regexFindAll", false), ("mustRegexFindAll", true)] {
        m.insert(Func::new(name, &[Str, Str, Int], None, move |_, a| {
            let re = if must {
                compile(s(&a[0]))?
            } else {
                must_compile(s(&a[0]))?
            };
            let found: Vec<String> = re
                .find_iter(s(&a[1]))
                .take(limit(i(&a[2])))
                .map(|m| m.as_str().to_string())
                .collect();
            if found.is_empty() {
                return Ok(Value::NilList(crate::template::value::ListKind::String));
            }
            Ok(Value::string_list(found))
        }));
    }
    for (name, must) in [("regexFind", false), ("mustRegexFind", true)] {
        m.insert(Func::new(name, &[Str, Str], None, move |_, a| {
            let re = if must {
                compile(s(&a[0]))?
            } else {
                must_compile(s(&a[0]))?
            };
            Ok(Value::str(
                re.find(s(&a[1])).map(|m| m.as_str()).unwrap_or(""),
            ))
        }));
    }
    for (name, must) in [("regexReplaceAll", false), ("mustRegexReplaceAll", true)] {
        m.insert(Func::new(name, &[Str, Str, Str], None, move |_, a| {
            let re = if must {
                compile(s(&a[0]))?
            } else {
                must_compile(s(&a[0]))?
            };
            Ok(Value::str(&replace_all(&re, s(&a[1]), s(&a[2]))))
        }));
    }
    for (name, must) in [
        ("regexReplaceAllLiteral", false),
        ("mustRegexReplaceAllLiteral", true),
    ] {
        m.insert(Func::new(name, &[Str, Str, Str], None, move |_, a| {
            let re = if must {
                compile(s(&a[0]))?
            } else {
                must_compile(s(&a[0]))?
            };
            Ok(Value::str(
                &re.replace_all(s(&a[1]), regex::NoExpand(s(&a[2]))),
            ))
        }));
    }
    for (name, must) in [("regexSplit", false), ("mustRegexSplit", true)] {
        m.insert(Func::new(name, &[Str, Str, Int], None, move |_, a| {
            let re = if must {
                compile(s(&a[0]))?
            } else {
                must_compile(s(&a[0]))?
            };
            Ok(Value::string_list(split(&re, s(&a[1]), i(&a[2]))))
        }));
    }
    m.insert(Func::new("regexQuoteMeta", &[Str], None, |_, a| {
        Ok(Value::str(&quote_meta(s(&a[0]))))
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        compile(pattern).expect("compiles").is_match(text)
    }

    #[test]
    fn perl_classes_are_ascii_as_in_go() {
        assert_eq!(go_syntax(r"^\d+$"), "^[0-9]+$");
        assert!(matches(r"^\d+$", "123"));
        assert!(
            !matches(r"^\d+$", "\u{663}"),
            "Arabic-Indic digit is not \\d in Go"
        );
        assert!(!matches(r"^\w$", "é"));
        assert!(matches(r"^\W$", "é"));
        assert!(!matches(r"\s", "\u{a0}"));
        assert!(!matches(r"\s", "\u{b}"), "Go's \\s has no vertical tab");
        assert!(matches(r"\s", "\u{c}"));
        assert!(matches(r"^\S$", "\u{b}"));
        assert!(matches(r"[^\d]", "a"));
        assert!(!matches(r"^[^\d]$", "1"));
        assert!(matches(r"^[\D]$", "\u{663}"));
        assert!(matches(r"^[a\s]+$", "a a\t"));
        // é is not a word character in Go, so `\bx` matches after it.
        assert!(matches(r"\bx", "éx"));
        assert!(!matches(r"\Bx", "éx"));
        assert_eq!(
            compile(r"(-?[^a-z\d\-])+-?")
                .expect("compiles")
                .replace_all("my_Release-١", "-"),
            "my-elease-"
        );
    }

    #[test]
    fn classes_and_quoting_read_as_go_reads_them() {
        assert!(matches(r"^[[]$", "["));
        assert!(matches(r"^[a&&b]+$", "a&&b"));
        assert!(matches(r"^[a~~b]+$", "~"));
        assert!(matches(r"^[]a]+$", "]a"));
        assert!(matches(r"^[^]a]$", "b"));
        assert!(matches(r"^[[:alpha:]]+$", "abc"));
        assert!(!matches(r"^[[:alpha:]]+$", "a1"));
        assert!(matches(r"^\Q.*\E$", ".*"));
        assert!(!matches(r"^\Q.*\E$", "ab"));
        assert!(matches(r"^a\Q+", "a+"));
        assert!(matches(r"^\\d$", "\\d"), "an escaped backslash stays one");
    }

    #[test]
    fn errors_quote_the_pattern_as_written() {
        let e = compile(r"(\d").expect_err("unclosed group");
        assert!(e.starts_with("error parsing regexp: "), "{e}");
        assert!(e.ends_with(r": `(\d`"), "{e}");
    }
}
