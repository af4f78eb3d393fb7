//! Rows that carry an identifier with their score, and the output columns
//! of `outprob stream` (contract §12): the core's `rows::RowReader` and
//! `rows::write_columns`.

use crate::Result;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use outprob_core::rows::{write_columns, Column, Digits, Layout, RowReader, Rows};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyBytes;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The field index and delimiter of a CSV header's column `column`.
#[pyfunction]
#[pyo3(signature = (header, column))]
pub(crate) fn csv_layout(header: &[u8], column: &str) -> Result<(usize, u8)> {
    match Layout::csv(header, column)? {
        Layout::Csv { column, delimiter } => Ok((column, delimiter)),
        Layout::Tab => unreachable!("a CSV header gives a CSV layout"),
    }
}

/// A batch's kept texts, handed back to [`format_columns`].
#[pyclass(frozen, module = "outprob._core", name = "RowTexts")]
pub(crate) struct PyRows(Rows);

/// Reads rows (`id<TAB>score`, or CSV fields) from text fed in pieces.
#[pyclass(frozen, module = "outprob._core", name = "RowReader")]
pub(crate) struct PyRowReader(Mutex<RowReader>);

impl PyRowReader {
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, RowReader> {
        self.0
            .lock_py_attached(py)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A batch: its first line's number, one score per row, the bad rows'
/// numbers and messages, and the rows' texts.
type Batch<'py> = (u64, Bound<'py, PyArray1<f64>>, Vec<(u64, String)>, PyRows);

#[pymethods]
impl PyRowReader {
    /// `column`/`delimiter` given: CSV rows; otherwise `id<TAB>score`.
    #[new]
    #[pyo3(signature = (*, column=None, delimiter=b',', first_line=1))]
    fn new(column: Option<usize>, delimiter: u8, first_line: u64) -> Self {
        let layout = match column {
            Some(column) => Layout::Csv { column, delimiter },
            None => Layout::Tab,
        };
        PyRowReader(Mutex::new(RowReader::new(layout, first_line)))
    }

    /// Adds text and parses every row it completes.
    fn feed(&self, py: Python<'_>, data: &[u8]) {
        let mut guard = self.lock(py);
        let reader = &mut *guard;
        py.detach(|| reader.feed(data));
    }

    /// Ends the input.
    fn finish(&self, py: Python<'_>) {
        self.lock(py).finish();
    }

    /// Whether `rows` rows can be taken, or the input ended.
    #[pyo3(signature = (rows))]
    fn ready(&self, py: Python<'_>, rows: usize) -> bool {
        let reader = self.lock(py);
        reader.is_finished() || reader.pending() >= rows
    }

    /// The next `rows` rows (fewer at the end of the input).
    #[pyo3(signature = (rows))]
    fn take<'py>(&self, py: Python<'py>, rows: usize) -> Batch<'py> {
        let mut batch = self.lock(py).take(rows);
        let bad = batch.bad.iter().map(|b| (b.line, b.to_string())).collect();
        let scores = std::mem::take(&mut batch.scores);
        let first = batch.first_line;
        // The texts keep the row count in `ends`.
        (first, scores.into_pyarray(py), bad, PyRows(batch))
    }
}

/// Output lines: each row's text (when `rows` is given), then the double
/// columns (each with its digits: 0 for the shortest form, else that many
/// significant digits) and the flag columns, separated by `delimiter`;
/// rows at the indices in `skip` are left out.
#[pyfunction]
#[pyo3(signature = (doubles, flags, *, rows=None, delimiter=b'\t', skip=Vec::new()))]
pub(crate) fn format_columns<'py>(
    py: Python<'py>,
    doubles: Vec<(PyReadonlyArray1<'py, f64>, u8)>,
    flags: Vec<PyReadonlyArray1<'py, bool>>,
    rows: Option<&Bound<'py, PyRows>>,
    delimiter: u8,
    skip: Vec<usize>,
) -> Result<Bound<'py, PyBytes>> {
    let mut columns = Vec::with_capacity(doubles.len() + flags.len());
    for (a, d) in &doubles {
        let digits = match d {
            0 => Digits::Shortest,
            1..=17 => Digits::Significant(*d),
            _ => {
                return Err(outprob_core::Error::InvalidParameter {
                    name: "digits",
                    reason: format!("must be 0 (shortest) or 1 to 17, got {d}"),
                }
                .into())
            }
        };
        columns.push(Column::Doubles(a.as_slice()?, digits));
    }
    for f in &flags {
        columns.push(Column::Flags(f.as_slice()?));
    }
    let rows = rows.map(|r| &r.get().0);
    let text = py.detach(|| {
        let mut out = Vec::new();
        write_columns(rows, &columns, delimiter, &skip, &mut out).map(|()| out)
    })?;
    Ok(PyBytes::new(py, &text))
}
