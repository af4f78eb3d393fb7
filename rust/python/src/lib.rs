//! `outprob._core`: the PyO3 binding of `outprob-core`.
//!
//! Every function extracts its arguments as the core's types (arrays as
//! C-contiguous float32/float64 slices — the Python layer guarantees
//! contiguity and native byte order —, names as the core's enums,
//! [`convert`]), releases the GIL for the computation — run in a thread
//! pool of the requested size when the input is large —, and returns the
//! core's results as small frozen classes ([`results`]). Core errors become
//! `ValueError` in one place ([`error`]). `docs/design/binding.md` describes
//! the boundary.

// PyO3 extracts arguments as owned values.
#![allow(clippy::needless_pass_by_value)]

mod convert;
mod error;
mod estimators;
mod fit;
mod maps;
mod metrics;
mod partition;
mod results;
mod spec;
mod streaming;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use outprob_core::numeric::par::PARALLEL_MIN;
use pyo3::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) use error::{Error, Result};

/// A 1-D array of either float type.
pub(crate) enum Floats<'py> {
    F64(PyReadonlyArray1<'py, f64>),
    F32(PyReadonlyArray1<'py, f32>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Floats<'py> {
    type Error = PyErr;

    // By hand rather than derived: the derived impl tries float64 first,
    // and the error it builds for every float32 array costs more than the
    // rest of a small call.
    fn extract(ob: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = ob.cast::<PyArray1<f32>>() {
            return Ok(Floats::F32(a.try_readonly()?));
        }
        Ok(Floats::F64(ob.extract()?))
    }
}

/// Threads to use: `requested` (0: every core), capped by the environment
/// variable `OUTPROB_NUM_THREADS`.
fn thread_count(requested: usize) -> usize {
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

/// One pool per thread count, built on first use and kept.
fn pool(threads: usize) -> PyResult<Arc<ThreadPool>> {
    static POOLS: OnceLock<Pools> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Ok(Arc::clone(p));
    }
    let p = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("outprob-{i}"))
        .build()
        .map_err(|e| {
            pyo3::exceptions::PyValueError::new_err(format!("cannot start {threads} threads: {e}"))
        })?;
    let p = Arc::new(p);
    pools.push((threads, Arc::clone(&p)));
    Ok(p)
}

/// Runs `f` without the GIL: on the calling thread for inputs of `n` <
/// `PARALLEL_MIN` elements (the core stays sequential there), else in the
/// pool of `thread_count(threads)` threads. Results do not depend on it.
pub(crate) fn run<R: Send>(
    py: Python<'_>,
    threads: usize,
    n: usize,
    f: impl FnOnce() -> R + Send,
) -> PyResult<R> {
    if n < PARALLEL_MIN {
        return Ok(py.detach(f));
    }
    let pool = pool(thread_count(threads))?;
    Ok(py.detach(|| pool.install(f)))
}

/// Below this many scores a map into an array keeps the GIL: it takes
/// microseconds, and releasing and retaking the GIL would cost a good part
/// of that. Maps read arrays this small without a borrow because no map of
/// this extension writes into one without the GIL.
pub(crate) const HOLD_GIL_MAX: usize = 4096;

/// Runs a map that writes into a caller's array of `n` elements: with the
/// GIL held below [`HOLD_GIL_MAX`], else as [`run`].
pub(crate) fn run_map<R: Send>(
    py: Python<'_>,
    threads: usize,
    n: usize,
    f: impl FnOnce() -> R + Send,
) -> PyResult<R> {
    if n < HOLD_GIL_MAX {
        return Ok(f());
    }
    run(py, threads, n, f)
}

/// Runs `$body` on the contiguous data of a [`Floats`] (bound to `$s`)
/// without the GIL: in `$threads` threads (see [`run`]), or, without
/// `$threads`, on the calling thread (streaming batches, which are added
/// in order, and the per-partition kernels, which a scheduler runs in
/// parallel already).
macro_rules! with_slice {
    (@ $x:expr, $s:ident, $run:expr) => {
        match $x {
            $crate::Floats::F64(a) => {
                let $s = a.as_slice().map_err($crate::Error::from)?;
                $run
            }
            $crate::Floats::F32(a) => {
                let $s = a.as_slice().map_err($crate::Error::from)?;
                $run
            }
        }
    };
    ($py:expr, $x:expr, |$s:ident| $body:expr) => {
        $crate::with_slice!(@ $x, $s, $py.detach(|| $body))
    };
    ($py:expr, $threads:expr, $x:expr, |$s:ident| $body:expr) => {
        $crate::with_slice!(@ $x, $s, $crate::run($py, $threads, $s.len(), || $body)?)
    };
}
pub(crate) use with_slice;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    results::register(m)?;
    spec::register(m)?;
    estimators::register(m)?;
    fit::register(m)?;
    maps::register(m)?;
    metrics::register(m)?;
    streaming::register(m)?;
    partition::register(m)?;
    Ok(())
}
