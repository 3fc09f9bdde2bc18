//! `values.schema.json` validation as Helm v4 does it (santhosh-tekuri/jsonschema v6, draft
//! 2020-12 by default): the keywords charts use, and the library's messages and layout
//! (`- at '/path': minimum: got -5, want 0`). Properties are checked in key order (Go walks
//! them in random order; this is one of those orders). `format` is an annotation, as there.

use std::cell::RefCell;

use serde_json::Value as Json;
use url::Url;

use super::schema_load::{DefaultLoader, Documents, SchemaLoader};

use crate::chart::Chart;
use crate::template::fmt::format_float;

/// One error and the errors under it.
struct VErr {
    location: Vec<String>,
    message: String,
    /// A `$ref` wrapper, left out of the display when it has one cause.
    reference: bool,
    causes: Vec<VErr>,
}

struct Validator<'a> {
    documents: &'a Documents,
    /// The base URLs of the documents the `$ref`s followed so far lead through.
    bases: RefCell<Vec<&'a Url>>,
    draft4: bool,
}

fn quote(s: &str) -> String {
    let q = crate::template::quote::quote(s);
    let inner = &q[1..q.len() - 1];
    format!("'{}'", inner.replace("\\\"", "\"").replace('\'', "\\'"))
}

fn join_quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|s| quote(s))
        .collect::<Vec<_>>()
        .join(", ")
}

fn display(v: &Json) -> String {
    match v {
        Json::String(s) => quote(s),
        Json::Array(_) | Json::Object(_) => "value".into(),
        Json::Number(n) => number_text(n.as_f64().unwrap_or(0.0)),
        Json::Bool(b) => b.to_string(),
        Json::Null => "<nil>".into(),
    }
}

fn number_text(f: f64) -> String {
    format_float(f, 'g', None)
}

fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn is_integer(v: &Json) -> bool {
    v.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn escape_token(t: &str) -> String {
    t.replace('~', "~0").replace('/', "~1")
}

fn pointer(loc: &[String]) -> String {
    loc.iter()
        .map(|t| format!("/{}", escape_token(t)))
        .collect()
}

fn equals(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equals(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| equals(v, w)))
        }
        _ => a == b,
    }
}

impl<'a> Validator<'a> {
    /// The schema `reference` names from the current document, and that schema's document
    /// base.
    fn resolve(&self, reference: &str) -> Option<(&'a Json, &'a Url)> {
        let base = *self.bases.borrow().last()?;
        self.documents.resolve(base, reference)
    }

    fn err(loc: &[String], message: String) -> VErr {
        VErr {
            location: loc.to_vec(),
            message,
            reference: false,
            causes: Vec::new(),
        }
    }

    /// Validates `v` at `loc` against `sch`: `None` when valid, else the error (a group when
    /// several).
    fn validate(&self, v: &Json, sch: &Json, loc: &[String], depth: usize) -> Option<VErr> {
        if depth > 200 {
            return Some(Validator::err(loc, "validation failed".into()));
        }
        let s = match sch {
            Json::Bool(true) => return None,
            Json::Bool(false) => return Some(Validator::err(loc, "false schema".into())),
            Json::Object(s) => s,
            _ => return None,
        };
        if let Some(t) = s.get("type") {
            let want: Vec<&str> = match t {
                Json::String(x) => vec![x.as_str()],
                Json::Array(items) => items.iter().filter_map(|i| i.as_str()).collect(),
                _ => Vec::new(),
            };
            let got = json_type(v);
            let matched = want.is_empty()
                || want.contains(&got)
                || (want.contains(&"integer") && got == "number" && is_integer(v));
            if !matched {
                let order = [
                    "null", "boolean", "number", "integer", "string", "array", "object",
                ];
                let mut sorted: Vec<&str> =
                    order.iter().copied().filter(|o| want.contains(o)).collect();
                sorted.dedup();
                return Some(Validator::err(
                    loc,
                    format!("got {got}, want {}", sorted.join(" or ")),
                ));
            }
        }
        if let Some(c) = s.get("const")
            && !equals(v, c)
        {
            let message = match c {
                Json::Array(_) | Json::Object(_) => "'const' failed".to_string(),
                other => format!("value must be {}", display(other)),
            };
            return Some(Validator::err(loc, message));
        }
        if let Some(Json::Array(options)) = s.get("enum")
            && !options.iter().any(|o| equals(v, o))
        {
            let primitive = options
                .iter()
                .all(|o| !matches!(o, Json::Array(_) | Json::Object(_)));
            let message = if !primitive {
                "'enum' failed".to_string()
            } else if options.len() == 1 {
                format!("value must be {}", display(&options[0]))
            } else {
                format!(
                    "value must be one of {}",
                    options.iter().map(display).collect::<Vec<_>>().join(", ")
                )
            };
            return Some(Validator::err(loc, message));
        }
        let mut errors: Vec<VErr> = Vec::new();
        if let Some(Json::String(r)) = s.get("$ref") {
            match self.resolve(r) {
                Some((target, base)) => {
                    self.bases.borrow_mut().push(base);
                    let result = self.validate(v, target, loc, depth + 1);
                    self.bases.borrow_mut().pop();
                    if let Some(e) = result {
                        let causes = if e.message == "validation failed"
                            && !e.causes.is_empty()
                            && !e.reference
                        {
                            e.causes
                        } else {
                            vec![e]
                        };
                        let wrapped = VErr {
                            location: loc.to_vec(),
                            message: "validation failed".into(),
                            reference: true,
                            causes,
                        };
                        if self.draft4 {
                            return Some(wrapped);
                        }
                        errors.push(wrapped);
                    }
                }
                None => {
                    return Some(Validator::err(
                        loc,
                        format!("cannot resolve reference {}", quote(r)),
                    ));
                }
            }
            if self.draft4 {
                return None;
            }
        }
        match v {
            Json::Object(obj) => self.object(obj, s, loc, depth, &mut errors),
            Json::Array(arr) => self.array(arr, s, loc, depth, &mut errors),
            Json::String(text) => self.string(text, s, loc, &mut errors),
            Json::Number(n) => self.number(n.as_f64().unwrap_or(0.0), s, loc, &mut errors),
            _ => {}
        }
        if errors.is_empty() {
            self.conditions(v, s, loc, depth, &mut errors);
        }
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(VErr {
                location: loc.to_vec(),
                message: "validation failed".into(),
                reference: false,
                causes: errors,
            }),
        }
    }

    fn object(
        &self,
        obj: &serde_json::Map<String, Json>,
        s: &serde_json::Map<String, Json>,
        loc: &[String],
        depth: usize,
        errors: &mut Vec<VErr>,
    ) {
        let count = |k: &str| s.get(k).and_then(Json::as_u64);
        if let Some(min) = count("minProperties")
            && (obj.len() as u64) < min
        {
            errors.push(Validator::err(
                loc,
                format!("minProperties: got {}, want {min}", obj.len()),
            ));
        }
        if let Some(max) = count("maxProperties")
            && (obj.len() as u64) > max
        {
            errors.push(Validator::err(
                loc,
                format!("maxProperties: got {}, want {max}", obj.len()),
            ));
        }
        if let Some(Json::Array(required)) = s.get("required") {
            let missing: Vec<String> = required
                .iter()
                .filter_map(Json::as_str)
                .filter(|r| !obj.contains_key(*r))
                .map(String::from)
                .collect();
            match missing.len() {
                0 => {}
                1 => errors.push(Validator::err(
                    loc,
                    format!("missing property {}", quote(&missing[0])),
                )),
                _ => errors.push(Validator::err(
                    loc,
                    format!("missing properties {}", join_quoted(&missing)),
                )),
            }
        }
        let properties = s.get("properties").and_then(Json::as_object);
        let patterns: Vec<(regex::Regex, &Json)> = s
            .get("patternProperties")
            .and_then(Json::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(p, sch)| regex::Regex::new(p).ok().map(|re| (re, sch)))
                    .collect()
            })
            .unwrap_or_default();
        let mut additional = Vec::new();
        for (name, value) in obj {
            let mut child = loc.to_vec();
            child.push(name.clone());
            let mut evaluated = false;
            if let Some(sch) = properties.and_then(|p| p.get(name)) {
                evaluated = true;
                if let Some(e) = self.validate(value, sch, &child, depth + 1) {
                    errors.push(e);
                }
            }
            for (re, sch) in &patterns {
                if re.is_match(name) {
                    evaluated = true;
                    if let Some(e) = self.validate(value, sch, &child, depth + 1) {
                        errors.push(e);
                    }
                }
            }
            if !evaluated && let Some(extra) = s.get("additionalProperties") {
                match extra {
                    Json::Bool(false) => additional.push(name.clone()),
                    Json::Object(_) => {
                        if let Some(e) = self.validate(value, extra, &child, depth + 1) {
                            errors.push(e);
                        }
                    }
                    _ => {}
                }
            }
        }
        if !additional.is_empty() {
            errors.push(Validator::err(
                loc,
                format!(
                    "additional properties {} not allowed",
                    join_quoted(&additional)
                ),
            ));
        }
        if let Some(names) = s.get("propertyNames") {
            for name in obj.keys() {
                if self
                    .validate(&Json::String(name.clone()), names, loc, depth + 1)
                    .is_some()
                {
                    errors.push(Validator::err(
                        loc,
                        format!("invalid propertyName {}", quote(name)),
                    ));
                }
            }
        }
        if let Some(Json::Object(dependent)) = s.get("dependentRequired") {
            for (name, reqd) in dependent {
                if !obj.contains_key(name) {
                    continue;
                }
                let missing: Vec<String> = reqd
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Json::as_str)
                    .filter(|r| !obj.contains_key(*r))
                    .map(String::from)
                    .collect();
                if !missing.is_empty() {
                    errors.push(Validator::err(
                        loc,
                        format!(
                            "properties {} required, if {} exists",
                            join_quoted(&missing),
                            quote(name)
                        ),
                    ));
                }
            }
        }
    }

    fn array(
        &self,
        arr: &[Json],
        s: &serde_json::Map<String, Json>,
        loc: &[String],
        depth: usize,
        errors: &mut Vec<VErr>,
    ) {
        let count = |k: &str| s.get(k).and_then(Json::as_u64);
        if let Some(min) = count("minItems")
            && (arr.len() as u64) < min
        {
            errors.push(Validator::err(
                loc,
                format!("minItems: got {}, want {min}", arr.len()),
            ));
        }
        if let Some(max) = count("maxItems")
            && (arr.len() as u64) > max
        {
            errors.push(Validator::err(
                loc,
                format!("maxItems: got {}, want {max}", arr.len()),
            ));
        }
        if s.get("uniqueItems") == Some(&Json::Bool(true)) {
            'outer: for i in 0..arr.len() {
                for j in i + 1..arr.len() {
                    if equals(&arr[i], &arr[j]) {
                        errors.push(Validator::err(
                            loc,
                            format!("items at {i} and {j} are equal"),
                        ));
                        break 'outer;
                    }
                }
            }
        }
        let prefix: &[Json] = match (s.get("prefixItems"), s.get("items")) {
            (Some(Json::Array(p)), _) => p,
            (None, Some(Json::Array(p))) => p,
            _ => &[],
        };
        for (i, (item, sch)) in arr.iter().zip(prefix).enumerate() {
            let mut child = loc.to_vec();
            child.push(i.to_string());
            if let Some(e) = self.validate(item, sch, &child, depth + 1) {
                errors.push(e);
            }
        }
        let rest = match s.get("items") {
            Some(sch @ (Json::Object(_) | Json::Bool(_))) => Some(sch),
            Some(Json::Array(_)) => s.get("additionalItems"),
            _ => None,
        };
        if let Some(sch) = rest {
            for (i, item) in arr.iter().enumerate().skip(prefix.len()) {
                let mut child = loc.to_vec();
                child.push(i.to_string());
                if let Some(e) = self.validate(item, sch, &child, depth + 1) {
                    errors.push(e);
                }
            }
        }
        if let Some(contains) = s.get("contains") {
            let mut causes = Vec::new();
            for (i, item) in arr.iter().enumerate() {
                let mut child = loc.to_vec();
                child.push(i.to_string());
                match self.validate(item, contains, &child, depth + 1) {
                    None => {
                        causes.clear();
                        break;
                    }
                    Some(e) => causes.push(e),
                }
            }
            if !causes.is_empty() || arr.is_empty() {
                let mut e = Validator::err(loc, "no items match contains schema".into());
                e.causes = causes;
                errors.push(e);
            }
        }
    }

    fn string(
        &self,
        text: &str,
        s: &serde_json::Map<String, Json>,
        loc: &[String],
        errors: &mut Vec<VErr>,
    ) {
        let len = text.chars().count() as u64;
        if let Some(min) = s.get("minLength").and_then(Json::as_u64)
            && len < min
        {
            errors.push(Validator::err(
                loc,
                format!("minLength: got {len}, want {min}"),
            ));
        }
        if let Some(max) = s.get("maxLength").and_then(Json::as_u64)
            && len > max
        {
            errors.push(Validator::err(
                loc,
                format!("maxLength: got {len}, want {max}"),
            ));
        }
        if let Some(Json::String(p)) = s.get("pattern")
            && let Ok(re) = regex::Regex::new(p)
            && !re.is_match(text)
        {
            errors.push(Validator::err(
                loc,
                format!("{} does not match pattern {}", quote(text), quote(p)),
            ));
        }
    }

    fn number(
        &self,
        n: f64,
        s: &serde_json::Map<String, Json>,
        loc: &[String],
        errors: &mut Vec<VErr>,
    ) {
        let get = |k: &str| s.get(k).and_then(Json::as_f64);
        let exclusive_bool = |k: &str| s.get(k) == Some(&Json::Bool(true));
        if let Some(min) = get("minimum") {
            if self.draft4 && exclusive_bool("exclusiveMinimum") {
                if n <= min {
                    errors.push(Validator::err(
                        loc,
                        format!(
                            "exclusiveMinimum: got {}, want {}",
                            number_text(n),
                            number_text(min)
                        ),
                    ));
                }
            } else if n < min {
                errors.push(Validator::err(
                    loc,
                    format!("minimum: got {}, want {}", number_text(n), number_text(min)),
                ));
            }
        }
        if let Some(max) = get("maximum") {
            if self.draft4 && exclusive_bool("exclusiveMaximum") {
                if n >= max {
                    errors.push(Validator::err(
                        loc,
                        format!(
                            "exclusiveMaximum: got {}, want {}",
                            number_text(n),
                            number_text(max)
                        ),
                    ));
                }
            } else if n > max {
                errors.push(Validator::err(
                    loc,
                    format!("maximum: got {}, want {}", number_text(n), number_text(max)),
                ));
            }
        }
        if let Some(min) = get("exclusiveMinimum")
            && n <= min
        {
            errors.push(Validator::err(
                loc,
                format!(
                    "exclusiveMinimum: got {}, want {}",
                    number_text(n),
                    number_text(min)
                ),
            ));
        }
        if let Some(max) = get("exclusiveMaximum")
            && n >= max
        {
            errors.push(Validator::err(
                loc,
                format!(
                    "exclusiveMaximum: got {}, want {}",
                    number_text(n),
                    number_text(max)
                ),
            ));
        }
        if let Some(m) = get("multipleOf")
            && m != 0.0
            && (n / m).fract() != 0.0
        {
            errors.push(Validator::err(
                loc,
                format!(
                    "multipleOf: got {}, want {}",
                    number_text(n),
                    number_text(m)
                ),
            ));
        }
    }

    fn conditions(
        &self,
        v: &Json,
        s: &serde_json::Map<String, Json>,
        loc: &[String],
        depth: usize,
        errors: &mut Vec<VErr>,
    ) {
        if let Some(not) = s.get("not")
            && self.validate(v, not, loc, depth + 1).is_none()
        {
            errors.push(Validator::err(loc, "'not' failed".into()));
        }
        let group = |key: &str| -> Vec<&Json> {
            s.get(key)
                .and_then(Json::as_array)
                .map(|a| a.iter().collect())
                .unwrap_or_default()
        };
        let all_of: Vec<VErr> = group("allOf")
            .into_iter()
            .filter_map(|sch| self.validate(v, sch, loc, depth + 1))
            .collect();
        if !all_of.is_empty() {
            errors.push(VErr {
                location: loc.to_vec(),
                message: "'allOf' failed".into(),
                reference: false,
                causes: all_of,
            });
        }
        let any_of = group("anyOf");
        if !any_of.is_empty() {
            let results: Vec<Option<VErr>> = any_of
                .iter()
                .map(|sch| self.validate(v, sch, loc, depth + 1))
                .collect();
            if results.iter().all(Option::is_some) {
                errors.push(VErr {
                    location: loc.to_vec(),
                    message: "'anyOf' failed".into(),
                    reference: false,
                    causes: results.into_iter().flatten().collect(),
                });
            }
        }
        let one_of = group("oneOf");
        if !one_of.is_empty() {
            let mut matched: Vec<usize> = Vec::new();
            let mut failures = Vec::new();
            for (i, sch) in one_of.iter().enumerate() {
                match self.validate(v, sch, loc, depth + 1) {
                    None => matched.push(i),
                    Some(e) => failures.push(e),
                }
                if matched.len() == 2 {
                    break;
                }
            }
            match matched.len() {
                0 => errors.push(VErr {
                    location: loc.to_vec(),
                    message: "'oneOf' failed, none matched".into(),
                    reference: false,
                    causes: failures,
                }),
                1 => {}
                _ => errors.push(Validator::err(
                    loc,
                    format!(
                        "'oneOf' failed, subschemas {}, {} matched",
                        matched[0], matched[1]
                    ),
                )),
            }
        }
        if let Some(cond) = s.get("if") {
            let branch = if self.validate(v, cond, loc, depth + 1).is_none() {
                s.get("then")
            } else {
                s.get("else")
            };
            if let Some(b) = branch
                && let Some(e) = self.validate(v, b, loc, depth + 1)
            {
                errors.push(e);
            }
        }
    }
}

fn display_error(out: &mut String, e: &VErr, indent: usize) {
    let skip = e.reference && e.causes.len() == 1;
    let mut next = indent;
    if !skip {
        out.push('\n');
        for _ in 0..indent.saturating_sub(1) {
            out.push_str("  ");
        }
        out.push_str("- ");
        out.push_str(&format!(
            "at {}: {}",
            quote(&pointer(&e.location)),
            e.message
        ));
        next = indent + 1;
    }
    for c in &e.causes {
        display_error(out, c, next);
    }
}

/// Helm's `ValidateAgainstSingleSchema`: the formatted error, or `Ok`. Documents the schema
/// refers to come through `loader`.
pub fn validate_single(
    values: &Json,
    schema_text: &[u8],
    loader: &dyn SchemaLoader,
) -> Result<(), String> {
    let schema: Json = serde_json::from_slice(schema_text).map_err(|e| e.to_string())?;
    let draft4 = schema
        .get("$schema")
        .and_then(Json::as_str)
        .is_some_and(|s| s.contains("draft-04"));
    let documents = Documents::load(schema, loader)?;
    let root = &documents.docs[0];
    let v = Validator {
        documents: &documents,
        bases: RefCell::new(vec![&root.base]),
        draft4,
    };
    let Some(e) = v.validate(values, &root.json, &[], 0) else {
        return Ok(());
    };
    let causes = if e.message == "validation failed" && !e.reference && !e.causes.is_empty() {
        e.causes
    } else {
        vec![e]
    };
    let mut out = String::new();
    for c in &causes {
        display_error(&mut out, c, 1);
    }
    // Helm drops the "jsonschema validation failed with …" line and its newline.
    Err(format!("{}\n", out.trim_start_matches('\n')))
}

/// Helm's `ValidateAgainstSchema`: the chart's schema, then each subchart's against its table;
/// remote `$ref`s fetched as Helm fetches them.
pub fn validate_chart(chart: &Chart, values: &Json) -> Result<(), String> {
    validate_chart_with(chart, values, &DefaultLoader)
}

/// [`validate_chart`] with the documents `$ref`s name loaded by `loader`.
pub fn validate_chart_with(
    chart: &Chart,
    values: &Json,
    loader: &dyn SchemaLoader,
) -> Result<(), String> {
    let mut out = String::new();
    if let Some(schema) = &chart.schema
        && let Err(e) = validate_single(values, schema, loader)
    {
        out.push_str(&format!("{}:\n{e}", chart.name()));
    }
    for sub in &chart.dependencies {
        let Some(raw) = values.get(sub.name()) else {
            continue;
        };
        if raw.is_null() {
            continue;
        }
        if !raw.is_object() {
            out.push_str(&format!(
                "{}:\ninvalid type for values: expected object (map), got {}\n",
                sub.name(),
                go_type(raw)
            ));
            continue;
        }
        if let Err(e) = validate_chart_with(sub, raw, loader) {
            out.push_str(&e);
        }
    }
    if out.is_empty() { Ok(()) } else { Err(out) }
}

fn go_type(v: &Json) -> &'static str {
    match v {
        Json::Bool(_) => "bool",
        Json::Number(_) => "float64",
        Json::String(_) => "string",
        Json::Array(_) => "[]interface {}",
        _ => "map[string]interface {}",
    }
}
