//! Writing JSON values as YAML the way go-yaml v2 marshals them after Go's JSON encoder
//! (sigs.k8s.io/yaml): keys in go-yaml v2's order, its quoting rules, literal blocks for
//! multi-line strings, lines folded after column 80. `kustomize build` and Helm's `toYaml`
//! print this way.

use serde_json::{Map, Value};

use super::{Resolver, resolve_plain};

/// Renders objects as a YAML stream, documents separated by `---`.
pub fn to_stream<'a>(objects: impl IntoIterator<Item = &'a Map<String, Value>>) -> String {
    let mut out = String::new();
    for (i, obj) in objects.into_iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        let mut e = Emitter::new(false);
        if obj.is_empty() {
            e.out.push_str("{}\n");
        } else {
            e.map(obj, 0);
        }
        out.push_str(&e.out);
    }
    out
}

/// Renders one value as a YAML document.
pub fn to_yaml(value: &Value) -> String {
    emit(value, Emitter::new(false))
}

/// Renders one value as go-yaml v3's encoder does with `SetIndent(2)` (Helm's
/// `toYamlPretty`): as [`to_yaml`], except that sequences sit two columns in from their key,
/// long lines are not folded, and floats print in Go's shortest `%g` form (`1e+06`, `1.5`).
pub fn to_yaml_v3(value: &Value) -> String {
    emit(value, Emitter::new(true))
}

/// Writes the string `s` as go-yaml v3's encoder writes a string scalar (no line folding), with
/// the cursor at the end of `out`: plain, single-, double-quoted or a literal block whose lines
/// go at column `indent` (a leading space makes the indicator `best_indent`, the encoder's
/// indentation). `key` is for mapping keys, which never take block style.
pub fn write_v3_string(out: &mut String, s: &str, indent: usize, best_indent: usize, key: bool) {
    let mut e = Emitter::new(true);
    e.best_indent = best_indent;
    e.out = std::mem::take(out);
    e.scalar(s, indent, key);
    *out = e.out;
}

fn emit(value: &Value, mut e: Emitter) -> String {
    match value {
        Value::Object(m) if !m.is_empty() => e.map(m, 0),
        Value::Array(a) if !a.is_empty() => e.seq(a, 0),
        other => {
            // A scalar document's continuation lines and block content sit two in, as
            // go-yaml's root indentation puts them.
            e.inline(other, 2);
            e.out.push('\n');
        }
    }
    e.out
}

const WIDTH: usize = 80;

struct Emitter {
    out: String,
    /// go-yaml v3 (indent 2) rather than v2.
    v3: bool,
    /// The column after which plain and quoted scalars fold.
    width: usize,
    /// The indentation a literal block's indicator names when its text starts with a space.
    best_indent: usize,
}

impl Emitter {
    fn new(v3: bool) -> Self {
        Emitter {
            out: String::new(),
            v3,
            width: if v3 { usize::MAX } else { WIDTH },
            best_indent: 2,
        }
    }

    fn column(&self) -> usize {
        match self.out.rfind('\n') {
            Some(i) => self.out[i + 1..].chars().count(),
            None => self.out.chars().count(),
        }
    }

    fn indent(&mut self, n: usize) {
        for _ in 0..n {
            self.out.push(' ');
        }
    }

    /// A block mapping; the cursor is at the start of a line (or after `- `) at `indent`.
    fn map(&mut self, m: &Map<String, Value>, indent: usize) {
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort_by(|a, b| key_order(a, b));
        for (i, k) in keys.into_iter().enumerate() {
            if i > 0 {
                self.indent(indent);
            }
            self.scalar(k, indent, true);
            self.out.push(':');
            self.value_after_key(&m[k], indent);
        }
    }

    fn value_after_key(&mut self, v: &Value, indent: usize) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                self.out.push('\n');
                self.indent(indent + 2);
                self.map(m, indent + 2);
            }
            Value::Array(a) if !a.is_empty() => {
                let at = if self.v3 { indent + 2 } else { indent };
                self.out.push('\n');
                self.indent(at);
                self.seq(a, at);
            }
            other => {
                self.out.push(' ');
                self.inline(other, indent + 2);
                self.out.push('\n');
            }
        }
    }

    /// A block sequence; the cursor is at `indent` where the first `- ` goes.
    fn seq(&mut self, a: &[Value], indent: usize) {
        for (i, v) in a.iter().enumerate() {
            if i > 0 {
                self.indent(indent);
            }
            self.out.push_str("- ");
            match v {
                Value::Object(m) if !m.is_empty() => self.map(m, indent + 2),
                Value::Array(inner) if !inner.is_empty() => self.seq(inner, indent + 2),
                other => {
                    self.inline(other, indent + 2);
                    self.out.push('\n');
                }
            }
        }
    }

    /// A scalar or empty collection on the current line; `indent` is where folded lines go.
    fn inline(&mut self, v: &Value, indent: usize) {
        match v {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) if self.v3 => self.out.push_str(&go_g_number(n)),
            Value::Number(n) => self.out.push_str(&number(n)),
            Value::String(s) => self.scalar(s, indent, false),
            Value::Array(_) => self.out.push_str("[]"),
            Value::Object(_) => self.out.push_str("{}"),
        }
    }

    fn scalar(&mut self, s: &str, indent: usize, key: bool) {
        let a = analyze(s, self.v3);
        let mut style = if s.contains('\n') && !key {
            Style::Literal
        } else if resolves_to_non_string(s) {
            Style::Double
        } else {
            Style::Plain
        };
        if style == Style::Plain && (!a.plain_allowed || (key && a.line_breaks)) {
            style = Style::Single;
        }
        if style == Style::Single && !a.single_allowed {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block_allowed || key) {
            style = Style::Double;
        }
        match style {
            Style::Plain => self.plain(s, indent, !key),
            Style::Single => self.single(s, indent, !key),
            Style::Double => self.double(s, indent, !key),
            Style::Literal => self.literal(s, indent),
        }
    }

    fn plain(&mut self, s: &str, indent: usize, breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        let mut column = self.column();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if breaks && !spaces && column > self.width && !next_space {
                    self.out.push('\n');
                    self.indent(indent);
                    column = indent;
                } else {
                    self.out.push(c);
                    column += 1;
                }
                spaces = true;
            } else {
                self.out.push(c);
                column += 1;
                spaces = false;
            }
        }
    }

    fn single(&mut self, s: &str, indent: usize, breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        self.out.push('\'');
        let mut column = self.column();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if breaks
                    && !spaces
                    && column > self.width
                    && i != 0
                    && i != chars.len() - 1
                    && !next_space
                {
                    self.out.push('\n');
                    self.indent(indent);
                    column = indent;
                } else {
                    self.out.push(c);
                    column += 1;
                }
                spaces = true;
            } else {
                if c == '\'' {
                    self.out.push('\'');
                    column += 1;
                }
                self.out.push(c);
                column += 1;
                spaces = false;
            }
        }
        self.out.push('\'');
    }

    fn double(&mut self, s: &str, indent: usize, breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        self.out.push('"');
        let mut column = self.column();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if breaks && !spaces && column > self.width && i != 0 && i != chars.len() - 1 {
                    self.out.push('\n');
                    self.indent(indent);
                    column = indent;
                    if chars.get(i + 1) == Some(&' ') {
                        self.out.push('\\');
                        column += 1;
                    }
                } else {
                    self.out.push(' ');
                    column += 1;
                }
                spaces = true;
                continue;
            }
            let escaped: Option<String> = match c {
                '\0' => Some("\\0".into()),
                '\u{7}' => Some("\\a".into()),
                '\u{8}' => Some("\\b".into()),
                '\t' => Some("\\t".into()),
                '\n' => Some("\\n".into()),
                '\u{b}' => Some("\\v".into()),
                '\u{c}' => Some("\\f".into()),
                '\r' => Some("\\r".into()),
                '\u{1b}' => Some("\\e".into()),
                '"' => Some("\\\"".into()),
                '\\' => Some("\\\\".into()),
                '\u{85}' => Some("\\N".into()),
                '\u{a0}' => Some("\\_".into()),
                '\u{2028}' => Some("\\L".into()),
                '\u{2029}' => Some("\\P".into()),
                c if !printable(c) || c == '\u{feff}' => {
                    let n = c as u32;
                    Some(if n <= 0xff {
                        format!("\\x{n:02X}")
                    } else if n <= 0xffff {
                        format!("\\u{n:04X}")
                    } else {
                        format!("\\U{n:08X}")
                    })
                }
                _ => None,
            };
            match escaped {
                Some(e) => {
                    column += e.len();
                    self.out.push_str(&e);
                }
                None => {
                    self.out.push(c);
                    column += 1;
                }
            }
            spaces = false;
        }
        self.out.push('"');
    }

    fn literal(&mut self, s: &str, indent: usize) {
        self.out.push('|');
        if s.starts_with(' ') || s.starts_with('\n') {
            self.out.push_str(&self.best_indent.to_string());
        }
        let trailing = s.len() - s.trim_end_matches('\n').len();
        match trailing {
            0 => self.out.push('-'),
            1 => {}
            _ => self.out.push('+'),
        }
        let body = if trailing == 0 { s } else { &s[..s.len() - 1] };
        for line in body.split('\n') {
            self.out.push('\n');
            if !line.is_empty() {
                self.indent(indent);
                self.out.push_str(line);
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

struct Analysis {
    plain_allowed: bool,
    single_allowed: bool,
    block_allowed: bool,
    line_breaks: bool,
}

/// go-yaml's `is_printable`: unlike libyaml, it stops at the Basic Multilingual Plane, so a
/// string holding an emoji is double-quoted with `\U0001F916` escapes.
fn printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7e}' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
        && c != '\u{feff}'
}

/// libyaml's scalar analysis, for block context. go-yaml v3 counts a tab apart from other
/// special characters: it rules out plain and single-quoted style but still allows a literal
/// block (`"a\tb"` is double-quoted, `"a\tb\nc"` a literal block).
fn analyze(s: &str, v3: bool) -> Analysis {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return Analysis {
            plain_allowed: false,
            single_allowed: true,
            block_allowed: false,
            line_breaks: false,
        };
    }
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let mut special = false;
    let mut tabs = false;
    let mut line_breaks = false;
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let followed_by_whitespace = matches!(next, None | Some(' ' | '\t' | '\n' | '\r'));
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' if followed_by_whitespace => block_indicators = true,
                '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if v3 && c == '\t' {
            tabs = true;
        } else if !printable(c) || (!c.is_ascii() && c == '\u{feff}') {
            special = true;
        }
        if c == '\n' {
            line_breaks = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i == chars.len() - 1 {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if c == '\n' {
            if i == 0 {
                leading_break = true;
            }
            if i == chars.len() - 1 {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = matches!(c, ' ' | '\t' | '\n' | '\r');
    }
    let mut plain = true;
    let mut single = true;
    let mut block = true;
    if leading_space || leading_break || trailing_space || trailing_break {
        plain = false;
    }
    if trailing_space {
        block = false;
    }
    if break_space {
        plain = false;
        single = false;
    }
    if space_break || special {
        plain = false;
        single = false;
        block = false;
    }
    if tabs {
        plain = false;
        single = false;
    }
    if line_breaks || block_indicators {
        plain = false;
    }
    Analysis {
        plain_allowed: plain,
        single_allowed: single,
        block_allowed: block,
        line_breaks,
    }
}

/// Whether go-yaml v2 would read this text, unquoted, as something other than a string.
fn resolves_to_non_string(s: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true",
        "True", "TRUE", "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE",
        ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF", "<<",
    ];
    if SPECIAL.contains(&s) || is_base60_float(s) {
        return true;
    }
    let first = s.as_bytes()[0];
    match first {
        b'.' => go_parse_float(s),
        b'0'..=b'9' | b'+' | b'-' => {
            looks_like_timestamp(s) || resolve_plain(s, Resolver::GoV2).is_some()
        }
        _ => false,
    }
}

/// A regular expression compiled once; the patterns are constants checked by this module's tests.
macro_rules! static_regex {
    ($pattern:expr) => {{
        static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        RE.get_or_init(|| regex::Regex::new($pattern).expect("constant pattern"))
    }};
}

fn go_parse_float(s: &str) -> bool {
    s.parse::<f64>().is_ok() || matches!(s.to_ascii_lowercase().as_str(), ".inf" | ".nan")
}

fn is_base60_float(s: &str) -> bool {
    static_regex!(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$").is_match(s)
}

fn looks_like_timestamp(s: &str) -> bool {
    static_regex!(
        r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$"
    )
    .is_match(s)
}

/// A number as go-yaml v2 prints what Go's JSON encoder produced: integral values as integers,
/// others in Go's shortest `%g` form.
fn number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f.fract() == 0.0 && f.abs() < 1e21 {
        return format!("{}", f as i128);
    }
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((e.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..21).contains(&exp) || (exp >= 6 && f.fract() != 0.0) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// A number as go-yaml v3 writes a Go value: integers as they are, floats as
/// `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits, with an exponent below 1e-4
/// and from 1e6 (`1e+06`, `1.5`, `1`).
fn go_g_number(n: &serde_json::Number) -> String {
    if !n.is_f64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((e.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if f != 0.0 && !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// A number as Go's `encoding/json` writes it: integers as they are, floats in the shortest
/// form, with an exponent below 1e-6 and from 1e21.
pub fn go_json_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let e = format!("{f:e}");
        match e.split_once('e') {
            Some((m, x)) if !x.starts_with('-') => format!("{m}e+{x}"),
            _ => e,
        }
    } else {
        format!("{f}")
    }
}

/// go-yaml v2's key order: letters compare by code point, non-letters sort before letters, and
/// runs of digits compare as numbers.
pub fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// As helm's `toYamlPretty` (go-yaml v3) and `toYaml` (v2) print them.
    #[test]
    fn tabs_keep_v3_literal_blocks_but_quote_in_v2() {
        let v = json!({"v": "a\tb", "w": "value\nwith\ttab"});
        assert_eq!(
            to_yaml_v3(&v),
            "v: \"a\\tb\"\nw: |-\n  value\n  with\ttab\n"
        );
        assert_eq!(to_yaml(&v), "v: \"a\\tb\"\nw: \"value\\nwith\\ttab\"\n");
    }

    #[test]
    fn quotes_and_orders_like_kustomize() {
        let v = json!({"data": {"a10": "x", "a9": "yes", "1": "1.0", "b": "a: b", "c": "*",
            "d": "multi\nline", "e": "", "f": " x", "g": "it's", "A": 1.5, "h": 1000000.0}});
        let out = to_yaml(&v);
        assert_eq!(
            out,
            "data:\n  \"1\": \"1.0\"\n  A: 1.5\n  a9: \"yes\"\n  a10: x\n  b: 'a: b'\n  c: '*'\n  d: |-\n    multi\n    line\n  e: \"\"\n  f: ' x'\n  g: it's\n  h: 1000000\n"
        );
    }

    #[test]
    fn folds_long_plain_strings_after_column_80() {
        let v = json!({"long": "this is a very long string with many spaces that goes on and on beyond eighty characters for sure yes"});
        assert_eq!(
            to_yaml(&v),
            "long: this is a very long string with many spaces that goes on and on beyond eighty\n  characters for sure yes\n"
        );
    }

    #[test]
    fn scalar_documents_indent_their_continuations() {
        assert_eq!(to_yaml(&json!("a\nb: c\n  d\n")), "|\n  a\n  b: c\n    d\n");
        assert_eq!(to_yaml(&json!(" lead\nx")), "|2-\n   lead\n  x\n");
        assert_eq!(to_yaml(&json!("short")), "short\n");
    }

    #[test]
    fn sequences_sit_at_their_key() {
        let v = json!({"a": [{"x": 1, "y": [1, 2]}, [], {}], "b": []});
        assert_eq!(
            to_yaml(&v),
            "a:\n- x: 1\n  \"y\":\n  - 1\n  - 2\n- []\n- {}\nb: []\n"
        );
    }

    #[test]
    fn recognises_go_yaml_v2_non_strings() {
        for s in [
            "2001-01-01",
            "1:20",
            "1.5e3",
            "0755",
            "0x1F",
            "yes",
            "~",
            "",
        ] {
            assert!(resolves_to_non_string(s), "{s}");
        }
        for s in ["1.2.3", "v1", "0x", "abc", "2001-01"] {
            assert!(!resolves_to_non_string(s), "{s}");
        }
    }
}
