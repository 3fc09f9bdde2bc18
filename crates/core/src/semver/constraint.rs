//! [`Constraints`]: `||`-separated groups of items that must all hold.

use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use regex::Regex;

use super::ops::{CV, Item, OPS, WS, prerelease_message};
use super::{SemverError, Version};

/// A hyphen range `A - B` (whitespace required on both sides of the `-`, and eaten around it).
/// Captures 1 and 11 are the two versions.
static RANGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"{WS}*({CV}){WS}+-{WS}+({CV}){WS}*")).expect("constant regex")
});

/// One item inside a group, found anywhere.
static FIND_ITEM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"({OPS}){WS}*({CV})")).expect("constant regex"));

/// A whole AND group: items separated by whitespace or by a comma.
static VALID_GROUP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^({WS}*({OPS}){WS}*({CV}){WS}*)((?:{WS}+|,{WS}*)({OPS}){WS}*({CV}){WS}*)*$"
    ))
    .expect("constant regex")
});

/// A set of version constraints, as Go's `semver.Constraints`: OR groups (separated by `||`)
/// of AND items (separated by whitespace or commas), for example `>=1.2 <2 || ^3.1`.
///
/// Prereleases: a prerelease version can only match a group in which some item's version has a
/// prerelease (such as `>=1.2.3-0`), unless [`include_prerelease`](Self::include_prerelease) is
/// set. Within such a group prereleases are compared by plain SemVer order.
#[derive(Debug, Clone)]
pub struct Constraints {
    groups: Vec<Vec<Item>>,
    /// Per group: some item's version has a prerelease.
    contains_pre: Vec<bool>,
    /// Let prerelease versions match every group (Go's `IncludePrerelease`, `false` by default).
    pub include_prerelease: bool,
}

/// Go's `rewriteRange`: turns every `A - B` into `>= A, <= B ` (trailing space included),
/// replacing the first occurrence of each matched text in turn.
fn rewrite_range(c: &str) -> String {
    let ranges: Vec<(String, String)> = RANGE
        .captures_iter(c)
        .map(|caps| {
            let group = |i: usize| caps.get(i).map_or("", |m| m.as_str());
            (
                group(0).to_string(),
                format!(">= {}, <= {} ", group(1), group(11)),
            )
        })
        .collect();
    let mut out = c.to_string();
    for (matched, replacement) in ranges {
        out = out.replacen(&matched, &replacement, 1);
    }
    out
}

impl Constraints {
    /// Parses a constraint string, as Go's `NewConstraint`.
    ///
    /// Hyphen ranges are rewritten first; errors quote the rewritten text of the failing `||`
    /// group (`improper constraint: "..."`), or say `constraint parser error` when an item's
    /// version is not a valid version.
    pub fn parse(c: &str) -> Result<Constraints, SemverError> {
        let rewritten = rewrite_range(c);
        let mut groups = Vec::new();
        let mut contains_pre = Vec::new();
        for group in rewritten.split("||") {
            if !VALID_GROUP.is_match(group) {
                return Err(SemverError::ImproperConstraint(group.to_string()));
            }
            let items = FIND_ITEM
                .find_iter(group)
                .map(|m| Item::parse(m.as_str()))
                .collect::<Result<Vec<Item>, SemverError>>()?;
            contains_pre.push(items.iter().any(|i| !i.con.prerelease().is_empty()));
            groups.push(items);
        }
        Ok(Constraints {
            groups,
            contains_pre,
            include_prerelease: false,
        })
    }

    /// Sets [`include_prerelease`](Self::include_prerelease) and returns `self`.
    pub fn with_include_prerelease(mut self, include: bool) -> Constraints {
        self.include_prerelease = include;
        self
    }

    /// The number of `||` groups.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// The number of items in group `i` (0 if there is no such group).
    pub fn group_len(&self, i: usize) -> usize {
        self.groups.get(i).map_or(0, Vec::len)
    }

    fn include_pre(&self, group: usize) -> bool {
        self.include_prerelease || self.contains_pre.get(group).copied().unwrap_or(false)
    }

    /// Whether `v` satisfies some group, as Go's `Check`.
    pub fn check(&self, v: &Version) -> bool {
        self.groups.iter().enumerate().any(|(i, items)| {
            let include = self.include_pre(i);
            items.iter().all(|item| item.check(v, include).is_ok())
        })
    }

    /// Like [`check`](Self::check), but says why not, as Go's `Validate`: one message per
    /// failing item of every group (in order), except that the "is a prerelease version"
    /// message appears at most once.
    pub fn validate(&self, v: &Version) -> Result<(), Vec<String>> {
        let mut errors = Vec::new();
        let mut prerelease_reported = false;
        for (i, items) in self.groups.iter().enumerate() {
            let include = self.include_pre(i);
            let mut ok = true;
            for item in items {
                if !include && !v.prerelease().is_empty() {
                    if !prerelease_reported {
                        errors.push(prerelease_message(v));
                        prerelease_reported = true;
                    }
                    ok = false;
                } else if let Err(e) = item.check(v, include) {
                    errors.push(e);
                    ok = false;
                }
            }
            if ok {
                return Ok(());
            }
        }
        Err(errors)
    }
}

impl fmt::Display for Constraints {
    /// Go's `String()`: items as written (operator and version, no spaces between them) joined
    /// by a space, groups joined by ` || `. Ranges appear rewritten (`>=1 <=2`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, items) in self.groups.iter().enumerate() {
            if i > 0 {
                f.write_str(" || ")?;
            }
            for (j, item) in items.iter().enumerate() {
                if j > 0 {
                    f.write_str(" ")?;
                }
                write!(f, "{item}")?;
            }
        }
        Ok(())
    }
}

impl FromStr for Constraints {
    type Err = SemverError;

    /// Same as [`Constraints::parse`].
    fn from_str(s: &str) -> Result<Constraints, SemverError> {
        Constraints::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_ranges_like_go() {
        // Upstream TestRewriteRange rows, plus one observed gluing case.
        for (input, want) in [
            ("2 - 3", ">= 2, <= 3 "),
            ("2 - 3, 2 - 3", ">= 2, <= 3 ,>= 2, <= 3 "),
            ("2 - 3, 4.0.0 - 5.1", ">= 2, <= 3 ,>= 4.0.0, <= 5.1 "),
            ("2 - 3 4.0.0 - 5.1", ">= 2, <= 3 >= 4.0.0, <= 5.1 "),
            ("1.0.0 - 2.0.0 <=2.0.0", ">= 1.0.0, <= 2.0.0 <=2.0.0"),
            (">1 2 - 3", ">1>= 2, <= 3 "),
        ] {
            assert_eq!(rewrite_range(input), want, "{input:?}");
        }
    }
}
