//! Executing Go templates (`text/template`'s `exec.go`): template sets, variables, pipelines,
//! `if`/`with`/`range`/`template`, field and method evaluation, argument checks against Go
//! signatures, and Go's error messages with the template, line, column and node.

use std::any::Any;
use std::collections::HashMap;
use std::rc::Rc;

use super::func::{Func, FuncMap, Special, Ty};
use super::node::{self, Arg, Branch, Command, List, Node, Pipe, Pos, TemplateCall, Variable};
use super::parse::{ParseOptions, Tree, parse};
use super::quote::quote;
use super::value::{IntKind, MapKind, MapRef, Value};

/// Deepest nesting of `{{template}}` calls, as Go's.
const MAX_EXEC_DEPTH: usize = 100_000;

/// What a missing map key gives (Go's `missingkey` option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingKey {
    /// No value (`<no value>` when printed).
    #[default]
    Default,
    /// The zero value of the map's element type.
    Zero,
    /// An error.
    Error,
}

/// A set of templates that can call each other, with the functions they may use: Go's
/// `*template.Template` and its associated templates.
#[derive(Clone)]
pub struct Set {
    /// Name of the set's own template (Helm's is `gotpl`), for error messages.
    pub name: String,
    /// Templates defined here; `parent` holds those of the set this one was cloned from
    /// (Go's `Clone`), which `tpl` does for every call: a clone shares them instead of
    /// copying the map.
    trees: HashMap<String, Rc<Tree>>,
    parent: Option<Rc<Set>>,
    funcs: Rc<FuncMap>,
    builtins: Rc<FuncMap>,
    pub missing_key: MissingKey,
    pub left: String,
    pub right: String,
    /// Methods of named map types (Helm's `Values.Table`, `.YAML` …), looked up before the
    /// map's keys as Go's reflection does: given the receiver and the method's name.
    pub map_methods: Option<MapMethods>,
}

/// Finds a method of a named map type, bound to its receiver.
pub type MapMethods = Rc<dyn Fn(&MapRef, MapKind, &str) -> Option<Rc<Func>>>;

impl Set {
    /// An empty set named `name` with Go's builtins and `funcs`.
    pub fn new(name: &str, funcs: FuncMap) -> Set {
        Set {
            name: name.to_string(),
            trees: HashMap::new(),
            parent: None,
            funcs: Rc::new(funcs),
            builtins: Rc::new(super::builtins::builtins()),
            missing_key: MissingKey::Default,
            left: String::new(),
            right: String::new(),
            map_methods: None,
        }
    }

    /// Adds or replaces functions (Go's `Funcs`).
    pub fn add_funcs(&mut self, funcs: &FuncMap) {
        Rc::make_mut(&mut self.funcs).extend(funcs);
    }

    fn find_function(&self, name: &str) -> Option<(&Rc<Func>, bool)> {
        if let Some(f) = self.funcs.get(name) {
            return Some((f, false));
        }
        self.builtins.get(name).map(|f| (f, true))
    }

    /// Whether a template of that name is defined.
    pub fn has(&self, name: &str) -> bool {
        self.tree(name).is_some()
    }

    /// The template `name`, here or in the set this was cloned from.
    fn tree(&self, name: &str) -> Option<Rc<Tree>> {
        match self.trees.get(name) {
            Some(t) => Some(t.clone()),
            None => self.parent.as_ref().and_then(|p| p.tree(name)),
        }
    }

    /// Go's `Clone`: a set with the same templates and functions, to which templates can be
    /// added without touching this one.
    pub fn clone_set(self: &Rc<Self>) -> Set {
        Set {
            name: self.name.clone(),
            trees: HashMap::new(),
            parent: Some(self.clone()),
            funcs: self.funcs.clone(),
            builtins: self.builtins.clone(),
            missing_key: self.missing_key,
            left: self.left.clone(),
            right: self.right.clone(),
            map_methods: self.map_methods.clone(),
        }
    }

    /// The names of the defined templates.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let mut names: Vec<&str> = self.trees.keys().map(String::as_str).collect();
        if let Some(p) = &self.parent {
            names.extend(p.names().filter(|n| !self.trees.contains_key(*n)));
        }
        names.into_iter()
    }

    /// Go's `t.New(name).Parse(text)`: parses `text` as template `name` and adds every tree it
    /// defines; a later definition replaces an earlier one unless it is empty.
    pub fn parse(&mut self, name: &str, text: &str) -> Result<(), String> {
        self.parse_template(name, text).map(|_| ())
    }

    /// As [`Set::parse`], returning the tree of `name` itself: Go's `t.New(name).Parse(text)`
    /// returns that template, which executes its own tree even when an existing non-empty
    /// definition of the name stays in the set.
    pub fn parse_template(&mut self, name: &str, text: &str) -> Result<Rc<Tree>, String> {
        let has = |n: &str| self.funcs.contains(n) || self.builtins.contains(n);
        let options = ParseOptions {
            left: &self.left,
            right: &self.right,
            has_function: &has,
            skip_func_check: false,
            parse_comments: false,
        };
        let trees = parse(name, text, options)?;
        Ok(self.add_trees(name, text, trees))
    }

    /// The names of every function a template of this set may call (for parsing elsewhere,
    /// on other threads).
    pub fn function_names(&self) -> std::collections::HashSet<String> {
        self.funcs
            .names()
            .chain(self.builtins.names())
            .map(str::to_string)
            .collect()
    }

    /// Adds the trees one parse of template `name` gave (see [`Set::parse_template`]).
    pub fn add_trees(&mut self, name: &str, text: &str, trees: Vec<Tree>) -> Rc<Tree> {
        let mut own = None;
        for tree in trees {
            let tree = Rc::new(tree);
            if tree.name == name {
                own = Some(tree.clone());
            }
            if node::is_empty_tree(&tree.root) && self.tree(&tree.name).is_some() {
                continue;
            }
            self.trees.insert(tree.name.clone(), tree);
        }
        own.unwrap_or_else(|| {
            Rc::new(Tree {
                name: name.to_string(),
                parse_name: name.to_string(),
                root: List::default(),
                text: std::sync::Arc::from(text),
            })
        })
    }

    /// Executes a tree of this set (one [`Set::parse_template`] returned) on `data`.
    pub fn execute_tree(
        self: &Rc<Self>,
        tree: &Rc<Tree>,
        data: Value,
        ext: Option<Rc<dyn Any>>,
    ) -> Result<String, String> {
        let mut state = State {
            set: self.clone(),
            ext,
        };
        state.run(tree.clone(), data)
    }

    /// Executes the template `name` on `data`: Go's `ExecuteTemplate`.
    pub fn execute(
        self: &Rc<Self>,
        name: &str,
        data: Value,
        ext: Option<Rc<dyn Any>>,
    ) -> Result<String, String> {
        let mut state = State {
            set: self.clone(),
            ext,
        };
        state.execute_template(name, data)
    }
}

/// The state functions see: the set being executed (for `include` and `tpl`) and whatever
/// the caller attached (Helm's render context).
pub struct State {
    pub set: Rc<Set>,
    pub ext: Option<Rc<dyn Any>>,
}

impl State {
    /// Runs template `name` of the current set on `data` into a new buffer, as Go's
    /// `ExecuteTemplate` does (a fresh execution: its own variables and depth).
    pub fn execute_template(&mut self, name: &str, data: Value) -> Result<String, String> {
        let Some(tree) = self.set.tree(name) else {
            return Err(format!(
                "template: no template {} associated with template {}",
                quote(name),
                quote(&self.set.name)
            ));
        };
        self.run(tree, data)
    }

    fn run(&mut self, tree: Rc<Tree>, data: Value) -> Result<String, String> {
        let mut out = String::new();
        let mut exec = Exec {
            state: self,
            tree: &tree,
            out: &mut out,
            vars: vec![("$".to_string(), data.clone(), false)],
            depth: 0,
            at: None,
        };
        match exec.walk(&data, false, &tree.root) {
            Ok(()) => Ok(out),
            Err(Flow::Error(e)) => Err(e),
            Err(Flow::Break | Flow::Continue) => Ok(out),
        }
    }
}

/// Why a walk stopped early.
enum Flow {
    Error(String),
    Break,
    Continue,
}

impl From<String> for Flow {
    fn from(e: String) -> Flow {
        Flow::Error(e)
    }
}

type R<T> = Result<T, Flow>;

/// The node execution is at, for error messages.
#[derive(Clone, Copy)]
enum At<'t> {
    Node(&'t Node),
    Arg(&'t Arg),
    Pipe(&'t Pipe),
    Variable(&'t Variable),
    Template(&'t TemplateCall),
    Branch(&'static str, &'t Branch),
    Command(&'t Command),
}

impl At<'_> {
    fn pos(&self) -> Pos {
        match self {
            At::Node(n) => n.pos(),
            At::Arg(a) => a.pos(),
            At::Pipe(p) => p.pos,
            At::Variable(v) => v.pos,
            At::Template(t) => t.pos,
            At::Branch(_, b) => b.pos,
            At::Command(c) => c.pos,
        }
    }

    fn context(&self) -> String {
        match self {
            At::Node(n) => n.to_string(),
            At::Arg(a) => a.to_string(),
            At::Pipe(p) => p.to_string(),
            At::Variable(v) => v.ident.join("."),
            At::Template(t) => Node::Template(Box::new((*t).clone())).to_string(),
            At::Branch(kind, b) => {
                let node = match *kind {
                    "if" => Node::If(Box::new((*b).clone())),
                    "with" => Node::With(Box::new((*b).clone())),
                    _ => Node::Range(Box::new((*b).clone())),
                };
                node.to_string()
            }
            At::Command(c) => c.to_string(),
        }
    }
}

/// One template invocation: its tree, variables and output.
struct Exec<'s, 't, 'o> {
    state: &'s mut State,
    tree: &'t Tree,
    out: &'o mut String,
    /// Name, value, and whether the value came out of an `interface {}`.
    vars: Vec<(String, Value, bool)>,
    depth: usize,
    at: Option<At<'t>>,
}

/// A value with whether it sits in an `interface {}` (map elements, elements of
/// `[]interface {}`): Go names such a receiver's type `interface {}` in messages.
#[derive(Clone)]
struct Rv {
    v: Value,
    iface: bool,
}

fn concrete(v: Value) -> Rv {
    Rv { v, iface: false }
}

impl<'s, 't, 'o> Exec<'s, 't, 'o> {
    fn errorf(&self, message: impl std::fmt::Display) -> Flow {
        let name = &self.tree.name;
        Flow::Error(match self.at {
            None => format!("template: {name}: {message}"),
            Some(at) => format!(
                "template: {}: executing {} at <{}>: {message}",
                self.tree.location(at.pos()),
                quote(name),
                at.context()
            ),
        })
    }

    fn walk(&mut self, dot: &Value, dot_iface: bool, list: &'t List) -> R<()> {
        for n in &list.nodes {
            self.walk_node(dot, dot_iface, n)?;
        }
        Ok(())
    }

    fn walk_node(&mut self, dot: &Value, dot_iface: bool, node: &'t Node) -> R<()> {
        self.at = Some(At::Node(node));
        match node {
            Node::Action(a) => {
                let v = self.eval_pipeline(dot, dot_iface, &a.pipe)?;
                if a.pipe.decl.is_empty() {
                    self.print_value(node, &v.v)?;
                }
            }
            Node::Break { .. } => return Err(Flow::Break),
            Node::Continue { .. } => return Err(Flow::Continue),
            Node::Comment { .. } => {}
            Node::If(b) => self.walk_if_or_with(false, dot, dot_iface, b)?,
            Node::With(b) => self.walk_if_or_with(true, dot, dot_iface, b)?,
            Node::Range(b) => self.walk_range(dot, dot_iface, b)?,
            Node::Template(t) => self.walk_template(dot, dot_iface, t)?,
            Node::Text { text, .. } => self.out.push_str(text),
        }
        Ok(())
    }

    fn mark(&self) -> usize {
        self.vars.len()
    }

    fn pop(&mut self, mark: usize) {
        self.vars.truncate(mark);
    }

    fn walk_if_or_with(
        &mut self,
        with: bool,
        dot: &Value,
        dot_iface: bool,
        b: &'t Branch,
    ) -> R<()> {
        let mark = self.mark();
        let result = (|| {
            let val = self.eval_pipeline(dot, dot_iface, &b.pipe)?;
            if val.v.truth() {
                if with {
                    self.walk(&val.v, val.iface, &b.list)
                } else {
                    self.walk(dot, dot_iface, &b.list)
                }
            } else if let Some(e) = &b.else_list {
                self.walk(dot, dot_iface, e)
            } else {
                Ok(())
            }
        })();
        self.pop(mark);
        result
    }

    fn walk_range(&mut self, dot: &Value, dot_iface: bool, r: &'t Branch) -> R<()> {
        self.at = Some(At::Branch("range", r));
        let outer = self.mark();
        let result = self.walk_range_inner(dot, dot_iface, r);
        self.pop(outer);
        match result {
            Err(Flow::Break) => Ok(()),
            other => other,
        }
    }

    fn walk_range_inner(&mut self, dot: &Value, dot_iface: bool, r: &'t Branch) -> R<()> {
        let val = self.eval_pipeline(dot, dot_iface, &r.pipe)?.v;
        let mark = self.mark();
        let mut iterations: Vec<(Value, Rv)> = Vec::new();
        match &val {
            Value::List(items, kind) => {
                let iface = *kind == super::value::ListKind::Any;
                for (i, item) in items.iter().enumerate() {
                    iterations.push((
                        Value::int(i as i64),
                        Rv {
                            v: item.clone(),
                            iface,
                        },
                    ));
                }
            }
            Value::Bytes(b) => {
                for (i, byte) in b.iter().enumerate() {
                    iterations.push((
                        Value::int(i as i64),
                        concrete(Value::Uint(u64::from(*byte), super::value::UintKind::Uint8)),
                    ));
                }
            }
            Value::Object(o) if o.list_items().is_some() => {
                for (i, item) in o.list_items().unwrap_or_default().into_iter().enumerate() {
                    iterations.push((Value::int(i as i64), concrete(item)));
                }
            }
            Value::Object(o) if o.keyed_entries().is_some() => {
                for (k, v) in o.keyed_entries().unwrap_or_default() {
                    iterations.push((k, concrete(v)));
                }
            }
            Value::Object(o) if o.map_entries().is_some() => {
                for (k, v) in o.map_entries().unwrap_or_default() {
                    iterations.push((Value::str(&k), concrete(v)));
                }
            }
            Value::Map(m, kind) => {
                let iface = *kind != MapKind::String;
                for (k, v) in m.borrow().iter() {
                    iterations.push((
                        Value::str(k),
                        Rv {
                            v: v.clone(),
                            iface,
                        },
                    ));
                }
            }
            Value::Int(n, kind) => {
                if r.pipe.decl.len() > 1 {
                    return Err(self.errorf(format!(
                        "can't use {} to iterate over more than one variable",
                        super::fmt::print_value(&val)
                    )));
                }
                for i in 0..(*n).max(0) {
                    iterations.push((Value::Invalid, concrete(Value::Int(i, *kind))));
                }
            }
            Value::Uint(n, kind) => {
                if r.pipe.decl.len() > 1 {
                    return Err(self.errorf(format!(
                        "can't use {} to iterate over more than one variable",
                        super::fmt::print_value(&val)
                    )));
                }
                for i in 0..*n {
                    iterations.push((Value::Invalid, concrete(Value::Uint(i, *kind))));
                }
            }
            Value::Invalid | Value::Nil | Value::NilList(_) | Value::NilMap(_) => {}
            other => {
                return Err(self.errorf(format!(
                    "range can't iterate over {}",
                    super::fmt::print_value(other)
                )));
            }
        }
        if iterations.is_empty() {
            if let Some(e) = &r.else_list {
                return self.walk(dot, dot_iface, e);
            }
            return Ok(());
        }
        for (index, elem) in iterations {
            let decl = &r.pipe.decl;
            if !decl.is_empty() {
                if r.pipe.is_assign {
                    let first = if decl.len() > 1 {
                        (index.clone(), false)
                    } else {
                        (elem.v.clone(), elem.iface)
                    };
                    self.set_var(&decl[0].ident[0], first.0, first.1)?;
                } else {
                    self.set_top_var(1, elem.v.clone(), elem.iface);
                }
            }
            if decl.len() > 1 {
                if r.pipe.is_assign {
                    self.set_var(&decl[1].ident[0], elem.v.clone(), elem.iface)?;
                } else {
                    self.set_top_var(2, index.clone(), false);
                }
            }
            let result = self.walk(&elem.v, elem.iface, &r.list);
            self.pop(mark);
            match result {
                Ok(()) | Err(Flow::Continue) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    fn walk_template(&mut self, dot: &Value, dot_iface: bool, t: &'t TemplateCall) -> R<()> {
        self.at = Some(At::Template(t));
        let Some(tree) = self.state.set.tree(&t.name) else {
            return Err(self.errorf(format!("template {} not defined", quote(&t.name))));
        };
        if self.depth >= MAX_EXEC_DEPTH {
            return Err(self.errorf(format!(
                "exceeded maximum template depth ({MAX_EXEC_DEPTH})"
            )));
        }
        let new_dot = match &t.pipe {
            Some(p) => self.eval_pipeline(dot, dot_iface, p)?,
            None => concrete(Value::Invalid),
        };
        let depth = self.depth + 1;
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
            let mut inner = Exec {
                state: &mut *self.state,
                tree: &tree,
                out: &mut *self.out,
                vars: vec![("$".to_string(), new_dot.v.clone(), new_dot.iface)],
                depth,
                at: None,
            };
            match inner.walk(&new_dot.v, new_dot.iface, &tree.root) {
                Err(Flow::Break | Flow::Continue) => Ok(()),
                other => other,
            }
        })
    }

    fn var_value(&self, name: &str) -> R<Rv> {
        for (n, v, iface) in self.vars.iter().rev() {
            if n == name {
                return Ok(Rv {
                    v: v.clone(),
                    iface: *iface,
                });
            }
        }
        Err(self.errorf(format!("undefined variable: {name}")))
    }

    fn set_var(&mut self, name: &str, value: Value, iface: bool) -> R<()> {
        for (n, v, i) in self.vars.iter_mut().rev() {
            if n == name {
                *v = value;
                *i = iface;
                return Ok(());
            }
        }
        Err(self.errorf(format!("undefined variable: {name}")))
    }

    fn set_top_var(&mut self, n: usize, value: Value, iface: bool) {
        let len = self.vars.len();
        if let Some(slot) = len.checked_sub(n).and_then(|i| self.vars.get_mut(i)) {
            slot.1 = value;
            slot.2 = iface;
        }
    }

    fn eval_pipeline(&mut self, dot: &Value, dot_iface: bool, pipe: &'t Pipe) -> R<Rv> {
        self.at = Some(At::Pipe(pipe));
        let mut value: Option<Rv> = None;
        for cmd in &pipe.cmds {
            let mut v = self.eval_command(dot, dot_iface, cmd, value.take())?;
            // A value in an `interface {}` is taken out of it; a nil one is no value.
            if matches!(v.v, Value::Nil) {
                v.v = Value::Invalid;
            }
            v.iface = false;
            value = Some(v);
        }
        let value = value.unwrap_or(concrete(Value::Invalid));
        for var in &pipe.decl {
            if pipe.is_assign {
                self.set_var(&var.ident[0], value.v.clone(), value.iface)?;
            } else {
                self.vars
                    .push((var.ident[0].clone(), value.v.clone(), value.iface));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, args: &[Arg], final_: &Option<Rv>) -> R<()> {
        if args.len() > 1 || final_.is_some() {
            return Err(self.errorf(format!("can't give argument to non-function {}", args[0])));
        }
        Ok(())
    }

    fn eval_command(
        &mut self,
        dot: &Value,
        dot_iface: bool,
        cmd: &'t Command,
        final_: Option<Rv>,
    ) -> R<Rv> {
        let first = &cmd.args[0];
        match first {
            Arg::Field { ident, .. } => {
                self.at = Some(At::Arg(first));
                return self.eval_field_chain(
                    dot,
                    dot_iface,
                    concrete_or(dot, dot_iface),
                    first,
                    ident,
                    Some(&cmd.args),
                    final_,
                );
            }
            Arg::Chain { .. } => {
                return self.eval_chain(dot, dot_iface, first, Some(&cmd.args), final_);
            }
            Arg::Identifier { name, .. } => {
                self.at = Some(At::Arg(first));
                return self.eval_function(
                    dot,
                    dot_iface,
                    At::Command(cmd),
                    name,
                    Some(&cmd.args),
                    final_,
                );
            }
            Arg::Pipe(p) => {
                self.not_a_function(&cmd.args, &final_)?;
                return stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
                    self.eval_pipeline(dot, dot_iface, p)
                });
            }
            Arg::Variable(v) => {
                return self.eval_variable(dot, dot_iface, v, Some(&cmd.args), final_);
            }
            _ => {}
        }
        self.at = Some(At::Arg(first));
        self.not_a_function(&cmd.args, &final_)?;
        Ok(match first {
            Arg::Bool { value, .. } => concrete(Value::Bool(*value)),
            Arg::Dot(_) => Rv {
                v: dot.clone(),
                iface: dot_iface,
            },
            Arg::Nil(_) => return Err(self.errorf("nil is not a command")),
            Arg::Number { number, .. } => concrete(self.ideal_constant(first, number)?),
            Arg::String { text, .. } => concrete(Value::str(text)),
            _ => {
                return Err(self.errorf(format!(
                    "can't evaluate command {}",
                    quote(&first.to_string())
                )));
            }
        })
    }

    fn ideal_constant(&mut self, node: &'t Arg, n: &super::number::Number) -> R<Value> {
        self.at = Some(At::Arg(node));
        let text = &n.text;
        let hex_int = text.len() > 2
            && text.starts_with('0')
            && matches!(text.as_bytes()[1], b'x' | b'X')
            && !text.contains(['p', 'P']);
        let rune_int = text.starts_with('\'');
        if n.is_complex {
            return Ok(Value::Complex(n.complex.0, n.complex.1));
        }
        if n.is_float && !hex_int && !rune_int && text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Ok(Value::Float(n.float));
        }
        if n.is_int {
            return Ok(Value::int(n.int));
        }
        if n.is_uint {
            return Err(self.errorf(format!("{text} overflows int")));
        }
        Ok(Value::Invalid)
    }

    fn eval_chain(
        &mut self,
        dot: &Value,
        dot_iface: bool,
        chain: &'t Arg,
        args: Option<&'t [Arg]>,
        final_: Option<Rv>,
    ) -> R<Rv> {
        self.at = Some(At::Arg(chain));
        let Arg::Chain { node, field, .. } = chain else {
            return Err(self.errorf("internal error: not a chain"));
        };
        if field.is_empty() {
            return Err(self.errorf("internal error: no fields in evalChainNode"));
        }
        if let Arg::Nil(_) = node.as_ref() {
            return Err(self.errorf(format!("indirection through explicit nil in {chain}")));
        }
        let receiver = self.eval_arg(dot, dot_iface, None, node)?;
        self.eval_field_chain(dot, dot_iface, receiver, chain, field, args, final_)
    }

    fn eval_variable(
        &mut self,
        dot: &Value,
        dot_iface: bool,
        v: &'t Variable,
        args: Option<&'t [Arg]>,
        final_: Option<Rv>,
    ) -> R<Rv> {
        self.at = Some(At::Variable(v));
        let value = self.var_value(&v.ident[0])?;
        if v.ident.len() == 1 {
            if let Some(args) = args {
                self.not_a_function(args, &final_)?;
            }
            return Ok(value);
        }
        // The node for messages is the variable itself.
        self.eval_field_chain_at(
            dot,
            dot_iface,
            value,
            At::Variable(v),
            &v.ident[1..],
            args,
            final_,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field_chain(
        &mut self,
        dot: &Value,
        dot_iface: bool,
        receiver: Rv,
        node: &'t Arg,
        ident: &'t [String],
        args: Option<&'t [Arg]>,
        final_: Option<Rv>,
    ) -> R<Rv> {
        self.eval_field_chain_at(dot, dot_iface, receiver, At::Arg(node), ident, args, final_)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field_chain_at(
        &mut self,
        dot: &Value,
        dot_iface: bool,
        mut receiver: Rv,
        at: At<'t>,
        ident: &'t [String],
        args: Option<&'t [Arg]>,
        final_: Option<Rv>,
    ) -> R<Rv> {
        let n = ident.len();
        for name in &ident[..n - 1] {
            self.at = Some(at);
            receiver = self.eval_field(dot, dot_iface, name, at, None, None, receiver)?;
        }
        self.at = Some(at);
        self.eval_field(dot, dot_iface, &ident[n - 1], at, args, final_, receiver)
    }

    fn eval_function(
        &mut self,
        dot: &Value,
        dot_iface: bool,
        call_at: At<'t>,
        name: &str,
        args: Option<&'t [Arg]>,
        final_: Option<Rv>,
    ) -> R<Rv> {
        let Some((func, builtin)) = self.state.set.find_function(name) else {
            return Err(self.errorf(format!("{} is not a defined function", quote(name))));
        };
        let func = func.clone();
        self.eval_call(dot, dot_iface, &func, builtin, call_at, name, args, final_)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field(
        &mut self,
        dot: &Value,
        dot_iface: bool,
        name: &str,
        at: At<'t>,
        args: Option<&'t [Arg]>,
        final_: Option<Rv>,
        receiver: Rv,
    ) -> R<Rv> {
        // Only the error messages need the type's name.
        let typ = || {
            if receiver.iface {
                "interface {}".to_string()
            } else {
                receiver.v.type_name()
            }
        };
        let has_args = args.is_some_and(|a| a.len() > 1) || final_.is_some();
        match &receiver.v {
            Value::Invalid => {
                if self.state.set.missing_key == MissingKey::Error {
                    return Err(self.errorf(format!("nil data; no entry for key {}", quote(name))));
                }
                Ok(concrete(Value::Invalid))
            }
            Value::Nil => Err(self.errorf(format!("nil pointer evaluating {}.{name}", typ()))),
            Value::Object(o) => {
                if let Some(method) = o.clone().method(name) {
                    return self.eval_call(dot, dot_iface, &method, false, at, name, args, final_);
                }
                if let Some(v) = o.field(name) {
                    if has_args {
                        return Err(self.errorf(format!(
                            "{name} has arguments but cannot be invoked as function"
                        )));
                    }
                    let iface = matches!(v, Value::Nil);
                    return Ok(Rv { v, iface });
                }
                if let Some(entries) = o.map_entries() {
                    if has_args {
                        return Err(
                            self.errorf(format!("{name} is not a method but has arguments"))
                        );
                    }
                    let found = entries.into_iter().find(|(k, _)| k == name).map(|(_, v)| v);
                    return Ok(concrete(
                        found.unwrap_or(Value::Bytes(std::rc::Rc::from(&b""[..]))),
                    ));
                }
                Err(self.errorf(format!("can't evaluate field {name} in type {}", typ())))
            }
            Value::Map(_, kind) | Value::NilMap(kind) => {
                // Only named map types have methods: a plain map's field costs nothing more.
                if *kind == MapKind::Values
                    && let Some(methods) = self.state.set.map_methods.clone()
                {
                    let receiver_map = match &receiver.v {
                        Value::Map(m, _) => m.clone(),
                        _ => Rc::new(std::cell::RefCell::new(Default::default())),
                    };
                    if let Some(method) = methods(&receiver_map, *kind, name) {
                        return self
                            .eval_call(dot, dot_iface, &method, false, at, name, args, final_);
                    }
                }
                if has_args {
                    return Err(self.errorf(format!("{name} is not a method but has arguments")));
                }
                let found = match &receiver.v {
                    Value::Map(m, _) => m.borrow().get(name).cloned(),
                    _ => None,
                };
                let iface = *kind != MapKind::String;
                match found {
                    Some(v) => Ok(Rv { v, iface }),
                    None => match self.state.set.missing_key {
                        MissingKey::Default => Ok(concrete(Value::Invalid)),
                        MissingKey::Zero => Ok(if *kind == MapKind::String {
                            concrete(Value::str(""))
                        } else {
                            Rv {
                                v: Value::Nil,
                                iface: true,
                            }
                        }),
                        MissingKey::Error => {
                            Err(self.errorf(format!("map has no entry for key {}", quote(name))))
                        }
                    },
                }
            }
            _ => Err(self.errorf(format!("can't evaluate field {name} in type {}", typ()))),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_call(
        &mut self,
        dot: &Value,
        dot_iface: bool,
        func: &Rc<Func>,
        builtin: bool,
        at: At<'t>,
        name: &str,
        args: Option<&'t [Arg]>,
        final_: Option<Rv>,
    ) -> R<Rv> {
        let args: &'t [Arg] = match args {
            Some(a) if !a.is_empty() => &a[1..],
            _ => &[],
        };
        let num_in = args.len() + usize::from(final_.is_some());
        let num_fixed = func.params.len();
        if func.variadic.is_some() {
            if num_in < num_fixed {
                return Err(self.errorf(format!(
                    "wrong number of args for {name}: want at least {num_fixed} got {}",
                    args.len()
                )));
            }
        } else if num_in != num_fixed {
            return Err(self.errorf(format!(
                "wrong number of args for {name}: want {num_fixed} got {num_in}"
            )));
        }
        if builtin && let Some(special) = func.special {
            let or = special == Special::Or;
            let mut v = concrete(Value::Invalid);
            for arg in args {
                v = self.eval_arg(dot, dot_iface, Some(Ty::Reflect), arg)?;
                if v.v.truth() == or {
                    return Ok(v);
                }
            }
            if let Some(f) = final_ {
                v = f;
            }
            return Ok(v);
        }
        let mut argv = Vec::with_capacity(num_in);
        let mut i = 0;
        while i < num_fixed && i < args.len() {
            let v = self.eval_arg(dot, dot_iface, Some(func.params[i]), &args[i])?;
            argv.push(v.v);
            i += 1;
        }
        if let Some(elem) = func.variadic {
            while i < args.len() {
                let v = self.eval_arg(dot, dot_iface, Some(elem), &args[i])?;
                argv.push(v.v);
                i += 1;
            }
        }
        if let Some(f) = final_ {
            let t = if func.variadic.is_some() && num_in > num_fixed {
                func.variadic.unwrap_or(Ty::Any)
            } else {
                func.params.get(num_in - 1).copied().unwrap_or(Ty::Any)
            };
            argv.push(self.validate_type(f, Some(t))?.v);
        }
        let body = func.body.clone();
        match body(self.state, argv) {
            Ok(v) => Ok(concrete(v)),
            Err(e) => {
                self.at = Some(at);
                Err(self.errorf(format!("error calling {name}: {e}")))
            }
        }
    }

    fn validate_type(&mut self, value: Rv, ty: Option<Ty>) -> R<Rv> {
        let Some(ty) = ty else {
            return Ok(value);
        };
        if matches!(value.v, Value::Invalid) {
            if ty.can_be_nil() {
                return Ok(concrete(ty.nil()));
            }
            return Err(self.errorf(format!("invalid value; expected {}", ty.name())));
        }
        if ty == Ty::Reflect || ty == Ty::Any {
            return Ok(value);
        }
        if matches!(value.v, Value::Nil) || !ty.accepts(&value.v) {
            // A value read out of an `interface {}` is named by that type, as Go does.
            let got = if matches!(value.v, Value::Nil) || value.iface {
                "interface {}".to_string()
            } else {
                value.v.type_name()
            };
            return Err(self.errorf(format!(
                "wrong type for value; expected {}; got {got}",
                ty.name()
            )));
        }
        Ok(value)
    }

    fn eval_arg(&mut self, dot: &Value, dot_iface: bool, ty: Option<Ty>, n: &'t Arg) -> R<Rv> {
        self.at = Some(At::Arg(n));
        match n {
            Arg::Dot(_) => {
                let v = Rv {
                    v: dot.clone(),
                    iface: dot_iface,
                };
                return self.validate_type(v, ty);
            }
            Arg::Nil(_) => {
                let ty = ty.unwrap_or(Ty::Any);
                if ty.can_be_nil() {
                    return Ok(concrete(ty.nil()));
                }
                return Err(self.errorf(format!("cannot assign nil to {}", ty.name())));
            }
            Arg::Field { ident, .. } => {
                let v = self.eval_field_chain(
                    dot,
                    dot_iface,
                    concrete_or(dot, dot_iface),
                    n,
                    ident,
                    Some(std::slice::from_ref(n)),
                    None,
                )?;
                return self.validate_type(v, ty);
            }
            Arg::Variable(var) => {
                let v = self.eval_variable(dot, dot_iface, var, None, None)?;
                return self.validate_type(v, ty);
            }
            Arg::Pipe(p) => {
                let v = stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
                    self.eval_pipeline(dot, dot_iface, p)
                })?;
                return self.validate_type(v, ty);
            }
            Arg::Identifier { name, .. } => {
                let v = self.eval_function(dot, dot_iface, At::Arg(n), name, None, None)?;
                return self.validate_type(v, ty);
            }
            Arg::Chain { .. } => {
                let v = self.eval_chain(dot, dot_iface, n, None, None)?;
                return self.validate_type(v, ty);
            }
            _ => {}
        }
        let Some(ty) = ty else {
            return Err(self.errorf(format!("can't handle {n} for arg of type <nil>")));
        };
        match ty {
            Ty::Bool => match n {
                Arg::Bool { value, .. } => Ok(concrete(Value::Bool(*value))),
                _ => Err(self.errorf(format!("expected bool; found {n}"))),
            },
            Ty::Float64 => match n {
                Arg::Number { number, .. } if number.is_float => {
                    Ok(concrete(Value::Float(number.float)))
                }
                _ => Err(self.errorf(format!("expected float; found {n}"))),
            },
            Ty::Int | Ty::Int64 => match n {
                Arg::Number { number, .. } if number.is_int => Ok(concrete(Value::Int(
                    number.int,
                    if ty == Ty::Int {
                        IntKind::Int
                    } else {
                        IntKind::Int64
                    },
                ))),
                _ => Err(self.errorf(format!("expected integer; found {n}"))),
            },
            Ty::String => match n {
                Arg::String { text, .. } => Ok(concrete(Value::str(text))),
                _ => Err(self.errorf(format!("expected string; found {n}"))),
            },
            Ty::Any | Ty::Reflect => self.eval_empty_interface(n),
            _ => Err(self.errorf(format!("can't handle {n} for arg of type {}", ty.name()))),
        }
    }

    fn eval_empty_interface(&mut self, n: &'t Arg) -> R<Rv> {
        self.at = Some(At::Arg(n));
        Ok(concrete(match n {
            Arg::Bool { value, .. } => Value::Bool(*value),
            Arg::Number { number, .. } => self.ideal_constant(n, number)?,
            Arg::String { text, .. } => Value::str(text),
            _ => {
                return Err(self.errorf(format!(
                    "can't handle assignment of {n} to empty interface argument"
                )));
            }
        }))
    }

    fn print_value(&mut self, node: &'t Node, v: &Value) -> R<()> {
        self.at = Some(At::Node(node));
        match v {
            Value::Invalid => self.out.push_str("<no value>"),
            Value::Func(f) => {
                return Err(self.errorf(format!("can't print {node} of type {}", f.type_name())));
            }
            v => self.out.push_str(&super::fmt::print_value(v)),
        }
        Ok(())
    }
}

fn concrete_or(dot: &Value, dot_iface: bool) -> Rv {
    Rv {
        v: dot.clone(),
        iface: dot_iface,
    }
}
