//! Flux's variable substitution language (its envsubst, a fork of drone's): `${var}` with
//! bash-like operators, evaluated the way Flux evaluates them, which is not always bash's.
//!
//! Only `${…}` expands; `$var` stays text; `$$` is a literal `$` (so `$${var}` gives `${var}`).
//! Operators: `${#v}` (length in bytes), `${v^}`, `${v^^}`, `${v,}`, `${v,,}`,
//! `${v:pos[:len]}` (bytes; a negative position counts from the end), `${v#glob}`,
//! `${v##glob}`, `${v%glob}`, `${v%%glob}`, `${v/old/new}`, `${v//old/new}`, `${v/#old/new}`,
//! `${v/%old/new}`, and the defaults `${v=d}`, `${v:=d}`, `${v:-d}`, `${v:?d}`, `${v:+d}`, all
//! of which use `d` when the value is empty. `${v-d}` and `${v+d}` are syntax errors, as in
//! Flux. In strict mode an undefined variable is an error unless a default operator covers it.
//!
//! The grammar is in [`parse`]; the rules were checked against Flux's own test tables and a
//! corpus of inputs evaluated by Flux's Go package (`tests/envsubst.rs`).

mod glob;
pub mod parse;

pub use parse::{Node, parse};

/// Why a string could not be expanded (Flux's messages).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvsubstError {
    /// Malformed operator.
    #[error("bad substitution")]
    BadSubstitution,
    /// `${name` followed by something that is no operator.
    #[error("missing closing brace")]
    MissingClosingBrace,
    /// `${}` or a name that does not start right.
    #[error("unable to parse variable name")]
    VariableName,
    /// An operator whose argument is missing.
    #[error("unable to parse substitution within function")]
    FuncSubstitution,
    /// An undefined variable in strict mode.
    #[error("variable not set (strict mode): \"{0}\"")]
    NotSet(String),
}

/// Expands `input`. `lookup` gives a variable's value, `None` when it is not defined; in
/// `strict` mode an undefined variable is an error unless a default operator applies, otherwise
/// it expands to nothing. A parse error leaves nothing expanded.
pub fn expand(
    input: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    strict: bool,
) -> Result<String, EnvsubstError> {
    let nodes = parse(input)?;
    let mut out = String::with_capacity(input.len());
    for node in &nodes {
        eval(node, lookup, strict, &mut out)?;
    }
    Ok(out)
}

/// The operators that supply their own value for an undefined variable.
fn is_default(op: &str) -> bool {
    matches!(op, "-" | "+" | "=" | "?" | ":-" | ":+" | ":=" | ":?")
}

fn eval(
    node: &Node,
    lookup: &dyn Fn(&str) -> Option<String>,
    strict: bool,
    out: &mut String,
) -> Result<(), EnvsubstError> {
    let (param, op, args) = match node {
        Node::Text(t) => {
            out.push_str(t);
            return Ok(());
        }
        Node::Func { param, op, args } => (param, op.as_str(), args),
    };
    let mut values = Vec::with_capacity(args.len());
    for arg in args {
        let mut s = String::new();
        eval(arg, lookup, strict, &mut s)?;
        values.push(s);
    }
    let value = match lookup(param) {
        Some(v) => v,
        None if strict && !is_default(op) => return Err(EnvsubstError::NotSet(param.clone())),
        None => String::new(),
    };
    out.push_str(&apply(op, value, &values));
    Ok(())
}

/// The function an operator stands for, applied to the value and the evaluated arguments.
fn apply(op: &str, v: String, args: &[String]) -> String {
    match (op, args) {
        (",", _) => map_first(v, lower),
        (",,", _) => v.chars().map(lower).collect(),
        ("^", _) => map_first(v, upper),
        ("^^", _) => v.chars().map(upper).collect(),
        ("#", []) => v.len().to_string(),
        ("#", [p, ..]) => trim_prefix(&v, p, false),
        ("##", [p, ..]) => trim_prefix(&v, p, true),
        ("%", [p, ..]) => trim_suffix(&v, p, false),
        ("%%", [p, ..]) => trim_suffix(&v, p, true),
        (":", [pos, rest @ ..]) => substring(&v, pos, rest.first()),
        ("/", [old]) => v.replacen(old.as_str(), "", 1),
        ("/", [old, new, ..]) => v.replacen(old.as_str(), new, 1),
        ("//", [old]) => v.replace(old.as_str(), ""),
        ("//", [old, new, ..]) => v.replace(old.as_str(), new),
        ("/#", [old, new]) => match v.strip_prefix(old.as_str()) {
            Some(rest) => format!("{new}{rest}"),
            None => v,
        },
        ("/%", [old, new]) => match v.strip_suffix(old.as_str()) {
            Some(rest) => format!("{rest}{new}"),
            None => v,
        },
        // Without a replacement the anchored forms leave the value alone.
        ("/#" | "/%", _) => v,
        // Plain references, the defaults and unknown operators: the value, or when it is
        // empty the arguments joined.
        _ if v.is_empty() && !args.is_empty() => args.concat(),
        _ => v,
    }
}

/// Go's `unicode.ToLower` (simple case mapping: one character for one).
fn lower(c: char) -> char {
    let mut m = c.to_lowercase();
    match (m.next(), m.next()) {
        (Some(l), None) => l,
        // Only U+0130 lowercases to two characters; its simple mapping is the first.
        (Some(l), Some(_)) if c == '\u{130}' => l,
        _ => c,
    }
}

/// Go's `unicode.ToUpper` (simple case mapping; `ß` stays `ß`).
fn upper(c: char) -> char {
    let mut m = c.to_uppercase();
    match (m.next(), m.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

fn map_first(v: String, f: fn(char) -> char) -> String {
    let mut chars = v.chars();
    match chars.next() {
        Some(first) => std::iter::once(f(first)).chain(chars).collect(),
        None => v,
    }
}

/// `${v:pos[:len]}` on bytes, as Flux: a position that is not a number leaves the value as it
/// is; a negative one counts from the end.
fn substring(v: &str, pos: &str, len: Option<&String>) -> String {
    let bytes = v.as_bytes();
    let n = bytes.len() as i64;
    let Ok(p) = pos.parse::<i64>() else {
        return v.to_string();
    };
    let start = if p < 0 { (n + p).max(0) } else { p };
    // The length is read before the position is checked against the value.
    let end = match len.map(|l| l.parse::<i64>()) {
        None => n,
        Some(Err(_)) => return v.to_string(),
        Some(Ok(l)) if start.saturating_add(l) >= n => n,
        // Flux panics on a negative length; nothing is the closest safe answer.
        Some(Ok(l)) if l < 0 => return String::new(),
        Some(Ok(l)) => start + l,
    };
    if start >= n {
        return String::new();
    }
    glob::lossy(&bytes[start as usize..end as usize])
}

/// Removes the shortest (or longest) non-empty prefix matching `pattern`. A malformed pattern
/// leaves the value as it is.
fn trim_prefix(v: &str, pattern: &str, longest: bool) -> String {
    glob::lossy(&trim_bytes(v.as_bytes(), pattern.as_bytes(), longest))
}

/// The suffix forms, as Flux does them: reverse the value and the pattern (by character), trim
/// a prefix, reverse back.
fn trim_suffix(v: &str, pattern: &str, longest: bool) -> String {
    let rv: String = v.chars().rev().collect();
    let rp: String = pattern.chars().rev().collect();
    let trimmed = glob::lossy(&trim_bytes(rv.as_bytes(), rp.as_bytes(), longest));
    trimmed.chars().rev().collect()
}

fn trim_bytes(s: &[u8], pattern: &[u8], longest: bool) -> Vec<u8> {
    let mut found = None;
    for end in (1..=s.len()).rev() {
        match glob::matches(pattern, &s[..end]) {
            Err(_) => return s.to_vec(),
            Ok(true) => {
                found = Some(end);
                if longest {
                    break;
                }
            }
            Ok(false) => {}
        }
    }
    match found {
        Some(end) => s[end..].to_vec(),
        None => s.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &str, vars: &[(&str, &str)], strict: bool) -> Result<String, EnvsubstError> {
        let lookup = |k: &str| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        };
        expand(input, &lookup, strict)
    }

    #[test]
    fn flux_quirks() {
        // Not bash: `-` is no operator, `:+` is a default, `#*` trims a non-empty prefix.
        assert_eq!(
            run("${a-x}", &[], false),
            Err(EnvsubstError::MissingClosingBrace)
        );
        assert_eq!(run("${a:+x}", &[], false).as_deref(), Ok("x"));
        assert_eq!(run("${a#*}", &[("a", "abc")], false).as_deref(), Ok("bc"));
        assert_eq!(
            run("${a#}", &[], false),
            Err(EnvsubstError::FuncSubstitution)
        );
        assert_eq!(run("${#a", &[], false), Err(EnvsubstError::BadSubstitution));
        assert_eq!(
            run("${a^^}", &[("a", "straße")], false).as_deref(),
            Ok("STRAßE")
        );
    }

    #[test]
    fn strict_names_the_variable() {
        assert_eq!(
            run("${missing}", &[], true).unwrap_err().to_string(),
            "variable not set (strict mode): \"missing\""
        );
        assert_eq!(run("${missing}", &[], false).as_deref(), Ok(""));
    }
}
