//! Helm's template functions on top of Sprig: `include`, `tpl`, `required`, `fail`,
//! `lookup`, and the YAML, JSON and TOML converters (`toYaml` writes as
//! `sigs.k8s.io/yaml` does: Go's JSON encoder, then go-yaml v2).

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::sprig::{self, JsonStyle};
use crate::template::func::{Func, Ty};
use crate::template::value::{ListKind, MapKind, Value};
use crate::template::{FuncMap, State};

/// Helm's limit on a template including itself.
pub const RECURSION_MAX: usize = 1000;

const WARN_START: &str = "HELM_ERR_START";
const WARN_END: &str = "HELM_ERR_END";

/// What `lookup` asks a cluster; rendering offline answers nothing.
pub trait Lookup {
    /// The object (`name` set) or a `List` of objects, as JSON; `None` when absent.
    fn lookup(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<serde_json::Value>, String>;
}

/// Per-render state the functions share.
pub struct Context {
    /// How many times each template is being included, for the recursion limit.
    pub included: RefCell<HashMap<String, usize>>,
    /// `--strict`: missing keys are errors.
    pub strict: bool,
    pub lookup: Option<Rc<dyn Lookup>>,
}

fn context(state: &State) -> Option<&Context> {
    state
        .ext
        .as_ref()
        .and_then(|e| (e.as_ref() as &dyn Any).downcast_ref::<Context>())
}

/// Helm's `warnWrap`: marks messages the error formatter shows as they are.
pub fn warn_wrap(message: &str) -> String {
    format!("{WARN_START}{message}{WARN_END}")
}

/// Finds a `warnWrap`ped message in an error text.
pub fn warn_message(text: &str) -> Option<&str> {
    let start = text.find(WARN_START)? + WARN_START.len();
    let end = text.rfind(WARN_END)?;
    (end >= start).then(|| &text[start..end])
}

/// `toYaml`: Go's JSON encoding of the value, then go-yaml v2's YAML; the final newline
/// dropped. Values JSON cannot hold give "".
pub fn to_yaml(v: &Value) -> String {
    match to_yaml_document(v) {
        Ok(text) => text.strip_suffix('\n').unwrap_or(&text).to_string(),
        Err(_) => String::new(),
    }
}

/// `json.Marshal`, as Helm's `toJson` and `mustToJson` call it.
fn json_text(v: &Value) -> Result<String, String> {
    sprig::to_json(v, JsonStyle::Compact)
}

/// `sigs.k8s.io/yaml.Marshal`.
pub fn to_yaml_document(v: &Value) -> Result<String, String> {
    sprig::json_cycle_check(v).map_err(|e| format!("error marshaling into JSON: {e}"))?;
    let json = sprig::to_json(v, JsonStyle::Compact)?;
    let data: serde_json::Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
    Ok(tidegate_core::yaml::gov2::to_yaml(&data))
}

fn from_yaml_value(text: &str) -> Result<serde_json::Value, String> {
    crate::chart::read_yaml(text)
}

fn go_type_of_json(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// Helm's additions and overrides to Sprig's functions.
pub fn funcs() -> FuncMap {
    let mut m = FuncMap::new();
    use Ty::{Any as A, String as Str};
    m.insert(Func::new("toYaml", &[A], None, |_, a| {
        Ok(Value::str(&to_yaml(&a[0])))
    }));
    m.insert(Func::new("mustToYaml", &[A], None, |_, a| {
        let text = to_yaml_document(&a[0])?;
        Ok(Value::str(text.strip_suffix('\n').unwrap_or(&text)))
    }));
    m.insert(Func::new("toYamlPretty", &[A], None, |_, a| {
        Ok(Value::str(&to_yaml_pretty(&a[0])))
    }));
    m.insert(Func::new("fromYaml", &[Str], None, |_, a| {
        Ok(match from_yaml_value(sprig::strval(&a[0]).as_str()) {
            Ok(serde_json::Value::Object(o)) => Value::from_json(&serde_json::Value::Object(o)),
            Ok(serde_json::Value::Null) => Value::map(Default::default()),
            Ok(other) => sprig::error_map(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                go_type_of_json(&other)
            )),
            Err(e) => sprig::error_map(e),
        })
    }));
    m.insert(Func::new("fromYamlArray", &[Str], None, |_, a| {
        Ok(match from_yaml_value(sprig::strval(&a[0]).as_str()) {
            Ok(serde_json::Value::Array(items)) => Value::from_json(&serde_json::Value::Array(items)),
            Ok(serde_json::Value::Null) => sprig::empty_list(),
            Ok(other) => Value::List(
                Rc::new(vec![Value::str(&format!(
                    "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
                    go_type_of_json(&other)
                ))]),
                ListKind::Any,
            ),
            Err(e) => Value::List(Rc::new(vec![Value::str(&e)]), ListKind::Any),
        })
    }));
    m.insert(Func::new("toJson", &[A], None, |_, a| {
        Ok(Value::str(&json_text(&a[0]).unwrap_or_default()))
    }));
    m.insert(Func::new("mustToJson", &[A], None, |_, a| {
        Ok(Value::str(&json_text(&a[0])?))
    }));
    m.insert(Func::new("fromJson", &[Str], None, |_, a| {
        let text = sprig::strval(&a[0]);
        Ok(match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(serde_json::Value::Object(o)) => Value::from_json(&serde_json::Value::Object(o)),
            Ok(serde_json::Value::Null) => Value::map(Default::default()),
            Ok(other) => sprig::error_map(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                go_type_of_json(&other)
            )),
            Err(e) => sprig::error_map(sprig::go_json_error(&text, &e)),
        })
    }));
    m.insert(Func::new("fromJsonArray", &[Str], None, |_, a| {
        let text = sprig::strval(&a[0]);
        Ok(match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(serde_json::Value::Array(items)) => {
                Value::from_json(&serde_json::Value::Array(items))
            }
            Ok(serde_json::Value::Null) => sprig::empty_list(),
            Ok(other) => Value::List(
                Rc::new(vec![Value::str(&format!(
                    "json: cannot unmarshal {} into Go value of type []interface {{}}",
                    go_type_of_json(&other)
                ))]),
                ListKind::Any,
            ),
            Err(e) => Value::List(
                Rc::new(vec![Value::str(&sprig::go_json_error(&text, &e))]),
                ListKind::Any,
            ),
        })
    }));
    m.insert(Func::new("toToml", &[A], None, |_, a| {
        Ok(Value::str(&to_toml(&a[0])))
    }));
    m.insert(Func::new("fromToml", &[Str], None, |_, a| {
        Ok(match sprig::strval(&a[0]).parse::<toml::Table>() {
            Ok(t) => toml_to_value(&toml::Value::Table(t)),
            Err(e) => sprig::error_map(e.message().to_string()),
        })
    }));
    m.insert(Func::new("include", &[Str, A], None, include));
    m.insert(Func::new("tpl", &[Str, A], None, tpl));
    m.insert(Func::new("required", &[Str, A], None, |_, a| {
        let warn = sprig::strval(&a[0]);
        match &a[1] {
            Value::Nil | Value::Invalid => Err(warn_wrap(&warn)),
            Value::String(s) if s.is_empty() => Err(warn_wrap(&warn)),
            v => Ok(v.clone()),
        }
    }));
    m.insert(Func::new("fail", &[Str], None, |_, a| {
        Err(warn_wrap(&sprig::strval(&a[0])))
    }));
    m.insert(Func::new(
        "lookup",
        &[Str, Str, Str, Str],
        None,
        |state, a| {
            let Some(lookup) = context(state).and_then(|c| c.lookup.clone()) else {
                return Ok(Value::map(Default::default()));
            };
            let s = |i: usize| sprig::strval(&a[i]);
            match lookup.lookup(&s(0), &s(1), &s(2), &s(3))? {
                Some(v) => Ok(Value::from_json(&v)),
                None => Ok(Value::map(Default::default())),
            }
        },
    ));
    m.insert(Func::new("getHostByName", &[Str], None, |_, _| {
        Ok(Value::str(""))
    }));
    m
}

fn include(state: &mut State, a: Vec<Value>) -> Result<Value, String> {
    let name = sprig::strval(&a[0]);
    if let Some(ctx) = context(state) {
        let mut included = ctx.included.borrow_mut();
        let count = included.entry(name.clone()).or_insert(0);
        if *count > RECURSION_MAX {
            return Err(format!(
                "rendering template has a nested reference name: {name}: unable to execute template"
            ));
        }
        *count += 1;
    }
    let result = stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, || {
        state.execute_template(&name, a[1].clone())
    });
    if let Some(ctx) = context(state)
        && let Some(count) = ctx.included.borrow_mut().get_mut(&name)
    {
        *count = count.saturating_sub(1);
    }
    result.map(|out| Value::str(&out))
}

fn tpl(state: &mut State, a: Vec<Value>) -> Result<Value, String> {
    let text = sprig::strval(&a[0]);
    let mut set = state.set.clone_set();
    let name = set.name.clone();
    let tree = set.parse_template(&name, &text).map_err(|e| {
        format!(
            "cannot parse template {}: {e}",
            crate::template::quote::quote(&text)
        )
    })?;
    let set = Rc::new(set);
    let out = set
        .execute_tree(&tree, a[1].clone(), state.ext.clone())
        .map_err(|e| {
            format!(
                "error during tpl function execution for {}: {e}",
                crate::template::quote::quote(&text)
            )
        })?;
    Ok(Value::str(&out.replace("<no value>", "")))
}

/// `toYamlPretty`: the value encoded by go-yaml v3 with two-space indents (not through JSON,
/// so floats keep Go's `%g` form); "" for what JSON cannot hold.
fn to_yaml_pretty(v: &Value) -> String {
    if sprig::json_cycle_check(v).is_err() {
        return String::new();
    }
    let Ok(json) = v.to_json_value() else {
        return String::new();
    };
    let doc = tidegate_core::yaml::gov2::to_yaml_v3(&json);
    doc.strip_suffix('\n').unwrap_or(&doc).to_string()
}

fn to_toml(v: &Value) -> String {
    // Go's encoder would recurse without end on a value that contains itself.
    if let Err(e) = sprig::json_cycle_check(v) {
        return e;
    }
    let Ok(json) = v.to_json_value() else {
        return "unsupported type".into();
    };
    super::toml::encode(&json).unwrap_or_else(|e| e)
}

fn toml_to_value(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::str(s),
        toml::Value::Integer(i) => Value::Int(*i, crate::template::value::IntKind::Int64),
        toml::Value::Float(f) => Value::Float(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::str(&d.to_string()),
        toml::Value::Array(items) => Value::List(
            Rc::new(items.iter().map(toml_to_value).collect()),
            ListKind::Any,
        ),
        toml::Value::Table(t) => Value::Map(
            Rc::new(RefCell::new(
                t.iter()
                    .map(|(k, v)| (k.clone(), toml_to_value(v)))
                    .collect(),
            )),
            MapKind::Any,
        ),
    }
}
