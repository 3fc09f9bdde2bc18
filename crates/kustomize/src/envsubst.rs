//! Flux's variable substitution language (its envsubst): `${var}` with bash-like operators.
//!
//! Only `${…}` expands; `$var` stays text; `$$` is a literal `$` (so `$${var}` gives `${var}`).
//! Operators: `${#v}`, `${v^}`, `${v^^}`, `${v,}`, `${v,,}`, `${v:pos[:len]}`, `${v#glob}`,
//! `${v##glob}`, `${v%glob}`, `${v%%glob}`, `${v/old/new}`, `${v//old/new}`, `${v/#old/new}`,
//! `${v/%old/new}`, and the defaults `${v-d}`, `${v=d}`, `${v:-d}`, `${v:=d}` (all four use `d`
//! when the value is empty; Flux also evaluates `:?` and `:+` that way). In strict mode an
//! undefined variable is an error unless a default operator covers it.

/// Why a string could not be expanded (Flux's messages).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvsubstError {
    /// Malformed operator.
    #[error("bad substitution")]
    BadSubstitution,
    /// `${` without its `}`.
    #[error("missing closing brace")]
    MissingClosingBrace,
    /// `${}` or a name that does not start right.
    #[error("unable to parse variable name")]
    VariableName,
    /// An undefined variable in strict mode.
    #[error("variable not set (strict mode): \"{0}\"")]
    NotSet(String),
}

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Expand {
        name: String,
        op: &'static str,
        args: Vec<Vec<Node>>,
    },
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

const DEFAULT_OPS: &[&str] = &["-", "=", ":-", ":=", ":?", ":+"];

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    /// Top level: text, `$$`, and expansions.
    fn top(&mut self) -> Result<Vec<Node>, EnvsubstError> {
        let mut out = Vec::new();
        let mut text = String::new();
        while let Some(c) = self.peek() {
            if c == '$' && self.peek_at(1) == Some('$') {
                text.push('$');
                self.pos += 2;
            } else if c == '$' && self.peek_at(1) == Some('{') {
                if !text.is_empty() {
                    out.push(Node::Text(std::mem::take(&mut text)));
                }
                self.pos += 2;
                out.push(self.expansion()?);
            } else {
                text.push(c);
                self.pos += 1;
            }
        }
        if !text.is_empty() {
            out.push(Node::Text(text));
        }
        Ok(out)
    }

    /// After `${`: the name, an operator and its arguments, then `}`.
    fn expansion(&mut self) -> Result<Node, EnvsubstError> {
        if self.peek() == Some('#') {
            self.pos += 1;
            let name = self.ident();
            if name.is_empty() {
                return Err(EnvsubstError::BadSubstitution);
            }
            self.close()?;
            return Ok(Node::Expand {
                name,
                op: "#len",
                args: Vec::new(),
            });
        }
        let name = self.ident();
        if name.is_empty() {
            return Err(EnvsubstError::VariableName);
        }
        let Some(c) = self.peek() else {
            return Err(EnvsubstError::MissingClosingBrace);
        };
        let two = |p: &mut Self, single: &'static str, double: &'static str| {
            p.pos += 1;
            if p.peek() == Some(c) {
                p.pos += 1;
                double
            } else {
                single
            }
        };
        match c {
            '}' => {
                self.pos += 1;
                Ok(Node::Expand {
                    name,
                    op: "",
                    args: Vec::new(),
                })
            }
            '^' | ',' => {
                let op = if c == '^' {
                    two(self, "^", "^^")
                } else {
                    two(self, ",", ",,")
                };
                self.close().map_err(|_| EnvsubstError::BadSubstitution)?;
                Ok(Node::Expand {
                    name,
                    op,
                    args: Vec::new(),
                })
            }
            '#' | '%' => {
                let op = if c == '#' {
                    two(self, "#", "##")
                } else {
                    two(self, "%", "%%")
                };
                let mut raw = String::new();
                loop {
                    match self.peek() {
                        None => return Err(EnvsubstError::MissingClosingBrace),
                        Some('}') => break,
                        Some(ch) => {
                            raw.push(ch);
                            self.pos += 1;
                        }
                    }
                }
                self.pos += 1;
                Ok(Node::Expand {
                    name,
                    op,
                    args: vec![vec![Node::Text(raw)]],
                })
            }
            '/' => {
                self.pos += 1;
                let op = match self.peek() {
                    Some('/') => {
                        self.pos += 1;
                        "//"
                    }
                    Some('#') => {
                        self.pos += 1;
                        "/#"
                    }
                    Some('%') => {
                        self.pos += 1;
                        "/%"
                    }
                    _ => "/",
                };
                let pattern = self.args_until(&['/'])?;
                if self.peek() != Some('/') {
                    return Err(EnvsubstError::BadSubstitution);
                }
                self.pos += 1;
                let replacement = self.args_until(&['}'])?;
                self.close()?;
                Ok(Node::Expand {
                    name,
                    op,
                    args: vec![pattern, replacement],
                })
            }
            ':' => {
                self.pos += 1;
                let op = match self.peek() {
                    Some('-') => ":-",
                    Some('=') => ":=",
                    Some('?') => ":?",
                    Some('+') => ":+",
                    _ => ":",
                };
                if op != ":" {
                    self.pos += 1;
                    let arg = self.args_until(&['}'])?;
                    self.close()?;
                    return Ok(Node::Expand {
                        name,
                        op,
                        args: vec![arg],
                    });
                }
                let mut args = vec![self.args_until(&[':', '}'])?];
                if self.peek() == Some(':') {
                    self.pos += 1;
                    args.push(self.args_until(&['}'])?);
                }
                self.close()?;
                Ok(Node::Expand { name, op, args })
            }
            '-' | '=' => {
                self.pos += 1;
                let op = if c == '-' { "-" } else { "=" };
                let arg = self.args_until(&['}'])?;
                self.close()?;
                Ok(Node::Expand {
                    name,
                    op,
                    args: vec![arg],
                })
            }
            _ => Err(EnvsubstError::MissingClosingBrace),
        }
    }

    fn close(&mut self) -> Result<(), EnvsubstError> {
        if self.peek() == Some('}') {
            self.pos += 1;
            Ok(())
        } else {
            Err(EnvsubstError::MissingClosingBrace)
        }
    }

    fn ident(&mut self) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek() {
            if c.is_alphanumeric() || c == '_' {
                s.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        s
    }

    /// An argument: text (with `\/` and `\\` escapes) and nested expansions, up to one of
    /// `stops` (not consumed).
    fn args_until(&mut self, stops: &[char]) -> Result<Vec<Node>, EnvsubstError> {
        let mut out = Vec::new();
        let mut text = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(EnvsubstError::MissingClosingBrace);
            };
            if stops.contains(&c) {
                break;
            }
            if c == '\\' && matches!(self.peek_at(1), Some('/') | Some('\\')) {
                text.push(self.peek_at(1).unwrap_or('\\'));
                self.pos += 2;
            } else if c == '$' && self.peek_at(1) == Some('{') {
                if !text.is_empty() {
                    out.push(Node::Text(std::mem::take(&mut text)));
                }
                self.pos += 2;
                out.push(self.expansion()?);
            } else {
                text.push(c);
                self.pos += 1;
            }
        }
        if !text.is_empty() {
            out.push(Node::Text(text));
        }
        Ok(out)
    }
}

/// Expands `input`. `lookup` gives a variable's value, `None` when it is not defined; in
/// `strict` mode an undefined variable is an error unless a default operator applies, otherwise
/// it expands to nothing. A parse error leaves nothing expanded.
pub fn expand(
    input: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    strict: bool,
) -> Result<String, EnvsubstError> {
    let mut parser = Parser {
        chars: input.chars().collect(),
        pos: 0,
    };
    let nodes = parser.top()?;
    let mut out = String::with_capacity(input.len());
    eval_all(&nodes, lookup, strict, &mut out)?;
    Ok(out)
}

fn eval_all(
    nodes: &[Node],
    lookup: &dyn Fn(&str) -> Option<String>,
    strict: bool,
    out: &mut String,
) -> Result<(), EnvsubstError> {
    for n in nodes {
        match n {
            Node::Text(t) => out.push_str(t),
            Node::Expand { name, op, args } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    let mut s = String::new();
                    eval_all(a, lookup, strict, &mut s)?;
                    values.push(s);
                }
                let value = match lookup(name) {
                    Some(v) => v,
                    None if strict && !DEFAULT_OPS.contains(op) => {
                        return Err(EnvsubstError::NotSet(name.clone()));
                    }
                    None => String::new(),
                };
                out.push_str(&apply(op, value, &values));
            }
        }
    }
    Ok(())
}

fn apply(op: &str, v: String, args: &[String]) -> String {
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
    match op {
        "" => v,
        "#len" => v.len().to_string(),
        "^^" => v.to_uppercase(),
        ",," => v.to_lowercase(),
        "^" | "," => {
            let mut chars = v.chars();
            match chars.next() {
                Some(f) if op == "^" => f.to_uppercase().chain(chars).collect(),
                Some(f) => f.to_lowercase().chain(chars).collect(),
                None => v,
            }
        }
        "-" | "=" | ":-" | ":=" | ":?" | ":+" => {
            if v.is_empty() {
                args.concat()
            } else {
                v
            }
        }
        ":" => substring(&v, arg(0), args.get(1).map(String::as_str)),
        "#" | "##" => {
            let longest = op == "##";
            match matching_prefix(&v, arg(0), longest) {
                Some(n) => v[n..].to_string(),
                None => v,
            }
        }
        "%" | "%%" => {
            let longest = op == "%%";
            match matching_suffix(&v, arg(0), longest) {
                Some(n) => v[..n].to_string(),
                None => v,
            }
        }
        "/" => v.replacen(arg(0), arg(1), 1),
        "//" => {
            if arg(0).is_empty() {
                v
            } else {
                v.replace(arg(0), arg(1))
            }
        }
        "/#" => match v.strip_prefix(arg(0)) {
            Some(rest) if args.len() == 2 => format!("{}{rest}", arg(1)),
            _ => v,
        },
        "/%" => match v.strip_suffix(arg(0)) {
            Some(rest) if args.len() == 2 => format!("{rest}{}", arg(1)),
            _ => v,
        },
        _ => v,
    }
}

/// `${v:pos:len}` on bytes, as Flux: negative positions count from the end; bad numbers leave
/// the value as it is.
fn substring(v: &str, pos: &str, len: Option<&str>) -> String {
    let Ok(p) = pos.trim().parse::<i64>() else {
        return v.to_string();
    };
    let n = v.len() as i64;
    let start = if p < 0 { (n + p).max(0) } else { p };
    if start >= n {
        return String::new();
    }
    let end = match len {
        None => n,
        Some(l) => match l.trim().parse::<i64>() {
            Ok(l) if start + l < n => start + l.max(0),
            Ok(_) => n,
            Err(_) => return v.to_string(),
        },
    };
    v.get(start as usize..end as usize).unwrap_or(v).to_string()
}

fn boundaries(v: &str) -> impl Iterator<Item = usize> + '_ {
    (0..=v.len()).filter(move |i| v.is_char_boundary(*i))
}

fn matching_prefix(v: &str, pattern: &str, longest: bool) -> Option<usize> {
    let mut found = None;
    for i in boundaries(v) {
        if glob(pattern, &v[..i]) {
            if !longest {
                return Some(i);
            }
            found = Some(i);
        }
    }
    found
}

fn matching_suffix(v: &str, pattern: &str, longest: bool) -> Option<usize> {
    let mut found = None;
    for i in boundaries(v).collect::<Vec<_>>().into_iter().rev() {
        if glob(pattern, &v[i..]) {
            if !longest {
                return Some(i);
            }
            found = Some(i);
        }
    }
    found
}

/// Shell glob: `*` any run of characters, `?` one character, `[...]` a class (`!`/`^` negate).
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // dp[j]: pattern[..i] matches text[..j]
    let mut dp = vec![false; t.len() + 1];
    dp[0] = true;
    let mut i = 0;
    while i < p.len() {
        let mut next = vec![false; t.len() + 1];
        match p[i] {
            '*' => {
                let mut any = false;
                for j in 0..=t.len() {
                    any |= dp[j];
                    next[j] = any;
                }
                i += 1;
            }
            '[' => {
                let close = p[i + 1..].iter().position(|c| *c == ']').map(|k| i + 1 + k);
                match close {
                    Some(end) if end > i + 1 => {
                        let class = &p[i + 1..end];
                        let (negate, class) = match class.first() {
                            Some('!') | Some('^') => (true, &class[1..]),
                            _ => (false, class),
                        };
                        for j in 0..t.len() {
                            if dp[j] && in_class(class, t[j]) != negate {
                                next[j + 1] = true;
                            }
                        }
                        i = end + 1;
                    }
                    _ => {
                        for j in 0..t.len() {
                            if dp[j] && t[j] == '[' {
                                next[j + 1] = true;
                            }
                        }
                        i += 1;
                    }
                }
            }
            c => {
                for j in 0..t.len() {
                    if dp[j] && (c == '?' || t[j] == c) {
                        next[j + 1] = true;
                    }
                }
                i += 1;
            }
        }
        dp = next;
    }
    dp[t.len()]
}

fn in_class(class: &[char], c: char) -> bool {
    let mut k = 0;
    while k < class.len() {
        if k + 2 < class.len() && class[k + 1] == '-' {
            if class[k] <= c && c <= class[k + 2] {
                return true;
            }
            k += 3;
        } else {
            if class[k] == c {
                return true;
            }
            k += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn run(input: &str, vars: &[(&str, &str)], strict: bool) -> Result<String, EnvsubstError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        expand(input, &|k| map.get(k).cloned(), strict)
    }

    /// Flux's TestExpand table (fluxcd/pkg envsubst), every row.
    #[test]
    fn flux_expand_table() {
        let a = "abcdEFGH28ij";
        let z = "abcABC123ABCabc";
        type Row<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);
        let rows: Vec<Row> = vec![
            ("abcdEFGH28ij", vec![], "abcdEFGH28ij"),
            ("${#var01}", vec![("var01", a)], "12"),
            ("${var01^}", vec![("var01", a)], "AbcdEFGH28ij"),
            ("${var01^^}", vec![("var01", a)], "ABCDEFGH28IJ"),
            ("${var01,}", vec![("var01", "ABCDEFGH28IJ")], "aBCDEFGH28IJ"),
            (
                "${var01,,}",
                vec![("var01", "ABCDEFGH28IJ")],
                "abcdefgh28ij",
            ),
            (
                "${path_name:11}",
                vec![("path_name", "/home/bozo/ideas/thoughts.for.today")],
                "ideas/thoughts.for.today",
            ),
            (
                "${path_name:11:5}",
                vec![("path_name", "/home/bozo/ideas/thoughts.for.today")],
                "ideas",
            ),
            ("${var=xyz}", vec![("var", "abc")], "abc"),
            ("${var=xyz}", vec![], "xyz"),
            (
                "something ${var=${default_var}}",
                vec![("default_var", "foo")],
                "something foo",
            ),
            (
                "foo: ${var=${default_var}-suffix}",
                vec![("default_var", "foo1")],
                "foo: foo1-suffix",
            ),
            (
                "foo: ${var=prefix${default_var}-suffix}",
                vec![("default_var", "foo1")],
                "foo: prefixfoo1-suffix",
            ),
            ("${var:=xyz}", vec![], "xyz"),
            (
                "${stringZ/%abc/XYZ}",
                vec![("stringZ", z)],
                "abcABC123ABCXYZ",
            ),
            (
                "${stringZ/#abc/XYZ}",
                vec![("stringZ", z)],
                "XYZABC123ABCabc",
            ),
            (
                "${stringZ//abc/xyz}",
                vec![("stringZ", z)],
                "xyzABC123ABCxyz",
            ),
            (
                "${stringZ/abc/xyz}",
                vec![("stringZ", z)],
                "xyzABC123ABCabc",
            ),
            (
                "${filename#*.}",
                vec![("filename", "bash.string.txt")],
                "string.txt",
            ),
            (
                "${filename#*/}",
                vec![("filename", "path/to/file")],
                "to/file",
            ),
            (
                "${filename#*/}",
                vec![("filename", "/path/to/file")],
                "path/to/file",
            ),
            (
                "${filename##*.}",
                vec![("filename", "bash.string.txt")],
                "txt",
            ),
            (
                "${filename##*/}",
                vec![("filename", "path/to/file")],
                "file",
            ),
            (
                "${filename##*/}",
                vec![("filename", "/path/to/file")],
                "file",
            ),
            (
                "${filename%.*}",
                vec![("filename", "bash.string.txt")],
                "bash.string",
            ),
            (
                "${filename%%.*}",
                vec![("filename", "bash.string.txt")],
                "bash",
            ),
            ("${var=${var01^^}}", vec![("var01", a)], "ABCDEFGH28IJ"),
            ("$${var01}", vec![("var01", a)], "${var01}"),
            (
                "some text ${var01}$${var$${var01}$var01${var01}",
                vec![("var01", a)],
                "some text abcdEFGH28ij${var${var01}$var01abcdEFGH28ij",
            ),
            (
                "something $${var=${default_var}}",
                vec![("default_var", "foo")],
                "something ${var=foo}",
            ),
            ("${stringZ/\\//-}", vec![("stringZ", "foo/bar")], "foo-bar"),
            (
                "${stringZ//\\//-}",
                vec![("stringZ", "foo/bar/baz")],
                "foo-bar-baz",
            ),
            (
                "\\\\something ${var=${default_var}}",
                vec![("default_var", "foo")],
                "\\\\something foo",
            ),
            ("${stringZ/./}", vec![("stringZ", "foo.bar")], "foobar"),
        ];
        let mut failures = Vec::new();
        for (input, vars, want) in &rows {
            match run(input, vars, false) {
                Ok(got) if got == *want => {}
                other => failures.push(format!("{input:?}: got {other:?}, want {want:?}")),
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} rows failed:\n{}",
            failures.len(),
            rows.len(),
            failures.join("\n")
        );
    }

    #[test]
    fn flux_strict_table_and_errors() {
        assert_eq!(run("${foo}", &[("foo", "bar")], true).unwrap(), "bar");
        assert_eq!(run("${foo}", &[("foo", "")], true).unwrap(), "");
        assert_eq!(
            run("${missing}", &[], true),
            Err(EnvsubstError::NotSet("missing".into()))
        );
        assert_eq!(
            run("${missing}", &[], true).unwrap_err().to_string(),
            "variable not set (strict mode): \"missing\""
        );
        for ok in [
            "${missing:=default}",
            "${missing:-fallback}",
            "${missing=assigned}",
        ] {
            assert!(run(ok, &[("foo", "bar")], true).is_ok(), "{ok}");
        }
        for op in [
            "${#missing}",
            "${missing^}",
            "${missing^^}",
            "${missing,}",
            "${missing,,}",
            "${missing:0}",
            "${missing:0:10}",
            "${missing/pattern/replacement}",
            "${missing//pattern/replacement}",
            "${missing/#pattern/replacement}",
            "${missing/%pattern/replacement}",
            "${missing#pattern}",
            "${missing##pattern}",
            "${missing%pattern}",
            "${missing%%pattern}",
        ] {
            assert!(
                matches!(run(op, &[], true), Err(EnvsubstError::NotSet(_))),
                "{op}"
            );
        }
        assert_eq!(run("${missing}", &[], false).unwrap(), "");
        assert_eq!(
            run("$var01 http://github.com }text $", &[("var01", "x")], true).unwrap(),
            "$var01 http://github.com }text $"
        );
        assert_eq!(
            run("${foo", &[], false),
            Err(EnvsubstError::MissingClosingBrace)
        );
        assert_eq!(run("${}", &[], false), Err(EnvsubstError::VariableName));
        assert_eq!(run("${ foo}", &[], false), Err(EnvsubstError::VariableName));
        assert_eq!(
            run("${foo+x}", &[], false),
            Err(EnvsubstError::MissingClosingBrace)
        );
        assert_eq!(run("${#}", &[], false), Err(EnvsubstError::BadSubstitution));
    }
}
