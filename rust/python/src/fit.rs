//! Fitting the scalings of contract §4–§5 and §10 to one score column,
//! and the fitted map that every transform reads. A Gaussian fit's spec
//! is checked once when Python builds it and then passed whole to every
//! fit: in memory, fused with its transform, streaming or windowed. The
//! map lives without the scaler that fitted it, its state as builtins
//! (for `to_dict` and pickling).

use crate::array::map_array;
use crate::convert::Estimator;
use crate::prelude::*;
use numpy::ndarray::ArrayView1;
use numpy::PyArrayMethods;
use outprob_core::streaming::fit::{needs_sketch, reads_moments};
use outprob_core::transformations::fit::fit_linear as core_fit_linear;
use outprob_core::transformations::fit::{Center, GaussianSpec as CoreSpec, Scale};
use outprob_core::transformations::fitted::{FittedMap, MapKind, MapParts};
use outprob_core::transformations::fused::{Fit, FusedFit, FusedRank};
use outprob_core::transformations::gamma::{fit_gamma as core_fit_gamma, GammaMethod, GammaSpec};
use outprob_core::transformations::gaussian_options::{fit_gaussian_with, PretransformKind};
use outprob_core::transformations::mixture::fit_mixture as core_fit_mixture;
use outprob_core::transformations::rank::{fit_sorted, fit_top_k as core_fit_top_k};
use outprob_core::transformations::sigmoid::fit_sigmoid as core_fit_sigmoid;
use outprob_core::transformations::stored::MAP;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::types::PyType;
use pyo3::IntoPyObjectExt;

#[pyclass(frozen, module = "outprob._core", name = "GaussianSpec")]
#[derive(Clone, Copy)]
pub(crate) struct PyGaussianSpec {
    pub(crate) core: CoreSpec,
    pub(crate) pretransform: PretransformKind,
    pub(crate) fixed_center: Option<f64>,
}

#[pymethods]
impl PyGaussianSpec {
    #[new]
    #[pyo3(signature = (
        *, center, scale, trim = 0.1, ddof = 0, maxiter = 30, tol = 1e-8,
        nan_policy = Wrap(NanPolicy::Omit), negate = false, pretransform = None,
        fixed_center = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        center: Estimator<Center>,
        scale: Estimator<Scale>,
        trim: f64,
        ddof: usize,
        maxiter: usize,
        tol: f64,
        nan_policy: Wrap<NanPolicy>,
        negate: bool,
        pretransform: Option<Wrap<PretransformKind>>,
        fixed_center: Option<f64>,
    ) -> Result<Self> {
        let core = CoreSpec {
            center: center.0,
            scale: scale.0,
            trim,
            ddof,
            maxiter,
            tol,
            nan_policy: nan_policy.0,
            negate,
        }
        .checked()?;
        Ok(PyGaussianSpec {
            core,
            pretransform: pretransform.map_or(PretransformKind::Identity, |p| p.0),
            fixed_center,
        })
    }

    fn with_trim(&self, trim: f64) -> Result<Self> {
        let core = self.core.with_trim(trim)?;
        Ok(PyGaussianSpec { core, ..*self })
    }

    #[getter]
    fn fallbacks(&self) -> Vec<&'static str> {
        self.core.scale.chain().iter().map(|s| s.name()).collect()
    }

    #[getter(needs_sketch)]
    fn streaming_needs_sketch(&self) -> bool {
        needs_sketch(&self.core)
    }

    #[getter(reads_moments)]
    fn streaming_reads_moments(&self) -> bool {
        reads_moments(&self.core)
    }
}

#[pyclass(frozen, module = "outprob._core", name = "FittedMap")]
pub(crate) struct PyFittedMap(pub(crate) FittedMap);

#[pymethods]
impl PyFittedMap {
    #[new]
    fn new(state: &Bound<'_, PyDict>) -> Result<Self> {
        let record = record_from_dict(state, MAP)?;
        Ok(PyFittedMap(FittedMap::from_record(record)?))
    }

    #[staticmethod]
    fn one_column(kind: &str, negate: bool, params: Vec<f64>) -> Result<Self> {
        let parts = MapParts::one_column(kind.parse::<MapKind>()?, negate, &params);
        Ok(PyFittedMap(FittedMap::new(parts)?))
    }

    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        record_to_dict(py, &self.0.to_record())
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyType>, (Bound<'py, PyDict>,))> {
        Ok((slf.get_type(), (slf.get().state(slf.py())?,)))
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.0.parts().kind.name()
    }

    #[getter]
    fn n_features(&self) -> Option<usize> {
        self.0.n_features()
    }

    fn column(&self, j: usize) -> PyResult<Vec<f64>> {
        let params = &self.0.parts().params;
        let column: Option<Vec<f64>> = params.iter().map(|p| p.get(j).copied()).collect();
        column.ok_or_else(|| PyValueError::new_err(format!("no parameters of column {j}")))
    }

    fn sorted<'py>(slf: &Bound<'py, Self>, j: usize) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let column = slf
            .get()
            .0
            .parts()
            .sorted
            .get(j)
            .ok_or_else(|| PyValueError::new_err(format!("no sorted scores of column {j}")))?;
        // SAFETY: the map is frozen and never changes its vectors, so their
        // memory stays where it is while the map, the view's base, lives.
        let view = unsafe {
            PyArray1::borrow_from_array(&ArrayView1::from(&column[..]), slf.clone().into_any())
        };
        view.readwrite().make_nonwriteable();
        Ok(view)
    }

    #[pyo3(signature = (x, out = None, *, threads = 0))]
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
        threads: usize,
    ) -> Result<Option<Bound<'py, PyAny>>> {
        let mapped = map_array(py, &self.0, x, out, threads)?;
        Ok(mapped.map(|(p, ())| p))
    }
}

#[pyfunction]
#[pyo3(signature = (x, *, spec, threads = 0))]
pub(crate) fn fit_gaussian(
    py: Python<'_>,
    x: Floats<'_>,
    spec: &PyGaussianSpec,
    threads: usize,
) -> Result<GaussianFit> {
    let (core, pre, fixed) = (&spec.core, spec.pretransform, spec.fixed_center);
    let (fit, pre) = with_slice!(py, threads, x, |s| fit_gaussian_with(s, core, pre, fixed))?;
    let pre_min = pre.min();
    Ok(GaussianFit {
        pre_min,
        ..fit.into()
    })
}

/// `(fit, probabilities, map)` of a C-contiguous, aligned float64/float32
/// 1-D array, the fit `None` where it is plain (its parameters are the
/// map's); else `None` (the caller's general path converts or explains).
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
        _ if what.plain(&fit) => py.None().into_bound(py),
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
    ($name:ident($($arg:ident: $ty:ty),*) -> $out:ty,
     |$s:ident, $nan:ident, $negate:ident| $body:expr) => {
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

fitter!(fit_linear() -> LinearFit, |s, nan, negate| core_fit_linear(s, nan, negate));
fitter!(fit_top_k(k: usize) -> TopKFit, |s, nan, negate| {
    core_fit_top_k(s, k, nan, negate, true)
});
fitter!(fit_sigmoid(maxiter: usize) -> SigmoidFit, |s, nan, negate| {
    core_fit_sigmoid(s, nan, negate, maxiter)
});
fitter!(fit_mixture(maxiter: usize, tol: f64) -> MixtureFit, |s, nan, negate| {
    core_fit_mixture(s, nan, negate, maxiter, tol)
});
fitter!(fit_gamma(method: Wrap<GammaMethod>, offset: Option<f64>) -> GammaFit, |s, nan, negate| {
    let spec = GammaSpec { method: method.0, offset, nan_policy: nan, negate };
    core_fit_gamma(s, &spec)
});
