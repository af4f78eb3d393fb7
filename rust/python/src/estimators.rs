//! Estimators of contract §1–§3 (`outprob.stats`) and evaluation measures
//! of §6 (`outprob.metrics`; labels arrive as a checked bool array).

use crate::prelude::*;
use outprob_core::estimators::mest::MEstimate as CoreM;
use outprob_core::estimators::mest::{m_estimate as core_m_estimate, m_estimate_direct, MParams};
use outprob_core::estimators::{location, scale};
use outprob_core::evaluation::binning::{self, Scheme};
use outprob_core::evaluation::metrics;
use outprob_core::sample::Sample;
use outprob_core::{Error, Float};

/// Runs an estimator on `x` checked by the §5 contract.
fn checked<T: Float, R>(
    x: &[T],
    nan: NanPolicy,
    f: impl FnOnce(&Sample<'_, T>) -> std::result::Result<R, Error>,
) -> std::result::Result<R, Error> {
    f(&Sample::new(x, nan, false)?)
}

fn m<T: Float>(d: &Sample<'_, T>, p: &MParams, direct: bool) -> std::result::Result<CoreM, Error> {
    if direct {
        m_estimate_direct(d, p)
    } else {
        core_m_estimate(d, p)
    }
}

/// An estimator of scores: its keyword parameters after the scores, then
/// `nan_policy` and `threads`; the body reads the scores checked by §5
/// (`|d|`), or the slice and the NaN policy (`|s, nan|`).
macro_rules! estimator {
    ($name:ident $(as $py:literal)? ($($arg:ident: $ty:ty),*), |$d:ident| $body:expr) => {
        estimator!($name $(as $py)? ($($arg: $ty),*) -> f64, |s, nan| checked(s, nan, |$d| $body));
    };
    ($name:ident $(as $py:literal)? ($($arg:ident: $ty:ty),*) -> $out:ty,
     |$s:ident, $nan:ident| $body:expr) => {
        #[pyfunction]
        #[pyo3($(name = $py,)? signature = (x, *, $($arg,)* nan_policy, threads = 0))]
        pub(crate) fn $name(
            py: Python<'_>,
            x: Floats<'_>,
            $($arg: $ty,)*
            nan_policy: Wrap<NanPolicy>,
            threads: usize,
        ) -> Result<$out> {
            let $nan = nan_policy.0;
            Ok(with_slice!(py, threads, x, |$s| $body)?)
        }
    };
}

estimator!(mean(), |d| Ok(location::mean(d)));
estimator!(std_dev as "std" (ddof: usize), |d| scale::std(d, ddof));
estimator!(upper_trimmed_mean(alpha: f64), |d| location::upper_trimmed_mean(d, alpha));
estimator!(nmad(), |d| Ok(scale::nmad(d)));
estimator!(niqr(), |d| Ok(scale::niqr(d)));
estimator!(trimmed_std(center: f64, alpha: f64), |d| scale::trimmed_std(d, center, alpha));
// One read: the §5 check rides on the selection's read.
estimator!(median() -> f64, |s, nan| location::checked_median(s, nan, false));
estimator!(quantile(q: Vec<f64>) -> Vec<f64>, |s, nan| {
    location::check_quantiles(&q)?;
    checked(s, nan, |d| Ok(location::quantiles(d, &q)))
});

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
    let (p, nan): (MParams, _) = (keywords(py, params)?, nan_policy.0);
    let e = with_slice!(py, threads, x, |s| checked(s, nan, |d| m(d, &p, direct)))?;
    Ok(MEstimate::from(&(p.norm, e)))
}

#[pyfunction]
#[pyo3(signature = (x, *, nan_policy))]
pub(crate) fn check_scores(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: Wrap<NanPolicy>,
) -> Result<()> {
    let nan = nan_policy.0;
    with_slice!(py, x, |s| outprob_core::sample::check_batch(s, nan))?;
    Ok(())
}

/// A measure of probabilities `p` (and labels `y`): its keyword
/// parameters, then `threads`; the core's result converted by `Into`.
macro_rules! measure {
    ($name:ident(p $(, $y:ident)?; $($arg:ident: $ty:ty),*) -> $out:ty, |$s:ident| $body:expr) => {
        #[pyfunction]
        #[pyo3(signature = (p, $($y,)? *, $($arg,)* threads = 0))]
        pub(crate) fn $name(
            py: Python<'_>,
            p: Floats<'_>,
            $($y: PyReadonlyArray1<'_, bool>,)?
            $($arg: $ty,)*
            threads: usize,
        ) -> Result<$out> {
            $(let $y = $y.as_slice()?;)?
            let r = with_slice!(py, threads, p, |$s| $body)?;
            Ok(Into::into(r))
        }
    };
}

measure!(
    evaluate(p, y; bins: Wrap<Scheme>, n_bins: Vec<usize>) -> Evaluation,
    |s| metrics::evaluate(s, y, bins.0, &n_bins)
);
measure!(
    brier_and_sharpness(p, y;) -> (Strata, Strata),
    |s| metrics::brier_and_sharpness(s, y).map(|(b, s)| (b.into(), s.into()))
);
measure!(
    refinement_and_calibration(p, y; bins: Wrap<Scheme>, n_bins: Vec<usize>) -> (Strata, Strata),
    |s| metrics::binned_errors(s, y, bins.0, &n_bins).map(|(r, c)| (r.into(), c.into()))
);
measure!(
    bin_edges(p; k: usize, bins: Wrap<Scheme>) -> Vec<f64>,
    |s| binning::bin_edges(s, bins.0, k)
);
measure!(
    reliability_curve(p, y; bins: Wrap<Scheme>, k: usize) -> ReliabilityCurve,
    |s| metrics::reliability_curve(s, y, bins.0, k)
);
