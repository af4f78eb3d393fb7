//! The refit policy after a drift (contract §12, "Refits after a drift"):
//! `outprob.RefitOnDrift` asks it where the next stop is, tells it what
//! went through and where the monitor alarmed, and records its refits; the
//! rules and the checks of a stored state are the core's
//! (`outprob_core::sequential::drift`).

use crate::prelude::*;
use crate::sequential::PyDecayedFit;
use outprob_core::sequential::drift::{self, Event, Parts, Policy, Refit};

locked!(PyDriftPolicy(Policy) as "DriftPolicyState");

#[pymethods]
impl PyDriftPolicy {
    #[new]
    #[pyo3(signature = (refit, *, window, half_life, delay))]
    fn new(refit: Wrap<Refit>, window: u64, half_life: f64, delay: Option<u64>) -> Result<Self> {
        Ok(Self::wrap(Policy::new(refit.0, window, half_life, delay)?))
    }

    fn params(&self, py: Python<'_>) -> DriftSettings {
        (&*self.lock(py)).into()
    }

    fn n(&self, py: Python<'_>) -> u64 {
        self.lock(py).n()
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

    fn state(&self, py: Python<'_>) -> DriftState {
        self.lock(py).parts().into()
    }

    #[staticmethod]
    fn from_parts(
        refit: Wrap<Refit>,
        window: u64,
        delay: u64,
        n: u64,
        pending: Option<u64>,
        recent: Vec<f64>,
        events: Vec<DriftEvent>,
    ) -> Result<Self> {
        let event = |e: DriftEvent| -> Result<Event> {
            let kind = e.kind.parse()?;
            let (index, log_statistic, n_fit, fitted) =
                (e.index, e.log_statistic, e.n_fit, e.fitted);
            let message = e.message;
            Ok(Event {
                kind,
                index,
                log_statistic,
                n_fit,
                fitted,
                message,
            })
        };
        let events = events.into_iter().map(event).collect::<Result<_>>()?;
        let parts = Parts {
            n,
            pending,
            recent,
            events,
        };
        Ok(Self::wrap(Policy::from_parts(
            refit.0, window, delay, &parts,
        )?))
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
