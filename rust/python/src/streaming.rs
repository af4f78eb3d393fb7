//! Streaming state (contract §9): the KLL sketch, the streaming Gaussian
//! fit and the exact window, as Python objects.
//!
//! Each object is frozen and keeps its state behind a `Mutex`: calls from
//! several threads serialise (waiting without the GIL) instead of failing,
//! and a merge copies the other state first, so `a.merge(a)` and two
//! threads merging each other's states cannot deadlock. The `*_and_fit`
//! methods change and fit under one lock, as one step (`atomically`): a
//! scaler never keeps scores whose fit it refused.

use crate::convert::{item, Wrap};
use crate::results::{GaussianFit, LinearFit, SketchInfo, StreamingResult};
use crate::spec::PyGaussianSpec;
use crate::{lock, with_slice, Floats, Result};
use numpy::{IntoPyArray, PyArray1};
use outprob_core::error::Error as CoreError;
use outprob_core::sample::NanPolicy;
use outprob_core::streaming::columns::{atomically, merge_columns, update_columns};
use outprob_core::streaming::fit::{
    result_from_sketch as result_from_core_sketch, StreamingGaussian, StreamingResult as CoreResult,
};
use outprob_core::streaming::kll::serde::serialize;
use outprob_core::streaming::kll::KllSketch;
use outprob_core::streaming::sketch::{AnySketch, QueriedSketch};
use outprob_core::streaming::stored::MomentsParts;
use outprob_core::streaming::window::Window;
use outprob_core::transformations::fit::{GaussianFit as CoreFit, GaussianSpec as CoreSpec};
use pyo3::exceptions::PyValueError;
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

/// The running state of a streaming Gaussian fit of one or more score
/// columns.
#[pyclass(frozen, module = "outprob._core", name = "StreamingState")]
pub(crate) struct PyStreamingState(Mutex<Vec<StreamingGaussian>>);

fn moments_dict(py: Python<'_>, p: MomentsParts) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("n", p.n)?;
    d.set_item("sum_negative", p.sum_negative)?;
    d.set_item("sum_limbs", p.sum_limbs)?;
    d.set_item("shift", p.shift)?;
    d.set_item("k", p.k)?;
    d.set_item("dsum", p.dsum.to_vec())?;
    d.set_item("dsq", p.dsq.to_vec())?;
    d.set_item("min", p.min)?;
    d.set_item("max", p.max)?;
    Ok(d)
}

fn moments_parts(d: &Bound<'_, PyDict>) -> PyResult<MomentsParts> {
    Ok(MomentsParts {
        n: item(d, "n")?,
        sum_negative: item(d, "sum_negative")?,
        sum_limbs: item(d, "sum_limbs")?,
        shift: item(d, "shift")?,
        k: item(d, "k")?,
        dsum: item(d, "dsum")?,
        dsq: item(d, "dsq")?,
        min: item(d, "min")?,
        max: item(d, "max")?,
    })
}

#[pymethods]
impl PyStreamingState {
    #[new]
    #[pyo3(signature = (*, spec, k, seed, columns))]
    fn new(spec: &PyGaussianSpec, k: u32, seed: u64, columns: usize) -> Result<Self> {
        let state = StreamingGaussian::new(spec.core, k, seed)?;
        Ok(PyStreamingState(Mutex::new(vec![state; columns])))
    }

    /// Adds a 1-D batch (one column) or a C-contiguous (n, columns) batch,
    /// whole or not at all.
    fn update(&self, py: Python<'_>, x: Floats<'_>) -> Result<()> {
        let mut g = lock(py, &self.0);
        let nan = g.first().map_or(NanPolicy::Omit, |s| s.spec().nan_policy);
        let (states, shape) = (&mut g[..], x.shape());
        Ok(with_slice!(py, x, |s| update_columns(
            states,
            s,
            &shape,
            nan,
            StreamingGaussian::update
        ))?)
    }

    /// `update`, then the fit of each column, as one step: a batch whose
    /// fit is refused changes no column.
    fn update_and_fit(&self, py: Python<'_>, x: Floats<'_>) -> Result<Vec<StreamingResult>> {
        let mut g = lock(py, &self.0);
        let nan = g.first().map_or(NanPolicy::Omit, |s| s.spec().nan_policy);
        let (states, shape) = (&mut g[..], x.shape());
        let results = with_slice!(py, x, |s| atomically(
            states,
            |st| update_columns(st, s, &shape, nan, StreamingGaussian::update),
            |st| fit_all(st)
        ))?;
        Ok(results.iter().map(StreamingResult::from).collect())
    }

    fn merge(&self, py: Python<'_>, other: &PyStreamingState) -> Result<()> {
        let theirs = lock(py, &other.0).clone();
        Ok(merge_columns(&mut lock(py, &self.0), &theirs)?)
    }

    /// `merge`, then the fit of each column, as one step: a merge whose
    /// fit is refused changes no column.
    fn merge_and_fit(
        &self,
        py: Python<'_>,
        other: &PyStreamingState,
    ) -> Result<Vec<StreamingResult>> {
        let theirs = lock(py, &other.0).clone();
        let mut g = lock(py, &self.0);
        let states = &mut g[..];
        let results =
            py.detach(|| atomically(states, |st| merge_columns(st, &theirs), |st| fit_all(st)))?;
        Ok(results.iter().map(StreamingResult::from).collect())
    }

    /// Scores seen, per column.
    fn n(&self, py: Python<'_>) -> Vec<u64> {
        lock(py, &self.0).iter().map(StreamingGaussian::n).collect()
    }

    /// The fit of each column.
    fn results(&self, py: Python<'_>) -> Result<Vec<StreamingResult>> {
        let g = lock(py, &self.0);
        let results = py.detach(|| fit_all(&g))?;
        Ok(results.iter().map(StreamingResult::from).collect())
    }

    /// Each column's state as plain data: moments, the sketch's bytes
    /// (None without a sketch) and its seed.
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let g = lock(py, &self.0);
        g.iter()
            .map(|s| {
                let d = PyDict::new(py);
                d.set_item("moments", moments_dict(py, s.moments().to_parts())?)?;
                d.set_item(
                    "sketch",
                    s.sketch().map(|k| PyBytes::new(py, &serialize(k))),
                )?;
                d.set_item("seed", s.sketch().map_or(0, KllSketch::seed))?;
                Ok(d)
            })
            .collect()
    }

    /// A state from [`parts`](Self::parts), checked by the core.
    #[staticmethod]
    #[pyo3(signature = (*, spec, parts))]
    fn from_parts(spec: &PyGaussianSpec, parts: Vec<Bound<'_, PyDict>>) -> Result<Self> {
        let columns = parts
            .iter()
            .map(|d| {
                let moments: Bound<'_, PyDict> = item(d, "moments")?;
                let sketch: Option<Vec<u8>> = item(d, "sketch")?;
                let seed: u64 = item(d, "seed")?;
                Ok(StreamingGaussian::from_parts(
                    spec.core,
                    &moments_parts(&moments)?,
                    sketch.as_deref(),
                    seed,
                )?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PyStreamingState(Mutex::new(columns)))
    }
}

/// The fit of every column.
fn fit_all(states: &[StreamingGaussian]) -> std::result::Result<Vec<CoreResult>, CoreError> {
    states.iter().map(StreamingGaussian::result).collect()
}

/// The Gaussian fit of every window (each resets its refit counter).
fn refit_all(
    windows: &mut [Window<f64>],
    spec: &CoreSpec,
) -> std::result::Result<Vec<CoreFit>, CoreError> {
    windows.iter_mut().map(|w| w.fit_gaussian(spec)).collect()
}

/// The fit of `spec` from a doubles sketch of the oriented scores alone
/// (a Spark aggregate's), or `None` when the fit reads the exact moments.
#[pyfunction]
#[pyo3(signature = (sketch, *, spec))]
pub(crate) fn result_from_sketch(
    py: Python<'_>,
    sketch: &PyKllSketch,
    spec: &PyGaussianSpec,
) -> Result<Option<StreamingResult>> {
    let r: Result<Option<CoreResult>> = sketch.read(py, |s| match s {
        AnySketch::Double(s) => Ok(result_from_core_sketch(&spec.core, s)?),
        AnySketch::Float(_) => Err(PyValueError::new_err(
            "a fit from a sketch needs a doubles sketch (kll_doubles_sketch), got a floats sketch",
        )
        .into()),
    });
    Ok(r?.as_ref().map(StreamingResult::from))
}

/// The most recent W scores of one or more columns, refitted exactly.
#[pyclass(frozen, module = "outprob._core", name = "WindowState")]
pub(crate) struct PyWindowState(Mutex<Vec<Window<f64>>>);

#[pymethods]
impl PyWindowState {
    #[new]
    #[pyo3(signature = (*, size, refit_every, columns))]
    fn new(size: usize, refit_every: usize, columns: usize) -> Result<Self> {
        Ok(PyWindowState(Mutex::new(vec![
            Window::new(
                size,
                refit_every
            )?;
            columns
        ])))
    }

    /// Adds a 1-D batch (one column) or a C-contiguous (n, columns) batch,
    /// whole or not at all.
    #[pyo3(signature = (x, *, nan_policy))]
    fn update(&self, py: Python<'_>, x: Floats<'_>, nan_policy: Wrap<NanPolicy>) -> Result<()> {
        let mut g = lock(py, &self.0);
        let (windows, shape, nan) = (&mut g[..], x.shape(), nan_policy.0);
        Ok(with_slice!(py, x, |s| update_columns(
            windows,
            s,
            &shape,
            nan,
            |w, v| w.update(v, nan)
        ))?)
    }

    /// `update`, then, when `refit` or when due, the Gaussian fit of each
    /// column's window (None when not refitted), as one step: a batch
    /// whose refit is refused changes no column.
    #[pyo3(signature = (x, *, nan_policy, spec, refit))]
    fn update_and_fit_gaussian(
        &self,
        py: Python<'_>,
        x: Floats<'_>,
        nan_policy: Wrap<NanPolicy>,
        spec: &PyGaussianSpec,
        refit: bool,
    ) -> Result<Option<Vec<GaussianFit>>> {
        let mut g = lock(py, &self.0);
        let (windows, shape, nan) = (&mut g[..], x.shape(), nan_policy.0);
        let fits = with_slice!(py, x, |s| atomically(
            windows,
            |ws| update_columns(ws, s, &shape, nan, |w, v| w.update(v, nan)),
            |ws| {
                if refit || ws.iter().any(Window::due) {
                    refit_all(ws, &spec.core).map(Some)
                } else {
                    Ok(None)
                }
            }
        ))?;
        Ok(fits.map(|f| f.iter().map(|f| GaussianFit::of(f, None)).collect()))
    }

    /// Whether `refit_every` scores arrived since the last refit (in any
    /// column).
    fn due(&self, py: Python<'_>) -> bool {
        lock(py, &self.0).iter().any(Window::due)
    }

    /// Scores seen, per column.
    fn seen(&self, py: Python<'_>) -> Vec<u64> {
        lock(py, &self.0).iter().map(Window::seen).collect()
    }

    /// The Gaussian fit of each column's window (every column's refit
    /// counter reset, or none when a fit is refused).
    #[pyo3(signature = (*, spec))]
    fn fit_gaussian(&self, py: Python<'_>, spec: &PyGaussianSpec) -> Result<Vec<GaussianFit>> {
        let mut g = lock(py, &self.0);
        let windows = &mut g[..];
        let fits = py.detach(|| atomically(windows, |_| Ok(()), |ws| refit_all(ws, &spec.core)))?;
        Ok(fits.iter().map(|f| GaussianFit::of(f, None)).collect())
    }

    /// The linear fit of each column's window.
    #[pyo3(signature = (*, negate))]
    fn fit_linear(&self, py: Python<'_>, negate: bool) -> Result<Vec<LinearFit>> {
        let mut g = lock(py, &self.0);
        let fits = g
            .iter_mut()
            .map(|w| w.fit_linear(negate))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(fits
            .iter()
            .map(|l| LinearFit {
                min: l.min,
                max: l.max,
            })
            .collect())
    }

    /// Each column's window as plain data: `since_refit`, `seen` and its
    /// scores, oldest first.
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let g = lock(py, &self.0);
        g.iter()
            .map(|w| {
                let d = PyDict::new(py);
                d.set_item("since_refit", w.since_refit())?;
                d.set_item("seen", w.seen())?;
                d.set_item("values", w.values().to_vec().into_pyarray(py))?;
                Ok(d)
            })
            .collect()
    }

    /// A state from [`parts`](Self::parts), checked by the core.
    #[staticmethod]
    #[pyo3(signature = (*, size, refit_every, parts))]
    fn from_parts(size: usize, refit_every: usize, parts: Vec<Bound<'_, PyDict>>) -> Result<Self> {
        let windows = parts
            .iter()
            .map(|d| {
                let values: Vec<f64> = item(d, "values")?;
                Ok(Window::from_parts(
                    size,
                    refit_every,
                    item(d, "since_refit")?,
                    item(d, "seen")?,
                    &values,
                )?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PyWindowState(Mutex::new(windows)))
    }
}
