//! Deterministic data parallelism.
//!
//! Work is cut into chunks of a fixed size and partial results are combined
//! in chunk order, so every result is bitwise the same whatever the number
//! of threads (the caller picks the thread pool; rayon runs the chunks on
//! the pool it is installed in). Small inputs stay on the calling thread.

use rayon::prelude::*;

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
