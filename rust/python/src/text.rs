//! Scores read from text lines and probabilities written back
//! (`outprob stream`, contract §9 "Command line"): the core's
//! `lines::LineReader` and `lines::write_lines`.

use crate::Result;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use outprob_core::io::lines::{write_lines, LineReader};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Mutex, MutexGuard};

/// Reads one score per line from text fed in pieces; hands the scores out
/// in batches of lines.
#[pyclass(frozen, module = "outprob._core", name = "LineReader")]
pub(crate) struct PyLineReader(Mutex<LineReader>);

impl PyLineReader {
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, LineReader> {
        crate::lock(py, &self.0)
    }
}

/// A batch of lines: the number of its first line, one score per line
/// (NaN for `nan` and for bad lines), and each bad line's number and
/// message.
type Batch<'py> = (u64, Bound<'py, PyArray1<f64>>, Vec<(u64, String)>);

#[pymethods]
impl PyLineReader {
    #[new]
    fn new() -> Self {
        PyLineReader(Mutex::new(LineReader::new()))
    }

    /// Adds text and parses every line it completes.
    fn feed(&self, py: Python<'_>, data: &[u8]) {
        let mut guard = self.lock(py);
        let reader = &mut *guard;
        py.detach(|| reader.feed(data));
    }

    /// Ends the input: an unfinished last line becomes a line.
    fn finish(&self, py: Python<'_>) {
        self.lock(py).finish();
    }

    /// Whether `lines` lines can be taken, or the input ended.
    #[pyo3(signature = (lines))]
    fn ready(&self, py: Python<'_>, lines: usize) -> bool {
        let reader = self.lock(py);
        reader.is_finished() || reader.pending() >= lines
    }

    /// Lines parsed and not taken yet.
    fn pending(&self, py: Python<'_>) -> usize {
        self.lock(py).pending()
    }

    /// The next `lines` lines (fewer at the end of the input).
    #[pyo3(signature = (lines))]
    fn take<'py>(&self, py: Python<'py>, lines: usize) -> Batch<'py> {
        let batch = self.lock(py).take(lines);
        let bad = batch.bad.iter().map(|b| (b.line, b.to_string())).collect();
        (batch.first_line, batch.scores.into_pyarray(py), bad)
    }
}

/// Probabilities as text: the shortest decimal that reads back to the same
/// double, one per line (`nan` for NaN).
#[pyfunction]
#[pyo3(signature = (p))]
pub(crate) fn format_lines<'py>(
    py: Python<'py>,
    p: PyReadonlyArray1<'_, f64>,
) -> Result<Bound<'py, PyBytes>> {
    let p = p.as_slice().map_err(crate::Error::from)?;
    let text = py.detach(|| {
        let mut out = Vec::new();
        write_lines(p, &mut out);
        out
    });
    Ok(PyBytes::new(py, &text))
}
