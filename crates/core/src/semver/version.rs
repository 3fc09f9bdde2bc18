//! [`Version`]: parsing (loose and strict), printing and ordering.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use std::sync::LazyLock;

use regex::Regex;

use super::{SemverError, parse_uint};

/// The loose version syntax of Go's `NewVersion`: an optional lower-case `v`, optional minor and
/// patch, then an optional `-prerelease` and `+metadata`. Captures: 1 major, 2 `.minor`,
/// 3 `.patch`, 5 prerelease, 8 metadata.
static LOOSE_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?",
        r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?",
        r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$",
    ))
    .expect("constant regex")
});

/// A semantic version, as Go's `semver.Version`.
///
/// Ordering and equality follow Go's `Compare`: numbers first, then a release sorts after its
/// prereleases, then prerelease identifiers are compared one by one (numeric ones by value and
/// before alphanumeric ones, alphanumeric ones byte-wise). Build metadata never takes part, so
/// `1.2.3+a == 1.2.3+b`; the `Hash` impl only hashes the three numbers to stay consistent.
#[derive(Debug, Clone)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    metadata: String,
    original: String,
}

impl Version {
    /// Builds a version from its parts, as Go's `New`. Like Go, `pre` and `metadata` are not
    /// validated; [`original`](Self::original) is set to the printed form.
    pub fn new(major: u64, minor: u64, patch: u64, pre: &str, metadata: &str) -> Version {
        let mut v = Version {
            major,
            minor,
            patch,
            pre: pre.to_string(),
            metadata: metadata.to_string(),
            original: String::new(),
        };
        v.original = v.to_string();
        v
    }

    /// Parses a version loosely, as Go's `NewVersion` with its default settings.
    ///
    /// Accepts an optional `v` prefix, a missing minor or patch (taken as 0) and leading zeros in
    /// the three numbers (`v01.2` is `1.2.0`). Prerelease identifiers that are all digits must not
    /// start with `0`.
    pub fn parse(s: &str) -> Result<Version, SemverError> {
        let caps = LOOSE_VERSION
            .captures(s)
            .ok_or(SemverError::InvalidSemVer)?;
        let group = |i: usize| caps.get(i).map_or("", |m| m.as_str());

        let major = parse_uint(group(1)).map_err(SemverError::Segment)?;
        let minor = match group(2).strip_prefix('.') {
            Some(digits) => parse_uint(digits).map_err(SemverError::Segment)?,
            None => 0,
        };
        let patch = match group(3).strip_prefix('.') {
            Some(digits) => parse_uint(digits).map_err(SemverError::Segment)?,
            None => 0,
        };
        let pre = group(5);
        if !pre.is_empty() {
            validate_prerelease(pre)?;
        }
        let metadata = group(8);
        if !metadata.is_empty() {
            validate_metadata(metadata)?;
        }
        Ok(Version {
            major,
            minor,
            patch,
            pre: pre.to_string(),
            metadata: metadata.to_string(),
            original: s.to_string(),
        })
    }

    /// Parses a version strictly, as Go's `StrictNewVersion`: exactly `MAJOR.MINOR.PATCH`, no
    /// `v` prefix, no leading zeros, then an optional `-prerelease` and `+metadata`.
    pub fn parse_strict(s: &str) -> Result<Version, SemverError> {
        if s.is_empty() {
            return Err(SemverError::EmptyString);
        }
        let mut pieces = s.splitn(3, '.');
        let (Some(major), Some(minor), Some(mut rest)) =
            (pieces.next(), pieces.next(), pieces.next())
        else {
            return Err(SemverError::InvalidSemVer);
        };

        let mut metadata = "";
        if let Some((left, right)) = rest.split_once('+') {
            validate_metadata(right)?;
            metadata = right;
            rest = left;
        }
        let mut pre = "";
        if let Some((left, right)) = rest.split_once('-') {
            validate_prerelease(right)?;
            pre = right;
            rest = left;
        }
        let numbers = [major, minor, rest];
        for piece in numbers {
            if !piece.bytes().all(|b| b.is_ascii_digit()) {
                return Err(SemverError::InvalidCharacters);
            }
            if piece.len() > 1 && piece.starts_with('0') {
                return Err(SemverError::SegmentStartsZero);
            }
        }
        let [major, minor, patch] = numbers.map(parse_uint);
        Ok(Version {
            major: major.map_err(SemverError::Number)?,
            minor: minor.map_err(SemverError::Number)?,
            patch: patch.map_err(SemverError::Number)?,
            pre: pre.to_string(),
            metadata: metadata.to_string(),
            original: s.to_string(),
        })
    }

    /// The major number.
    pub fn major(&self) -> u64 {
        self.major
    }

    /// The minor number.
    pub fn minor(&self) -> u64 {
        self.minor
    }

    /// The patch number.
    pub fn patch(&self) -> u64 {
        self.patch
    }

    /// The prerelease, without its leading `-` (empty for a release).
    pub fn prerelease(&self) -> &str {
        &self.pre
    }

    /// The build metadata, without its leading `+` (empty if there is none).
    pub fn metadata(&self) -> &str {
        &self.metadata
    }

    /// The text the version was parsed from, exactly as given (Go's `Original`).
    pub fn original(&self) -> &str {
        &self.original
    }
}

impl fmt::Display for Version {
    /// Go's `String()`: `MAJOR.MINOR.PATCH[-pre][+metadata]`, never with a `v`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

impl FromStr for Version {
    type Err = SemverError;

    /// Same as [`Version::parse`].
    fn from_str(s: &str) -> Result<Version, SemverError> {
        Version::parse(s)
    }
}

impl Ord for Version {
    /// Go's `Compare`, metadata ignored.
    fn cmp(&self, other: &Version) -> Ordering {
        self.major
            .cmp(&other.major)
            .then(self.minor.cmp(&other.minor))
            .then(self.patch.cmp(&other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_prerelease(&self.pre, &other.pre),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Version) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Version {
    /// Go's `Equal`: `Compare == 0`, so metadata is ignored.
    fn eq(&self, other: &Version) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl Hash for Version {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Only the numbers: anything finer could disagree with `Eq`, which ignores metadata and
        // treats some differently written prereleases as equal.
        (self.major, self.minor, self.patch).hash(state);
    }
}

/// Compares two non-empty prereleases identifier by identifier, as Go's `comparePrerelease`.
/// A missing identifier counts as the empty string, which sorts first.
pub(crate) fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let a: Vec<&str> = a.split('.').collect();
    let b: Vec<&str> = b.split('.').collect();
    for i in 0..a.len().max(b.len()) {
        let s = a.get(i).copied().unwrap_or("");
        let o = b.get(i).copied().unwrap_or("");
        let ord = compare_pre_part(s, o);
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// One prerelease identifier against another. Numeric means "parses as a `u64`", so an
/// over-long run of digits counts as alphanumeric, as in Go.
fn compare_pre_part(s: &str, o: &str) -> Ordering {
    if s == o {
        return Ordering::Equal;
    }
    if s.is_empty() {
        return Ordering::Less;
    }
    if o.is_empty() {
        return Ordering::Greater;
    }
    match (parse_uint(s), parse_uint(o)) {
        // Go answers "less" both ways for equal values written differently (`1` vs `01`), which
        // is not an order; the parsers never produce such a pair, and here the text breaks the tie.
        (Ok(x), Ok(y)) => x.cmp(&y).then_with(|| s.cmp(o)),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => s.as_bytes().cmp(o.as_bytes()),
    }
}

fn is_identifier_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

/// Go's `validatePrerelease`: non-empty identifiers of `[0-9A-Za-z-]`, and no leading zero in an
/// all-digit identifier longer than one character.
fn validate_prerelease(pre: &str) -> Result<(), SemverError> {
    for ident in pre.split('.') {
        if ident.is_empty() {
            return Err(SemverError::InvalidPrerelease);
        }
        if ident.bytes().all(|b| b.is_ascii_digit()) {
            if ident.len() > 1 && ident.starts_with('0') {
                return Err(SemverError::SegmentStartsZero);
            }
        } else if !ident.bytes().all(is_identifier_char) {
            return Err(SemverError::InvalidPrerelease);
        }
    }
    Ok(())
}

/// Go's `validateMetadata`: non-empty identifiers of `[0-9A-Za-z-]` (leading zeros allowed).
fn validate_metadata(metadata: &str) -> Result<(), SemverError> {
    for ident in metadata.split('.') {
        if ident.is_empty() || !ident.bytes().all(is_identifier_char) {
            return Err(SemverError::InvalidMetadata);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validators() {
        assert_eq!(validate_prerelease("0abc.-1.0-1.0"), Ok(()));
        assert_eq!(
            validate_prerelease("a.01"),
            Err(SemverError::SegmentStartsZero)
        );
        assert_eq!(
            validate_prerelease("a..b"),
            Err(SemverError::InvalidPrerelease)
        );
        assert_eq!(
            validate_prerelease("a_b"),
            Err(SemverError::InvalidPrerelease)
        );
        assert_eq!(validate_metadata("001.test"), Ok(()));
        assert_eq!(validate_metadata("a+b"), Err(SemverError::InvalidMetadata));
        assert_eq!(validate_metadata("a."), Err(SemverError::InvalidMetadata));
    }

    #[test]
    fn upstream_validator_rows() {
        // Upstream TestValidatePrerelease and TestValidateMetadata rows.
        use SemverError::*;
        for (s, want) in [
            ("foo", Ok(())),
            ("alpha.1", Ok(())),
            ("alpha.01", Err(SegmentStartsZero)),
            ("foo\u{2603}\u{fe0e}", Err(InvalidPrerelease)),
            ("alpha.0-1", Ok(())),
        ] {
            assert_eq!(validate_prerelease(s), want, "{s:?}");
        }
        for (s, want) in [
            ("foo", Ok(())),
            ("alpha.1", Ok(())),
            ("alpha.01", Ok(())),
            ("foo\u{2603}\u{fe0e}", Err(InvalidMetadata)),
            ("alpha.0-1", Ok(())),
            (
                "al-pha.1Phe70CgWe050H9K1mJwRUqTNQXZRERwLOEg37wpXUb4JgzgaD5YkL52ABnoyiE",
                Ok(()),
            ),
        ] {
            assert_eq!(validate_metadata(s), want, "{s:?}");
        }
    }

    #[test]
    fn strict_empty_number_piece() {
        assert_eq!(
            Version::parse_strict("1..3").map_err(|e| e.to_string()),
            Err("strconv.ParseUint: parsing \"\": invalid syntax".to_string())
        );
        assert_eq!(
            Version::parse_strict("1.2.-beta").map_err(|e| e.to_string()),
            Err("strconv.ParseUint: parsing \"\": invalid syntax".to_string())
        );
    }

    #[test]
    fn new_does_not_validate() {
        let v = Version::new(1, 2, 3, "alpha.1", "foo.bar");
        assert_eq!(v.to_string(), "1.2.3-alpha.1+foo.bar");
        assert_eq!(v.original(), "1.2.3-alpha.1+foo.bar");
    }
}
