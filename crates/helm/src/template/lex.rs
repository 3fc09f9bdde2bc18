//! The lexer of Go's `text/template`: text, actions between delimiters (trim markers `{{- `
//! and ` -}}` included), comments, and the tokens inside actions, with Go's error messages.
//! Items carry their byte offset and 1-based line, which error messages report.

/// What an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// An error; its value is the message, and nothing follows it.
    Error,
    Bool,
    /// A printable ASCII character inside an action (`,`, `@`, …).
    Char,
    CharConstant,
    Comment,
    Complex,
    /// `=`.
    Assign,
    /// `:=`.
    Declare,
    Eof,
    /// `.Field`, one per segment.
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    /// `$name`, or `$` alone.
    Variable,
    // Keywords.
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

/// One lexed item; its text borrows the input (error messages are owned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item<'a> {
    pub kind: ItemKind,
    /// Byte offset of the item in the input.
    pub pos: usize,
    pub val: std::borrow::Cow<'a, str>,
    /// 1-based line the item starts on.
    pub line: usize,
}

/// Lexer options, as Go's parser sets them.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Emit comments as items (the parser keeps them only on request).
    pub emit_comment: bool,
    /// `break` and `continue` are keywords (inside `range`).
    pub break_ok: bool,
    pub continue_ok: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            emit_comment: false,
            break_ok: true,
            continue_ok: true,
        }
    }
}

const LEFT_COMMENT: &str = "/*";
const RIGHT_COMMENT: &str = "*/";
/// A trim marker and the space beside it.
const TRIM_MARKER_LEN: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    InsideAction,
    Done,
}

/// Lexes a template.
pub struct Lexer<'a> {
    input: &'a str,
    left: &'a str,
    right: &'a str,
    options: Options,
    pos: usize,
    start: usize,
    paren_depth: i32,
    state: State,
    pending: std::collections::VecDeque<Item<'a>>,
    /// The line at `line_at`, so that lines are counted once as the lexer moves on.
    line_at: std::cell::Cell<(usize, usize)>,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

fn has_left_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1] as char)
}

fn has_right_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0] as char) && b[1] == b'-'
}

fn keyword(word: &str) -> Option<ItemKind> {
    Some(match word {
        "." => ItemKind::Dot,
        "block" => ItemKind::Block,
        "break" => ItemKind::Break,
        "continue" => ItemKind::Continue,
        "define" => ItemKind::Define,
        "else" => ItemKind::Else,
        "end" => ItemKind::End,
        "if" => ItemKind::If,
        "range" => ItemKind::Range,
        "nil" => ItemKind::Nil,
        "template" => ItemKind::Template,
        "with" => ItemKind::With,
        _ => return None,
    })
}

/// Go's `%#U` of a rune: `U+0001`, or `U+0029 ')'` when printable.
fn go_rune(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("U+{:04X} '{c}'", c as u32)
    }
}

impl<'a> Lexer<'a> {
    /// A lexer of `input` with `left` and `right` delimiters (empty: `{{` and `}}`).
    pub fn new(input: &'a str, left: &'a str, right: &'a str, options: Options) -> Lexer<'a> {
        Lexer {
            input,
            left: if left.is_empty() { "{{" } else { left },
            right: if right.is_empty() { "}}" } else { right },
            options,
            pos: 0,
            start: 0,
            paren_depth: 0,
            state: State::Text,
            pending: std::collections::VecDeque::new(),
            line_at: std::cell::Cell::new((0, 1)),
        }
    }

    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        match self.input.as_bytes().get(self.pos) {
            Some(&b) if b.is_ascii() => Some(b as char),
            _ => self.rest().chars().next(),
        }
    }

    fn next_char(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn backup(&mut self, c: Option<char>) {
        if let Some(c) = c {
            self.pos -= c.len_utf8();
        }
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.peek() {
            Some(c) if valid.contains(c) => {
                self.pos += c.len_utf8();
                true
            }
            _ => false,
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn line_of(&self, pos: usize) -> usize {
        let (mut at, mut line) = self.line_at.get();
        if pos < at {
            (at, line) = (0, 1);
        }
        line += self.input.as_bytes()[at..pos]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        self.line_at.set((pos, line));
        line
    }

    fn item(&self, kind: ItemKind, from: usize, to: usize) -> Item<'a> {
        Item {
            kind,
            pos: from,
            val: std::borrow::Cow::Borrowed(&self.input[from..to]),
            line: self.line_of(from),
        }
    }

    /// Emits `start..pos` as `kind` and moves `start` on.
    fn emit(&mut self, kind: ItemKind) {
        let item = self.item(kind, self.start, self.pos);
        self.start = self.pos;
        self.pending.push_back(item);
    }

    fn ignore(&mut self) {
        self.start = self.pos;
    }

    fn error(&mut self, message: String) {
        self.pending.push_back(Item {
            kind: ItemKind::Error,
            pos: self.start,
            val: std::borrow::Cow::Owned(message),
            line: self.line_of(self.start),
        });
        self.state = State::Done;
    }

    /// At the right delimiter, and whether a trim marker comes before it.
    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim_marker(rest) && rest[TRIM_MARKER_LEN..].starts_with(self.right) {
            return (true, true);
        }
        (rest.starts_with(self.right), false)
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if is_space(c) => true,
            Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            Some(_) => self.rest().starts_with(self.right),
        }
    }

    /// The next item; after `Eof` or an `Error`, `Eof` again.
    pub fn next_item(&mut self) -> Item<'a> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return item;
            }
            match self.state {
                State::Done => return self.item(ItemKind::Eof, self.input.len(), self.input.len()),
                State::Text => self.lex_text(),
                State::LeftDelim => self.lex_left_delim(),
                State::Comment => self.lex_comment(),
                State::RightDelim => self.lex_right_delim(),
                State::InsideAction => self.lex_inside_action(),
            }
        }
    }

    fn lex_text(&mut self) {
        let Some(x) = self.rest().find(self.left) else {
            self.pos = self.input.len();
            if self.pos > self.start {
                self.emit(ItemKind::Text);
            }
            self.emit(ItemKind::Eof);
            self.state = State::Done;
            return;
        };
        if x > 0 {
            self.pos += x;
            let delim_end = self.pos + self.left.len();
            let trim = if has_left_trim_marker(&self.input[delim_end..]) {
                let text = &self.input[self.start..self.pos];
                text.len() - text.trim_end_matches(is_space).len()
            } else {
                0
            };
            let end = self.pos - trim;
            if end > self.start {
                let item = self.item(ItemKind::Text, self.start, end);
                self.pending.push_back(item);
            }
            self.ignore();
        }
        self.state = State::LeftDelim;
    }

    fn lex_left_delim(&mut self) {
        self.pos += self.left.len();
        let trim = has_left_trim_marker(self.rest());
        let after = if trim { TRIM_MARKER_LEN } else { 0 };
        if self.input[self.pos + after..].starts_with(LEFT_COMMENT) {
            self.pos += after;
            self.ignore();
            self.state = State::Comment;
            return;
        }
        self.emit(ItemKind::LeftDelim);
        self.pos += after;
        self.ignore();
        self.paren_depth = 0;
        self.state = State::InsideAction;
    }

    fn lex_comment(&mut self) {
        self.pos += LEFT_COMMENT.len();
        let Some(x) = self.rest().find(RIGHT_COMMENT) else {
            self.error("unclosed comment".into());
            return;
        };
        self.pos += x + RIGHT_COMMENT.len();
        let (delim, trim) = self.at_right_delim();
        if !delim {
            self.error("comment ends before closing delimiter".into());
            return;
        }
        let comment = self.item(ItemKind::Comment, self.start, self.pos);
        if trim {
            self.pos += TRIM_MARKER_LEN;
        }
        self.pos += self.right.len();
        if trim {
            self.skip_leading_space();
        }
        self.ignore();
        if self.options.emit_comment {
            self.pending.push_back(comment);
        }
        self.state = State::Text;
    }

    fn skip_leading_space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start_matches(is_space).len();
    }

    fn lex_right_delim(&mut self) {
        let (_, trim) = self.at_right_delim();
        if trim {
            self.pos += TRIM_MARKER_LEN;
            self.ignore();
        }
        self.pos += self.right.len();
        self.emit(ItemKind::RightDelim);
        if trim {
            self.skip_leading_space();
            self.ignore();
        }
        self.state = State::Text;
    }

    fn lex_inside_action(&mut self) {
        let (delim, _) = self.at_right_delim();
        if delim {
            if self.paren_depth == 0 {
                self.state = State::RightDelim;
            } else {
                self.error("unclosed left paren".into());
            }
            return;
        }
        let c = self.next_char();
        match c {
            None => self.error("unclosed action".into()),
            Some(c) if is_space(c) => {
                self.backup(Some(c));
                self.lex_space();
            }
            Some('=') => self.emit(ItemKind::Assign),
            Some(':') => {
                if self.next_char() != Some('=') {
                    self.error("expected :=".into());
                } else {
                    self.emit(ItemKind::Declare);
                }
            }
            Some('|') => self.emit(ItemKind::Pipe),
            Some('"') => self.lex_quote(),
            Some('`') => self.lex_raw_quote(),
            Some('$') => self.lex_field_or_variable(ItemKind::Variable),
            Some('\'') => self.lex_char(),
            Some('.')
                if self
                    .input
                    .as_bytes()
                    .get(self.pos)
                    .is_none_or(|b| !b.is_ascii_digit()) =>
            {
                self.lex_field_or_variable(ItemKind::Field);
            }
            Some(c @ ('.' | '+' | '-' | '0'..='9')) => {
                self.backup(Some(c));
                self.lex_number();
            }
            Some(c) if is_alphanumeric(c) => {
                self.backup(Some(c));
                self.lex_identifier();
            }
            Some('(') => {
                self.paren_depth += 1;
                self.emit(ItemKind::LeftParen);
            }
            Some(')') => {
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    self.error("unexpected right paren".into());
                } else {
                    self.emit(ItemKind::RightParen);
                }
            }
            Some(c) if c.is_ascii() && !c.is_ascii_control() => self.emit(ItemKind::Char),
            Some(c) => self.error(format!("unrecognized character in action: {}", go_rune(c))),
        }
    }

    fn lex_space(&mut self) {
        let mut spaces = 0;
        while self.peek().is_some_and(is_space) {
            self.pos += 1;
            spaces += 1;
        }
        // A trim-marked right delimiter: the last space belongs to it.
        let from = self.pos - 1;
        if has_right_trim_marker(&self.input[from..])
            && self.input[from + TRIM_MARKER_LEN..].starts_with(self.right)
        {
            self.pos -= 1;
            if spaces == 1 {
                self.state = State::RightDelim;
                return;
            }
        }
        self.emit(ItemKind::Space);
    }

    /// Takes a run of alphanumerics; false (with Go's error) when no terminator follows it.
    fn word(&mut self) -> bool {
        loop {
            match self.input.as_bytes().get(self.pos) {
                Some(b) if b.is_ascii_alphanumeric() || *b == b'_' => self.pos += 1,
                Some(b) if b.is_ascii() => break,
                None => break,
                Some(_) => match self.peek() {
                    Some(c) if is_alphanumeric(c) => self.pos += c.len_utf8(),
                    _ => break,
                },
            }
        }
        if self.at_terminator() {
            return true;
        }
        let c = self.peek().unwrap_or('\0');
        self.error(format!("bad character {}", go_rune(c)));
        false
    }

    fn lex_identifier(&mut self) {
        if !self.word() {
            return;
        }
        let word = &self.input[self.start..self.pos];
        let kind = match keyword(word) {
            Some(ItemKind::Break) if !self.options.break_ok => ItemKind::Identifier,
            Some(ItemKind::Continue) if !self.options.continue_ok => ItemKind::Identifier,
            Some(k) => k,
            None if word == "true" || word == "false" => ItemKind::Bool,
            None => ItemKind::Identifier,
        };
        self.emit(kind);
    }

    /// `.Field` or `$var`; `.` or `$` alone when a terminator follows at once.
    fn lex_field_or_variable(&mut self, kind: ItemKind) {
        if self.at_terminator() {
            self.emit(if kind == ItemKind::Variable {
                ItemKind::Variable
            } else {
                ItemKind::Dot
            });
            return;
        }
        if self.word() {
            self.emit(kind);
        }
    }

    /// A quoted string, raw string or character constant ending at `close`.
    fn lex_delimited(&mut self, close: char, escapes: bool, kind: ItemKind, message: &str) {
        loop {
            // Runs of other bytes are skipped at once (every delimiter here is ASCII, so no
            // character is split).
            let rest = &self.input.as_bytes()[self.pos..];
            let plain = rest
                .iter()
                .position(|&b| b == close as u8 || b == b'\\' || b == b'\n')
                .unwrap_or(rest.len());
            self.pos += plain;
            match self.next_char() {
                Some('\\') if escapes => match self.next_char() {
                    None | Some('\n') => return self.error(message.into()),
                    Some(_) => {}
                },
                None => return self.error(message.into()),
                Some('\n') if escapes => return self.error(message.into()),
                Some(c) if c == close => break,
                Some(_) => {}
            }
        }
        self.emit(kind);
    }

    fn lex_quote(&mut self) {
        self.lex_delimited('"', true, ItemKind::String, "unterminated quoted string");
    }

    fn lex_raw_quote(&mut self) {
        self.lex_delimited(
            '`',
            false,
            ItemKind::RawString,
            "unterminated raw quoted string",
        );
    }

    fn lex_char(&mut self) {
        self.lex_delimited(
            '\'',
            true,
            ItemKind::CharConstant,
            "unterminated character constant",
        );
    }

    fn lex_number(&mut self) {
        if !self.scan_number() {
            let text = &self.input[self.start..self.pos];
            self.error(format!("bad number syntax: {text:?}"));
            return;
        }
        if matches!(self.peek(), Some('+' | '-')) {
            // Complex: 1+2i, no spaces, ending in `i`.
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let text = &self.input[self.start..self.pos];
                self.error(format!("bad number syntax: {text:?}"));
                return;
            }
            self.emit(ItemKind::Complex);
            return;
        }
        self.emit(ItemKind::Number);
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alphanumeric) {
            self.next_char();
            return false;
        }
        true
    }
}

/// Every item of `input` up to and including `Eof` or the first `Error`.
pub fn lex<'a>(input: &'a str, left: &'a str, right: &'a str, options: Options) -> Vec<Item<'a>> {
    let mut l = Lexer::new(input, left, right, options);
    let mut out = Vec::new();
    loop {
        let item = l.next_item();
        let last = matches!(item.kind, ItemKind::Eof | ItemKind::Error);
        out.push(item);
        if last {
            return out;
        }
    }
}

impl ItemKind {
    /// Keywords print as `<word>` in parse errors.
    fn is_keyword(self) -> bool {
        use ItemKind::*;
        matches!(
            self,
            Block
                | Break
                | Continue
                | Dot
                | Define
                | Else
                | End
                | If
                | Nil
                | Range
                | Template
                | With
        )
    }
}

impl std::fmt::Display for Item<'_> {
    /// As Go's parser names an item in its messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            ItemKind::Eof => f.write_str("EOF"),
            ItemKind::Error => f.write_str(&self.val),
            k if k.is_keyword() => write!(f, "<{}>", self.val),
            _ if self.val.chars().count() > 10 => {
                let head: String = self.val.chars().take(10).collect();
                write!(f, "{}...", super::quote::quote(&head))
            }
            _ => f.write_str(&super::quote::quote(&self.val)),
        }
    }
}
