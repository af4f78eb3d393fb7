//! Estimators of contract §1–§3 (`outprob.stats`).

use crate::convert::{keywords, Wrap};
use crate::results::MEstimate;
use crate::{with_slice, Floats, Result};
use outprob_core::estimators::mest::{m_estimate as core_m_estimate, m_estimate_direct, MParams};
use outprob_core::estimators::{location, scale};
use outprob_core::sample::{NanPolicy, Sample};
use outprob_core::{Error, Float};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Runs an estimator on `x` checked by the §5 contract.
fn checked<T: Float, R>(
    x: &[T],
    nan: NanPolicy,
    f: impl FnOnce(&Sample<'_, T>) -> std::result::Result<R, Error>,
) -> std::result::Result<R, Error> {
    f(&Sample::new(x, nan, false)?)
}

/// An estimator of one float from scores checked by §5: its keyword
/// parameters after the scores, then `nan_policy` and `threads`.
macro_rules! estimator {
    ($name:ident $(as $py_name:literal)? ($($arg:ident: $ty:ty),*), |$d:ident| $body:expr) => {
        #[pyfunction]
        #[pyo3($(name = $py_name,)? signature = (x, *, $($arg,)* nan_policy, threads = 0))]
        pub(crate) fn $name(
            py: Python<'_>,
            x: Floats<'_>,
            $($arg: $ty,)*
            nan_policy: Wrap<NanPolicy>,
            threads: usize,
        ) -> Result<f64> {
            let nan = nan_policy.0;
            Ok(with_slice!(py, threads, x, |s| checked(s, nan, |$d| $body))?)
        }
    };
}

estimator!(mean(), |d| Ok(location::mean(d)));
estimator!(std_dev as "std" (ddof: usize), |d| scale::std(d, ddof));
estimator!(upper_trimmed_mean(alpha: f64), |d| location::upper_trimmed_mean(d, alpha));
estimator!(nmad(), |d| Ok(scale::nmad(d)));
estimator!(niqr(), |d| Ok(scale::niqr(d)));
estimator!(trimmed_std(center: f64, alpha: f64), |d| scale::trimmed_std(d, center, alpha));

#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, threads = 0))]
pub(crate) fn median(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: Wrap<NanPolicy>,
    threads: usize,
) -> Result<f64> {
    // One read: the §5 check rides on the selection's read.
    let nan = nan_policy.0;
    Ok(with_slice!(py, threads, x, |s| location::checked_median(
        s, nan, false
    ))?)
}

#[pyfunction]
#[pyo3(signature = (x, *, q, nan_policy, threads = 0))]
pub(crate) fn quantile(
    py: Python<'_>,
    x: Floats<'_>,
    q: Vec<f64>,
    nan_policy: Wrap<NanPolicy>,
    threads: usize,
) -> Result<Vec<f64>> {
    location::check_quantiles(&q)?;
    let nan = nan_policy.0;
    Ok(with_slice!(py, threads, x, |s| checked(s, nan, |d| Ok(
        location::quantiles(d, &q)
    )))?)
}

#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, threads = 0, direct = false, **params))]
pub(crate) fn m_estimate(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: Wrap<NanPolicy>,
    threads: usize,
    direct: bool,
    params: Option<&Bound<'_, PyDict>>,
) -> Result<MEstimate> {
    let p: MParams = keywords(py, params)?;
    let e = with_slice!(py, threads, x, |s| checked(
        s,
        nan_policy.0,
        |d| if direct {
            m_estimate_direct(d, &p)
        } else {
            core_m_estimate(d, &p)
        }
    ))?;
    Ok(MEstimate::from(&(p.norm, e)))
}

#[pyfunction]
#[pyo3(signature = (x, *, nan_policy))]
pub(crate) fn check_scores(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: Wrap<NanPolicy>,
) -> Result<()> {
    with_slice!(py, x, |s| outprob_core::sample::check_batch(
        s,
        nan_policy.0
    ))?;
    Ok(())
}
