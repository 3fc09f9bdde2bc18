//! Number constants of Go's templates: `strconv.ParseInt`/`ParseUint` with base 0 (prefixes
//! `0x`, `0o`, `0b`, a leading `0` for octal, `_` separators) and `strconv.ParseFloat`
//! (decimal and hexadecimal mantissas), and the "ideal constant" a number node holds.

/// A parsed number constant, stored under every type that can represent it, as Go's
/// `parse.NumberNode` does.
#[derive(Debug, Clone, PartialEq)]
pub struct Number {
    pub is_int: bool,
    pub is_uint: bool,
    pub is_float: bool,
    pub is_complex: bool,
    pub int: i64,
    pub uint: u64,
    pub float: f64,
    pub complex: (f64, f64),
    /// The text as written.
    pub text: String,
}

/// Go's `underscoreOK`: `_` only between digits (or after a base prefix).
fn underscore_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let b = if !b.is_empty() && (b[0] == b'-' || b[0] == b'+') {
        &b[1..]
    } else {
        b
    };
    let mut saw = b'^';
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || hex && c.is_ascii_hexdigit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// `strconv.ParseUint(s, 0, 64)`.
pub fn parse_uint(s: &str) -> Option<u64> {
    if s.is_empty() || s.starts_with(['+', '-']) {
        return None;
    }
    let lower = s.to_ascii_lowercase();
    let (base, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.contains('_') && !underscore_ok(s) {
        return None;
    }
    let digits: String = digits.chars().filter(|c| *c != '_').collect();
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(&digits, base).ok()
}

/// `strconv.ParseInt(s, 0, 64)`.
pub fn parse_int(s: &str) -> Option<i64> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = parse_uint(body)?;
    if negative {
        if magnitude > i64::MAX as u64 + 1 {
            return None;
        }
        Some((magnitude as i128).wrapping_neg() as i64)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// `strconv.ParseFloat(s, 64)`: decimal or hexadecimal (`0x1.8p3`) mantissas, `_` separators,
/// `inf` and `nan`.
pub fn parse_float(s: &str) -> Option<f64> {
    if s.contains('_') {
        if !underscore_ok(s) {
            return None;
        }
        return parse_float(&s.replace('_', ""));
    }
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let value = if let Some(hex) = lower.strip_prefix("0x") {
        parse_hex_float(hex)?
    } else {
        if !lower
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'+' | b'-'))
            && !matches!(lower.as_str(), "inf" | "infinity" | "nan")
        {
            return None;
        }
        lower.parse::<f64>().ok()?
    };
    Some(if negative { -value } else { value })
}

fn parse_hex_float(s: &str) -> Option<f64> {
    let (mantissa, exponent) = s.split_once('p')?;
    let exponent: i32 = exponent.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for c in int.chars() {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        value += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(value * 2f64.powi(exponent))
}

/// Parses `a+bi` or `a-bi` as `fmt.Sscan` reads a complex128.
fn parse_complex(text: &str) -> Option<(f64, f64)> {
    let body = text.strip_suffix('i')?;
    let split = body
        .char_indices()
        .skip(1)
        .filter(|(i, c)| {
            matches!(c, '+' | '-') && !matches!(body.as_bytes()[i - 1], b'e' | b'E' | b'p' | b'P')
        })
        .map(|(i, _)| i)
        .last()?;
    Some((parse_float(&body[..split])?, parse_float(&body[split..])?))
}

impl Number {
    /// Go's `Tree.newNumber`: `char` marks a character constant (`'a'`), `complex` an item the
    /// lexer read as a complex constant.
    pub fn parse(text: &str, char: bool, complex: bool) -> Result<Number, String> {
        let mut n = Number {
            is_int: false,
            is_uint: false,
            is_float: false,
            is_complex: false,
            int: 0,
            uint: 0,
            float: 0.0,
            complex: (0.0, 0.0),
            text: text.to_string(),
        };
        if char {
            let quote = text.chars().next().unwrap_or('\'');
            let (c, tail) = super::quote::unquote_char(&text[quote.len_utf8()..], quote)
                .map_err(|e| e.to_string())?;
            if tail != "'" {
                return Err(format!("malformed character constant: {text}"));
            }
            n.int = c as i64;
            n.uint = c as u64;
            n.float = c as u32 as f64;
            (n.is_int, n.is_uint, n.is_float) = (true, true, true);
            return Ok(n);
        }
        if complex {
            n.complex = parse_complex(text)
                .ok_or_else(|| format!("expected integer; found {}", super::quote::quote(text)))?;
            n.is_complex = true;
            n.simplify_complex();
            return Ok(n);
        }
        if let Some(imaginary) = text.strip_suffix('i')
            && let Some(f) = parse_float(imaginary)
        {
            n.is_complex = true;
            n.complex = (0.0, f);
            n.simplify_complex();
            return Ok(n);
        }
        if let Some(u) = parse_uint(text) {
            n.is_uint = true;
            n.uint = u;
        }
        if let Some(i) = parse_int(text) {
            n.is_int = true;
            n.int = i;
            if i == 0 {
                n.is_uint = true;
                n.uint = 0;
            }
        }
        if n.is_int {
            n.is_float = true;
            n.float = n.int as f64;
        } else if n.is_uint {
            n.is_float = true;
            n.float = n.uint as f64;
        } else if let Some(f) = parse_float(text) {
            if !text.contains(['.', 'e', 'E', 'p', 'P']) {
                return Err(format!("integer overflow: {}", super::quote::quote(text)));
            }
            n.is_float = true;
            n.float = f;
            if (f as i64) as f64 == f {
                n.is_int = true;
                n.int = f as i64;
            }
            if f >= 0.0 && (f as u64) as f64 == f {
                n.is_uint = true;
                n.uint = f as u64;
            }
        }
        if !n.is_int && !n.is_uint && !n.is_float {
            return Err(format!(
                "illegal number syntax: {}",
                super::quote::quote(text)
            ));
        }
        Ok(n)
    }

    fn simplify_complex(&mut self) {
        let (re, im) = self.complex;
        self.is_float = im == 0.0;
        if self.is_float {
            self.float = re;
            self.is_int = (re as i64) as f64 == re;
            if self.is_int {
                self.int = re as i64;
            }
            self.is_uint = re >= 0.0 && (re as u64) as f64 == re;
            if self.is_uint {
                self.uint = re as u64;
            }
        }
    }
}
