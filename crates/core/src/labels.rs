//! Label selectors in the string form Kubernetes accepts (`app=web,tier in (a,b),!legacy`).

use std::collections::BTreeSet;
use std::fmt;

/// A selector string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unable to parse requirement: {0}")]
pub struct SelectorError(pub String);

/// One requirement's operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operator {
    /// `key`
    Exists,
    /// `!key`
    DoesNotExist,
    /// `key=value` or `key==value`
    Equals,
    /// `key!=value`
    NotEquals,
    /// `key in (a,b)`
    In,
    /// `key notin (a,b)`
    NotIn,
    /// `key>3`
    GreaterThan,
    /// `key<3`
    LessThan,
}

/// One clause of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub op: Operator,
    /// The values (empty for existence tests).
    pub values: BTreeSet<String>,
}

/// A parsed label selector: all requirements must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// The requirements, all of which must match.
    pub requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Not,
    Eq,
    DoubleEq,
    NotEq,
    Open,
    Close,
    Comma,
    In,
    NotIn,
    Gt,
    Lt,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Token::Ident(s) => s.as_str(),
            Token::Not => "!",
            Token::Eq => "=",
            Token::DoubleEq => "==",
            Token::NotEq => "!=",
            Token::Open => "(",
            Token::Close => ")",
            Token::Comma => ",",
            Token::In => "in",
            Token::NotIn => "notin",
            Token::Gt => ">",
            Token::Lt => "<",
        };
        f.write_str(s)
    }
}

fn lex(input: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let chars: Vec<char> = input.chars().collect();
    let mut i = 0;
    let special = |c: char| matches!(c, '!' | '=' | '(' | ')' | ',' | '<' | '>');
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        match (c, two.as_str()) {
            (_, "==") => {
                out.push(Token::DoubleEq);
                i += 2;
            }
            (_, "!=") => {
                out.push(Token::NotEq);
                i += 2;
            }
            ('!', _) => {
                out.push(Token::Not);
                i += 1;
            }
            ('=', _) => {
                out.push(Token::Eq);
                i += 1;
            }
            ('(', _) => {
                out.push(Token::Open);
                i += 1;
            }
            (')', _) => {
                out.push(Token::Close);
                i += 1;
            }
            (',', _) => {
                out.push(Token::Comma);
                i += 1;
            }
            ('>', _) => {
                out.push(Token::Gt);
                i += 1;
            }
            ('<', _) => {
                out.push(Token::Lt);
                i += 1;
            }
            _ => {
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() && !special(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                out.push(match word.as_str() {
                    "in" => Token::In,
                    "notin" => Token::NotIn,
                    _ => Token::Ident(word),
                });
            }
        }
    }
    out
}

/// kube's message for a value that is not a DNS-1123 label (`IsDNS1123Label`).
pub const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// Whether `s` matches a DNS-1123 label's pattern (its length aside).
pub fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Checks a namespace name as kube-apiserver does (`ValidateNamespaceName`): kube's messages,
/// joined with `, ` when there are two.
pub fn validate_namespace_name(name: &str) -> Result<(), String> {
    let mut errors = Vec::new();
    if name.len() > 63 {
        errors.push("must be no more than 63 characters");
    }
    if !matches_dns1123_label(name) {
        errors.push(DNS1123_LABEL_MSG);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join(", "))
    }
}

/// Whether `key` is a valid qualified label key (`[prefix/]name`).
pub fn is_qualified_name(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix
        && (p.is_empty() || p.len() > 253 || !crate_dns1123_subdomain(p))
    {
        return false;
    }
    !name.is_empty() && name.len() <= 63 && is_label_value(name)
}

fn crate_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(|part| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !part.starts_with('-')
            && !part.ends_with('-')
    })
}

/// Whether `v` is a valid label value (empty, or up to 63 alphanumerics, `-`, `_`, `.`,
/// starting and ending with an alphanumeric).
pub fn is_label_value(v: &str) -> bool {
    if v.is_empty() {
        return true;
    }
    let b = v.as_bytes();
    v.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

impl LabelSelector {
    /// Parses a selector string; the empty string selects everything.
    pub fn parse(input: &str) -> Result<LabelSelector, SelectorError> {
        let tokens = lex(input);
        let mut pos = 0;
        let mut requirements = Vec::new();
        if tokens.is_empty() {
            return Ok(LabelSelector::default());
        }
        loop {
            let req = parse_requirement(&tokens, &mut pos)?;
            requirements.push(req);
            match tokens.get(pos) {
                None => break,
                Some(Token::Comma) => {
                    pos += 1;
                    if pos >= tokens.len() {
                        return Err(SelectorError(
                            "found '', expected: identifier after ','".into(),
                        ));
                    }
                }
                Some(t) => {
                    return Err(SelectorError(format!(
                        "found '{t}', expected: ',' or 'end of string'"
                    )));
                }
            }
        }
        Ok(LabelSelector { requirements })
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Tests a label set, given as a lookup function.
    pub fn matches<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|r| r.matches(get(&r.key)))
    }
}

impl Requirement {
    /// Tests one requirement against the label's value, if the label is present.
    pub fn matches(&self, value: Option<&str>) -> bool {
        match self.op {
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::Equals | Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotEquals | Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(v) = value.and_then(|v| v.parse::<i64>().ok()) else {
                    return false;
                };
                let Some(bound) = self
                    .values
                    .iter()
                    .next()
                    .and_then(|b| b.parse::<i64>().ok())
                else {
                    return false;
                };
                if self.op == Operator::GreaterThan {
                    v > bound
                } else {
                    v < bound
                }
            }
        }
    }
}

fn parse_requirement(tokens: &[Token], pos: &mut usize) -> Result<Requirement, SelectorError> {
    let negated = tokens.get(*pos) == Some(&Token::Not);
    if negated {
        *pos += 1;
    }
    let key = match tokens.get(*pos) {
        Some(Token::Ident(k)) => k.clone(),
        Some(t) => return Err(SelectorError(format!("found '{t}', expected: identifier"))),
        None => return Err(SelectorError("found '', expected: identifier".into())),
    };
    *pos += 1;
    if !is_qualified_name(&key) {
        return Err(SelectorError(format!(
            "key: Invalid value: \"{key}\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        )));
    }
    let simple = |op| Requirement {
        key: key.clone(),
        op,
        values: BTreeSet::new(),
    };
    if negated {
        return Ok(simple(Operator::DoesNotExist));
    }
    let op = match tokens.get(*pos) {
        None | Some(Token::Comma) => return Ok(simple(Operator::Exists)),
        Some(Token::Eq) | Some(Token::DoubleEq) => Operator::Equals,
        Some(Token::NotEq) => Operator::NotEquals,
        Some(Token::In) => Operator::In,
        Some(Token::NotIn) => Operator::NotIn,
        Some(Token::Gt) => Operator::GreaterThan,
        Some(Token::Lt) => Operator::LessThan,
        Some(t) => {
            return Err(SelectorError(format!(
                "found '{t}', expected: in, notin, =, ==, !=, gt, lt"
            )));
        }
    };
    *pos += 1;
    let mut values = BTreeSet::new();
    match op {
        Operator::In | Operator::NotIn => {
            if tokens.get(*pos) != Some(&Token::Open) {
                let found = tokens.get(*pos).map(|t| t.to_string()).unwrap_or_default();
                return Err(SelectorError(format!("found '{found}', expected: '('")));
            }
            *pos += 1;
            loop {
                match tokens.get(*pos) {
                    Some(Token::Ident(v)) => {
                        values.insert(v.clone());
                        *pos += 1;
                    }
                    Some(Token::Comma) | Some(Token::Close) => {
                        values.insert(String::new());
                    }
                    _ => {
                        let found = tokens.get(*pos).map(|t| t.to_string()).unwrap_or_default();
                        return Err(SelectorError(format!(
                            "found '{found}', expected: ',', ')' or identifier"
                        )));
                    }
                }
                match tokens.get(*pos) {
                    Some(Token::Comma) => *pos += 1,
                    Some(Token::Close) => {
                        *pos += 1;
                        break;
                    }
                    _ => {
                        let found = tokens.get(*pos).map(|t| t.to_string()).unwrap_or_default();
                        return Err(SelectorError(format!(
                            "found '{found}', expected: ',' or ')'"
                        )));
                    }
                }
            }
        }
        _ => match tokens.get(*pos) {
            Some(Token::Ident(v)) => {
                values.insert(v.clone());
                *pos += 1;
            }
            None | Some(Token::Comma) if matches!(op, Operator::Equals | Operator::NotEquals) => {
                values.insert(String::new());
            }
            other => {
                let found = other.map(|t| t.to_string()).unwrap_or_default();
                return Err(SelectorError(format!(
                    "found '{found}', expected: identifier"
                )));
            }
        },
    }
    for v in &values {
        if matches!(op, Operator::GreaterThan | Operator::LessThan) {
            if v.parse::<i64>().is_err() {
                return Err(SelectorError(format!(
                    "for 'Gt', 'Lt' operators, the value must be an integer: {v}"
                )));
            }
        } else if !is_label_value(v) {
            return Err(SelectorError(format!(
                "values[0][{key}]: Invalid value: \"{v}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
            )));
        }
    }
    Ok(Requirement { key, op, values })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn sel_matches(sel: &str, labels: &[(&str, &str)]) -> bool {
        let map: BTreeMap<&str, &str> = labels.iter().copied().collect();
        LabelSelector::parse(sel)
            .expect("selector parses")
            .matches(|k| map.get(k).copied())
    }

    #[test]
    fn equality_and_sets() {
        let l = [("app", "web"), ("tier", "front"), ("n", "5")];
        assert!(sel_matches("", &l));
        assert!(sel_matches("app=web", &l));
        assert!(sel_matches("app==web,tier", &l));
        assert!(!sel_matches("app!=web", &l));
        assert!(sel_matches("missing!=x", &l));
        assert!(sel_matches("tier in (front, back)", &l));
        assert!(!sel_matches("tier notin (front)", &l));
        assert!(sel_matches("other notin (front)", &l));
        assert!(sel_matches("!legacy", &l));
        assert!(!sel_matches("!app", &l));
        assert!(sel_matches("n>4,n<6", &l));
        assert!(!sel_matches("n>5", &l));
        assert!(sel_matches("example.com/x notin (a)", &l));
        assert!(sel_matches("app in (web,)", &l));
    }

    #[test]
    fn rejects_malformed_selectors() {
        for bad in [
            "app in web",
            "app=",
            "=x",
            "app=a b",
            "app in (a",
            "n>x",
            "app=web,",
            "-bad=x",
        ] {
            let res = LabelSelector::parse(bad);
            if bad == "app=" {
                // An empty value is valid: it selects labels whose value is "".
                assert!(res.is_ok(), "{bad}");
                continue;
            }
            assert!(res.is_err(), "{bad} should not parse");
        }
    }
}
