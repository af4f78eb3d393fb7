//! Fitting and applying the transformations beyond the paper (contract §10):
//! rank, log-rank, top-k, sigmoid and mixture-model scaling.

use crate::scaling::transform_any;
use crate::{parse, to_py, with_slice, Floats};
use numpy::{PyArray1, PyReadonlyArray1, PyReadwriteArray1};
use outprob_core::transformations::mixture::{fit_mixture as core_fit_mixture, Mixture};
use outprob_core::transformations::rank::{
    fit_sorted, fit_top_k as core_fit_top_k, fit_transform_rank as core_fit_transform_rank, Rank,
    TopK,
};
use outprob_core::transformations::sigmoid::{fit_sigmoid as core_fit_sigmoid, Sigmoid};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The sorted, oriented, NaN-free fitted scores (float64).
#[pyfunction]
fn fit_rank<'py>(
    py: Python<'py>,
    x: Floats<'py>,
    nan_policy: &str,
    negate: bool,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let nan = parse(nan_policy)?;
    let sorted = with_slice!(py, threads, x, |s| fit_sorted(s, nan, negate)).map_err(to_py)?;
    Ok(PyArray1::from_vec(py, sorted))
}

/// Rank scaling fitted on 1-D `x` and applied to it, into `out` (same
/// dtype and length); returns the sorted fitted scores.
#[pyfunction]
fn fit_transform_rank<'py>(
    py: Python<'py>,
    x: Floats<'py>,
    out: &Bound<'py, PyAny>,
    log: bool,
    nan_policy: &str,
    negate: bool,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let nan = parse(nan_policy)?;
    let err = |e: numpy::AsSliceError| PyValueError::new_err(e.to_string());
    let sorted = match x {
        Floats::F64(a) => {
            let mut o: PyReadwriteArray1<'_, f64> = out.extract()?;
            let (src, dst) = (a.as_slice().map_err(err)?, o.as_slice_mut().map_err(err)?);
            crate::run_map(py, 1, src.len(), || {
                core_fit_transform_rank(src, dst, nan, negate, log)
            })?
        }
        Floats::F32(a) => {
            let mut o: PyReadwriteArray1<'_, f32> = out.extract()?;
            let (src, dst) = (a.as_slice().map_err(err)?, o.as_slice_mut().map_err(err)?);
            crate::run_map(py, 1, src.len(), || {
                core_fit_transform_rank(src, dst, nan, negate, log)
            })?
        }
    }
    .map_err(to_py)?;
    Ok(PyArray1::from_vec(py, sorted))
}

/// Top-k scaling: (cutoff, max).
#[pyfunction]
fn fit_top_k(
    py: Python<'_>,
    x: Floats<'_>,
    k: usize,
    nan_policy: &str,
    negate: bool,
    threads: usize,
) -> PyResult<(f64, f64)> {
    let nan = parse(nan_policy)?;
    with_slice!(py, threads, x, |s| core_fit_top_k(s, k, nan, negate, true))
        .map(|t| (t.cutoff, t.max))
        .map_err(to_py)
}

/// Sigmoid scaling: (center, scale, a, b, n_iter, converged).
#[pyfunction]
fn fit_sigmoid(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: &str,
    negate: bool,
    maxiter: usize,
    threads: usize,
) -> PyResult<(f64, f64, f64, f64, usize, bool)> {
    let nan = parse(nan_policy)?;
    let f = with_slice!(py, threads, x, |s| core_fit_sigmoid(
        s, nan, negate, maxiter
    ))
    .map_err(to_py)?;
    let p = f.params;
    Ok((p.center, p.scale, p.a, p.b, f.n_iter, f.converged))
}

/// (scale, alpha, mu, sigma, lambda, n_iter, converged, degenerate)
type MixtureTuple = (f64, f64, f64, f64, f64, usize, bool, bool);

/// Mixture-model scaling.
#[pyfunction]
fn fit_mixture(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: &str,
    negate: bool,
    maxiter: usize,
    tol: f64,
    threads: usize,
) -> PyResult<MixtureTuple> {
    let nan = parse(nan_policy)?;
    let f = with_slice!(py, threads, x, |s| core_fit_mixture(
        s, nan, negate, maxiter, tol
    ))
    .map_err(to_py)?;
    let p = f.params;
    Ok((
        p.scale,
        p.alpha,
        p.mu,
        p.sigma,
        p.lambda,
        f.n_iter,
        f.converged,
        f.degenerate,
    ))
}

/// Rank scaling into the preallocated `out`: one sorted float64 array of
/// fitted scores per column; `log` for log-rank.
#[pyfunction]
fn transform_rank(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    sorted: Vec<PyReadonlyArray1<'_, f64>>,
    log: bool,
    negate: bool,
    threads: usize,
) -> PyResult<()> {
    let slices = sorted
        .iter()
        .map(|a| {
            a.as_slice()
                .map_err(|e| PyValueError::new_err(e.to_string()))
        })
        .collect::<PyResult<Vec<&[f64]>>>()?;
    let columns: Vec<Rank<'_>> = slices.iter().map(|&s| Rank { sorted: s, log }).collect();
    transform_any(py, x, out, &columns, negate, threads)
}

/// Parametric scalings into the preallocated `out`, one parameter row per
/// column: "top_k" (cutoff, max, binary), "sigmoid" (center, scale, a, b),
/// "mixture" (scale, alpha, mu, sigma, lambda).
#[pyfunction]
fn transform_params(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    kind: &str,
    params: Vec<Vec<f64>>,
    negate: bool,
    threads: usize,
) -> PyResult<()> {
    let width = match kind {
        "top_k" => 3,
        "sigmoid" => 4,
        "mixture" => 5,
        other => return Err(PyValueError::new_err(format!("unknown scaling {other:?}"))),
    };
    if params.iter().any(|p| p.len() != width) {
        return Err(PyValueError::new_err(format!(
            "{kind} needs {width} parameters per column"
        )));
    }
    match kind {
        "top_k" => {
            let c: Vec<TopK> = params
                .iter()
                .map(|p| TopK {
                    cutoff: p[0],
                    max: p[1],
                    binary: p[2] != 0.0,
                })
                .collect();
            transform_any(py, x, out, &c, negate, threads)
        }
        "sigmoid" => {
            let c: Vec<Sigmoid> = params
                .iter()
                .map(|p| Sigmoid {
                    center: p[0],
                    scale: p[1],
                    a: p[2],
                    b: p[3],
                })
                .collect();
            transform_any(py, x, out, &c, negate, threads)
        }
        _ => {
            let c: Vec<Mixture> = params
                .iter()
                .map(|p| Mixture {
                    scale: p[0],
                    alpha: p[1],
                    mu: p[2],
                    sigma: p[3],
                    lambda: p[4],
                })
                .collect();
            transform_any(py, x, out, &c, negate, threads)
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_rank, m)?)?;
    m.add_function(wrap_pyfunction!(fit_transform_rank, m)?)?;
    m.add_function(wrap_pyfunction!(fit_top_k, m)?)?;
    m.add_function(wrap_pyfunction!(fit_sigmoid, m)?)?;
    m.add_function(wrap_pyfunction!(fit_mixture, m)?)?;
    m.add_function(wrap_pyfunction!(transform_rank, m)?)?;
    m.add_function(wrap_pyfunction!(transform_params, m)?)?;
    Ok(())
}
