//! Differences between a live object and what a server-side apply would make of it, as Flux's
//! drift detection computes them (fluxcd/pkg `ssa/jsondiff` over wI2L/jsondiff): JSON Patch
//! operations from the live object to the dry-run result, rationalized (a whole value is
//! replaced when that is shorter than its parts), with ignore rules (JSON pointers, optionally
//! for selected objects), Secret data masked, and Flux's one-line summaries.
//!
//! Pure functions: the caller reads the live object and makes the dry-run.

use regex::Regex;
use serde_json::{Map, Value};
use tidegate_core::labels::LabelSelector;

/// A JSON Patch operation kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Remove,
    Replace,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Remove => "remove",
            Op::Replace => "replace",
        }
    }
}

/// One JSON Patch operation, with the value it replaces or removes.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub op: Op,
    /// JSON pointer (RFC 6901).
    pub path: String,
    /// The new value (add, replace).
    pub value: Option<Value>,
    /// The value before (replace, remove).
    pub old_value: Option<Value>,
    /// The length the value is counted with when deciding to rationalize (wI2L/jsondiff
    /// counts an add's value as empty).
    value_len: usize,
}

impl Operation {
    /// The operation as RFC 6902 JSON.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("op".into(), Value::String(self.op.as_str().into()));
        m.insert("path".into(), Value::String(self.path.clone()));
        if let Some(v) = &self.value {
            m.insert("value".into(), v.clone());
        }
        Value::Object(m)
    }

    fn json_length(&self) -> usize {
        let mut l = 19 + self.op.as_str().len() + self.path.len();
        if matches!(self.op, Op::Add | Op::Replace) {
            l += 9 + self.value_len;
        }
        l
    }
}

/// A patch as RFC 6902 JSON.
pub fn patch_json(ops: &[Operation]) -> Value {
    Value::Array(ops.iter().map(Operation::to_json).collect())
}

/// The length of `v` as Go's `encoding/json` writes it compactly (it escapes `<`, `>`, `&`,
/// U+2028 and U+2029).
fn go_json_len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(b) => {
            if *b {
                4
            } else {
                5
            }
        }
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => go_string_len(s),
        Value::Array(a) => 2 + a.iter().map(go_json_len).sum::<usize>() + a.len().saturating_sub(1),
        Value::Object(m) => {
            2 + m
                .iter()
                .map(|(k, v)| go_string_len(k) + 1 + go_json_len(v))
                .sum::<usize>()
                + m.len().saturating_sub(1)
        }
    }
}

fn go_string_len(s: &str) -> usize {
    2 + s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' => 2,
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => 6,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

fn kind_of(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

/// Deep equality with JSON numbers compared as numbers (`1` equals `1.0`, as after Go's
/// decoding into float64).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| deep_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => a == b,
    }
}

fn escape_token(t: &str) -> String {
    t.replace('~', "~0").replace('/', "~1")
}

struct Differ {
    rationalize: bool,
    patch: Vec<Operation>,
}

impl Differ {
    fn replace(&mut self, path: &str, src: &Value, tgt: &Value) {
        self.patch.push(Operation {
            op: Op::Replace,
            path: path.to_string(),
            value: Some(tgt.clone()),
            old_value: Some(src.clone()),
            value_len: go_json_len(tgt),
        });
    }

    fn diff(&mut self, path: &str, src: &Value, tgt: &Value) {
        if kind_of(src) != kind_of(tgt) {
            if path.is_empty() {
                self.patch.push(Operation {
                    op: Op::Add,
                    path: String::new(),
                    value: Some(tgt.clone()),
                    old_value: Some(src.clone()),
                    value_len: 0,
                });
            } else {
                self.replace(path, src, tgt);
            }
            return;
        }
        if deep_equal(src, tgt) {
            return;
        }
        let size = self.patch.len();
        match (src, tgt) {
            (Value::Array(s), Value::Array(t)) => self.arrays(path, s, t),
            (Value::Object(s), Value::Object(t)) => self.objects(path, s, t),
            _ => {
                self.replace(path, src, tgt);
                return;
            }
        }
        if self.rationalize && self.patch.len() > size {
            let whole = Operation {
                op: Op::Replace,
                path: path.to_string(),
                value: Some(tgt.clone()),
                old_value: Some(src.clone()),
                value_len: go_json_len(tgt),
            };
            let parts: usize = self.patch[size..].iter().map(Operation::json_length).sum();
            if parts > whole.json_length() {
                self.patch.truncate(size);
                self.patch.push(whole);
            }
        }
    }

    fn objects(&mut self, path: &str, src: &Map<String, Value>, tgt: &Map<String, Value>) {
        let mut keys: Vec<&String> = src.keys().chain(tgt.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let p = format!("{path}/{}", escape_token(k));
            match (src.get(k), tgt.get(k)) {
                (Some(s), Some(t)) => self.diff(&p, s, t),
                (Some(s), None) => self.patch.push(Operation {
                    op: Op::Remove,
                    path: p,
                    value: None,
                    old_value: Some(s.clone()),
                    value_len: 0,
                }),
                (None, Some(t)) => self.patch.push(Operation {
                    op: Op::Add,
                    path: p,
                    value: Some(t.clone()),
                    old_value: None,
                    value_len: 0,
                }),
                (None, None) => {}
            }
        }
    }

    fn arrays(&mut self, path: &str, src: &[Value], tgt: &[Value]) {
        let common = src.len().min(tgt.len());
        // Removals all address the first index past the common part.
        let removal = format!("{path}/{common}");
        for s in &src[common..] {
            self.patch.push(Operation {
                op: Op::Remove,
                path: removal.clone(),
                value: None,
                old_value: Some(s.clone()),
                value_len: 0,
            });
        }
        for i in 0..common {
            self.diff(&format!("{path}/{i}"), &src[i], &tgt[i]);
        }
        let append = format!("{path}/-");
        for t in &tgt[common..] {
            self.patch.push(Operation {
                op: Op::Add,
                path: append.clone(),
                value: Some(t.clone()),
                old_value: None,
                value_len: 0,
            });
        }
    }
}

/// The operations that turn `src` into `tgt`, as wI2L/jsondiff's `Compare` (optionally with
/// `Rationalize`) makes them.
pub fn compare(src: &Value, tgt: &Value, rationalize: bool) -> Vec<Operation> {
    let mut d = Differ {
        rationalize,
        patch: Vec::new(),
    };
    d.diff("", src, tgt);
    d.patch
}

fn unescape_token(t: &str) -> String {
    t.replace("~1", "/").replace("~0", "~")
}

/// Removes the value at a JSON pointer; a missing path is not an error (Flux removes ignored
/// paths with `AllowMissingPathOnRemove`). A negative index counts from the end.
pub fn remove_pointer(v: &mut Value, pointer: &str) {
    let Some(rest) = pointer.strip_prefix('/') else {
        return;
    };
    let tokens: Vec<String> = rest.split('/').map(unescape_token).collect();
    let Some((last, parents)) = tokens.split_last() else {
        return;
    };
    let mut cur = v;
    for t in parents {
        let next = match cur {
            Value::Object(m) => m.get_mut(t.as_str()),
            Value::Array(a) => array_index(a.len(), t).and_then(|i| a.get_mut(i)),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    match cur {
        Value::Object(m) => {
            m.remove(last.as_str());
        }
        Value::Array(a) => {
            if let Some(i) = array_index(a.len(), last) {
                a.remove(i);
            }
        }
        _ => {}
    }
}

fn array_index(len: usize, token: &str) -> Option<usize> {
    let i: i64 = token.parse().ok()?;
    let i = if i < 0 {
        i64::try_from(len).ok()? + i
    } else {
        i
    };
    usize::try_from(i).ok().filter(|i| *i < len)
}

/// Which objects an ignore rule applies to: group, version, kind, name and namespace as
/// anchored regular expressions, label and annotation selectors (kustomize's selector).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub annotation_selector: String,
    pub label_selector: String,
}

/// An ignore rule: JSON pointers to leave out of the comparison (`""` leaves the whole object
/// out), for the objects the selector matches (every object without one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoreRule {
    pub paths: Vec<String>,
    pub selector: Option<Selector>,
}

struct CompiledSelector {
    group: Option<Regex>,
    version: Option<Regex>,
    kind: Option<Regex>,
    name: Option<Regex>,
    namespace: Option<Regex>,
    labels: LabelSelector,
    annotations: LabelSelector,
}

fn anchored(pattern: &str, field: &str) -> Result<Option<Regex>, String> {
    if pattern.is_empty() {
        return Ok(None);
    }
    Regex::new(&format!("^(?:{pattern})$"))
        .map(Some)
        .map_err(|e| format!("invalid {field} regex: {e}"))
}

impl CompiledSelector {
    fn new(s: &Selector) -> Result<CompiledSelector, String> {
        Ok(CompiledSelector {
            group: anchored(&s.group, "group")?,
            version: anchored(&s.version, "version")?,
            kind: anchored(&s.kind, "kind")?,
            name: anchored(&s.name, "name")?,
            namespace: anchored(&s.namespace, "namespace")?,
            labels: LabelSelector::parse(&s.label_selector)
                .map_err(|e| format!("invalid label selector: {}", e.0))?,
            annotations: LabelSelector::parse(&s.annotation_selector)
                .map_err(|e| format!("invalid annotation selector: {}", e.0))?,
        })
    }

    fn matches(&self, obj: &Value) -> bool {
        let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
        let (group, version) = match s("/apiVersion").split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", s("/apiVersion")),
        };
        let ok = |re: &Option<Regex>, v: &str| re.as_ref().is_none_or(|r| r.is_match(v));
        let map = |p: &str| obj.pointer(p).and_then(Value::as_object);
        let labels = map("/metadata/labels");
        let annotations = map("/metadata/annotations");
        ok(&self.namespace, s("/metadata/namespace"))
            && ok(&self.name, s("/metadata/name"))
            && ok(&self.group, group)
            && ok(&self.version, version)
            && ok(&self.kind, s("/kind"))
            && self
                .labels
                .matches(|k| labels.and_then(|m| m.get(k)).and_then(Value::as_str))
            && self
                .annotations
                .matches(|k| annotations.and_then(|m| m.get(k)).and_then(Value::as_str))
    }
}

/// Compiled ignore rules.
pub struct IgnoreRules(Vec<(Option<CompiledSelector>, Vec<String>)>);

impl IgnoreRules {
    /// Compiles the rules; a bad regular expression or selector is an error.
    pub fn compile(rules: &[IgnoreRule]) -> Result<IgnoreRules, String> {
        let mut out = Vec::with_capacity(rules.len());
        for r in rules {
            let sel = match &r.selector {
                Some(s) => Some(
                    CompiledSelector::new(s)
                        .map_err(|e| format!("failed to create ignore rule selector: {e}"))?,
                ),
                None => None,
            };
            out.push((sel, r.paths.clone()));
        }
        Ok(IgnoreRules(out))
    }

    /// The paths ignored for `obj`.
    pub fn paths_for(&self, obj: &Value) -> Vec<String> {
        self.0
            .iter()
            .filter(|(s, _)| s.as_ref().is_none_or(|s| s.matches(obj)))
            .flat_map(|(_, p)| p.iter().cloned())
            .collect()
    }
}

/// What a diff found for one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffType {
    /// Live equals desired.
    None,
    /// The object is missing from the cluster.
    Create,
    /// The live object differs.
    Update,
    /// Left out (by annotation, label or an ignore rule on the whole object).
    Exclude,
}

/// The diff of one object.
#[derive(Debug, Clone)]
pub struct Diff {
    pub kind: DiffType,
    /// The desired object (from the release manifest).
    pub desired: Value,
    /// The operations from the live object to the dry-run result (Update only).
    pub patch: Vec<Operation>,
}

/// The operations between a live object and its dry-run apply, with `ignore` pointers taken
/// out of both: label and annotation additions and changes (removals there are left alone:
/// controllers add labels), then everything outside `metadata` and `status`.
pub fn object_patch(live: &Value, dry_run: &Value, ignore: &[String]) -> Vec<Operation> {
    let mut live = live.clone();
    let mut dry = dry_run.clone();
    for p in ignore {
        remove_pointer(&mut live, p);
        remove_pointer(&mut dry, p);
    }
    let meta = |v: &Value| {
        let mut m = Map::new();
        for k in ["name", "annotations", "labels"] {
            if let Some(x) = v.pointer(&format!("/metadata/{k}")) {
                m.insert(k.into(), x.clone());
            }
        }
        let mut o = Map::new();
        if !m.is_empty() {
            o.insert("metadata".into(), Value::Object(m));
        }
        Value::Object(o)
    };
    let mut patch: Vec<Operation> = compare(&meta(&live), &meta(&dry), true)
        .into_iter()
        .filter(|o| matches!(o.op, Op::Add | Op::Replace))
        .collect();
    let rest = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("metadata");
            m.remove("status");
        }
        v
    };
    patch.extend(compare(&rest(&live), &rest(&dry), true));
    patch
}

const MASK: &str = "***";
const MASK_BEFORE: &str = "*** (before)";
const MASK_AFTER: &str = "*** (after)";

/// Masks a Secret's `data` and `stringData` values in a patch: `***` for values added or
/// removed, `*** (before)`/`*** (after)` for values changed.
pub fn mask_secret_patch(patch: &mut [Operation]) {
    for op in patch.iter_mut() {
        let (before, after) = if op.old_value.is_some() && op.value.is_some() {
            (MASK_BEFORE, MASK_AFTER)
        } else {
            (MASK, MASK)
        };
        if op.path == "/data" || op.path == "/stringData" {
            mask_maps(op.old_value.as_mut(), op.value.as_mut());
        } else if op.path.starts_with("/data/") || op.path.starts_with("/stringData/") {
            if let Some(v) = op.old_value.as_mut() {
                *v = Value::String(before.into());
            }
            if let Some(v) = op.value.as_mut() {
                *v = Value::String(after.into());
            }
        }
    }
}

fn mask_maps(from: Option<&mut Value>, to: Option<&mut Value>) {
    let mut empty_a = Map::new();
    let mut empty_b = Map::new();
    let from = from.and_then(Value::as_object_mut).unwrap_or(&mut empty_a);
    let to = to.and_then(Value::as_object_mut).unwrap_or(&mut empty_b);
    let keys: Vec<String> = from.keys().cloned().collect();
    for k in keys {
        let masked = match to.get(&k) {
            Some(t) if from.get(&k) != Some(t) => {
                to.insert(k.clone(), Value::String(MASK_AFTER.into()));
                MASK_BEFORE
            }
            _ => MASK,
        };
        from.insert(k, Value::String(masked.into()));
    }
    let to_keys: Vec<String> = to.keys().cloned().collect();
    for k in to_keys {
        if !from.contains_key(&k) {
            to.insert(k, Value::String(MASK.into()));
        }
    }
}

/// `Kind/namespace/name` (`Kind/name` without a namespace).
pub fn resource_name(obj: &Value) -> String {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
    let ns = s("/metadata/namespace");
    if ns.is_empty() {
        format!("{}/{}", s("/kind"), s("/metadata/name"))
    } else {
        format!("{}/{}/{}", s("/kind"), ns, s("/metadata/name"))
    }
}

/// Flux's `SummarizeDiffSet`: one line per object removed, excluded or changed (with its
/// additions, changes and removals).
pub fn summarize(set: &[Diff]) -> String {
    let mut lines = Vec::new();
    for d in set {
        let name = resource_name(&d.desired);
        match d.kind {
            DiffType::None => {}
            DiffType::Create => lines.push(format!("{name} removed")),
            DiffType::Exclude => lines.push(format!("{name} excluded")),
            DiffType::Update => {
                let count = |op: Op| d.patch.iter().filter(|o| o.op == op).count();
                lines.push(format!(
                    "{name} changed ({} additions, {} changes, {} removals)",
                    count(Op::Add),
                    count(Op::Replace),
                    count(Op::Remove)
                ));
            }
        }
    }
    lines.join("\n")
}

/// Flux's `SummarizeDiffSetBrief`: `removed: x, changed: y, excluded: z`.
pub fn summarize_brief(set: &[Diff]) -> String {
    let count = |k: DiffType| set.iter().filter(|d| d.kind == k).count();
    format!(
        "removed: {}, changed: {}, excluded: {}",
        count(DiffType::Create),
        count(DiffType::Update),
        count(DiffType::Exclude)
    )
}

/// Whether any object was removed or changed (Flux's `DiffSet.HasChanges`).
pub fn has_changes(set: &[Diff]) -> bool {
    set.iter()
        .any(|d| matches!(d.kind, DiffType::Create | DiffType::Update))
}

#[cfg(test)]
mod tests;
