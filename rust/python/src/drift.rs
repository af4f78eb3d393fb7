//! The refit policy after a drift (contract §12, "Refits after a drift")
//! as a Python object: `outprob.RefitOnDrift` asks it where the next stop
//! is, tells it what went through and where the monitor alarmed, and
//! records its refits; the rules and the checks of a stored state are the
//! core's (`outprob_core::sequential::drift`).

use crate::convert::Wrap;
use crate::sequential::PyDecayedFit;
use crate::{locked, Locked, Result};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use outprob_core::sequential::drift::{self, Event, EventKind, Parts, Policy, Refit};
use pyo3::prelude::*;

locked!(
    /// When to refit after a drift, and the events (`outprob.RefitOnDrift`
    /// keeps one).
    PyDriftPolicy(Policy) as "DriftPolicyState"
);

/// An event as (kind, index, log_statistic, n_fit, fitted, message).
type EventTuple = (String, u64, f64, u64, Option<(f64, f64)>, String);
/// A stored event, its kind parsed by the core.
type StoredEvent = (Wrap<EventKind>, u64, f64, u64, Option<(f64, f64)>, String);

fn tuple(e: &Event) -> EventTuple {
    (
        e.kind.name().to_string(),
        e.index,
        e.log_statistic,
        e.n_fit,
        e.fitted,
        e.message.clone(),
    )
}

#[pymethods]
impl PyDriftPolicy {
    #[new]
    #[pyo3(signature = (refit, *, window, half_life, delay))]
    fn new(refit: Wrap<Refit>, window: u64, half_life: f64, delay: Option<u64>) -> Result<Self> {
        Ok(Self::wrap(Policy::new(refit.0, window, half_life, delay)?))
    }

    /// (refit, window, delay).
    fn params(&self, py: Python<'_>) -> (&'static str, u64, u64) {
        let p = self.lock(py);
        (p.refit().name(), p.window(), p.delay())
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
        let xs = scores.as_slice()?;
        Ok(self.lock(py).advance(xs, alarm)?)
    }

    #[pyo3(signature = (n_fit, fitted=None))]
    fn refitted(
        &self,
        py: Python<'_>,
        n_fit: u64,
        fitted: Option<(f64, f64)>,
    ) -> Result<EventTuple> {
        Ok(tuple(self.lock(py).refitted(n_fit, fitted)?))
    }

    fn refit_failed(&self, py: Python<'_>, message: &str) -> Result<EventTuple> {
        Ok(tuple(self.lock(py).refit_failed(message)?))
    }

    fn recent<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.lock(py).recent().into_pyarray(py)
    }

    /// The events from position `start` on.
    fn events(&self, py: Python<'_>, start: usize) -> Vec<EventTuple> {
        let p = self.lock(py);
        p.events().iter().skip(start).map(tuple).collect()
    }

    /// (n, pending, recent).
    fn state(&self, py: Python<'_>) -> (u64, Option<u64>, Vec<f64>) {
        let p = self.lock(py).parts();
        (p.n, p.pending, p.recent)
    }

    #[staticmethod]
    #[allow(clippy::needless_pass_by_value)]
    fn from_parts(
        refit: Wrap<Refit>,
        window: u64,
        delay: u64,
        n: u64,
        pending: Option<u64>,
        recent: Vec<f64>,
        events: Vec<StoredEvent>,
    ) -> Result<Self> {
        let events = events
            .into_iter()
            .map(
                |(kind, index, log_statistic, n_fit, fitted, message)| Event {
                    kind: kind.0,
                    index,
                    log_statistic,
                    n_fit,
                    fitted,
                    message,
                },
            )
            .collect();
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

/// Whether a Gaussian scaler of these estimators can be refitted on a
/// decayed fit (an error naming what it needs otherwise).
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

/// (center, scale, the scale used) of a decayed Gaussian refit.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)]
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
