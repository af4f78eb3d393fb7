//! Fitting the scalings of contract §4–§5 and §10 to one score column.

use crate::array::map_array;
use crate::convert::Wrap;
use crate::maps::PyFittedMap;
use crate::results::{GammaFit, GaussianFit, LinearFit, MixtureFit, SigmoidFit, TopKFit};
use crate::spec::PyGaussianSpec;
use crate::{with_slice, Floats, Result};
use numpy::PyArray1;
use outprob_core::sample::NanPolicy;
use outprob_core::transformations::fit::fit_linear as core_fit_linear;
use outprob_core::transformations::fused::{Fit, FusedFit, FusedRank};
use outprob_core::transformations::gamma::{fit_gamma as core_fit_gamma, GammaMethod, GammaSpec};
use outprob_core::transformations::gaussian_options::fit_gaussian_with;
use outprob_core::transformations::mixture::fit_mixture as core_fit_mixture;
use outprob_core::transformations::rank::{fit_sorted, fit_top_k as core_fit_top_k};
use outprob_core::transformations::sigmoid::fit_sigmoid as core_fit_sigmoid;
use outprob_core::{Error, Float};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

/// A Gaussian fit of `x` by `spec`, with its options.
fn gaussian<T: Float>(x: &[T], spec: &PyGaussianSpec) -> std::result::Result<GaussianFit, Error> {
    let (fit, pre) = fit_gaussian_with(x, &spec.core, spec.pretransform, spec.fixed_center)?;
    let pre_min = pre.min();
    Ok(GaussianFit {
        pre_min,
        ..fit.into()
    })
}

#[pyfunction]
#[pyo3(signature = (x, *, spec, threads = 0))]
pub(crate) fn fit_gaussian(
    py: Python<'_>,
    x: Floats<'_>,
    spec: &PyGaussianSpec,
    threads: usize,
) -> Result<GaussianFit> {
    Ok(with_slice!(py, threads, x, |s| gaussian(s, spec))?)
}

/// `(fit, probabilities, map)` of a C-contiguous, aligned float64/float32
/// 1-D array, else `None` (the caller's general path converts or
/// explains).
fn fused<'py>(
    py: Python<'py>,
    what: &FusedFit,
    x: &Bound<'py, PyAny>,
    threads: usize,
) -> Result<Option<Bound<'py, PyAny>>> {
    let Some((p, (fit, map))) = map_array(py, what, x, None, threads)? else {
        return Ok(None);
    };
    let fit = match fit {
        Fit::Gaussian(g) => GaussianFit::from(g).into_bound_py_any(py)?,
        Fit::Linear(l) => LinearFit::from(l).into_bound_py_any(py)?,
    };
    Ok(Some((fit, p, PyFittedMap(map)).into_bound_py_any(py)?))
}

#[pyfunction]
#[pyo3(signature = (x, *, spec, threads = 0))]
pub(crate) fn fit_transform_gaussian<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    spec: &PyGaussianSpec,
    threads: usize,
) -> Result<Option<Bound<'py, PyAny>>> {
    fused(py, &FusedFit::Gaussian(spec.core), x, threads)
}

#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, negate, threads = 0))]
pub(crate) fn fit_transform_linear<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
    threads: usize,
) -> Result<Option<Bound<'py, PyAny>>> {
    let nan_policy = nan_policy.0;
    fused(py, &FusedFit::Linear { nan_policy, negate }, x, threads)
}

#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, negate, threads = 0))]
pub(crate) fn fit_rank<'py>(
    py: Python<'py>,
    x: Floats<'py>,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
    threads: usize,
) -> Result<Bound<'py, PyArray1<f64>>> {
    let sorted = with_slice!(py, threads, x, |s| fit_sorted(s, nan_policy.0, negate))?;
    Ok(PyArray1::from_vec(py, sorted))
}

#[pyfunction]
#[pyo3(signature = (x, out, *, log, nan_policy, negate))]
pub(crate) fn fit_transform_rank<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    out: &Bound<'py, PyAny>,
    log: bool,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
) -> Result<Bound<'py, PyArray1<f64>>> {
    let nan_policy = nan_policy.0;
    let rank = FusedRank {
        log,
        nan_policy,
        negate,
    };
    let Some((_, sorted)) = map_array(py, &rank, x, Some(out), 1)? else {
        return Err(PyTypeError::new_err("x must be a C-contiguous float ndarray").into());
    };
    Ok(PyArray1::from_vec(py, sorted))
}

/// A fit of one score column: its own keyword parameters, then
/// `nan_policy` and `negate`; the core's fit returned as the record `$out`.
macro_rules! fitter {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $out:ty,
     |$s:ident, $nan:ident, $negate:ident| $body:expr) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (x, *, $($arg,)* nan_policy, negate, threads = 0))]
        pub(crate) fn $name(
            py: Python<'_>,
            x: Floats<'_>,
            $($arg: $ty,)*
            nan_policy: Wrap<NanPolicy>,
            negate: bool,
            threads: usize,
        ) -> Result<$out> {
            let ($nan, $negate) = (nan_policy.0, negate);
            Ok(with_slice!(py, threads, x, |$s| $body)?.into())
        }
    };
}

fitter!(
    /// Linear scaling.
    fit_linear() -> LinearFit, |s, nan, negate| core_fit_linear(s, nan, negate)
);
fitter!(
    /// Top-k scaling.
    fit_top_k(k: usize) -> TopKFit, |s, nan, negate| core_fit_top_k(s, k, nan, negate, true)
);
fitter!(
    /// Sigmoid scaling.
    fit_sigmoid(maxiter: usize) -> SigmoidFit,
    |s, nan, negate| core_fit_sigmoid(s, nan, negate, maxiter)
);
fitter!(
    /// Mixture-model scaling.
    fit_mixture(maxiter: usize, tol: f64) -> MixtureFit,
    |s, nan, negate| core_fit_mixture(s, nan, negate, maxiter, tol)
);
fitter!(
    /// Gamma scaling.
    fit_gamma(method: Wrap<GammaMethod>, offset: Option<f64>) -> GammaFit,
    |s, nan, negate| {
        let spec = GammaSpec { method: method.0, offset, nan_policy: nan, negate };
        core_fit_gamma(s, &spec)
    }
);
