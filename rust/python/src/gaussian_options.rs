//! `GaussianScaler`'s ELKI options (contract §10): pretransform, fixed
//! center, λ.

use crate::scaling::{fit_tuple, gaussian_spec, FitTuple, Spec};
use crate::{map_into, to_py, with_slice, Floats};
use numpy::PyArrayDyn;
use outprob_core::transformations::gaussian_options::{
    fit_gaussian_with, transform_with, Pretransform,
};
use outprob_core::transformations::scaling::Gaussian;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Fits a Gaussian scaling with the options; returns the `fit_gaussian`
/// tuple and the pretransform's fitted minimum (NaN unless "sqrt").
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn fit_gaussian_options(
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
    pretransform: &str,
    fixed_center: Option<f64>,
    threads: usize,
) -> PyResult<(FitTuple, f64)> {
    let spec = gaussian_spec(center, scale, trim, ddof, maxiter, tol, nan_policy, negate)?;
    let (fit, pre) = with_slice!(py, threads, x, |s| fit_gaussian_with(
        s,
        &spec,
        pretransform,
        fixed_center
    ))
    .map_err(to_py)?;
    let pre_min = match pre {
        Pretransform::Sqrt { min } => min,
        _ => f64::NAN,
    };
    Ok((fit_tuple(&fit), pre_min))
}

/// Gaussian scaling after a pretransform ("none", "sqrt", "minus_log"),
/// one (pre_min, center, λ·scale) per column, into the preallocated `out`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn gaussian_options_transform(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    pretransform: &str,
    pre_mins: Vec<f64>,
    centers: Vec<f64>,
    scales: Vec<f64>,
    negate: bool,
    threads: usize,
) -> PyResult<()> {
    if pre_mins.len() != centers.len() || centers.len() != scales.len() {
        return Err(PyValueError::new_err(
            "pre_mins, centers and scales need one value per column each",
        ));
    }
    let mut columns = Vec::with_capacity(centers.len());
    for ((&min, &center), &scale) in pre_mins.iter().zip(&centers).zip(&scales) {
        let pre = match pretransform {
            "none" => Pretransform::Identity,
            "sqrt" => Pretransform::Sqrt { min },
            "minus_log" => Pretransform::MinusLog,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown pretransform {other:?}"
                )))
            }
        };
        columns.push((pre, Gaussian { center, scale }));
    }
    if x.cast::<PyArrayDyn<f32>>().is_ok() {
        map_into::<f32>(py, x, out, threads, |s, d| {
            transform_with(s, d, &columns, negate)
        })
    } else {
        map_into::<f64>(py, x, out, threads, |s, d| {
            transform_with(s, d, &columns, negate)
        })
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_gaussian_options, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_options_transform, m)?)?;
    Ok(())
}
