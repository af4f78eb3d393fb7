//! Evaluation measures of contract §6 (`outprob.metrics`). Labels arrive as a
//! checked bool array.

use crate::{parse, to_py, with_slice, Floats};
use numpy::PyReadonlyArray1;
use outprob_core::evaluation::binning::{check_bin_counts, Scheme, Sorted};
use outprob_core::evaluation::metrics::{self, Strata};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// (all, outlier, inlier)
type StrataTuple = (f64, f64, f64);

fn tuple(s: Strata) -> StrataTuple {
    (s.all, s.outlier, s.inlier)
}

fn labels<'a>(y: &'a PyReadonlyArray1<'_, bool>) -> PyResult<&'a [bool]> {
    y.as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// (brier, sharpness, refinement, calibration, n_outliers, n)
type EvaluationTuple = (
    StrataTuple,
    StrataTuple,
    StrataTuple,
    StrataTuple,
    usize,
    usize,
);

#[pyfunction]
fn evaluate(
    py: Python<'_>,
    p: Floats<'_>,
    y: PyReadonlyArray1<'_, bool>,
    bins: &str,
    n_bins: Vec<usize>,
    threads: usize,
) -> PyResult<EvaluationTuple> {
    let (y, scheme): (_, Scheme) = (labels(&y)?, parse(bins)?);
    let e =
        with_slice!(py, threads, p, |s| metrics::evaluate(s, y, scheme, &n_bins)).map_err(to_py)?;
    Ok((
        tuple(e.brier),
        tuple(e.sharpness),
        tuple(e.refinement),
        tuple(e.calibration),
        e.n_outliers,
        e.n,
    ))
}

#[pyfunction]
fn brier_and_sharpness(
    py: Python<'_>,
    p: Floats<'_>,
    y: PyReadonlyArray1<'_, bool>,
    threads: usize,
) -> PyResult<(StrataTuple, StrataTuple)> {
    let y = labels(&y)?;
    let (b, s) =
        with_slice!(py, threads, p, |s| metrics::brier_and_sharpness(s, y)).map_err(to_py)?;
    Ok((tuple(b), tuple(s)))
}

#[pyfunction]
fn refinement_and_calibration(
    py: Python<'_>,
    p: Floats<'_>,
    y: PyReadonlyArray1<'_, bool>,
    bins: &str,
    n_bins: Vec<usize>,
    threads: usize,
) -> PyResult<(StrataTuple, StrataTuple)> {
    let (y, scheme): (_, Scheme) = (labels(&y)?, parse(bins)?);
    check_bin_counts(&n_bins).map_err(to_py)?;
    let (r, c) = with_slice!(py, threads, p, |s| Sorted::new(s, Some(y))
        .and_then(|sorted| metrics::refinement_and_calibration(&sorted, scheme, &n_bins)))
    .map_err(to_py)?;
    Ok((tuple(r), tuple(c)))
}

#[pyfunction]
fn bin_edges(
    py: Python<'_>,
    p: Floats<'_>,
    k: usize,
    bins: &str,
    threads: usize,
) -> PyResult<Vec<f64>> {
    let scheme: Scheme = parse(bins)?;
    check_bin_counts(&[k]).map_err(to_py)?;
    with_slice!(py, threads, p, |s| Sorted::new(s, None)
        .and_then(|sorted| sorted.edges(scheme, k)))
    .map_err(to_py)
}

/// (edges, mean probability, outlier fraction, count)
type ReliabilityTuple = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<usize>);

#[pyfunction]
fn reliability_curve(
    py: Python<'_>,
    p: Floats<'_>,
    y: PyReadonlyArray1<'_, bool>,
    bins: &str,
    k: usize,
    threads: usize,
) -> PyResult<ReliabilityTuple> {
    let (y, scheme): (_, Scheme) = (labels(&y)?, parse(bins)?);
    let r = with_slice!(py, threads, p, |s| metrics::reliability_curve(
        s, y, scheme, k
    ))
    .map_err(to_py)?;
    Ok((r.edges, r.mean_probability, r.outlier_fraction, r.count))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(brier_and_sharpness, m)?)?;
    m.add_function(wrap_pyfunction!(refinement_and_calibration, m)?)?;
    m.add_function(wrap_pyfunction!(bin_edges, m)?)?;
    m.add_function(wrap_pyfunction!(reliability_curve, m)?)?;
    Ok(())
}
