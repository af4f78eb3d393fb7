//! Conformal p-values, their calibration-conditional adjustments, the
//! calibration sketch and FDR-controlling selection (contract §11).
//!
//! The options cross as one spec class ([`PyConformalSpec`], its names
//! parsed by the core's `FromStr`), the calibration is the core's fitted
//! map held by the extension ([`PyConformalCalibration`], built once) so that a
//! transform converts nothing but the scores, and a selection's figures
//! come back as a record ([`crate::results::SelectionFit`]).

use crate::array::{map_array, Floats};
use crate::convert::{keywords, Wrap};
use crate::results::SelectionFit;
use crate::{locked, run, with_slice, Locked, Result};
use numpy::{PyReadonlyArray1, PyReadwriteArray1};
use outprob_core::conformal::calibration;
use outprob_core::conformal::conditional::{monte_carlo_correction, monte_carlo_work};
use outprob_core::conformal::select::{select, Method};
use outprob_core::conformal::sketch::CalibrationSketch;
use outprob_core::sample::NanPolicy;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// The options of a p-value map (contract §11).
#[pyclass(frozen, module = "outprob._core", name = "ConformalSpec")]
#[derive(Clone, Copy)]
pub(crate) struct PyConformalSpec(calibration::ConformalSpec);

#[pymethods]
impl PyConformalSpec {
    #[new]
    #[pyo3(signature = (**params))]
    fn new(py: Python<'_>, params: Option<&Bound<'_, PyDict>>) -> Result<Self> {
        Ok(PyConformalSpec(keywords(py, params)?))
    }
}

/// Calibration scores (sorted, oriented) or a sketch's weighted sample,
/// with its index and the adjustment the spec asks for.
#[pyclass(frozen, module = "outprob._core", name = "ConformalCalibration")]
pub(crate) struct PyConformalCalibration(pub(crate) calibration::Calibration);

#[pymethods]
impl PyConformalCalibration {
    #[new]
    #[pyo3(signature = (sorted, *, spec, negate))]
    fn new(
        sorted: PyReadonlyArray1<'_, f64>,
        spec: &PyConformalSpec,
        negate: bool,
    ) -> Result<Self> {
        let fitted = calibration::Calibration::from_sorted(sorted.as_slice()?, &spec.0, negate)?;
        Ok(PyConformalCalibration(fitted))
    }

    #[staticmethod]
    #[pyo3(signature = (sketch, *, spec, negate))]
    fn from_sketch(
        py: Python<'_>,
        sketch: &PyConformalSketch,
        spec: &PyConformalSpec,
        negate: bool,
    ) -> Result<Self> {
        let fitted = calibration::Calibration::from_sketch(&sketch.lock(py), &spec.0, negate)?;
        Ok(PyConformalCalibration(fitted))
    }

    #[getter]
    fn n(&self) -> u64 {
        self.0.n()
    }

    #[pyo3(signature = (x, out = None, *, complement, threads = 0))]
    fn map<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
        complement: bool,
        threads: usize,
    ) -> Result<Option<Bound<'py, PyAny>>> {
        let pvalues = self.0.pvalues(complement);
        Ok(map_array(py, &pvalues, x, out, threads)?.map(|(a, ())| a))
    }
}

locked!(
    /// A KLL sketch of oriented calibration scores (DataSketches' bytes).
    PyConformalSketch(CalibrationSketch) as "ConformalSketch"
);

#[pymethods]
impl PyConformalSketch {
    #[new]
    #[pyo3(signature = (*, k, seed))]
    fn new(k: u16, seed: u64) -> Result<Self> {
        Ok(Self::wrap(CalibrationSketch::new(k, seed)?))
    }

    #[pyo3(signature = (x, *, nan_policy, negate))]
    fn update(
        &self,
        py: Python<'_>,
        x: Floats<'_>,
        nan_policy: Wrap<NanPolicy>,
        negate: bool,
    ) -> Result<usize> {
        let nan = nan_policy.0;
        Ok(with_slice!(x, |v| self.detached(py, |s| s.update(v, nan, negate)))?)
    }

    fn merge(&self, py: Python<'_>, other: &PyConformalSketch) {
        let theirs = other.copy(py);
        self.lock(py).merge(&theirs);
    }

    fn serialize<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.lock(py).serialize())
    }

    #[staticmethod]
    #[pyo3(signature = (data, *, seed))]
    fn deserialize(data: &[u8], seed: u64) -> Result<Self> {
        Ok(Self::wrap(CalibrationSketch::deserialize(data, seed)?))
    }

    #[getter]
    fn n(&self, py: Python<'_>) -> u64 {
        self.lock(py).n()
    }

    #[getter]
    fn k(&self, py: Python<'_>) -> u16 {
        self.lock(py).k()
    }

    #[getter]
    fn rank_error(&self, py: Python<'_>) -> f64 {
        self.lock(py).rank_error()
    }
}

#[pyfunction]
#[pyo3(signature = (n, *, delta, simulations, seed, threads = 0))]
pub(crate) fn conformal_mc_correction(
    py: Python<'_>,
    n: u64,
    delta: f64,
    simulations: usize,
    seed: u64,
    threads: usize,
) -> Result<f64> {
    let work = monte_carlo_work(n, simulations);
    Ok(run(py, threads, work, || {
        monte_carlo_correction(n, delta, simulations, seed)
    })??)
}

#[pyfunction]
#[pyo3(signature = (p, out, *, alpha, method, lam, threads = 0))]
pub(crate) fn conformal_select(
    py: Python<'_>,
    p: PyReadonlyArray1<'_, f64>,
    mut out: PyReadwriteArray1<'_, bool>,
    alpha: f64,
    method: Wrap<Method>,
    lam: f64,
    threads: usize,
) -> Result<SelectionFit> {
    let (src, mask) = (p.as_slice()?, out.as_slice_mut()?);
    let procedure = method.0.procedure(lam);
    Ok(run(py, threads, src.len(), || {
        select(src, alpha, procedure, mask)
    })??
    .into())
}
