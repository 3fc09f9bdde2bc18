//! ImagePolicy's tag selection, as Flux's image-reflector-controller decides it: `semver`
//! (Masterminds constraints over tags Flux's `version.ParseVersion` accepts), `alphabetical`
//! and `numerical` (ascending picks the greatest, descending the least), after an optional
//! `filterTags` regular expression whose `extract` template turns each matching tag into the
//! value the policy compares; the original tag is what is returned.

use tidegate_core::semver::{Constraints, Version};

/// Why a policy could not be made or could not choose.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolicyError {
    /// No policy is set.
    #[error("given ImagePolicyChoice object is invalid")]
    NoPolicy,
    /// The semver range does not parse.
    #[error("{0}")]
    Range(String),
    /// An order other than ASC or DESC.
    #[error("invalid order argument provided: '{0}', must be one of: ASC, DESC")]
    Order(String),
    /// The `filterTags.pattern` does not compile.
    #[error("invalid regular expression pattern '{pattern}': {reason}")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// The compiler's complaint.
        reason: String,
    },
    /// Nothing to choose from.
    #[error("version list argument cannot be empty")]
    Empty,
    /// No tag is in the semver range.
    #[error("unable to determine latest version from provided list")]
    NoMatch,
    /// A tag is not a number under the numerical policy.
    #[error("failed to parse invalid numeric value '{0}'")]
    NotNumeric(String),
}

/// A policy, made from an ImagePolicy's `spec.policy`.
#[derive(Debug, Clone)]
pub enum Policy {
    /// The highest version within the range.
    Semver(Constraints),
    /// Byte-wise order; `desc` picks the least.
    Alphabetical {
        /// Descending.
        desc: bool,
    },
    /// Numeric order; `desc` picks the least.
    Numerical {
        /// Descending.
        desc: bool,
    },
}

fn order(o: Option<&str>) -> Result<bool, PolicyError> {
    match o.unwrap_or("").to_uppercase().as_str() {
        "" | "ASC" => Ok(false),
        "DESC" => Ok(true),
        _ => Err(PolicyError::Order(o.unwrap_or("").to_uppercase())),
    }
}

impl Policy {
    /// Flux's `PolicerFromSpec`: semver, then alphabetical, then numerical, whichever is set
    /// first (`Some(order)` for the latter two; orders are compared case-insensitively).
    pub fn from_spec(
        semver: Option<&str>,
        alphabetical: Option<Option<&str>>,
        numerical: Option<Option<&str>>,
    ) -> Result<Policy, PolicyError> {
        if let Some(range) = semver {
            return Constraints::parse(range)
                .map(Policy::Semver)
                .map_err(|e| PolicyError::Range(e.to_string()));
        }
        if let Some(o) = alphabetical {
            return Ok(Policy::Alphabetical { desc: order(o)? });
        }
        if let Some(o) = numerical {
            return Ok(Policy::Numerical { desc: order(o)? });
        }
        Err(PolicyError::NoPolicy)
    }

    /// The chosen one of `versions`.
    pub fn latest<'a>(&self, versions: &[&'a str]) -> Result<&'a str, PolicyError> {
        if versions.is_empty() {
            return Err(PolicyError::Empty);
        }
        match self {
            Policy::Semver(c) => {
                let mut best: Option<(Version, &str)> = None;
                for v in versions {
                    let Some(parsed) = parse_version(v) else {
                        continue;
                    };
                    // Strictly greater: on ties (build metadata aside) the first wins.
                    if c.check(&parsed) && best.as_ref().is_none_or(|(b, _)| parsed > *b) {
                        best = Some((parsed, v));
                    }
                }
                best.map(|(_, v)| v).ok_or(PolicyError::NoMatch)
            }
            Policy::Alphabetical { desc } => {
                let pick = if *desc {
                    versions.iter().min()
                } else {
                    versions.iter().max()
                };
                pick.copied().ok_or(PolicyError::Empty)
            }
            Policy::Numerical { desc } => {
                let mut best: Option<(f64, &str)> = None;
                for v in versions {
                    let n = parse_float(v).ok_or_else(|| PolicyError::NotNumeric(v.to_string()))?;
                    // On equal values the later one wins.
                    let better = best
                        .as_ref()
                        .is_none_or(|(b, _)| if *desc { n <= *b } else { n >= *b });
                    if better {
                        best = Some((n, v));
                    }
                }
                best.map(|(_, v)| v).ok_or(PolicyError::Empty)
            }
        }
    }
}

/// Flux's `version.ParseVersion`: at least two dots, then Masterminds' (coercing) parser.
pub fn parse_version(tag: &str) -> Option<Version> {
    if tag.splitn(3, '.').count() != 3 {
        return None;
    }
    Version::parse(tag).ok()
}

/// Go's `strconv.ParseFloat(s, 64)` for the forms tags take: decimal numbers with an optional
/// sign, fraction and exponent, and `Inf`/`NaN` spelled as Go accepts them. Hexadecimal
/// floats and `_` separators are refused.
fn parse_float(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return s.parse().ok();
    }
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    s.parse().ok()
}

/// `filterTags`: the tags the pattern matches, each under the value its first match expands
/// `extract` to (the tag itself when `extract` is empty). Values keep the order they were
/// first met in; a value met again takes the later tag, as Flux's map does.
#[derive(Debug, Clone)]
pub struct RegexFilter {
    pattern: regex::Regex,
    extract: String,
}

impl RegexFilter {
    /// Compiles `pattern` (Go's RE2 syntax; tags are ASCII, so Unicode classes do not differ).
    pub fn new(pattern: &str, extract: &str) -> Result<RegexFilter, PolicyError> {
        let compiled = regex::Regex::new(pattern).map_err(|e| PolicyError::Pattern {
            pattern: pattern.to_string(),
            reason: e.to_string(),
        })?;
        Ok(RegexFilter {
            pattern: compiled,
            extract: extract.to_string(),
        })
    }

    /// `(value, original tag)` for every matching tag.
    pub fn apply<'a>(&self, tags: &[&'a str]) -> Vec<(String, &'a str)> {
        let mut out: Vec<(String, &'a str)> = Vec::new();
        let mut at: std::collections::HashMap<String, usize> = Default::default();
        for tag in tags {
            let Some(caps) = self.pattern.captures(tag) else {
                continue;
            };
            let value = if self.extract.is_empty() {
                tag.to_string()
            } else {
                super::expand::expand(&self.extract, &caps)
            };
            match at.get(&value) {
                Some(&i) => out[i].1 = tag,
                None => {
                    at.insert(value.clone(), out.len());
                    out.push((value, tag));
                }
            }
        }
        out
    }
}

/// Applies `filter` (if any) then `policy` to `tags`: the original tag chosen.
pub fn select<'a>(
    policy: &Policy,
    filter: Option<&RegexFilter>,
    tags: &[&'a str],
) -> Result<&'a str, PolicyError> {
    let Some(filter) = filter else {
        return policy.latest(tags);
    };
    let pairs = filter.apply(tags);
    let values: Vec<&str> = pairs.iter().map(|(v, _)| v.as_str()).collect();
    let chosen = policy.latest(&values)?;
    pairs
        .iter()
        .find(|(v, _)| v == chosen)
        .map(|(_, t)| *t)
        .ok_or(PolicyError::Empty)
}
