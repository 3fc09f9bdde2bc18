//! Writing branches as sops' YAML store does: go-yaml v3's encoder with an indentation of 4,
//! keys in tree order, sequences indented under their key, comments as head comments of what
//! follows them (foot comments at the end of a collection), documents separated by `---`.

use tidegate_core::yaml::gov2::write_v3_string;

use super::StoreError;
use crate::tree::{Branch, Comment, Key, Value, format_float_g};

const INDENT: usize = 4;

/// go-yaml v3's indentation of what nests under a key: the next multiple of the indent.
fn nested(indent: usize) -> usize {
    INDENT * ((indent + INDENT) / INDENT)
}

/// Writes every branch as a document.
pub fn emit(branches: &[Branch]) -> Result<Vec<u8>, StoreError> {
    let mut out = String::new();
    for (i, b) in branches.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        let mut e = Emitter { out: String::new() };
        if b.iter().all(|it| matches!(it.key, Key::Comment(_))) {
            for it in b {
                if let Key::Comment(c) = &it.key {
                    e.comment(c, 0);
                }
            }
            if b.is_empty() || !e.out.is_empty() {
                e.out.push_str("{}\n");
            }
        } else {
            e.map(b, 0)?;
        }
        out.push_str(&e.out);
    }
    Ok(out.into_bytes())
}

struct Emitter {
    out: String,
}

impl Emitter {
    fn pad(&mut self, n: usize) {
        for _ in 0..n {
            self.out.push(' ');
        }
    }

    fn comment(&mut self, c: &Comment, indent: usize) {
        self.pad(indent);
        self.out.push('#');
        self.out.push_str(&c.text);
        self.out.push('\n');
    }

    /// A block mapping whose first key goes at the cursor (already indented).
    fn map(&mut self, b: &Branch, indent: usize) -> Result<(), StoreError> {
        let mut first = true;
        let mut inline: Vec<&Comment> = Vec::new();
        let mut pending: Vec<&Comment> = Vec::new();
        for it in b {
            let key = match &it.key {
                Key::Comment(c) if c.inline => {
                    inline.push(c);
                    continue;
                }
                Key::Comment(c) => {
                    pending.push(c);
                    continue;
                }
                Key::Str(k) | Key::Other(_, k) => k,
            };
            self.head_comments(&mut pending, &mut first, indent);
            if !first {
                self.pad(indent);
            }
            first = false;
            if key == "<<" {
                // go-yaml v3 tags a `<<` key it writes back.
                self.out.push_str("!!merge <<");
            } else {
                write_v3_string(&mut self.out, key, indent, INDENT, true);
            }
            self.out.push(':');
            let comments: Vec<&Comment> = std::mem::take(&mut inline);
            self.value_after_key(&it.value, indent, &comments)?;
        }
        for c in pending.into_iter().chain(inline) {
            self.comment(c, indent);
        }
        Ok(())
    }

    fn value_after_key(
        &mut self,
        v: &Value,
        indent: usize,
        line_comments: &[&Comment],
    ) -> Result<(), StoreError> {
        match v {
            Value::Branch(b) if has_entries_b(b) => {
                self.line_comments(line_comments);
                self.out.push('\n');
                self.pad(nested(indent));
                self.map(b, nested(indent))
            }
            Value::List(l) if has_entries_l(l) => {
                self.line_comments(line_comments);
                self.out.push('\n');
                self.pad(nested(indent));
                self.seq(l, nested(indent))
            }
            other => {
                self.out.push(' ');
                self.scalar(other, nested(indent));
                self.line_comments(line_comments);
                self.out.push('\n');
                // Comments inside an empty collection follow it.
                match other {
                    Value::Branch(b) => {
                        for it in b {
                            if let Key::Comment(c) = &it.key {
                                self.comment(c, nested(indent));
                            }
                        }
                    }
                    Value::List(l) => {
                        for v in l {
                            if let Value::Comment(c) = v {
                                self.comment(c, nested(indent));
                            }
                        }
                    }
                    _ => {}
                }
                Ok(())
            }
        }
    }

    /// Comments before an entry, each on its own line at `indent` (the first one where the
    /// cursor is, when nothing was written at this level yet).
    fn head_comments(&mut self, pending: &mut Vec<&Comment>, first: &mut bool, indent: usize) {
        for c in pending.drain(..) {
            if !*first {
                self.pad(indent);
            }
            *first = false;
            self.out.push('#');
            self.out.push_str(&c.text);
            self.out.push('\n');
        }
    }

    fn line_comments(&mut self, comments: &[&Comment]) {
        for (i, c) in comments.iter().enumerate() {
            if i == 0 {
                self.out.push_str(" #");
            } else {
                self.out.push_str("\n#");
            }
            self.out.push_str(&c.text);
        }
    }

    /// A block sequence whose first `- ` goes at the cursor (already indented).
    fn seq(&mut self, l: &[Value], indent: usize) -> Result<(), StoreError> {
        let mut first = true;
        let mut pending: Vec<&Comment> = Vec::new();
        let mut inline: Vec<&Comment> = Vec::new();
        for v in l {
            match v {
                Value::Comment(c) if c.inline => {
                    inline.push(c);
                    continue;
                }
                Value::Comment(c) => {
                    pending.push(c);
                    continue;
                }
                _ => {}
            }
            self.head_comments(&mut pending, &mut first, indent);
            if !first {
                self.pad(indent);
            }
            first = false;
            self.out.push_str("- ");
            let comments = std::mem::take(&mut inline);
            match v {
                Value::Branch(b) if has_entries_b(b) => {
                    self.line_comments(&comments);
                    self.map(b, indent + 2)?
                }
                Value::List(inner) if has_entries_l(inner) => {
                    self.line_comments(&comments);
                    self.seq(inner, indent + 2)?
                }
                other => {
                    self.scalar(other, indent + 2);
                    self.line_comments(&comments);
                    self.out.push('\n');
                }
            }
        }
        for c in pending.into_iter().chain(inline) {
            if first {
                // Only comments: an empty list.
                self.out.push_str("[]\n");
                first = false;
            }
            self.comment(c, indent);
        }
        if first {
            self.out.push_str("[]\n");
        }
        Ok(())
    }

    fn scalar(&mut self, v: &Value, indent: usize) {
        match v {
            Value::Null | Value::Comment(_) => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => self.out.push_str(&i.to_string()),
            Value::Float(f) => {
                let s = format_float_g(*f);
                self.out.push_str(match s.as_str() {
                    "+Inf" => ".inf",
                    "-Inf" => "-.inf",
                    "NaN" => ".nan",
                    other => other,
                });
            }
            Value::Time(t) => self.out.push_str(t),
            Value::Str(s) => write_v3_string(&mut self.out, s, indent, INDENT, false),
            Value::Bytes(b) => write_v3_string(
                &mut self.out,
                &String::from_utf8_lossy(b),
                indent,
                INDENT,
                false,
            ),
            Value::Branch(_) => self.out.push_str("{}"),
            Value::List(_) => self.out.push_str("[]"),
        }
    }
}

fn has_entries_b(b: &Branch) -> bool {
    b.iter().any(|it| !matches!(it.key, Key::Comment(_)))
}

fn has_entries_l(l: &[Value]) -> bool {
    l.iter().any(|v| !matches!(v, Value::Comment(_)))
}
