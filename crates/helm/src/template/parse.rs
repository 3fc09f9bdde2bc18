//! The parser of Go's `text/template` (`text/template/parse`): one template text in, the
//! trees it defines out (`{{define}}` and `{{block}}` make their own), with Go's error
//! messages (`template: NAME:LINE: …`).

use std::sync::Arc;

use super::lex::{Item, ItemKind, Lexer, Options};
use super::node::{
    Action, Arg, Branch, Command, List, Node, Pipe, Pos, TemplateCall, TextSlice, Variable,
    is_empty_tree,
};
use super::number::Number;
use super::quote::unquote;

/// Nesting limit of parenthesized expressions, as Go's (the stack grows as deep nesting needs).
pub const MAX_STACK_DEPTH: usize = 10_000;
/// Longest pipeline, as Go's.
const MAX_PIPELINE_CMDS: usize = 100_000;

/// One parsed template.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The template's name (a file name, or the name given to `define`).
    pub name: String,
    /// The name of the text it was parsed from, for error messages.
    pub parse_name: String,
    pub root: List,
    /// The whole text it was parsed from; node offsets point into it.
    pub text: Arc<str>,
}

impl Tree {
    /// Go's `ErrorContext`: `NAME:LINE:COL` of an offset.
    pub fn location(&self, pos: Pos) -> String {
        let before = self.text.get(..pos).unwrap_or(&self.text);
        let (line, col) = match before.rfind('\n') {
            None => (1, pos),
            Some(nl) => (1 + before.matches('\n').count(), pos - nl - 1),
        };
        format!("{}:{line}:{col}", self.parse_name)
    }
}

/// How to parse.
#[derive(Clone, Copy)]
pub struct ParseOptions<'a> {
    /// Delimiters; empty means `{{` and `}}`.
    pub left: &'a str,
    pub right: &'a str,
    /// Whether a function of that name is defined (checked at parse time, as Go does).
    pub has_function: &'a dyn Fn(&str) -> bool,
    /// Go's `SkipFuncCheck` mode.
    pub skip_func_check: bool,
    /// Go's `ParseComments` mode.
    pub parse_comments: bool,
}

/// Parses `text` as the template `name`; returns every tree it defines, the top-level one
/// included unless it is empty and a definition of the same name was given.
pub fn parse(name: &str, text: &str, options: ParseOptions<'_>) -> Result<Vec<Tree>> {
    let text: Arc<str> = Arc::from(text);
    let lex_options = Options {
        emit_comment: options.parse_comments,
        break_ok: !(options.has_function)("break"),
        continue_ok: !(options.has_function)("continue"),
    };
    let mut p = Parser {
        lex: Lexer::new(&text, options.left, options.right, lex_options),
        token: Default::default(),
        peek_count: 0,
        vars: vec!["$".to_string()],
        name: name.to_string(),
        parse_name: name.to_string(),
        action_line: 0,
        range_depth: 0,
        stack_depth: 0,
        options,
        trees: Vec::new(),
        text: text.clone(),
        arg_stack: Vec::new(),
        cmd_stack: Vec::new(),
        node_stack: Vec::new(),
    };
    let root = p.parse()?;
    p.add(name.to_string(), root)?;
    Ok(p.trees)
}

struct Parser<'a> {
    lex: Lexer<'a>,
    token: [Option<Item<'a>>; 3],
    peek_count: usize,
    vars: Vec<String>,
    /// Name of the tree being parsed (changes inside `define` and `block`).
    name: String,
    parse_name: String,
    action_line: usize,
    range_depth: usize,
    stack_depth: usize,
    options: ParseOptions<'a>,
    trees: Vec<Tree>,
    text: Arc<str>,
    /// Arguments, commands and nodes being gathered, nested ones above outer ones: each list
    /// is built here and moved out at its exact size (a tree holds 10 times its text's bytes
    /// otherwise, most of it the spare room of growing vectors).
    arg_stack: Vec<Arg>,
    cmd_stack: Vec<Command>,
    node_stack: Vec<Node>,
}

type Result<T> = std::result::Result<T, String>;

impl<'a> Parser<'a> {
    fn next(&mut self) -> Item<'a> {
        if self.peek_count > 0 {
            self.peek_count -= 1;
        } else {
            self.token[0] = Some(self.lex.next_item());
        }
        self.token[self.peek_count].clone().unwrap_or_else(eof)
    }

    fn backup(&mut self) {
        self.peek_count += 1;
    }

    fn backup2(&mut self, t1: Item<'a>) {
        self.token[1] = Some(t1);
        self.peek_count = 2;
    }

    fn backup3(&mut self, t2: Item<'a>, t1: Item<'a>) {
        self.token[1] = Some(t1);
        self.token[2] = Some(t2);
        self.peek_count = 3;
    }

    fn peek(&mut self) -> Item<'a> {
        if self.peek_count > 0 {
            return self.token[self.peek_count - 1].clone().unwrap_or_else(eof);
        }
        self.peek_count = 1;
        let item = self.lex.next_item();
        self.token[0] = Some(item.clone());
        item
    }

    fn next_non_space(&mut self) -> Item<'a> {
        loop {
            let t = self.next();
            if t.kind != ItemKind::Space {
                return t;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item<'a> {
        let t = self.next_non_space();
        self.backup();
        t
    }

    fn errorf(&self, message: impl std::fmt::Display) -> String {
        let line = self.token[0].as_ref().map(|t| t.line).unwrap_or(0);
        format!("template: {}:{line}: {message}", self.parse_name)
    }

    fn expect(&mut self, kind: ItemKind, context: &str) -> Result<Item<'a>> {
        let token = self.next_non_space();
        if token.kind != kind {
            return Err(self.unexpected(&token, context));
        }
        Ok(token)
    }

    fn unexpected(&self, token: &Item<'_>, context: &str) -> String {
        if token.kind == ItemKind::Error {
            let mut extra = String::new();
            if self.action_line != 0 && self.action_line != token.line {
                extra = format!(
                    " in action started at {}:{}",
                    self.parse_name, self.action_line
                );
                if token.val.ends_with(" action") {
                    extra = extra[" in action".len()..].to_string();
                }
            }
            return self.errorf(format!("{token}{extra}"));
        }
        self.errorf(format!("unexpected {token} in {context}"))
    }

    /// Go's `Tree.add`: a tree replaces an empty one of the same name; two non-empty ones
    /// are an error.
    fn add(&mut self, name: String, root: List) -> Result<()> {
        if let Some(i) = self.trees.iter().position(|t| t.name == name) {
            if !is_empty_tree(&self.trees[i].root) {
                if !is_empty_tree(&root) {
                    return Err(self.errorf(format!(
                        "template: multiple definition of template {}",
                        super::quote::quote(&name)
                    )));
                }
                return Ok(());
            }
            self.trees.remove(i);
        }
        self.trees.push(Tree {
            name,
            parse_name: self.parse_name.clone(),
            root,
            text: self.text.clone(),
        });
        Ok(())
    }

    /// The top level: text and actions to EOF, `define`s taken out.
    fn parse(&mut self) -> Result<List> {
        let pos = self.peek().pos;
        let mark = self.node_stack.len();
        while self.peek().kind != ItemKind::Eof {
            if self.peek().kind == ItemKind::LeftDelim {
                let delim = self.next();
                if self.next_non_space().kind == ItemKind::Define {
                    self.nested(|p| p.parse_definition())?;
                    continue;
                }
                self.backup2(delim);
            }
            match self.text_or_action()? {
                Parsed::End => return Err(self.errorf("unexpected {{end}}")),
                Parsed::Else(_) => return Err(self.errorf("unexpected {{else}}")),
                Parsed::Node(n) => self.node_stack.push(n),
            }
        }
        Ok(List {
            pos,
            nodes: self.node_stack.drain(mark..).collect(),
        })
    }

    /// Runs `f` as a new tree would (`define`, `block`): its own variables and range depth.
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let vars = std::mem::replace(&mut self.vars, vec!["$".to_string()]);
        let range_depth = std::mem::take(&mut self.range_depth);
        let stack_depth = std::mem::take(&mut self.stack_depth);
        let name = self.name.clone();
        let result = f(self);
        self.vars = vars;
        self.range_depth = range_depth;
        self.stack_depth = stack_depth;
        self.name = name;
        result
    }

    fn parse_definition(&mut self) -> Result<()> {
        const CONTEXT: &str = "define clause";
        let token = self.next_non_space();
        if !matches!(token.kind, ItemKind::String | ItemKind::RawString) {
            return Err(self.unexpected(&token, CONTEXT));
        }
        self.name = unquote(&token.val).map_err(|e| self.errorf(e))?;
        self.expect(ItemKind::RightDelim, CONTEXT)?;
        let (list, end) = self.item_list()?;
        if let Parsed::Else(_) = end {
            return Err(self.errorf(format!("unexpected {{{{else}}}} in {CONTEXT}")));
        }
        let name = self.name.clone();
        self.add(name, list)
    }

    /// Nodes up to `{{end}}` or `{{else}}`, which is returned apart.
    fn item_list(&mut self) -> Result<(List, Parsed)> {
        let pos = self.peek_non_space().pos;
        let mark = self.node_stack.len();
        while self.peek_non_space().kind != ItemKind::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => self.node_stack.push(n),
                end => {
                    let nodes = self.node_stack.drain(mark..).collect();
                    return Ok((List { pos, nodes }, end));
                }
            }
        }
        Err(self.errorf("unexpected EOF"))
    }

    fn text_or_action(&mut self) -> Result<Parsed> {
        let token = self.next_non_space();
        match token.kind {
            ItemKind::Text => {
                let start = token.pos;
                let end = start + token.val.len();
                // Text items are slices of the source, trim markers already applied.
                let text = if self.text.get(start..end) == Some(&*token.val) {
                    TextSlice::new(self.text.clone(), start, end)
                } else {
                    let owned: std::sync::Arc<str> = std::sync::Arc::from(&*token.val);
                    let len = owned.len();
                    TextSlice::new(owned, 0, len)
                };
                Ok(Parsed::Node(Node::Text {
                    pos: token.pos,
                    text,
                }))
            }
            ItemKind::LeftDelim => {
                self.action_line = token.line;
                let result = self.action();
                self.action_line = 0;
                result
            }
            ItemKind::Comment => Ok(Parsed::Node(Node::Comment {
                pos: token.pos,
                text: token.val.into_owned(),
            })),
            _ => Err(self.unexpected(&token, "input")),
        }
    }

    fn action(&mut self) -> Result<Parsed> {
        let token = self.next_non_space();
        let node = match token.kind {
            ItemKind::Block => self.block_control()?,
            ItemKind::Break | ItemKind::Continue => {
                let word = if token.kind == ItemKind::Break {
                    "{{break}}"
                } else {
                    "{{continue}}"
                };
                let next = self.next_non_space();
                if next.kind != ItemKind::RightDelim {
                    return Err(self.unexpected(&next, word));
                }
                if self.range_depth == 0 {
                    return Err(self.errorf(format!("{word} outside {{{{range}}}}")));
                }
                if token.kind == ItemKind::Break {
                    Node::Break {
                        pos: token.pos,
                        line: token.line,
                    }
                } else {
                    Node::Continue {
                        pos: token.pos,
                        line: token.line,
                    }
                }
            }
            ItemKind::Else => {
                let peek = self.peek_non_space();
                if matches!(peek.kind, ItemKind::If | ItemKind::With) {
                    return Ok(Parsed::Else(peek.pos));
                }
                let t = self.expect(ItemKind::RightDelim, "else")?;
                return Ok(Parsed::Else(t.pos));
            }
            ItemKind::End => {
                self.expect(ItemKind::RightDelim, "end")?;
                return Ok(Parsed::End);
            }
            ItemKind::If => Node::If(Box::new(self.parse_control("if")?)),
            ItemKind::Range => Node::Range(Box::new(self.parse_control("range")?)),
            ItemKind::With => Node::With(Box::new(self.parse_control("with")?)),
            ItemKind::Template => self.template_control()?,
            _ => {
                self.backup();
                let token = self.peek();
                let pipe = self.pipeline("command", ItemKind::RightDelim)?;
                Node::Action(Box::new(Action {
                    pos: token.pos,
                    line: token.line,
                    pipe,
                }))
            }
        };
        Ok(Parsed::Node(node))
    }

    fn pipeline(&mut self, context: &str, end: ItemKind) -> Result<Pipe> {
        let token = self.peek_non_space();
        let mut pipe = Pipe {
            pos: token.pos,
            line: token.line,
            is_assign: false,
            decl: Vec::new(),
            cmds: Vec::new(),
        };
        'decls: loop {
            let v = self.peek_non_space();
            if v.kind != ItemKind::Variable {
                break;
            }
            self.next();
            let after = self.peek();
            let next = self.peek_non_space();
            if matches!(next.kind, ItemKind::Assign | ItemKind::Declare) {
                pipe.is_assign = next.kind == ItemKind::Assign;
                self.next_non_space();
                pipe.decl.push(variable(v.pos, &v.val));
                self.vars.push(v.val.to_string());
            } else if next.kind == ItemKind::Char && next.val == "," {
                self.next_non_space();
                pipe.decl.push(variable(v.pos, &v.val));
                self.vars.push(v.val.to_string());
                if context == "range" && pipe.decl.len() < 2 {
                    match self.peek_non_space().kind {
                        ItemKind::Variable | ItemKind::RightDelim | ItemKind::RightParen => {
                            continue 'decls;
                        }
                        _ => return Err(self.errorf("range can only initialize variables")),
                    }
                }
                return Err(self.errorf(format!("too many declarations in {context}")));
            } else if after.kind == ItemKind::Space {
                self.backup3(v, after);
            } else {
                self.backup2(v);
            }
            break;
        }
        let mark = self.cmd_stack.len();
        loop {
            let token = self.next_non_space();
            match token.kind {
                k if k == end => {
                    pipe.cmds = self.cmd_stack.drain(mark..).collect();
                    self.check_pipeline(&pipe, context)?;
                    return Ok(pipe);
                }
                ItemKind::Bool
                | ItemKind::CharConstant
                | ItemKind::Complex
                | ItemKind::Dot
                | ItemKind::Field
                | ItemKind::Identifier
                | ItemKind::Number
                | ItemKind::Nil
                | ItemKind::RawString
                | ItemKind::String
                | ItemKind::Variable
                | ItemKind::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    self.cmd_stack.push(cmd);
                    if self.cmd_stack.len() - mark > MAX_PIPELINE_CMDS {
                        return Err(self.errorf("pipeline too long"));
                    }
                }
                _ => return Err(self.unexpected(&token, context)),
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str) -> Result<()> {
        if pipe.cmds.is_empty() {
            return Err(self.errorf(format!("missing value for {context}")));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args.first(),
                Some(
                    Arg::Bool { .. }
                        | Arg::Dot(_)
                        | Arg::Nil(_)
                        | Arg::Number { .. }
                        | Arg::String { .. }
                )
            ) {
                return Err(self.errorf(format!(
                    "non executable command in pipeline stage {}",
                    i + 1
                )));
            }
        }
        Ok(())
    }

    fn parse_control(&mut self, context: &str) -> Result<Branch> {
        let mark = self.vars.len();
        let result = self.parse_control_inner(context);
        self.vars.truncate(mark);
        result
    }

    fn parse_control_inner(&mut self, context: &str) -> Result<Branch> {
        let pipe = self.pipeline(context, ItemKind::RightDelim)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let listed = self.item_list();
        if context == "range" {
            self.range_depth -= 1;
        }
        let (list, next) = listed?;
        let mut else_list = None;
        if let Parsed::Else(pos) = next {
            if context == "if" && self.peek().kind == ItemKind::If {
                self.next();
                let inner = self.parse_control("if")?;
                else_list = Some(List {
                    pos,
                    nodes: vec![Node::If(Box::new(inner))],
                });
            } else if context == "with" && self.peek().kind == ItemKind::With {
                self.next();
                let inner = self.parse_control("with")?;
                else_list = Some(List {
                    pos,
                    nodes: vec![Node::With(Box::new(inner))],
                });
            } else {
                let (list, next) = self.item_list()?;
                if let Parsed::Else(_) = next {
                    return Err(self.errorf("expected end; found {{else}}"));
                }
                else_list = Some(list);
            }
        }
        Ok(Branch {
            pos: pipe.pos,
            line: pipe.line,
            pipe,
            list,
            else_list,
        })
    }

    fn template_name(&self, token: &Item<'_>, context: &str) -> Result<String> {
        match token.kind {
            ItemKind::String | ItemKind::RawString => {
                unquote(&token.val).map_err(|e| self.errorf(e))
            }
            _ => Err(self.unexpected(token, context)),
        }
    }

    fn block_control(&mut self) -> Result<Node> {
        const CONTEXT: &str = "block clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, CONTEXT)?;
        let pipe = self.pipeline(CONTEXT, ItemKind::RightDelim)?;
        let block_name = name.clone();
        self.nested(|p| {
            p.name = block_name.clone();
            let (list, end) = p.item_list()?;
            if let Parsed::Else(_) = end {
                return Err(p.errorf(format!("unexpected {{{{else}}}} in {CONTEXT}")));
            }
            p.add(block_name, list)
        })?;
        Ok(Node::Template(Box::new(TemplateCall {
            pos: token.pos,
            line: token.line,
            name,
            pipe: Some(pipe),
        })))
    }

    fn template_control(&mut self) -> Result<Node> {
        const CONTEXT: &str = "template clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, CONTEXT)?;
        let mut pipe = None;
        if self.next_non_space().kind != ItemKind::RightDelim {
            self.backup();
            pipe = Some(self.pipeline(CONTEXT, ItemKind::RightDelim)?);
        }
        Ok(Node::Template(Box::new(TemplateCall {
            pos: token.pos,
            line: token.line,
            name,
            pipe,
        })))
    }

    fn command(&mut self) -> Result<Command> {
        let pos = self.peek_non_space().pos;
        let mark = self.arg_stack.len();
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                self.arg_stack.push(operand);
            }
            let token = self.next();
            match token.kind {
                ItemKind::Space => continue,
                ItemKind::RightDelim | ItemKind::RightParen => self.backup(),
                ItemKind::Pipe => {}
                _ => return Err(self.unexpected(&token, "operand")),
            }
            break;
        }
        let cmd = Command {
            pos,
            args: self.arg_stack.drain(mark..).collect(),
        };
        if cmd.args.is_empty() {
            return Err(self.errorf("empty command"));
        }
        Ok(cmd)
    }

    fn operand(&mut self) -> Result<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != ItemKind::Field {
            return Ok(Some(node));
        }
        let pos = self.peek().pos;
        let mut fields = Vec::new();
        while self.peek().kind == ItemKind::Field {
            let f = self.next().val;
            fields.push(f[1..].to_string());
        }
        Ok(Some(match node {
            Arg::Field { mut ident, .. } => {
                ident.extend(fields);
                Arg::Field { pos, ident }
            }
            Arg::Variable(Variable { mut ident, .. }) => {
                ident.extend(fields);
                Arg::Variable(Variable { pos, ident })
            }
            Arg::Bool { .. }
            | Arg::String { .. }
            | Arg::Number { .. }
            | Arg::Nil(_)
            | Arg::Dot(_) => {
                return Err(self.errorf(format!(
                    "unexpected . after term {}",
                    super::quote::quote(&node.to_string())
                )));
            }
            node => Arg::Chain {
                pos,
                node: Box::new(node),
                field: fields,
            },
        }))
    }

    fn term(&mut self) -> Result<Option<Arg>> {
        let token = self.next_non_space();
        Ok(Some(match token.kind {
            ItemKind::Identifier => {
                if !self.options.skip_func_check && !(self.options.has_function)(&token.val) {
                    return Err(self.errorf(format!(
                        "function {} not defined",
                        super::quote::quote(&token.val)
                    )));
                }
                Arg::Identifier {
                    pos: token.pos,
                    name: token.val.into_owned(),
                }
            }
            ItemKind::Dot => Arg::Dot(token.pos),
            ItemKind::Nil => Arg::Nil(token.pos),
            ItemKind::Variable => {
                let v = variable(token.pos, &token.val);
                if !self.vars.iter().any(|n| *n == v.ident[0]) {
                    return Err(self.errorf(format!(
                        "undefined variable {}",
                        super::quote::quote(&v.ident[0])
                    )));
                }
                Arg::Variable(v)
            }
            ItemKind::Field => Arg::Field {
                pos: token.pos,
                ident: segments(&token.val[1..]),
            },
            ItemKind::Bool => Arg::Bool {
                pos: token.pos,
                value: token.val == "true",
            },
            ItemKind::CharConstant | ItemKind::Complex | ItemKind::Number => {
                let number = Number::parse(
                    &token.val,
                    token.kind == ItemKind::CharConstant,
                    token.kind == ItemKind::Complex,
                )
                .map_err(|e| self.errorf(e))?;
                Arg::Number {
                    pos: token.pos,
                    number: Box::new(number),
                }
            }
            ItemKind::LeftParen => {
                if self.stack_depth >= MAX_STACK_DEPTH {
                    return Err(self.errorf("max expression depth exceeded"));
                }
                self.stack_depth += 1;
                let pipe = stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
                    self.pipeline("parenthesized pipeline", ItemKind::RightParen)
                });
                self.stack_depth -= 1;
                Arg::Pipe(Box::new(pipe?))
            }
            ItemKind::String | ItemKind::RawString => {
                let text = unquote(&token.val).map_err(|e| self.errorf(e))?;
                Arg::String {
                    pos: token.pos,
                    quoted: token.val.into_owned(),
                    text,
                }
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}

/// What `text_or_action` found: a node, or an `{{end}}`/`{{else}}` that closes a list.
enum Parsed {
    Node(Node),
    End,
    Else(Pos),
}

fn variable(pos: Pos, ident: &str) -> Variable {
    Variable {
        pos,
        ident: segments(ident),
    }
}

/// `a.b.c` as its names, in a vector of exactly their number.
fn segments(dotted: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(dotted.bytes().filter(|b| *b == b'.').count() + 1);
    out.extend(dotted.split('.').map(str::to_string));
    out
}

fn eof<'a>() -> Item<'a> {
    Item {
        kind: ItemKind::Eof,
        pos: 0,
        val: std::borrow::Cow::Borrowed(""),
        line: 0,
    }
}
