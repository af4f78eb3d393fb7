//! Per-partition kernels of `outprob.dask`'s exact fit, and the driver of
//! its M-estimation (the core's iteration, with sums reduced by a Python
//! callback). Results pickle: partitions return them from workers.

use crate::convert::Wrap;
use crate::results::{Census, MEstimate, SumPart};
use crate::{with_slice, Floats, Result};
use numpy::{IntoPyArray, PyArray1};
use outprob_core::distributed::partition as part;
use outprob_core::estimators::mest::{MParams, Norm};
use outprob_core::numeric::reduce::summarize;
use outprob_core::transformations::gaussian_options::PretransformKind;
use pyo3::prelude::*;

#[pyfunction]
pub(crate) fn part_census(py: Python<'_>, x: Floats<'_>) -> Result<Census> {
    let (len, s) = with_slice!(py, x, |v| (v.len(), summarize(v)));
    Ok(Census {
        len,
        count: s.count,
        nan_count: s.nan.count,
        nan_first: s.nan.first,
        inf_count: s.inf.count,
        inf_first: s.inf.first,
        min: s.min,
        max: s.max,
    })
}

/// (count below `lo`, bucket counts)
#[pyfunction]
#[pyo3(signature = (x, *, center, negate, lo, shift, buckets))]
pub(crate) fn part_histogram<'py>(
    py: Python<'py>,
    x: Floats<'_>,
    center: Option<f64>,
    negate: bool,
    lo: u64,
    shift: u32,
    buckets: usize,
) -> Result<(u64, Bound<'py, PyArray1<u64>>)> {
    let key = part::key(center, negate);
    let (below, counts) = with_slice!(py, x, |v| part::histogram(v, key, lo, shift, buckets))?;
    Ok((below, counts.into_pyarray(py)))
}

#[pyfunction]
#[pyo3(signature = (x, *, center, negate, lo, hi))]
pub(crate) fn part_collect<'py>(
    py: Python<'py>,
    x: Floats<'_>,
    center: Option<f64>,
    negate: bool,
    lo: u64,
    hi: u64,
) -> Result<Bound<'py, PyArray1<f64>>> {
    let key = part::key(center, negate);
    let v = with_slice!(py, x, |v| part::collect(v, key, lo, hi));
    Ok(v.into_pyarray(py))
}

/// The pretransformed scores `f(s)` (`min`: the fitted minimum of
/// `"sqrt"`; NaN stays NaN).
#[pyfunction]
#[pyo3(signature = (x, *, kind, min))]
pub(crate) fn part_pretransform<'py>(
    py: Python<'py>,
    x: Floats<'_>,
    kind: Wrap<PretransformKind>,
    min: f64,
) -> Result<Bound<'py, PyArray1<f64>>> {
    let pre = kind.0.fitted(min);
    let y = with_slice!(py, x, |v| pre.apply_all(v));
    Ok(y.into_pyarray(py))
}

#[pyfunction]
#[pyo3(signature = (values, *, ranks))]
pub(crate) fn select_exact(
    py: Python<'_>,
    values: Vec<f64>,
    ranks: Vec<usize>,
) -> Result<Vec<f64>> {
    Ok(py.detach(|| part::select(values, &ranks))?)
}

#[pyfunction]
pub(crate) fn order_key(v: f64) -> u64 {
    part::order_key(v)
}

#[pyfunction]
pub(crate) fn from_order_key(k: u64) -> f64 {
    part::from_order_key(k)
}

#[pyfunction]
#[pyo3(signature = (n, *, q))]
pub(crate) fn quantile_ranks(n: usize, q: f64) -> Result<Vec<usize>> {
    Ok(part::quantile_ranks(n, q)?)
}

#[pyfunction]
#[pyo3(signature = (n, *, q, values))]
pub(crate) fn quantile_value(n: usize, q: f64, values: Vec<f64>) -> f64 {
    part::quantile_value(n, q, &values)
}

#[pyfunction]
pub(crate) fn median_value(values: Vec<f64>) -> f64 {
    part::median_value(&values)
}

#[pyfunction]
#[pyo3(signature = (x, *, negate, v))]
pub(crate) fn part_sum_below(
    py: Python<'_>,
    x: Floats<'_>,
    negate: bool,
    v: f64,
) -> Result<SumPart> {
    let p = with_slice!(py, x, |d| part::sum_below(d, negate, v));
    Ok(SumPart {
        negative: p.negative,
        limbs: p.limbs,
        count: p.count,
    })
}

#[pyfunction]
#[pyo3(signature = (parts, *, v, ties))]
pub(crate) fn exact_total(parts: Vec<SumPart>, v: f64, ties: usize) -> f64 {
    let parts: Vec<part::SumPart> = parts
        .into_iter()
        .map(|p| part::SumPart {
            negative: p.negative,
            limbs: p.limbs,
            count: p.count,
        })
        .collect();
    part::exact_total(&parts, v, ties)
}

/// (Σ squares in units of 2^e, count)
#[pyfunction]
#[pyo3(signature = (x, *, negate, c, w, e))]
pub(crate) fn part_squares_below(
    py: Python<'_>,
    x: Floats<'_>,
    negate: bool,
    c: f64,
    w: f64,
    e: i32,
) -> Result<(f64, u64)> {
    Ok(with_slice!(py, x, |d| part::squares_below(
        d, negate, c, w, e
    )))
}

/// `[Σw, Σw·d, n_in, Σ_in d, Σ_in d², n_out]` of one partition.
#[pyfunction]
#[pyo3(signature = (x, *, negate, norm, m, sigma))]
pub(crate) fn part_m_sums(
    py: Python<'_>,
    x: Floats<'_>,
    negate: bool,
    norm: Wrap<Norm>,
    m: f64,
    sigma: f64,
) -> Result<[f64; 6]> {
    let params = MParams::new(norm.0);
    Ok(with_slice!(py, x, |d| part::m_sums(
        d, negate, &params, m, sigma
    )))
}

/// Huber's proposal 2 on `n` scores with every sum reduced by
/// `reduce(m, σ)` (the `part_m_sums` of every partition, added up).
#[pyfunction]
#[pyo3(signature = (reduce, *, norm, maxiter, tol, n, mu0, sigma0))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn m_iterate(
    reduce: Bound<'_, PyAny>,
    norm: Wrap<Norm>,
    maxiter: usize,
    tol: f64,
    n: usize,
    mu0: f64,
    sigma0: f64,
) -> Result<MEstimate> {
    let params = MParams {
        maxiter,
        tol,
        ..MParams::new(norm.0)
    };
    let call =
        |m: f64, sigma: f64| -> Result<[f64; 6]> { Ok(reduce.call1((m, sigma))?.extract()?) };
    let e = part::m_iterate_reduced(call, &params, n, mu0, sigma0)?;
    Ok(MEstimate::of(norm.0, &e))
}
