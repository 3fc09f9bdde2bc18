//! How a GitRepository reconcile step fails: the condition it sets and how to go on.

use std::time::Duration;

use tidegate_api::conditions::{Polarity, RECONCILING, STALLED};

pub(super) const ARTIFACT_IN_STORAGE: &str = "ArtifactInStorage";
pub(super) const FETCH_FAILED: &str = "FetchFailed";
pub(super) const STORAGE_FAILED: &str = "StorageOperationFailed";
pub(super) const INCLUDE_UNAVAILABLE: &str = "IncludeUnavailable";
pub(super) const ARTIFACT_OUTDATED: &str = "ArtifactOutdated";
pub(super) const SOURCE_VERIFIED: &str = "SourceVerified";

/// Flux's summary order for Ready.
pub(super) const SUMMARY: &[(&str, Polarity)] = &[
    (STORAGE_FAILED, Polarity::Negative),
    (FETCH_FAILED, Polarity::Negative),
    (INCLUDE_UNAVAILABLE, Polarity::Negative),
    (ARTIFACT_OUTDATED, Polarity::Negative),
    (ARTIFACT_IN_STORAGE, Polarity::Positive),
    (SOURCE_VERIFIED, Polarity::Positive),
    (STALLED, Polarity::Negative),
    (RECONCILING, Polarity::Negative),
];

/// How a failed step ends the reconcile.
pub(super) enum Retry {
    /// Retry with backoff.
    Backoff,
    /// Needs a spec change: Stalled, no retry.
    Stall,
    /// Waiting on something else: retry after the delay, no error.
    Wait(Duration),
}

/// A failed step: the condition it sets and how to go on.
pub(super) struct Failure {
    pub(super) condition: &'static str,
    pub(super) reason: String,
    pub(super) message: String,
    pub(super) retry: Retry,
}

impl Failure {
    pub(super) fn new(condition: &'static str, reason: &str, message: String) -> Self {
        Failure {
            condition,
            reason: reason.to_string(),
            message,
            retry: Retry::Backoff,
        }
    }
    pub(super) fn stall(mut self) -> Self {
        self.retry = Retry::Stall;
        self
    }
    pub(super) fn wait(mut self, d: Duration) -> Self {
        self.retry = Retry::Wait(d);
        self
    }
}
