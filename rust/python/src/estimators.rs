//! Estimators of contract §1–§3 (`outprob.stats`).

use crate::{parse, to_py, with_slice, Floats};
use outprob_core::estimators::mest::{MEstimate, MParams, Norm, StartScale};
use outprob_core::estimators::{location, scale};
use outprob_core::sample::{NanPolicy, Sample};
use outprob_core::{Error, Float};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Runs an estimator on `x` checked by the §5 contract.
fn estimate<T: Float, R>(
    x: &[T],
    nan: NanPolicy,
    f: impl FnOnce(&Sample<'_, T>) -> Result<R, Error>,
) -> Result<R, Error> {
    f(&Sample::new(x, nan, false)?)
}

#[pyfunction]
fn mean(py: Python<'_>, x: Floats<'_>, nan_policy: &str, threads: usize) -> PyResult<f64> {
    let nan: NanPolicy = parse(nan_policy)?;
    with_slice!(py, threads, x, |s| estimate(s, nan, |d| Ok(
        location::mean(d)
    )))
    .map_err(to_py)
}

#[pyfunction]
#[pyo3(name = "std")]
fn std_dev(
    py: Python<'_>,
    x: Floats<'_>,
    ddof: usize,
    nan_policy: &str,
    threads: usize,
) -> PyResult<f64> {
    let nan: NanPolicy = parse(nan_policy)?;
    with_slice!(py, threads, x, |s| estimate(s, nan, |d| scale::std(
        d, ddof
    )))
    .map_err(to_py)
}

#[pyfunction]
fn median(py: Python<'_>, x: Floats<'_>, nan_policy: &str, threads: usize) -> PyResult<f64> {
    let nan: NanPolicy = parse(nan_policy)?;
    // One read: the §5 check rides on the selection's read.
    with_slice!(py, threads, x, |s| location::checked_median(s, nan, false)).map_err(to_py)
}

#[pyfunction]
fn quantile(
    py: Python<'_>,
    x: Floats<'_>,
    q: Vec<f64>,
    nan_policy: &str,
    threads: usize,
) -> PyResult<Vec<f64>> {
    let nan: NanPolicy = parse(nan_policy)?;
    if let Some(bad) = q.iter().find(|q| !(0.0..=1.0).contains(*q)) {
        return Err(PyValueError::new_err(format!(
            "q: quantiles must be in [0, 1], got {bad}"
        )));
    }
    with_slice!(py, threads, x, |s| estimate(s, nan, |d| Ok(
        location::quantiles(d, &q)
    )))
    .map_err(to_py)
}

#[pyfunction]
fn upper_trimmed_mean(
    py: Python<'_>,
    x: Floats<'_>,
    alpha: f64,
    nan_policy: &str,
    threads: usize,
) -> PyResult<f64> {
    let nan: NanPolicy = parse(nan_policy)?;
    with_slice!(py, threads, x, |s| estimate(s, nan, |d| {
        location::upper_trimmed_mean(d, alpha)
    }))
    .map_err(to_py)
}

#[pyfunction]
fn nmad(py: Python<'_>, x: Floats<'_>, nan_policy: &str, threads: usize) -> PyResult<f64> {
    let nan: NanPolicy = parse(nan_policy)?;
    with_slice!(py, threads, x, |s| estimate(s, nan, |d| Ok(scale::nmad(d)))).map_err(to_py)
}

#[pyfunction]
fn niqr(py: Python<'_>, x: Floats<'_>, nan_policy: &str, threads: usize) -> PyResult<f64> {
    let nan: NanPolicy = parse(nan_policy)?;
    with_slice!(py, threads, x, |s| estimate(s, nan, |d| Ok(scale::niqr(d)))).map_err(to_py)
}

#[pyfunction]
fn trimmed_std(
    py: Python<'_>,
    x: Floats<'_>,
    center: f64,
    alpha: f64,
    nan_policy: &str,
    threads: usize,
) -> PyResult<f64> {
    let nan: NanPolicy = parse(nan_policy)?;
    with_slice!(py, threads, x, |s| estimate(
        s,
        nan,
        |d| scale::trimmed_std(d, center, alpha)
    ))
    .map_err(to_py)
}

pub(crate) fn start_name(s: StartScale) -> &'static str {
    match s {
        StartScale::Nmad => "nmad",
        StartScale::Niqr => "niqr",
        StartScale::Std => "std",
        StartScale::Constant => "constant",
    }
}

/// (location, scale, n_iter, converged, start scale name)
pub(crate) type MTuple = (f64, f64, usize, bool, &'static str);

pub(crate) fn m_tuple(e: &MEstimate) -> MTuple {
    (
        e.location,
        e.scale,
        e.n_iter,
        e.converged,
        start_name(e.start),
    )
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn m_estimate(
    py: Python<'_>,
    x: Floats<'_>,
    norm: &str,
    c: f64,
    tuning: Option<f64>,
    maxiter: usize,
    tol: f64,
    nan_policy: &str,
    threads: usize,
) -> PyResult<MTuple> {
    let nan: NanPolicy = parse(nan_policy)?;
    let norm: Norm = parse(norm)?;
    let params = MParams {
        c,
        tuning: tuning.unwrap_or(norm.default_tuning()),
        maxiter,
        tol,
        ..MParams::new(norm)
    };
    with_slice!(py, threads, x, |s| estimate(s, nan, |d| {
        outprob_core::estimators::mest::m_estimate(d, &params)
    }))
    .map(|e| m_tuple(&e))
    .map_err(to_py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mean, m)?)?;
    m.add_function(wrap_pyfunction!(std_dev, m)?)?;
    m.add_function(wrap_pyfunction!(median, m)?)?;
    m.add_function(wrap_pyfunction!(quantile, m)?)?;
    m.add_function(wrap_pyfunction!(upper_trimmed_mean, m)?)?;
    m.add_function(wrap_pyfunction!(nmad, m)?)?;
    m.add_function(wrap_pyfunction!(niqr, m)?)?;
    m.add_function(wrap_pyfunction!(trimmed_std, m)?)?;
    m.add_function(wrap_pyfunction!(m_estimate, m)?)?;
    Ok(())
}
