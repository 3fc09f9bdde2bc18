//! How Go's YAML libraries type a plain scalar that YAML 1.2's core schema leaves a string.
//!
//! kustomize reads resources and strategic-merge patches with go-yaml v3 (through kyaml) and
//! kustomization files and JSON 6902 patches with go-yaml v2 (through sigs.k8s.io/yaml, YAML
//! 1.1). Both accept forms the YAML 1.2 core schema calls strings: `0755` (octal, 493),
//! `1_000`, `0X1F`, `08` (a float), and v2 also `yes`/`no`/`on`/`off`/`y`/`n`. go-yaml v3
//! further reads `2001-12-14` as a timestamp, which kustomize writes back as RFC 3339.

use serde_json::Value;

/// Which Go YAML library's rules type a plain scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Resolver {
    /// The YAML 1.2 core schema, as the parser types scalars by itself.
    #[default]
    Yaml12,
    /// go-yaml v3, as kyaml reads resources and patches (timestamps become RFC 3339 text).
    GoV3,
    /// go-yaml v2 (YAML 1.1 booleans), as sigs.k8s.io/yaml reads kustomization files and
    /// JSON 6902 patches.
    GoV2,
}

/// The value a plain scalar `s` resolves to under `resolver` when that differs from a string.
/// Only called for scalars the YAML 1.2 parser left as strings.
pub fn resolve_plain(s: &str, resolver: Resolver) -> Option<Value> {
    if resolver == Resolver::Yaml12 || s.is_empty() {
        return None;
    }
    if resolver == Resolver::GoV2 {
        match s {
            "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => {
                return Some(Value::Bool(true));
            }
            "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => {
                return Some(Value::Bool(false));
            }
            _ => {}
        }
    }
    let first = s.as_bytes()[0];
    if first == b'.' {
        return go_parse_float(s).map(float);
    }
    if !(first.is_ascii_digit() || first == b'+' || first == b'-') {
        return None;
    }
    if resolver == Resolver::GoV3
        && let Some(t) = timestamp(s)
    {
        return Some(Value::String(t));
    }
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if let Some(i) = go_parse_int(&plain) {
        return Some(i);
    }
    if yaml_style_float(&plain)
        && let Some(f) = go_parse_float(&plain)
    {
        return Some(float(f));
    }
    None
}

fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// Go's `strconv.ParseInt(s, 0, 64)`, then `ParseUint(s, 0, 64)`: a sign, then a `0x`, `0o`,
/// `0b` or `0` (octal) prefix or decimal digits.
fn go_parse_int(s: &str) -> Option<Value> {
    let (negative, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (digits, radix) =
        if let Some(r) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            (r, 16)
        } else if let Some(r) = rest.strip_prefix("0o").or_else(|| rest.strip_prefix("0O")) {
            (r, 8)
        } else if let Some(r) = rest.strip_prefix("0b").or_else(|| rest.strip_prefix("0B")) {
            (r, 2)
        } else if rest.len() > 1 && rest.starts_with('0') {
            (&rest[1..], 8)
        } else {
            (rest, 10)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        if magnitude <= i64::MAX as u64 {
            Some(Value::from(-(magnitude as i64)))
        } else if magnitude == i64::MAX as u64 + 1 {
            Some(Value::from(i64::MIN))
        } else {
            None
        }
    } else if s.starts_with('+') && magnitude > i64::MAX as u64 {
        // ParseUint takes no sign.
        None
    } else {
        Some(Value::from(magnitude))
    }
}

/// go-yaml's `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for the decimal forms YAML can reach; out of range is an
/// error there too.
fn go_parse_float(s: &str) -> Option<f64> {
    if !yaml_style_float(s) {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// go-yaml v3's timestamp forms (`2006-1-2T15:4:5.999999999Z07:00`, the same with `t`,
/// `2006-1-2 15:4:5.999999999`, `2006-1-2`), written back as Go's `time.Time` marshals to
/// JSON (RFC 3339 with nanoseconds, trailing zeros dropped).
fn timestamp(s: &str) -> Option<String> {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    let mut p = Cursor { b, i: 5 };
    let year: u32 = s[..4].parse().ok()?;
    let month = p.number(1, 2)?;
    p.expect(b'-')?;
    let day = p.number(1, 2)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let date = format!("{year:04}-{month:02}-{day:02}");
    if p.done() {
        return Some(format!("{date}T00:00:00Z"));
    }
    let sep = p.next()?;
    if !matches!(sep, b'T' | b't' | b' ') {
        return None;
    }
    let hour = p.number(1, 2)?;
    p.expect(b':')?;
    let minute = p.number(1, 2)?;
    p.expect(b':')?;
    let second = p.number(1, 2)?;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut fraction = String::new();
    if matches!(p.peek(), Some(b'.' | b',')) && p.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
        p.i += 1;
        while let Some(c) = p.peek().filter(u8::is_ascii_digit) {
            if fraction.len() < 9 {
                fraction.push(c as char);
            }
            p.i += 1;
        }
    }
    let fraction = fraction.trim_end_matches('0');
    let fraction = if fraction.is_empty() {
        String::new()
    } else {
        format!(".{fraction}")
    };
    let zone = if sep == b' ' {
        "Z".to_string()
    } else {
        match p.next()? {
            b'Z' => "Z".to_string(),
            sign @ (b'+' | b'-') => {
                let hh = p.number(2, 2)?;
                p.expect(b':')?;
                let mm = p.number(2, 2)?;
                if hh == 0 && mm == 0 {
                    "Z".to_string()
                } else {
                    format!("{}{hh:02}:{mm:02}", sign as char)
                }
            }
            _ => return None,
        }
    };
    if !p.done() {
        return None;
    }
    Some(format!(
        "{date}T{hour:02}:{minute:02}:{second:02}{fraction}{zone}"
    ))
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn done(&self) -> bool {
        self.i >= self.b.len()
    }
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn peek_at(&self, n: usize) -> Option<u8> {
        self.b.get(self.i + n).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }
    fn expect(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }
    /// `min` to `max` decimal digits.
    fn number(&mut self, min: usize, max: usize) -> Option<u32> {
        let start = self.i;
        while self.i - start < max && self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        if self.i - start < min {
            return None;
        }
        std::str::from_utf8(&self.b[start..self.i])
            .ok()?
            .parse()
            .ok()
    }
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each plain scalar and what `kubectl kustomize` (kustomize v5.5) wrote for it in a
    /// resource (go-yaml v3 rules), as JSON.
    #[test]
    fn go_yaml_v3_resolution_as_kubectl_kustomize_prints_it() {
        let cases = [
            ("0755", json!(493)),
            ("-0755", json!(-493)),
            ("1_000", json!(1000)),
            ("0o17", json!(15)),
            ("0X1F", json!(31)),
            ("08", json!(8.0)),
            ("00", json!(0)),
            ("0.1_0", json!(0.1)),
            ("0755.5", json!(755.5)),
            ("1_0.5", json!(10.5)),
            ("2001-12-14", json!("2001-12-14T00:00:00Z")),
            (
                "2001-12-14t21:59:43.10-05:00",
                json!("2001-12-14T21:59:43.1-05:00"),
            ),
            ("2001-12-14 21:59:43.10", json!("2001-12-14T21:59:43.1Z")),
            ("18446744073709551615", json!(18446744073709551615u64)),
        ];
        for (text, want) in cases {
            assert_eq!(resolve_plain(text, Resolver::GoV3), Some(want), "{text}");
        }
        for text in [
            "yes",
            "on",
            "y",
            "1:20",
            "2001-13-01",
            "0x",
            "1e400",
            "12a",
            "-",
        ] {
            assert_eq!(resolve_plain(text, Resolver::GoV3), None, "{text}");
        }
        assert_eq!(resolve_plain("0755", Resolver::Yaml12), None);
    }

    /// sigs.k8s.io/yaml (go-yaml v2): YAML 1.1 booleans, no `0o`, timestamps stay strings.
    #[test]
    fn go_yaml_v2_resolution() {
        for (text, want) in [
            ("yes", json!(true)),
            ("Off", json!(false)),
            ("y", json!(true)),
            ("0640", json!(416)),
            ("1_000", json!(1000)),
            ("08", json!(8.0)),
        ] {
            assert_eq!(resolve_plain(text, Resolver::GoV2), Some(want), "{text}");
        }
        for text in ["2001-12-14", "yess", "0o17x"] {
            assert_eq!(resolve_plain(text, Resolver::GoV2), None, "{text}");
        }
    }
}
