//! The parser of Flux's substitution language, with the grammar of Flux's fork of drone's
//! envsubst (its quirks included, because manifests depend on them):
//!
//! * Top level: text, `$$` (a literal `$`; the next character is taken as it is) and `${`.
//! * After `${`: `#name}` (length), or a name of letters, digits and `_` followed by `}`,
//!   `:` (default `:=`, `:-`, `:?`, `:+`, else substring), `=` (default), `,`/`^` (case, up to
//!   two of either), `/` (replace: `/`, `//`, `/#`, `/%`), `#`/`##`, `%`/`%%` (trim).
//!   Anything else, `-` and `+` included, is "missing closing brace".
//! * A function argument is one node, either a nested `${…}` or a run of text; only a default's
//!   value may be a sequence of them (`${a:=x${b}y}`). Only replace arguments know escapes
//!   (`\/`, `\\`, `$$`).

use super::EnvsubstError;

/// One node of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// Literal text.
    Text(String),
    /// `${param…}`: the variable, the operator as written (`""` for a plain reference, `#` for
    /// both length and trim) and the arguments.
    Func {
        /// The variable's name.
        param: String,
        /// The operator (`""`, `#`, `##`, `%`, `%%`, `/`, `//`, `/#`, `/%`, `:`, `=`, `:=`,
        /// `:-`, `:?`, `:+`, or a case operator of `,` and `^`).
        op: String,
        /// The arguments, each a single node; a default's value may be several.
        args: Vec<Node>,
    },
}

/// Parses `input` into its top-level nodes (adjacent text merged; no empty text nodes).
pub fn parse(input: &str) -> Result<Vec<Node>, EnvsubstError> {
    let mut p = Parser {
        chars: input.chars().collect(),
        pos: 0,
    };
    let mut out = Vec::new();
    let mut text = String::new();
    while let Some(c) = p.peek() {
        if p.at_open() {
            if !text.is_empty() {
                out.push(Node::Text(std::mem::take(&mut text)));
            }
            p.pos += 2;
            out.push(p.func()?);
        } else if c == '$' && p.peek_at(1) == Some('$') {
            // The first `$` goes; the second is text and is not looked at again.
            text.push('$');
            p.pos += 2;
        } else {
            text.push(c);
            p.pos += 1;
        }
    }
    if !text.is_empty() {
        out.push(Node::Text(text));
    }
    Ok(out)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

/// Which characters a text argument may hold.
#[derive(Clone, Copy)]
enum Until {
    /// Up to `}`.
    Close,
    /// Up to `:` or `}` (a substring's position).
    ColonOrClose,
    /// Up to `/` (a replace pattern).
    Slash,
}

impl Until {
    fn accepts(self, c: char) -> bool {
        match self {
            Until::Close => c != '}',
            Until::ColonOrClose => c != ':' && c != '}',
            Until::Slash => c != '/',
        }
    }
}

fn is_ident(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn at_open(&self) -> bool {
        self.peek() == Some('$') && self.peek_at(1) == Some('{')
    }

    /// Consumes up to `max` characters for which `ok` holds.
    fn take(&mut self, max: usize, ok: impl Fn(char) -> bool) -> String {
        let start = self.pos;
        while self.pos - start < max && self.peek().is_some_and(&ok) {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn ident(&mut self) -> String {
        self.take(usize::MAX, is_ident)
    }

    /// Consumes `}` or fails with "bad substitution".
    fn close(&mut self) -> Result<(), EnvsubstError> {
        if self.peek() == Some('}') {
            self.pos += 1;
            Ok(())
        } else {
            Err(EnvsubstError::BadSubstitution)
        }
    }

    /// After `${`.
    fn func(&mut self) -> Result<Node, EnvsubstError> {
        if self.peek() == Some('#') {
            self.pos += 1;
            let param = self.ident();
            if param.is_empty() {
                return Err(EnvsubstError::BadSubstitution);
            }
            self.close()?;
            return Ok(func(param, "#", Vec::new()));
        }
        let param = self.ident();
        if param.is_empty() {
            return Err(EnvsubstError::VariableName);
        }
        match self.peek() {
            Some(':') => match self.peek_at(1) {
                // Flux looks one character past the colon and steps back by that
                // character's width: with nothing or a multi-byte character there, it loses
                // its place and reports a bad substitution.
                None => Err(EnvsubstError::BadSubstitution),
                Some(c) if c.len_utf8() > 1 => Err(EnvsubstError::BadSubstitution),
                Some('=' | '-' | '?' | '+') => {
                    let op = self.take(2, |_| true);
                    self.default_value(param, op)
                }
                _ => self.substring(param),
            },
            Some('=') => {
                self.pos += 1;
                self.default_value(param, "=".to_string())
            }
            Some(',' | '^') => {
                let op = self.take(2, |c| c == ',' || c == '^');
                self.close()?;
                Ok(func(param, &op, Vec::new()))
            }
            Some('/') => self.replace(param),
            Some(c @ ('#' | '%')) => {
                let op = self.take(2, |x| x == c);
                let arg = self.param(Until::Close, false)?;
                self.close()?;
                Ok(func(param, &op, vec![arg]))
            }
            Some('}') => {
                self.pos += 1;
                Ok(func(param, "", Vec::new()))
            }
            _ => Err(EnvsubstError::MissingClosingBrace),
        }
    }

    /// `:=`, `:-`, `:?`, `:+` or `=` (already consumed as `op`): nodes up to `}`.
    fn default_value(&mut self, param: String, op: String) -> Result<Node, EnvsubstError> {
        let mut args = Vec::new();
        loop {
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(func(param, &op, args));
            }
            args.push(self.param(Until::Close, false)?);
        }
    }

    /// `:position}` or `:position:length}`.
    fn substring(&mut self, param: String) -> Result<Node, EnvsubstError> {
        self.pos += 1;
        let mut args = vec![self.param(Until::ColonOrClose, false)?];
        match self.peek() {
            Some('}') => {
                self.pos += 1;
                return Ok(func(param, ":", args));
            }
            Some(':') => {
                self.take(usize::MAX, |c| c == ':');
            }
            _ => return Err(EnvsubstError::BadSubstitution),
        }
        args.push(self.param(Until::Close, false)?);
        self.close()?;
        Ok(func(param, ":", args))
    }

    /// `/pattern/replacement}` (also `//`, `/#`, `/%`); the replacement may be empty.
    fn replace(&mut self, param: String) -> Result<Node, EnvsubstError> {
        self.pos += 1;
        let mut op = "/".to_string();
        if let Some(c @ ('/' | '#' | '%')) = self.peek() {
            op.push(c);
            self.pos += 1;
        }
        let mut args = vec![self.param(Until::Slash, true)?];
        if self.take(usize::MAX, |c| c == '/').is_empty() {
            return Err(EnvsubstError::BadSubstitution);
        }
        if self.peek() == Some('}') {
            self.pos += 1;
            return Ok(func(param, &op, args));
        }
        args.push(self.param(Until::Close, true)?);
        self.close()?;
        Ok(func(param, &op, args))
    }

    /// One argument node: a nested `${…}`, or text of characters `until` accepts (at least
    /// one), ending before `${`. With `escapes`, `\/`, `\\` and `$$` stand for their second
    /// character, whatever `until` says.
    fn param(&mut self, until: Until, escapes: bool) -> Result<Node, EnvsubstError> {
        if self.at_open() {
            self.pos += 2;
            return self.func();
        }
        let mut text = String::new();
        while let Some(c) = self.peek() {
            if self.at_open() {
                break;
            }
            let escaped = escapes
                && matches!(
                    (c, self.peek_at(1)),
                    ('\\', Some('/' | '\\')) | ('$', Some('$'))
                );
            if escaped {
                if let Some(next) = self.peek_at(1) {
                    text.push(next);
                }
                self.pos += 2;
            } else if until.accepts(c) {
                text.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        if text.is_empty() {
            return Err(EnvsubstError::FuncSubstitution);
        }
        Ok(Node::Text(text))
    }
}

fn func(param: String, op: &str, args: Vec<Node>) -> Node {
    Node::Func {
        param,
        op: op.to_string(),
        args,
    }
}
