//! Which tag an OCIRepository's `ref` selects: Flux's precedence (digest > semver > tag,
//! default `latest`) and its semver rules over the repository's tags.

use tidegate_core::semver::{Constraints, Version};

use super::registry::HELM_CHART_CONTENT;

/// What `spec.ref` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// A manifest digest (`sha256:<hex>`).
    Digest(String),
    /// The highest tag within a semver range, after an optional regex filter.
    Semver {
        /// The Masterminds range.
        range: String,
        /// A Go regular expression tags must match first.
        filter: Option<String>,
    },
    /// A tag.
    Tag(String),
}

impl Wanted {
    /// Flux's precedence over the fields of `spec.ref`.
    pub fn from_ref(
        digest: Option<&str>,
        semver: Option<&str>,
        semver_filter: Option<&str>,
        tag: Option<&str>,
    ) -> Wanted {
        let set = |v: Option<&str>| v.filter(|s| !s.is_empty()).map(str::to_string);
        if let Some(d) = set(digest) {
            Wanted::Digest(d)
        } else if let Some(range) = set(semver) {
            Wanted::Semver {
                range,
                filter: set(semver_filter),
            }
        } else {
            Wanted::Tag(set(tag).unwrap_or_else(|| "latest".to_string()))
        }
    }
}

/// Why no tag was selected. Messages are Flux's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// The range does not parse.
    #[error("semver '{range}' parse error: {reason}")]
    Range {
        /// The range.
        range: String,
        /// Why.
        reason: String,
    },
    /// The filter does not compile.
    #[error("failed to compile regex '{filter}': {reason}")]
    Filter {
        /// The filter.
        filter: String,
        /// Why.
        reason: String,
    },
    /// No tag is in range.
    #[error("no match found for semver: {0}")]
    NoMatch(String),
}

/// Parses a tag as Flux's `version.ParseVersion`: three dot-separated parts, then Masterminds.
pub fn parse_version(tag: &str) -> Option<Version> {
    if tag.splitn(3, '.').count() != 3 {
        return None;
    }
    Version::parse(tag).ok()
}

/// The highest tag of `tags` within `range`, after `filter`. For Helm chart layers
/// (`layer_media_type`), `_` in tags stands for `+` (Helm's tag encoding of build metadata).
pub fn select_semver(
    tags: &[String],
    range: &str,
    filter: Option<&str>,
    layer_media_type: Option<&str>,
) -> Result<String, SelectError> {
    let constraints = Constraints::parse(range).map_err(|e| SelectError::Range {
        range: range.to_string(),
        reason: e.to_string(),
    })?;
    let filter = filter
        .map(|f| {
            regex::Regex::new(f).map_err(|e| SelectError::Filter {
                filter: f.to_string(),
                reason: e.to_string(),
            })
        })
        .transpose()?;
    let helm = layer_media_type == Some(HELM_CHART_CONTENT);
    let mut best: Option<(Version, &String)> = None;
    for tag in tags {
        if filter.as_ref().is_some_and(|f| !f.is_match(tag)) {
            continue;
        }
        let text = if helm {
            tag.replace('_', "+")
        } else {
            tag.clone()
        };
        let Some(v) = parse_version(&text) else {
            continue;
        };
        if !constraints.check(&v) {
            continue;
        }
        // Versions equal but for build metadata: the first listed wins.
        if best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v, tag));
        }
    }
    best.map(|(_, t)| t.clone())
        .ok_or_else(|| SelectError::NoMatch(range.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn precedence() {
        assert_eq!(
            Wanted::from_ref(Some("sha256:a"), Some("1.x"), None, Some("v")),
            Wanted::Digest("sha256:a".into())
        );
        assert_eq!(
            Wanted::from_ref(None, None, None, None),
            Wanted::Tag("latest".into())
        );
        assert!(matches!(
            Wanted::from_ref(None, Some(">=1"), Some("^v"), Some("x")),
            Wanted::Semver { .. }
        ));
    }

    #[test]
    fn semver_selection() {
        let t = tags(&[
            "6.0.0",
            "6.1.0",
            "6.1.1-rc.1",
            "latest",
            "v6.0.5",
            "6.2",
            "7.0.0",
        ]);
        assert_eq!(select_semver(&t, "6.x", None, None).unwrap(), "6.1.0");
        assert_eq!(
            select_semver(&t, ">=6.1.0-0 <7", None, None).unwrap(),
            "6.1.1-rc.1"
        );
        assert_eq!(select_semver(&t, "*", Some("^v"), None).unwrap(), "v6.0.5");
        assert_eq!(
            select_semver(&t, "<= 5.0.0", None, None)
                .unwrap_err()
                .to_string(),
            "no match found for semver: <= 5.0.0"
        );
        assert!(select_semver(&t, "not a range", None, None).is_err());
        // Helm writes `+` as `_` in tags; read back only for Helm chart layers.
        let helm = tags(&["1.0.0_build.1", "0.9.0"]);
        assert_eq!(
            select_semver(&helm, ">=1.0.0", None, Some(HELM_CHART_CONTENT)).unwrap(),
            "1.0.0_build.1"
        );
        assert!(select_semver(&helm, ">=1.0.0", None, None).is_err());
    }
}
