//! `/openapi/v2` as protobuf (asked for as `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`,
//! answered with the parseable `…spec.v2.v1.0+protobuf` content type, as kube-openapi does):
//! the OpenAPI v2 document in gnostic's `openapi.v2.Document` message, which kubectl asks for
//! when its OpenAPI v3 lookups fall short (validation of create-only kinds, `kubectl explain
//! --output=plaintext-openapiv2`). Vendor extensions are `Any` values holding YAML text (JSON
//! is YAML), as gnostic writes them.

use serde_json::{Map, Value};

/// The content type kubectl asks for.
pub const CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// A protobuf message being written.
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }

    fn key(&mut self, num: u32, wire: u64) {
        self.varint(u64::from(num) << 3 | wire);
    }

    fn bytes(&mut self, num: u32, data: &[u8]) {
        self.key(num, 2);
        self.varint(data.len() as u64);
        self.0.extend_from_slice(data);
    }

    fn string(&mut self, num: u32, s: &str) {
        if !s.is_empty() {
            self.bytes(num, s.as_bytes());
        }
    }

    fn message(&mut self, num: u32, m: Msg) {
        self.bytes(num, &m.0);
    }

    fn boolean(&mut self, num: u32, b: bool) {
        if b {
            self.key(num, 0);
            self.varint(1);
        }
    }

    fn int64(&mut self, num: u32, v: i64) {
        self.key(num, 0);
        self.varint(v as u64);
    }

    fn double(&mut self, num: u32, v: f64) {
        self.key(num, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `Any{yaml}`: a value as YAML text.
fn any(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(2, &v.to_string());
    m
}

/// `repeated NamedAny vendor_extension` for the `x-` keys of `obj`.
fn extensions(m: &mut Msg, num: u32, obj: &Map<String, Value>) {
    for (k, v) in obj.iter().filter(|(k, _)| k.starts_with("x-")) {
        let mut named = Msg::default();
        named.string(1, k);
        named.message(2, any(v));
        m.message(num, named);
    }
}

fn schema(s: &Value) -> Msg {
    let mut m = Msg::default();
    let Some(obj) = s.as_object() else {
        return m;
    };
    m.string(1, str_of(s, "$ref"));
    m.string(2, str_of(s, "format"));
    m.string(3, str_of(s, "title"));
    m.string(4, str_of(s, "description"));
    if let Some(d) = obj.get("default") {
        m.message(5, any(d));
    }
    if let Some(v) = obj.get("multipleOf").and_then(Value::as_f64) {
        m.double(6, v);
    }
    if let Some(v) = obj.get("maximum").and_then(Value::as_f64) {
        m.double(7, v);
    }
    m.boolean(8, obj.get("exclusiveMaximum") == Some(&Value::Bool(true)));
    if let Some(v) = obj.get("minimum").and_then(Value::as_f64) {
        m.double(9, v);
    }
    m.boolean(10, obj.get("exclusiveMinimum") == Some(&Value::Bool(true)));
    for (num, key) in [
        (11, "maxLength"),
        (12, "minLength"),
        (14, "maxItems"),
        (15, "minItems"),
        (17, "maxProperties"),
        (18, "minProperties"),
    ] {
        if let Some(v) = obj.get(key).and_then(Value::as_i64) {
            m.int64(num, v);
        }
    }
    m.string(13, str_of(s, "pattern"));
    m.boolean(16, obj.get("uniqueItems") == Some(&Value::Bool(true)));
    for r in obj
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.string(19, r.as_str().unwrap_or(""));
    }
    for e in obj
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(20, any(e));
    }
    match obj.get("additionalProperties") {
        Some(Value::Bool(b)) => {
            let mut item = Msg::default();
            item.key(2, 0);
            item.varint(u64::from(*b));
            m.message(21, item);
        }
        Some(sub @ Value::Object(_)) => {
            let mut item = Msg::default();
            item.message(1, schema(sub));
            m.message(21, item);
        }
        _ => {}
    }
    if let Some(t) = obj.get("type") {
        let mut item = Msg::default();
        match t {
            Value::Array(types) => {
                for t in types {
                    item.string(1, t.as_str().unwrap_or(""));
                }
            }
            t => item.string(1, t.as_str().unwrap_or("")),
        }
        m.message(22, item);
    }
    if let Some(items) = obj.get("items") {
        let mut item = Msg::default();
        match items {
            Value::Array(list) => list.iter().for_each(|i| item.message(1, schema(i))),
            one => item.message(1, schema(one)),
        }
        m.message(23, item);
    }
    for sub in obj
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(24, schema(sub));
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        let mut p = Msg::default();
        for (name, sub) in props {
            let mut named = Msg::default();
            named.string(1, name);
            named.message(2, schema(sub));
            p.message(1, named);
        }
        m.message(25, p);
    }
    m.boolean(27, obj.get("readOnly") == Some(&Value::Bool(true)));
    extensions(&mut m, 31, obj);
    m
}

fn parameter(p: &Value) -> Msg {
    let mut item = Msg::default();
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        let mut reference = Msg::default();
        reference.string(1, r);
        item.message(2, reference);
        return item;
    }
    let mut param = Msg::default();
    if str_of(p, "in") == "body" {
        let mut body = Msg::default();
        body.string(1, str_of(p, "description"));
        body.string(2, str_of(p, "name"));
        body.string(3, "body");
        body.boolean(4, p.get("required") == Some(&Value::Bool(true)));
        if let Some(s) = p.get("schema") {
            body.message(5, schema(s));
        }
        param.message(1, body);
    } else {
        // Query, path and header parameters share the first fields' layout.
        let mut sub = Msg::default();
        sub.boolean(1, p.get("required") == Some(&Value::Bool(true)));
        sub.string(2, str_of(p, "in"));
        sub.string(3, str_of(p, "description"));
        sub.string(4, str_of(p, "name"));
        let (type_num, unique_num, oneof) = match str_of(p, "in") {
            "path" => (5, 19, 4),
            "header" => (5, 19, 1),
            "formData" => (6, 20, 2),
            _ => (6, 20, 3),
        };
        sub.string(type_num, str_of(p, "type"));
        sub.boolean(unique_num, p.get("uniqueItems") == Some(&Value::Bool(true)));
        let mut non_body = Msg::default();
        non_body.message(oneof, sub);
        param.message(2, non_body);
    }
    item.message(1, param);
    item
}

fn operation(op: &Value) -> Msg {
    let mut m = Msg::default();
    let Some(obj) = op.as_object() else {
        return m;
    };
    for t in obj
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.string(1, t.as_str().unwrap_or(""));
    }
    m.string(3, str_of(op, "description"));
    m.string(5, str_of(op, "operationId"));
    for (num, key) in [(6, "produces"), (7, "consumes")] {
        for t in obj.get(key).and_then(Value::as_array).into_iter().flatten() {
            m.string(num, t.as_str().unwrap_or(""));
        }
    }
    for p in obj
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(8, parameter(p));
    }
    if let Some(responses) = obj.get("responses").and_then(Value::as_object) {
        let mut rs = Msg::default();
        for (code, r) in responses {
            let mut response = Msg::default();
            response.string(1, str_of(r, "description"));
            if let Some(s) = r.get("schema") {
                let mut item = Msg::default();
                item.message(1, schema(s));
                response.message(2, item);
            }
            let mut value = Msg::default();
            value.message(1, response);
            let mut named = Msg::default();
            named.string(1, code);
            named.message(2, value);
            rs.message(1, named);
        }
        m.message(9, rs);
    }
    for t in obj
        .get("schemes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.string(10, t.as_str().unwrap_or(""));
    }
    extensions(&mut m, 13, obj);
    m
}

/// Encodes an OpenAPI v2 document.
pub fn encode(doc: &Value) -> Vec<u8> {
    let mut m = Msg::default();
    m.string(1, str_of(doc, "swagger"));
    if let Some(info) = doc.get("info") {
        let mut i = Msg::default();
        i.string(1, str_of(info, "title"));
        i.string(2, str_of(info, "version"));
        m.message(2, i);
    }
    if let Some(paths) = doc.get("paths").and_then(Value::as_object) {
        let mut ps = Msg::default();
        for (path, item) in paths {
            let mut pi = Msg::default();
            for (num, verb) in [
                (2, "get"),
                (3, "put"),
                (4, "post"),
                (5, "delete"),
                (6, "options"),
                (7, "head"),
                (8, "patch"),
            ] {
                if let Some(op) = item.get(verb) {
                    pi.message(num, operation(op));
                }
            }
            for p in item
                .get("parameters")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                pi.message(9, parameter(p));
            }
            let mut named = Msg::default();
            named.string(1, path);
            named.message(2, pi);
            ps.message(2, named);
        }
        m.message(8, ps);
    }
    if let Some(defs) = doc.get("definitions").and_then(Value::as_object) {
        let mut ds = Msg::default();
        for (name, s) in defs {
            let mut named = Msg::default();
            named.string(1, name);
            named.message(2, schema(s));
            ds.message(1, named);
        }
        m.message(9, ds);
    }
    if let Some(obj) = doc.as_object() {
        extensions(&mut m, 16, obj);
    }
    m.0
}
