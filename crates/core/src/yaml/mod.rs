//! YAML streams: many documents separated by `---`, as kubectl and kustomize read them.

use serde_json::Value;

mod folded;
pub mod gov2;
mod nesting;
mod resolve;

pub use nesting::{MAX_FLOW_DEPTH, NestingError, check_nesting};
pub use resolve::{Resolver, resolve_plain};

/// A YAML stream could not be read.
#[derive(Debug, thiserror::Error)]
#[error("invalid YAML in document {document}: {message}")]
pub struct YamlError {
    /// 1-based index of the document that failed.
    pub document: usize,
    /// The parser's message, which names the line and column.
    pub message: String,
}

/// What a reader does with a key a mapping already holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicates {
    /// Refuse the document (kubectl, kustomize): `mapping key "k" already defined`.
    Refuse,
    /// Keep the last value, and count the duplicates (kube-apiserver warns about them).
    LastWins,
}

/// The values a document of `len` bytes may expand to. Without aliases a node takes at least
/// a byte or two of text, so this only limits alias expansion (a "billion laughs" document of
/// a few hundred kilobytes expands to billions of values).
pub fn node_budget(len: usize) -> usize {
    len.saturating_add(100_000)
}

/// The message of a document that expands beyond its node budget (go-yaml's words).
pub const EXCESSIVE_ALIASING: &str = "document contains excessive aliasing";

/// How a document is read: duplicate keys, the rules that type plain scalars, and whether
/// annotation values keep their text.
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    /// What a repeated key does.
    pub duplicates: Duplicates,
    /// Which rules type plain scalars.
    pub resolver: Resolver,
    /// A Kubernetes object's `metadata.annotations` values are read as the text written
    /// (`1.10` stays `"1.10"`, `true` stays `"true"`), as kustomize reads them.
    pub annotations_as_text: bool,
    /// With `annotations_as_text`, a plain `null`, `~` or empty annotation value still reads
    /// as null (in a strategic merge patch it removes the annotation).
    pub annotation_nulls: bool,
    /// Folded block scalars come out as go-yaml v3 writes and reads them back (see
    /// `folded.rs`), as kustomize prints them.
    pub go_folded_round_trip: bool,
    /// Plain mapping keys are typed by the resolver and written back as text, as
    /// sigs.k8s.io/yaml turns YAML into JSON (`n:` is the key `"false"` under YAML 1.1).
    pub json_keys: bool,
}

impl ReadOptions {
    /// YAML 1.2 typing with the given handling of repeated keys.
    pub fn new(duplicates: Duplicates) -> ReadOptions {
        ReadOptions {
            duplicates,
            resolver: Resolver::Yaml12,
            annotations_as_text: false,
            annotation_nulls: false,
            go_folded_round_trip: false,
            json_keys: false,
        }
    }
}

/// What one document read shares: the options, the text read (to tell a plain scalar from a
/// quoted one), the node budget and the count of repeated keys.
struct Reader<'a> {
    options: ReadOptions,
    src: &'a str,
    budget: std::cell::Cell<usize>,
    found: std::cell::Cell<usize>,
    /// Folded scalars of `src` and the values go-yaml's round trip makes of them.
    folded: &'a std::collections::HashMap<String, String>,
}

impl Reader<'_> {
    fn spend<E: serde::de::Error>(&self) -> Result<(), E> {
        match self.budget.get().checked_sub(1) {
            Some(left) => {
                self.budget.set(left);
                Ok(())
            }
            None => Err(E::custom(EXCESSIVE_ALIASING)),
        }
    }

    /// Whether `v`, handed out by the parser as a slice of the text, was written as a plain
    /// scalar: not inside quotes and not after an explicit tag. Scalars the parser had to
    /// rewrite (escapes, folding) are not slices of the text and never count as plain.
    fn is_plain(&self, v: &str) -> bool {
        let base = self.src.as_ptr() as usize;
        let at = v.as_ptr() as usize;
        if at < base || at + v.len() > base + self.src.len() {
            return false;
        }
        let Some(before) = self.src.get(..at - base) else {
            return false;
        };
        if before.ends_with(['"', '\'']) {
            return false;
        }
        let token = before
            .trim_end_matches([' ', '\t'])
            .rsplit([' ', '\t', '\n', '\r'])
            .next()
            .unwrap_or("");
        !token.starts_with('!')
    }

    fn string<E: serde::de::Error>(&self, v: &str, plain: bool) -> Result<Value, E> {
        self.spend()?;
        if plain && let Some(typed) = resolve::resolve_plain(v, self.options.resolver) {
            return Ok(typed);
        }
        Ok(Value::String(v.to_string()))
    }
}

/// Where in a Kubernetes object a value sits, as far as reading it cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A document's top level (or an item of a `List`).
    Object,
    /// `metadata`.
    Metadata,
    /// `metadata.annotations`.
    Annotations,
    /// `items`.
    Items,
    /// Anywhere else.
    Other,
}

/// Reads one value, refusing or counting duplicate keys and spending one unit of the budget
/// per value.
struct Checked<'a> {
    reader: &'a Reader<'a>,
    place: Place,
}

impl<'a> Checked<'a> {
    fn at(&self, place: Place) -> Checked<'a> {
        Checked {
            reader: self.reader,
            place,
        }
    }

    fn child(&self, key: &str) -> Place {
        match (self.place, key) {
            (Place::Object, "metadata") => Place::Metadata,
            (Place::Object, "items") => Place::Items,
            (Place::Metadata, "annotations") => Place::Annotations,
            _ => Place::Other,
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Checked<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Checked<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid YAML value")
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.reader.spend()?;
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.reader.spend()?;
        Ok(Value::from(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.reader.spend()?;
        Ok(Value::from(v))
    }
    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Value, E> {
        // Beyond 64 bits Go reads a float, as JSON readers do.
        self.visit_f64(v as f64)
    }
    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Value, E> {
        self.visit_f64(v as f64)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.reader.spend()?;
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Value, E> {
        let plain = self.reader.options.resolver != Resolver::Yaml12 && self.reader.is_plain(v);
        self.reader.string(v, plain)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        // Folded block scalars are never slices of the text.
        if let Some(changed) = self.reader.folded.get(v) {
            self.reader.spend()?;
            return Ok(Value::String(changed.clone()));
        }
        self.reader.string(v, false)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.reader.spend()?;
        Ok(Value::Null)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.reader.spend()?;
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        use serde::de::VariantAccess;
        // A local tag (`!foo 1`). go-yaml v2 does not resolve a scalar it cannot interpret:
        // its value is the text written. Other readers have no answer for it.
        if self.reader.options.resolver != Resolver::GoV2 {
            return Err(serde::de::Error::invalid_type(
                serde::de::Unexpected::Enum,
                &self,
            ));
        }
        self.reader.spend()?;
        let (_tag, variant): (serde::de::IgnoredAny, A::Variant) = data.variant()?;
        variant.newtype_variant_seed(Text(self.reader))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.reader.spend()?;
        let element = if self.place == Place::Items {
            Place::Object
        } else {
            Place::Other
        };
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self.at(element))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.reader.spend()?;
        let mut out = serde_json::Map::new();
        let as_text = self.place == Place::Annotations && self.reader.options.annotations_as_text;
        let mut merges: Vec<Vec<serde_json::Map<String, Value>>> = Vec::new();
        loop {
            // A duplicate is refused while the key is read, so the error carries its line.
            let key = map.next_key_seed(Key {
                seen: &out,
                refuse: self.reader.options.duplicates == Duplicates::Refuse,
                reader: self.reader,
            })?;
            let Some(key) = key else { break };
            if out.contains_key(&key) {
                self.reader.found.set(self.reader.found.get() + 1);
            }
            let value = if as_text {
                self.reader.spend()?;
                map.next_value_seed(Text(self.reader))?
            } else {
                map.next_value_seed(self.at(self.child(&key)))?
            };
            if key == "<<"
                && let Some(sources) = merge_sources(&value)
            {
                match self.reader.options.resolver {
                    Resolver::GoV3 => {
                        merges.push(sources);
                        continue;
                    }
                    // go-yaml v2 merges where the key stands: a merged key replaces one
                    // written before `<<`, one written after replaces it; of a list of
                    // mappings the earlier wins.
                    Resolver::GoV2 => {
                        for source in sources.into_iter().rev() {
                            for (k, v) in source {
                                out.insert(k, v);
                            }
                        }
                        continue;
                    }
                    Resolver::Yaml12 => {}
                }
            }
            out.insert(key, value);
        }
        // go-yaml v3's merge keys: keys written in the mapping win over merged ones, and of a
        // list of mappings the earlier wins.
        for sources in merges {
            for source in sources {
                for (k, v) in source {
                    if !out.contains_key(&k) {
                        out.insert(k, v);
                    }
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// The mappings a merge key (`<<`) brings in: one mapping or a list of them.
fn merge_sources(v: &Value) -> Option<Vec<serde_json::Map<String, Value>>> {
    match v {
        Value::Object(m) => Some(vec![m.clone()]),
        Value::Array(items) => items.iter().map(|i| i.as_object().cloned()).collect(),
        _ => None,
    }
}

/// A scalar read as the text written (or null, when the reader keeps plain nulls).
struct Text<'a>(&'a Reader<'a>);

impl<'de> serde::de::DeserializeSeed<'de> for Text<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Text<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Value, E> {
        let null = matches!(v, "" | "~" | "null" | "Null" | "NULL");
        if null && self.0.options.annotation_nulls && self.0.is_plain(v) {
            return Ok(Value::Null);
        }
        Ok(Value::String(v.to_string()))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
}

/// A mapping key, refused when `refuse` and `seen` already holds it.
struct Key<'a> {
    seen: &'a serde_json::Map<String, Value>,
    refuse: bool,
    reader: &'a Reader<'a>,
}

/// `strconv.FormatFloat(f, 'g', -1, 32)`: how sigs.k8s.io/yaml writes a float where text is
/// wanted (a mapping key, a string field of a Go struct).
pub fn go_float32_text(f: f64) -> String {
    let f = f as f32;
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((e.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// A plain key's text once typed and written back as sigs.k8s.io/yaml does; `Err` for a
/// null key, which it refuses.
fn json_key(typed: &Value, text: &str) -> Result<String, String> {
    Ok(match typed {
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        Value::Number(n) => go_float32_text(n.as_f64().unwrap_or(0.0)),
        Value::Null => return Err(format!("unsupported map key of type: <nil>, key: {text:?}")),
        Value::String(s) => s.clone(),
        _ => text.to_string(),
    })
}

impl<'de> serde::de::DeserializeSeed<'de> for Key<'_> {
    type Value = String;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Key<'_> {
    type Value = String;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
        if self.refuse && self.seen.contains_key(v) {
            return Err(E::custom(format!("mapping key {v:?} already defined")));
        }
        Ok(v.to_string())
    }
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<String, E> {
        if self.reader.options.json_keys
            && self.reader.is_plain(v)
            && let Some(typed) = resolve::resolve_plain(v, self.reader.options.resolver)
        {
            let key = json_key(&typed, v).map_err(E::custom)?;
            return self.visit_str(&key);
        }
        self.visit_str(v)
    }
}

/// Reads one document of a stream (or a whole text) into a JSON value: duplicate keys refused
/// or counted, alias expansion bounded by [`node_budget`] of `len`. Returns the value and the
/// number of duplicate keys kept last-wins.
pub fn read_value<'de, D: serde::Deserializer<'de>>(
    d: D,
    len: usize,
    duplicates: Duplicates,
) -> Result<(Value, usize), D::Error> {
    let reader = Reader {
        options: ReadOptions::new(duplicates),
        src: "",
        budget: std::cell::Cell::new(node_budget(len)),
        found: std::cell::Cell::new(0),
        folded: &std::collections::HashMap::new(),
    };
    read_with(d, &reader)
}

/// Reads the documents of one text as `options` say; what is learnt from the whole text
/// (its folded scalars) is learnt once.
pub struct StreamReader<'a> {
    options: ReadOptions,
    src: &'a str,
    folded: std::collections::HashMap<String, String>,
}

impl<'a> StreamReader<'a> {
    /// A reader of the documents `yaml_serde` reads from `text`.
    pub fn new(text: &'a str, options: ReadOptions) -> StreamReader<'a> {
        StreamReader {
            options,
            src: text,
            folded: if options.go_folded_round_trip {
                folded::round_trips(text)
            } else {
                std::collections::HashMap::new()
            },
        }
    }

    /// Reads one document of the text. Returns the value and the number of duplicate keys
    /// kept last-wins.
    pub fn read<'de, D: serde::Deserializer<'de>>(&self, d: D) -> Result<(Value, usize), D::Error> {
        let reader = Reader {
            options: self.options,
            src: self.src,
            budget: std::cell::Cell::new(node_budget(self.src.len())),
            found: std::cell::Cell::new(0),
            folded: &self.folded,
        };
        read_with(d, &reader)
    }
}

fn read_with<'de, D: serde::Deserializer<'de>>(
    d: D,
    reader: &Reader<'_>,
) -> Result<(Value, usize), D::Error> {
    let value = serde::de::DeserializeSeed::deserialize(
        Checked {
            reader,
            place: Place::Object,
        },
        d,
    )?;
    Ok((value, reader.found.get()))
}

/// Checks that `text` does not expand beyond its node budget through aliases, before it is
/// read into a typed value. Texts without both an anchor and an alias are not read at all.
pub fn check_aliasing(text: &str) -> Result<(), String> {
    check_nesting(text).map_err(|e| e.to_string())?;
    if !(text.contains('&') && text.contains('*')) {
        return Ok(());
    }
    for doc in yaml_serde::Deserializer::from_str(text) {
        match read_value(doc, text.len(), Duplicates::LastWins) {
            Ok(_) => {}
            Err(e) if e.to_string().contains(EXCESSIVE_ALIASING) => return Err(e.to_string()),
            // Any other error is the real parse's to report; the stream's iterator would go
            // on yielding it forever.
            Err(_) => break,
        }
    }
    Ok(())
}

/// Parses every document of a YAML stream into JSON values, skipping empty documents.
/// Duplicate keys are refused (as kubectl refuses them); alias expansion is bounded.
pub fn parse_stream(text: &str) -> Result<Vec<Value>, YamlError> {
    check_nesting(text).map_err(|e| YamlError {
        document: 1,
        message: e.to_string(),
    })?;
    let mut out = Vec::new();
    for (i, doc) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let (value, _) =
            read_value(doc, text.len(), Duplicates::Refuse).map_err(|e| YamlError {
                document: i + 1,
                message: e.to_string(),
            })?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

/// Parses a single YAML (or JSON) document; duplicate keys are handled as `duplicates` says
/// (the count of those kept last-wins is returned); alias expansion is bounded.
pub fn parse_one_with(text: &str, duplicates: Duplicates) -> Result<(Value, usize), YamlError> {
    check_nesting(text).map_err(|e| YamlError {
        document: 1,
        message: e.to_string(),
    })?;
    read_value(
        yaml_serde::Deserializer::from_str(text),
        text.len(),
        duplicates,
    )
    .map_err(|e| YamlError {
        document: 1,
        message: e.to_string(),
    })
}

/// Parses a single YAML (or JSON) document, refusing duplicate keys.
pub fn parse_one(text: &str) -> Result<Value, YamlError> {
    parse_one_with(text, Duplicates::Refuse).map(|(v, _)| v)
}

/// Renders a value as one YAML document.
pub fn to_yaml(value: &Value) -> String {
    yaml_serde::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_streams_and_skips_empty_documents() {
        let docs = parse_stream("a: 1\n---\n---\nb: [x]\n").expect("parses");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["b"][0], "x");
    }

    #[test]
    fn duplicate_keys_are_refused_with_their_line() {
        let err = parse_stream("a: 1\n---\nkind: ConfigMap\ndata:\n  x: 1\ndata:\n  y: 2\n")
            .expect_err("duplicate");
        assert_eq!(err.document, 2);
        assert!(
            err.message.contains("mapping key \"data\" already defined"),
            "{err}"
        );
        assert!(err.message.contains("line 6"), "{err}");
        let (v, n) = parse_one_with("a: 1\nb: 2\na: 3\n", Duplicates::LastWins).expect("kept");
        assert_eq!((v["a"].as_i64(), n), (Some(3), 1));
        // Same key in different mappings is no duplicate.
        parse_stream("a: {k: 1}\nb: {k: 2}\n").expect("fine");
    }

    #[test]
    fn alias_bombs_are_refused_quickly() {
        // Nine levels of ten aliases: 10^9 values from a few hundred bytes.
        let mut text = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
            ));
        }
        let started = std::time::Instant::now();
        let err = parse_stream(&text).expect_err("bomb");
        assert!(err.message.contains(EXCESSIVE_ALIASING), "{err}");
        let err = check_aliasing(&text).expect_err("bomb");
        assert!(err.contains(EXCESSIVE_ALIASING), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        // Modest reuse of an anchor is fine.
        let ok = "base: &b {a: 1, b: 2}\none: *b\ntwo: *b\n";
        assert_eq!(parse_stream(ok).expect("aliases")[0]["two"]["b"], 2);
        check_aliasing(ok).expect("modest");
        // A syntax error ends the check (found by fuzzing: the stream yielded it forever).
        check_aliasing("&*:").expect("left to the real parse");
        check_aliasing("a: &x 1\nb: *x\n---\n&*:").expect("left to the real parse");
    }

    #[test]
    fn names_the_bad_document() {
        let err = parse_stream("a: 1\n---\nb: [\n").expect_err("must fail");
        assert_eq!(err.document, 2);
        assert!(err.to_string().contains("document 2"), "{err}");
    }

    fn read_as(text: &str, resolver: Resolver) -> Value {
        let options = ReadOptions {
            resolver,
            ..ReadOptions::new(Duplicates::LastWins)
        };
        let reader = StreamReader::new(text, options);
        let doc = yaml_serde::Deserializer::from_str(text)
            .next()
            .expect("a document");
        reader.read(doc).expect("reads").0
    }

    #[test]
    fn merge_keys_as_each_go_yaml_applies_them() {
        let text = "base: &b {a: from-base, b: from-base}\nm:\n  a: before\n  <<: [*b, {a: second, c: second}]\n  c: after\n";
        // go-yaml v2 (sigs.k8s.io/yaml): where `<<` stands, earlier mappings of a list winning.
        let v2 = read_as(text, Resolver::GoV2);
        assert_eq!(
            v2["m"],
            serde_json::json!({"a": "from-base", "b": "from-base", "c": "after"})
        );
        // go-yaml v3: keys written in the mapping win wherever they stand.
        let v3 = read_as(text, Resolver::GoV3);
        assert_eq!(
            v3["m"],
            serde_json::json!({"a": "before", "c": "after", "b": "from-base"})
        );
        // YAML 1.2 has no merge keys.
        assert!(read_as(text, Resolver::Yaml12)["m"].get("<<").is_some());
    }

    #[test]
    fn a_local_tag_keeps_the_scalar_s_text_under_go_yaml_v2() {
        let v2 = read_as("a: !foo 0755\nb: !bar yes\n", Resolver::GoV2);
        assert_eq!(v2, serde_json::json!({"a": "0755", "b": "yes"}));
    }
}
