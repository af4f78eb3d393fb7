//! `outprob._core`: the PyO3 binding of `outprob-core`.
//!
//! Each function extracts C-contiguous float32/float64 arrays (the Python
//! layer guarantees contiguity and native byte order), releases the GIL for
//! the computation — run in a thread pool of the requested size when the
//! input is large — and maps core errors to `ValueError` in one place.

// PyO3 extracts arguments as owned values.
#![allow(clippy::needless_pass_by_value)]

mod estimators;
mod fit_plan;
mod gamma;
mod gaussian_options;
mod metrics;
mod partition;
mod scaling;
mod streaming;
mod transformations;
mod transformer;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use outprob_core::numeric::par::PARALLEL_MIN;
use outprob_core::Error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex, OnceLock};

/// Every core error is a user input error.
pub(crate) fn to_py(e: Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Parses a name with the core's `FromStr`, mapping its error.
pub(crate) fn parse<T: core::str::FromStr<Err = Error>>(s: &str) -> PyResult<T> {
    s.parse().map_err(to_py)
}

/// A 1-D array of either float type.
pub(crate) enum Floats<'py> {
    F64(PyReadonlyArray1<'py, f64>),
    F32(PyReadonlyArray1<'py, f32>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Floats<'py> {
    type Error = PyErr;

    // By hand rather than derived: the derived impl tries float64 first,
    // and the error it builds for every float32 array cost ~10 µs a call.
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
        .map_err(|e| PyValueError::new_err(format!("cannot start {threads} threads: {e}")))?;
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
/// microseconds, releasing and retaking the GIL would cost a good part of
/// that, and `Transformer::try_apply` reads arrays this small without a
/// borrow because no map of this extension writes into one without the GIL.
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

/// A new result array and the value of the map that filled it.
pub(crate) type Mapped<'py, T, D, R> = (Bound<'py, numpy::PyArray<T, D>>, R);

/// `f(scores, result)` on the data of the C-contiguous, aligned array `a`
/// and of a new array of its shape (returned with `f`'s value): with the GIL
/// held if `hold_gil` (callers pass it for arrays under [`HOLD_GIL_MAX`] and
/// work of microseconds), else without it in `threads` threads. `None` when
/// `a` is mutably borrowed elsewhere or not contiguous (the caller's general
/// path then converts or explains).
pub(crate) fn map_new<'py, T, D, R>(
    py: Python<'py>,
    a: &Bound<'py, numpy::PyArray<T, D>>,
    hold_gil: bool,
    threads: usize,
    f: impl FnOnce(&[T], &mut [T]) -> R + Send,
) -> PyResult<Option<Mapped<'py, T, D, R>>>
where
    T: numpy::Element + Sync + Send,
    D: numpy::ndarray::Dimension,
    R: Send,
{
    use numpy::PyUntypedArrayMethods;
    let out = numpy::PyArray::<T, D>::zeros(py, a.dims(), false);
    // SAFETY: `out` was created just now and has not been shared, so no
    // other reference to its data exists.
    let dst = unsafe { out.as_slice_mut() }.map_err(|e| PyValueError::new_err(e.to_string()))?;
    let value = if hold_gil {
        debug_assert!(a.len() < HOLD_GIL_MAX);
        // SAFETY: the GIL is held until `f` returns, and this extension
        // writes into arrays this small only while holding it (every map
        // into an array keeps the GIL below `HOLD_GIL_MAX`: `run_map`), so
        // no write to `a` can overlap this read.
        let Ok(src) = (unsafe { a.as_slice() }) else {
            return Ok(None);
        };
        f(src, dst)
    } else {
        let Ok(view) = a.try_readonly() else {
            return Ok(None);
        };
        let Ok(src) = view.as_slice() else {
            return Ok(None);
        };
        run(py, threads, src.len(), || f(src, dst))?
    };
    Ok(Some((out, value)))
}

/// `map(src, dst)` from C-contiguous `x` into the preallocated `out` of the
/// same dtype and shape (the transforms of every scaling).
pub(crate) fn map_into<T: numpy::Element + Sync + Send>(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    threads: usize,
    map: impl FnOnce(&[T], &mut [T]) -> Result<(), Error> + Send,
) -> PyResult<()> {
    let x: numpy::PyReadonlyArrayDyn<'_, T> = x.extract()?;
    let mut out: numpy::PyReadwriteArrayDyn<'_, T> = out.extract()?;
    let src = x
        .as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let dst = out
        .as_slice_mut()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    run_map(py, threads, src.len(), || map(src, dst))?.map_err(to_py)
}

/// Runs `$body` on the contiguous data of a [`Floats`] (bound to `$s`)
/// without the GIL, in `$threads` threads.
macro_rules! with_slice {
    ($py:expr, $threads:expr, $x:expr, |$s:ident| $body:expr) => {
        match $x {
            $crate::Floats::F64(a) => {
                let $s = a
                    .as_slice()
                    .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
                $crate::run($py, $threads, $s.len(), || $body)?
            }
            $crate::Floats::F32(a) => {
                let $s = a
                    .as_slice()
                    .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
                $crate::run($py, $threads, $s.len(), || $body)?
            }
        }
    };
}
pub(crate) use with_slice;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    estimators::register(m)?;
    scaling::register(m)?;
    gamma::register(m)?;
    gaussian_options::register(m)?;
    metrics::register(m)?;
    streaming::register(m)?;
    partition::register(m)?;
    transformer::register(m)?;
    fit_plan::register(m)?;
    transformations::register(m)?;
    Ok(())
}
