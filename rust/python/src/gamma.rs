//! Gamma scaling (contract §10) and the incomplete gamma kernel.

use crate::scaling::transform_any;
use crate::{map_into, parse, to_py, with_slice, Floats};
use numpy::PyArrayDyn;
use numpy::{PyArray1, PyReadonlyArray1};
use outprob_core::numeric::gamma::gamma_pq;
use outprob_core::transformations::gamma::{fit_gamma as core_fit_gamma, Gamma, GammaSpec};
use outprob_core::transformations::gamma_table::{transform_tabled, GammaTable};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Fits a gamma scaling; returns (offset, mean, scale, method used).
#[pyfunction]
fn fit_gamma(
    py: Python<'_>,
    x: Floats<'_>,
    method: &str,
    offset: Option<f64>,
    nan_policy: &str,
    negate: bool,
    threads: usize,
) -> PyResult<(f64, f64, f64, &'static str)> {
    let spec = GammaSpec {
        method: parse(method)?,
        offset,
        nan_policy: parse(nan_policy)?,
        negate,
    };
    let fit = with_slice!(py, threads, x, |s| core_fit_gamma(s, &spec)).map_err(to_py)?;
    let p = fit.params;
    Ok((p.offset, p.mean, p.scale, fit.method_used.name()))
}

/// Maps scores to probabilities into the preallocated `out`, one
/// (offset, mean, scale) per column.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn gamma_transform(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    offsets: Vec<f64>,
    means: Vec<f64>,
    scales: Vec<f64>,
    negate: bool,
    threads: usize,
) -> PyResult<()> {
    if offsets.len() != means.len() || means.len() != scales.len() {
        return Err(PyValueError::new_err(
            "offsets, means and scales need one value per column each",
        ));
    }
    let columns: Vec<Gamma> = offsets
        .iter()
        .zip(&means)
        .zip(&scales)
        .map(|((&o, &m), &s)| Gamma::new(o, m, s))
        .collect();
    transform_any(py, x, out, &columns, negate, threads)
}

/// Fitted gamma scalings of the columns with their tables (built once,
/// kept by the scaler for its transforms).
#[pyclass(frozen, module = "outprob._core")]
pub(crate) struct GammaMaps {
    tables: Vec<GammaTable>,
}

#[pymethods]
impl GammaMaps {
    /// One (offset, mean, scale) per column.
    #[new]
    fn new(py: Python<'_>, offsets: Vec<f64>, means: Vec<f64>, scales: Vec<f64>) -> PyResult<Self> {
        if offsets.len() != means.len() || means.len() != scales.len() {
            return Err(PyValueError::new_err(
                "offsets, means and scales need one value per column each",
            ));
        }
        let tables = py
            .detach(|| {
                offsets
                    .iter()
                    .zip(&means)
                    .zip(&scales)
                    .map(|((&o, &m), &s)| GammaTable::new(Gamma::new(o, m, s)))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(to_py)?;
        Ok(GammaMaps { tables })
    }

    /// Maps C-contiguous `x` (rows × columns) into the preallocated `out`.
    fn transform(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        out: &Bound<'_, PyAny>,
        negate: bool,
        threads: usize,
    ) -> PyResult<()> {
        let tables = &self.tables;
        if x.cast::<PyArrayDyn<f32>>().is_ok() {
            map_into::<f32>(py, x, out, threads, |s, d| {
                transform_tabled(s, d, tables, negate)
            })
        } else {
            map_into::<f64>(py, x, out, threads, |s, d| {
                transform_tabled(s, d, tables, negate)
            })
        }
    }
}

/// `(P(a, x), Q(a, x))` element-wise (for testing the kernel against SciPy).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn _gamma_pq<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, f64>,
    x: PyReadonlyArray1<'py, f64>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
    let (a, x) = (a.as_slice()?, x.as_slice()?);
    if a.len() != x.len() {
        return Err(PyValueError::new_err("a and x need the same length"));
    }
    let (p, q): (Vec<f64>, Vec<f64>) =
        py.detach(|| a.iter().zip(x).map(|(&a, &x)| gamma_pq(a, x)).unzip());
    Ok((PyArray1::from_vec(py, p), PyArray1::from_vec(py, q)))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_gamma, m)?)?;
    m.add_function(wrap_pyfunction!(gamma_transform, m)?)?;
    m.add_function(wrap_pyfunction!(_gamma_pq, m)?)?;
    m.add_class::<GammaMaps>()?;
    Ok(())
}
