//! `outprob stream` (contract §9, "Command line"; §12): the core's
//! `streaming::text::TextStream` — bytes in, bytes out, no arrays.

use crate::convert::{keywords, Wrap};
use crate::fit::{PyFittedMap, PyGaussianSpec};
use crate::results::StreamingResult;
use crate::{locked, Locked, Result};
use outprob_core::rows::Layout;
use outprob_core::sequential::columns::{ColumnSpec, OnlineColumns};
use outprob_core::streaming::text::{OnError, TextStream};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

locked!(
    /// Lines of scores in, lines of probabilities out, fitting as it goes.
    PyTextStream(TextStream) as "TextStream"
);

/// A batch: its probabilities as text, the lines taken (0 at the end),
/// each bad line's number and message, the message of the line the batch
/// stopped at, and the fit made for it.
type Step<'py> = (
    Bound<'py, PyBytes>,
    usize,
    Vec<(u64, String)>,
    Option<String>,
    Option<StreamingResult>,
);

#[pymethods]
impl PyTextStream {
    #[new]
    #[pyo3(signature = (*, spec=None, k=0, seed=0, linear=false, window=None, refit_every=0,
                        map=None, rows=false, column=None, delimiter=b',', pvalues=false,
                        alert=None, alpha=0.05, monitor=None, pvalue_seed=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        spec: Option<&PyGaussianSpec>,
        k: u32,
        seed: u64,
        linear: bool,
        window: Option<usize>,
        refit_every: usize,
        map: Option<&PyFittedMap>,
        rows: bool,
        column: Option<usize>,
        delimiter: u8,
        pvalues: bool,
        alert: Option<&str>,
        alpha: f64,
        monitor: Option<&Bound<'_, PyDict>>,
        pvalue_seed: u64,
    ) -> Result<Self> {
        let mut s = match (map, spec, window) {
            (Some(m), None, None) => TextStream::stored(m.0.clone())?,
            (None, Some(spec), None) => TextStream::new(spec.core, k, seed, linear)?,
            (None, Some(spec), Some(w)) => TextStream::windowed(spec.core, w, refit_every, linear)?,
            _ => return Err(PyValueError::new_err("give spec (and window), or map").into()),
        };
        s = s.with_columns(OnlineColumns::new(ColumnSpec {
            pvalues,
            alert: alert.map(|m| m.parse().map(|m| (m, alpha))).transpose()?,
            monitor: monitor.map(|m| keywords(py, Some(m))).transpose()?,
            seed: pvalue_seed,
            negate: spec.is_some_and(|s| s.core.negate),
        })?);
        if rows {
            s = match column {
                Some(column) => s.with_rows(Layout::Csv { column, delimiter }, 2),
                None => s.with_rows(Layout::Tab, 1),
            };
        }
        Ok(Self::wrap(s))
    }

    fn feed(&self, py: Python<'_>, data: &[u8]) {
        self.detached(py, |s| s.reader().feed(data));
    }

    fn finish(&self, py: Python<'_>) {
        self.lock(py).reader().finish();
    }

    #[pyo3(signature = (n))]
    fn ready(&self, py: Python<'_>, n: usize) -> bool {
        self.lock(py).reader().ready(n)
    }

    #[pyo3(signature = (batch, *, on_error))]
    fn step<'py>(
        &self,
        py: Python<'py>,
        batch: usize,
        on_error: Wrap<OnError>,
    ) -> Result<Step<'py>> {
        let (text, step) = self.detached(py, |s| {
            let mut text = Vec::new();
            s.step(batch, on_error.0, &mut text)
                .map(|step| (text, step))
        })?;
        let bad = step.bad.iter().map(|b| (b.line(), b.to_string())).collect();
        Ok((
            PyBytes::new(py, &text),
            step.lines,
            bad,
            step.stop.map(|b| b.to_string()),
            step.fit.map(Into::into),
        ))
    }
}
