//! The document tree every store reads into and writes from: ordered branches of items, values
//! typed as sops types them, comments kept where they were.

/// A comment line (its text without the leading `#`/`;`).
#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    /// The text after the comment marker.
    pub text: String,
    /// Written on the line of the value it follows rather than on its own line.
    pub inline: bool,
}

/// A mapping key.
#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    /// A string key, the only kind sops walks.
    Str(String),
    /// A comment standing as an item of a mapping.
    Comment(Comment),
    /// A key of another type (its type name and text), refused when walked.
    Other(&'static str, String),
}

/// One entry of a branch.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The key.
    pub key: Key,
    /// The value (`Null` for a comment item).
    pub value: Value,
}

impl Item {
    /// An item with a string key.
    pub fn new(key: impl Into<String>, value: Value) -> Item {
        Item {
            key: Key::Str(key.into()),
            value,
        }
    }

    /// A comment item.
    pub fn comment(text: impl Into<String>) -> Item {
        Item {
            key: Key::Comment(Comment {
                text: text.into(),
                inline: false,
            }),
            value: Value::Null,
        }
    }

    /// The key when it is a string.
    pub fn key_str(&self) -> Option<&str> {
        match &self.key {
            Key::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// An ordered mapping (one document, or a nested mapping).
pub type Branch = Vec<Item>;

/// A value as sops types it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`: never encrypted, never hashed.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A timestamp, kept as its RFC 3339 text.
    Time(String),
    /// Raw bytes.
    Bytes(Vec<u8>),
    /// A comment (in a list, or as the decrypted form of an encrypted comment).
    Comment(Comment),
    /// A nested mapping.
    Branch(Branch),
    /// A list.
    List(Vec<Value>),
}

impl Value {
    /// The Go type name sops' messages use for this value.
    pub fn go_type(&self) -> &'static str {
        match self {
            Value::Null => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::Time(_) => "time.Time",
            Value::Bytes(_) => "[]uint8",
            Value::Comment(_) => "sops.Comment",
            Value::Branch(_) => "sops.TreeBranch",
            Value::List(_) => "[]interface {}",
        }
    }

    /// The bytes sops hashes into the MAC for this leaf (Go's `ToBytes`).
    pub fn mac_bytes(&self) -> Vec<u8> {
        match self {
            Value::Str(s) => s.as_bytes().to_vec(),
            Value::Int(i) => i.to_string().into_bytes(),
            Value::Float(f) => format_float_f(*f).into_bytes(),
            Value::Bool(true) => b"True".to_vec(),
            Value::Bool(false) => b"False".to_vec(),
            Value::Bytes(b) => b.clone(),
            Value::Time(t) => t.as_bytes().to_vec(),
            Value::Comment(c) => c.text.as_bytes().to_vec(),
            Value::Null | Value::Branch(_) | Value::List(_) => Vec::new(),
        }
    }
}

/// Go's `strconv.FormatFloat(f, 'f', -1, 64)`: the shortest digits that read back, never an
/// exponent.
pub fn format_float_f(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        format!("{f}")
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits, with an exponent when it
/// is below -4 or at least the number of digits (`1e+06`, `1.5`, `1.234568e+09`).
pub fn format_float_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits as `d.ddde±x`.
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let n = digits.len() as i32;
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        // %e form with the shortest digits.
        let mut m = digits[..1].to_string();
        if n > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let es = if exp < 0 { "-" } else { "+" };
        format!("{sign}{m}e{es}{:02}", exp.abs())
    } else if exp < 0 {
        format!("{sign}0.{}{}", "0".repeat((-exp - 1) as usize), digits)
    } else if exp + 1 >= n {
        format!("{sign}{}{}", digits, "0".repeat((exp + 1 - n) as usize))
    } else {
        let (a, b) = digits.split_at((exp + 1) as usize);
        format!("{sign}{a}.{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_go_prints_them() {
        assert_eq!(format_float_f(1234568000.0), "1234568000");
        assert_eq!(format_float_f(1.5), "1.5");
        assert_eq!(format_float_f(1.0), "1");
        assert_eq!(format_float_g(1.5), "1.5");
        assert_eq!(format_float_g(1e6), "1e+06");
        assert_eq!(format_float_g(1234568000.0), "1.234568e+09");
        assert_eq!(format_float_g(100.0), "100");
        assert_eq!(format_float_g(0.0001), "0.0001");
        assert_eq!(format_float_g(0.00001), "1e-05");
        assert_eq!(format_float_g(123456.0), "123456");
        assert_eq!(format_float_g(-2.5), "-2.5");
        assert_eq!(format_float_g(1234.56789), "1234.56789");
        assert_eq!(format_float_g(1234567.0), "1.234567e+06");
    }
}
