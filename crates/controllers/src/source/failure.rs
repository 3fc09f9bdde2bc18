//! How a source reconcile step fails: the condition it sets and how to go on.

use std::time::Duration;

use tidegate_api::conditions::{Polarity, RECONCILING, STALLED};

pub(crate) const ARTIFACT_IN_STORAGE: &str = "ArtifactInStorage";
pub(crate) const FETCH_FAILED: &str = "FetchFailed";
pub(crate) const BUILD_FAILED: &str = "BuildFailed";
pub(crate) const STORAGE_FAILED: &str = "StorageOperationFailed";
pub(crate) const INCLUDE_UNAVAILABLE: &str = "IncludeUnavailable";
pub(crate) const ARTIFACT_OUTDATED: &str = "ArtifactOutdated";
pub(crate) const SOURCE_VERIFIED: &str = "SourceVerified";

/// Flux's summary order for Ready.
pub(crate) const SUMMARY: &[(&str, Polarity)] = &[
    (STORAGE_FAILED, Polarity::Negative),
    (FETCH_FAILED, Polarity::Negative),
    (BUILD_FAILED, Polarity::Negative),
    (INCLUDE_UNAVAILABLE, Polarity::Negative),
    (ARTIFACT_OUTDATED, Polarity::Negative),
    (ARTIFACT_IN_STORAGE, Polarity::Positive),
    (SOURCE_VERIFIED, Polarity::Positive),
    (STALLED, Polarity::Negative),
    (RECONCILING, Polarity::Negative),
];

/// How a failed step ends the reconcile.
pub(crate) enum Retry {
    /// Retry with backoff.
    Backoff,
    /// Needs a spec change: Stalled, no retry.
    Stall,
    /// Waiting on something else: retry after the delay, no error.
    Wait(Duration),
}

/// A failed step: the condition it sets and how to go on.
pub(crate) struct Failure {
    pub(crate) condition: &'static str,
    pub(crate) reason: String,
    pub(crate) message: String,
    pub(crate) retry: Retry,
}

impl Failure {
    pub(crate) fn new(condition: &'static str, reason: &str, message: String) -> Self {
        Failure {
            condition,
            reason: reason.to_string(),
            message,
            retry: Retry::Backoff,
        }
    }
    pub(crate) fn stall(mut self) -> Self {
        self.retry = Retry::Stall;
        self
    }
    pub(crate) fn wait(mut self, d: Duration) -> Self {
        self.retry = Retry::Wait(d);
        self
    }
}
