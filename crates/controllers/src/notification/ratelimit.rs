//! Duplicate-event rate limiting as Flux's event server does it (go-limiter's memory store with
//! one token per key): the first event with a key passes, the same key is refused (429) until
//! the interval that began with its first event has passed. Keys unused for two intervals are
//! swept.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tidegate_api::event::{Event, META_ORIGIN_REVISION, META_REVISION, META_TOKEN};

/// The limiter.
pub struct RateLimiter {
    interval: Duration,
    buckets: Mutex<Buckets>,
}

struct Buckets {
    by_key: HashMap<String, Bucket>,
    swept: Instant,
}

struct Bucket {
    start: Instant,
    last_tick: u64,
    last_used: Instant,
}

impl RateLimiter {
    /// A limiter refilling every `interval` (`--rate-limit-interval`, Flux's default 5m).
    pub fn new(interval: Duration) -> Self {
        RateLimiter {
            interval,
            buckets: Mutex::new(Buckets {
                by_key: HashMap::new(),
                swept: Instant::now(),
            }),
        }
    }

    /// Takes the token of `key`: false when it is spent for the current interval.
    pub fn take(&self, key: &str) -> bool {
        self.take_at(key, Instant::now())
    }

    fn take_at(&self, key: &str, now: Instant) -> bool {
        if self.interval.is_zero() {
            return true;
        }
        let mut b = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if now.duration_since(b.swept) >= self.interval {
            let ttl = self.interval * 2;
            b.by_key
                .retain(|_, v| now.duration_since(v.last_used) < ttl);
            b.swept = now;
        }
        let interval = self.interval.as_nanos().max(1);
        match b.by_key.get_mut(key) {
            None => {
                b.by_key.insert(
                    key.to_string(),
                    Bucket {
                        start: now,
                        last_tick: 0,
                        last_used: now,
                    },
                );
                true
            }
            Some(bucket) => {
                let tick = (now.duration_since(bucket.start).as_nanos() / interval) as u64;
                bucket.last_used = now;
                if tick > bucket.last_tick {
                    bucket.last_tick = tick;
                    true
                } else {
                    false
                }
            }
        }
    }
}

/// Flux's duplicate key: sha256 of `event/name=…/namespace=…/kind=…/message=…` followed by the
/// object group's `originRevision`, `revision` and `token` metadata when present.
pub fn event_key(event: &Event) -> String {
    let o = &event.involved_object;
    let mut key = format!(
        "event/name={}/namespace={}/kind={}/message={}",
        o.name, o.namespace, o.kind, event.message
    );
    let group = o.group();
    for (label, meta) in [
        ("originRevision", META_ORIGIN_REVISION),
        ("revision", META_REVISION),
        ("token", META_TOKEN),
    ] {
        if let Some(v) = event.metadata.get(&format!("{group}/{meta}")) {
            key.push_str(&format!("/{label}={v}"));
        }
    }
    Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_per_key_per_interval() {
        let l = RateLimiter::new(Duration::from_secs(10));
        let t0 = Instant::now();
        assert!(l.take_at("a", t0));
        assert!(!l.take_at("a", t0 + Duration::from_secs(1)));
        assert!(l.take_at("b", t0 + Duration::from_secs(1)));
        assert!(!l.take_at("a", t0 + Duration::from_secs(9)));
        assert!(l.take_at("a", t0 + Duration::from_secs(10)));
        assert!(!l.take_at("a", t0 + Duration::from_secs(19)));
        assert!(l.take_at("a", t0 + Duration::from_secs(21)));
    }
}
