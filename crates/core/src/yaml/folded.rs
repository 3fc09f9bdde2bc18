//! go-yaml v3's round trip of folded block scalars.
//!
//! kustomize writes every resource out with go-yaml v3 and reads it back, keeping each
//! scalar's style. go-yaml's emitter, writing a folded (`>`) scalar, adds a blank line before
//! every more-indented line (it looks for the next line's indentation at the start of the
//! value rather than after the line break), so the value read back has one more `\n` there:
//! `exists(c,\n  c.image)` comes out of `kubectl kustomize` as `exists(c,\n\n  c.image)`.
//! This module finds the folded scalars of a text and what the round trip makes of each.

use std::collections::HashMap;

/// The folded block scalars of `text` whose value the round trip changes, by value.
pub fn round_trips(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    if !text.contains('>') {
        return out;
    }
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(chomp) = folded_indicator(line) else {
            continue;
        };
        let value = fold(&lines[i + 1..], chomp);
        let changed = round_trip(&value);
        if changed != value {
            out.insert(value, changed);
        }
    }
    out
}

/// Chomping of a line that opens a folded block scalar (`key: >`, `- >-`, `>+  # comment`).
fn folded_indicator(line: &str) -> Option<Chomp> {
    let code = match line.find(" #") {
        Some(i) => &line[..i],
        None => line,
    };
    let code = code.trim_end();
    let (head, chomp) = if let Some(h) = code.strip_suffix(">-") {
        (h, Chomp::Strip)
    } else if let Some(h) = code.strip_suffix(">+") {
        (h, Chomp::Keep)
    } else if let Some(h) = code.strip_suffix('>') {
        (h, Chomp::Clip)
    } else {
        return None;
    };
    (head.is_empty() || head.ends_with([' ', '\t'])).then_some(chomp)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chomp {
    Strip,
    Clip,
    Keep,
}

/// The value of a folded block whose content starts at `lines[0]`, as libyaml folds it.
fn fold(lines: &[&str], chomp: Chomp) -> String {
    let indent_of = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let Some(indent) = lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .map(|l| indent_of(l))
    else {
        return String::new();
    };
    if indent == 0 {
        return String::new();
    }
    let mut s = String::new();
    let mut leading_break = "";
    let mut trailing_breaks = String::new();
    let mut leading_blank = false;
    for line in lines {
        let is_empty = line.len() <= indent && line.trim().is_empty();
        if is_empty {
            trailing_breaks.push('\n');
            continue;
        }
        if indent_of(line) < indent {
            break;
        }
        let content = &line[indent..];
        let trailing_blank = content.starts_with([' ', '\t']);
        if !leading_blank && !trailing_blank && leading_break == "\n" {
            if trailing_breaks.is_empty() {
                s.push(' ');
            }
        } else {
            s.push_str(leading_break);
        }
        s.push_str(&trailing_breaks);
        trailing_breaks.clear();
        leading_blank = trailing_blank;
        s.push_str(content);
        leading_break = "\n";
    }
    if chomp != Chomp::Strip {
        s.push_str(leading_break);
    }
    if chomp == Chomp::Keep {
        s.push_str(&trailing_breaks);
    }
    s
}

/// What go-yaml v3 reads back after writing `value` as a folded scalar: one more line break
/// before each line that starts with a blank and follows a line that does not, and after the
/// last line when two or more line breaks end the value.
fn round_trip(value: &str) -> String {
    if value.starts_with([' ', '\t', '\n']) {
        return value.to_string();
    }
    let mut out = String::with_capacity(value.len() + 8);
    let mut line_starts_blank = false;
    let mut at_line_start = true;
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        if at_line_start && c != '\n' {
            line_starts_blank = c == ' ' || c == '\t';
            at_line_start = false;
        }
        if c == '\n' {
            let first_of_run = !at_line_start;
            let mut run = 1;
            while chars.peek() == Some(&'\n') {
                chars.next();
                run += 1;
            }
            let next_blank = matches!(chars.peek(), Some(' ' | '\t'));
            // At the end, kept (`+`) trailing breaks gain one too; a single one is clipped.
            let kept_end = chars.peek().is_none() && run >= 2;
            if first_of_run && !line_starts_blank && (next_blank || kept_end) {
                out.push('\n');
            }
            for _ in 0..run {
                out.push('\n');
            }
            at_line_start = true;
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_indented_lines_gain_a_blank_line_as_kubectl_kustomize_prints_them() {
        let text = "expression: >-\n  object.spec.containers.exists(c,\n    c.image.startsWith(\"x\")\n  )\nother: 1\n";
        let map = round_trips(text);
        assert_eq!(
            map.get("object.spec.containers.exists(c,\n  c.image.startsWith(\"x\")\n)"),
            Some(&"object.spec.containers.exists(c,\n\n  c.image.startsWith(\"x\")\n)".to_string())
        );
    }

    #[test]
    fn plain_folding_is_left_alone() {
        assert!(round_trips("a: >\n  one\n  two\n\n  three\n").is_empty());
        assert_eq!(
            fold(&["  one", "  two", "", "  three"], Chomp::Clip),
            "one two\nthree\n"
        );
        assert_eq!(fold(&["  a", "   b", "  c"], Chomp::Strip), "a\n b\nc");
    }
}
