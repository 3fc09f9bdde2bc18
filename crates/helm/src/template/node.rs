//! The parse tree of a Go template, printed back as Go's `parse` package prints it (the form
//! error messages quote: `<.Values.image.tag>`, `{{if .X}}"text"{{end}}`).

use std::fmt::{self, Write};

use super::number::Number;

/// A byte offset in the template's text.
pub type Pos = usize;

/// Text of a template, kept as a range of the template's source (no copy).
#[derive(Debug, Clone)]
pub struct TextSlice {
    src: std::sync::Arc<str>,
    start: usize,
    end: usize,
}

impl TextSlice {
    /// `src[start..end]`.
    pub fn new(src: std::sync::Arc<str>, start: usize, end: usize) -> TextSlice {
        TextSlice { src, start, end }
    }
}

impl std::ops::Deref for TextSlice {
    type Target = str;
    fn deref(&self) -> &str {
        &self.src[self.start..self.end]
    }
}

/// A node of a list: text, an action or a control structure.
#[derive(Debug, Clone)]
pub enum Node {
    Text { pos: Pos, text: TextSlice },
    Comment { pos: Pos, text: String },
    Action(Box<Action>),
    If(Box<Branch>),
    Range(Box<Branch>),
    With(Box<Branch>),
    Template(Box<TemplateCall>),
    Break { pos: Pos, line: usize },
    Continue { pos: Pos, line: usize },
}

/// A sequence of nodes.
#[derive(Debug, Clone, Default)]
pub struct List {
    pub pos: Pos,
    pub nodes: Vec<Node>,
}

/// `{{pipeline}}`.
#[derive(Debug, Clone)]
pub struct Action {
    pub pos: Pos,
    pub line: usize,
    pub pipe: Pipe,
}

/// `if`, `range` or `with`.
#[derive(Debug, Clone)]
pub struct Branch {
    pub pos: Pos,
    pub line: usize,
    pub pipe: Pipe,
    pub list: List,
    pub else_list: Option<List>,
}

/// `{{template "name" pipeline}}`.
#[derive(Debug, Clone)]
pub struct TemplateCall {
    pub pos: Pos,
    pub line: usize,
    pub name: String,
    pub pipe: Option<Pipe>,
}

/// A pipeline with its optional declarations: `$x := a | b c`.
#[derive(Debug, Clone)]
pub struct Pipe {
    pub pos: Pos,
    pub line: usize,
    /// `=` rather than `:=`.
    pub is_assign: bool,
    pub decl: Vec<Variable>,
    pub cmds: Vec<Command>,
}

/// One command of a pipeline: an operand followed by arguments.
#[derive(Debug, Clone)]
pub struct Command {
    pub pos: Pos,
    pub args: Vec<Arg>,
}

/// `$x.Field.Field`.
#[derive(Debug, Clone)]
pub struct Variable {
    pub pos: Pos,
    pub ident: Vec<String>,
}

/// An operand.
#[derive(Debug, Clone)]
pub enum Arg {
    /// `.A.B`, the leading dot dropped from each name.
    Field {
        pos: Pos,
        ident: Vec<String>,
    },
    /// `(pipeline).A.B` and other terms followed by fields.
    Chain {
        pos: Pos,
        node: Box<Arg>,
        field: Vec<String>,
    },
    /// A function name.
    Identifier {
        pos: Pos,
        name: String,
    },
    Variable(Variable),
    Dot(Pos),
    Nil(Pos),
    Bool {
        pos: Pos,
        value: bool,
    },
    Number {
        pos: Pos,
        number: Box<Number>,
    },
    String {
        pos: Pos,
        quoted: String,
        text: String,
    },
    Pipe(Box<Pipe>),
}

impl Arg {
    pub fn pos(&self) -> Pos {
        match self {
            Arg::Field { pos, .. }
            | Arg::Chain { pos, .. }
            | Arg::Identifier { pos, .. }
            | Arg::Dot(pos)
            | Arg::Nil(pos)
            | Arg::Bool { pos, .. }
            | Arg::Number { pos, .. }
            | Arg::String { pos, .. } => *pos,
            Arg::Variable(v) => v.pos,
            Arg::Pipe(p) => p.pos,
        }
    }
}

impl Node {
    pub fn pos(&self) -> Pos {
        match self {
            Node::Text { pos, .. }
            | Node::Comment { pos, .. }
            | Node::Break { pos, .. }
            | Node::Continue { pos, .. } => *pos,
            Node::Action(a) => a.pos,
            Node::If(b) | Node::Range(b) | Node::With(b) => b.pos,
            Node::Template(t) => t.pos,
        }
    }
}

/// Go's `IsEmptyTree`: nothing but space and comments.
pub fn is_empty_tree(list: &List) -> bool {
    list.nodes.iter().all(|n| match n {
        Node::Text { text, .. } => text
            .trim_matches([' ', '\t', '\n', '\r', '\u{b}', '\u{c}'])
            .is_empty(),
        Node::Comment { .. } => true,
        _ => false,
    })
}

/// Prints nodes as Go does; Go's tests print text quoted (`textFormat = "%q"`).
#[derive(Clone, Copy)]
pub struct Printer {
    pub quote_text: bool,
}

impl Printer {
    pub fn list(self, out: &mut String, list: &List) {
        for n in &list.nodes {
            self.node(out, n);
        }
    }

    pub fn node(self, out: &mut String, node: &Node) {
        match node {
            Node::Text { text, .. } => {
                if self.quote_text {
                    out.push_str(&super::quote::quote_bytes(text.as_bytes()));
                } else {
                    out.push_str(text);
                }
            }
            Node::Comment { text, .. } => {
                out.push_str("{{");
                out.push_str(text);
                out.push_str("}}");
            }
            Node::Action(a) => {
                out.push_str("{{");
                pipe(out, &a.pipe);
                out.push_str("}}");
            }
            Node::If(b) => self.branch(out, "if", b),
            Node::Range(b) => self.branch(out, "range", b),
            Node::With(b) => self.branch(out, "with", b),
            Node::Template(t) => {
                out.push_str("{{template ");
                out.push_str(&super::quote::quote(&t.name));
                if let Some(p) = &t.pipe {
                    out.push(' ');
                    pipe(out, p);
                }
                out.push_str("}}");
            }
            Node::Break { .. } => out.push_str("{{break}}"),
            Node::Continue { .. } => out.push_str("{{continue}}"),
        }
    }

    fn branch(self, out: &mut String, name: &str, b: &Branch) {
        out.push_str("{{");
        out.push_str(name);
        out.push(' ');
        pipe(out, &b.pipe);
        out.push_str("}}");
        self.list(out, &b.list);
        if let Some(e) = &b.else_list {
            out.push_str("{{else}}");
            self.list(out, e);
        }
        out.push_str("{{end}}");
    }
}

pub fn pipe(out: &mut String, p: &Pipe) {
    if !p.decl.is_empty() {
        for (i, v) in p.decl.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&v.ident.join("."));
        }
        out.push_str(if p.is_assign { " = " } else { " := " });
    }
    for (i, c) in p.cmds.iter().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        command(out, c);
    }
}

pub fn command(out: &mut String, c: &Command) {
    for (i, a) in c.args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if let Arg::Pipe(p) = a {
            out.push('(');
            pipe(out, p);
            out.push(')');
        } else {
            arg(out, a);
        }
    }
}

pub fn arg(out: &mut String, a: &Arg) {
    match a {
        Arg::Field { ident, .. } => {
            for id in ident {
                out.push('.');
                out.push_str(id);
            }
        }
        Arg::Chain { node, field, .. } => {
            if let Arg::Pipe(p) = node.as_ref() {
                out.push('(');
                pipe(out, p);
                out.push(')');
            } else {
                arg(out, node);
            }
            for f in field {
                out.push('.');
                out.push_str(f);
            }
        }
        Arg::Identifier { name, .. } => out.push_str(name),
        Arg::Variable(v) => out.push_str(&v.ident.join(".")),
        Arg::Dot(_) => out.push('.'),
        Arg::Nil(_) => out.push_str("nil"),
        Arg::Bool { value, .. } => {
            let _ = write!(out, "{value}");
        }
        Arg::Number { number, .. } => out.push_str(&number.text),
        Arg::String { quoted, .. } => out.push_str(quoted),
        Arg::Pipe(p) => pipe(out, p),
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        arg(&mut s, self);
        f.write_str(&s)
    }
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        pipe(&mut s, self);
        f.write_str(&s)
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        command(&mut s, self);
        f.write_str(&s)
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        Printer { quote_text: false }.node(&mut s, self);
        f.write_str(&s)
    }
}

impl Drop for Pipe {
    /// Deeply nested parentheses make deeply nested trees; their drop grows the stack as
    /// parsing them did.
    fn drop(&mut self) {
        let cmds = std::mem::take(&mut self.cmds);
        if cmds.iter().any(|c| {
            c.args
                .iter()
                .any(|a| matches!(a, Arg::Pipe(_) | Arg::Chain { .. }))
        }) {
            stacker::maybe_grow(64 * 1024, 1024 * 1024, move || drop(cmds));
        }
    }
}
