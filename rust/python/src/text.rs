//! Scores read from text and the columns written back (`outprob stream`,
//! contract §9 "Command line" and §12): the core's `io::lines` (one score
//! per line) and `rows` (rows that carry an identifier with their score).
//! Both readers take text in pieces and hand out batches; [`reader!`]
//! writes what they share.

use crate::{locked, Locked, Result};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use outprob_core::io::lines::{write_lines, LineReader};
use outprob_core::rows::{write_columns, Column, Digits, Layout, RowReader, Rows};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A reader class over the core's reader `$core` ([`locked!`]): `feed`,
/// `finish`, `ready(n)`, `pending` and the class's own `$methods`.
macro_rules! reader {
    ($(#[$doc:meta])* $py:ident($core:ty) as $name:literal { $($methods:tt)* }) => {
        locked!($(#[$doc])* $py($core) as $name);

        #[pymethods]
        impl $py {
            fn feed(&self, py: Python<'_>, data: &[u8]) {
                self.detached(py, |r| r.feed(data));
            }

            fn finish(&self, py: Python<'_>) {
                self.lock(py).finish();
            }

            #[pyo3(signature = (n))]
            fn ready(&self, py: Python<'_>, n: usize) -> bool {
                self.lock(py).ready(n)
            }

            fn pending(&self, py: Python<'_>) -> usize {
                self.lock(py).pending()
            }

            $($methods)*
        }
    };
}

/// A batch of lines: the number of its first line, one score per line
/// (NaN for `nan` and for bad lines), and each bad line's number and
/// message.
type Batch<'py> = (u64, Bound<'py, PyArray1<f64>>, Vec<(u64, String)>);

reader!(
    /// One score per line.
    PyLineReader(LineReader) as "LineReader" {
        #[new]
        fn new() -> Self {
            Self::wrap(LineReader::new())
        }

        #[pyo3(signature = (n))]
        fn take<'py>(&self, py: Python<'py>, n: usize) -> Batch<'py> {
            let batch = self.lock(py).take(n);
            let bad = batch.bad.iter().map(|b| (b.line, b.to_string())).collect();
            (batch.first_line, batch.scores.into_pyarray(py), bad)
        }
    }
);

#[pyfunction]
#[pyo3(signature = (p))]
pub(crate) fn format_lines<'py>(
    py: Python<'py>,
    p: PyReadonlyArray1<'_, f64>,
) -> Result<Bound<'py, PyBytes>> {
    let p = p.as_slice()?;
    let text = py.detach(|| {
        let mut out = Vec::new();
        write_lines(p, &mut out);
        out
    });
    Ok(PyBytes::new(py, &text))
}

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

reader!(
    /// Rows `id<TAB>score`, or CSV fields.
    PyRowReader(RowReader) as "RowReader" {
        #[new]
        #[pyo3(signature = (*, column=None, delimiter=b',', first_line=1))]
        fn new(column: Option<usize>, delimiter: u8, first_line: u64) -> Self {
            let layout = match column {
                Some(column) => Layout::Csv { column, delimiter },
                None => Layout::Tab,
            };
            Self::wrap(RowReader::new(layout, first_line))
        }

        #[pyo3(signature = (n))]
        #[allow(clippy::type_complexity)]
        fn take<'py>(
            &self,
            py: Python<'py>,
            n: usize,
        ) -> (u64, Bound<'py, PyArray1<f64>>, Vec<(u64, String)>, PyRows) {
            let mut batch = self.lock(py).take(n);
            let bad = batch.bad.iter().map(|b| (b.line, b.to_string())).collect();
            let scores = std::mem::take(&mut batch.scores).into_pyarray(py);
            // The texts keep the row count in `ends`.
            (batch.first_line, scores, bad, PyRows(batch))
        }
    }
);

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
        columns.push(Column::Doubles(a.as_slice()?, Digits::try_from(*d)?));
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
