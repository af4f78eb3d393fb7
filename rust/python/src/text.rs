//! Scores read from text (`outprob fit`, contract §9 "Command line") and
//! the layout of a CSV stream's header (`outprob stream --csv-column`,
//! §12): the core's `io::lines` and `rows`.

use crate::{locked, Locked, Result};
use numpy::{IntoPyArray, PyArray1};
use outprob_core::io::lines::{LineReader, TextReader};
use outprob_core::rows::Layout;
use pyo3::prelude::*;

locked!(
    /// One score per line.
    PyLineReader(LineReader) as "LineReader"
);

/// A batch of lines: the number of its first line, one score per line
/// (NaN for `nan` and for bad lines), and each bad line's number and
/// message.
type Batch<'py> = (u64, Bound<'py, PyArray1<f64>>, Vec<(u64, String)>);

#[pymethods]
impl PyLineReader {
    #[new]
    fn new() -> Self {
        Self::wrap(LineReader::new())
    }

    fn feed(&self, py: Python<'_>, data: &[u8]) {
        self.detached(py, |r| r.feed(data));
    }

    fn finish(&self, py: Python<'_>) {
        self.lock(py).finish();
    }

    fn pending(&self, py: Python<'_>) -> usize {
        self.lock(py).pending()
    }

    #[pyo3(signature = (n))]
    fn take<'py>(&self, py: Python<'py>, n: usize) -> Batch<'py> {
        let batch = self.lock(py).take(n);
        let bad = batch.bad.iter().map(|b| (b.line, b.to_string())).collect();
        (batch.first_line, batch.scores.into_pyarray(py), bad)
    }
}

#[pyfunction]
#[pyo3(signature = (header, column))]
pub(crate) fn csv_layout(header: &[u8], column: &str) -> Result<(usize, u8)> {
    match Layout::csv(header, column)? {
        Layout::Csv { column, delimiter } => Ok((column, delimiter)),
        Layout::Tab => unreachable!("a CSV header gives a CSV layout"),
    }
}
