//! Spreading independent work of one render over the machine's cores, and leaving the
//! memory of a one-shot process to the operating system.

static ONE_SHOT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Declares the process one-shot (`tidegate helm template`): it ends after one render, so the
/// render's parse trees and loaded files are left for the operating system to reclaim instead
/// of being freed piece by piece (some 4 ms of kube-prometheus-stack's render). A long-lived
/// process (the controllers) never calls this.
pub fn set_one_shot() {
    ONE_SHOT.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether [`set_one_shot`] was called.
pub(crate) fn is_one_shot() -> bool {
    ONE_SHOT.load(std::sync::atomic::Ordering::Relaxed)
}

/// Drops `value`, or leaves it in place when the process is one-shot.
pub(crate) fn dispose<T>(value: T) {
    if ONE_SHOT.load(std::sync::atomic::Ordering::Relaxed) {
        std::mem::forget(value);
    } else {
        drop(value);
    }
}

/// The cores this process may use, asked once (the answer reads cgroup files).
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Work smaller than this (in bytes of input) runs on the calling thread: starting threads
/// costs more than it saves.
pub(crate) const PARALLEL_MIN_BYTES: usize = 256 * 1024;

/// `items.iter().map(f)`, in order, spread over the cores: each thread takes the heaviest
/// item not yet taken (so the long items start first and a thread that drew short items
/// takes more of them), the calling thread working too.
pub(crate) fn map_weighted<T: Sync, R: Send>(
    items: &[T],
    weight: impl Fn(&T) -> usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let weights: Vec<usize> = items.iter().map(&weight).collect();
    let total: usize = weights.iter().sum();
    let threads = cores().min(items.len());
    if threads < 2 || total < PARALLEL_MIN_BYTES {
        return items.iter().map(f).collect();
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(weights[i]));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let claimed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&i) = order.get(claimed) else {
                return done;
            };
            done.push((i, f(&items[i])));
        }
    };
    let work = &work;
    let mut all: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut all = work();
        for h in handles {
            match h.join() {
                Ok(part) => all.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    all.sort_unstable_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::map_weighted;

    #[test]
    fn keeps_order_across_runs() {
        let items: Vec<usize> = (0..1000).collect();
        let out = map_weighted(&items, |_| 1024, |i| i * 2);
        assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        let uneven = map_weighted(&items, |i| (i % 7) * 1024, |i| i * 3);
        assert_eq!(uneven, items.iter().map(|i| i * 3).collect::<Vec<_>>());
        let small = map_weighted(&items[..3], |_| 1, |i| i + 1);
        assert_eq!(small, vec![1, 2, 3]);
    }
}
