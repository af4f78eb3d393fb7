//! The thread pool the profiling examples run in.

/// Runs `f` in a rayon pool of `threads` threads (`None`: rayon's default,
/// which `RAYON_NUM_THREADS` sets), as the Python binding runs every call:
/// called from outside a pool, each parallel step hands its work to the
/// global pool and waits for it, which costs a parallel step's hand-over
/// each time.
pub fn in_pool<R: Send>(threads: Option<usize>, f: impl FnOnce() -> R + Send) -> R {
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        pool = pool.num_threads(t);
    }
    pool.build().expect("a thread pool").install(f)
}
