//! One constraint item (`>=1.2`, `~1.x`, `^0.2.3-beta`, …) and its operator functions.

use std::cmp::Ordering;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

use super::version::compare_prerelease;
use super::{SemverError, Version, go_quote};

/// Go's `\s`: ASCII whitespace only.
pub(crate) const WS: &str = r"[\t\n\f\r ]";

/// The operators, with Go's empty alternative (a bare version) kept.
pub(crate) const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

/// A version inside a constraint: like a loose version, but each number may be `x`, `X` or `*`
/// (and, as in Go, the classes also admit a literal `|`). Nine capture groups.
pub(crate) const CV: &str = concat!(
    r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?",
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?",
    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?",
);

/// One whole item. Captures: 1 operator, 2 version text, 3 major, 4 `.minor`, 5 `.patch`,
/// 6 `-prerelease`.
static ITEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^{WS}*({OPS}){WS}*({CV}){WS}*$")).expect("constant regex")
});

/// Which check an item runs, chosen by its operator text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `""` and `=`.
    TildeOrEqual,
    /// `~` and `~>`.
    Tilde,
    /// `^`.
    Caret,
    /// `!=`.
    NotEqual,
    /// `>`.
    GreaterThan,
    /// `<`.
    LessThan,
    /// `>=` and `=>`.
    GreaterThanEqual,
    /// `<=` and `=<`.
    LessThanEqual,
}

/// A parsed constraint item, as Go's internal `constraint`.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    op: Op,
    /// The operator exactly as written.
    origfunc: String,
    /// The version text exactly as written.
    orig: String,
    /// The version compared against: wildcards and missing parts become 0.
    pub(crate) con: Version,
    /// Some part was missing or a wildcard.
    dirty: bool,
    /// The minor part (and so the patch) was missing or a wildcard.
    minor_dirty: bool,
    /// The patch part was missing or a wildcard.
    patch_dirty: bool,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

impl Item {
    /// Parses one item, as Go's `parseConstraint` on a non-empty string.
    pub(crate) fn parse(text: &str) -> Result<Item, SemverError> {
        let caps = ITEM
            .captures(text)
            .ok_or_else(|| SemverError::ImproperConstraint(text.to_string()))?;
        let group = |i: usize| caps.get(i).map_or("", |m| m.as_str());
        let (origfunc, orig) = (group(1), group(2));
        let (major, minor, patch, pre) = (group(3), group(4), group(5), group(6));

        let (mut dirty, mut minor_dirty, mut patch_dirty) = (false, false, false);
        let con_text = if is_x(major) || major.is_empty() {
            dirty = true;
            format!("0.0.0{pre}")
        } else if minor.is_empty() || minor.strip_prefix('.').is_some_and(is_x) {
            dirty = true;
            minor_dirty = true;
            format!("{major}.0.0{pre}")
        } else if patch.is_empty() || patch.strip_prefix('.').is_some_and(is_x) {
            dirty = true;
            patch_dirty = true;
            format!("{major}{minor}.0{pre}")
        } else {
            orig.to_string()
        };
        let con = Version::parse(&con_text).map_err(|_| SemverError::ConstraintParser)?;

        let op = match origfunc {
            "~" | "~>" => Op::Tilde,
            "^" => Op::Caret,
            "!=" => Op::NotEqual,
            ">" => Op::GreaterThan,
            "<" => Op::LessThan,
            ">=" | "=>" => Op::GreaterThanEqual,
            "<=" | "=<" => Op::LessThanEqual,
            _ => Op::TildeOrEqual,
        };
        Ok(Item {
            op,
            origfunc: origfunc.to_string(),
            orig: orig.to_string(),
            con,
            dirty,
            minor_dirty,
            patch_dirty,
        })
    }

    /// Checks `v` against this item. `include_pre` says whether prerelease versions may match
    /// at all. The error is Go's message for the failure.
    pub(crate) fn check(&self, v: &Version, include_pre: bool) -> Result<(), String> {
        if !include_pre && !v.prerelease().is_empty() {
            return Err(prerelease_message(v));
        }
        match self.op {
            Op::TildeOrEqual => self.tilde_or_equal(v),
            Op::Tilde => self.tilde(v),
            Op::Caret => self.caret(v),
            Op::NotEqual => self.not_equal(v),
            Op::GreaterThan => self.greater_than(v),
            Op::LessThan => self.less_than(v),
            Op::GreaterThanEqual => self.greater_than_equal(v),
            Op::LessThanEqual => self.less_than_equal(v),
        }
    }

    /// `"<v>" <what> "<orig>"`.
    fn fail(&self, v: &Version, what: &str) -> Result<(), String> {
        Err(format!(
            "{} {what} {}",
            go_quote(&v.to_string()),
            go_quote(&self.orig)
        ))
    }

    fn tilde_or_equal(&self, v: &Version) -> Result<(), String> {
        if self.dirty {
            return self.tilde(v);
        }
        if *v == self.con {
            Ok(())
        } else {
            self.fail(v, "is not equal to")
        }
    }

    fn tilde(&self, v: &Version) -> Result<(), String> {
        let c = &self.con;
        if *v < *c {
            return self.fail(v, "is less than");
        }
        // `~0.0.0`, `*`, `x.2.3`, `*-0`: anything at or above the constraint version.
        if c.major() == 0
            && c.minor() == 0
            && c.patch() == 0
            && !self.minor_dirty
            && !self.patch_dirty
        {
            return Ok(());
        }
        if v.major() != c.major() {
            return self.fail(v, "does not have same major version as");
        }
        if v.minor() != c.minor() && !self.minor_dirty {
            return self.fail(v, "does not have same major and minor version as");
        }
        Ok(())
    }

    fn caret(&self, v: &Version) -> Result<(), String> {
        let c = &self.con;
        if *v < *c {
            return self.fail(v, "is less than");
        }
        if c.major() > 0 || self.minor_dirty {
            if v.major() == c.major() {
                return Ok(());
            }
            return self.fail(v, "does not have same major version as");
        }
        if v.major() > 0 {
            return self.fail(v, "does not have same major version as");
        }
        if c.minor() > 0 || self.patch_dirty {
            if v.minor() == c.minor() {
                return Ok(());
            }
            return self
                .fail(v, "does not have same minor version as")
                .map_err(|e| {
                    e + ". Expected minor versions to match when constraint major version is 0"
                });
        }
        if v.minor() > 0 {
            return self.fail(v, "does not have same minor version as");
        }
        if v.patch() == c.patch() {
            return Ok(());
        }
        self.fail(v, "does not equal").map_err(|e| {
            e + ". Expect version and constraint to equal when major and minor versions are 0"
        })
    }

    fn not_equal(&self, v: &Version) -> Result<(), String> {
        let c = &self.con;
        if self.dirty {
            if v.major() != c.major() {
                return Ok(());
            }
            if v.minor() != c.minor() && !self.minor_dirty {
                return Ok(());
            } else if self.minor_dirty {
                return self.fail(v, "is equal to");
            } else if v.patch() != c.patch() && !self.patch_dirty {
                return Ok(());
            } else if self.patch_dirty {
                // Same major.minor: only the prerelease strings can still tell them apart.
                if (!v.prerelease().is_empty() || !c.prerelease().is_empty())
                    && compare_prerelease(v.prerelease(), c.prerelease()) != Ordering::Equal
                {
                    return Ok(());
                }
                return self.fail(v, "is equal to");
            }
        }
        if *v == *c {
            self.fail(v, "is equal to")
        } else {
            Ok(())
        }
    }

    fn greater_than(&self, v: &Version) -> Result<(), String> {
        let c = &self.con;
        let pass = if !self.dirty {
            *v > *c
        } else if v.major() > c.major() {
            true
        } else if v.major() < c.major() || self.minor_dirty {
            false
        } else if self.patch_dirty {
            v.minor() > c.minor()
        } else {
            *v > *c
        };
        if pass {
            Ok(())
        } else {
            self.fail(v, "is less than or equal to")
        }
    }

    fn less_than(&self, v: &Version) -> Result<(), String> {
        if *v < self.con {
            Ok(())
        } else {
            self.fail(v, "is greater than or equal to")
        }
    }

    fn greater_than_equal(&self, v: &Version) -> Result<(), String> {
        if *v >= self.con {
            Ok(())
        } else {
            self.fail(v, "is less than")
        }
    }

    fn less_than_equal(&self, v: &Version) -> Result<(), String> {
        let c = &self.con;
        let pass = if !self.dirty {
            *v <= *c
        } else if v.major() > c.major() {
            false
        } else {
            !(v.major() == c.major() && v.minor() > c.minor() && !self.minor_dirty)
        };
        if pass {
            Ok(())
        } else {
            self.fail(v, "is greater than")
        }
    }
}

/// The message for a prerelease version meeting a group that only looks at releases.
pub(crate) fn prerelease_message(v: &Version) -> String {
    format!(
        "{} is a prerelease version and the constraint is only looking for release versions",
        go_quote(&v.to_string())
    )
}

impl fmt::Display for Item {
    /// Go's `constraint.String()`: the operator and the version exactly as written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.origfunc, self.orig)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_x_like_go() {
        // Upstream TestIsX rows.
        for (s, want) in [
            ("A", false),
            ("%", false),
            ("X", true),
            ("x", true),
            ("*", true),
        ] {
            assert_eq!(is_x(s), want, "{s:?}");
        }
    }

    #[test]
    fn parses_items_like_go() {
        // Upstream TestParseConstraint rows: [input, operator, con.String()].
        for (input, op, con) in [
            (">= 1.2", Op::GreaterThanEqual, "1.2.0"),
            ("1.0", Op::TildeOrEqual, "1.0.0"),
            ("<= 1.2", Op::LessThanEqual, "1.2.0"),
            ("=< 1.2", Op::LessThanEqual, "1.2.0"),
            ("=> 1.2", Op::GreaterThanEqual, "1.2.0"),
            ("v1.2", Op::TildeOrEqual, "1.2.0"),
            ("=1.5", Op::TildeOrEqual, "1.5.0"),
            ("> 1.3", Op::GreaterThan, "1.3.0"),
            ("< 1.4.1", Op::LessThan, "1.4.1"),
            ("< 40.50.10", Op::LessThan, "40.50.10"),
        ] {
            let item = Item::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(item.op, op, "{input:?}");
            assert_eq!(item.con.to_string(), con, "{input:?}");
        }
        assert!(Item::parse("foo").is_err());
    }

    #[test]
    fn wildcard_flags() {
        let item = Item::parse("x.2.3").expect("valid");
        assert!(item.dirty && !item.minor_dirty && !item.patch_dirty);
        assert_eq!(item.con.to_string(), "0.0.0");
        let item = Item::parse("v1.x.3-beta+meta").expect("valid");
        assert!(item.dirty && item.minor_dirty && !item.patch_dirty);
        assert_eq!(item.con.to_string(), "1.0.0-beta");
        assert_eq!(item.to_string(), "v1.x.3-beta+meta");
        let item = Item::parse("~>1.2").expect("valid");
        assert!(item.dirty && !item.minor_dirty && item.patch_dirty);
        assert_eq!(item.op, Op::Tilde);
    }
}
