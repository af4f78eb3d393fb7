//! `outprob._core`: the PyO3 binding of `outprob-core`.
//!
//! Every function extracts its arguments as the core's types ([`convert`],
//! [`array`]), releases the GIL for the computation ([`run`]) and returns
//! the core's results as records ([`results`]); core errors become
//! `ValueError` in one place ([`error`]); classes with state lock it by one
//! helper ([`Locked`]). `docs/design/binding.md` describes the boundary.

// PyO3 extracts arguments as owned values.
#![allow(clippy::needless_pass_by_value)]

mod array;
mod conformal;
mod convert;
mod distributed;
mod error;
mod estimators;
mod fit;
mod results;
mod sequential;
mod streaming;
mod text;
mod text_stream;

use outprob_core::io::record::Stored;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyDict;
use std::sync::{Mutex, MutexGuard, PoisonError};

pub(crate) use array::Floats;
pub(crate) use error::{Error, Result};

/// What the files of the binding share.
mod prelude {
    pub(crate) use crate::convert::{keywords, record_from_dict, record_to_dict, Wrap};
    pub(crate) use crate::results::*;
    pub(crate) use crate::{locked, run, with_slice, Floats, Locked, Result};
    pub(crate) use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadwriteArray1};
    pub(crate) use outprob_core::sample::NanPolicy;
    pub(crate) use pyo3::prelude::*;
    pub(crate) use pyo3::types::{PyBytes, PyDict};
}

/// Runs `f` without the GIL by the core's thread policy
/// (`numeric::par::with_threads`: the calling thread below its size, else
/// a kept pool of `threads` threads).
pub(crate) fn run<R: Send>(
    py: Python<'_>,
    threads: usize,
    n: usize,
    f: impl FnOnce() -> R + Send,
) -> Result<R> {
    if threads != 0 {
        outprob_core::limits::THREADS.check_usize(threads)?;
    }
    Ok(py.detach(|| outprob_core::numeric::par::with_threads(threads, n, f))?)
}

/// A class over a core state behind a `Mutex` (see [`locked!`]): calls
/// from several threads serialise, waiting without the GIL.
pub(crate) trait Locked {
    type State: Send;

    fn mutex(&self) -> &Mutex<Self::State>;

    /// The state, locked. A poisoned lock still holds a consistent state:
    /// the core changes a state whole or not at all.
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, Self::State> {
        let m = self.mutex();
        m.lock_py_attached(py)
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// `f` on the locked state, without the GIL.
    fn detached<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Self::State) -> R + Send) -> R {
        let mut guard = self.lock(py);
        let state = &mut *guard;
        py.detach(|| f(state))
    }

    /// The state as a dict of the core's record (the stored-state
    /// protocol, [`Stored`]), made without the GIL.
    fn stored<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>>
    where
        Self::State: Stored,
    {
        convert::record_to_dict(py, &self.detached(py, |s| s.to_record()))
    }

    /// The state replaced by a stored dict, checked by the core.
    fn restored(&self, py: Python<'_>, state: &Bound<'_, PyDict>) -> Result<()>
    where
        Self::State: Stored,
    {
        let record = convert::record_from_dict(state, Self::State::STATE)?;
        Ok(self.detached(py, |s| s.restore(&record))?)
    }

    /// A copy of the state. A merge copies the other state first and only
    /// then locks its own, so that `a.merge(a)` and two threads merging
    /// each other's states cannot deadlock.
    fn copy(&self, py: Python<'_>) -> Self::State
    where
        Self::State: Clone,
    {
        self.lock(py).clone()
    }
}

/// A frozen class `$py`, exported as `$name`, over the core state `$core`
/// behind a `Mutex` ([`Locked`]); `$py::wrap` makes one.
macro_rules! locked {
    ($(#[$doc:meta])* $py:ident($core:ty) as $name:literal) => {
        $(#[$doc])*
        #[pyo3::pyclass(frozen, module = "outprob._core", name = $name)]
        pub(crate) struct $py(std::sync::Mutex<$core>);

        impl $py {
            #[allow(dead_code)]
            fn wrap(state: $core) -> Self {
                $py(std::sync::Mutex::new(state))
            }
        }

        impl $crate::Locked for $py {
            type State = $core;

            fn mutex(&self) -> &std::sync::Mutex<$core> {
                &self.0
            }
        }
    };
}
pub(crate) use locked;

/// Runs `$body` on the contiguous data of a [`Floats`] (bound to `$s`):
/// without the GIL in `$threads` threads ([`run`]); without `$threads`, on
/// the calling thread (streaming batches, which are added in order, and
/// the per-partition kernels, which a scheduler runs in parallel already);
/// without `$py`, with the GIL (the body releases it, as
/// [`Locked::detached`] does).
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
    ($x:expr, |$s:ident| $body:expr) => {
        $crate::with_slice!(@ $x, $s, $body)
    };
    ($py:expr, $x:expr, |$s:ident| $body:expr) => {
        $crate::with_slice!(@ $x, $s, $py.detach(|| $body))
    };
    ($py:expr, $threads:expr, $x:expr, |$s:ident| $body:expr) => {
        $crate::with_slice!(@ $x, $s, $crate::run($py, $threads, $s.len(), || $body)?)
    };
}
pub(crate) use with_slice;

#[pyfunction]
fn limits() -> Vec<(&'static str, &'static str, u64, u64)> {
    let all = outprob_core::limits::ALL.iter();
    all.map(|(key, l)| (*key, l.name, l.min, l.max)).collect()
}

#[pymodule]
mod _core {
    #[pymodule_export]
    use crate::text_stream::PyTextStream;
    #[pymodule_export]
    use crate::{
        conformal::{
            combine_pvalues, conformal_mc_correction, conformal_select, ensemble_scores,
            Integrative, PyConformalCalibration, PyConformalSketch, PyConformalSpec, Tail,
            Weighted,
        },
        distributed::{PyColumnPlan, PyPartial, PyPass},
        estimators::{
            bin_edges, brier_and_sharpness, check_scores, evaluate, m_estimate, mean, median, niqr,
            nmad, quantile, refinement_and_calibration, reliability_curve, std_dev, trimmed_std,
            upper_trimmed_mean,
        },
        fit::{
            fit_gamma, fit_gaussian, fit_linear, fit_mixture, fit_rank, fit_sigmoid, fit_top_k,
            fit_transform_gaussian, fit_transform_linear, fit_transform_rank, PyFittedMap,
            PyGaussianSpec,
        },
        limits,
        results::{
            ColumnFit, ConformalSketchInfo, DecayedMoments, DriftEvent, DriftInfo, Evaluation,
            GammaFit, GaussianFit, LinearFit, MEstimate, MixtureFit, ReliabilityCurve,
            SelectionFit, SigmoidFit, SketchInfo, Strata, StreamingResult, TailSummary, TopKFit,
        },
        sequential::{
            drift_check_decayed, drift_decayed_gaussian, PyDecayedFit, PyDriftPolicy, PyMartingale,
            PyOnlineFdr, PyOnlinePvalues,
        },
        streaming::{kll_normalized_rank_error, PyKllSketch, PyStreamingState, PyWindowState},
        text::{csv_layout, PyLineReader},
    };
}
