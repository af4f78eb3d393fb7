//! `outprob stream`'s plain path (contract §9, "Command line"): the core's
//! `streaming::text::TextStream` — bytes in, bytes out, no arrays.

use crate::convert::Wrap;
use crate::fit::PyGaussianSpec;
use crate::results::StreamingResult;
use crate::{locked, Locked, Result};
use outprob_core::rows::Layout;
use outprob_core::sequential::columns::{ColumnSpec, OnlineColumns};
use outprob_core::streaming::text::{OnError, TextStream};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

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
    /// `rows`: `id<TAB>score` rows, or CSV rows with the score in field
    /// `column` (after a header); `pvalues`, `alert`, `monitor`: the
    /// online columns (contract §12).
    #[new]
    #[pyo3(signature = (*, spec, k, seed, linear, rows=false, column=None, delimiter=b',',
                        pvalues=false, alert=None, alpha=0.05, monitor=None, alarm=100.0,
                        pvalue_seed=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        spec: &PyGaussianSpec,
        k: u32,
        seed: u64,
        linear: bool,
        rows: bool,
        column: Option<usize>,
        delimiter: u8,
        pvalues: bool,
        alert: Option<&str>,
        alpha: f64,
        monitor: Option<&str>,
        alarm: f64,
        pvalue_seed: u64,
    ) -> Result<Self> {
        let columns = OnlineColumns::new(&ColumnSpec {
            pvalues,
            alert: alert.map(|m| m.parse().map(|m| (m, alpha))).transpose()?,
            monitor: monitor.map(|m| m.parse().map(|m| (m, alarm))).transpose()?,
            seed: pvalue_seed,
            negate: spec.core.negate,
        })?;
        let mut s = TextStream::new(spec.core, k, seed, linear)?.with_columns(columns);
        if rows {
            s = match column {
                Some(column) => s.with_rows(Layout::Csv { column, delimiter }, 2),
                None => s.with_rows(Layout::Tab, 1),
            };
        }
        Ok(Self::wrap(s))
    }

    fn feed(&self, py: Python<'_>, data: &[u8]) {
        self.detached(py, |s| s.feed(data));
    }

    fn finish(&self, py: Python<'_>) {
        self.lock(py).finish();
    }

    #[pyo3(signature = (n))]
    fn ready(&self, py: Python<'_>, n: usize) -> bool {
        self.lock(py).ready(n)
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
