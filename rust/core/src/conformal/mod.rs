//! Conformal p-values and false-discovery control (contract §11; Bates,
//! Candès, Lei, Romano, Sesia, *Testing for outliers with conformal
//! p-values*, Annals of Statistics 2023).
//!
//! * [`pvalues`]: the marginal p-value `(1 + #{sᵢ ≥ s})/(n + 1)` of a score
//!   against sorted calibration scores (or a sketch's weighted sample with a
//!   rank-error slack), counted through a
//!   [`crate::numeric::search_index::SearchIndex`];
//!   randomised tie breaking from a seeded SplitMix64 stream.
//! * [`conditional`]: the calibration-conditional adjustments of Bates et
//!   al. §3 (generalised Simes, DKWM, Monte Carlo), each a non-decreasing
//!   step function `b` applied to the marginal p-value.
//! * [`sketch`]: the calibration scores of a stream, in a KLL sketch.
//! * [`calibration`]: a fitted p-value map — sorted scores or a sketch's
//!   sample, its index and adjustment — built once from its options.
//! * [`combination`]: one p-value per point from several detectors (Cauchy,
//!   harmonic mean, conformalised ensemble score).
//! * [`tails`]: p-values whose tail beyond a high calibration quantile is
//!   a fitted one (generalised Pareto, Gaussian, gamma), DKWM-checked.
//! * [`select`]: Benjamini–Hochberg, Storey's adaptive BH and
//!   Benjamini–Yekutieli selection in O(m), without sorting the p-values.
//! * [`weighted`]: weighted conformal p-values under covariate shift
//!   (contract §13).
//! * [`integrative`]: integrative conformal p-values with labelled outliers
//!   (Liang, Sesia & Sun; contract §13).

pub mod calibration;
pub mod combination;
pub mod conditional;
pub mod integrative;
pub mod pvalues;
pub mod select;
pub mod sketch;
pub mod tails;
pub mod weighted;

use crate::streaming::kll::splitmix64;

/// SplitMix64's increment (the golden-ratio constant).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// Output `j` (0-based) of the SplitMix64 stream whose state starts at
/// `key`, as a uniform number in [0, 1): its top 53 bits over 2⁵³.
#[inline]
pub fn uniform(key: u64, j: u64) -> f64 {
    let z = splitmix64(key.wrapping_add(j.wrapping_mul(GOLDEN)));
    (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_is_splitmix64_stream() {
        // SplitMix64 seeded with 0: its first outputs (Vigna's reference).
        let first = splitmix64(0);
        assert_eq!(first, 0xe220_a839_7b1d_cdaf);
        assert_eq!(uniform(0, 0), (first >> 11) as f64 / (1u64 << 53) as f64);
        let second = splitmix64(GOLDEN);
        assert_eq!(second, 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(uniform(0, 1), (second >> 11) as f64 / (1u64 << 53) as f64);
        for j in 0..1000 {
            let u = uniform(7, j);
            assert!((0.0..1.0).contains(&u));
        }
    }
}
