//! Evaluation measures of contract §6 (`outprob.metrics`). Labels arrive as
//! a checked bool array.

use crate::convert::Wrap;
use crate::results::{Evaluation, ReliabilityCurve, Strata};
use crate::{with_slice, Floats, Result};
use numpy::PyReadonlyArray1;
use outprob_core::evaluation::binning::{self, Scheme};
use outprob_core::evaluation::metrics;
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(signature = (p, y, *, bins, n_bins, threads = 0))]
pub(crate) fn evaluate(
    py: Python<'_>,
    p: Floats<'_>,
    y: PyReadonlyArray1<'_, bool>,
    bins: Wrap<Scheme>,
    n_bins: Vec<usize>,
    threads: usize,
) -> Result<Evaluation> {
    let y = y.as_slice()?;
    Ok(with_slice!(py, threads, p, |s| metrics::evaluate(s, y, bins.0, &n_bins))?.into())
}

/// (Brier score, sharpness error)
#[pyfunction]
#[pyo3(signature = (p, y, *, threads = 0))]
pub(crate) fn brier_and_sharpness(
    py: Python<'_>,
    p: Floats<'_>,
    y: PyReadonlyArray1<'_, bool>,
    threads: usize,
) -> Result<(Strata, Strata)> {
    let y = y.as_slice()?;
    let (b, s) = with_slice!(py, threads, p, |s| metrics::brier_and_sharpness(s, y))?;
    Ok((b.into(), s.into()))
}

/// (refinement error, calibration error)
#[pyfunction]
#[pyo3(signature = (p, y, *, bins, n_bins, threads = 0))]
pub(crate) fn refinement_and_calibration(
    py: Python<'_>,
    p: Floats<'_>,
    y: PyReadonlyArray1<'_, bool>,
    bins: Wrap<Scheme>,
    n_bins: Vec<usize>,
    threads: usize,
) -> Result<(Strata, Strata)> {
    let y = y.as_slice()?;
    let (r, c) = with_slice!(py, threads, p, |s| metrics::binned_errors(
        s, y, bins.0, &n_bins
    ))?;
    Ok((r.into(), c.into()))
}

#[pyfunction]
#[pyo3(signature = (p, *, k, bins, threads = 0))]
pub(crate) fn bin_edges(
    py: Python<'_>,
    p: Floats<'_>,
    k: usize,
    bins: Wrap<Scheme>,
    threads: usize,
) -> Result<Vec<f64>> {
    Ok(with_slice!(py, threads, p, |s| binning::bin_edges(
        s, bins.0, k
    ))?)
}

#[pyfunction]
#[pyo3(signature = (p, y, *, bins, k, threads = 0))]
pub(crate) fn reliability_curve(
    py: Python<'_>,
    p: Floats<'_>,
    y: PyReadonlyArray1<'_, bool>,
    bins: Wrap<Scheme>,
    k: usize,
    threads: usize,
) -> Result<ReliabilityCurve> {
    let y = y.as_slice()?;
    Ok(with_slice!(py, threads, p, |s| metrics::reliability_curve(
        s, y, bins.0, k
    ))?
    .into())
}
