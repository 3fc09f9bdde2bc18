//! Sprig's string functions: `trunc`, `quote`, `indent`, `replace`, `title`, case
//! conversions (huandu/xstrings), abbreviations and wrapping (Masterminds/goutils), `split`,
//! `join`, random strings and the rest.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::{i, s, strval};
use crate::template::func::{Func, Ty};
use crate::template::value::{MapKind, Value};
use crate::template::{FuncMap, fmt, quote};

fn text(
    f: impl Fn(&str) -> String + 'static,
) -> impl Fn(&mut crate::template::State, Vec<Value>) -> Result<Value, String> {
    move |_, a| Ok(Value::str(&f(s(&a[0]))))
}

fn text2(
    f: impl Fn(&str, &str) -> String + 'static,
) -> impl Fn(&mut crate::template::State, Vec<Value>) -> Result<Value, String> {
    move |_, a| Ok(Value::str(&f(s(&a[0]), s(&a[1]))))
}

pub(super) fn register(m: &mut FuncMap) {
    use Ty::{Any, Int, String as Str};
    m.insert(Func::new("hello", &[], None, |_, _| {
        Ok(Value::str("Hello!"))
    }));
    m.insert(Func::new("abbrev", &[Int, Str], None, |_, a| {
        let (w, v) = (i(&a[0]), s(&a[1]));
        Ok(Value::str(&if w < 4 {
            v.to_string()
        } else {
            abbreviate(v, 0, w as usize)
        }))
    }));
    m.insert(Func::new("abbrevboth", &[Int, Int, Str], None, |_, a| {
        let (left, right, v) = (i(&a[0]), i(&a[1]), s(&a[2]));
        if right < 4 || left > 0 && right < 7 {
            return Ok(Value::str(v));
        }
        Ok(Value::str(&abbreviate(
            v,
            left.max(0) as usize,
            right as usize,
        )))
    }));
    m.insert(Func::new("trunc", &[Int, Str], None, |_, a| {
        let (c, v) = (i(&a[0]), s(&a[1]));
        let len = v.len() as i64;
        let out = if c < 0 && len + c > 0 {
            byte_slice(v, (len + c) as usize, v.len())
        } else if c >= 0 && len > c {
            byte_slice(v, 0, c as usize)
        } else {
            v.to_string()
        };
        Ok(Value::str(&out))
    }));
    m.insert(Func::new(
        "trim",
        &[Str],
        None,
        text(|v| v.trim_matches(is_go_space).to_string()),
    ));
    m.insert(Func::new("upper", &[Str], None, text(str::to_uppercase)));
    m.insert(Func::new("lower", &[Str], None, text(str::to_lowercase)));
    m.insert(Func::new("title", &[Str], None, text(title)));
    m.insert(Func::new(
        "untitle",
        &[Str],
        None,
        text(|v| {
            // goutils' Uncapitalize: the first letter of every whitespace-separated word.
            let mut out = String::with_capacity(v.len());
            let mut next = true;
            for c in v.chars() {
                if is_go_space(c) {
                    next = true;
                    out.push(c);
                } else if next {
                    out.extend(c.to_lowercase());
                    next = false;
                } else {
                    out.push(c);
                }
            }
            out
        }),
    ));
    m.insert(Func::new("substr", &[Int, Int, Str], None, |_, a| {
        let (start, end, v) = (i(&a[0]), i(&a[1]), s(&a[2]));
        let len = v.len() as i64;
        let out = if start < 0 {
            if end < 0 || end > len {
                return Err(format!(
                    "runtime error: slice bounds out of range [:{end}] with length {len}"
                ));
            }
            byte_slice(v, 0, end as usize)
        } else if end < 0 || end > len {
            if start > len {
                return Err(format!(
                    "runtime error: slice bounds out of range [{start}:{len}]"
                ));
            }
            byte_slice(v, start as usize, v.len())
        } else {
            if start > end {
                return Err(format!(
                    "runtime error: slice bounds out of range [{start}:{end}]"
                ));
            }
            byte_slice(v, start as usize, end as usize)
        };
        Ok(Value::str(&out))
    }));
    m.insert(Func::new("repeat", &[Int, Str], None, |_, a| {
        let n = i(&a[0]);
        if n < 0 {
            return Err("strings: negative Repeat count".into());
        }
        Ok(Value::str(&s(&a[1]).repeat(n as usize)))
    }));
    m.insert(Func::new(
        "trimall",
        &[Str, Str],
        None,
        text2(|cut, v| v.trim_matches(|c| cut.contains(c)).to_string()),
    ));
    m.insert(Func::new(
        "trimAll",
        &[Str, Str],
        None,
        text2(|cut, v| v.trim_matches(|c| cut.contains(c)).to_string()),
    ));
    m.insert(Func::new(
        "trimSuffix",
        &[Str, Str],
        None,
        text2(|x, v| v.strip_suffix(x).unwrap_or(v).to_string()),
    ));
    m.insert(Func::new(
        "trimPrefix",
        &[Str, Str],
        None,
        text2(|x, v| v.strip_prefix(x).unwrap_or(v).to_string()),
    ));
    m.insert(Func::new(
        "nospace",
        &[Str],
        None,
        text(|v| {
            // goutils walks bytes as runes.
            if v.bytes().all(|b| !is_go_space(b as char)) {
                return v.to_string();
            }
            v.bytes()
                .filter(|b| !is_go_space(*b as char))
                .map(|b| b as char)
                .collect()
        }),
    ));
    m.insert(Func::new(
        "initials",
        &[Str],
        None,
        text(|v| {
            let mut out = String::new();
            let mut gap = true;
            for b in v.bytes() {
                let c = b as char;
                if is_go_space(c) {
                    gap = true;
                } else if gap {
                    out.push(c);
                    gap = false;
                }
            }
            out
        }),
    ));
    m.insert(Func::new("randAlphaNum", &[Int], None, |_, a| {
        random(i(&a[0]), ALPHANUMERIC)
    }));
    m.insert(Func::new("randAlpha", &[Int], None, |_, a| {
        random(i(&a[0]), ALPHA)
    }));
    m.insert(Func::new("randAscii", &[Int], None, |_, a| {
        let ascii: Vec<char> = (32u8..127).map(char::from).collect();
        random(i(&a[0]), &ascii.iter().collect::<String>())
    }));
    m.insert(Func::new("randNumeric", &[Int], None, |_, a| {
        random(i(&a[0]), "0123456789")
    }));
    m.insert(Func::new("swapcase", &[Str], None, text(swap_case)));
    m.insert(Func::new(
        "shuffle",
        &[Str],
        None,
        text(|v| {
            let mut chars: Vec<char> = v.chars().collect();
            for idx in (1..chars.len()).rev() {
                let j = (rand_u64() % (idx as u64 + 1)) as usize;
                chars.swap(idx, j);
            }
            chars.into_iter().collect()
        }),
    ));
    m.insert(Func::new(
        "snakecase",
        &[Str],
        None,
        text(|v| camel_to_lower(v, '_')),
    ));
    m.insert(Func::new(
        "kebabcase",
        &[Str],
        None,
        text(|v| camel_to_lower(v, '-')),
    ));
    m.insert(Func::new("camelcase", &[Str], None, text(pascal_case)));
    m.insert(Func::new("wrap", &[Int, Str], None, |_, a| {
        Ok(Value::str(&wrap(s(&a[1]), i(&a[0]), "\n", true)))
    }));
    m.insert(Func::new("wrapWith", &[Int, Str, Str], None, |_, a| {
        Ok(Value::str(&wrap(s(&a[2]), i(&a[0]), s(&a[1]), true)))
    }));
    m.insert(Func::new("contains", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(s(&a[1]).contains(s(&a[0]))))
    }));
    m.insert(Func::new("hasPrefix", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(s(&a[1]).starts_with(s(&a[0]))))
    }));
    m.insert(Func::new("hasSuffix", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(s(&a[1]).ends_with(s(&a[0]))))
    }));
    m.insert(Func::new("quote", &[], Some(Any), |_, a| {
        let out: Vec<String> = a
            .iter()
            .filter(|v| !v.is_nil() || matches!(v, Value::NilList(_) | Value::NilMap(_)))
            .map(|v| fmt::sprintf("%q", &[Value::str(&strval(v))]))
            .collect();
        Ok(Value::str(&out.join(" ")))
    }));
    m.insert(Func::new("squote", &[], Some(Any), |_, a| {
        let out: Vec<String> = a
            .iter()
            .filter(|v| !matches!(v, Value::Nil | Value::Invalid))
            .map(|v| fmt::sprintf("'%v'", std::slice::from_ref(v)))
            .collect();
        Ok(Value::str(&out.join(" ")))
    }));
    m.insert(Func::new("cat", &[], Some(Any), |_, a| {
        let v: Vec<Value> = a
            .into_iter()
            .filter(|v| !matches!(v, Value::Nil | Value::Invalid))
            .collect();
        let format = "%v ".repeat(v.len());
        Ok(Value::str(&fmt::sprintf(
            format.trim_matches(is_go_space),
            &v,
        )))
    }));
    m.insert(Func::new("indent", &[Int, Str], None, |_, a| {
        Ok(Value::str(&indent(i(&a[0]), s(&a[1]))))
    }));
    m.insert(Func::new("nindent", &[Int, Str], None, |_, a| {
        Ok(Value::str(&format!("\n{}", indent(i(&a[0]), s(&a[1])))))
    }));
    m.insert(Func::new("replace", &[Str, Str, Str], None, |_, a| {
        Ok(Value::str(&go_replace(s(&a[2]), s(&a[0]), s(&a[1]))))
    }));
    m.insert(Func::new("plural", &[Str, Str, Int], None, |_, a| {
        Ok(if i(&a[2]) == 1 {
            a[0].clone()
        } else {
            a[1].clone()
        })
    }));
    m.insert(Func::new("toString", &[Any], None, |_, a| {
        Ok(Value::str(&strval(&a[0])))
    }));
    m.insert(Func::new("split", &[Str, Str], None, |_, a| {
        Ok(parts_map(go_split(s(&a[1]), s(&a[0]), -1)))
    }));
    m.insert(Func::new("splitn", &[Str, Int, Str], None, |_, a| {
        Ok(parts_map(go_split(s(&a[2]), s(&a[0]), i(&a[1]))))
    }));
    m.insert(Func::new("splitList", &[Str, Str], None, |_, a| {
        Ok(Value::string_list(go_split(s(&a[1]), s(&a[0]), -1)))
    }));
    m.insert(Func::new("toStrings", &[Any], None, |_, a| {
        Ok(Value::string_list(strslice(&a[0])))
    }));
    m.insert(Func::new("join", &[Str, Any], None, |_, a| {
        Ok(Value::str(&strslice(&a[1]).join(s(&a[0]))))
    }));
    m.insert(Func::new("sortAlpha", &[Any], None, |_, a| {
        if super::items(&a[0]).is_some() {
            let mut v = strslice(&a[0]);
            v.sort();
            return Ok(Value::string_list(v));
        }
        Ok(Value::string_list(vec![strval(&a[0])]))
    }));
    // Helm turns DNS lookups off; Sprig's function then answers nothing.
    m.insert(Func::new("getHostByName", &[Str], None, |_, _| {
        Ok(Value::str(""))
    }));
    m.insert(Func::new("base", &[Str], None, text(path_base)));
    m.insert(Func::new("dir", &[Str], None, text(path_dir)));
    m.insert(Func::new("clean", &[Str], None, text(path_clean)));
    m.insert(Func::new("ext", &[Str], None, text(path_ext)));
    m.insert(Func::new("isAbs", &[Str], None, |_, a| {
        Ok(Value::Bool(s(&a[0]).starts_with('/')))
    }));
    m.alias("osBase", "base");
    m.alias("osDir", "dir");
    m.alias("osClean", "clean");
    m.alias("osExt", "ext");
    m.alias("osIsAbs", "isAbs");
    m.insert(Func::new("urlParse", &[Str], None, |_, a| {
        url_parse(s(&a[0]))
    }));
    m.insert(Func::new("urlJoin", &[Ty::Map], None, |_, a| {
        url_join(&a[0])
    }));
}

/// Go's `unicode.IsSpace`.
pub(crate) fn is_go_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    ) || (c as u32 > 0xff && c.is_whitespace())
}

/// A byte range of a string, as Go slices strings (a cut inside a character keeps its bytes
/// as replacement characters).
fn byte_slice(v: &str, from: usize, to: usize) -> String {
    String::from_utf8_lossy(&v.as_bytes()[from.min(v.len())..to.min(v.len())]).into_owned()
}

/// Go's `strings.Replace(s, old, new, -1)`: an empty `old` inserts between characters.
pub(crate) fn go_replace(v: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        let mut out = String::from(new);
        for c in v.chars() {
            out.push(c);
            out.push_str(new);
        }
        return out;
    }
    v.replace(old, new)
}

/// Go's `strings.SplitN` (n < 0: all), an empty separator splitting into characters.
pub(crate) fn go_split(v: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        let chars: Vec<String> = v.chars().map(String::from).collect();
        if n > 0 && chars.len() > n as usize {
            let head: Vec<String> = chars[..n as usize - 1].to_vec();
            let tail: String = chars[n as usize - 1..].concat();
            return head.into_iter().chain(std::iter::once(tail)).collect();
        }
        return chars;
    }
    if n < 0 {
        v.split(sep).map(String::from).collect()
    } else {
        v.splitn(n as usize, sep).map(String::from).collect()
    }
}

fn parts_map(parts: Vec<String>) -> Value {
    let map: BTreeMap<String, Value> = parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| (format!("_{i}"), Value::str(&p)))
        .collect();
    Value::Map(Rc::new(RefCell::new(map)), MapKind::String)
}

/// Sprig's `strslice`: a list's elements as strings (nils dropped); anything else one string.
pub(crate) fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::Invalid | Value::Nil => Vec::new(),
        v => match super::items(v) {
            Some(items) => items
                .iter()
                .filter(|x| !matches!(x, Value::Nil | Value::Invalid))
                .map(strval)
                .collect(),
            None => vec![strval(v)],
        },
    }
}

fn indent(spaces: i64, v: &str) -> String {
    let pad = " ".repeat(spaces.max(0) as usize);
    format!("{pad}{}", v.replace('\n', &format!("\n{pad}")))
}

/// Go's deprecated `strings.Title`: the first letter of each word upper-cased; words are
/// separated by anything but letters, digits and `_`.
fn title(v: &str) -> String {
    fn is_separator(r: char) -> bool {
        if r.is_ascii() {
            return !(r.is_ascii_alphanumeric() || r == '_');
        }
        if r.is_alphabetic() || r.is_numeric() {
            return false;
        }
        is_go_space(r)
    }
    let mut out = String::with_capacity(v.len());
    let mut prev = ' ';
    for c in v.chars() {
        if is_separator(prev) {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev = c;
    }
    out
}

fn swap_case(v: &str) -> String {
    v.chars()
        .flat_map(|c| -> Vec<char> {
            if c.is_uppercase() {
                c.to_lowercase().collect()
            } else if c.is_lowercase() {
                c.to_uppercase().collect()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// goutils' `AbbreviateFull`.
fn abbreviate(v: &str, offset: usize, max_width: usize) -> String {
    if v.is_empty() || max_width < 4 || v.len() <= max_width {
        return v.to_string();
    }
    let len = v.len();
    let mut offset = offset.min(len);
    if len - offset < max_width - 3 {
        offset = len - (max_width - 3);
    }
    if offset <= 4 {
        return format!("{}...", byte_slice(v, 0, max_width - 3));
    }
    if max_width < 7 {
        return String::new();
    }
    if offset + max_width - 3 < len {
        return format!(
            "...{}",
            abbreviate(&byte_slice(v, offset, len), 0, max_width - 3)
        );
    }
    format!("...{}", byte_slice(v, len - (max_width - 3), len))
}

/// goutils' `WrapCustom`.
fn wrap(v: &str, width: i64, newline: &str, long_words: bool) -> String {
    if v.is_empty() {
        return String::new();
    }
    let newline = if newline.is_empty() { "\n" } else { newline };
    let width = width.max(1) as usize;
    let b = v.as_bytes();
    let len = b.len();
    let mut offset = 0;
    let mut out: Vec<u8> = Vec::new();
    while len - offset > width {
        if b[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = (width + offset + 1).min(len);
        match b[offset..end].iter().rposition(|c| *c == b' ') {
            Some(at) => {
                out.extend_from_slice(&b[offset..offset + at]);
                out.extend_from_slice(newline.as_bytes());
                offset += at + 1;
            }
            None if long_words => {
                out.extend_from_slice(&b[offset..width + offset]);
                out.extend_from_slice(newline.as_bytes());
                offset += width;
            }
            None => {
                let end = width + offset;
                match b[end..].iter().position(|c| *c == b' ') {
                    None => {
                        out.extend_from_slice(&b[offset..]);
                        offset = len;
                    }
                    Some(at) => {
                        out.extend_from_slice(&b[offset..end + at]);
                        out.extend_from_slice(newline.as_bytes());
                        offset = end + at + 1;
                    }
                }
            }
        }
    }
    out.extend_from_slice(&b[offset..]);
    String::from_utf8_lossy(&out).into_owned()
}

const ALPHANUMERIC: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const ALPHA: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// A random number.
pub(crate) fn rand_u64() -> u64 {
    rand::random::<u64>()
}

fn random(count: i64, alphabet: &str) -> Result<Value, String> {
    if count < 0 {
        return Ok(Value::str(""));
    }
    let chars: Vec<char> = alphabet.chars().collect();
    let out: String = (0..count)
        .map(|_| chars[(rand_u64() % chars.len() as u64) as usize])
        .collect();
    Ok(Value::str(&out))
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || is_go_space(c)
}

fn is_alphabet(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphabetic()
    } else {
        c.is_alphabetic()
    }
}

/// Go's `unicode.IsPunct` for the characters charts use.
fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_punctuation() && !"$+<=>^`|~".contains(c)
    } else {
        matches!(c as u32, 0x2010..=0x2027 | 0x2030..=0x205E | 0x3001..=0x3003 | 0xFF01..=0xFF0F)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

/// xstrings' `nextWord`: the kind and text of the next word and the rest.
fn next_word(v: &str) -> (Word, &str, &str) {
    let mut chars = v.char_indices().peekable();
    let Some((_, first)) = chars.next() else {
        return (Word::Invalid, "", "");
    };
    let mut end = first.len_utf8();
    let take_while = |pred: &dyn Fn(char) -> bool, mut end: usize| {
        for c in v[end..].chars() {
            if !pred(c) {
                break;
            }
            end += c.len_utf8();
        }
        end
    };
    let kind;
    if is_connector(first) {
        kind = Word::Connector;
        end = take_while(&is_connector, end);
    } else if is_punct(first) {
        kind = Word::Punct;
        end = take_while(&is_punct, end);
    } else if first.is_uppercase() {
        kind = Word::Upper;
        let mut rest = v[end..].chars();
        match rest.next() {
            Some(c) if c.is_uppercase() => {
                let mut prev = c.len_utf8();
                end += prev;
                let mut next = None;
                for c in v[end..].chars() {
                    if !c.is_uppercase() {
                        next = Some(c);
                        break;
                    }
                    prev = c.len_utf8();
                    end += prev;
                }
                if let Some(c) = next
                    && is_alphabet(c)
                {
                    end -= prev;
                }
            }
            Some(c) if is_alphabet(c) => {
                end += c.len_utf8();
                end = take_while(&|c| is_alphabet(c) && !c.is_uppercase(), end);
            }
            _ => {}
        }
    } else if is_alphabet(first) {
        kind = Word::Alphabet;
        end = take_while(&|c| is_alphabet(c) && !c.is_uppercase(), end);
    } else if first.is_numeric() {
        kind = Word::Number;
        end = take_while(&char::is_numeric, end);
    } else {
        kind = Word::Other;
        end = take_while(
            &|c| !(is_connector(c) || is_alphabet(c) || c.is_numeric() || is_punct(c)),
            end,
        );
    }
    (kind, &v[..end], &v[end..])
}

fn to_lower(out: &mut String, kind: Word, word: &str, connector: char) {
    if kind != Word::Upper && kind != Word::Connector {
        out.push_str(word);
        return;
    }
    for c in word.chars() {
        if is_connector(c) {
            out.push(connector);
        } else if c.is_uppercase() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
}

/// xstrings' `camelCaseToLowerCase` (`snakecase`, `kebabcase`).
fn camel_to_lower(v: &str, connector: char) -> String {
    if v.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let (mut wt, mut word, mut remaining) = next_word(v);
    while !remaining.is_empty() {
        if wt != Word::Connector {
            to_lower(&mut out, wt, word, connector);
        }
        let prev = wt;
        let last = word;
        (wt, word, remaining) = next_word(remaining);
        match prev {
            Word::Number => {
                while wt == Word::Alphabet || wt == Word::Number {
                    to_lower(&mut out, wt, word, connector);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Word::Invalid && wt != Word::Punct && wt != Word::Connector {
                    out.push(connector);
                }
            }
            Word::Connector => to_lower(&mut out, prev, last, connector),
            Word::Punct => {}
            _ => {
                if wt != Word::Number {
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                if remaining.is_empty() {
                    continue;
                }
                let last = word;
                (wt, word, remaining) = next_word(remaining);
                if wt != Word::Alphabet {
                    to_lower(&mut out, Word::Number, last, connector);
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                out.push(connector);
                to_lower(&mut out, Word::Number, last, connector);
                while wt == Word::Alphabet || wt == Word::Number {
                    to_lower(&mut out, wt, word, connector);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Word::Invalid && wt != Word::Connector && wt != Word::Punct {
                    out.push(connector);
                }
            }
        }
    }
    to_lower(&mut out, wt, word, connector);
    out
}

/// xstrings' upper camel case (Sprig's `camelcase`): connectors dropped, the letter after
/// each upper-cased, leading connectors kept.
fn pascal_case(v: &str) -> String {
    let mut out = String::new();
    let mut chars = v.chars();
    let mut r0 = '\0';
    let mut found = false;
    for c in chars.by_ref() {
        if !is_connector(c) {
            r0 = c.to_uppercase().next().unwrap_or(c);
            found = true;
            break;
        }
        out.push(c);
    }
    if !found {
        return out;
    }
    for c in chars {
        let r1 = r0;
        r0 = c;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            r0 = r0.to_uppercase().next().unwrap_or(r0);
        } else {
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

/// Go's `path.Clean`.
pub fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `path.Base`.
pub(crate) fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

/// Go's `path.Dir`.
pub(crate) fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

/// Go's `path.Ext`.
pub(crate) fn path_ext(p: &str) -> String {
    for (i, c) in p.char_indices().rev() {
        if c == '/' {
            break;
        }
        if c == '.' {
            return p[i..].to_string();
        }
    }
    String::new()
}

fn url_parse(v: &str) -> Result<Value, String> {
    let parsed = super::encoding::parse_url(v).map_err(|e| format!("unable to parse url: {e}"))?;
    let mut map = BTreeMap::new();
    for (k, val) in parsed {
        map.insert(k.to_string(), Value::str(&val));
    }
    Ok(Value::map(map))
}

fn url_join(d: &Value) -> Result<Value, String> {
    let m = super::map_ref(d)
        .map(|m| m.borrow().clone())
        .unwrap_or_default();
    let get = |key: &str| -> Result<String, String> {
        match m.get(key) {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.to_string()),
            Some(other) => Err(format!(
                "unable to parse {key} key, must be of type string, but {} found",
                super::kind(other)?
            )),
        }
    };
    let (scheme, host, path, query, opaque, fragment, user) = (
        get("scheme")?,
        get("host")?,
        get("path")?,
        get("query")?,
        get("opaque")?,
        get("fragment")?,
        get("userinfo")?,
    );
    Ok(Value::str(&super::encoding::url_string(
        &scheme, &host, &path, &query, &opaque, &fragment, &user,
    )))
}

/// The quoted form `%q` gives a string, for other modules.
pub(crate) fn go_quote(v: &str) -> String {
    quote::quote(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_conversions_as_xstrings() {
        assert_eq!(camel_to_lower("FirstName", '_'), "first_name");
        assert_eq!(camel_to_lower("HTTPServer", '_'), "http_server");
        assert_eq!(camel_to_lower("NoHTTPS", '_'), "no_https");
        assert_eq!(camel_to_lower("GO_PATH", '_'), "go_path");
        assert_eq!(camel_to_lower("GO PATH", '_'), "go_path");
        assert_eq!(camel_to_lower("GO-PATH", '_'), "go_path");
        assert_eq!(camel_to_lower("http2xx", '_'), "http_2xx");
        assert_eq!(camel_to_lower("HTTP20xOK", '_'), "http_20x_ok");
        assert_eq!(camel_to_lower("Duration2m3s", '_'), "duration_2m3s");
        assert_eq!(camel_to_lower("Bld4Floor3rd", '_'), "bld4_floor_3rd");
        assert_eq!(camel_to_lower("FirstName", '-'), "first-name");
        assert_eq!(pascal_case("some_words"), "SomeWords");
        assert_eq!(pascal_case("http_server"), "HttpServer");
        assert_eq!(pascal_case("_complex__case_"), "_Complex_Case_");
        assert_eq!(title("hello world-foo bar_baz"), "Hello World-Foo Bar_baz");
        assert_eq!(
            wrap("this is a long line to wrap", 10, "\n", true),
            "this is a\nlong line\nto wrap"
        );
        assert_eq!(abbreviate("hello world", 0, 5), "he...");
        assert_eq!(path_clean("a/../b//c/."), "b/c");
        assert_eq!(path_dir("/a/b/c"), "/a/b");
        assert_eq!(path_base("/a/b/"), "b");
        assert_eq!(path_ext("x/y.tar.gz"), ".gz");
    }
}
