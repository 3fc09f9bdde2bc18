//! Sprig's regular expressions (Go's RE2 syntax, which Rust's `regex` crate shares):
//! `regexMatch`, `regexFind`, `regexFindAll`, `regexReplaceAll` (with `$1` expansion),
//! `regexReplaceAllLiteral`, `regexSplit`, `regexQuoteMeta`, and their `must` forms.

use regex::Regex;

use super::{i, s};
use crate::template::FuncMap;
use crate::template::func::{Func, Ty};
use crate::template::value::Value;

/// Compiles as Go's `regexp.Compile`, with its error text.
fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| {
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
