//! `outprob._core`: the PyO3 binding of `outprob-core`.
//!
//! Each function extracts C-contiguous float32/float64 arrays (the Python
//! layer guarantees contiguity and native byte order), releases the GIL for
//! the computation, and maps core errors to `ValueError` in one place.

// PyO3 extracts arguments as owned values.
#![allow(clippy::needless_pass_by_value)]

use numpy::{Element, PyReadonlyArray1, PyReadonlyArrayDyn, PyReadwriteArrayDyn};
use outprob_core::fit::{fit_gaussian as core_fit_gaussian, fit_linear as core_fit_linear};
use outprob_core::fit::{Center, GaussianSpec, Scale};
use outprob_core::mest::{MEstimate, MParams, Norm, StartScale};
use outprob_core::sample::{sample, NanPolicy};
use outprob_core::scaling::{self, Gaussian, Linear, Scaling};
use outprob_core::{location, scale, select, Error, Float};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn to_py(e: Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A 1-D score array of either float type.
#[derive(FromPyObject)]
enum Scores<'py> {
    F64(PyReadonlyArray1<'py, f64>),
    F32(PyReadonlyArray1<'py, f32>),
}

/// Runs `f` on the contiguous data of `x` without the GIL.
macro_rules! with_slice {
    ($py:expr, $x:expr, |$s:ident| $body:expr) => {
        match $x {
            Scores::F64(a) => {
                let $s = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                $py.detach(|| $body)
            }
            Scores::F32(a) => {
                let $s = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                $py.detach(|| $body)
            }
        }
    };
}

/// A fixed number or an estimator name.
#[derive(FromPyObject)]
enum Spec {
    Value(f64),
    Name(String),
}

fn nan_policy(s: &str) -> PyResult<NanPolicy> {
    s.parse().map_err(to_py)
}

/// Runs an estimator on a NaN-free scratch copy of `x`.
fn estimate<T: Float, R>(
    x: &[T],
    nan: NanPolicy,
    f: impl FnOnce(&mut [T]) -> Result<R, Error>,
) -> Result<R, Error> {
    f(&mut sample(x, nan, false)?)
}

#[pyfunction]
fn mean(py: Python<'_>, x: Scores<'_>, nan_policy: &str) -> PyResult<f64> {
    let nan = self::nan_policy(nan_policy)?;
    with_slice!(py, x, |s| estimate(s, nan, |b| Ok(location::mean(b)))).map_err(to_py)
}

#[pyfunction]
#[pyo3(name = "std")]
fn std_dev(py: Python<'_>, x: Scores<'_>, ddof: usize, nan_policy: &str) -> PyResult<f64> {
    let nan = self::nan_policy(nan_policy)?;
    with_slice!(py, x, |s| estimate(s, nan, |b| scale::std(b, ddof))).map_err(to_py)
}

#[pyfunction]
fn median(py: Python<'_>, x: Scores<'_>, nan_policy: &str) -> PyResult<f64> {
    let nan = self::nan_policy(nan_policy)?;
    with_slice!(py, x, |s| estimate(s, nan, |b| Ok(select::median(b)))).map_err(to_py)
}

#[pyfunction]
fn quantile(py: Python<'_>, x: Scores<'_>, q: Vec<f64>, nan_policy: &str) -> PyResult<Vec<f64>> {
    let nan = self::nan_policy(nan_policy)?;
    if let Some(bad) = q.iter().find(|q| !(0.0..=1.0).contains(*q)) {
        return Err(PyValueError::new_err(format!(
            "q: quantiles must be in [0, 1], got {bad}"
        )));
    }
    with_slice!(py, x, |s| estimate(s, nan, |b| Ok(select::quantiles(
        b, &q
    ))))
    .map_err(to_py)
}

#[pyfunction]
fn upper_trimmed_mean(
    py: Python<'_>,
    x: Scores<'_>,
    alpha: f64,
    nan_policy: &str,
) -> PyResult<f64> {
    let nan = self::nan_policy(nan_policy)?;
    with_slice!(py, x, |s| estimate(s, nan, |b| {
        location::upper_trimmed_mean(b, alpha)
    }))
    .map_err(to_py)
}

#[pyfunction]
fn nmad(py: Python<'_>, x: Scores<'_>, nan_policy: &str) -> PyResult<f64> {
    let nan = self::nan_policy(nan_policy)?;
    with_slice!(py, x, |s| estimate(s, nan, |b| Ok(scale::nmad(b)))).map_err(to_py)
}

#[pyfunction]
fn niqr(py: Python<'_>, x: Scores<'_>, nan_policy: &str) -> PyResult<f64> {
    let nan = self::nan_policy(nan_policy)?;
    with_slice!(py, x, |s| estimate(s, nan, |b| Ok(scale::niqr(b)))).map_err(to_py)
}

#[pyfunction]
fn trimmed_std(
    py: Python<'_>,
    x: Scores<'_>,
    center: f64,
    alpha: f64,
    nan_policy: &str,
) -> PyResult<f64> {
    let nan = self::nan_policy(nan_policy)?;
    with_slice!(py, x, |s| estimate(s, nan, |b| scale::trimmed_std(
        b, center, alpha
    )))
    .map_err(to_py)
}

fn start_name(s: StartScale) -> &'static str {
    match s {
        StartScale::Nmad => "nmad",
        StartScale::Niqr => "niqr",
        StartScale::Std => "std",
        StartScale::Constant => "constant",
    }
}

/// (location, scale, n_iter, converged, start scale name)
type MTuple = (f64, f64, usize, bool, &'static str);

fn m_tuple(e: &MEstimate) -> MTuple {
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
    x: Scores<'_>,
    norm: &str,
    c: f64,
    tuning: Option<f64>,
    maxiter: usize,
    tol: f64,
    nan_policy: &str,
) -> PyResult<MTuple> {
    let nan = self::nan_policy(nan_policy)?;
    let norm: Norm = norm.parse().map_err(to_py)?;
    let params = MParams {
        c,
        tuning: tuning.unwrap_or(norm.default_tuning()),
        maxiter,
        tol,
        ..MParams::new(norm)
    };
    with_slice!(py, x, |s| estimate(s, nan, |b| {
        outprob_core::mest::m_estimate(b, &params)
    }))
    .map(|e| m_tuple(&e))
    .map_err(to_py)
}

/// (center, scale, scale_used, [(norm, M-estimate), ...])
type FitTuple = (f64, f64, &'static str, Vec<(&'static str, MTuple)>);

/// Fits a Gaussian scaling.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn fit_gaussian(
    py: Python<'_>,
    x: Scores<'_>,
    center: Spec,
    scale: Spec,
    trim: f64,
    ddof: usize,
    maxiter: usize,
    tol: f64,
    nan_policy: &str,
    negate: bool,
) -> PyResult<FitTuple> {
    let spec = GaussianSpec {
        center: match center {
            Spec::Value(v) => Center::Value(v),
            Spec::Name(n) => n.parse().map_err(to_py)?,
        },
        scale: match scale {
            Spec::Value(v) => Scale::Value(v),
            Spec::Name(n) => n.parse().map_err(to_py)?,
        },
        trim,
        ddof,
        maxiter,
        tol,
        nan_policy: self::nan_policy(nan_policy)?,
        negate,
    };
    let fit = with_slice!(py, x, |s| core_fit_gaussian(s, &spec)).map_err(to_py)?;
    let ms = fit
        .m_estimates
        .iter()
        .map(|(norm, e)| (norm.name(), m_tuple(e)))
        .collect();
    Ok((
        fit.params.center,
        fit.params.scale,
        fit.scale_used.name(),
        ms,
    ))
}

/// Fits linear scaling; returns (min, max).
#[pyfunction]
fn fit_linear(
    py: Python<'_>,
    x: Scores<'_>,
    nan_policy: &str,
    negate: bool,
) -> PyResult<(f64, f64)> {
    let nan = self::nan_policy(nan_policy)?;
    with_slice!(py, x, |s| core_fit_linear(s, nan, negate))
        .map(|l| (l.min, l.max))
        .map_err(to_py)
}

/// Transforms C-contiguous `x` (rows × columns) into the preallocated `out`
/// of the same dtype and shape.
fn transform_into<T: Float + Element, S: Scaling>(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    columns: &[S],
    negate: bool,
) -> PyResult<()> {
    let x: PyReadonlyArrayDyn<'_, T> = x.extract()?;
    let mut out: PyReadwriteArrayDyn<'_, T> = out.extract()?;
    let src = x
        .as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let dst = out
        .as_slice_mut()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.detach(|| scaling::transform(src, dst, columns, negate))
        .map_err(to_py)
}

fn transform_any<S: Scaling>(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    columns: &[S],
    negate: bool,
) -> PyResult<()> {
    if x.extract::<PyReadonlyArrayDyn<'_, f32>>().is_ok() {
        transform_into::<f32, S>(py, x, out, columns, negate)
    } else {
        transform_into::<f64, S>(py, x, out, columns, negate)
    }
}

/// Maps scores to probabilities into the preallocated `out`: `scaling` is
/// "gaussian" (params: centers, scales) or "linear" (params: mins, maxs),
/// one pair per column.
#[pyfunction]
fn transform(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    scaling: &str,
    first: Vec<f64>,
    second: Vec<f64>,
    negate: bool,
) -> PyResult<()> {
    let pairs = first.iter().copied().zip(second.iter().copied());
    match scaling {
        "gaussian" => {
            let columns: Vec<Gaussian> = pairs
                .map(|(center, scale)| Gaussian { center, scale })
                .collect();
            transform_any(py, x, out, &columns, negate)
        }
        "linear" => {
            let columns: Vec<Linear> = pairs.map(|(min, max)| Linear { min, max }).collect();
            transform_any(py, x, out, &columns, negate)
        }
        other => Err(PyValueError::new_err(format!("unknown scaling {other:?}"))),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mean, m)?)?;
    m.add_function(wrap_pyfunction!(std_dev, m)?)?;
    m.add_function(wrap_pyfunction!(median, m)?)?;
    m.add_function(wrap_pyfunction!(quantile, m)?)?;
    m.add_function(wrap_pyfunction!(upper_trimmed_mean, m)?)?;
    m.add_function(wrap_pyfunction!(nmad, m)?)?;
    m.add_function(wrap_pyfunction!(niqr, m)?)?;
    m.add_function(wrap_pyfunction!(trimmed_std, m)?)?;
    m.add_function(wrap_pyfunction!(m_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(fit_gaussian, m)?)?;
    m.add_function(wrap_pyfunction!(fit_linear, m)?)?;
    m.add_function(wrap_pyfunction!(transform, m)?)?;
    Ok(())
}
