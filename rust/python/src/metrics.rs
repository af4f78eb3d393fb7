//! Evaluation measures of contract §6 (`outprob.metrics`). Labels arrive as
//! a checked bool array.

use crate::prelude::*;
use outprob_core::evaluation::binning::{self, Scheme};
use outprob_core::evaluation::metrics;

/// A measure of probabilities `p` (and labels `y`): its keyword
/// parameters, then `threads`; the core's result converted by `Into`.
macro_rules! measure {
    ($name:ident(p $(, $y:ident)?; $($arg:ident: $ty:ty),*) -> $out:ty, |$s:ident| $body:expr) => {
        #[pyfunction]
        #[pyo3(signature = (p, $($y,)? *, $($arg,)* threads = 0))]
        pub(crate) fn $name(
            py: Python<'_>,
            p: Floats<'_>,
            $($y: PyReadonlyArray1<'_, bool>,)?
            $($arg: $ty,)*
            threads: usize,
        ) -> Result<$out> {
            $(let $y = $y.as_slice()?;)?
            let r = with_slice!(py, threads, p, |$s| $body)?;
            Ok(Into::into(r))
        }
    };
}

measure!(
    evaluate(p, y; bins: Wrap<Scheme>, n_bins: Vec<usize>) -> Evaluation,
    |s| metrics::evaluate(s, y, bins.0, &n_bins)
);
measure!(
    brier_and_sharpness(p, y;) -> (Strata, Strata),
    |s| metrics::brier_and_sharpness(s, y).map(|(b, s)| (b.into(), s.into()))
);
measure!(
    refinement_and_calibration(p, y; bins: Wrap<Scheme>, n_bins: Vec<usize>) -> (Strata, Strata),
    |s| metrics::binned_errors(s, y, bins.0, &n_bins).map(|(r, c)| (r.into(), c.into()))
);
measure!(
    bin_edges(p; k: usize, bins: Wrap<Scheme>) -> Vec<f64>,
    |s| binning::bin_edges(s, bins.0, k)
);
measure!(
    reliability_curve(p, y; bins: Wrap<Scheme>, k: usize) -> ReliabilityCurve,
    |s| metrics::reliability_curve(s, y, bins.0, k)
);
