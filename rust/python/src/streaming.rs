//! Streaming state (contract §9): the KLL sketch, the streaming fit and
//! the exact windows, as Python objects over the core's
//! `streaming::state` types.
//!
//! Each object is frozen and keeps its state behind a `Mutex`: calls from
//! several threads serialise (waiting without the GIL) instead of failing,
//! and a merge copies the other state first, so `a.merge(a)` and two
//! threads merging each other's states cannot deadlock. Stored state
//! crosses as the core's records ([`record_to_dict`]).

use crate::convert::{record_from_dict, record_to_dict, Wrap};
use crate::results::{GaussianFit, LinearFit, SketchInfo, StreamingResult};
use crate::spec::PyGaussianSpec;
use crate::{lock, with_slice, Floats, Result};
use numpy::{IntoPyArray, PyArray1};
use outprob_core::io::record::{Record, Schema};
use outprob_core::sample::NanPolicy;
use outprob_core::streaming::fit::StreamingResult as CoreResult;
use outprob_core::streaming::sketch::{AnySketch, QueriedSketch};
use outprob_core::streaming::state::{StreamingState, WindowState, WINDOW};
use outprob_core::transformations::fit::GaussianFit as CoreFit;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Mutex;

/// DataSketches-compatible KLL sketch (`outprob.streaming.KLLSketch` wraps
/// it).
#[pyclass(frozen, module = "outprob._core", name = "KllSketch")]
pub(crate) struct PyKllSketch(Mutex<QueriedSketch>);

impl PyKllSketch {
    fn wrap(s: AnySketch) -> Self {
        PyKllSketch(Mutex::new(QueriedSketch::new(s)))
    }

    fn read<R>(&self, py: Python<'_>, f: impl FnOnce(&AnySketch) -> R) -> R {
        f(lock(py, &self.0).sketch())
    }
}

#[pymethods]
impl PyKllSketch {
    #[new]
    #[pyo3(signature = (*, k, double, seed))]
    fn new(k: u32, double: bool, seed: u64) -> Result<Self> {
        Ok(PyKllSketch::wrap(AnySketch::new(k, double, seed)?))
    }

    fn update(&self, py: Python<'_>, x: Floats<'_>) -> Result<()> {
        let mut g = lock(py, &self.0);
        let s = g.sketch_mut();
        Ok(with_slice!(py, x, |v| s.update(v))?)
    }

    fn merge(&self, py: Python<'_>, other: &PyKllSketch) -> Result<()> {
        let theirs = other.read(py, Clone::clone);
        Ok(lock(py, &self.0).sketch_mut().merge(&theirs)?)
    }

    fn serialize<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.read(py, AnySketch::serialize))
    }

    #[staticmethod]
    #[pyo3(signature = (data, *, double, seed))]
    fn deserialize(data: &[u8], double: bool, seed: u64) -> Result<Self> {
        Ok(PyKllSketch::wrap(AnySketch::deserialize(
            data, double, seed,
        )?))
    }

    #[pyo3(signature = (ranks, *, inclusive))]
    fn quantiles(&self, py: Python<'_>, ranks: Vec<f64>, inclusive: bool) -> Result<Vec<f64>> {
        Ok(lock(py, &self.0).quantiles(&ranks, inclusive)?)
    }

    #[pyo3(signature = (items, *, inclusive))]
    fn ranks(&self, py: Python<'_>, items: Vec<f64>, inclusive: bool) -> Result<Vec<f64>> {
        Ok(lock(py, &self.0).ranks(&items, inclusive)?)
    }

    /// Retained items (ascending) and their weights.
    #[allow(clippy::type_complexity)]
    fn weighted_items<'py>(
        &self,
        py: Python<'py>,
    ) -> Result<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<u64>>)> {
        let (values, weights) = lock(py, &self.0).weighted_items()?;
        Ok((values.into_pyarray(py), weights.into_pyarray(py)))
    }

    #[pyo3(signature = (*, pmf))]
    fn normalized_rank_error(&self, py: Python<'_>, pmf: bool) -> f64 {
        self.read(py, |s| s.normalized_rank_error(pmf))
    }

    /// The sketch's size, counts, mode, item type, seed and extremes.
    fn info(&self, py: Python<'_>) -> SketchInfo {
        self.read(py, |s| SketchInfo {
            k: s.k(),
            min_k: s.min_k(),
            n: s.n(),
            num_retained: s.num_retained(),
            is_estimation_mode: s.is_estimation_mode(),
            is_double: s.is_double(),
            seed: s.seed(),
            extremes: s.extremes(),
        })
    }

    fn copy(&self, py: Python<'_>) -> PyKllSketch {
        PyKllSketch::wrap(self.read(py, Clone::clone))
    }
}

/// DataSketches' ε(k).
#[pyfunction]
#[pyo3(signature = (k, *, pmf))]
pub(crate) fn kll_normalized_rank_error(k: u32, pmf: bool) -> Result<f64> {
    Ok(outprob_core::streaming::kll::normalized_rank_error(k, pmf)?)
}

/// The running state of a streaming Gaussian or linear fit of one or more
/// score columns (the core's `StreamingState`).
#[pyclass(frozen, module = "outprob._core", name = "StreamingState")]
pub(crate) struct PyStreamingState(Mutex<StreamingState>);

/// Each column's stored state as a dict.
fn dicts<'py>(py: Python<'py>, records: &[Record]) -> PyResult<Vec<Bound<'py, PyDict>>> {
    records.iter().map(|r| record_to_dict(py, r)).collect()
}

/// Stored columns read by their schema.
fn records(parts: &[Bound<'_, PyDict>], schema: &'static Schema) -> PyResult<Vec<Record>> {
    parts.iter().map(|d| record_from_dict(d, schema)).collect()
}

fn results(r: &[CoreResult]) -> Vec<StreamingResult> {
    r.iter().map(StreamingResult::from).collect()
}

#[pymethods]
impl PyStreamingState {
    #[new]
    #[pyo3(signature = (*, spec, k, seed, columns, linear = false))]
    fn new(spec: &PyGaussianSpec, k: u32, seed: u64, columns: usize, linear: bool) -> Result<Self> {
        let state = StreamingState::new(spec.core, k, seed, columns, linear)?;
        Ok(PyStreamingState(Mutex::new(state)))
    }

    /// Adds a 1-D batch (one column) or a C-contiguous (n, columns) batch,
    /// whole or not at all.
    fn update(&self, py: Python<'_>, x: Floats<'_>) -> Result<()> {
        let (mut g, shape) = (lock(py, &self.0), x.shape());
        let state = &mut *g;
        Ok(with_slice!(py, x, |s| state.update(s, &shape))?)
    }

    /// `update`, then the fit of each column, as one step.
    fn update_and_fit(&self, py: Python<'_>, x: Floats<'_>) -> Result<Vec<StreamingResult>> {
        let (mut g, shape) = (lock(py, &self.0), x.shape());
        let state = &mut *g;
        Ok(results(
            &with_slice!(py, x, |s| state.update_and_fit(s, &shape))?
        ))
    }

    fn merge(&self, py: Python<'_>, other: &PyStreamingState) -> Result<()> {
        let theirs = lock(py, &other.0).clone();
        Ok(lock(py, &self.0).merge(&theirs)?)
    }

    /// `merge`, then the fit of each column, as one step.
    fn merge_and_fit(
        &self,
        py: Python<'_>,
        other: &PyStreamingState,
    ) -> Result<Vec<StreamingResult>> {
        let theirs = lock(py, &other.0).clone();
        let mut g = lock(py, &self.0);
        let state = &mut *g;
        Ok(results(&py.detach(|| state.merge_and_fit(&theirs))?))
    }

    /// Scores seen, per column.
    fn n(&self, py: Python<'_>) -> Vec<u64> {
        lock(py, &self.0).n()
    }

    /// The fit of each column.
    fn results(&self, py: Python<'_>) -> Result<Vec<StreamingResult>> {
        let g = lock(py, &self.0);
        let state = &*g;
        Ok(results(&py.detach(|| state.results())?))
    }

    /// The fit `outprob stream` maps its next batch with, per column, given
    /// `n` at the last fit (`None`: none yet): `None` while the last fit
    /// stands (the core's `stream_fit`).
    #[pyo3(signature = (last))]
    fn stream_fit(
        &self,
        py: Python<'_>,
        last: Option<u64>,
    ) -> Result<Vec<Option<StreamingResult>>> {
        let g = lock(py, &self.0);
        let state = &*g;
        let fits = py.detach(|| state.stream_fit(last))?;
        Ok(fits
            .iter()
            .map(|r| r.as_ref().map(StreamingResult::from))
            .collect())
    }

    /// Each column's state as plain data (the core's record of a column).
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        dicts(py, &lock(py, &self.0).to_records())
    }

    /// A state from [`parts`](Self::parts), checked by the core.
    #[staticmethod]
    #[pyo3(signature = (*, spec, parts, linear = false))]
    fn from_parts(
        spec: &PyGaussianSpec,
        parts: Vec<Bound<'_, PyDict>>,
        linear: bool,
    ) -> Result<Self> {
        let columns = records(&parts, StreamingState::column_schema(linear))?;
        let state = StreamingState::from_records(spec.core, &columns, linear)?;
        Ok(PyStreamingState(Mutex::new(state)))
    }
}

/// The most recent W scores of one or more columns, refitted exactly (the
/// core's `WindowState`).
#[pyclass(frozen, module = "outprob._core", name = "WindowState")]
pub(crate) struct PyWindowState(Mutex<WindowState>);

fn gaussian_fits(fits: &[CoreFit]) -> Vec<GaussianFit> {
    fits.iter().map(|f| GaussianFit::of(f, None)).collect()
}

#[pymethods]
impl PyWindowState {
    #[new]
    #[pyo3(signature = (*, size, refit_every, columns))]
    fn new(size: usize, refit_every: usize, columns: usize) -> Result<Self> {
        let state = WindowState::new(size, refit_every, columns)?;
        Ok(PyWindowState(Mutex::new(state)))
    }

    /// Adds a 1-D batch (one column) or a C-contiguous (n, columns) batch,
    /// whole or not at all.
    #[pyo3(signature = (x, *, nan_policy))]
    fn update(&self, py: Python<'_>, x: Floats<'_>, nan_policy: Wrap<NanPolicy>) -> Result<()> {
        let (mut g, shape) = (lock(py, &self.0), x.shape());
        let windows = &mut *g;
        Ok(with_slice!(py, x, |s| windows.update(
            s,
            &shape,
            nan_policy.0
        ))?)
    }

    /// `update`, then, when `refit` or when due, the Gaussian fit of each
    /// column's window (None when not refitted), as one step.
    #[pyo3(signature = (x, *, nan_policy, spec, refit))]
    fn update_and_fit_gaussian(
        &self,
        py: Python<'_>,
        x: Floats<'_>,
        nan_policy: Wrap<NanPolicy>,
        spec: &PyGaussianSpec,
        refit: bool,
    ) -> Result<Option<Vec<GaussianFit>>> {
        let (mut g, shape, nan) = (lock(py, &self.0), x.shape(), nan_policy.0);
        let windows = &mut *g;
        let fits = with_slice!(py, x, |s| windows
            .update_and_refit(s, &shape, nan, &spec.core, refit))?;
        Ok(fits.as_deref().map(gaussian_fits))
    }

    /// Whether `refit_every` scores arrived since the last refit (in any
    /// column).
    fn due(&self, py: Python<'_>) -> bool {
        lock(py, &self.0).due()
    }

    /// Scores seen, per column.
    fn seen(&self, py: Python<'_>) -> Vec<u64> {
        lock(py, &self.0).seen()
    }

    /// The Gaussian fit of each column's window.
    #[pyo3(signature = (*, spec))]
    fn fit_gaussian(&self, py: Python<'_>, spec: &PyGaussianSpec) -> Result<Vec<GaussianFit>> {
        let mut g = lock(py, &self.0);
        let windows = &mut *g;
        Ok(gaussian_fits(
            &py.detach(|| windows.fit_gaussian(&spec.core))?,
        ))
    }

    /// The linear fit of each column's window.
    #[pyo3(signature = (*, negate))]
    fn fit_linear(&self, py: Python<'_>, negate: bool) -> Result<Vec<LinearFit>> {
        let fits = lock(py, &self.0).fit_linear(negate)?;
        Ok(fits.into_iter().map(LinearFit::from).collect())
    }

    /// Each column's window as plain data (the core's record of a window).
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        dicts(py, &lock(py, &self.0).to_records())
    }

    /// A state from [`parts`](Self::parts), checked by the core.
    #[staticmethod]
    #[pyo3(signature = (*, size, refit_every, parts))]
    fn from_parts(size: usize, refit_every: usize, parts: Vec<Bound<'_, PyDict>>) -> Result<Self> {
        let windows = WindowState::from_records(size, refit_every, &records(&parts, WINDOW)?)?;
        Ok(PyWindowState(Mutex::new(windows)))
    }
}
