//! The comparison's threads.

/// Runs `work` on every item on up to as many threads as there are cores; results keep
/// the items' order. Each thread counts as busy with a snapshot while it works (see
/// [`crate::input::Busy`]).
pub(super) fn parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(threads.max(1)) {
        let results: Vec<R> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|item| {
                    s.spawn(|| {
                        let _busy = crate::input::Busy::new();
                        work(item)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        out.extend(results);
    }
    out
}

/// Runs `work` on a thread of its own and waits for it: so that the memory it allocates
/// comes from an allocator arena that an earlier snapshot's thread gave back rather than
/// from new pages.
pub(super) fn on_own_thread<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| {
        s.spawn(work)
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}
