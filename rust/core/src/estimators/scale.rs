//! Scale estimators of contract §2 — the standard deviation, the nMAD, the
//! nIQR and the trimmed standard deviation about a given center — on
//! checked samples read in place.
//!
//! Source: the scales of Röchner et al. (SISAP 2024); the normal
//! consistency divisors are those of
//! `scipy.stats.median_abs_deviation(scale="normal")` and of the IQR of
//! N(0, 1). The SD matches `numpy.std` (with `ddof`).
//!
//! Trade-offs: the SD takes two reads about the correctly rounded mean,
//! with the correction `(Σd)²/N` that removes the mean's rounding to first
//! order, and a power-of-two rescaling so that no square overflows or
//! underflows — one read more than a one-pass formula, which cancels
//! catastrophically for scores far from 0. The nMAD is always about the
//! median (the contract's choice, whatever center a scaling uses); medians
//! and quantiles come from the one-pass selection of
//! [`crate::numeric::rank`]. The trimmed SD ranks its largest kept
//! deviation and sums the squares below it, ties at the cut by count.

use crate::error::Error;
use crate::estimators::location::{
    check_trim, mean, median, median_of_key, quantiles, trimmed_count,
};
use crate::numeric::float::Float;
use crate::numeric::rank::{ranked, Key};
use crate::numeric::reduce::{binary_exponent, pow2, spread_exponent, squares};
use crate::sample::Sample;

/// Φ⁻¹(3/4), the divisor that makes the MAD consistent for the normal SD
/// (the constant `scipy.stats.median_abs_deviation(scale="normal")` uses).
pub const NMAD_DIVISOR: f64 = 0.674_489_750_196_081_7;
/// Φ⁻¹(3/4) − Φ⁻¹(1/4), the divisor of the normalised IQR.
pub const NIQR_DIVISOR: f64 = 1.348_979_500_392_163_4;

/// The zero-scale fallback chain (contract §5, and §3's start): the scale
/// `first`, then each of `chain` in turn while the last value does not
/// `settle` (for the fits: is not positive). Returns the last scale tried
/// and its value. Every fit — in memory, streaming, windowed, distributed,
/// M-estimation's start — runs its chain through this one loop, so the
/// rule is written once; each caller says only how to compute a scale and
/// when a value settles.
pub fn fall_back<S: Copy, V, E>(
    first: S,
    chain: &[S],
    mut scale_of: impl FnMut(S) -> Result<V, E>,
    settles: impl Fn(&V) -> bool,
) -> Result<(S, V), E> {
    let (mut used, mut value) = (first, scale_of(first)?);
    for &next in chain {
        if settles(&value) {
            break;
        }
        used = next;
        value = scale_of(next)?;
    }
    Ok((used, value))
}

/// Standard deviation `sqrt(Σ(s − mean)² / (N − ddof))`.
///
/// Two reads about the exactly rounded mean, with the correction term
/// `(Σ d)²/N` that removes the mean's rounding error to first order, and a
/// power-of-two rescaling so that squares neither overflow nor underflow.
pub fn std<T: Float>(s: &Sample<'_, T>, ddof: usize) -> Result<f64, Error> {
    let n = s.len();
    if ddof >= n {
        return Err(Error::invalid(
            "ddof",
            format!("must be smaller than the number of scores ({n}), got {ddof}"),
        ));
    }
    // The SD does not change under negation: work on the raw scores.
    let m = s.orient(mean(s));
    let k = spread_exponent(s.summary.min, s.summary.max, m);
    let q = squares(s.x, false, m, k, f64::INFINITY);
    let corrected = q.scaled_squares - q.scaled_sum * q.scaled_sum / n as f64;
    Ok((corrected.max(0.0) / (n - ddof) as f64).sqrt() * pow2(q.k))
}

/// `nmad = median(|s − median(s)|) / Φ⁻¹(3/4)`, always about the median.
pub fn nmad<T: Float>(s: &Sample<'_, T>) -> f64 {
    nmad_about_median(s, median(s))
}

/// [`nmad`] given `median(s)` (of the oriented scores), for callers that
/// already hold it: one read of the scores fewer.
pub fn nmad_about_median<T: Float>(s: &Sample<'_, T>, median: f64) -> f64 {
    median_of_key(
        s,
        Key::Deviation {
            center: median,
            negate: s.negate,
        },
    ) / NMAD_DIVISOR
}

/// `niqr = (Q(0.75) − Q(0.25)) / (Φ⁻¹(3/4) − Φ⁻¹(1/4))` with type-7
/// quantiles.
pub fn niqr<T: Float>(s: &Sample<'_, T>) -> f64 {
    let q = quantiles(s, &[0.25, 0.75]);
    (q[1] - q[0]) / NIQR_DIVISOR
}

/// Trimmed standard deviation about a given center `c`: drop the
/// `floor(alpha·N)` largest `(s − c)²`, `sqrt` of the mean of the rest. No
/// consistency factor. The largest kept `|s − c|` = w is ranked; the
/// squares below w are summed and the kept ties add w² each.
pub fn trimmed_std<T: Float>(s: &Sample<'_, T>, center: f64, alpha: f64) -> Result<f64, Error> {
    check_trim(alpha)?;
    if !center.is_finite() {
        return Err(Error::invalid(
            "center",
            format!("must be finite, got {center}"),
        ));
    }
    let n = s.len();
    let keep = n - trimmed_count(alpha, n);
    let key = Key::Deviation {
        center,
        negate: s.negate,
    };
    let w = ranked(s.x, n, key, &[keep - 1])[0];
    if w == 0.0 {
        return Ok(0.0);
    }
    if w.is_infinite() {
        // The kept deviations reach beyond the double range (|x − center|
        // overflowed): so does their RMS but for rare cases with one such
        // deviation among many zeros; report the overflow, which a fit
        // refuses as an unrepresentable scale (contract §5).
        return Ok(f64::INFINITY);
    }
    let k = binary_exponent(w).clamp(-1022, 1022);
    let q = squares(s.x, s.negate, center, k, w);
    // (w·2^-k)², exact: w's rescaling is a power of two.
    let tie = w * pow2(-q.k);
    let total = q.scaled_squares + (keep - q.count) as f64 * tie * tie;
    Ok((total / keep as f64).sqrt() * pow2(q.k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::NanPolicy;
    use proptest::prelude::*;

    fn sample(x: &[f64]) -> Sample<'_, f64> {
        Sample::new(x, NanPolicy::Omit, false).unwrap()
    }

    fn naive_std(x: &[f64], ddof: usize) -> f64 {
        let m = x.iter().sum::<f64>() / x.len() as f64;
        (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - ddof) as f64).sqrt()
    }

    #[test]
    fn known_values() {
        assert_eq!(
            std(&sample(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), 0).unwrap(),
            2.0
        );
        assert!(std(&sample(&[1.0]), 1).is_err());
        assert_eq!(std(&sample(&[3.0, 3.0, 3.0]), 0).unwrap(), 0.0);
        // median 3, |dev| = [2,1,0,1,97] → median 1.
        let x = [1.0, 2.0, 3.0, 4.0, 100.0];
        assert_eq!(nmad(&sample(&x)), 1.0 / NMAD_DIVISOR);
        // Q(.25) = 2, Q(.75) = 4.
        assert_eq!(niqr(&sample(&x)), 2.0 / NIQR_DIVISOR);
        // center 0: squares [1,4,9,16,10000], drop 1 → sqrt(30/4)
        assert_eq!(
            trimmed_std(&sample(&x), 0.0, 0.2).unwrap(),
            (30.0f64 / 4.0).sqrt()
        );
        // Ties at the cut: |dev| from 0 = [1, 2, 2, 2, 9], drop 1.
        assert_eq!(
            trimmed_std(&sample(&[2.0, -9.0, 2.0, 1.0, -2.0]), 0.0, 0.2).unwrap(),
            (13.0f64 / 4.0).sqrt()
        );
    }

    #[test]
    fn std_at_the_top_of_the_double_range() {
        // Exact: sqrt(2)·1e308 (deviations ±2e308 from the mean 5e307).
        let got = std(&sample(&[-1.5e308, 1.5e308, 1.5e308]), 0).unwrap();
        assert!(
            (got / 1.414_213_562_373_095e308 - 1.0).abs() < 1e-15,
            "{got}"
        );
        let m = f64::MAX;
        let got = std(&sample(&[m, -m, m / 3.0]), 0).unwrap();
        // Population SD of (1, −1, 1/3)·MAX: MAX·sqrt(2·(1 + 1 + 1/9)/9 − ...)
        let x = [1.0, -1.0, 1.0 / 3.0];
        let want = naive_std(&x, 0) * m;
        assert!((got / want - 1.0).abs() < 1e-15, "{got} {want}");
        let neg = Sample::new(&[-1.5e308, 1.5e308, 1.5e308][..], NanPolicy::Omit, true).unwrap();
        assert!((std(&neg, 0).unwrap() / 1.414_213_562_373_095e308 - 1.0).abs() < 1e-15);
    }

    #[test]
    fn extreme_magnitudes_do_not_overflow_or_underflow() {
        assert_eq!(std(&sample(&[1e200, -1e200]), 0).unwrap(), 1e200);
        assert_eq!(std(&sample(&[1e-200, -1e-200]), 0).unwrap(), 1e-200);
        assert_eq!(std(&sample(&[1e-310, -1e-310]), 0).unwrap(), 1e-310);
        assert_eq!(
            trimmed_std(&sample(&[1e200, -1e200, 3e200]), 0.0, 0.4).unwrap(),
            1e200
        );
    }

    proptest! {
        #[test]
        fn std_matches_naive_on_tame_data(
            x in proptest::collection::vec(-1e3f64..1e3, 2..200), ddof in 0usize..2,
        ) {
            let got = std(&sample(&x), ddof).unwrap();
            let want = naive_std(&x, ddof);
            prop_assert!((got - want).abs() <= 1e-12 * want.max(1e-300) + 1e-13);
        }

        #[test]
        fn scale_equivariance(
            x in proptest::collection::vec(-1e3f64..1e3, 1..100), e in -150i32..150,
        ) {
            // Multiplying by a power of two is exact, so every estimator
            // must scale exactly.
            let f = 2f64.powi(e);
            let y: Vec<f64> = x.iter().map(|v| v * f).collect();
            let (a, b) = (sample(&x), sample(&y));
            prop_assert_eq!(nmad(&b), nmad(&a) * f);
            prop_assert_eq!(niqr(&b), niqr(&a) * f);
            prop_assert_eq!(std(&b, 0).unwrap(), std(&a, 0).unwrap() * f);
            prop_assert_eq!(trimmed_std(&b, 0.0, 0.2).unwrap(), trimmed_std(&a, 0.0, 0.2).unwrap() * f);
        }
    }
}
