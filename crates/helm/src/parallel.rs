//! Spreading independent work of one render over the machine's cores.

/// Work smaller than this (in bytes of input) runs on the calling thread: starting threads
/// costs more than it saves.
const PARALLEL_MIN_BYTES: usize = 256 * 1024;

/// `items.iter().map(f)`, in order, with the items split into runs of about equal weight
/// (bytes of input) that run on scoped threads, the calling thread taking the first.
pub(crate) fn map_weighted<T: Sync, R: Send>(
    items: &[T],
    weight: impl Fn(&T) -> usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let total: usize = items.iter().map(&weight).sum();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len());
    if threads < 2 || total < PARALLEL_MIN_BYTES {
        return items.iter().map(f).collect();
    }
    // Cut the items into `threads` runs of about total/threads bytes each.
    let share = total.div_ceil(threads);
    let mut runs = Vec::with_capacity(threads);
    let (mut start, mut acc) = (0, 0);
    for (i, item) in items.iter().enumerate() {
        acc += weight(item);
        if acc >= share && runs.len() + 1 < threads {
            runs.push(&items[start..=i]);
            start = i + 1;
            acc = 0;
        }
    }
    runs.push(&items[start..]);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = runs[1..]
            .iter()
            .map(|run| s.spawn(move || run.iter().map(f).collect::<Vec<R>>()))
            .collect();
        let mut out: Vec<R> = runs[0].iter().map(f).collect();
        for h in handles {
            match h.join() {
                Ok(part) => out.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::map_weighted;

    #[test]
    fn keeps_order_across_runs() {
        let items: Vec<usize> = (0..1000).collect();
        let out = map_weighted(&items, |_| 1024, |i| i * 2);
        assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        let small = map_weighted(&items[..3], |_| 1, |i| i + 1);
        assert_eq!(small, vec![1, 2, 3]);
    }
}
