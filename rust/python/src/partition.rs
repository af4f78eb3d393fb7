//! Per-partition kernels of `outprob.dask`'s exact fit, and the driver of
//! its M-estimation (the core's iteration with sums reduced by a
//! callback).

use crate::{parse, to_py, Floats};
use numpy::{IntoPyArray, PyArray1};
use outprob_core::estimators::mest::{iterate, MParams, Norm, StartScale, Sums};
use outprob_core::numeric::rank::Key;
use outprob_core::numeric::reduce::summarize;
use outprob_core::streaming::partition as part;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::cell::RefCell;

macro_rules! on_floats {
    ($py:expr, $x:expr, |$s:ident| $body:expr) => {
        match $x {
            Floats::F64(a) => {
                let $s = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                $py.detach(|| $body)
            }
            Floats::F32(a) => {
                let $s = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                $py.detach(|| $body)
            }
        }
    };
}

fn key(center: Option<f64>, negate: bool) -> Key {
    match center {
        None => Key::Value { negate },
        Some(center) => Key::Deviation { center, negate },
    }
}

/// (len, count, nan count, first nan, inf count, first inf, min, max)
#[pyfunction]
#[allow(clippy::type_complexity)]
fn part_census(
    py: Python<'_>,
    x: Floats<'_>,
) -> PyResult<(usize, usize, usize, usize, usize, usize, f64, f64)> {
    let s = on_floats!(py, x, |v| (v.len(), summarize(v)));
    Ok((
        s.0,
        s.1.count,
        s.1.nan.count,
        s.1.nan.first,
        s.1.inf.count,
        s.1.inf.first,
        s.1.min,
        s.1.max,
    ))
}

#[pyfunction]
#[pyo3(signature = (x, center, negate, lo, shift, buckets))]
fn part_histogram<'py>(
    py: Python<'py>,
    x: Floats<'_>,
    center: Option<f64>,
    negate: bool,
    lo: u64,
    shift: u32,
    buckets: usize,
) -> PyResult<(u64, Bound<'py, PyArray1<u64>>)> {
    if buckets > 1 << 20 || shift > 63 {
        return Err(PyValueError::new_err("buckets <= 2^20 and shift <= 63"));
    }
    let k = key(center, negate);
    let (below, counts) = on_floats!(py, x, |v| part::histogram(v, k, lo, shift, buckets));
    Ok((below, counts.into_pyarray(py)))
}

#[pyfunction]
#[pyo3(signature = (x, center, negate, lo, hi))]
fn part_collect<'py>(
    py: Python<'py>,
    x: Floats<'_>,
    center: Option<f64>,
    negate: bool,
    lo: u64,
    hi: u64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let k = key(center, negate);
    let v = on_floats!(py, x, |v| part::collect(v, k, lo, hi));
    Ok(v.into_pyarray(py))
}

#[pyfunction]
fn select_exact(py: Python<'_>, values: Vec<f64>, ranks: Vec<usize>) -> PyResult<Vec<f64>> {
    if ranks.windows(2).any(|w| w[0] >= w[1]) || ranks.last().is_some_and(|&r| r >= values.len()) {
        return Err(PyValueError::new_err(
            "ranks must be ascending, unique and in range",
        ));
    }
    Ok(py.detach(|| part::select(values, &ranks)))
}

#[pyfunction]
fn order_key(v: f64) -> u64 {
    part::order_key(v)
}

#[pyfunction]
fn from_order_key(k: u64) -> f64 {
    part::from_order_key(k)
}

#[pyfunction]
fn quantile_ranks(n: usize, q: f64) -> PyResult<Vec<usize>> {
    if n == 0 || !(0.0..=1.0).contains(&q) {
        return Err(PyValueError::new_err("n >= 1 and q in [0, 1]"));
    }
    Ok(part::quantile_ranks(n, q))
}

#[pyfunction]
fn quantile_value(n: usize, q: f64, values: Vec<f64>) -> f64 {
    part::quantile_value(n, q, &values)
}

#[pyfunction]
fn median_value(values: Vec<f64>) -> f64 {
    part::median_value(&values)
}

/// (negative, limbs, count) of the exact sum of the oriented values < v.
#[pyfunction]
fn part_sum_below(
    py: Python<'_>,
    x: Floats<'_>,
    negate: bool,
    v: f64,
) -> PyResult<(bool, Vec<u64>, u64)> {
    let (s, n) = on_floats!(py, x, |d| part::sum_below(d, negate, v));
    let (neg, limbs) = s.to_limbs().unwrap_or((false, Vec::new()));
    Ok((neg, limbs, n))
}

/// Σ of exact sums given as (negative, limbs) plus `ties·v`, rounded.
#[pyfunction]
fn exact_total(parts: Vec<(bool, Vec<u64>)>, v: f64, ties: usize) -> f64 {
    let mut total = outprob_core::numeric::sum::exact_product(v, ties);
    for (neg, limbs) in parts {
        total.merge(&outprob_core::numeric::sum::ExactSum::from_limbs(
            neg, &limbs,
        ));
    }
    total.value()
}

#[pyfunction]
fn part_squares_below(
    py: Python<'_>,
    x: Floats<'_>,
    negate: bool,
    c: f64,
    w: f64,
    e: i32,
) -> PyResult<(f64, u64)> {
    Ok(on_floats!(py, x, |d| part::squares_below(
        d, negate, c, w, e
    )))
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn part_m_sums(
    py: Python<'_>,
    x: Floats<'_>,
    negate: bool,
    norm: &str,
    m: f64,
    sigma: f64,
) -> PyResult<[f64; 6]> {
    let norm: Norm = parse(norm)?;
    let p = MParams::new(norm);
    Ok(on_floats!(py, x, |d| part::m_sums(
        d, negate, norm, p.tuning, p.c, m, sigma
    )))
}

/// Sums of one iteration step reduced over a cluster by `callback(m, σ)`
/// → `[Σw, Σw·d, n_in, Σ_in d, Σ_in d², n_out]`.
/// Reduced sums by `(m, σ)` bits.
type SumsCache = RefCell<Vec<((u64, u64), [f64; 6])>>;

struct Remote<'py> {
    callback: Bound<'py, PyAny>,
    n: usize,
    cache: SumsCache,
    error: RefCell<Option<PyErr>>,
    calls: RefCell<usize>,
}

impl Remote<'_> {
    fn sums(&self, m: f64, sigma: f64) -> [f64; 6] {
        let keyed = (m.to_bits(), sigma.to_bits());
        if let Some((_, s)) = self.cache.borrow().iter().find(|(k, _)| *k == keyed) {
            return *s;
        }
        if self.error.borrow().is_some() {
            return [f64::NAN; 6];
        }
        *self.calls.borrow_mut() += 1;
        match self
            .callback
            .call1((m, sigma))
            .and_then(|r| r.extract::<[f64; 6]>())
        {
            Ok(s) => {
                self.cache.borrow_mut().push((keyed, s));
                s
            }
            Err(e) => {
                *self.error.borrow_mut() = Some(e);
                [f64::NAN; 6]
            }
        }
    }
}

impl Sums for Remote<'_> {
    fn len(&self) -> usize {
        self.n
    }
    fn location(&self, _p: &MParams, m: f64, sigma: f64) -> (f64, f64) {
        let s = self.sums(m, sigma);
        (s[0], s[1])
    }
    fn scale(&self, _c: f64, mu: f64, sigma: f64, nmu: f64) -> (f64, usize) {
        // The inlier set is that of (μ_t, σ_t), whose sums the iteration's
        // first location step already brought: Σ_I (s − ν)² from the
        // moments about μ_t, ν = μ_{t+1}.
        let s = self.sums(mu, sigma);
        let delta = nmu - mu;
        let ss = (s[4] - 2.0 * delta * s[3] + s[2] * delta * delta) / (sigma * sigma);
        (ss.max(0.0), s[5] as usize)
    }
}

/// Huber's proposal 2 with every sum reduced by `callback`; returns
/// (location, scale, n_iter, converged, reductions).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn m_iterate(
    callback: Bound<'_, PyAny>,
    norm: &str,
    maxiter: usize,
    tol: f64,
    n: usize,
    mu0: f64,
    sigma0: f64,
) -> PyResult<(f64, f64, usize, bool, usize)> {
    let norm: Norm = parse(norm)?;
    let params = MParams {
        maxiter,
        tol,
        ..MParams::new(norm)
    };
    params.check().map_err(to_py)?;
    let remote = Remote {
        callback,
        n,
        cache: RefCell::new(Vec::new()),
        error: RefCell::new(None),
        calls: RefCell::new(0),
    };
    let e = iterate(&remote, &params, mu0, sigma0, StartScale::Nmad);
    if let Some(err) = remote.error.take() {
        return Err(err);
    }
    let calls = *remote.calls.borrow();
    Ok((e.location, e.scale, e.n_iter, e.converged, calls))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(part_census, m)?)?;
    m.add_function(wrap_pyfunction!(part_histogram, m)?)?;
    m.add_function(wrap_pyfunction!(part_collect, m)?)?;
    m.add_function(wrap_pyfunction!(select_exact, m)?)?;
    m.add_function(wrap_pyfunction!(order_key, m)?)?;
    m.add_function(wrap_pyfunction!(from_order_key, m)?)?;
    m.add_function(wrap_pyfunction!(quantile_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(quantile_value, m)?)?;
    m.add_function(wrap_pyfunction!(median_value, m)?)?;
    m.add_function(wrap_pyfunction!(part_sum_below, m)?)?;
    m.add_function(wrap_pyfunction!(exact_total, m)?)?;
    m.add_function(wrap_pyfunction!(part_squares_below, m)?)?;
    m.add_function(wrap_pyfunction!(part_m_sums, m)?)?;
    m.add_function(wrap_pyfunction!(m_iterate, m)?)?;
    Ok(())
}
