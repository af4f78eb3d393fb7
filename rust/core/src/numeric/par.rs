//! Deterministic data parallelism, and the thread policy.
//!
//! Work is cut into chunks of a fixed size and partial results are combined
//! in chunk order, so every result is bitwise the same whatever the number
//! of threads (rayon runs the chunks on the pool it is installed in). Small
//! inputs stay on the calling thread.
//!
//! [`with_threads`] is the policy every caller of the core uses: inputs
//! below [`PARALLEL_MIN`] run on the calling thread, larger ones in a pool
//! of the requested size (0: every core), capped by the environment
//! variable `OUTPROB_NUM_THREADS`. Pools are built on first use and kept
//! for the life of the process, one per thread count: starting threads
//! costs more than a small call computes.

use crate::error::Error;
use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Elements per chunk of a parallel reduction or map.
pub const CHUNK: usize = 1 << 16;

/// Inputs shorter than this are processed on the calling thread: below it,
/// handing work to other threads costs more than it saves.
pub const PARALLEL_MIN: usize = 1 << 18;

/// `f` of every chunk of `x`, in chunk order.
pub fn map_chunks<T: Sync, R: Send>(x: &[T], f: impl Fn(usize, &[T]) -> R + Sync + Send) -> Vec<R> {
    if x.len() < PARALLEL_MIN {
        x.chunks(CHUNK)
            .enumerate()
            .map(|(i, c)| f(i * CHUNK, c))
            .collect()
    } else {
        x.par_chunks(CHUNK)
            .enumerate()
            .map(|(i, c)| f(i * CHUNK, c))
            .collect()
    }
}

/// Runs `f(src_chunk, dst_chunk)` over matching chunks of `size` elements
/// of two slices of equal length.
pub fn zip_chunks_of<T: Sync, U: Send>(
    src: &[T],
    dst: &mut [U],
    size: usize,
    f: impl Fn(&[T], &mut [U]) + Sync + Send,
) {
    debug_assert_eq!(src.len(), dst.len());
    if src.len() < PARALLEL_MIN {
        for (s, d) in src.chunks(size).zip(dst.chunks_mut(size)) {
            f(s, d);
        }
    } else {
        src.par_chunks(size)
            .zip(dst.par_chunks_mut(size))
            .for_each(|(s, d)| f(s, d));
    }
}

/// Threads to use: `requested` (0: every core), capped by the environment
/// variable `OUTPROB_NUM_THREADS` (a positive integer; anything else is
/// ignored).
pub fn thread_count(requested: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let cap = std::env::var("OUTPROB_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&v| v > 0)
        .unwrap_or(usize::MAX);
    let want = if requested == 0 { cores } else { requested };
    want.min(cap).max(1)
}

/// Thread pools by thread count.
type Pools = Mutex<Vec<(usize, Arc<ThreadPool>)>>;

/// The pool of `threads` threads, built on first use and kept.
fn pool(threads: usize) -> Result<Arc<ThreadPool>, Error> {
    static POOLS: OnceLock<Pools> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Ok(Arc::clone(p));
    }
    let p = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("outprob-{i}"))
        .build()
        .map_err(|e| Error::invalid("threads", format!("cannot start {threads} threads: {e}")))?;
    let p = Arc::new(p);
    pools.push((threads, Arc::clone(&p)));
    Ok(p)
}

/// Runs `f`, which works on `n` elements: on the calling thread for `n` <
/// [`PARALLEL_MIN`] (the kernels stay sequential there), else in the pool
/// of [`thread_count`]`(threads)` threads. Results do not depend on it.
pub fn with_threads<R: Send>(
    threads: usize,
    n: usize,
    f: impl FnOnce() -> R + Send,
) -> Result<R, Error> {
    if n < PARALLEL_MIN {
        return Ok(f());
    }
    Ok(pool(thread_count(threads))?.install(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_are_kept_and_small_inputs_stay_here() {
        let here = std::thread::current().id();
        assert_eq!(
            with_threads(2, 10, || std::thread::current().id()).unwrap(),
            here
        );
        let name = with_threads(2, PARALLEL_MIN, || {
            std::thread::current().name().map(str::to_owned)
        });
        assert!(name.unwrap().is_some_and(|n| n.starts_with("outprob-")));
        assert!(Arc::ptr_eq(&pool(3).unwrap(), &pool(3).unwrap()));
        assert_eq!(pool(3).unwrap().current_num_threads(), 3);
        assert!(thread_count(0) >= 1 && thread_count(5) <= 5);
    }
}
