//! Fitting the scalings of contract §4–§5 and §10 to one score column.

use crate::convert::Wrap;
use crate::maps::PyMap;
use crate::results::{GammaFit, GaussianFit, LinearFit, MixtureFit, SigmoidFit, TopKFit};
use crate::spec::Spec;
use crate::{run_map, with_slice, Floats, Result, HOLD_GIL_MAX};
use numpy::{Element, PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use outprob_core::sample::NanPolicy;
use outprob_core::transformations::fit::{
    fit_gaussian as core_fit_gaussian, fit_linear as core_fit_linear,
};
use outprob_core::transformations::fitted::{FittedMap, MapKind, MapParts};
use outprob_core::transformations::gamma::{fit_gamma as core_fit_gamma, GammaMethod, GammaSpec};
use outprob_core::transformations::gaussian_options::fit_gaussian_with;
use outprob_core::transformations::mixture::fit_mixture as core_fit_mixture;
use outprob_core::transformations::rank::{
    fit_sorted, fit_top_k as core_fit_top_k, fit_transform_rank as core_fit_transform_rank,
};
use outprob_core::transformations::sigmoid::fit_sigmoid as core_fit_sigmoid;
use outprob_core::{Error, Float};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

/// A Gaussian fit of `x` by `spec` (with its options when it has any).
fn gaussian<T: Float>(x: &[T], spec: &Spec) -> std::result::Result<GaussianFit, Error> {
    if !spec.has_options() {
        return Ok(GaussianFit::of(&core_fit_gaussian(x, &spec.core)?, None));
    }
    let (fit, pre) = fit_gaussian_with(x, &spec.core, spec.pretransform, spec.fixed_center)?;
    Ok(GaussianFit::of(&fit, pre.min()))
}

/// Fits a Gaussian scaling.
#[pyfunction]
#[pyo3(signature = (x, *, spec, threads = 0))]
fn fit_gaussian(py: Python<'_>, x: Floats<'_>, spec: &Spec, threads: usize) -> Result<GaussianFit> {
    Ok(with_slice!(py, threads, x, |s| gaussian(s, spec))?)
}

/// Fits linear scaling.
#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, negate, threads = 0))]
fn fit_linear(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
    threads: usize,
) -> Result<LinearFit> {
    let l = with_slice!(py, threads, x, |s| core_fit_linear(s, nan_policy.0, negate))?;
    Ok(LinearFit {
        min: l.min,
        max: l.max,
    })
}

/// What a fused fit and transform fits.
enum Fused<'a> {
    Gaussian(&'a Spec),
    Linear(NanPolicy, bool),
}

impl Fused<'_> {
    fn negate(&self) -> bool {
        match self {
            Fused::Gaussian(spec) => spec.core.negate,
            Fused::Linear(_, negate) => *negate,
        }
    }

    /// Fits `src` and maps it into `dst`: the fit as Python receives it and
    /// its map.
    fn fit_and_map<T: Float>(
        &self,
        src: &[T],
        dst: &mut [T],
    ) -> std::result::Result<(Fitted, FittedMap), Error> {
        let negate = self.negate();
        let (fitted, parts) = match self {
            Fused::Gaussian(spec) => {
                let fit = core_fit_gaussian(src, &spec.core)?;
                let g = fit.params;
                let parts = MapParts::one_column(MapKind::Gaussian, negate, &[g.center, g.scale]);
                (Fitted::Gaussian(GaussianFit::of(&fit, None)), parts)
            }
            Fused::Linear(nan_policy, _) => {
                let l = core_fit_linear(src, *nan_policy, negate)?;
                let parts = MapParts::one_column(MapKind::Linear, negate, &[l.min, l.max]);
                (
                    Fitted::Linear(LinearFit {
                        min: l.min,
                        max: l.max,
                    }),
                    parts,
                )
            }
        };
        let map = FittedMap::new(parts)?;
        map.transform(src, dst)?;
        Ok((fitted, map))
    }

    /// Whether a fit of `n` scores runs with the GIL held: a fit without an
    /// iteration takes microseconds on a few thousand scores.
    fn holds_gil(&self, n: usize) -> bool {
        let iterates = match self {
            Fused::Gaussian(spec) => spec.iterates(),
            Fused::Linear(..) => false,
        };
        n < HOLD_GIL_MAX && !iterates
    }

    /// `(fit, probabilities, map)` for a C-contiguous, aligned 1-D
    /// array of `T`, else `None`.
    fn run<'py, T: Float + Element>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        threads: usize,
    ) -> Result<Option<Bound<'py, PyAny>>> {
        let Ok(a) = x.cast::<PyArray1<T>>() else {
            return Ok(None);
        };
        if !a.is_c_contiguous() || !a.is_aligned() {
            return Ok(None);
        }
        let out = PyArray1::<T>::zeros(py, a.len(), false);
        // SAFETY: `out` was created just now and has not been shared.
        let dst = unsafe { out.as_slice_mut() }?;
        let fitted = if self.holds_gil(a.len()) {
            // SAFETY: the GIL is held until the fit returns, and this
            // extension writes into arrays this small only while holding it
            // (`run_map`), so no write to `a` overlaps this read.
            let Ok(src) = (unsafe { a.as_slice() }) else {
                return Ok(None);
            };
            self.fit_and_map(src, dst)
        } else {
            let Ok(view) = a.try_readonly() else {
                return Ok(None);
            };
            let src = view.as_slice()?;
            crate::run(py, threads, src.len(), || self.fit_and_map(src, dst))?
        };
        let (fit, map) = fitted?;
        let fit = match fit {
            Fitted::Gaussian(g) => g.into_bound_py_any(py)?,
            Fitted::Linear(l) => l.into_bound_py_any(py)?,
        };
        Ok(Some((fit, out, PyMap(map)).into_bound_py_any(py)?))
    }

    fn fit_transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        threads: usize,
    ) -> Result<Option<Bound<'py, PyAny>>> {
        match self.run::<f64>(py, x, threads)? {
            Some(r) => Ok(Some(r)),
            None => self.run::<f32>(py, x, threads),
        }
    }
}

/// A fit as Python receives it.
enum Fitted {
    Gaussian(GaussianFit),
    Linear(LinearFit),
}

/// `(fit, probabilities, map)`: a Gaussian fit of a C-contiguous,
/// aligned, native float64/float32 1-D array, the probabilities of its
/// scores (a new array of their dtype) and the fit's `FittedMap` — or
/// `None` for any other input (the caller's general path converts or
/// explains). The spec must have no options.
#[pyfunction]
#[pyo3(signature = (x, *, spec, threads = 0))]
fn fit_transform_gaussian<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    spec: &Spec,
    threads: usize,
) -> Result<Option<Bound<'py, PyAny>>> {
    Fused::Gaussian(spec).fit_transform(py, x, threads)
}

/// As `fit_transform_gaussian`, for linear scaling.
#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, negate, threads = 0))]
fn fit_transform_linear<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
    threads: usize,
) -> Result<Option<Bound<'py, PyAny>>> {
    Fused::Linear(nan_policy.0, negate).fit_transform(py, x, threads)
}

/// The sorted, oriented, NaN-free fitted scores (float64).
#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, negate, threads = 0))]
fn fit_rank<'py>(
    py: Python<'py>,
    x: Floats<'py>,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
    threads: usize,
) -> Result<Bound<'py, PyArray1<f64>>> {
    let sorted = with_slice!(py, threads, x, |s| fit_sorted(s, nan_policy.0, negate))?;
    Ok(PyArray1::from_vec(py, sorted))
}

/// Rank scaling fitted on 1-D `x` and applied to it, into `out` (same
/// dtype and length); returns the sorted fitted scores.
#[pyfunction]
#[pyo3(signature = (x, out, *, log, nan_policy, negate))]
fn fit_transform_rank<'py>(
    py: Python<'py>,
    x: Floats<'py>,
    out: &Bound<'py, PyAny>,
    log: bool,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
) -> Result<Bound<'py, PyArray1<f64>>> {
    let nan = nan_policy.0;
    let sorted = match x {
        Floats::F64(a) => {
            let mut o: numpy::PyReadwriteArray1<'_, f64> = out.extract()?;
            let (src, dst) = (a.as_slice()?, o.as_slice_mut()?);
            run_map(py, 1, src.len(), || {
                core_fit_transform_rank(src, dst, nan, negate, log)
            })?
        }
        Floats::F32(a) => {
            let mut o: numpy::PyReadwriteArray1<'_, f32> = out.extract()?;
            let (src, dst) = (a.as_slice()?, o.as_slice_mut()?);
            run_map(py, 1, src.len(), || {
                core_fit_transform_rank(src, dst, nan, negate, log)
            })?
        }
    }?;
    Ok(PyArray1::from_vec(py, sorted))
}

/// Top-k scaling.
#[pyfunction]
#[pyo3(signature = (x, *, k, nan_policy, negate, threads = 0))]
fn fit_top_k(
    py: Python<'_>,
    x: Floats<'_>,
    k: usize,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
    threads: usize,
) -> Result<TopKFit> {
    let t = with_slice!(py, threads, x, |s| core_fit_top_k(
        s,
        k,
        nan_policy.0,
        negate,
        true
    ))?;
    Ok(TopKFit {
        cutoff: t.cutoff,
        max: t.max,
    })
}

/// Sigmoid scaling.
#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, negate, maxiter, threads = 0))]
fn fit_sigmoid(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
    maxiter: usize,
    threads: usize,
) -> Result<SigmoidFit> {
    let f = with_slice!(py, threads, x, |s| core_fit_sigmoid(
        s,
        nan_policy.0,
        negate,
        maxiter
    ))?;
    let p = f.params;
    Ok(SigmoidFit {
        center: p.center,
        scale: p.scale,
        a: p.a,
        b: p.b,
        n_iter: f.n_iter,
        converged: f.converged,
    })
}

/// Mixture-model scaling.
#[pyfunction]
#[pyo3(signature = (x, *, nan_policy, negate, maxiter, tol, threads = 0))]
fn fit_mixture(
    py: Python<'_>,
    x: Floats<'_>,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
    maxiter: usize,
    tol: f64,
    threads: usize,
) -> Result<MixtureFit> {
    let f = with_slice!(py, threads, x, |s| core_fit_mixture(
        s,
        nan_policy.0,
        negate,
        maxiter,
        tol
    ))?;
    let p = f.params;
    Ok(MixtureFit {
        scale: p.scale,
        alpha: p.alpha,
        mu: p.mu,
        sigma: p.sigma,
        lambda_: p.lambda,
        n_iter: f.n_iter,
        converged: f.converged,
        degenerate: f.degenerate,
    })
}

/// Gamma scaling.
#[pyfunction]
#[pyo3(signature = (x, *, method, offset, nan_policy, negate, threads = 0))]
fn fit_gamma(
    py: Python<'_>,
    x: Floats<'_>,
    method: Wrap<GammaMethod>,
    offset: Option<f64>,
    nan_policy: Wrap<NanPolicy>,
    negate: bool,
    threads: usize,
) -> Result<GammaFit> {
    let spec = GammaSpec {
        method: method.0,
        offset,
        nan_policy: nan_policy.0,
        negate,
    };
    let fit = with_slice!(py, threads, x, |s| core_fit_gamma(s, &spec))?;
    let p = fit.params;
    Ok(GammaFit {
        offset: p.offset,
        mean: p.mean,
        scale: p.scale,
        method_used: fit.method_used.name().to_owned(),
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_gaussian, m)?)?;
    m.add_function(wrap_pyfunction!(fit_linear, m)?)?;
    m.add_function(wrap_pyfunction!(fit_transform_gaussian, m)?)?;
    m.add_function(wrap_pyfunction!(fit_transform_linear, m)?)?;
    m.add_function(wrap_pyfunction!(fit_rank, m)?)?;
    m.add_function(wrap_pyfunction!(fit_transform_rank, m)?)?;
    m.add_function(wrap_pyfunction!(fit_top_k, m)?)?;
    m.add_function(wrap_pyfunction!(fit_sigmoid, m)?)?;
    m.add_function(wrap_pyfunction!(fit_mixture, m)?)?;
    m.add_function(wrap_pyfunction!(fit_gamma, m)?)?;
    Ok(())
}
