//! Conformal p-values (contract §11, §13): the core's fitted calibrations
//! (plain, sketched, with a fitted tail, weighted, integrative) held by
//! the extension, so that a transform converts nothing but the scores;
//! the calibration sketch, combinations over detectors and FDR-controlling
//! selection.

use crate::array::map_array;
use crate::prelude::*;
use outprob_core::conformal::calibration::{Calibration, ConformalSpec};
use outprob_core::conformal::combination::{self, Ensemble, Rule};
use outprob_core::conformal::conditional::{monte_carlo_correction, monte_carlo_work};
use outprob_core::conformal::integrative::IntegrativeCalibration;
use outprob_core::conformal::pvalues::Ties;
use outprob_core::conformal::select::{select, Method};
use outprob_core::conformal::sketch::CalibrationSketch;
use outprob_core::conformal::tails::{TailFit, TailSpec};
use outprob_core::conformal::weighted::WeightedCalibration;

type Mapped<'py> = Result<Option<Bound<'py, PyAny>>>;

#[pyclass(frozen, module = "outprob._core", name = "ConformalSpec")]
#[derive(Clone, Copy)]
pub(crate) struct PyConformalSpec(ConformalSpec);

#[pymethods]
impl PyConformalSpec {
    #[new]
    #[pyo3(signature = (**params))]
    fn new(py: Python<'_>, params: Option<&Bound<'_, PyDict>>) -> Result<Self> {
        Ok(PyConformalSpec(keywords(py, params)?))
    }
}

#[pyclass(frozen, module = "outprob._core", name = "ConformalCalibration")]
pub(crate) struct PyConformalCalibration(Calibration);

#[pymethods]
impl PyConformalCalibration {
    #[new]
    #[pyo3(signature = (sorted, *, spec, negate))]
    fn new(
        sorted: PyReadonlyArray1<'_, f64>,
        spec: &PyConformalSpec,
        negate: bool,
    ) -> Result<Self> {
        let fitted = Calibration::from_sorted(sorted.as_slice()?, &spec.0, negate)?;
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
        let fitted = Calibration::from_sketch(&sketch.lock(py), &spec.0, negate)?;
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
    ) -> Mapped<'py> {
        let pvalues = self.0.pvalues(complement);
        Ok(map_array(py, &pvalues, x, out, threads)?.map(|(a, ())| a))
    }
}

locked!(PyConformalSketch(CalibrationSketch) as "ConformalSketch");

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

    fn info(&self, py: Python<'_>) -> ConformalSketchInfo {
        (&*self.lock(py)).into()
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
    let selected = run(py, threads, src.len(), || {
        select(src, alpha, procedure, mask)
    })??;
    Ok(selected.into())
}

#[pyclass(frozen, module = "outprob._core", name = "ConformalTail")]
pub(crate) struct Tail(TailFit);

#[pymethods]
impl Tail {
    #[new]
    #[pyo3(signature = (sorted, **params))]
    fn new(
        py: Python<'_>,
        sorted: PyReadonlyArray1<'_, f64>,
        params: Option<&Bound<'_, PyDict>>,
    ) -> Result<Self> {
        let (s, spec) = (sorted.as_slice()?, keywords::<TailSpec>(py, params)?);
        Ok(Tail(py.detach(|| TailFit::fit(s, &spec))?))
    }

    fn summary(&self) -> TailSummary {
        (&self.0).into()
    }

    #[pyo3(signature = (calibration, x, out = None, *, complement, threads = 0))]
    fn map<'py>(
        &self,
        py: Python<'py>,
        calibration: &PyConformalCalibration,
        x: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
        complement: bool,
        threads: usize,
    ) -> Mapped<'py> {
        let tailed = self.0.pvalues(calibration.0.pvalues(false), complement);
        Ok(map_array(py, &tailed, x, out, threads)?.map(|(a, ())| a))
    }
}

type Scores<'py> = Bound<'py, PyArray1<f64>>;

#[pyfunction]
#[pyo3(signature = (p, k, *, rule, weights = None))]
pub(crate) fn combine_pvalues<'py>(
    py: Python<'py>,
    p: PyReadonlyArray1<'py, f64>,
    k: usize,
    rule: Wrap<Rule>,
    weights: Option<Vec<f64>>,
) -> Result<Scores<'py>> {
    let p = p.as_slice()?;
    let out = py.detach(|| combination::combined(p, k, rule.0, weights.as_deref()))?;
    Ok(PyArray1::from_vec(py, out))
}

#[pyfunction]
#[pyo3(signature = (calibration, test, k, *, negate, combine))]
pub(crate) fn ensemble_scores<'py>(
    py: Python<'py>,
    calibration: PyReadonlyArray1<'py, f64>,
    test: PyReadonlyArray1<'py, f64>,
    k: usize,
    negate: bool,
    combine: Wrap<Ensemble>,
) -> Result<(Scores<'py>, Scores<'py>)> {
    let (c, t) = (calibration.as_slice()?, test.as_slice()?);
    let (c, t) = py.detach(|| combination::ensembled(c, t, k, negate, combine.0))?;
    Ok((PyArray1::from_vec(py, c), PyArray1::from_vec(py, t)))
}

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
        let (s, w, nan) = (scores.as_slice()?, weights.as_slice()?, nan_policy.0);
        let fitted = run(py, 0, 0, || WeightedCalibration::new(s, w, nan, negate))??;
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
        let (a, b, o, nan) = (
            a.as_slice()?,
            b.as_slice()?,
            outliers.as_slice()?,
            nan_policy.0,
        );
        let fitted = run(py, 0, a.len(), || {
            IntegrativeCalibration::new(a, b, o, nan, negate)
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
