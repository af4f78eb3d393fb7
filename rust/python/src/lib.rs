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

mod array;
mod conformal;
mod conformal_labelled;
mod convert;
mod error;
mod estimators;
mod fit;
mod lines;
mod maps;
mod metrics;
mod partition;
mod results;
mod sequential;
mod spec;
mod streaming;
mod tails;

use outprob_core::numeric::par::PARALLEL_MIN;
use pyo3::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) use array::Floats;
pub(crate) use error::{Error, Result};

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

/// The module: each file's functions and classes.
#[pymodule]
mod _core {
    #[pymodule_export]
    use crate::conformal::{
        conformal_mc_correction, conformal_select, Calibration, ConformalSketch, ConformalSpec,
    };
    #[pymodule_export]
    use crate::conformal_labelled::{Integrative, Weighted};
    #[pymodule_export]
    use crate::estimators::{
        m_estimate, mean, median, niqr, nmad, quantile, std_dev, trimmed_std, upper_trimmed_mean,
    };
    #[pymodule_export]
    use crate::fit::{
        fit_gamma, fit_gaussian, fit_linear, fit_mixture, fit_rank, fit_sigmoid, fit_top_k,
        fit_transform_gaussian, fit_transform_linear, fit_transform_rank,
    };
    #[pymodule_export]
    use crate::lines::{format_lines, PyLineReader};
    #[pymodule_export]
    use crate::maps::{_erf, _gamma_pq, PyMap};
    #[pymodule_export]
    use crate::metrics::{
        bin_edges, brier_and_sharpness, evaluate, refinement_and_calibration, reliability_curve,
    };
    #[pymodule_export]
    use crate::partition::{
        exact_total, from_order_key, m_iterate, median_value, order_key, part_census, part_collect,
        part_histogram, part_m_sums, part_pretransform, part_squares_below, part_sum_below,
        quantile_ranks, quantile_value, select_exact,
    };
    #[pymodule_export]
    use crate::results::{
        Census, Evaluation, GammaFit, GaussianFit, LinearFit, MEstimate, MixtureFit,
        ReliabilityCurve, SelectionFit, SigmoidFit, SketchInfo, Strata, StreamingResult, SumPart,
        TopKFit,
    };
    #[pymodule_export]
    use crate::sequential::{PyMartingale, PyOnlineFdr, PyOnlinePvalues};
    #[pymodule_export]
    use crate::spec::Spec;
    #[pymodule_export]
    use crate::streaming::{
        kll_normalized_rank_error, result_from_sketch, PyKll, PyStreaming, PyWindow,
    };
    #[pymodule_export]
    use crate::tails::{combine_pvalues, ensemble_scores, Tail};
}
