//! The exponentially decayed fit (contract §12, "Decayed fit"): the core's
//! `sequential::decayed::DecayedFit` behind a `Mutex`; its state travels
//! as the core's checked bytes.

use crate::Result;
use numpy::PyReadonlyArray1;
use outprob_core::sequential::decayed::DecayedFit;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyBytes;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Decayed moments and order statistics (`outprob.DecayedFit` wraps it).
#[pyclass(frozen, module = "outprob._core", name = "DecayedFitState")]
pub(crate) struct PyDecayedFit(Mutex<DecayedFit>);

impl PyDecayedFit {
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, DecayedFit> {
        self.0
            .lock_py_attached(py)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[pymethods]
impl PyDecayedFit {
    #[new]
    #[pyo3(signature = (*, half_life, epochs_per_half_life, horizon, k, seed))]
    fn new(
        half_life: f64,
        epochs_per_half_life: u32,
        horizon: u32,
        k: u16,
        seed: u64,
    ) -> Result<Self> {
        let fit = DecayedFit::new(half_life, epochs_per_half_life, horizon, k, seed)?;
        Ok(PyDecayedFit(Mutex::new(fit)))
    }

    /// Adds scores (NaN skipped; a batch with ±inf refused whole).
    fn update(&self, py: Python<'_>, scores: PyReadonlyArray1<'_, f64>) -> Result<()> {
        let xs = scores.as_slice()?;
        let mut fit = self.lock(py);
        let fit = &mut *fit;
        Ok(py.detach(|| fit.update(xs))?)
    }

    /// (n, weight, mean, variance); None before the first score.
    fn moments(&self, py: Python<'_>) -> Option<(u64, f64, f64, f64)> {
        let m = self.lock(py).moments()?;
        Some((m.n, m.weight, m.mean, m.variance))
    }

    /// The decayed quantiles at `qs`; None before the first score.
    fn quantiles(&self, py: Python<'_>, qs: Vec<f64>) -> Result<Option<Vec<f64>>> {
        Ok(self.lock(py).quantiles(&qs)?)
    }

    /// (median, MAD) under the summary; None before the first score.
    fn median_mad(&self, py: Python<'_>) -> Option<(f64, f64)> {
        self.lock(py).median_mad()
    }

    fn rank_error(&self, py: Python<'_>) -> f64 {
        self.lock(py).rank_error()
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.lock(py).to_bytes())
    }

    /// A state from [`to_bytes`](Self::to_bytes), checked by the core.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> Result<Self> {
        Ok(PyDecayedFit(Mutex::new(DecayedFit::from_bytes(data)?)))
    }
}
