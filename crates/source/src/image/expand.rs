//! Go's `regexp.Expand` template language, which `filterTags.extract` is written in: `$1`,
//! `${1}`, `$name`, `${name}` and `$$`. A name is the longest run of letters, digits and `_`
//! (`$1x` is the group named `1x`); a number with a leading zero is a name (`$01`); an
//! unknown or unmatched group expands to nothing; a `$` that starts no name is kept as is.

use regex::Captures;

/// Expands `template` against `caps` as Go's `Regexp.ExpandString` does.
pub fn expand(template: &str, caps: &Captures<'_>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("$$") {
            out.push('$');
            rest = after;
            continue;
        }
        match name(rest) {
            Some((n, len)) => {
                out.push_str(group(caps, n));
                rest = &rest[len..];
            }
            None => {
                out.push('$');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_name_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The name after the `$` that starts `s`, and how many bytes `$name` or `${name}` takes.
fn name(s: &str) -> Option<(&str, usize)> {
    let body = &s[1..];
    if let Some(braced) = body.strip_prefix('{') {
        let end = braced.find('}')?;
        let n = &braced[..end];
        return (!n.is_empty() && n.chars().all(is_name_char)).then_some((n, end + 3));
    }
    let end = body
        .char_indices()
        .find(|(_, c)| !is_name_char(*c))
        .map_or(body.len(), |(i, _)| i);
    (end > 0).then(|| (&body[..end], end + 1))
}

/// The text of group `n`: an index when `n` is a decimal number without a leading zero
/// (below 10⁸, as Go caps it), else a name.
fn group<'h>(caps: &Captures<'h>, n: &str) -> &'h str {
    let numeric =
        n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0')) && n.len() <= 8;
    let m = if numeric {
        n.parse::<usize>().ok().and_then(|i| caps.get(i))
    } else {
        caps.name(n)
    };
    m.map_or("", |m| m.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(pattern: &str, text: &str, template: &str) -> String {
        let re = regex::Regex::new(pattern).unwrap();
        expand(template, &re.captures(text).unwrap())
    }

    #[test]
    fn go_expand_rules() {
        assert_eq!(x(r"ver(\d+)", "ver12", "$1"), "12");
        assert_eq!(x(r"ver(\d+)", "ver12", "${1}x"), "12x");
        assert_eq!(x(r"ver(\d+)", "ver12", "$1x"), "", "the group named 1x");
        assert_eq!(x(r"(?P<num>\d+)", "rc-7", "n=$num"), "n=7");
        assert_eq!(x(r"(?P<num>\d+)", "rc-7", "${num}"), "7");
        assert_eq!(x(r"(\d)", "5", "$$1"), "$1");
        assert_eq!(x(r"(\d)", "5", "$01"), "", "a name, not group 1");
        assert_eq!(x(r"(\d)", "5", "$9"), "", "no such group");
        assert_eq!(x(r"(\d)", "5", "a$-b"), "a$-b", "a lone $ is kept");
        assert_eq!(x(r"(\d)", "5", "${1"), "${1", "unclosed");
        assert_eq!(x(r"(\d)", "5", "end$"), "end$");
        assert_eq!(x(r"(a)|(b)", "b", "[$1][$2]"), "[][b]");
        assert_eq!(x(r"(\d)", "5", "$0"), "5");
    }
}
