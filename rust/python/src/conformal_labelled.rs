//! Weighted and integrative conformal p-values (contract §13): the core's
//! fitted calibrations held by the extension; float64 arrays in, p-values
//! written into a float64 array the caller allocates.

use crate::convert::Wrap;
use crate::{run, Result};
use numpy::{PyReadonlyArray1, PyReadwriteArray1};
use outprob_core::conformal::integrative::IntegrativeCalibration;
use outprob_core::conformal::pvalues::Ties;
use outprob_core::conformal::weighted::WeightedCalibration;
use outprob_core::sample::NanPolicy;
use pyo3::prelude::*;

/// Weighted calibration scores (the core's [`WeightedCalibration`]).
#[pyclass(frozen, module = "outprob._core", name = "WeightedCalibration")]
pub(crate) struct Weighted(WeightedCalibration);

#[pymethods]
impl Weighted {
    #[new]
    #[pyo3(signature = (scores, weights, *, nan_policy, negate))]
    fn new(
        py: Python<'_>,
        scores: PyReadonlyArray1<'_, f64>,
        weights: PyReadonlyArray1<'_, f64>,
        nan_policy: Wrap<NanPolicy>,
        negate: bool,
    ) -> Result<Self> {
        let (s, w) = (scores.as_slice()?, weights.as_slice()?);
        let fitted = run(py, 0, 0, || {
            WeightedCalibration::new(s, w, nan_policy.0, negate)
        })??;
        Ok(Weighted(fitted))
    }

    #[getter]
    fn sizes(&self) -> (usize, f64) {
        (self.0.n(), self.0.total())
    }

    #[pyo3(signature = (scores, weights, out, *, tie_break, seed, complement, threads = 0))]
    #[allow(clippy::too_many_arguments)]
    fn pvalues(
        &self,
        py: Python<'_>,
        scores: PyReadonlyArray1<'_, f64>,
        weights: PyReadonlyArray1<'_, f64>,
        mut out: PyReadwriteArray1<'_, f64>,
        tie_break: Wrap<Ties>,
        seed: u64,
        complement: bool,
        threads: usize,
    ) -> Result<()> {
        let (s, w, o) = (scores.as_slice()?, weights.as_slice()?, out.as_slice_mut()?);
        let ties = tie_break.0.with_seed(seed);
        Ok(run(py, threads, s.len(), || {
            self.0.pvalues(s, w, ties, complement, o)
        })??)
    }
}

/// Integrative calibration (the core's [`IntegrativeCalibration`]).
#[pyclass(frozen, module = "outprob._core", name = "IntegrativeCalibration")]
pub(crate) struct Integrative(IntegrativeCalibration);

#[pymethods]
impl Integrative {
    #[new]
    #[pyo3(signature = (a, b, outliers, *, nan_policy, negate))]
    fn new(
        py: Python<'_>,
        a: PyReadonlyArray1<'_, f64>,
        b: PyReadonlyArray1<'_, f64>,
        outliers: PyReadonlyArray1<'_, f64>,
        nan_policy: Wrap<NanPolicy>,
        negate: bool,
    ) -> Result<Self> {
        let (a, b, o) = (a.as_slice()?, b.as_slice()?, outliers.as_slice()?);
        let fitted = run(py, 0, a.len(), || {
            IntegrativeCalibration::new(a, b, o, nan_policy.0, negate)
        })??;
        Ok(Integrative(fitted))
    }

    #[getter]
    fn sizes(&self) -> (usize, usize) {
        self.0.sizes()
    }

    #[pyo3(signature = (a, b, out, *, complement))]
    fn pvalues(
        &self,
        py: Python<'_>,
        a: PyReadonlyArray1<'_, f64>,
        b: PyReadonlyArray1<'_, f64>,
        mut out: PyReadwriteArray1<'_, f64>,
        complement: bool,
    ) -> Result<()> {
        let (a, b, o) = (a.as_slice()?, b.as_slice()?, out.as_slice_mut()?);
        Ok(run(py, 0, a.len(), || {
            self.0.pvalues(a, b, complement, o)
        })??)
    }
}
