//! The core's results as Python reads them: small frozen classes with
//! named, typed fields. Each pickles (by its constructor's arguments),
//! because the per-partition kernels of `outprob.dask` return them from
//! worker processes.

use outprob_core::estimators::mest::{MEstimate as CoreMEstimate, Norm};
use outprob_core::evaluation::metrics::Strata as CoreStrata;
use outprob_core::streaming::fit::StreamingResult as CoreStreamingResult;
use outprob_core::transformations::fit::GaussianFit as CoreGaussianFit;
use outprob_core::transformations::gamma::GammaFit as CoreGammaFit;
use outprob_core::transformations::mixture::MixtureFit as CoreMixtureFit;
use outprob_core::transformations::rank::TopK;
use outprob_core::transformations::scaling::Linear;
use outprob_core::transformations::sigmoid::SigmoidFit as CoreSigmoidFit;
use pyo3::prelude::*;

/// A frozen class with the given fields, each readable; a constructor
/// taking them all (by keyword too), `__getnewargs__` for pickling,
/// equality and a repr listing the fields.
macro_rules! record {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[pyclass(frozen, get_all, eq, from_py_object, module = "outprob._core")]
        #[derive(Clone, Debug, PartialEq)]
        pub(crate) struct $name {
            $($(#[$fdoc])* pub(crate) $field: $ty,)*
        }

        #[pymethods]
        impl $name {
            #[new]
            #[pyo3(signature = ($($field),*))]
            #[allow(clippy::too_many_arguments)]
            fn new($($field: $ty),*) -> Self {
                Self { $($field),* }
            }

            fn __getnewargs__(&self) -> ($($ty,)*) {
                ($(self.$field.clone(),)*)
            }

            fn __repr__(&self) -> String {
                let fields: Vec<String> =
                    vec![$(format!("{}={:?}", stringify!($field), self.$field)),*];
                format!("{}({})", stringify!($name), fields.join(", "))
            }
        }
    };
}

record!(
    /// Huber's proposal 2 (contract §3) with one norm.
    MEstimate {
        norm: String,
        location: f64,
        scale: f64,
        /// Outer iterations run.
        n_iter: usize,
        converged: bool,
        /// The scale the iteration started from ("nmad" or its fallback,
        /// "constant" for constant scores).
        start: String,
    }
);

impl MEstimate {
    pub(crate) fn of(norm: Norm, e: &CoreMEstimate) -> Self {
        MEstimate {
            norm: norm.name().to_owned(),
            location: e.location,
            scale: e.scale,
            n_iter: e.n_iter,
            converged: e.converged,
            start: e.start.name().to_owned(),
        }
    }

    pub(crate) fn all(ms: &[(Norm, CoreMEstimate)]) -> Vec<Self> {
        ms.iter().map(|(n, e)| MEstimate::of(*n, e)).collect()
    }
}

record!(
    /// A Gaussian fit (contract §4–§5): μ, σ and how σ was obtained.
    GaussianFit {
        center: f64,
        scale: f64,
        /// The scale estimator that produced σ (the chosen one or its §5
        /// fallback; "value" for a fixed σ).
        scale_used: String,
        /// Every M-estimate the fit ran.
        m_estimates: Vec<MEstimate>,
        /// The smallest fitted score of a "sqrt" pretransform, else None.
        pre_min: Option<f64>,
    }
);

impl GaussianFit {
    pub(crate) fn of(fit: &CoreGaussianFit, pre_min: Option<f64>) -> Self {
        GaussianFit {
            center: fit.params.center,
            scale: fit.params.scale,
            scale_used: fit.scale_used.name().to_owned(),
            m_estimates: MEstimate::all(&fit.m_estimates),
            pre_min,
        }
    }
}

record!(
    /// A linear fit: the smallest and largest oriented score.
    LinearFit { min: f64, max: f64 }
);

record!(
    /// A top-k fit: the k-th largest and the largest score.
    TopKFit { cutoff: f64, max: f64 }
);

impl From<Linear> for LinearFit {
    fn from(l: Linear) -> Self {
        LinearFit {
            min: l.min,
            max: l.max,
        }
    }
}

impl From<TopK> for TopKFit {
    fn from(t: TopK) -> Self {
        TopKFit {
            cutoff: t.cutoff,
            max: t.max,
        }
    }
}

record!(
    /// A sigmoid fit (contract §10).
    SigmoidFit {
        center: f64,
        scale: f64,
        a: f64,
        b: f64,
        n_iter: usize,
        converged: bool,
    }
);

impl From<CoreSigmoidFit> for SigmoidFit {
    fn from(f: CoreSigmoidFit) -> Self {
        let p = f.params;
        SigmoidFit {
            center: p.center,
            scale: p.scale,
            a: p.a,
            b: p.b,
            n_iter: f.n_iter,
            converged: f.converged,
        }
    }
}

record!(
    /// A mixture-model fit (contract §10); `lambda_` is λ.
    MixtureFit {
        scale: f64,
        alpha: f64,
        mu: f64,
        sigma: f64,
        lambda_: f64,
        n_iter: usize,
        converged: bool,
        degenerate: bool,
    }
);

impl From<CoreMixtureFit> for MixtureFit {
    fn from(f: CoreMixtureFit) -> Self {
        let p = f.params;
        MixtureFit {
            scale: p.scale,
            alpha: p.alpha,
            mu: p.mu,
            sigma: p.sigma,
            lambda_: p.lambda,
            n_iter: f.n_iter,
            converged: f.converged,
            degenerate: f.degenerate,
        }
    }
}

record!(
    /// A gamma fit (contract §10).
    GammaFit {
        offset: f64,
        mean: f64,
        scale: f64,
        method_used: String,
    }
);

impl From<CoreGammaFit> for GammaFit {
    fn from(f: CoreGammaFit) -> Self {
        let p = f.params;
        GammaFit {
            offset: p.offset,
            mean: p.mean,
            scale: p.scale,
            method_used: f.method_used.name().to_owned(),
        }
    }
}

record!(
    /// The §5 census of a batch or partition.
    Census {
        len: usize,
        /// Scores that are not NaN.
        count: usize,
        nan_count: usize,
        /// Index of the first NaN (meaningful when `nan_count` > 0).
        nan_first: usize,
        inf_count: usize,
        inf_first: usize,
        /// Extremes of the non-NaN scores (meaningful when `count` > 0).
        min: f64,
        max: f64,
    }
);

record!(
    /// A streaming Gaussian fit with its error bounds (contract §9).
    StreamingResult {
        center: f64,
        scale: f64,
        scale_used: String,
        /// Intervals holding the exact μ and σ (None for M-estimates).
        center_interval: Option<(f64, f64)>,
        scale_interval: Option<(f64, f64)>,
        /// Bound on |p̂ − p| over all scores.
        probability_error: Option<f64>,
        rank_error: f64,
        m_estimates: Vec<MEstimate>,
        n: u64,
    }
);

impl From<&CoreStreamingResult> for StreamingResult {
    fn from(r: &CoreStreamingResult) -> Self {
        StreamingResult {
            center: r.center,
            scale: r.scale,
            scale_used: r.scale_used.name().to_owned(),
            center_interval: r.center_interval.map(|i| (i.lo, i.hi)),
            scale_interval: r.scale_interval.map(|i| (i.lo, i.hi)),
            probability_error: r.probability_error,
            rank_error: r.rank_error,
            m_estimates: MEstimate::all(&r.m_estimates),
            n: r.n,
        }
    }
}

record!(
    /// A KLL sketch's parameters and state (DataSketches' names).
    SketchInfo {
        k: u16,
        /// The smallest k merged in.
        min_k: u16,
        n: u64,
        num_retained: usize,
        is_estimation_mode: bool,
        /// Items are doubles (else floats).
        is_double: bool,
        seed: u64,
        /// The smallest and largest item seen.
        extremes: Option<(f64, f64)>,
    }
);

record!(
    /// One partition's exact sum below a cut-off (its limbs) and count.
    SumPart {
        negative: bool,
        limbs: Vec<u64>,
        count: u64,
    }
);

record!(
    /// An evaluation measure overall and within each class (NaN for an
    /// absent class).
    Strata {
        all: f64,
        outlier: f64,
        inlier: f64,
    }
);

impl From<CoreStrata> for Strata {
    fn from(s: CoreStrata) -> Self {
        Strata {
            all: s.all,
            outlier: s.outlier,
            inlier: s.inlier,
        }
    }
}

record!(
    /// The measures of contract §6 of one set of probabilities.
    Evaluation {
        brier: Strata,
        sharpness: Strata,
        refinement: Strata,
        calibration: Strata,
        n_outliers: usize,
        n: usize,
    }
);

record!(
    /// A reliability diagram's bins.
    ReliabilityCurve {
        edges: Vec<f64>,
        mean_probability: Vec<f64>,
        outlier_fraction: Vec<f64>,
        count: Vec<usize>,
    }
);

record!(
    /// A step-up selection (contract §11): how many p-values it selected,
    /// its threshold t(k*) (0 when none) and Storey's π̂₀ (1 otherwise).
    SelectionFit {
        count: usize,
        threshold: f64,
        null_proportion: f64,
    }
);
