//! Chart indexes kept between HelmChart reconciles (Flux's `--helm-cache-*`): the reduced
//! form of a HelmRepository's stored index, keyed by the artifact's digest (content-addressed,
//! so a new index is a new key and nothing goes stale), bounded in count and bytes, each
//! dropped after `ttl` without use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tidegate_helm::repo::ChartIndex;

/// The most bytes of reduced indexes kept, whatever `--helm-cache-max-size` says.
pub const MAX_BYTES: usize = 64 << 20;

/// A bounded cache of chart indexes.
pub(super) struct IndexCache {
    max_items: usize,
    max_bytes: usize,
    ttl: Duration,
    inner: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    index: Arc<ChartIndex>,
    size: usize,
    used: Instant,
}

static CACHE: OnceLock<IndexCache> = OnceLock::new();

/// The process's cache, set up by the first HelmChart controller started (none when
/// `max_items` is 0).
pub(super) fn init(max_items: usize, ttl: Duration) {
    if max_items > 0 {
        let _ = CACHE.set(IndexCache::new(max_items, MAX_BYTES, ttl));
    }
}

/// The process's cache, if one was set up.
pub(super) fn global() -> Option<&'static IndexCache> {
    CACHE.get()
}

impl IndexCache {
    pub fn new(max_items: usize, max_bytes: usize, ttl: Duration) -> Self {
        IndexCache {
            max_items,
            max_bytes,
            ttl,
            inner: Mutex::default(),
        }
    }

    /// The index stored under `digest`, if kept and not expired.
    pub fn get(&self, digest: &str) -> Option<Arc<ChartIndex>> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        inner.retain(|_, e| now.duration_since(e.used) < self.ttl);
        let entry = inner.get_mut(digest)?;
        entry.used = now;
        Some(entry.index.clone())
    }

    /// Keeps `index` under `digest`, dropping the least recently used entries to stay within
    /// the bounds; an index larger than the byte bound is not kept.
    pub fn insert(&self, digest: &str, index: Arc<ChartIndex>) {
        if self.max_items == 0 {
            return;
        }
        let size = index.approximate_size();
        if size > self.max_bytes {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.insert(
            digest.to_string(),
            Entry {
                index,
                size,
                used: Instant::now(),
            },
        );
        loop {
            let total: usize = inner.values().map(|e| e.size).sum();
            if inner.len() <= self.max_items && total <= self.max_bytes {
                break;
            }
            let Some(oldest) = inner
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            inner.remove(&oldest);
        }
    }

    /// Number of indexes kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(versions: usize) -> Arc<ChartIndex> {
        let mut i = ChartIndex::default();
        i.entries.insert(
            "app".into(),
            (0..versions)
                .map(|n| tidegate_helm::repo::IndexedVersion {
                    version: format!("1.0.{n}"),
                    created: String::new(),
                    urls: vec![format!("app-1.0.{n}.tgz")],
                })
                .collect(),
        );
        Arc::new(i)
    }

    #[test]
    fn bounded_in_count_bytes_and_time() {
        let cache = IndexCache::new(2, 1 << 20, Duration::from_secs(60));
        cache.insert("a", index(1));
        cache.insert("b", index(1));
        assert!(cache.get("a").is_some()); // a is now the most recent
        cache.insert("c", index(1));
        assert_eq!(cache.len(), 2);
        assert!(cache.get("b").is_none(), "least recently used dropped");
        assert!(cache.get("a").is_some() && cache.get("c").is_some());
        // Too large to keep at all.
        let small = IndexCache::new(10, 100, Duration::from_secs(60));
        small.insert("big", index(100));
        assert!(small.get("big").is_none());
        // Disabled.
        let off = IndexCache::new(0, 1 << 20, Duration::from_secs(60));
        off.insert("a", index(1));
        assert!(off.get("a").is_none());
        // Expired.
        let short = IndexCache::new(10, 1 << 20, Duration::from_millis(1));
        short.insert("a", index(1));
        std::thread::sleep(Duration::from_millis(5));
        assert!(short.get("a").is_none());
    }
}
