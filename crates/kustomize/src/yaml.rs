//! Reading YAML streams into JSON values, and writing objects back as YAML in the style
//! `kustomize build` prints (keys sorted as go-yaml v2 sorts them, its quoting rules, literal
//! blocks for multi-line strings, lines folded after column 80).

use serde_json::{Map, Value};

use tidegate_core::yaml::{Duplicates, ReadOptions, Resolver, StreamReader};

use crate::error::{Error, ErrorKind, Result};

/// One document of a YAML stream and the line it starts on.
#[derive(Debug, Clone)]
pub struct Document {
    /// The document's content.
    pub value: Value,
    /// 1-based line of the document's first line.
    pub line: usize,
}

/// Which of kustomize's readers a text goes through; they type plain scalars differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Resources and strategic-merge patches, read by kyaml (go-yaml v3): `0755` is 493,
    /// `2001-12-14` a timestamp, annotation values keep the text written.
    Objects,
    /// Strategic merge patches: as `Objects`, but a plain null annotation value stays null (it
    /// removes the annotation).
    Patches,
    /// Kustomization files and JSON 6902 patches, read by sigs.k8s.io/yaml (go-yaml v2, YAML
    /// 1.1): `0640` is 416, `yes` and `on` are true.
    Yaml11,
}

impl Dialect {
    fn options(self) -> ReadOptions {
        let mut o = ReadOptions::new(Duplicates::Refuse);
        match self {
            Dialect::Objects | Dialect::Patches => {
                o.resolver = Resolver::GoV3;
                o.annotations_as_text = true;
                o.annotation_nulls = self == Dialect::Patches;
                o.go_folded_round_trip = true;
            }
            Dialect::Yaml11 => {
                // Go's YAML-to-JSON keeps the last of repeated keys.
                o.duplicates = Duplicates::LastWins;
                o.resolver = Resolver::GoV2;
            }
        }
        o
    }
}

/// Parses every non-empty document of a stream of Kubernetes objects (resources, strategic
/// merge patches). `file` names the file in errors.
pub fn parse_stream(text: &str, file: &str) -> Result<Vec<Document>> {
    parse_stream_as(text, file, Dialect::Objects)
}

/// Parses every non-empty document of a YAML stream read as `dialect`.
pub fn parse_stream_as(text: &str, file: &str, dialect: Dialect) -> Result<Vec<Document>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let starts = document_starts(text);
    let mut out = Vec::new();
    let reader = StreamReader::new(text, dialect.options());
    for (i, doc) in yaml_serde::Deserializer::from_str(text).enumerate() {
        // Duplicate keys are refused (kustomize refuses them when it writes the resource out)
        // and alias expansion is bounded.
        let (value, _) = reader.read(doc).map_err(|e| yaml_error(&e, file))?;
        if !value.is_null() {
            out.push(Document {
                value,
                line: starts.get(i).copied().unwrap_or(1),
            });
        }
    }
    Ok(out)
}

/// Parses a text holding one YAML document, read as `dialect`.
pub fn parse_one_as(text: &str, file: &str, dialect: Dialect) -> Result<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    StreamReader::new(text, dialect.options())
        .read(yaml_serde::Deserializer::from_str(text))
        .map(|(v, _)| v)
        .map_err(|e| yaml_error(&e, file))
}

/// Parses one YAML document (a kustomization file, a patch) into a type, naming the file and
/// line on error.
pub fn parse_as<T: serde::de::DeserializeOwned>(text: &str, file: &str) -> Result<T> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    tidegate_core::yaml::check_aliasing(text)
        .map_err(|message| Error::in_file(ErrorKind::InvalidYaml, file, message))?;
    yaml_serde::from_str(text).map_err(|e| yaml_error(&e, file))
}

fn yaml_error(e: &yaml_serde::Error, file: &str) -> Error {
    let line = e.location().map(|l| l.line());
    let mut message = e.to_string();
    // The parser appends "at line L column C"; the line is reported separately.
    if let Some(at) = message.find(" at line ") {
        message.truncate(at);
    }
    let kind = if message.starts_with("unknown field") {
        ErrorKind::UnknownField
    } else {
        ErrorKind::InvalidYaml
    };
    Error::in_file(kind, file, message).at_line(line)
}

/// The 1-based first line of each document: after each `---` marker line.
fn document_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut seen_content = false;
    for (i, line) in text.lines().enumerate() {
        let is_marker = line == "---" || line.starts_with("--- ") || line.starts_with("---\t");
        if is_marker {
            if (seen_content || !starts.is_empty()) && starts.is_empty() {
                starts.push(1);
            }
            starts.push(i + 2);
            seen_content = false;
            continue;
        }
        let t = line.trim();
        if !t.is_empty() && !t.starts_with('#') {
            seen_content = true;
        }
    }
    if starts.is_empty() {
        starts.push(1);
    }
    starts
}

/// Renders objects as a YAML stream, documents separated by `---`.
pub fn to_stream<'a>(objects: impl IntoIterator<Item = &'a Map<String, Value>>) -> String {
    let mut out = String::new();
    for (i, obj) in objects.into_iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        let mut e = Emitter { out: String::new() };
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
    let mut e = Emitter { out: String::new() };
    match value {
        Value::Object(m) if !m.is_empty() => e.map(m, 0),
        Value::Array(a) if !a.is_empty() => e.seq(a, 0),
        other => {
            e.inline(other, 0);
            e.out.push('\n');
        }
    }
    e.out
}

const WIDTH: usize = 80;

struct Emitter {
    out: String,
}

impl Emitter {
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
                self.out.push('\n');
                self.indent(indent);
                self.seq(a, indent);
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
            Value::Number(n) => self.out.push_str(&number(n)),
            Value::String(s) => self.scalar(s, indent, false),
            Value::Array(_) => self.out.push_str("[]"),
            Value::Object(_) => self.out.push_str("{}"),
        }
    }

    fn scalar(&mut self, s: &str, indent: usize, key: bool) {
        let a = analyze(s);
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
                if breaks && !spaces && column > WIDTH && !next_space {
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
                    && column > WIDTH
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
                if breaks && !spaces && column > WIDTH && i != 0 && i != chars.len() - 1 {
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
            self.out.push('2');
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

fn printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7e}' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
        && c != '\u{feff}'
}

/// libyaml's scalar analysis, for block context.
fn analyze(s: &str) -> Analysis {
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
        if !printable(c) || (!c.is_ascii() && c == '\u{feff}') {
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
            looks_like_timestamp(s)
                || tidegate_core::yaml::resolve_plain(s, Resolver::GoV2).is_some()
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
    fn sequences_sit_at_their_key() {
        let v = json!({"a": [{"x": 1, "y": [1, 2]}, [], {}], "b": []});
        assert_eq!(
            to_yaml(&v),
            "a:\n- x: 1\n  \"y\":\n  - 1\n  - 2\n- []\n- {}\nb: []\n"
        );
    }

    #[test]
    fn names_file_and_line_of_bad_yaml() {
        let err = parse_stream("a: 1\n---\nb: [\n", "x.yaml").expect_err("invalid");
        assert_eq!(err.file.as_deref(), Some("x.yaml"));
        assert!(err.line.is_some(), "{err}");
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

    #[test]
    fn document_lines() {
        let docs = parse_stream("# c\na: 1\n---\nb: 2\n---\n\nc: 3\n", "f").expect("parses");
        let lines: Vec<usize> = docs.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![1, 4, 6]);
    }
}
