//! Go's `fmt` for template values: `Sprint`, `Sprintln`, `Sprintf` with Go's verbs, flags,
//! widths and precisions, Go's float formatting (`1e+06`) and its `%!d(float64=1)` complaints.

use super::quote;
use super::value::{IntKind, Value};

/// Decimal digits of a float (no trailing zeros) and the decimal point position: the value is
/// `0.DIGITS × 10^dp`. Zero has no digits. `sig` rounds to that many significant digits;
/// `None` gives the shortest digits that read back as the same float.
fn decimal(v: f64, sig: Option<usize>) -> (Vec<u8>, i32) {
    if v == 0.0 {
        return (Vec::new(), 0);
    }
    let s = match sig {
        None => format!("{:e}", v.abs()),
        Some(n) => format!("{:.*e}", n.saturating_sub(1), v.abs()),
    };
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    (digits, exp + 1)
}

fn fmt_e(digits: &[u8], dp: i32, prec: usize, e: char) -> String {
    let mut out = String::new();
    out.push(digits.first().map(|d| *d as char).unwrap_or('0'));
    if prec > 0 {
        out.push('.');
        for i in 1..=prec {
            out.push(digits.get(i).map(|d| *d as char).unwrap_or('0'));
        }
    }
    out.push(e);
    let exp = if digits.is_empty() { 0 } else { dp - 1 };
    out.push(if exp < 0 { '-' } else { '+' });
    let exp = exp.unsigned_abs();
    if exp < 10 {
        out.push('0');
    }
    out.push_str(&exp.to_string());
    out
}

fn fmt_f(digits: &[u8], dp: i32, prec: usize) -> String {
    let mut out = String::new();
    if dp > 0 {
        for i in 0..dp as usize {
            out.push(digits.get(i).map(|d| *d as char).unwrap_or('0'));
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 1..=prec as i32 {
            let idx = dp + i - 1;
            let c = if idx >= 0 {
                digits.get(idx as usize).map(|d| *d as char).unwrap_or('0')
            } else {
                '0'
            };
            out.push(c);
        }
    }
    out
}

/// `strconv.FormatFloat(v, verb, prec, 64)`; `prec` `None` is Go's -1 (shortest).
pub fn format_float(v: f64, verb: char, prec: Option<usize>) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    let body = match verb {
        'e' | 'E' => {
            let (digits, dp) = decimal(v, prec.map(|p| p + 1));
            let p = prec.unwrap_or(digits.len().saturating_sub(1));
            fmt_e(&digits, dp, p, verb)
        }
        'f' | 'F' => match prec {
            Some(p) => format!("{:.*}", p, v.abs()),
            None => {
                let (digits, dp) = decimal(v, None);
                fmt_f(&digits, dp, (digits.len() as i32 - dp).max(0) as usize)
            }
        },
        _ => {
            // 'g' and 'G'.
            let shortest = prec.is_none();
            let p = prec.map(|p| p.max(1));
            let (digits, dp) = decimal(v, p);
            let nd = digits.len() as i32;
            let mut eprec = p.map(|p| p as i32).unwrap_or(nd);
            if eprec > nd && nd >= dp {
                eprec = nd;
            }
            if shortest {
                eprec = 6;
            }
            let exp = dp - 1;
            let e = if verb == 'G' { 'E' } else { 'e' };
            if digits.is_empty() {
                "0".to_string()
            } else if exp < -4 || exp >= eprec {
                let mut pe = p.map(|p| p as i32).unwrap_or(nd);
                if pe > nd {
                    pe = nd;
                }
                fmt_e(&digits, dp, (pe - 1).max(0) as usize, e)
            } else {
                let mut pf = p.map(|p| p as i32).unwrap_or(nd);
                if pf > dp {
                    pf = nd;
                }
                fmt_f(&digits, dp, (pf - dp).max(0) as usize)
            }
        }
    };
    format!("{sign}{body}")
}

/// Parsed flags of one verb.
#[derive(Default, Clone, Copy)]
struct Flags {
    plus: bool,
    minus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

impl Flags {
    /// Pads to the width, counting characters.
    fn pad(&self, s: &str) -> String {
        let n = s.chars().count();
        let Some(w) = self.width.filter(|w| *w > n) else {
            return s.to_string();
        };
        let fill = w - n;
        if self.minus {
            format!("{s}{}", " ".repeat(fill))
        } else if self.zero {
            format!("{}{s}", "0".repeat(fill))
        } else {
            format!("{}{s}", " ".repeat(fill))
        }
    }

    /// Pads a number: zero padding goes after the sign.
    fn pad_number(&self, s: &str) -> String {
        if self.zero
            && !self.minus
            && let Some(w) = self.width
        {
            let n = s.chars().count();
            if w > n {
                let (sign, digits) = match s.as_bytes().first() {
                    Some(b'-' | b'+' | b' ') => s.split_at(1),
                    _ => ("", s),
                };
                return format!("{sign}{}{digits}", "0".repeat(w - n));
            }
            return s.to_string();
        }
        let mut f = *self;
        f.zero = false;
        f.pad(s)
    }
}

/// `fmt.Sprint`: operands printed with `%v`, a space between two when neither is a string.
pub fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    let mut prev_string = false;
    for (i, a) in args.iter().enumerate() {
        let is_string = matches!(a, Value::String(_));
        if i > 0 && !is_string && !prev_string {
            out.push(' ');
        }
        out.push_str(&format_v(a, Flags::default(), 'v', 0));
        prev_string = is_string;
    }
    out
}

/// `fmt.Sprintln`: operands with `%v`, always spaced, and a newline.
pub fn sprintln(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&format_v(a, Flags::default(), 'v', 0));
    }
    out.push('\n');
    out
}

/// How a template prints a value (`{{ . }}`): `%v`, a pointer to a struct followed first.
pub fn print_value(v: &Value) -> String {
    let depth = usize::from(matches!(v, Value::Object(o) if o.is_pointer()));
    format_v(v, Flags::default(), 'v', depth)
}

/// `fmt.Sprintf`.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut arg = 0usize;
    let mut chars = format.char_indices().peekable();
    let mut reordered = false;
    while let Some((_, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut f = Flags::default();
        // Flags.
        while let Some(&(_, c)) = chars.peek() {
            match c {
                '+' => f.plus = true,
                '-' => f.minus = true,
                '#' => f.sharp = true,
                ' ' => f.space = true,
                '0' => f.zero = true,
                _ => break,
            }
            chars.next();
        }
        // Width: digits or `*`.
        let mut bad_width = false;
        if chars.peek().map(|p| p.1) == Some('*') {
            chars.next();
            match args.get(arg) {
                Some(Value::Int(n, _)) => {
                    if *n < 0 {
                        f.minus = true;
                    }
                    f.width = Some(n.unsigned_abs() as usize);
                }
                _ => bad_width = true,
            }
            arg += 1;
        } else {
            let mut w = None;
            while let Some(&(_, d)) = chars.peek() {
                let Some(d) = d.to_digit(10) else { break };
                w = Some(w.unwrap_or(0) * 10 + d as usize);
                chars.next();
            }
            f.width = w;
        }
        if bad_width {
            out.push_str("%!(BADWIDTH)");
        }
        // Precision.
        let mut bad_prec = false;
        if chars.peek().map(|p| p.1) == Some('.') {
            chars.next();
            if chars.peek().map(|p| p.1) == Some('*') {
                chars.next();
                match args.get(arg) {
                    Some(Value::Int(n, _)) if *n >= 0 => f.prec = Some(*n as usize),
                    _ => bad_prec = true,
                }
                arg += 1;
            } else {
                let mut p = 0usize;
                while let Some(&(_, d)) = chars.peek() {
                    let Some(d) = d.to_digit(10) else { break };
                    p = p * 10 + d as usize;
                    chars.next();
                }
                f.prec = Some(p);
            }
        }
        if bad_prec {
            out.push_str("%!(BADPREC)");
        }
        if f.minus {
            f.zero = false;
        }
        let Some((_, verb)) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '[' {
            // Explicit argument indexes are not used by charts; print as Go prints a bad one.
            reordered = true;
            out.push_str("%!(BADINDEX)");
            continue;
        }
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(a) = args.get(arg) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        arg += 1;
        out.push_str(&format_verb(a, f, verb));
    }
    if !reordered && arg < args.len() {
        out.push_str("%!(EXTRA ");
        for (i, a) in args[arg..].iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            if a.is_nil() && matches!(a, Value::Invalid | Value::Nil) {
                out.push_str("<nil>");
            } else {
                out.push_str(&a.type_name());
                out.push('=');
                out.push_str(&print_value(a));
            }
        }
        out.push(')');
    }
    out
}

fn bad_verb(a: &Value, verb: char) -> String {
    match a {
        Value::Invalid | Value::Nil => format!("%!{verb}(<nil>)"),
        _ => format!("%!{verb}({}={})", a.type_name(), print_value(a)),
    }
}

fn format_verb(a: &Value, f: Flags, verb: char) -> String {
    if verb == 'T' {
        let name = match a {
            Value::Invalid | Value::Nil => "<nil>".to_string(),
            _ => a.type_name(),
        };
        return f.pad(&name);
    }
    if verb == 'p' {
        return bad_verb(a, verb);
    }
    format_v(a, f, verb, 0)
}

/// Formats one operand with a verb; `depth` > 0 inside slices and maps.
fn format_v(a: &Value, f: Flags, verb: char, depth: usize) -> String {
    match a {
        Value::Invalid | Value::Nil => match verb {
            'v' => f.pad("<nil>"),
            _ if depth > 0 => f.pad("<nil>"),
            _ => bad_verb(a, verb),
        },
        Value::Bool(b) => match verb {
            'v' | 't' => f.pad(if *b { "true" } else { "false" }),
            _ => bad_verb(a, verb),
        },
        Value::Int(i, kind) => format_int(*i as i128, f, verb, *kind == IntKind::Int32)
            .unwrap_or_else(|| bad_verb(a, verb)),
        Value::Uint(u, _) => {
            format_int(*u as i128, f, verb, false).unwrap_or_else(|| bad_verb(a, verb))
        }
        Value::Float(x) => format_float_verb(*x, f, verb).unwrap_or_else(|| bad_verb(a, verb)),
        Value::Complex(re, im) => match verb {
            'v' | 'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
                let mut inner = f;
                inner.width = None;
                inner.plus = false;
                let re = format_float_verb(*re, inner, verb).unwrap_or_default();
                inner.plus = true;
                let im = format_float_verb(*im, inner, verb).unwrap_or_default();
                f.pad(&format!("({re}{im}i)"))
            }
            _ => bad_verb(a, verb),
        },
        Value::String(s) => format_str(s.as_bytes(), f, verb).unwrap_or_else(|| bad_verb(a, verb)),
        Value::Bytes(b) => match verb {
            's' | 'q' | 'x' | 'X' => format_str(b, f, verb).unwrap_or_else(|| bad_verb(a, verb)),
            _ => {
                let items: Vec<Value> = b
                    .iter()
                    .map(|b| Value::Uint(u64::from(*b), super::value::UintKind::Uint8))
                    .collect();
                format_list(&items, f, verb, depth)
            }
        },
        Value::List(items, _) => format_list(items, f, verb, depth),
        Value::NilList(_) => format_list(&[], f, verb, depth),
        Value::Map(m, _) => {
            let m = m.borrow();
            let mut out = String::from("map[");
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(&format_v(&Value::str(k), f, verb, depth + 1));
                out.push(':');
                out.push_str(&format_v(v, f, verb, depth + 1));
            }
            out.push(']');
            out
        }
        Value::NilMap(_) => "map[]".to_string(),
        Value::Object(o) => {
            if let Some(s) = o.string() {
                return format_str(s.as_bytes(), f, if verb == 'v' { 's' } else { verb })
                    .unwrap_or_else(|| bad_verb(a, verb));
            }
            let mut out = String::new();
            if depth == 0 && o.is_pointer() {
                out.push('&');
            }
            out.push('{');
            for (i, (name, v)) in o.fields().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                if f.plus {
                    out.push_str(name);
                    out.push(':');
                }
                out.push_str(&format_v(v, f, verb, depth + 1));
            }
            out.push('}');
            out
        }
        Value::Func(_) => format!("{:#x}", 0xc000010000u64),
    }
}

fn format_list(items: &[Value], f: Flags, verb: char, depth: usize) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&format_v(item, f, verb, depth + 1));
    }
    out.push(']');
    out
}

fn format_int(i: i128, f: Flags, verb: char, rune: bool) -> Option<String> {
    let negative = i < 0;
    let mag = i.unsigned_abs();
    let mut digits = match verb {
        'v' | 'd' => mag.to_string(),
        'b' => format!("{mag:b}"),
        'o' | 'O' => format!("{mag:o}"),
        'x' => format!("{mag:x}"),
        'X' => format!("{mag:X}"),
        'c' => {
            let c = u32::try_from(i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            return Some(f.pad(&c.to_string()));
        }
        'q' => {
            let c = u32::try_from(i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            return Some(f.pad(&quote::quote_rune(c)));
        }
        'U' => {
            let mut s = format!("U+{mag:04X}");
            if f.sharp
                && let Some(c) = u32::try_from(i).ok().and_then(char::from_u32)
                && quote::is_print(c)
            {
                s.push_str(&format!(" '{c}'"));
            }
            return Some(f.pad(&s));
        }
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 's' | 't' => return None,
        _ => return None,
    };
    let _ = rune;
    if let Some(p) = f.prec {
        if p == 0 && mag == 0 {
            digits.clear();
        }
        while digits.len() < p {
            digits.insert(0, '0');
        }
    }
    let prefix = match verb {
        'x' if f.sharp => "0x",
        'X' if f.sharp => "0X",
        'b' if f.sharp => "0b",
        'o' if f.sharp && !digits.starts_with('0') => "0",
        'O' => "0o",
        _ => "",
    };
    let sign = if negative {
        "-"
    } else if f.plus {
        "+"
    } else if f.space {
        " "
    } else {
        ""
    };
    let mut g = f;
    if f.prec.is_some() {
        g.zero = false;
    }
    Some(g.pad_number(&format!("{sign}{prefix}{digits}")))
}

fn format_float_verb(x: f64, f: Flags, verb: char) -> Option<String> {
    let (verb, prec) = match verb {
        'v' => ('g', f.prec),
        'e' | 'E' | 'f' | 'F' => (verb, Some(f.prec.unwrap_or(6))),
        'g' | 'G' => (verb, f.prec),
        _ => return None,
    };
    let mut s = format_float(x, verb, prec);
    if f.sharp && !s.contains('.') && x.is_finite() {
        // `#` keeps the decimal point.
        match s.find(['e', 'E']) {
            Some(i) => s.insert(i, '.'),
            None => s.push('.'),
        }
    }
    if !s.starts_with(['-', '+']) {
        if f.plus {
            s.insert(0, '+');
        } else if f.space {
            s.insert(0, ' ');
        }
    } else if s.starts_with('+') && !f.plus {
        // +Inf prints as +Inf only with the flag.
        if f.space {
            s.replace_range(0..1, " ");
        } else {
            s.remove(0);
        }
    }
    if !x.is_finite() {
        let mut g = f;
        g.zero = false;
        return Some(g.pad(&s));
    }
    Some(f.pad_number(&s))
}

fn format_str(b: &[u8], f: Flags, verb: char) -> Option<String> {
    let text = String::from_utf8_lossy(b);
    let truncated = |s: &str| -> String {
        match f.prec {
            Some(p) => s.chars().take(p).collect(),
            None => s.to_string(),
        }
    };
    Some(match verb {
        'v' | 's' => f.pad(&truncated(&text)),
        'q' => {
            let s = truncated(&text);
            let quoted = if f.sharp
                && !s.contains('`')
                && s.chars().all(|c| c == '\t' || quote::is_print(c))
            {
                format!("`{s}`")
            } else if f.plus {
                quote::quote_ascii(&s)
            } else if std::str::from_utf8(b).is_ok() {
                quote::quote(&s)
            } else {
                quote::quote_bytes(b)
            };
            f.pad(&quoted)
        }
        'x' | 'X' => {
            let bytes = match f.prec {
                Some(p) => &b[..p.min(b.len())],
                None => b,
            };
            let mut out = String::new();
            for (i, byte) in bytes.iter().enumerate() {
                if f.space && i > 0 {
                    out.push(' ');
                }
                if f.sharp && (f.space || i == 0) {
                    out.push_str(if verb == 'x' { "0x" } else { "0X" });
                }
                if verb == 'x' {
                    out.push_str(&format!("{byte:02x}"));
                } else {
                    out.push_str(&format!("{byte:02X}"));
                }
            }
            f.pad(&out)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_as_go() {
        let cases = [
            (1e6, 'g', None, "1e+06"),
            (100000.0, 'g', None, "100000"),
            (123456.0, 'g', None, "123456"),
            (1234567.0, 'g', None, "1.234567e+06"),
            (0.0001, 'g', None, "0.0001"),
            (0.00001, 'g', None, "1e-05"),
            (0.0, 'g', None, "0"),
            (-2.5, 'g', None, "-2.5"),
            (1.5, 'f', Some(2), "1.50"),
            (1e6, 'e', Some(6), "1.000000e+06"),
            (1.0, 'g', Some(3), "1"),
            (123456789.0, 'g', Some(3), "1.23e+08"),
            (0.1, 'f', None, "0.1"),
            (1e21, 'f', None, "1000000000000000000000"),
            (1e-7, 'e', None, "1e-07"),
        ];
        for (v, verb, prec, want) in cases {
            assert_eq!(format_float(v, verb, prec), want, "{v} {verb} {prec:?}");
        }
    }

    #[test]
    fn printf_as_go() {
        let cases: Vec<(&str, Vec<Value>, &str)> = vec![
            ("%d", vec![Value::Float(8080.0)], "%!d(float64=8080)"),
            ("%s", vec![Value::int(5)], "%!s(int=5)"),
            (
                "%05d|%-4d|%+d",
                vec![Value::int(42), Value::int(7), Value::int(3)],
                "00042|7   |+3",
            ),
            (
                "%x %X %o %b",
                vec![
                    Value::int(255),
                    Value::int(255),
                    Value::int(8),
                    Value::int(5),
                ],
                "ff FF 10 101",
            ),
            (
                "%q %v",
                vec![Value::str("a\"b"), Value::str("x")],
                "\"a\\\"b\" x",
            ),
            (
                "%.2f %6.2f",
                vec![Value::Float(1.23456), Value::Float(2.5)],
                "1.23   2.50",
            ),
            (
                "%v",
                vec![Value::list(vec![
                    Value::str("a"),
                    Value::int(1),
                    Value::Nil,
                ])],
                "[a 1 <nil>]",
            ),
            (
                "%d",
                vec![Value::list(vec![Value::int(1), Value::int(2)])],
                "[1 2]",
            ),
            ("%s", vec![], "%!s(MISSING)"),
            ("a", vec![Value::int(1)], "a%!(EXTRA int=1)"),
            (
                "%T %T",
                vec![Value::Float(1.0), Value::Nil],
                "float64 <nil>",
            ),
            (
                "%5s|%-5s|%.1s",
                vec![Value::str("ab"), Value::str("ab"), Value::str("ab")],
                "   ab|ab   |a",
            ),
            ("%x", vec![Value::str("hi")], "6869"),
            ("%c %U", vec![Value::int(65), Value::int(65)], "A U+0041"),
            ("%t", vec![Value::Bool(true)], "true"),
            ("%%", vec![], "%"),
        ];
        for (format, args, want) in cases {
            assert_eq!(sprintf(format, &args), want, "{format}");
        }
        assert_eq!(
            sprint(&[Value::int(1), Value::int(2), Value::str("a"), Value::int(3)]),
            "1 2a3"
        );
        assert_eq!(sprintln(&[Value::int(1), Value::str("a")]), "1 a\n");
    }
}
