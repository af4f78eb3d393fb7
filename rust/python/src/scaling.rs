//! Fitting and applying scalings (contract §4–§5, the scalers).

use crate::estimators::{m_tuple, MTuple};
use crate::{map_into, parse, to_py, with_slice, Floats};
use numpy::PyArrayDyn;
use outprob_core::transformations::fit::{
    fit_gaussian as core_fit_gaussian, fit_linear as core_fit_linear,
};
use outprob_core::transformations::fit::{Center, GaussianFit, GaussianSpec, Scale};
use outprob_core::transformations::scaling::{self, Gaussian, Linear, Scaling};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// A fixed number or an estimator name.
pub(crate) enum Spec {
    Value(f64),
    Name(String),
}

impl<'py> FromPyObject<'_, 'py> for Spec {
    type Error = PyErr;

    // By hand rather than derived: the derived impl tries `f64` first, and
    // the TypeError it builds for every name cost microseconds per fit.
    fn extract(ob: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(name) = ob.cast::<PyString>() {
            return Ok(Spec::Name(name.to_str()?.to_owned()));
        }
        Ok(Spec::Value(ob.extract()?))
    }
}

/// The core's spec of a Gaussian fit from the Python arguments.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gaussian_spec(
    center: Spec,
    scale: Spec,
    trim: f64,
    ddof: usize,
    maxiter: usize,
    tol: f64,
    nan_policy: &str,
    negate: bool,
) -> PyResult<GaussianSpec> {
    Ok(GaussianSpec {
        center: match center {
            Spec::Value(v) => Center::Value(v),
            Spec::Name(n) => parse(&n)?,
        },
        scale: match scale {
            Spec::Value(v) => Scale::Value(v),
            Spec::Name(n) => parse(&n)?,
        },
        trim,
        ddof,
        maxiter,
        tol,
        nan_policy: parse(nan_policy)?,
        negate,
    })
}

/// (center, scale, scale_used, [(norm, M-estimate), ...])
pub(crate) type FitTuple = (f64, f64, &'static str, Vec<(&'static str, MTuple)>);

/// A core Gaussian fit as Python receives it.
pub(crate) fn fit_tuple(fit: &GaussianFit) -> FitTuple {
    let ms = fit
        .m_estimates
        .iter()
        .map(|(norm, e)| (norm.name(), m_tuple(e)))
        .collect();
    (
        fit.params.center,
        fit.params.scale,
        fit.scale_used.name(),
        ms,
    )
}

/// Fits a Gaussian scaling.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn fit_gaussian(
    py: Python<'_>,
    x: Floats<'_>,
    center: Spec,
    scale: Spec,
    trim: f64,
    ddof: usize,
    maxiter: usize,
    tol: f64,
    nan_policy: &str,
    negate: bool,
    threads: usize,
) -> PyResult<FitTuple> {
    let spec = gaussian_spec(center, scale, trim, ddof, maxiter, tol, nan_policy, negate)?;
    let fit = with_slice!(py, threads, x, |s| core_fit_gaussian(s, &spec)).map_err(to_py)?;
    Ok(fit_tuple(&fit))
}

/// Fits linear scaling; returns (min, max).
#[pyfunction]
fn fit_linear(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: &str,
    negate: bool,
    threads: usize,
) -> PyResult<(f64, f64)> {
    let nan = parse(nan_policy)?;
    with_slice!(py, threads, x, |s| core_fit_linear(s, nan, negate))
        .map(|l| (l.min, l.max))
        .map_err(to_py)
}

pub(crate) fn transform_any<S: Scaling>(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    columns: &[S],
    negate: bool,
    threads: usize,
) -> PyResult<()> {
    if x.cast::<PyArrayDyn<f32>>().is_ok() {
        map_into::<f32>(py, x, out, threads, |s, d| {
            scaling::transform(s, d, columns, negate)
        })
    } else {
        map_into::<f64>(py, x, out, threads, |s, d| {
            scaling::transform(s, d, columns, negate)
        })
    }
}

/// Maps scores to probabilities into the preallocated `out`: `scaling` is
/// "gaussian" (params: centers, scales) or "linear" (params: mins, maxs),
/// one pair per column.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn transform(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    scaling: &str,
    first: Vec<f64>,
    second: Vec<f64>,
    negate: bool,
    threads: usize,
) -> PyResult<()> {
    let pairs = first.iter().copied().zip(second.iter().copied());
    match scaling {
        "gaussian" => {
            let columns: Vec<Gaussian> = pairs
                .map(|(center, scale)| Gaussian { center, scale })
                .collect();
            transform_any(py, x, out, &columns, negate, threads)
        }
        "linear" => {
            let columns: Vec<Linear> = pairs.map(|(min, max)| Linear { min, max }).collect();
            transform_any(py, x, out, &columns, negate, threads)
        }
        other => Err(PyValueError::new_err(format!("unknown scaling {other:?}"))),
    }
}

/// The core's vectorised erf, element-wise (for testing it against SciPy).
#[pyfunction]
fn _erf<'py>(
    py: Python<'py>,
    x: numpy::PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
    let src = x
        .as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut out = vec![0.0; src.len()];
    py.detach(|| outprob_core::numeric::erf::erf_slice(src, &mut out));
    Ok(numpy::PyArray1::from_vec(py, out))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_erf, m)?)?;
    m.add_function(wrap_pyfunction!(fit_gaussian, m)?)?;
    m.add_function(wrap_pyfunction!(fit_linear, m)?)?;
    m.add_function(wrap_pyfunction!(transform, m)?)?;
    Ok(())
}
