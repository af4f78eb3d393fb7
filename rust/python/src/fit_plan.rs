//! A scaler's checked fitting parameters held by the extension, for the
//! latency of `fit_transform` on small score sets (issue #11): one call
//! reads the scores, fits, maps them and returns the fit's
//! [`Transformer`], where the general path parses the parameters, fits,
//! then maps in separate calls.

use crate::scaling::{fit_tuple, gaussian_spec, FitTuple, Spec};
use crate::transformer::Transformer;
use crate::{map_new, parse, to_py, HOLD_GIL_MAX};
use numpy::{Element, PyArray1, PyUntypedArrayMethods};
use outprob_core::sample::NanPolicy;
use outprob_core::transformations::fit::{fit_gaussian, fit_linear, Center, GaussianSpec, Scale};
use outprob_core::transformations::scaling::{self, Gaussian, Linear};
use outprob_core::{Error, Float};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

#[derive(Clone, Copy)]
enum Plan {
    Gaussian(GaussianSpec),
    Linear { nan_policy: NanPolicy, negate: bool },
}

/// What one fit gives back before it is handed to Python.
enum Fitted {
    Gaussian(FitTuple, Gaussian),
    Linear(Linear),
}

/// A fit of one score vector with fixed, checked parameters.
#[pyclass(frozen, module = "outprob._core")]
pub(crate) struct FitPlan {
    plan: Plan,
    threads: usize,
}

impl FitPlan {
    /// Whether a fit of `n` scores may run with the GIL held: short fits
    /// without an iteration take microseconds, so releasing the GIL would
    /// cost a good part of them.
    fn holds_gil(&self, n: usize) -> bool {
        let iterates = match &self.plan {
            Plan::Gaussian(spec) => {
                matches!(spec.center, Center::M(_)) || matches!(spec.scale, Scale::M(_))
            }
            Plan::Linear { .. } => false,
        };
        n < HOLD_GIL_MAX && !iterates
    }

    fn fit_and_map<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<Fitted, Error> {
        match self.plan {
            Plan::Gaussian(spec) => {
                let fit = fit_gaussian(src, &spec)?;
                scaling::transform(src, dst, &[fit.params], spec.negate)?;
                Ok(Fitted::Gaussian(fit_tuple(&fit), fit.params))
            }
            Plan::Linear { nan_policy, negate } => {
                let fit = fit_linear(src, nan_policy, negate)?;
                scaling::transform(src, dst, &[fit], negate)?;
                Ok(Fitted::Linear(fit))
            }
        }
    }

    fn run<'py, T: Float + Element>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Ok(a) = x.cast::<PyArray1<T>>() else {
            return Ok(None);
        };
        if !a.is_c_contiguous() || !a.is_aligned() {
            return Ok(None);
        }
        let hold_gil = self.holds_gil(a.len());
        let Some((out, fitted)) = map_new(py, a, hold_gil, self.threads, |src, dst| {
            self.fit_and_map(src, dst)
        })?
        else {
            return Ok(None);
        };
        let fitted = fitted.map_err(to_py)?;
        let (fit, transformer) = match fitted {
            Fitted::Gaussian(tuple, g) => (
                tuple.into_bound_py_any(py)?,
                Transformer::gaussian(g, self.negate()),
            ),
            Fitted::Linear(l) => (
                (l.min, l.max).into_bound_py_any(py)?,
                Transformer::linear(l, self.negate()),
            ),
        };
        Ok(Some((fit, out, transformer).into_bound_py_any(py)?))
    }

    fn negate(&self) -> bool {
        match self.plan {
            Plan::Gaussian(spec) => spec.negate,
            Plan::Linear { negate, .. } => negate,
        }
    }
}

#[pymethods]
impl FitPlan {
    /// The plan of a Gaussian fit (the arguments of `fit_gaussian`).
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn gaussian(
        center: Spec,
        scale: Spec,
        trim: f64,
        ddof: usize,
        maxiter: usize,
        tol: f64,
        nan_policy: &str,
        negate: bool,
        threads: usize,
    ) -> PyResult<Self> {
        let spec = gaussian_spec(center, scale, trim, ddof, maxiter, tol, nan_policy, negate)?;
        spec.check().map_err(to_py)?;
        Ok(Self {
            plan: Plan::Gaussian(spec),
            threads,
        })
    }

    /// The plan of a linear fit (the arguments of `fit_linear`).
    #[staticmethod]
    fn linear(nan_policy: &str, negate: bool, threads: usize) -> PyResult<Self> {
        Ok(Self {
            plan: Plan::Linear {
                nan_policy: parse(nan_policy)?,
                negate,
            },
            threads,
        })
    }

    /// `(fit, probabilities, transformer)` for a C-contiguous, aligned,
    /// native float64/float32 1-D array: `fit` as `fit_gaussian` /
    /// `fit_linear` return it, the probabilities of the same scores (a new
    /// array of their dtype) and the fit's `Transformer`. `None` for any
    /// other input (the caller then takes the general path, which converts
    /// or explains); a `ValueError` for scores the fit refuses.
    fn fit_transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.run::<f64>(py, x)? {
            Some(r) => Ok(Some(r)),
            None => self.run::<f32>(py, x),
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FitPlan>()
}
