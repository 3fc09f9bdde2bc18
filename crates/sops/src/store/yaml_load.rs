//! Reading YAML as sops' YAML store does (go-yaml v3 nodes): every document a branch, scalars
//! typed by go-yaml v3's rules, aliases expanded, and comments kept as items where go-yaml
//! attaches them: head comments before the key or element they precede, a comment on a
//! scalar's line before that entry, foot comments at the end of the collection they are
//! indented into.

use std::collections::{HashMap, VecDeque};

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use tidegate_core::yaml::{Resolver, resolve_plain};

use super::StoreError;
use crate::tree::{Branch, Comment, Item, Key, Value};

/// How deep collections may nest. The tree is walked recursively, on threads with 2 MiB
/// stacks; 400 levels were measured to fit in a debug build. Kubernetes objects nest a few
/// dozen levels at most (and kustomize's reader stops at 128); go-yaml allows 10,000.
const MAX_DEPTH: usize = 300;

/// A position: line (1-based) and column (0-based, in characters).
type Pos = (usize, usize);

#[derive(Debug, Clone)]
enum Node {
    Scalar {
        value: Value,
        text: String,
        start: Pos,
        end: Pos,
    },
    Map {
        start: Pos,
        flow: bool,
        items: Vec<(Node, Node)>,
    },
    Seq {
        start: Pos,
        flow: bool,
        items: Vec<Node>,
    },
}

impl Node {
    fn start(&self) -> Pos {
        match self {
            Node::Scalar { start, .. } | Node::Map { start, .. } | Node::Seq { start, .. } => {
                *start
            }
        }
    }
}

#[derive(Debug, Clone)]
struct LineComment {
    pos: Pos,
    text: String,
}

/// Reads every document of `text`.
pub fn load(text: &[u8]) -> Result<Vec<Branch>, StoreError> {
    let text = std::str::from_utf8(text)
        .map_err(|_| StoreError::Parse("Error unmarshaling input YAML: invalid UTF-8".into()))?;
    tidegate_core::yaml::check_aliasing(text)
        .map_err(|e| StoreError::Parse(format!("Error unmarshaling input YAML: {e}")))?;
    let mut events: Vec<(Event, Span)> = Vec::new();
    for ev in Parser::new_from_str(text) {
        let ev =
            ev.map_err(|e| StoreError::Parse(format!("Error unmarshaling input YAML: {e}")))?;
        events.push(ev);
    }
    // Positions inside scalars (a `#` there is content, not a comment).
    let scalars: Vec<(Pos, Pos)> = events
        .iter()
        .filter(|(e, _)| matches!(e, Event::Scalar(..)))
        .map(|(_, s)| (pos(s.start), pos(s.end)))
        .collect();
    let comments = find_comments(text, &scalars);
    let lines: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
    let mut b = Builder {
        events: events.into_iter().collect(),
        anchors: HashMap::new(),
        lines,
        depth: 0,
    };
    let mut docs: Vec<(Pos, Option<Node>)> = Vec::new();
    while let Some((ev, span)) = b.events.pop_front() {
        match ev {
            Event::DocumentStart(_) => {
                let node = match b.events.front() {
                    Some((Event::DocumentEnd, _)) => None,
                    _ => Some(b.node()?),
                };
                docs.push((pos(span.start), node));
            }
            Event::StreamStart | Event::DocumentEnd | Event::StreamEnd => {}
            _ => {}
        }
    }
    let mut comments: VecDeque<LineComment> = comments.into();
    let mut out = Vec::new();
    for (i, (_, node)) in docs.iter().enumerate() {
        let limit = docs.get(i + 1).map(|(p, _)| *p);
        let mut branch = Branch::new();
        match node {
            None => {
                take_before(&mut comments, limit, 0, &mut |c| {
                    branch.push(item(c, false))
                });
                if branch.is_empty() {
                    continue;
                }
            }
            Some(Node::Map { start, flow, items }) => {
                branch = map_items(items, *start, *flow, &mut comments, limit, true)?;
            }
            Some(Node::Seq { .. }) => {
                return Err(StoreError::Parse(
                    "Error unmarshaling input YAML: YAML documents that are sequences are not supported"
                        .into(),
                ));
            }
            Some(Node::Scalar { value, .. }) => {
                if *value != Value::Null {
                    return Err(StoreError::Parse(
                        "Error unmarshaling input YAML: YAML documents that are values are not supported"
                            .into(),
                    ));
                }
                take_before(&mut comments, limit, 0, &mut |c| {
                    branch.push(item(c, false))
                });
            }
        }
        out.push(branch);
    }
    Ok(out)
}

fn pos(m: saphyr_parser::Marker) -> Pos {
    (m.line(), m.col())
}

fn item(c: LineComment, inline: bool) -> Item {
    Item {
        key: Key::Comment(Comment {
            text: c.text,
            inline,
        }),
        value: Value::Null,
    }
}

fn list_comment(c: LineComment, inline: bool) -> Value {
    Value::Comment(Comment {
        text: c.text,
        inline,
    })
}

/// Every `#` comment outside scalars: its position and its text after the `#`.
fn find_comments(text: &str, scalars: &[(Pos, Pos)]) -> Vec<LineComment> {
    let mut out = Vec::new();
    let mut s = 0;
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let chars: Vec<char> = line.chars().collect();
        for (col, c) in chars.iter().enumerate() {
            if *c != '#' || (col > 0 && !chars[col - 1].is_whitespace()) {
                continue;
            }
            let p = (line_no, col);
            while s < scalars.len() && scalars[s].1 <= p {
                s += 1;
            }
            // Scalars are sorted; p is inside one if a scalar starting at or before it ends
            // after it.
            let inside = scalars[s..]
                .iter()
                .take_while(|(start, _)| *start <= p)
                .any(|(start, end)| *start <= p && p < *end);
            if inside {
                continue;
            }
            out.push(LineComment {
                pos: p,
                text: chars[col + 1..].iter().collect(),
            });
            break;
        }
    }
    out
}

/// Takes the comments before `limit` whose column is at least `col`.
fn take_before(
    comments: &mut VecDeque<LineComment>,
    limit: Option<Pos>,
    col: usize,
    f: &mut dyn FnMut(LineComment),
) {
    while let Some(c) = comments.front() {
        if limit.is_some_and(|l| c.pos >= l) || c.pos.1 < col {
            break;
        }
        if let Some(c) = comments.pop_front() {
            f(c);
        }
    }
}

/// Takes the comments that start before `at` (head comments of what is at `at`).
fn take_head(comments: &mut VecDeque<LineComment>, at: Pos, f: &mut dyn FnMut(LineComment)) {
    while comments.front().is_some_and(|c| c.pos < at) {
        if let Some(c) = comments.pop_front() {
            f(c);
        }
    }
}

/// Takes a comment on line `line` (after a scalar ending there).
fn take_on_line(comments: &mut VecDeque<LineComment>, line: usize) -> Option<LineComment> {
    if comments.front().is_some_and(|c| c.pos.0 == line) {
        comments.pop_front()
    } else {
        None
    }
}

fn map_items(
    items: &[(Node, Node)],
    start: Pos,
    flow: bool,
    comments: &mut VecDeque<LineComment>,
    limit: Option<Pos>,
    top: bool,
) -> Result<Branch, StoreError> {
    let mut branch = Branch::new();
    let col = if top { 0 } else { start.1 };
    for (i, (k, v)) in items.iter().enumerate() {
        take_head(comments, k.start(), &mut |c| branch.push(item(c, false)));
        let next = items.get(i + 1).map(|(k, _)| k.start()).or(limit);
        let key = match k {
            Node::Scalar { value, text, .. } => match value {
                Value::Str(s) => Key::Str(s.clone()),
                Value::Int(_) => Key::Other("int", text.clone()),
                Value::Float(_) => Key::Other("float64", text.clone()),
                Value::Bool(_) => Key::Other("bool", text.clone()),
                Value::Null => Key::Other("<nil>", text.clone()),
                _ => Key::Other("string", text.clone()),
            },
            _ => Key::Other("map[string]interface {}", String::new()),
        };
        let value = match v {
            Node::Scalar { value, end, .. } => {
                if let Some(c) = take_on_line(comments, end.0) {
                    branch.push(item(c, true));
                }
                value.clone()
            }
            Node::Map { start, flow, items } => {
                if let Some(c) = take_on_line(comments, k.start().0) {
                    branch.push(item(c, false));
                }
                Value::Branch(map_items(items, *start, *flow, comments, next, false)?)
            }
            Node::Seq { start, flow, items } => {
                if let Some(c) = take_on_line(comments, k.start().0) {
                    branch.push(item(c, false));
                }
                Value::List(seq_items(items, *start, *flow, comments, next)?)
            }
        };
        branch.push(Item { key, value });
    }
    if !flow {
        take_before(comments, limit, col, &mut |c| branch.push(item(c, false)));
    }
    Ok(branch)
}

fn seq_items(
    items: &[Node],
    start: Pos,
    flow: bool,
    comments: &mut VecDeque<LineComment>,
    limit: Option<Pos>,
) -> Result<Vec<Value>, StoreError> {
    let mut out = Vec::new();
    for (i, node) in items.iter().enumerate() {
        take_head(comments, node.start(), &mut |c| {
            out.push(list_comment(c, false))
        });
        let next = items.get(i + 1).map(Node::start).or(limit);
        let value = match node {
            Node::Scalar { value, end, .. } => {
                if let Some(c) = take_on_line(comments, end.0) {
                    out.push(list_comment(c, true));
                }
                value.clone()
            }
            Node::Map { start, flow, items } => {
                Value::Branch(map_items(items, *start, *flow, comments, next, false)?)
            }
            Node::Seq { start, flow, items } => {
                Value::List(seq_items(items, *start, *flow, comments, next)?)
            }
        };
        out.push(value);
    }
    if !flow {
        take_before(comments, limit, start.1, &mut |c| {
            out.push(list_comment(c, false))
        });
    }
    Ok(out)
}

struct Builder<'a> {
    events: VecDeque<(Event<'a>, Span)>,
    anchors: HashMap<usize, Node>,
    lines: Vec<Vec<char>>,
    depth: usize,
}

impl Builder<'_> {
    fn char_at(&self, (line, col): Pos) -> Option<char> {
        self.lines.get(line.checked_sub(1)?)?.get(col).copied()
    }

    /// Whether the collection starting at `start` is written in flow style.
    fn is_flow(&self, start: Pos, open: char) -> bool {
        self.char_at(start) == Some(open)
    }

    /// The `-` indicator before a sequence item starting at `at`.
    fn dash_before(&self, at: Pos) -> Pos {
        let (line, col) = at;
        let Some(chars) = line.checked_sub(1).and_then(|l| self.lines.get(l)) else {
            return at;
        };
        let mut c = col.min(chars.len());
        while c > 0 {
            c -= 1;
            if chars[c] == '-' {
                return (line, c);
            }
        }
        at
    }

    fn node(&mut self) -> Result<Node, StoreError> {
        self.depth += 1;
        let res = if self.depth > MAX_DEPTH {
            Err(StoreError::Parse(format!(
                "Error unmarshaling input YAML: exceeded max depth of {MAX_DEPTH}"
            )))
        } else {
            self.node_at_depth()
        };
        self.depth -= 1;
        res
    }

    fn node_at_depth(&mut self) -> Result<Node, StoreError> {
        let Some((ev, span)) = self.events.pop_front() else {
            return Err(StoreError::Parse(
                "Error unmarshaling input YAML: unexpected end of stream".into(),
            ));
        };
        let start = pos(span.start);
        let (node, anchor) = match ev {
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.map(|t| t.suffix.clone());
                let value = scalar(&text, style, tag.as_deref())?;
                (
                    Node::Scalar {
                        value,
                        text: text.into_owned(),
                        start,
                        end: pos(span.end),
                    },
                    anchor,
                )
            }
            Event::MappingStart(anchor, _) => {
                let mut items = Vec::new();
                loop {
                    if matches!(self.events.front(), Some((Event::MappingEnd, _))) {
                        self.events.pop_front();
                        break;
                    }
                    let k = self.node()?;
                    let v = self.node()?;
                    // A `<<` merge key stays a key: sops reads go-yaml's nodes, which keep it.
                    items.push((k, v));
                }
                let flow = self.is_flow(start, '{');
                // A block mapping sits at its first key.
                let start = match items.first() {
                    Some((k, _)) if !flow => k.start(),
                    _ => start,
                };
                (Node::Map { start, flow, items }, anchor)
            }
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                loop {
                    if matches!(self.events.front(), Some((Event::SequenceEnd, _))) {
                        self.events.pop_front();
                        break;
                    }
                    items.push(self.node()?);
                }
                let flow = self.is_flow(start, '[');
                // A block sequence sits at its first `-`.
                let start = match items.first() {
                    Some(first) if !flow => self.dash_before(first.start()),
                    _ => start,
                };
                (Node::Seq { start, flow, items }, anchor)
            }
            Event::Alias(id) => {
                let node = self.anchors.get(&id).cloned().ok_or_else(|| {
                    StoreError::Parse("Error unmarshaling input YAML: unknown anchor".into())
                })?;
                return Ok(relocate(node, start));
            }
            _ => {
                return Err(StoreError::Parse(
                    "Error unmarshaling input YAML: unexpected event".into(),
                ));
            }
        };
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        Ok(node)
    }
}

/// An alias's copy sits where the alias is, so comments around it attach as they would.
fn relocate(node: Node, at: Pos) -> Node {
    match node {
        Node::Scalar { value, text, .. } => Node::Scalar {
            value,
            text,
            start: at,
            end: at,
        },
        Node::Map { flow, items, .. } => Node::Map {
            start: at,
            flow,
            items: items
                .into_iter()
                .map(|(k, v)| (relocate(k, at), relocate(v, at)))
                .collect(),
        },
        Node::Seq { flow, items, .. } => Node::Seq {
            start: at,
            flow,
            items: items.into_iter().map(|n| relocate(n, at)).collect(),
        },
    }
}

/// A scalar typed as go-yaml v3 decodes it into an `interface{}`.
fn scalar(text: &str, style: ScalarStyle, tag: Option<&str>) -> Result<Value, StoreError> {
    let plain = matches!(style, ScalarStyle::Plain);
    match tag {
        Some("str") => return Ok(Value::Str(text.to_string())),
        Some("binary") => {
            use base64::Engine;
            let clean: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            return base64::engine::general_purpose::STANDARD
                .decode(clean)
                .map(|b| Value::Str(String::from_utf8_lossy(&b).into_owned()))
                .map_err(|_| {
                    StoreError::Parse("Error unmarshaling input YAML: invalid !!binary".into())
                });
        }
        Some("null") => return Ok(Value::Null),
        Some("bool") | Some("int") | Some("float") | Some("timestamp") => {
            return Ok(resolve(text).unwrap_or_else(|| Value::Str(text.to_string())));
        }
        _ => {}
    }
    if !plain || tag.is_some() {
        return Ok(Value::Str(text.to_string()));
    }
    Ok(resolve(text).unwrap_or_else(|| Value::Str(text.to_string())))
}

/// go-yaml v3's resolution of a plain scalar.
fn resolve(s: &str) -> Option<Value> {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Some(Value::Float(f64::INFINITY));
        }
        "-.inf" | "-.Inf" | "-.INF" => return Some(Value::Float(f64::NEG_INFINITY)),
        ".nan" | ".NaN" | ".NAN" => return Some(Value::Float(f64::NAN)),
        _ => {}
    }
    match resolve_plain(s, Resolver::GoV3)? {
        serde_json::Value::Number(n) => Some(match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(0.0)),
        }),
        // A timestamp, already in RFC 3339.
        serde_json::Value::String(t) => Some(Value::Time(t)),
        serde_json::Value::Bool(b) => Some(Value::Bool(b)),
        _ => None,
    }
}
