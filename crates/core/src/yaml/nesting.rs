//! A linear look at a YAML text's flow nesting, before the parser sees it.
//!
//! libyaml's scanner (and so every parser built on it here) spends time proportional to the
//! number of flow collections open on the current line for every token it reads: `[[[…]]]`
//! 100,000 deep costs minutes of CPU before the reader's recursion limit refuses it, because
//! the whole document is scanned first. [`check_nesting`] counts flow collections in one pass
//! and refuses a text nested deeper than [`MAX_FLOW_DEPTH`], which the reader would refuse
//! anyway; everything it lets through costs the parser a bounded amount per byte.
//!
//! The count follows YAML's tokens far enough never to see a bracket that is not one: quoted
//! scalars, comments, block scalars (`|`, `>`) and plain scalars (in block context they may
//! hold brackets and quotes) are skipped as the scanner would skip them. Where it cannot tell
//! (a malformed text), it counts less rather than more: a valid document is never refused for
//! brackets that are only text.

/// Flow collections a document may nest (the reader's recursion limit, which counts block
/// collections too, is the same number).
pub const MAX_FLOW_DEPTH: usize = 128;

/// A text nested deeper than [`MAX_FLOW_DEPTH`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "recursion limit exceeded at line {line} column {column}: flow collections nested more than {MAX_FLOW_DEPTH} deep"
)]
pub struct NestingError {
    /// 1-based line of the collection past the limit.
    pub line: usize,
    /// 1-based column (in bytes) of that collection.
    pub column: usize,
}

/// Refuses `text` when its flow collections (`[…]`, `{…}`) nest deeper than
/// [`MAX_FLOW_DEPTH`]. Linear in the length of the text.
pub fn check_nesting(text: &str) -> Result<(), NestingError> {
    // Without an opening bracket past the limit there is nothing to find.
    let opening = text.bytes().filter(|b| matches!(b, b'[' | b'{')).count();
    if opening <= MAX_FLOW_DEPTH {
        return Ok(());
    }
    Scanner {
        s: text.as_bytes(),
        i: 0,
        line: 1,
        line_start: 0,
    }
    .run()
}

struct Scanner<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
    /// Offset of the current line's first byte.
    line_start: usize,
}

fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn is_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

fn is_flow_indicator(b: u8) -> bool {
    matches!(b, b',' | b'[' | b']' | b'{' | b'}')
}

impl Scanner<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.s.get(self.i + ahead).copied()
    }

    fn column(&self) -> usize {
        self.i - self.line_start
    }

    /// Moves past one byte, counting lines.
    fn bump(&mut self) {
        if self.s[self.i] == b'\n' {
            self.line += 1;
            self.line_start = self.i + 1;
        }
        self.i += 1;
    }

    fn skip_to_eol(&mut self) {
        while let Some(b) = self.peek(0) {
            if is_break(b) {
                break;
            }
            self.i += 1;
        }
    }

    /// Whether the byte after the current one ends a token (`-`, `?`, `:` as indicators).
    fn ends_indicator(&self, in_flow: bool) -> bool {
        match self.peek(1) {
            None => true,
            Some(b) => is_ws(b) || is_break(b) || (in_flow && is_flow_indicator(b)),
        }
    }

    /// Whether the current position starts a document marker (`---`, `...`) at column 0.
    fn at_document_marker(&self) -> bool {
        self.column() == 0
            && (self.s[self.i..].starts_with(b"---") || self.s[self.i..].starts_with(b"..."))
            && self.peek(3).is_none_or(|b| is_ws(b) || is_break(b))
    }

    /// Skips a quoted scalar starting at the current quote, across lines.
    fn skip_quoted(&mut self) {
        let quote = self.s[self.i];
        self.bump();
        while let Some(b) = self.peek(0) {
            if quote == b'\'' && b == b'\'' {
                if self.peek(1) == Some(b'\'') {
                    self.i += 2;
                    continue;
                }
                self.i += 1;
                return;
            }
            if quote == b'"' && b == b'\\' {
                self.bump();
                if self.peek(0).is_some() {
                    self.bump();
                }
                continue;
            }
            if quote == b'"' && b == b'"' {
                self.i += 1;
                return;
            }
            // A document marker ends an unterminated scalar (the parser stops there too).
            if self.column() == 0 && self.at_document_marker() {
                return;
            }
            self.bump();
        }
    }

    /// Skips an anchor, tag or alias token.
    fn skip_property(&mut self) {
        self.i += 1;
        while let Some(b) = self.peek(0) {
            if is_ws(b) || is_break(b) || is_flow_indicator(b) {
                break;
            }
            self.i += 1;
        }
    }

    fn run(mut self) -> Result<(), NestingError> {
        // The column of the innermost block entry on this line (a key's first byte, a `-` or
        // `?`), which a block scalar's lines must be indented past.
        // A block plain scalar ended at the line's end: the indentation its continuation
        // lines must exceed.
        let mut plain_parent: Option<isize> = None;
        while self.i < self.s.len() {
            // A line in block context.
            let mut indent = 0;
            while self.peek(0) == Some(b' ') {
                self.i += 1;
                indent += 1;
            }
            match self.peek(0) {
                None => break,
                Some(b) if is_break(b) => {
                    self.bump();
                    continue;
                }
                Some(b'#') => {
                    self.skip_to_eol();
                    continue;
                }
                Some(b'%') if indent == 0 => {
                    self.skip_to_eol();
                    continue;
                }
                _ => {}
            }
            if indent == 0 && self.at_document_marker() {
                self.i += 3;
            } else if let Some(parent) = plain_parent
                && indent as isize > parent
            {
                // The continuation of a multi-line plain scalar: text, whatever it starts with.
                self.skip_plain_block();
                continue;
            }
            plain_parent = None;
            let mut entry: Option<usize> = None;
            // Nodes of this line.
            let mut node_start = true;
            loop {
                while self.peek(0).is_some_and(is_ws) {
                    self.i += 1;
                }
                let Some(b) = self.peek(0) else {
                    break;
                };
                if is_break(b) {
                    self.bump();
                    break;
                }
                if b == b'#' {
                    self.skip_to_eol();
                    continue;
                }
                if !node_start {
                    if b == b':' && self.ends_indicator(false) {
                        self.i += 1;
                        node_start = true;
                        continue;
                    }
                    // Anything else after a complete node is an error the parser reports.
                    self.skip_to_eol();
                    continue;
                }
                match b {
                    b'-' | b'?' if self.ends_indicator(false) => {
                        entry = Some(self.column());
                        self.i += 1;
                    }
                    b':' if self.ends_indicator(false) => self.i += 1,
                    b'[' | b'{' => {
                        self.flow()?;
                        node_start = false;
                    }
                    b'\'' | b'"' => {
                        entry.get_or_insert(self.column());
                        self.skip_quoted();
                        node_start = false;
                    }
                    b'|' | b'>' => {
                        let parent = entry.map_or(indent as isize - 1, |c| c as isize);
                        self.skip_to_eol();
                        self.skip_block_scalar(parent);
                        break;
                    }
                    b'&' | b'!' => self.skip_property(),
                    b'*' => {
                        self.skip_property();
                        node_start = false;
                    }
                    _ => {
                        let parent = entry.map_or(indent as isize - 1, |c| c as isize);
                        entry.get_or_insert(self.column());
                        if self.skip_plain_block() {
                            // Ended by `: `: a value follows.
                            node_start = true;
                        } else {
                            plain_parent = Some(parent);
                            break;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Skips a plain scalar in block context to `: ` (true) or the end of the line or a
    /// comment (false). Brackets and quotes inside it are text.
    fn skip_plain_block(&mut self) -> bool {
        while let Some(b) = self.peek(0) {
            if is_break(b) {
                return false;
            }
            if b == b':' && self.ends_indicator(false) {
                self.i += 1;
                return true;
            }
            if is_ws(b) && self.peek(1) == Some(b'#') {
                self.skip_to_eol();
                return false;
            }
            self.i += 1;
        }
        false
    }

    /// Skips the lines of a block scalar: blank ones and those indented past `parent`.
    fn skip_block_scalar(&mut self, parent: isize) {
        loop {
            // At a line break (or the end).
            let Some(b) = self.peek(0) else {
                return;
            };
            let mark = (self.i, self.line, self.line_start);
            if is_break(b) {
                self.bump();
            }
            let mut indent = 0isize;
            while self.peek(0) == Some(b' ') {
                self.i += 1;
                indent += 1;
            }
            match self.peek(0) {
                None => return,
                Some(b) if is_break(b) => continue,
                _ if indent > parent && !(indent == 0 && self.at_document_marker()) => {
                    self.skip_to_eol();
                }
                _ => {
                    // Not part of the scalar: the line is read again as structure.
                    (self.i, self.line, self.line_start) = mark;
                    if self.peek(0).is_some_and(is_break) {
                        self.bump();
                    }
                    return;
                }
            }
        }
    }

    /// Counts the flow collection starting at the current bracket, to its end.
    fn flow(&mut self) -> Result<(), NestingError> {
        let mut depth = 0usize;
        // Whether a quote here would start a quoted scalar (after an indicator, an anchor or
        // a tag), rather than sit inside a plain one.
        let mut token_start = true;
        while let Some(b) = self.peek(0) {
            if is_ws(b) || is_break(b) {
                self.bump();
                continue;
            }
            if self.column() == 0 && self.at_document_marker() {
                return Ok(());
            }
            match b {
                b'#' => self.skip_to_eol(),
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_FLOW_DEPTH {
                        return Err(NestingError {
                            line: self.line,
                            column: self.column() + 1,
                        });
                    }
                    self.i += 1;
                    token_start = true;
                }
                b']' | b'}' => {
                    self.i += 1;
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(());
                    }
                    token_start = false;
                }
                b',' => {
                    self.i += 1;
                    token_start = true;
                }
                b'?' | b':' if self.ends_indicator(true) || (b == b':' && !token_start) => {
                    self.i += 1;
                    token_start = true;
                }
                b'&' | b'!' => {
                    self.skip_property();
                    token_start = true;
                }
                b'*' => {
                    self.skip_property();
                    token_start = false;
                }
                b'\'' | b'"' if token_start => {
                    self.skip_quoted();
                    token_start = false;
                }
                _ => {
                    // A plain scalar: to a flow indicator, `: `, or a comment.
                    while let Some(c) = self.peek(0) {
                        if is_flow_indicator(c)
                            || (c == b':' && self.ends_indicator(true))
                            || is_break(c)
                            || (is_ws(c) && self.peek(1) == Some(b'#'))
                        {
                            break;
                        }
                        self.i += 1;
                    }
                    token_start = false;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(n: usize) -> String {
        format!("{}{}", "[".repeat(n), "]".repeat(n))
    }

    #[test]
    fn deep_flows_are_refused_where_they_pass_the_limit() {
        let e = check_nesting(&deep(100_000)).unwrap_err();
        assert_eq!((e.line, e.column), (1, MAX_FLOW_DEPTH + 1));
        let e = check_nesting(&format!("a:\n  b: {}", "{x: ".repeat(200))).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(check_nesting(&"[\n".repeat(200)).is_err());
        assert!(check_nesting(&format!("- &a !t {}", "[ ".repeat(129))).is_err());
        check_nesting(&deep(MAX_FLOW_DEPTH)).unwrap();
        // Many collections, none deep.
        check_nesting(&format!("- {}\n", deep(100)).repeat(50)).unwrap();
    }

    #[test]
    fn brackets_that_are_text_are_not_counted() {
        let many = "[".repeat(500);
        for text in [
            format!("a: '{many}'\n"),
            format!("a: \"{many}\"\n"),
            format!("a: \"\\\"{many}\"\n"),
            format!("a: 'it''s {many}'\n"),
            format!("# {many}\na: 1\n"),
            format!("a: b # {many}\n"),
            format!("a: text {many}\n"),
            format!("a: |\n  {many}\n  more\nb: 1\n"),
            format!("- - >-\n     {many}\n"),
            format!("a: plain\n  continued {many}\n"),
            format!("a: plain\n  {many}\n"),
            format!("a: plain\n  '{many}\n"),
            format!("a: [x, 'q{many}', \"{many}\"]\n"),
            format!("--- |\n{many}\n"),
            format!("key:\n  |\n  {many}\n"),
            format!("a: {{k: v}} # {many}\n"),
        ] {
            assert_eq!(check_nesting(&text), Ok(()), "{text:.80}");
        }
    }

    /// Random texts of YAML's indicators, deep enough to be scanned: whatever the check
    /// refuses, the reader refuses too (a valid document is never refused for its brackets).
    #[test]
    fn nothing_the_reader_accepts_is_refused() {
        const PIECES: [&str; 24] = [
            "[", "[", "[", "{", "{", "]", "}", "'", "\"", "# ", "|\n", ">-\n", "- ", ": ", "\n",
            "\n  ", "\n    ", "a", "b c", ",", "&x ", "*x", "? ", "\\",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut refused = 0;
        for _ in 0..3000 {
            let mut text = String::new();
            // A prefix deep enough that the check scans the whole text.
            for _ in 0..(next() % 140) {
                text.push('[');
            }
            for _ in 0..(next() % 400) {
                text.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            if check_nesting(&text).is_err() {
                refused += 1;
                let accepted = yaml_serde::Deserializer::from_str(&text).all(|doc| {
                    crate::yaml::read_value(doc, text.len(), crate::yaml::Duplicates::LastWins)
                        .is_ok()
                });
                assert!(!accepted, "refused, but the reader accepts: {text:?}");
            }
        }
        assert!(refused > 100, "only {refused} texts were refused");
    }

    #[test]
    fn what_the_parser_reads_as_structure_is_counted() {
        let open = "[".repeat(200);
        for text in [
            // A line at the block scalar's parent indentation ends it.
            format!("a: |\n  text\nb: {open}\n"),
            format!("- - |\n    text\n  - {open}\n"),
            // A plain scalar's continuation must be indented past its parent.
            format!("a: x\nb: {open}\n"),
            format!("- x\n- {open}\n"),
            // Quotes inside plain flow scalars are text; brackets after them are not.
            format!("a: [it's, {open}\n"),
            format!("a: {{k: v}}\nb: {open}\n"),
            format!("---\na: 'x'\n---\n{open}\n"),
            format!("'unterminated\n---\n{open}\n"),
        ] {
            assert!(check_nesting(&text).is_err(), "{text:.80}");
        }
    }
}
