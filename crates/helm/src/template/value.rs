//! Values a template works on, typed as Go types them: the difference between `int` and
//! `float64`, `[]string` and `[]interface {}`, a nil interface and no value at all shows in
//! Helm's output and error messages, so it is kept.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

/// Go's signed integer types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntKind {
    Int,
    Int8,
    Int16,
    Int32,
    Int64,
}

/// Go's unsigned integer types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UintKind {
    Uint,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Uintptr,
}

/// The element type of a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `[]interface {}`.
    Any,
    /// `[]string`.
    String,
    /// `[]int`.
    Int,
}

/// The type of a map (keys are always strings here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// `map[string]interface {}`.
    Any,
    /// `map[string]string`.
    String,
    /// Helm's named `common.Values`.
    Values,
}

/// A map, shared: Sprig's `set`, `unset` and `merge` change it where every holder sees it.
pub type MapRef = Rc<RefCell<BTreeMap<String, Value>>>;

/// A Go struct or pointer exposed to templates (`.Chart`, `.Capabilities`, `.Files`, a
/// certificate from `genCA`, a semantic version …).
pub trait Object: fmt::Debug {
    /// Go's name of the type, as `%T` and error messages print it (`*chart.Metadata`).
    fn type_name(&self) -> String;
    /// An exported field, if there is one of that name.
    fn field(&self, name: &str) -> Option<Value>;
    /// A method, bound to this object, if there is one of that name.
    fn method(self: Rc<Self>, name: &str) -> Option<Rc<super::func::Func>> {
        let _ = name;
        None
    }
    /// The fields in declaration order, for printing (`{a b}`) and `%+v`.
    fn fields(&self) -> Vec<(&'static str, Value)> {
        Vec::new()
    }
    /// Whether it is a pointer (printed `&{…}` at the top).
    fn is_pointer(&self) -> bool {
        true
    }
    /// Its `String()` method, for types that are `fmt.Stringer`s.
    fn string(&self) -> Option<String> {
        None
    }
    /// What `encoding/json` would marshal it as (a map keyed by the JSON names), for
    /// `toJson`, `toYaml` and friends.
    fn json(&self) -> Value {
        Value::map(
            self.fields()
                .into_iter()
                .map(|(name, value)| (name.to_string(), value))
                .collect(),
        )
    }
    /// For Go map types with methods (Helm's `.Files`): the entries, in key order, which
    /// `range`, `index`, `len` and field access see.
    fn map_entries(&self) -> Option<Vec<(String, Value)>> {
        None
    }
    /// For Go maps whose keys are not strings (struct keys): the entries, which `range` and
    /// `len` see.
    fn keyed_entries(&self) -> Option<Vec<(Value, Value)>> {
        None
    }
    /// For Go slice types with methods (Helm's `.Capabilities.APIVersions`): the elements,
    /// which `range`, `index`, `len` and printing see.
    fn list_items(&self) -> Option<Vec<Value>> {
        None
    }
    /// Its fields as `encoding/json` writes them, in order (JSON names, empty `omitempty`
    /// fields left out).
    fn json_fields(&self) -> Vec<(String, Value)> {
        self.fields()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }
    /// Its JSON text when it marshals itself (`time.Time`, a semantic version).
    fn json_text(&self) -> Option<String> {
        None
    }
    /// For functions that take this one type.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A value.
#[derive(Debug, Clone)]
pub enum Value {
    /// No value (Go's zero `reflect.Value`): what a missing map key gives once a pipeline is
    /// done with it; printed `<no value>`.
    Invalid,
    /// A nil `interface {}`: a YAML `null`, or a missing key read inside a chain of fields.
    Nil,
    Bool(bool),
    Int(i64, IntKind),
    Uint(u64, UintKind),
    Float(f64),
    Complex(f64, f64),
    String(Rc<str>),
    /// `[]byte`.
    Bytes(Rc<[u8]>),
    List(Rc<Vec<Value>>, ListKind),
    /// A nil slice of that kind.
    NilList(ListKind),
    Map(MapRef, MapKind),
    /// A nil map of that kind.
    NilMap(MapKind),
    Object(Rc<dyn Object>),
    Func(Rc<super::func::Func>),
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::String(Rc::from(s))
    }

    pub fn int(i: i64) -> Value {
        Value::Int(i, IntKind::Int)
    }

    pub fn int64(i: i64) -> Value {
        Value::Int(i, IntKind::Int64)
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(items), ListKind::Any)
    }

    pub fn string_list(items: Vec<String>) -> Value {
        Value::List(
            Rc::new(
                items
                    .into_iter()
                    .map(|s| Value::String(Rc::from(s)))
                    .collect(),
            ),
            ListKind::String,
        )
    }

    pub fn map(entries: BTreeMap<String, Value>) -> Value {
        Value::Map(Rc::new(RefCell::new(entries)), MapKind::Any)
    }

    /// Go's type name (`reflect.Type.String()`).
    pub fn type_name(&self) -> String {
        match self {
            Value::Invalid => "<nil>".into(),
            Value::Nil => "interface {}".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_, k) => match k {
                IntKind::Int => "int",
                IntKind::Int8 => "int8",
                IntKind::Int16 => "int16",
                IntKind::Int32 => "int32",
                IntKind::Int64 => "int64",
            }
            .into(),
            Value::Uint(_, k) => match k {
                UintKind::Uint => "uint",
                UintKind::Uint8 => "uint8",
                UintKind::Uint16 => "uint16",
                UintKind::Uint32 => "uint32",
                UintKind::Uint64 => "uint64",
                UintKind::Uintptr => "uintptr",
            }
            .into(),
            Value::Float(_) => "float64".into(),
            Value::Complex(..) => "complex128".into(),
            Value::String(_) => "string".into(),
            Value::Bytes(_) => "[]uint8".into(),
            Value::List(_, k) | Value::NilList(k) => match k {
                ListKind::Any => "[]interface {}",
                ListKind::String => "[]string",
                ListKind::Int => "[]int",
            }
            .into(),
            Value::Map(_, k) | Value::NilMap(k) => match k {
                MapKind::Any => "map[string]interface {}",
                MapKind::String => "map[string]string",
                MapKind::Values => "common.Values",
            }
            .into(),
            Value::Object(o) => o.type_name(),
            Value::Func(f) => f.type_name(),
        }
    }

    /// Go's truth (`template.IsTrue`): the zero value of a type is false; `None` for a value
    /// that has no truth (none here; kept for Go's shape).
    pub fn truth(&self) -> bool {
        match self {
            Value::Invalid | Value::Nil | Value::NilList(_) | Value::NilMap(_) => false,
            Value::Bool(b) => *b,
            Value::Int(i, _) => *i != 0,
            Value::Uint(u, _) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::Complex(r, i) => *r != 0.0 || *i != 0.0,
            Value::String(s) => !s.is_empty(),
            Value::Bytes(b) => !b.is_empty(),
            Value::List(l, _) => !l.is_empty(),
            Value::Map(m, _) => !m.borrow().is_empty(),
            Value::Object(o) => {
                if let Some(entries) = o.map_entries() {
                    !entries.is_empty()
                } else if let Some(items) = o.list_items() {
                    !items.is_empty()
                } else {
                    true
                }
            }
            Value::Func(_) => true,
        }
    }

    /// The string inside, for values of Go kind string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Whether the value is Go's nil (no value, a nil interface, slice or map).
    pub fn is_nil(&self) -> bool {
        matches!(
            self,
            Value::Invalid | Value::Nil | Value::NilList(_) | Value::NilMap(_)
        )
    }

    /// A value read from JSON, numbers as `float64` as `encoding/json` reads them into
    /// `interface {}` (Helm reads values files that way).
    pub fn from_json(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Nil,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => Value::str(s),
            serde_json::Value::Array(items) => {
                Value::list(items.iter().map(Value::from_json).collect())
            }
            serde_json::Value::Object(map) => Value::map(
                map.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// The value as JSON data (numbers keep their kind; objects by their JSON form).
    pub fn to_json_value(&self) -> Result<serde_json::Value, String> {
        use serde_json::Value as J;
        Ok(match self {
            Value::Invalid | Value::Nil | Value::NilList(_) | Value::NilMap(_) => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i, _) => J::from(*i),
            Value::Uint(u, _) => J::from(*u),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(J::Number)
                .ok_or("unsupported value: NaN or Inf")?,
            Value::Complex(..) => return Err("unsupported type: complex128".into()),
            Value::String(s) => J::String(s.to_string()),
            Value::Bytes(b) => J::String(String::from_utf8_lossy(b).into_owned()),
            Value::List(items, _) => J::Array(
                items
                    .iter()
                    .map(Value::to_json_value)
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(m, _) => {
                let mut out = serde_json::Map::new();
                for (k, v) in m.borrow().iter() {
                    out.insert(k.clone(), v.to_json_value()?);
                }
                J::Object(out)
            }
            Value::Object(o) => o.json().to_json_value()?,
            Value::Func(f) => return Err(format!("unsupported type: {}", f.type_name())),
        })
    }
}
