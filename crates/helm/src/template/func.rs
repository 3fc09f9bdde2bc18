//! Functions a template can call, with Go signatures: the executor checks arguments against
//! the parameter types as Go's reflection does, so a `float64` given to an `int` parameter
//! fails with Go's message.

use std::collections::HashMap;
use std::rc::Rc;

use super::exec::State;
use super::value::{ListKind, MapKind, Value};

/// A Go parameter type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `interface {}`: anything; a missing value arrives as `Nil`.
    Any,
    /// `reflect.Value`: anything, a missing value arrives as `Invalid`.
    Reflect,
    String,
    Bool,
    Int,
    Int64,
    Float64,
    /// `map[string]interface {}` (Helm's `Values` too).
    Map,
    /// `[]interface {}`.
    List,
    /// `[]string`.
    StringList,
    /// `[]byte`.
    Bytes,
    /// A struct or pointer type by its Go name (`*semver.Version`).
    Named(&'static str),
}

impl Ty {
    /// Go's name of the type.
    pub fn name(self) -> String {
        match self {
            Ty::Any => "interface {}".into(),
            Ty::Reflect => "reflect.Value".into(),
            Ty::String => "string".into(),
            Ty::Bool => "bool".into(),
            Ty::Int => "int".into(),
            Ty::Int64 => "int64".into(),
            Ty::Float64 => "float64".into(),
            Ty::Map => "map[string]interface {}".into(),
            Ty::List => "[]interface {}".into(),
            Ty::StringList => "[]string".into(),
            Ty::Bytes => "[]uint8".into(),
            Ty::Named(n) => n.into(),
        }
    }

    /// Whether Go's `nil` can be a value of this type.
    pub fn can_be_nil(self) -> bool {
        matches!(
            self,
            Ty::Any | Ty::Reflect | Ty::Map | Ty::List | Ty::StringList | Ty::Bytes
        ) || matches!(self, Ty::Named(n) if n.starts_with('*'))
    }

    /// The zero value of a type that can be nil.
    pub fn nil(self) -> Value {
        match self {
            Ty::Reflect => Value::Invalid,
            Ty::Map => Value::NilMap(MapKind::Any),
            Ty::List => Value::NilList(ListKind::Any),
            Ty::StringList => Value::NilList(ListKind::String),
            _ => Value::Nil,
        }
    }

    /// Whether a (non-nil) value is assignable to this type.
    pub fn accepts(self, v: &Value) -> bool {
        match self {
            Ty::Any | Ty::Reflect => true,
            Ty::String => matches!(v, Value::String(_)),
            Ty::Bool => matches!(v, Value::Bool(_)),
            Ty::Int => matches!(v, Value::Int(_, super::value::IntKind::Int)),
            Ty::Int64 => matches!(v, Value::Int(_, super::value::IntKind::Int64)),
            Ty::Float64 => matches!(v, Value::Float(_)),
            Ty::Map => matches!(
                v,
                Value::Map(_, MapKind::Any | MapKind::Values)
                    | Value::NilMap(MapKind::Any | MapKind::Values)
            ),
            Ty::List => matches!(
                v,
                Value::List(_, ListKind::Any) | Value::NilList(ListKind::Any)
            ),
            Ty::StringList => matches!(
                v,
                Value::List(_, ListKind::String) | Value::NilList(ListKind::String)
            ),
            Ty::Bytes => matches!(v, Value::Bytes(_)),
            Ty::Named(n) => v.type_name() == n,
        }
    }
}

/// A function body: the executor's state (for `include`, `tpl` and friends) and the
/// arguments, already checked against the signature.
pub type Body = dyn Fn(&mut State, Vec<Value>) -> Result<Value, String>;

/// What the executor treats specially, as Go's does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// `and`: short-circuits.
    And,
    /// `or`: short-circuits.
    Or,
}

/// A function or a bound method.
pub struct Func {
    pub name: String,
    /// Fixed parameters.
    pub params: Vec<Ty>,
    /// The element type of a final `...` parameter.
    pub variadic: Option<Ty>,
    /// The Go result type, for `%T` of the function itself.
    pub result: &'static str,
    pub special: Option<Special>,
    pub body: Rc<Body>,
}

impl std::fmt::Debug for Func {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "func {}", self.name)
    }
}

impl Func {
    /// A function from a name, a signature and a body.
    pub fn new(
        name: &str,
        params: &[Ty],
        variadic: Option<Ty>,
        body: impl Fn(&mut State, Vec<Value>) -> Result<Value, String> + 'static,
    ) -> Func {
        Func {
            name: name.to_string(),
            params: params.to_vec(),
            variadic,
            result: "interface {}",
            special: None,
            body: Rc::new(body),
        }
    }

    /// Go's `func(…) …` type name.
    pub fn type_name(&self) -> String {
        let mut params: Vec<String> = self.params.iter().map(|t| t.name()).collect();
        if let Some(v) = self.variadic {
            params.push(format!("...{}", v.name()));
        }
        format!("func({}) {}", params.join(", "), self.result)
    }
}

/// The functions a template set knows, by name.
#[derive(Clone, Default)]
pub struct FuncMap {
    funcs: HashMap<String, Rc<Func>>,
}

impl FuncMap {
    pub fn new() -> FuncMap {
        FuncMap::default()
    }

    /// Adds or replaces a function.
    pub fn insert(&mut self, func: Func) {
        self.funcs.insert(func.name.clone(), Rc::new(func));
    }

    /// Adds a function under another name too (Sprig's aliases).
    pub fn alias(&mut self, alias: &str, name: &str) {
        if let Some(f) = self.funcs.get(name).cloned() {
            self.funcs.insert(alias.to_string(), f);
        }
    }

    pub fn get(&self, name: &str) -> Option<&Rc<Func>> {
        self.funcs.get(name)
    }

    /// The names of the functions.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.funcs.keys().map(String::as_str)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.funcs.contains_key(name)
    }

    pub fn remove(&mut self, name: &str) {
        self.funcs.remove(name);
    }

    /// Adds every function of `other`, replacing those of the same name.
    pub fn extend(&mut self, other: &FuncMap) {
        for (k, v) in &other.funcs {
            self.funcs.insert(k.clone(), v.clone());
        }
    }
}
