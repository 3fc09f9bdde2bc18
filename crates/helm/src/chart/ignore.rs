//! `.helmignore` rules as Helm reads and applies them (including its handling of negated
//! rules), on Go's `filepath.Match` patterns; and the `gobwas/glob` patterns `.Files.Glob`
//! takes.

/// One rule.
#[derive(Debug, Clone)]
struct Pattern {
    rule: String,
    /// The rule's characters, for matching; `None` when it has no wildcard (compared as is).
    glob: Option<Vec<char>>,
    negate: bool,
    must_dir: bool,
    /// `/x`: matched against the whole path; `a/b`: the whole path; `x`: the base name.
    whole_path: bool,
}

/// A `.helmignore` file's rules.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    patterns: Vec<Pattern>,
}

impl Rules {
    /// Parses `.helmignore` text.
    pub fn parse(text: &str) -> Result<Rules, String> {
        let mut r = Rules::default();
        for (i, line) in text.lines().enumerate() {
            let line = if i == 0 {
                line.trim_start_matches('\u{feff}')
            } else {
                line
            };
            r.parse_rule(line)?;
        }
        Ok(r)
    }

    /// Helm's default rule: dot files under `templates/`.
    pub fn add_defaults(&mut self) {
        let _ = self.parse_rule("templates/.?*");
    }

    fn parse_rule(&mut self, rule: &str) -> Result<(), String> {
        let rule = rule.trim();
        if rule.is_empty() || rule.starts_with('#') {
            return Ok(());
        }
        if rule.contains("**") {
            return Err("double-star (**) syntax is not supported".into());
        }
        go_match(rule, "abc").map_err(|e| e.to_string())?;
        let mut p = Pattern {
            rule: rule.to_string(),
            glob: None,
            negate: false,
            must_dir: false,
            whole_path: false,
        };
        let mut r = rule;
        if let Some(rest) = r.strip_prefix('!') {
            p.negate = true;
            r = rest;
        }
        if let Some(rest) = r.strip_suffix('/') {
            p.must_dir = true;
            r = rest;
        }
        if let Some(rest) = r.strip_prefix('/') {
            p.whole_path = true;
            r = rest;
        } else if r.contains('/') {
            p.whole_path = true;
        }
        p.rule = r.to_string();
        if r.contains(['*', '?', '[', '\\']) {
            p.glob = Some(r.chars().collect());
        }
        self.patterns.push(p);
        Ok(())
    }

    fn matches(p: &Pattern, path: &str, path_chars: &[char], base_chars: &[char]) -> bool {
        match &p.glob {
            None if p.whole_path => p.rule == path,
            None => p.rule == path.rsplit('/').next().unwrap_or(path),
            Some(glob) => {
                let target = if p.whole_path { path_chars } else { base_chars };
                match_from(glob, target).unwrap_or(false)
            }
        }
    }

    /// Whether `path` (relative to the chart, `/`-separated) is ignored.
    pub fn ignore(&self, path: &str, is_dir: bool) -> bool {
        if path.is_empty() || path == "." || path == "./" {
            return false;
        }
        let path_chars: Vec<char> = path.chars().collect();
        let base_at = path_chars
            .iter()
            .rposition(|c| *c == '/')
            .map_or(0, |i| i + 1);
        let base_chars = &path_chars[base_at..];
        for p in &self.patterns {
            if p.negate {
                if p.must_dir && !is_dir {
                    return true;
                }
                if !Rules::matches(p, path, &path_chars, base_chars) {
                    return true;
                }
                continue;
            }
            if p.must_dir && !is_dir {
                continue;
            }
            if Rules::matches(p, path, &path_chars, base_chars) {
                return true;
            }
        }
        false
    }
}

/// Go's `filepath.Match` error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadPattern;

impl std::fmt::Display for BadPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("syntax error in pattern")
    }
}

/// Go's `filepath.Match` on `/`-separated names: `*` and `?` do not cross `/`, `[...]`
/// classes (with `^` negation and ranges), `\` escapes.
pub fn go_match(pattern: &str, name: &str) -> Result<bool, BadPattern> {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> Result<bool, BadPattern> {
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                '?' if ni < n.len() && n[ni] != '/' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' => {
                    let (matched, next) = class(p, pi, n.get(ni).copied())?;
                    if ni < n.len() && matched {
                        pi = next;
                        ni += 1;
                        continue;
                    }
                }
                '\\' => {
                    let c = *p.get(pi + 1).ok_or(BadPattern)?;
                    if ni < n.len() && n[ni] == c {
                        pi += 2;
                        ni += 1;
                        continue;
                    }
                }
                c if c != '?' && ni < n.len() && n[ni] == c => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        } else if ni == n.len() {
            return Ok(true);
        }
        // Backtrack: let the last star take one more character (never a separator).
        match star {
            Some((sp, sn)) if sn < n.len() && n[sn] != '/' => {
                star = Some((sp, sn + 1));
                pi = sp + 1;
                ni = sn + 1;
            }
            _ => {
                // Go still reports a malformed rest of the pattern.
                validate(&p[pi.min(p.len())..])?;
                return Ok(false);
            }
        }
    }
}

fn validate(p: &[char]) -> Result<(), BadPattern> {
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '[' => i = class(p, i, None)?.1,
            '\\' => {
                if i + 1 >= p.len() {
                    return Err(BadPattern);
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// Matches a `[...]` class at `p[at]` against `c`; returns whether it matched and the index
/// after the class.
fn class(p: &[char], at: usize, c: Option<char>) -> Result<(bool, usize), BadPattern> {
    let mut i = at + 1;
    let negated = p.get(i) == Some(&'^');
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let Some(&ch) = p.get(i) else {
            return Err(BadPattern);
        };
        if ch == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        let lo = if ch == '\\' {
            i += 1;
            *p.get(i).ok_or(BadPattern)?
        } else if ch == '-' || ch == ']' {
            return Err(BadPattern);
        } else {
            ch
        };
        i += 1;
        let mut hi = lo;
        if p.get(i) == Some(&'-') && p.get(i + 1) != Some(&']') {
            i += 1;
            hi = match p.get(i) {
                Some('\\') => {
                    i += 1;
                    *p.get(i).ok_or(BadPattern)?
                }
                Some(&h) => h,
                None => return Err(BadPattern),
            };
            i += 1;
            if hi < lo {
                return Err(BadPattern);
            }
        }
        if let Some(c) = c
            && lo <= c
            && c <= hi
        {
            matched = true;
        }
    }
    let ok = c.is_some_and(|c| c != '/') && matched != negated;
    Ok((ok, i))
}

/// A `gobwas/glob` pattern with `/` as separator (`.Files.Glob`): `*` within a segment,
/// `**` across, `?`, `[...]`, `{a,b}`.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_from(&p, 0, &n, 0)
}

fn glob_from(p: &[char], pi: usize, n: &[char], ni: usize) -> bool {
    if pi == p.len() {
        return ni == n.len();
    }
    match p[pi] {
        '*' => {
            let super_star = p.get(pi + 1) == Some(&'*');
            let next = if super_star { pi + 2 } else { pi + 1 };
            let mut k = ni;
            loop {
                if glob_from(p, next, n, k) {
                    return true;
                }
                if k == n.len() || (!super_star && n[k] == '/') {
                    return false;
                }
                k += 1;
            }
        }
        '?' => ni < n.len() && n[ni] != '/' && glob_from(p, pi + 1, n, ni + 1),
        '{' => {
            let Some(close) = p[pi..].iter().position(|c| *c == '}').map(|i| pi + i) else {
                return ni < n.len() && n[ni] == '{' && glob_from(p, pi + 1, n, ni + 1);
            };
            let inner: String = p[pi + 1..close].iter().collect();
            let rest: String = p[close + 1..].iter().collect();
            inner.split(',').any(|alt| {
                let candidate: Vec<char> = format!("{alt}{rest}").chars().collect();
                glob_from(&candidate, 0, n, ni)
            })
        }
        '[' => match class(p, pi, n.get(ni).copied()) {
            Ok((true, next)) => glob_from(p, next, n, ni + 1),
            Ok((false, _)) => false,
            Err(_) => ni < n.len() && n[ni] == '[' && glob_from(p, pi + 1, n, ni + 1),
        },
        '\\' if pi + 1 < p.len() => {
            ni < n.len() && n[ni] == p[pi + 1] && glob_from(p, pi + 2, n, ni + 1)
        }
        c => ni < n.len() && n[ni] == c && glob_from(p, pi + 1, n, ni + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_filepath_match() {
        // Cases from Go's path/filepath match_test.go.
        let cases: &[(&str, &str, Result<bool, BadPattern>)] = &[
            ("abc", "abc", Ok(true)),
            ("*", "abc", Ok(true)),
            ("*c", "abc", Ok(true)),
            ("a*", "a", Ok(true)),
            ("a*", "abc", Ok(true)),
            ("a*", "ab/c", Ok(false)),
            ("a*/b", "abc/b", Ok(true)),
            ("a*/b", "a/c/b", Ok(false)),
            ("a*b*c*d*e*/f", "axbxcxdxe/f", Ok(true)),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/f", Ok(true)),
            ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", Ok(false)),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", Ok(false)),
            ("a*b?c*x", "abxbbxdbxebxczzx", Ok(true)),
            ("a*b?c*x", "abxbbxdbxebxczzy", Ok(false)),
            ("ab[c]", "abc", Ok(true)),
            ("ab[b-d]", "abc", Ok(true)),
            ("ab[e-g]", "abc", Ok(false)),
            ("ab[^c]", "abc", Ok(false)),
            ("ab[^b-d]", "abc", Ok(false)),
            ("ab[^e-g]", "abc", Ok(true)),
            ("a\\*b", "a*b", Ok(true)),
            ("a\\*b", "ab", Ok(false)),
            ("a?b", "a☺b", Ok(true)),
            ("a[^a]b", "a☺b", Ok(true)),
            ("a???b", "a☺b", Ok(false)),
            ("a[^a][^a][^a]b", "a☺b", Ok(false)),
            ("[a-ζ]*", "α", Ok(true)),
            ("*[a-ζ]", "A", Ok(false)),
            ("a?b", "a/b", Ok(false)),
            ("a*b", "a/b", Ok(false)),
            ("[\\]a]", "]", Ok(true)),
            ("[\\-]", "-", Ok(true)),
            ("[x\\-]", "x", Ok(true)),
            ("[x\\-]", "-", Ok(true)),
            ("[x\\-]", "z", Ok(false)),
            ("[\\-x]", "x", Ok(true)),
            ("[\\-x]", "-", Ok(true)),
            ("[\\-x]", "a", Ok(false)),
            ("[]a]", "]", Err(BadPattern)),
            ("[-]", "-", Err(BadPattern)),
            ("[x-]", "x", Err(BadPattern)),
            ("[x-]", "-", Err(BadPattern)),
            ("[x-]", "z", Err(BadPattern)),
            ("[-x]", "x", Err(BadPattern)),
            ("[-x]", "-", Err(BadPattern)),
            ("[-x]", "a", Err(BadPattern)),
            ("\\", "a", Err(BadPattern)),
            ("[a-b-c]", "a", Err(BadPattern)),
            ("[", "a", Err(BadPattern)),
            ("[^", "a", Err(BadPattern)),
            ("[^bc", "a", Err(BadPattern)),
            ("a[", "a", Err(BadPattern)),
            ("a[", "ab", Err(BadPattern)),
            ("a[", "x", Err(BadPattern)),
            ("a/b[", "x", Err(BadPattern)),
            ("*x", "xxx", Ok(true)),
        ];
        for (pattern, name, want) in cases {
            assert_eq!(go_match(pattern, name), *want, "{pattern} {name}");
        }
    }

    #[test]
    fn helmignore_as_helm() {
        let mut r =
            Rules::parse("# comment\n*.swp\n/secret.txt\ndocs/\ntemplates/tests/*\n").unwrap();
        r.add_defaults();
        assert!(r.ignore("a.swp", false));
        assert!(r.ignore("x/a.swp", false));
        assert!(r.ignore("secret.txt", false));
        assert!(!r.ignore("x/secret.txt", false));
        assert!(r.ignore("docs", true));
        assert!(!r.ignore("docs", false));
        assert!(r.ignore("templates/tests/t.yaml", false));
        assert!(r.ignore("templates/.hidden", false));
        assert!(!r.ignore("templates/ok.yaml", false));
        assert!(Rules::parse("a/**/b").is_err());
        assert!(glob_match("files/*.conf", "files/a.conf"));
        assert!(!glob_match("files/*.conf", "files/x/a.conf"));
        assert!(glob_match("files/**.conf", "files/x/a.conf"));
        assert!(glob_match("{a,b}/*", "b/x"));
    }
}
