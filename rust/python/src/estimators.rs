//! Estimators of contract §1–§3 (`outprob.stats`).

use crate::convert::Wrap;
use crate::results::MEstimate;
use crate::{with_slice, Floats, Result};
use outprob_core::estimators::mest::{m_estimate as core_m_estimate, MParams, Norm};
use outprob_core::estimators::{location, scale};
use outprob_core::sample::{NanPolicy, Sample};
use outprob_core::{Error, Float};
use pyo3::prelude::*;

/// Runs an estimator on `x` checked by the §5 contract.
fn checked<T: Float, R>(
    x: &[T],
    nan: NanPolicy,
    f: impl FnOnce(&Sample<'_, T>) -> std::result::Result<R, Error>,
) -> std::result::Result<R, Error> {
    f(&Sample::new(x, nan, false)?)
}

#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, threads = 0))]
fn mean(py: Python<'_>, x: Floats<'_>, nan_policy: Wrap<NanPolicy>, threads: usize) -> Result<f64> {
    Ok(with_slice!(py, threads, x, |s| checked(
        s,
        nan_policy.0,
        |d| Ok(location::mean(d))
    ))?)
}

#[pyfunction]
#[pyo3(name = "std", signature = (x, *, ddof, nan_policy, threads = 0))]
fn std_dev(
    py: Python<'_>,
    x: Floats<'_>,
    ddof: usize,
    nan_policy: Wrap<NanPolicy>,
    threads: usize,
) -> Result<f64> {
    Ok(with_slice!(py, threads, x, |s| checked(
        s,
        nan_policy.0,
        |d| scale::std(d, ddof)
    ))?)
}

#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, threads = 0))]
fn median(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: Wrap<NanPolicy>,
    threads: usize,
) -> Result<f64> {
    // One read: the §5 check rides on the selection's read.
    Ok(with_slice!(py, threads, x, |s| location::checked_median(
        s,
        nan_policy.0,
        false
    ))?)
}

#[pyfunction]
#[pyo3(signature = (x, *, q, nan_policy, threads = 0))]
fn quantile(
    py: Python<'_>,
    x: Floats<'_>,
    q: Vec<f64>,
    nan_policy: Wrap<NanPolicy>,
    threads: usize,
) -> Result<Vec<f64>> {
    location::check_quantiles(&q)?;
    Ok(with_slice!(py, threads, x, |s| checked(
        s,
        nan_policy.0,
        |d| Ok(location::quantiles(d, &q))
    ))?)
}

#[pyfunction]
#[pyo3(signature = (x, *, alpha, nan_policy, threads = 0))]
fn upper_trimmed_mean(
    py: Python<'_>,
    x: Floats<'_>,
    alpha: f64,
    nan_policy: Wrap<NanPolicy>,
    threads: usize,
) -> Result<f64> {
    Ok(with_slice!(py, threads, x, |s| checked(
        s,
        nan_policy.0,
        |d| { location::upper_trimmed_mean(d, alpha) }
    ))?)
}

#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, threads = 0))]
fn nmad(py: Python<'_>, x: Floats<'_>, nan_policy: Wrap<NanPolicy>, threads: usize) -> Result<f64> {
    Ok(with_slice!(py, threads, x, |s| checked(
        s,
        nan_policy.0,
        |d| Ok(scale::nmad(d))
    ))?)
}

#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, threads = 0))]
fn niqr(py: Python<'_>, x: Floats<'_>, nan_policy: Wrap<NanPolicy>, threads: usize) -> Result<f64> {
    Ok(with_slice!(py, threads, x, |s| checked(
        s,
        nan_policy.0,
        |d| Ok(scale::niqr(d))
    ))?)
}

#[pyfunction]
#[pyo3(signature = (x, *, center, alpha, nan_policy, threads = 0))]
fn trimmed_std(
    py: Python<'_>,
    x: Floats<'_>,
    center: f64,
    alpha: f64,
    nan_policy: Wrap<NanPolicy>,
    threads: usize,
) -> Result<f64> {
    Ok(with_slice!(py, threads, x, |s| checked(
        s,
        nan_policy.0,
        |d| { scale::trimmed_std(d, center, alpha) }
    ))?)
}

#[pyfunction]
#[pyo3(signature = (x, *, norm, c, tuning, maxiter, tol, nan_policy, threads = 0))]
#[allow(clippy::too_many_arguments)]
fn m_estimate(
    py: Python<'_>,
    x: Floats<'_>,
    norm: Wrap<Norm>,
    c: f64,
    tuning: Option<f64>,
    maxiter: usize,
    tol: f64,
    nan_policy: Wrap<NanPolicy>,
    threads: usize,
) -> Result<MEstimate> {
    let params = MParams {
        c,
        tuning: tuning.unwrap_or(norm.0.default_tuning()),
        maxiter,
        tol,
        ..MParams::new(norm.0)
    };
    let e = with_slice!(py, threads, x, |s| checked(s, nan_policy.0, |d| {
        core_m_estimate(d, &params)
    }))?;
    Ok(MEstimate::of(norm.0, &e))
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
