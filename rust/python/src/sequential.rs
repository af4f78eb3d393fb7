//! Online decisions on a stream (contract §12): an online FDR rule, an
//! exchangeability martingale, online conformal p-values (each batch
//! whole), the exponentially decayed fit and the refit policy after a
//! drift (which `outprob.RefitOnDrift` asks where the next stop is, tells
//! what went through and where the monitor alarmed, and which records its
//! refits). Stored state crosses as the core's records (dicts here), the
//! decayed fit's as the core's bytes; the core checks both.

use crate::prelude::*;
use outprob_core::sequential::decayed::DecayedFit;
use outprob_core::sequential::drift::{self, Policy, Refit};
use outprob_core::sequential::martingale::Martingale;
use outprob_core::sequential::online_fdr::OnlineFdr;
use outprob_core::sequential::online_pvalues::OnlinePvalues;

locked!(PyOnlineFdr(OnlineFdr) as "OnlineFdrState");

type Array<'py, T> = Bound<'py, PyArray1<T>>;
type Decided<'py> = (Array<'py, bool>, Array<'py, f64>);

#[pymethods]
impl PyOnlineFdr {
    #[new]
    #[pyo3(signature = (**params))]
    fn new(py: Python<'_>, params: Option<&Bound<'_, PyDict>>) -> Result<Self> {
        Ok(Self::wrap(OnlineFdr::new(keywords(py, params)?)))
    }

    fn decide<'py>(
        &self,
        py: Python<'py>,
        p: PyReadonlyArray1<'py, f64>,
    ) -> Result<Array<'py, bool>> {
        let p = p.as_slice()?;
        let mut out = vec![false; p.len()];
        self.detached(py, |rule| rule.decide(p, &mut out, None))?;
        Ok(out.into_pyarray(py))
    }

    fn decide_with_levels<'py>(
        &self,
        py: Python<'py>,
        p: PyReadonlyArray1<'py, f64>,
    ) -> Result<Decided<'py>> {
        let p = p.as_slice()?;
        let (mut out, mut levels) = (vec![false; p.len()], vec![0.0; p.len()]);
        self.detached(py, |rule| rule.decide(p, &mut out, Some(&mut levels)))?;
        Ok((out.into_pyarray(py), levels.into_pyarray(py)))
    }

    fn next_level(&self, py: Python<'_>) -> f64 {
        self.lock(py).next_level()
    }

    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        record_to_dict(py, &self.lock(py).settings().to_record())
    }

    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.stored(py)
    }

    fn restore(&self, py: Python<'_>, state: &Bound<'_, PyDict>) -> Result<()> {
        self.restored(py, state)
    }
}

locked!(PyMartingale(Martingale) as "MartingaleState");

type Path<'py> = (
    Array<'py, f64>,
    Array<'py, f64>,
    Array<'py, f64>,
    Array<'py, bool>,
);

#[pymethods]
impl PyMartingale {
    #[new]
    #[pyo3(signature = (**params))]
    fn new(py: Python<'_>, params: Option<&Bound<'_, PyDict>>) -> Result<Self> {
        Ok(Self::wrap(keywords(py, params)?))
    }

    fn update<'py>(&self, py: Python<'py>, p: PyReadonlyArray1<'py, f64>) -> Result<Path<'py>> {
        let p = p.as_slice()?;
        let (m, c, r, a) = self.detached(py, |state| state.update_owned(p))?;
        let pa = |v: Vec<f64>| v.into_pyarray(py);
        Ok((pa(m), pa(c), pa(r), a.into_pyarray(py)))
    }

    fn reset(&self, py: Python<'_>) {
        self.lock(py).reset();
    }

    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.stored(py)
    }

    fn restore(&self, py: Python<'_>, state: &Bound<'_, PyDict>) -> Result<()> {
        self.restored(py, state)
    }
}

locked!(PyOnlinePvalues(OnlinePvalues) as "OnlinePvaluesState");

#[pymethods]
impl PyOnlinePvalues {
    #[new]
    #[pyo3(signature = (*, seed, negate, smoothed))]
    fn new(seed: u64, negate: bool, smoothed: bool) -> Self {
        Self::wrap(OnlinePvalues::new(seed, negate, smoothed))
    }

    #[pyo3(signature = (scores, uniforms=None))]
    fn pvalues<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray1<'py, f64>,
        uniforms: Option<PyReadonlyArray1<'py, f64>>,
    ) -> Result<Array<'py, f64>> {
        let s = scores.as_slice()?;
        let u = uniforms.as_ref().map(|u| u.as_slice()).transpose()?;
        let mut out = vec![0.0; s.len()];
        self.detached(py, |state| state.pvalues(s, u, &mut out))?;
        Ok(out.into_pyarray(py))
    }

    fn update(&self, py: Python<'_>, scores: PyReadonlyArray1<'_, f64>) -> Result<()> {
        let s = scores.as_slice()?;
        Ok(self.detached(py, |state| state.update(s))?)
    }

    fn n(&self, py: Python<'_>) -> u64 {
        self.lock(py).n()
    }

    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.stored(py)
    }

    fn restore(&self, py: Python<'_>, state: &Bound<'_, PyDict>) -> Result<()> {
        self.restored(py, state)
    }
}

locked!(PyDecayedFit(DecayedFit) as "DecayedFitState");

#[pymethods]
impl PyDecayedFit {
    #[new]
    #[pyo3(signature = (**params))]
    fn new(py: Python<'_>, params: Option<&Bound<'_, PyDict>>) -> Result<Self> {
        Ok(Self::wrap(keywords(py, params)?))
    }

    fn update(&self, py: Python<'_>, scores: PyReadonlyArray1<'_, f64>) -> Result<()> {
        let xs = scores.as_slice()?;
        Ok(self.detached(py, |fit| fit.update(xs))?)
    }

    fn moments(&self, py: Python<'_>) -> Option<DecayedMoments> {
        self.lock(py).moments().map(Into::into)
    }

    fn quantiles(&self, py: Python<'_>, qs: Vec<f64>) -> Result<Option<Vec<f64>>> {
        Ok(self.lock(py).quantiles(&qs)?)
    }

    fn median_mad(&self, py: Python<'_>) -> Option<(f64, f64)> {
        self.lock(py).median_mad()
    }

    fn rank_error(&self, py: Python<'_>) -> f64 {
        self.lock(py).rank_error()
    }

    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.stored(py)
    }

    fn restore(&self, py: Python<'_>, state: &Bound<'_, PyDict>) -> Result<()> {
        self.restored(py, state)
    }
}

locked!(PyDriftPolicy(Policy) as "DriftPolicyState");

#[pymethods]
impl PyDriftPolicy {
    #[new]
    #[pyo3(signature = (refit, *, window, half_life, delay))]
    fn new(refit: Wrap<Refit>, window: u64, half_life: f64, delay: Option<u64>) -> Result<Self> {
        Ok(Self::wrap(Policy::new(refit.0, window, half_life, delay)?))
    }

    fn info(&self, py: Python<'_>) -> DriftInfo {
        (&*self.lock(py)).into()
    }

    fn check_scores(&self, py: Python<'_>, scores: PyReadonlyArray1<'_, f64>) -> Result<()> {
        Ok(self.lock(py).check_scores(scores.as_slice()?)?)
    }

    fn span(&self, py: Python<'_>, remaining: usize) -> usize {
        self.lock(py).span(remaining)
    }

    #[pyo3(signature = (scores, alarm=None))]
    fn advance(
        &self,
        py: Python<'_>,
        scores: PyReadonlyArray1<'_, f64>,
        alarm: Option<f64>,
    ) -> Result<bool> {
        Ok(self.lock(py).advance(scores.as_slice()?, alarm)?)
    }

    #[pyo3(signature = (n_fit, fitted=None))]
    fn refitted(
        &self,
        py: Python<'_>,
        n_fit: u64,
        fitted: Option<(f64, f64)>,
    ) -> Result<DriftEvent> {
        Ok(self.lock(py).refitted(n_fit, fitted)?.into())
    }

    fn refit_failed(&self, py: Python<'_>, message: &str) -> Result<DriftEvent> {
        Ok(self.lock(py).refit_failed(message)?.into())
    }

    fn recent<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.lock(py).recent().into_pyarray(py)
    }

    fn events(&self, py: Python<'_>, start: usize) -> Vec<DriftEvent> {
        all(self.lock(py).events().get(start..).unwrap_or_default())
    }

    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.stored(py)
    }

    fn restore(&self, py: Python<'_>, state: &Bound<'_, PyDict>) -> Result<()> {
        self.restored(py, state)
    }
}

#[pyfunction]
pub(crate) fn drift_check_decayed(
    center: &str,
    scale: &str,
    pretransform: bool,
    fixed_center: bool,
) -> Result<()> {
    Ok(drift::check_decayed(
        center,
        scale,
        pretransform,
        fixed_center,
    )?)
}

#[pyfunction]
pub(crate) fn drift_decayed_gaussian(
    py: Python<'_>,
    fit: PyRef<'_, PyDecayedFit>,
    center: &str,
    scale: &str,
    fallbacks: Vec<String>,
) -> Result<(f64, f64, &'static str)> {
    let fallbacks: Vec<&str> = fallbacks.iter().map(String::as_str).collect();
    Ok(drift::decayed_gaussian(
        &fit.lock(py),
        center,
        scale,
        &fallbacks,
    )?)
}
