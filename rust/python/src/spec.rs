//! What a Gaussian fit is asked to do (contract §1–§5, §10's options),
//! checked once when Python builds it and then passed whole to every fit:
//! in memory, fused with its transform, streaming or windowed.

use crate::convert::{Estimator, Wrap};
use crate::Result;
use outprob_core::sample::NanPolicy;
use outprob_core::streaming::fit::{needs_sketch, reads_moments};
use outprob_core::transformations::fit::{Center, GaussianSpec as CoreSpec, Scale};
use outprob_core::transformations::gaussian_options::PretransformKind;
use pyo3::prelude::*;

/// A checked Gaussian fit specification.
#[pyclass(frozen, module = "outprob._core", name = "GaussianSpec")]
#[derive(Clone, Copy)]
pub(crate) struct PyGaussianSpec {
    pub(crate) core: CoreSpec,
    /// ELKI's pretransform of the scores.
    pub(crate) pretransform: PretransformKind,
    /// ELKI's fixed center (σ of "std" and "nmad" measured about it).
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
