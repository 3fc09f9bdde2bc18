//! Semantic versions and version constraints, matching the Go library
//! `github.com/Masterminds/semver/v3` (master after v3.4.0) exactly.
//!
//! Flux uses that library wherever a user writes a version range: `spec.ref.semver` of a
//! `GitRepository`, `spec.ref.semver` of an `OCIRepository`, `spec.chart.spec.version` of a
//! `HelmRelease`, and so on. This module reproduces its behaviour, quirks included, so that a
//! range selects the same tag here as it does in Flux:
//!
//! * [`Version::parse`] is Go's `NewVersion` (loose: an optional `v`, missing minor or patch,
//!   leading zeros in the numbers), [`Version::parse_strict`] is `StrictNewVersion`.
//! * [`Version`]'s ordering is Go's `Compare`; build metadata is ignored, also by `==`.
//! * [`Constraints::parse`] is `NewConstraint`, [`Constraints::check`] is `Check`,
//!   [`Constraints::validate`] is `Validate`, with the same error texts.
//!
//! The Go-only knobs `CoerceNewVersion` and `DetailedNewVersionErrors` are not reproduced: this
//! module always behaves like their defaults (`true`, `true`).

mod constraint;
mod ops;
mod version;

pub use constraint::Constraints;
pub use version::Version;

use std::fmt;

/// A failure to parse a number, worded like Go's `strconv.ParseUint` error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumError {
    /// The text is empty or not made of ASCII digits (`invalid syntax`).
    Syntax(String),
    /// The digits do not fit in a `u64` (`value out of range`).
    Range(String),
}

impl fmt::Display for NumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumError::Syntax(s) => write!(
                f,
                "strconv.ParseUint: parsing {}: invalid syntax",
                go_quote(s)
            ),
            NumError::Range(s) => write!(
                f,
                "strconv.ParseUint: parsing {}: value out of range",
                go_quote(s)
            ),
        }
    }
}

impl std::error::Error for NumError {}

/// Why a version or a constraint could not be parsed. The messages are those of the Go library.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SemverError {
    /// Go `ErrInvalidSemVer`.
    #[error("invalid semantic version")]
    InvalidSemVer,
    /// Go `ErrEmptyString` (strict parsing only).
    #[error("version string empty")]
    EmptyString,
    /// Go `ErrInvalidCharacters` (strict parsing only).
    #[error("invalid characters in version")]
    InvalidCharacters,
    /// Go `ErrSegmentStartsZero`.
    #[error("version segment starts with 0")]
    SegmentStartsZero,
    /// Go `ErrInvalidMetadata`.
    #[error("invalid metadata string")]
    InvalidMetadata,
    /// Go `ErrInvalidPrerelease`.
    #[error("invalid prerelease string")]
    InvalidPrerelease,
    /// A major, minor or patch number does not fit in a `u64` (loose parsing; the error is
    /// wrapped as Go's `NewVersion` wraps it).
    #[error("error parsing version segment: {0}")]
    Segment(NumError),
    /// A major, minor or patch number could not be parsed (strict parsing; the error is not
    /// wrapped, as in Go's `StrictNewVersion`).
    #[error("{0}")]
    Number(NumError),
    /// A constraint (or one of its `||` groups) has the wrong shape. Holds the offending text,
    /// after range rewriting.
    #[error("improper constraint: {}", go_quote(.0))]
    ImproperConstraint(String),
    /// The version inside a constraint is not a valid version.
    #[error("constraint parser error")]
    ConstraintParser,
}

/// Quotes `s` as Go's `%q` (`strconv.Quote`) does.
///
/// Exact for ASCII. For other characters Go's notion of "printable" is approximated by "not a
/// control character and not whitespace".
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0b}' => out.push_str("\\v"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if !c.is_control() && !c.is_whitespace() => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Parses `s` as Go's `strconv.ParseUint(s, 10, 64)` does: ASCII digits only, no sign.
pub(crate) fn parse_uint(s: &str) -> Result<u64, NumError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NumError::Syntax(s.to_string()));
    }
    s.parse::<u64>().map_err(|_| NumError::Range(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(go_quote(""), r#""""#);
        assert_eq!(go_quote("a \"b\" \\"), r#""a \"b\" \\""#);
        assert_eq!(go_quote("\n1.2\t"), r#""\n1.2\t""#);
        assert_eq!(go_quote("\u{1}\u{7f}"), r#""\x01\x7f""#);
        assert_eq!(go_quote("é"), "\"é\"");
        assert_eq!(go_quote("\u{a0}"), r#""\u00a0""#);
    }

    #[test]
    fn parses_uint_like_go() {
        assert_eq!(parse_uint("007"), Ok(7));
        assert_eq!(parse_uint("+7"), Err(NumError::Syntax("+7".into())));
        assert_eq!(parse_uint(""), Err(NumError::Syntax(String::new())));
        assert_eq!(
            parse_uint("18446744073709551616").map_err(|e| e.to_string()),
            Err(
                "strconv.ParseUint: parsing \"18446744073709551616\": value out of range"
                    .to_string()
            )
        );
        assert_eq!(parse_uint("18446744073709551615"), Ok(u64::MAX));
    }
}
