//! Field paths and path elements: the addresses of fields inside an object.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

use crate::value;

/// One step of a path.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// A field of a map: `.name`.
    Field(String),
    /// An item of a map list, by its key fields sorted by name: `[name="a"]`.
    Key(Vec<(String, Value)>),
    /// An item of a set, by value: `[="a"]`.
    Value(Value),
    /// An item of an atomic list by position: `[0]`.
    Index(i64),
}

impl PathElement {
    /// A field element.
    pub fn field(name: &str) -> PathElement {
        PathElement::Field(name.to_string())
    }

    /// A key element; the fields are sorted by name.
    pub fn key(mut fields: Vec<(String, Value)>) -> PathElement {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        PathElement::Key(fields)
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }
}

fn compare_keys(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for (x, y) in a.iter().zip(b.iter()) {
        let c = x.0.cmp(&y.0);
        if c != Ordering::Equal {
            return c;
        }
        let c = value::compare(&x.1, &y.1);
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => compare_keys(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => value::compare(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value::to_display(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", value::to_display(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path: a sequence of elements from the root.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// Builds a path from elements.
    pub fn new(elements: Vec<PathElement>) -> Path {
        Path(elements)
    }

    /// A path of field names.
    pub fn fields(names: &[&str]) -> Path {
        Path(names.iter().map(|n| PathElement::field(n)).collect())
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for pe in &self.0 {
            write!(f, "{pe}")?;
        }
        Ok(())
    }
}

/// Serialises a path element as FieldsV1 does: `f:name`, `k:{"name":"a"}`, `v:"x"`, `i:0`.
pub fn serialize_element(pe: &PathElement) -> String {
    match pe {
        PathElement::Field(name) => format!("f:{name}"),
        PathElement::Key(fields) => {
            let mut out = String::from("k:{");
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(':');
                out.push_str(&serde_json::to_string(v).unwrap_or_default());
            }
            out.push('}');
            out
        }
        PathElement::Value(v) => format!("v:{}", serde_json::to_string(v).unwrap_or_default()),
        PathElement::Index(i) => format!("i:{i}"),
    }
}

/// Parses a FieldsV1 key back into a path element.
pub fn deserialize_element(s: &str) -> Result<PathElement, String> {
    if s.len() < 2 || s.as_bytes()[1] != b':' {
        return Err(format!("invalid path element {s:?}"));
    }
    let rest = &s[2..];
    match s.as_bytes()[0] {
        b'f' => Ok(PathElement::Field(rest.to_string())),
        b'v' => serde_json::from_str::<Value>(rest)
            .map(PathElement::Value)
            .map_err(|e| format!("invalid value in path element {s:?}: {e}")),
        b'k' => match serde_json::from_str::<Value>(rest) {
            Ok(Value::Object(m)) => Ok(PathElement::key(m.into_iter().collect())),
            Ok(_) => Err(format!("key path element {s:?} is not an object")),
            Err(e) => Err(format!("invalid key in path element {s:?}: {e}")),
        },
        b'i' => rest
            .parse::<i64>()
            .map(PathElement::Index)
            .map_err(|e| format!("invalid index in path element {s:?}: {e}")),
        _ => Err(format!("unknown path element type in {s:?}")),
    }
}
