//! The core's results as Python reads them: small frozen classes with
//! named, typed fields, each derived from its core struct by [`records!`].
//! Each pickles (by its constructor's arguments).

use outprob_core::conformal::select::Selection;
use outprob_core::conformal::sketch::CalibrationSketch;
use outprob_core::conformal::tails::TailFit;
use outprob_core::distributed::plan::ColumnFit as CoreColumnFit;
use outprob_core::estimators::mest::{MEstimate as CoreMEstimate, Norm};
use outprob_core::evaluation::metrics::{
    Evaluation as CoreEvaluation, Reliability, Strata as CoreStrata,
};
use outprob_core::sequential::decayed::Moments;
use outprob_core::sequential::drift::{Event, Policy};
use outprob_core::streaming::fit::StreamingResult as CoreStreamingResult;
use outprob_core::streaming::sketch::AnySketch;
use outprob_core::transformations::fit::GaussianFit as CoreGaussianFit;
use outprob_core::transformations::gamma::GammaFit as CoreGammaFit;
use outprob_core::transformations::mixture::MixtureFit as CoreMixtureFit;
use outprob_core::transformations::rank::TopK;
use outprob_core::transformations::scaling::Linear;
use outprob_core::transformations::sigmoid::SigmoidFit as CoreSigmoidFit;
use pyo3::prelude::*;

/// Frozen classes, each with the given fields, each readable; a
/// constructor taking them all (by keyword too), `__getnewargs__` for
/// pickling, equality, a repr listing the fields, and `From<&Core>` (and
/// `From<Core>`): each field is `c.field` converted by `Into`, or the
/// expression after its `=`.
macro_rules! records {
    (@field $c:ident, $field:ident) => { $c.$field.clone().into() };
    (@field $c:ident, $field:ident, $conv:expr) => { $conv };
    ($($(#[$doc:meta])* $name:ident from $core:ty as $c:ident {
        $($(#[$fdoc:meta])* $field:ident : $ty:ty $(= $conv:expr)?),* $(,)?
    })*) => {$(
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

        impl From<&$core> for $name {
            fn from($c: &$core) -> Self {
                $name { $($field: records!(@field $c, $field $(, $conv)?)),* }
            }
        }

        impl From<$core> for $name {
            fn from(c: $core) -> Self {
                Self::from(&c)
            }
        }
    )*};
}

/// Records of the core's results.
pub(crate) fn all<'a, C: 'a, R: From<&'a C>>(results: &'a [C]) -> Vec<R> {
    results.iter().map(R::from).collect()
}

// What each record and field means is `_core.pyi`'s to say.
records! {
    MEstimate from (Norm, CoreMEstimate) as m {
        norm: String = m.0.name().to_owned(),
        location: f64 = m.1.location,
        scale: f64 = m.1.scale,
        n_iter: usize = m.1.n_iter,
        converged: bool = m.1.converged,
        start: String = m.1.start.name().to_owned(),
    }

    GaussianFit from CoreGaussianFit as f {
        center: f64 = f.params.center,
        scale: f64 = f.params.scale,
        scale_used: String = f.scale_used.name().to_owned(),
        m_estimates: Vec<MEstimate> = all(&f.m_estimates),
        pre_min: Option<f64> = None,
    }

    LinearFit from Linear as l { min: f64, max: f64 }

    TopKFit from TopK as t { cutoff: f64, max: f64 }

    SigmoidFit from CoreSigmoidFit as f {
        center: f64 = f.params.center,
        scale: f64 = f.params.scale,
        a: f64 = f.params.a,
        b: f64 = f.params.b,
        n_iter: usize,
        converged: bool,
    }

    MixtureFit from CoreMixtureFit as f {
        scale: f64 = f.params.scale,
        alpha: f64 = f.params.alpha,
        mu: f64 = f.params.mu,
        sigma: f64 = f.params.sigma,
        lambda_: f64 = f.params.lambda,
        n_iter: usize,
        converged: bool,
        degenerate: bool,
    }

    GammaFit from CoreGammaFit as f {
        offset: f64 = f.params.offset,
        mean: f64 = f.params.mean,
        scale: f64 = f.params.scale,
        method_used: String = f.method_used.name().to_owned(),
    }

    StreamingResult from CoreStreamingResult as r {
        center: f64,
        scale: f64,
        scale_used: String = r.scale_used.name().to_owned(),
        center_interval: Option<(f64, f64)> = r.center_interval.map(|i| (i.lo, i.hi)),
        scale_interval: Option<(f64, f64)> = r.scale_interval.map(|i| (i.lo, i.hi)),
        probability_error: Option<f64>,
        rank_error: f64,
        m_estimates: Vec<MEstimate> = all(&r.m_estimates),
        n: u64,
    }

    ConformalSketchInfo from CalibrationSketch as s {
        n: u64 = s.n(),
        k: u16 = s.k(),
        rank_error: f64 = s.rank_error(),
    }

    SketchInfo from AnySketch as s {
        k: u16 = s.k(),
        min_k: u16 = s.min_k(),
        n: u64 = s.n(),
        num_retained: usize = s.num_retained(),
        is_estimation_mode: bool = s.is_estimation_mode(),
        is_double: bool = s.is_double(),
        seed: u64 = s.seed(),
        extremes: Option<(f64, f64)> = s.extremes(),
    }

    ColumnFit from CoreColumnFit as c {
        center: f64,
        scale: f64,
        scale_used: String = c.scale_used.to_owned(),
        n_iter: Option<usize>,
        converged: Option<bool>,
        pre_min: Option<f64>,
        fallbacks: Vec<(String, String)> =
            c.fallbacks.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect(),
    }

    Strata from CoreStrata as s {
        all: f64,
        outlier: f64,
        inlier: f64,
    }

    Evaluation from CoreEvaluation as e {
        brier: Strata,
        sharpness: Strata,
        refinement: Strata,
        calibration: Strata,
        n_outliers: usize,
        n: usize,
    }

    ReliabilityCurve from Reliability as r {
        edges: Vec<f64>,
        mean_probability: Vec<f64>,
        outlier_fraction: Vec<f64>,
        count: Vec<usize>,
    }

    SelectionFit from Selection as s {
        count: usize,
        threshold: f64,
        null_proportion: f64,
    }

    TailSummary from TailFit as f {
        tail: String = f.kind.name().to_owned(),
        accepted: bool,
        reason: String = f.reason.to_owned(),
        threshold: f64,
        threshold_pvalue: f64,
        exceedances: u64,
        statistic: f64,
        bound: f64,
        params: Vec<f64> = f.params().to_vec(),
    }

    DecayedMoments from Moments as m { n: u64, weight: f64, mean: f64, variance: f64 }

    DriftInfo from Policy as p {
        refit: String = p.refit().name().to_owned(),
        window: u64 = p.window(),
        delay: u64 = p.delay(),
        n: u64 = p.n(),
    }

    DriftEvent from Event as e {
        kind: String = e.kind.name().to_owned(),
        index: u64,
        log_statistic: f64,
        n_fit: u64,
        fitted: Option<(f64, f64)>,
        message: String,
    }
}
