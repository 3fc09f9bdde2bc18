//! Helm's `--set` parser (`pkg/strvals`): `a.b=c,d[0].e=f`, lists in braces, `\` escapes,
//! typed values (`true`, `null`, integers as `int64`), and the `--set-string`,
//! `--set-json`, `--set-file` and `--set-literal` forms, with Helm's messages.

use std::rc::Rc;

use crate::template::value::{IntKind, ListKind, MapKind, Value};

use super::{Values, new_map, table_of};

/// Highest list index `--set` accepts.
pub const MAX_INDEX: usize = 65536;
/// Deepest `a.b.c` nesting `--set` accepts.
pub const MAX_NESTED_NAME_LEVEL: usize = 30;

/// How values are typed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `--set`: `true`, `false`, `null`, integers typed.
    Typed,
    /// `--set-string`: everything a string.
    Strings,
    /// `--set-json`: values are JSON.
    Json,
}

/// The reader for `--set-file`: turns the file path into the value.
pub type FileReader<'a> = &'a dyn Fn(&str) -> Result<Value, String>;

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    mode: Mode,
    file: Option<FileReader<'a>>,
}

/// The end of input, as Go's `io.EOF` travels through the parser.
const EOF: &str = "EOF";

type R<T> = Result<T, String>;

/// `--set`: parses into `dest`.
pub fn parse_into(s: &str, dest: &Values) -> R<()> {
    Parser::new(s, Mode::Typed, None).parse(dest)
}

/// `--set-string`.
pub fn parse_into_string(s: &str, dest: &Values) -> R<()> {
    Parser::new(s, Mode::Strings, None).parse(dest)
}

/// `--set-json`.
pub fn parse_json(s: &str, dest: &Values) -> R<()> {
    Parser::new(s, Mode::Json, None).parse(dest)
}

/// `--set-file`: values are read by `reader` from the paths given.
pub fn parse_into_file(s: &str, dest: &Values, reader: FileReader<'_>) -> R<()> {
    Parser::new(s, Mode::Strings, Some(reader)).parse(dest)
}

/// Parses `s` into a new table.
pub fn parse(s: &str) -> R<Values> {
    let dest = new_map();
    parse_into(s, &dest)?;
    Ok(dest)
}

/// Helm's `typedVal`.
fn typed_val(v: &str, strings: bool) -> Value {
    if strings {
        return Value::str(v);
    }
    if v.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if v.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if v.eq_ignore_ascii_case("null") {
        return Value::Nil;
    }
    if v == "0" {
        return Value::Int(0, IntKind::Int64);
    }
    if !v.is_empty() && !v.starts_with('0') {
        // strconv.ParseInt(v, 10, 64): an optional sign and decimal digits.
        let digits = v.strip_prefix(['+', '-']).unwrap_or(v);
        if !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && let Ok(i) = v.parse::<i64>()
        {
            return Value::Int(i, IntKind::Int64);
        }
    }
    Value::str(v)
}

fn list_value(items: Vec<Value>) -> Value {
    Value::List(Rc::new(items), ListKind::Any)
}

fn list_items(v: Option<Value>) -> Vec<Value> {
    match v {
        Some(Value::List(l, _)) => l.to_vec(),
        _ => Vec::new(),
    }
}

fn set_index(mut list: Vec<Value>, index: i64, val: Value) -> R<Vec<Value>> {
    if index < 0 {
        return Err(format!("negative {index} index not allowed"));
    }
    let index = index as usize;
    if index > MAX_INDEX {
        return Err(format!(
            "index of {index} is greater than maximum supported index of {MAX_INDEX}"
        ));
    }
    if list.len() <= index {
        list.resize(index + 1, Value::Nil);
    }
    list[index] = val;
    Ok(list)
}

impl<'a> Parser<'a> {
    fn new(s: &str, mode: Mode, file: Option<FileReader<'a>>) -> Parser<'a> {
        Parser {
            chars: s.chars().collect(),
            pos: 0,
            mode,
            file,
        }
    }

    fn parse(&mut self, data: &Values) -> R<()> {
        loop {
            match self.key(data, 0) {
                Ok(()) => continue,
                Err(e) if e == EOF => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    fn read(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    /// Reads to one of `stop` (consumed, returned), `\` escaping; `Err(EOF)` at the end.
    fn until(&mut self, stop: &[char]) -> (String, Option<char>) {
        let mut v = String::new();
        loop {
            match self.read() {
                None => return (v, None),
                Some(c) if stop.contains(&c) => return (v, Some(c)),
                Some('\\') => match self.read() {
                    None => return (v, None),
                    Some(next) => v.push(next),
                },
                Some(c) => v.push(c),
            }
        }
    }

    fn value_of(&self, raw: &str) -> R<Value> {
        match (self.file, self.mode) {
            (Some(reader), _) => reader(raw),
            (None, Mode::Strings) => Ok(typed_val(raw, true)),
            _ => Ok(typed_val(raw, false)),
        }
    }

    fn key(&mut self, data: &Values, level: usize) -> R<()> {
        let (k, last) = self.until(&['=', '[', ',', '.']);
        let Some(last) = last else {
            if k.is_empty() {
                return Err(EOF.into());
            }
            return Err(format!(
                "key {} has no value",
                crate::template::quote::quote(&k)
            ));
        };
        match last {
            '[' => {
                let i = self.key_index()?;
                let existing = data.borrow().get(&k).cloned();
                if let Some(e) = &existing
                    && !matches!(e, Value::List(..))
                {
                    return Err(format!(
                        "unable to parse key: interface conversion: interface {{}} is {}, not []interface {{}}",
                        e.type_name()
                    ));
                }
                let (list, err) = match self.list_item(list_items(existing), i, level) {
                    Ok(l) => (l, None),
                    Err((l, e)) => (l, Some(e)),
                };
                if !k.is_empty() {
                    data.borrow_mut().insert(k, list_value(list));
                }
                match err {
                    Some(e) => Err(e),
                    None => Ok(()),
                }
            }
            '=' => {
                if self.mode == Mode::Json {
                    if self.empty_val() {
                        set(data, &k, Value::Nil);
                        return Ok(());
                    }
                    let v = self.json_value()?;
                    set(data, &k, v);
                    self.empty_val();
                    return Ok(());
                }
                match self.val_list() {
                    Ok(list) => {
                        set(data, &k, list_value(list));
                        Ok(())
                    }
                    Err(ListError::Eof) => {
                        set(data, &k, Value::str(""));
                        Err(EOF.into())
                    }
                    Err(ListError::NotList) => {
                        let (raw, _) = self.until(&[',']);
                        let v = self.value_of(&raw)?;
                        set(data, &k, v);
                        Ok(())
                    }
                    Err(ListError::Other(e)) => Err(e),
                }
            }
            ',' => {
                set(data, &k, Value::str(""));
                Err(format!(
                    "key {} has no value (cannot end with ,)",
                    crate::template::quote::quote(&k)
                ))
            }
            _ => {
                let level = level + 1;
                if level > MAX_NESTED_NAME_LEVEL {
                    return Err(format!(
                        "value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}"
                    ));
                }
                let inner = match data.borrow().get(&k) {
                    Some(v) => match table_of(v) {
                        Some(m) => m,
                        None => {
                            return Err(format!(
                                "unable to parse key: interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                                v.type_name()
                            ));
                        }
                    },
                    None => new_map(),
                };
                let e = self.key(&inner, level);
                if e.is_ok() && inner.borrow().is_empty() {
                    return Err(format!(
                        "key map {} has no value",
                        crate::template::quote::quote(&k)
                    ));
                }
                if !inner.borrow().is_empty() {
                    set(data, &k, Value::Map(inner, MapKind::Any));
                }
                e
            }
        }
    }

    fn key_index(&mut self) -> R<i64> {
        let (v, last) = self.until(&[']']);
        if last.is_none() {
            // Go wraps io.EOF here, and the parse loop ends quietly on it.
            return Err(EOF.into());
        }
        v.parse::<i64>().map_err(|_| {
            format!(
                "error parsing index: strconv.Atoi: parsing {}: invalid syntax",
                crate::template::quote::quote(&v)
            )
        })
    }

    /// Sets item `i` of `list` from what follows; on failure returns the list as Go leaves it
    /// with the error.
    fn list_item(
        &mut self,
        list: Vec<Value>,
        i: i64,
        level: usize,
    ) -> Result<Vec<Value>, (Vec<Value>, String)> {
        if i < 0 {
            return Err((list, format!("negative {i} index not allowed")));
        }
        let (k, last) = self.until(&['[', '.', '=']);
        if !k.is_empty() {
            return Err((
                list,
                format!("unexpected data at end of array index: {}", quote_runes(&k)),
            ));
        }
        let Some(last) = last else {
            return Err((list, EOF.into()));
        };
        match last {
            '=' => {
                if self.mode == Mode::Json {
                    if self.empty_val() {
                        return set_index(list.clone(), i, Value::Nil).map_err(|e| (list, e));
                    }
                    let v = match self.json_value() {
                        Ok(v) => v,
                        Err(e) => return Err((list, e)),
                    };
                    let out = set_index(list.clone(), i, v).map_err(|e| (list, e))?;
                    self.empty_val();
                    return Ok(out);
                }
                let v = match self.val_list() {
                    Ok(l) => list_value(l),
                    Err(ListError::Eof) => Value::str(""),
                    Err(ListError::NotList) => {
                        let (raw, _) = self.until(&[',']);
                        match self.value_of(&raw) {
                            Ok(v) => v,
                            Err(e) => return Err((list, e)),
                        }
                    }
                    Err(ListError::Other(e)) => return Err((list, e)),
                };
                set_index(list.clone(), i, v).map_err(|e| (list, e))
            }
            '[' => {
                let next = match self.key_index() {
                    Ok(n) => n,
                    Err(e) => return Err((list, e)),
                };
                let existing = list.get(i as usize).cloned();
                let inner = match existing {
                    Some(Value::List(l, _)) => l.to_vec(),
                    _ => Vec::new(),
                };
                let inner = match self.list_item(inner, next, level) {
                    Ok(l) => l,
                    Err((_, e)) => return Err((list, e)),
                };
                set_index(list.clone(), i, list_value(inner)).map_err(|e| (list, e))
            }
            '.' => {
                let inner = match list.get(i as usize).and_then(table_of) {
                    Some(m) => m,
                    None => new_map(),
                };
                if let Err(e) = self.key(&inner, level) {
                    return Err((list, e));
                }
                set_index(list.clone(), i, Value::Map(inner, MapKind::Any)).map_err(|e| (list, e))
            }
            other => Err((
                list,
                format!("parse error: unexpected token {}", other as i32),
            )),
        }
    }

    /// Skips spaces; true at the end or at a `,` (consumed).
    fn empty_val(&mut self) -> bool {
        loop {
            match self.read() {
                None | Some(',') => return true,
                Some(c) if crate::sprig::is_go_space(c) => continue,
                Some(_) => {
                    self.unread();
                    return false;
                }
            }
        }
    }

    fn json_value(&mut self) -> R<Value> {
        let rest: String = self.chars[self.pos..].iter().collect();
        let mut stream = serde_json::Deserializer::from_str(&rest).into_iter::<serde_json::Value>();
        match stream.next() {
            Some(Ok(v)) => {
                let used = rest[..stream.byte_offset()].chars().count();
                self.pos += used;
                Ok(Value::from_json(&v))
            }
            Some(Err(e)) => Err(crate::sprig::go_json_error(&rest, &e)),
            None => Err(EOF.into()),
        }
    }

    fn val_list(&mut self) -> Result<Vec<Value>, ListError> {
        match self.read() {
            None => return Err(ListError::Eof),
            Some('{') => {}
            Some(_) => {
                self.unread();
                return Err(ListError::NotList);
            }
        }
        let mut list = Vec::new();
        loop {
            let (rs, last) = self.until(&[',', '}']);
            match last {
                None => return Err(ListError::Other("list must terminate with '}'".into())),
                Some('}') => {
                    if let Some(c) = self.read()
                        && c != ','
                    {
                        self.unread();
                    }
                    list.push(self.value_of(&rs).map_err(ListError::Other)?);
                    return Ok(list);
                }
                Some(_) => list.push(self.value_of(&rs).map_err(ListError::Other)?),
            }
        }
    }
}

enum ListError {
    Eof,
    NotList,
    Other(String),
}

fn set(data: &Values, key: &str, val: Value) {
    if !key.is_empty() {
        data.borrow_mut().insert(key.to_string(), val);
    }
}

/// `--set-literal`: keys nest on `.` and index on `[N]` as `--set` (no `\` escapes, no `,`
/// separators), and everything after the first `=` is the value, as it is.
pub fn parse_literal_into(s: &str, dest: &Values) -> R<()> {
    let mut p = Literal {
        chars: s.chars().collect(),
        pos: 0,
    };
    loop {
        match p.key(dest, 0) {
            Ok(()) => continue,
            Err(e) if e == EOF => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// `%q` of a `[]rune`, as Go prints the unexpected data after an index.
fn quote_runes(rs: &str) -> String {
    let quoted: Vec<String> = rs.chars().map(crate::template::quote::quote_rune).collect();
    format!("[{}]", quoted.join(" "))
}

/// The `--set-literal` parser (Helm's `literalParser`).
struct Literal {
    chars: Vec<char>,
    pos: usize,
}

impl Literal {
    /// Reads to one of `stop` (consumed, returned), or to the end (`None`); no escapes.
    fn until(&mut self, stop: &[char]) -> (String, Option<char>) {
        let mut v = String::new();
        while let Some(&c) = self.chars.get(self.pos) {
            self.pos += 1;
            if stop.contains(&c) {
                return (v, Some(c));
            }
            v.push(c);
        }
        (v, None)
    }

    /// The rest of the input.
    fn rest(&mut self) -> String {
        let v: String = self.chars[self.pos..].iter().collect();
        self.pos = self.chars.len();
        v
    }

    /// An index up to `]`; the end of input ends parsing quietly, as Go's wrapped `io.EOF`.
    fn index(&mut self) -> R<i64> {
        let (v, last) = self.until(&[']']);
        if last.is_none() {
            return Err(EOF.into());
        }
        v.parse::<i64>().map_err(|_| {
            format!(
                "error parsing index: strconv.Atoi: parsing {}: invalid syntax",
                crate::template::quote::quote(&v)
            )
        })
    }

    fn key(&mut self, data: &Values, level: usize) -> R<()> {
        let (k, last) = self.until(&['=', '[', '.']);
        match last {
            None if k.is_empty() => Err(EOF.into()),
            None => Err(format!(
                "key {} has no value",
                crate::template::quote::quote(&k)
            )),
            Some('=') => {
                let v = self.rest();
                set(data, &k, Value::str(&v));
                Ok(())
            }
            Some('.') => {
                let level = level + 1;
                if level > MAX_NESTED_NAME_LEVEL {
                    return Err(format!(
                        "value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}"
                    ));
                }
                let inner = match data.borrow().get(&k) {
                    None => new_map(),
                    Some(v) => {
                        table_of(v).ok_or_else(|| conversion_error(v, "map[string]interface {}"))?
                    }
                };
                let e = self.key(&inner, level);
                if e.is_ok() && inner.borrow().is_empty() {
                    return Err(format!(
                        "key map {} has no value",
                        crate::template::quote::quote(&k)
                    ));
                }
                if !inner.borrow().is_empty() {
                    set(data, &k, Value::Map(inner, MapKind::Any));
                }
                e
            }
            Some(_) => {
                let i = self.index()?;
                let list = match data.borrow().get(&k) {
                    None => Vec::new(),
                    Some(Value::List(l, _)) => l.to_vec(),
                    Some(v) => return Err(conversion_error(v, "[]interface {}")),
                };
                let (list, err) = match self.list_item(list, i, level) {
                    Ok(l) => (l, None),
                    Err((l, e)) => (l, Some(e)),
                };
                set(data, &k, list_value(list));
                err.map_or(Ok(()), Err)
            }
        }
    }

    /// Sets item `i` of `list` from what follows; on failure, the list as Go leaves it and the
    /// error.
    fn list_item(
        &mut self,
        mut list: Vec<Value>,
        i: i64,
        level: usize,
    ) -> Result<Vec<Value>, (Vec<Value>, String)> {
        if i < 0 {
            return Err((list, format!("negative {i} index not allowed")));
        }
        let (k, last) = self.until(&['[', '.', '=']);
        if !k.is_empty() {
            let e = format!("unexpected data at end of array index: {}", quote_runes(&k));
            return Err((list, e));
        }
        let at = usize::try_from(i).unwrap_or(usize::MAX);
        match last {
            None => Err((list, EOF.into())),
            Some('=') => {
                let v = self.rest();
                set_index(list.clone(), i, Value::str(&v)).map_err(|e| (list, e))
            }
            Some('.') => {
                let inner = match list.get(at) {
                    None => new_map(),
                    Some(v) => match table_of(v) {
                        Some(m) => m,
                        None => {
                            // Out-of-order indices: the slot becomes an empty table.
                            let m = new_map();
                            list[at] = Value::Map(m.clone(), MapKind::Any);
                            m
                        }
                    },
                };
                if let Err(e) = self.key(&inner, level) {
                    return Err((list, e));
                }
                set_index(list.clone(), i, Value::Map(inner, MapKind::Any)).map_err(|e| (list, e))
            }
            Some(_) => {
                let next = match self.index() {
                    Ok(n) => n,
                    Err(e) => return Err((list, e)),
                };
                let inner = match list.get(at) {
                    None | Some(Value::Nil) => Vec::new(),
                    Some(Value::List(l, _)) => l.to_vec(),
                    Some(v) => return Err((list.clone(), conversion_error(v, "[]interface {}"))),
                };
                let inner = match self.list_item(inner, next, level) {
                    Ok(l) => l,
                    Err((_, e)) => return Err((list, e)),
                };
                set_index(list.clone(), i, list_value(inner)).map_err(|e| (list, e))
            }
        }
    }
}

/// The panic Go recovers from when a key's existing value has another type.
fn conversion_error(v: &Value, want: &str) -> String {
    let have = if matches!(v, Value::Nil) {
        "nil".to_string()
    } else {
        v.type_name()
    };
    format!("unable to parse key: interface conversion: interface {{}} is {have}, not {want}")
}
