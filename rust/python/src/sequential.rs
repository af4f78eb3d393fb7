//! Online decisions on a stream (contract §12) as Python objects: an
//! online FDR rule, an exchangeability martingale and online conformal
//! p-values.
//!
//! Each is frozen and keeps its core state behind a `Mutex` (as the
//! streaming states): calls from several threads run one after another,
//! each batch whole. The methods extract the p-values or scores, release
//! the GIL, call the core and convert its results; `parts`/`from_parts`
//! carry the state as a dict, which the core checks.

use crate::convert::{item, Wrap};
use crate::Result;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use outprob_core::sequential::martingale::{
    Kind, Martingale, OnAlarm, Parts as MartingaleParts, Path, Spec, Statistic,
};
use outprob_core::sequential::online_fdr::{Method, OnlineFdr, Parts as FdrParts, Settings};
use outprob_core::sequential::online_pvalues::{OnlinePvalues, Parts as PvalueParts};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyDict;
use std::sync::{Mutex, MutexGuard, PoisonError};

fn lock<'a, T>(py: Python<'_>, m: &'a Mutex<T>) -> MutexGuard<'a, T> {
    m.lock_py_attached(py)
        .unwrap_or_else(PoisonError::into_inner)
}

/// An online FDR rule (`outprob.OnlineFDR` wraps it).
#[pyclass(frozen, module = "outprob._core", name = "OnlineFdrState")]
pub(crate) struct PyOnlineFdr(Mutex<OnlineFdr>);

type Decisions<'py> = Bound<'py, PyArray1<bool>>;

#[pymethods]
impl PyOnlineFdr {
    #[new]
    #[pyo3(signature = (method, *, alpha, w0, lam, tau, gamma))]
    fn new(
        method: Wrap<Method>,
        alpha: f64,
        w0: Option<f64>,
        lam: Option<f64>,
        tau: Option<f64>,
        gamma: Option<Vec<f64>>,
    ) -> Result<Self> {
        let s = Settings::new(method.0, alpha, w0, lam, tau, gamma)?;
        Ok(PyOnlineFdr(Mutex::new(OnlineFdr::new(s))))
    }

    /// One decision per p-value, in order.
    fn decide<'py>(
        &self,
        py: Python<'py>,
        p: PyReadonlyArray1<'py, f64>,
    ) -> Result<Decisions<'py>> {
        let p = p.as_slice()?;
        let mut g = lock(py, &self.0);
        let mut out = vec![false; p.len()];
        let rule = &mut *g;
        py.detach(|| rule.decide(p, &mut out, None))?;
        Ok(out.into_pyarray(py))
    }

    /// The decisions and the level α_t of each p-value.
    fn decide_with_levels<'py>(
        &self,
        py: Python<'py>,
        p: PyReadonlyArray1<'py, f64>,
    ) -> Result<(Decisions<'py>, Bound<'py, PyArray1<f64>>)> {
        let p = p.as_slice()?;
        let mut g = lock(py, &self.0);
        let (mut out, mut levels) = (vec![false; p.len()], vec![0.0; p.len()]);
        let rule = &mut *g;
        py.detach(|| rule.decide(p, &mut out, Some(&mut levels)))?;
        Ok((out.into_pyarray(py), levels.into_pyarray(py)))
    }

    /// The level the next p-value will be compared with.
    fn next_level(&self, py: Python<'_>) -> f64 {
        lock(py, &self.0).next_level()
    }

    /// The rule's parameters, defaults filled in.
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let g = lock(py, &self.0);
        let s = g.settings();
        let d = PyDict::new(py);
        d.set_item("method", s.method.name())?;
        d.set_item("alpha", s.alpha)?;
        d.set_item("w0", (s.method != Method::Lond).then_some(s.w0))?;
        d.set_item(
            "lam",
            matches!(s.method, Method::Saffron | Method::Addis).then_some(s.lam),
        )?;
        d.set_item("tau", (s.method == Method::Addis).then_some(s.tau))?;
        d.set_item("gamma", s.gamma.terms().map(<[f64]>::to_vec))?;
        Ok(d)
    }

    /// The state as plain data.
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = lock(py, &self.0).parts();
        let d = PyDict::new(py);
        d.set_item("n", p.n)?;
        d.set_item("clock", p.clock)?;
        d.set_item("rejections", p.rejections)?;
        d.set_item("first", p.first)?;
        d.set_item("stamps", p.stamps)?;
        d.set_item("counts", p.counts)?;
        Ok(d)
    }

    /// A rule from its settings and [`parts`](Self::parts), checked by the
    /// core.
    #[staticmethod]
    #[pyo3(signature = (settings, parts))]
    fn from_parts(settings: &Bound<'_, PyDict>, parts: &Bound<'_, PyDict>) -> Result<Self> {
        let method: String = item(settings, "method")?;
        let s = Settings::new(
            method.parse()?,
            item(settings, "alpha")?,
            item(settings, "w0")?,
            item(settings, "lam")?,
            item(settings, "tau")?,
            item(settings, "gamma")?,
        )?;
        let p = FdrParts {
            n: item(parts, "n")?,
            clock: item(parts, "clock")?,
            rejections: item(parts, "rejections")?,
            first: item(parts, "first")?,
            stamps: item(parts, "stamps")?,
            counts: item(parts, "counts")?,
        };
        Ok(PyOnlineFdr(Mutex::new(OnlineFdr::from_parts(s, &p)?)))
    }
}

/// An exchangeability martingale (`outprob.Martingale` wraps it).
#[pyclass(frozen, module = "outprob._core", name = "MartingaleState")]
pub(crate) struct PyMartingale(Mutex<Martingale>);

type Arrays<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<bool>>,
);

#[allow(clippy::too_many_arguments)]
fn spec(
    kind: Wrap<Kind>,
    jump: f64,
    epsilon: f64,
    n_grid: usize,
    min_epsilon: f64,
    threshold: Option<f64>,
    statistic: Wrap<Statistic>,
    on_alarm: Wrap<OnAlarm>,
) -> Spec {
    Spec {
        kind: kind.0,
        jump,
        epsilon,
        n_grid,
        min_epsilon,
        threshold,
        statistic: statistic.0,
        on_alarm: on_alarm.0,
    }
}

#[pymethods]
impl PyMartingale {
    #[new]
    #[pyo3(signature = (kind, *, jump, epsilon, n_grid, min_epsilon, threshold, statistic, on_alarm))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        kind: Wrap<Kind>,
        jump: f64,
        epsilon: f64,
        n_grid: usize,
        min_epsilon: f64,
        threshold: Option<f64>,
        statistic: Wrap<Statistic>,
        on_alarm: Wrap<OnAlarm>,
    ) -> Result<Self> {
        let s = spec(
            kind,
            jump,
            epsilon,
            n_grid,
            min_epsilon,
            threshold,
            statistic,
            on_alarm,
        );
        Ok(PyMartingale(Mutex::new(Martingale::new(s)?)))
    }

    /// ln M, ln C, ln R and the alarm flag after each p-value.
    fn update<'py>(&self, py: Python<'py>, p: PyReadonlyArray1<'py, f64>) -> Result<Arrays<'py>> {
        let p = p.as_slice()?;
        let n = p.len();
        let mut g = lock(py, &self.0);
        let (mut m, mut c, mut r, mut a) =
            (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![false; n]);
        let path = Path {
            log_martingale: &mut m,
            log_cusum: &mut c,
            log_shiryaev_roberts: &mut r,
            alarm: &mut a,
        };
        let state = &mut *g;
        py.detach(|| state.update(p, path))?;
        Ok((
            m.into_pyarray(py),
            c.into_pyarray(py),
            r.into_pyarray(py),
            a.into_pyarray(py),
        ))
    }

    /// Back to the state at construction.
    fn reset(&self, py: Python<'_>) {
        lock(py, &self.0).reset();
    }

    /// The state as plain data.
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = lock(py, &self.0).parts();
        let d = PyDict::new(py);
        d.set_item("n", p.n)?;
        d.set_item("steps", p.steps)?;
        d.set_item("log_sum", p.log_sum)?;
        d.set_item("log_sum_error", p.log_sum_error)?;
        d.set_item("components", p.components.to_vec())?;
        d.set_item("log_martingale", p.log_martingale)?;
        d.set_item("log_martingale_error", p.log_martingale_error)?;
        d.set_item("log_cusum", p.log_cusum)?;
        d.set_item("log_shiryaev_roberts", p.log_shiryaev_roberts)?;
        d.set_item("alarms", p.alarms)?;
        d.set_item("first_alarm", p.first_alarm)?;
        Ok(d)
    }

    /// A martingale from its parameters and [`parts`](Self::parts), checked
    /// by the core.
    #[staticmethod]
    #[pyo3(signature = (kind, parts, *, jump, epsilon, n_grid, min_epsilon, threshold, statistic, on_alarm))]
    #[allow(clippy::too_many_arguments)]
    fn from_parts(
        kind: Wrap<Kind>,
        parts: &Bound<'_, PyDict>,
        jump: f64,
        epsilon: f64,
        n_grid: usize,
        min_epsilon: f64,
        threshold: Option<f64>,
        statistic: Wrap<Statistic>,
        on_alarm: Wrap<OnAlarm>,
    ) -> Result<Self> {
        let s = spec(
            kind,
            jump,
            epsilon,
            n_grid,
            min_epsilon,
            threshold,
            statistic,
            on_alarm,
        );
        let components: Vec<f64> = item(parts, "components")?;
        let components: [f64; 3] = components.try_into().map_err(|_| {
            pyo3::exceptions::PyValueError::new_err("state: \"components\" needs 3 numbers")
        })?;
        let p = MartingaleParts {
            n: item(parts, "n")?,
            steps: item(parts, "steps")?,
            log_sum: item(parts, "log_sum")?,
            log_sum_error: item(parts, "log_sum_error")?,
            components,
            log_martingale: item(parts, "log_martingale")?,
            log_martingale_error: item(parts, "log_martingale_error")?,
            log_cusum: item(parts, "log_cusum")?,
            log_shiryaev_roberts: item(parts, "log_shiryaev_roberts")?,
            alarms: item(parts, "alarms")?,
            first_alarm: item(parts, "first_alarm")?,
        };
        Ok(PyMartingale(Mutex::new(Martingale::from_parts(s, &p)?)))
    }
}

/// Online conformal p-values (`outprob.OnlineConformal` wraps it).
#[pyclass(frozen, module = "outprob._core", name = "OnlinePvaluesState")]
pub(crate) struct PyOnlinePvalues(Mutex<OnlinePvalues>);

#[pymethods]
impl PyOnlinePvalues {
    #[new]
    #[pyo3(signature = (*, seed, negate, smoothed))]
    fn new(seed: u64, negate: bool, smoothed: bool) -> Self {
        PyOnlinePvalues(Mutex::new(OnlinePvalues::new(seed, negate, smoothed)))
    }

    /// Each score's p-value against the earlier ones; `uniforms` replace
    /// the tie-breaking draws.
    #[pyo3(signature = (scores, uniforms=None))]
    fn pvalues<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray1<'py, f64>,
        uniforms: Option<PyReadonlyArray1<'py, f64>>,
    ) -> Result<Bound<'py, PyArray1<f64>>> {
        let s = scores.as_slice()?;
        let u = uniforms
            .as_ref()
            .map(PyReadonlyArray1::as_slice)
            .transpose()?;
        let mut g = lock(py, &self.0);
        let mut out = vec![0.0; s.len()];
        let state = &mut *g;
        py.detach(|| state.pvalues(s, u, &mut out))?;
        Ok(out.into_pyarray(py))
    }

    /// Adds scores without their p-values.
    fn update(&self, py: Python<'_>, scores: PyReadonlyArray1<'_, f64>) -> Result<()> {
        let s = scores.as_slice()?;
        let mut g = lock(py, &self.0);
        let state = &mut *g;
        Ok(py.detach(|| state.update(s))?)
    }

    /// Scores seen.
    fn n(&self, py: Python<'_>) -> u64 {
        lock(py, &self.0).n()
    }

    /// The distinct scores (ascending), their counts and n.
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let g = lock(py, &self.0);
        let state = &*g;
        let p = py.detach(|| state.parts());
        let d = PyDict::new(py);
        d.set_item("n", p.n)?;
        d.set_item("scores", p.scores.into_pyarray(py))?;
        d.set_item("counts", p.counts.into_pyarray(py))?;
        Ok(d)
    }

    /// A state from [`parts`](Self::parts), checked by the core.
    #[staticmethod]
    #[pyo3(signature = (parts, *, seed, negate, smoothed))]
    fn from_parts(
        parts: &Bound<'_, PyDict>,
        seed: u64,
        negate: bool,
        smoothed: bool,
    ) -> Result<Self> {
        let p = PvalueParts {
            n: item(parts, "n")?,
            scores: item(parts, "scores")?,
            counts: item(parts, "counts")?,
        };
        let state = OnlinePvalues::from_parts(seed, negate, smoothed, &p)?;
        Ok(PyOnlinePvalues(Mutex::new(state)))
    }
}
