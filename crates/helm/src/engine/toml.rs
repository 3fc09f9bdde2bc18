//! `toToml`: a value written as BurntSushi/toml v1.6.0's encoder writes it (Helm's
//! `toTOML`). Keys of a table in byte order, plain values before sub-tables, sub-tables as
//! `[a.b]` headers indented two spaces per level after the first, a blank line before each
//! top-level table, lists of tables as `[[a]]`, other lists and tables inside lists inline,
//! floats in Go's shortest `%g` form with `.0` added when there is neither a point nor an
//! exponent, `null` values left out. A list holding `null` fails as the encoder fails.

use serde_json::{Map, Value};

const NIL_ELEMENT: &str = "toml: cannot encode array with nil element";
const NO_KEY: &str = "toml: top-level values must be Go maps or structs";

/// The TOML type the encoder gives a value (`tomlTypeOfGo`); `None` for null.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    Table,
    TableArray,
}

fn kind(v: &Value) -> Result<Option<Kind>, String> {
    Ok(match v {
        Value::Null => None,
        Value::Object(_) => Some(Kind::Table),
        Value::Array(items) => Some(if is_table_array(items)? {
            Kind::TableArray
        } else {
            Kind::Plain
        }),
        _ => Some(Kind::Plain),
    })
}

/// A non-empty list whose items are all tables; a null item anywhere is an error.
fn is_table_array(items: &[Value]) -> Result<bool, String> {
    let mut all_tables = !items.is_empty();
    for item in items {
        match kind(item)? {
            None => return Err(NIL_ELEMENT.into()),
            Some(Kind::Table) => {}
            Some(_) => all_tables = false,
        }
    }
    Ok(all_tables)
}

/// Encodes `v` as `toToml` prints it, or the encoder's error text.
pub fn encode(v: &Value) -> Result<String, String> {
    let mut e = Encoder {
        out: String::new(),
        written: false,
    };
    e.encode(&[], v)?;
    Ok(e.out)
}

struct Encoder {
    out: String,
    written: bool,
}

impl Encoder {
    fn write(&mut self, s: &str) {
        self.out.push_str(s);
        self.written = true;
    }

    fn newline(&mut self) {
        if self.written {
            self.write("\n");
        }
    }

    fn indent(&mut self, key: &[&str]) {
        for _ in 1..key.len() {
            self.write("  ");
        }
    }

    fn encode(&mut self, key: &[&str], v: &Value) -> Result<(), String> {
        match v {
            Value::Null => Ok(()),
            Value::Object(m) => self.table(key, m),
            Value::Array(items) if is_table_array(items)? => {
                if key.is_empty() {
                    return Err(NO_KEY.into());
                }
                for item in items {
                    if let Value::Object(m) = item {
                        self.newline();
                        self.indent(key);
                        self.write(&format!("[[{}]]", dotted(key)));
                        self.newline();
                        self.map(key, m, false)?;
                    }
                }
                Ok(())
            }
            other => self.key_value(key, other, false),
        }
    }

    fn table(&mut self, key: &[&str], m: &Map<String, Value>) -> Result<(), String> {
        if key.len() == 1 {
            self.newline();
        }
        if !key.is_empty() {
            self.indent(key);
            self.write(&format!("[{}]", dotted(key)));
            self.newline();
        }
        self.map(key, m, false)
    }

    fn map(&mut self, key: &[&str], m: &Map<String, Value>, inline: bool) -> Result<(), String> {
        let mut direct = Vec::new();
        let mut sub = Vec::new();
        for (k, v) in m {
            match kind(v)? {
                Some(Kind::Table | Kind::TableArray) => sub.push(k.as_str()),
                _ => direct.push(k.as_str()),
            }
        }
        direct.sort_unstable();
        sub.sort_unstable();
        if inline {
            self.write("{");
        }
        let trailing_comma = !sub.is_empty();
        for (keys, trail) in [(direct, trailing_comma), (sub, false)] {
            for (i, k) in keys.iter().enumerate() {
                let v = &m[*k];
                if v.is_null() {
                    continue;
                }
                if inline {
                    self.key_value(&[k], v, true)?;
                    if trail || i + 1 != keys.len() {
                        self.write(", ");
                    }
                } else {
                    let mut path = key.to_vec();
                    path.push(k);
                    self.encode(&path, v)?;
                }
            }
        }
        if inline {
            self.write("}");
        }
        Ok(())
    }

    fn key_value(&mut self, key: &[&str], v: &Value, inline: bool) -> Result<(), String> {
        let Some(last) = key.last() else {
            return self.element(v);
        };
        self.indent(key);
        self.write(&format!("{} = ", quoted_key(last)));
        self.element(v)?;
        if !inline {
            self.newline();
        }
        Ok(())
    }

    fn element(&mut self, v: &Value) -> Result<(), String> {
        match v {
            Value::String(s) => self.write(&quote(s)),
            Value::Bool(b) => self.write(if *b { "true" } else { "false" }),
            Value::Number(n) if n.is_f64() => self.write(&float(n.as_f64().unwrap_or(0.0))),
            Value::Number(n) => self.write(&n.to_string()),
            Value::Array(items) => {
                self.write("[");
                for (i, item) in items.iter().enumerate() {
                    self.element(item)?;
                    if i + 1 != items.len() {
                        self.write(", ");
                    }
                }
                self.write("]");
            }
            Value::Object(m) => self.map(&[], m, true)?,
            Value::Null => return Err("toml: unexpected primitive type: <nil>".into()),
        }
        Ok(())
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 64)` with `.0` added when it has no point or exponent.
fn float(f: f64) -> String {
    if f.is_nan() {
        return if f.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-inf" } else { "inf" }.into();
    }
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((e.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let text = if f != 0.0 && !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    };
    if text.contains(['.', 'e']) {
        text
    } else {
        text + ".0"
    }
}

/// A key part bare when it is made of `A-Za-z0-9_-`, else quoted.
fn quoted_key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { k.to_string() } else { quote(k) }
}

fn dotted(key: &[&str]) -> String {
    key.iter()
        .map(|k| quoted_key(k))
        .collect::<Vec<_>>()
        .join(".")
}

/// A basic string with the encoder's escapes: `"`, `\`, `\b \t \n \f \r`, other control
/// characters and DEL as `\uXXXX`.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_as_go_g_with_a_point() {
        assert_eq!(float(1.0), "1.0");
        assert_eq!(float(1.5), "1.5");
        assert_eq!(float(1e6), "1e+06");
        assert_eq!(float(123456.0), "123456.0");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(0.00001), "1e-05");
        assert_eq!(float(1234567.0), "1.234567e+06");
        assert_eq!(float(0.0), "0.0");
    }
}
