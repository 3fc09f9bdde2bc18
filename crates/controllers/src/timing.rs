//! When to reconcile again: Flux's interval jitter and per-object exponential backoff.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// `interval` scaled by a random factor in `[1 - p, 1 + p]` (`percent` = p × 100; Flux's
/// `--interval-jitter-percentage`, default 5).
pub fn jittered(interval: Duration, percent: u8) -> Duration {
    if percent == 0 {
        return interval;
    }
    let p = f64::from(percent.min(99)) / 100.0;
    let factor = 1.0 + p * (2.0 * rand::random::<f64>() - 1.0);
    interval
        .checked_mul(2)
        .map_or(interval, |_| interval.mul_f64(factor))
}

/// Failure counts per object for exponential backoff (Flux: 750ms doubling up to 15m).
#[derive(Debug, Default)]
pub struct Backoff {
    failures: Mutex<HashMap<String, u32>>,
}

/// First retry delay.
pub const MIN_RETRY: Duration = Duration::from_millis(750);
/// Longest retry delay.
pub const MAX_RETRY: Duration = Duration::from_secs(15 * 60);

impl Backoff {
    /// Records a failure of `key` and returns how long to wait before retrying.
    pub fn failed(&self, key: &str) -> Duration {
        let mut map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let n = map.entry(key.to_string()).or_insert(0);
        let delay = MIN_RETRY
            .saturating_mul(1u32 << (*n).min(20))
            .min(MAX_RETRY);
        *n = n.saturating_add(1);
        delay
    }

    /// Forgets the failures of `key` after a success.
    pub fn succeeded(&self, key: &str) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_in_bounds_and_backoff_doubles() {
        for _ in 0..200 {
            let d = jittered(Duration::from_secs(100), 5);
            assert!(
                d >= Duration::from_secs(95) && d <= Duration::from_secs(105),
                "{d:?}"
            );
        }
        assert_eq!(jittered(Duration::from_secs(7), 0), Duration::from_secs(7));
        let b = Backoff::default();
        assert_eq!(b.failed("a"), Duration::from_millis(750));
        assert_eq!(b.failed("a"), Duration::from_millis(1500));
        for _ in 0..30 {
            b.failed("a");
        }
        assert_eq!(b.failed("a"), MAX_RETRY);
        b.succeeded("a");
        assert_eq!(b.failed("a"), Duration::from_millis(750));
    }
}
