//! Scale estimators, SPEC §2. Inputs are checked, NaN-free, non-empty
//! buffers; functions taking `&mut` only reorder them.

use crate::error::Error;
use crate::float::Float;
use crate::location::{check_trim, mean, trimmed_count};
use crate::select::{median, median_by, order_statistics_by, quantiles};
use crate::sum::Neumaier;

/// Φ⁻¹(3/4), the divisor that makes the MAD consistent for the normal SD
/// (the constant `scipy.stats.median_abs_deviation(scale="normal")` uses).
pub const NMAD_DIVISOR: f64 = 0.674_489_750_196_081_7;
/// Φ⁻¹(3/4) − Φ⁻¹(1/4), the divisor of the normalised IQR.
pub const NIQR_DIVISOR: f64 = 1.348_979_500_392_163_4;

/// Standard deviation `sqrt(Σ(s − mean)² / (N − ddof))`.
///
/// Two passes about the exactly rounded mean, with the correction term
/// `(Σ d)²/N` that removes the mean's rounding error to first order, and a
/// power-of-two rescaling so that squares neither overflow nor underflow.
pub fn std<T: Float>(x: &[T], ddof: usize) -> Result<f64, Error> {
    let n = x.len();
    if ddof >= n {
        return Err(Error::invalid(
            "ddof",
            format!("must be smaller than the number of scores ({n}), got {ddof}"),
        ));
    }
    Ok(deviation_rms(x, mean(x), (n - ddof) as f64, true))
}

/// `nmad = median(|s − median(s)|) / Φ⁻¹(3/4)`, always about the median
/// (reorders `buf`).
pub fn nmad<T: Float>(buf: &mut [T]) -> f64 {
    let med = median(buf);
    median_by(buf, |x| (x.to_f64() - med).abs()) / NMAD_DIVISOR
}

/// `niqr = (Q(0.75) − Q(0.25)) / (Φ⁻¹(3/4) − Φ⁻¹(1/4))` with type-7
/// quantiles (reorders `buf`).
pub fn niqr<T: Float>(buf: &mut [T]) -> f64 {
    let q = quantiles(buf, &[0.25, 0.75]);
    (q[1] - q[0]) / NIQR_DIVISOR
}

/// Trimmed standard deviation about a given center `c`: drop the
/// `floor(alpha·N)` largest `(s − c)²`, `sqrt` of the mean of the rest. No
/// consistency factor (reorders `buf`).
pub fn trimmed_std<T: Float>(buf: &mut [T], center: f64, alpha: f64) -> Result<f64, Error> {
    check_trim(alpha)?;
    if !center.is_finite() {
        return Err(Error::invalid(
            "center",
            format!("must be finite, got {center}"),
        ));
    }
    let n = buf.len();
    let k = trimmed_count(alpha, n);
    if k > 0 {
        // |s − c| orders the values as (s − c)² does.
        order_statistics_by(buf, &[n - k], |x| (x.to_f64() - center).abs());
    }
    Ok(deviation_rms(&buf[..n - k], center, (n - k) as f64, false))
}

/// `sqrt(Σ(x − c)² / divisor)`, optionally minus the first-order correction
/// `(Σ(x − c))²/N`, computed on deviations rescaled by a power of two (exact)
/// near their largest magnitude.
fn deviation_rms<T: Float>(x: &[T], c: f64, divisor: f64, corrected: bool) -> f64 {
    let largest = x
        .iter()
        .map(|&v| (v.to_f64() - c).abs())
        .fold(0.0f64, f64::max);
    if largest == 0.0 {
        return 0.0;
    }
    // Both 2^-k and 2^k must be normal numbers.
    let k = binary_exponent(largest).clamp(-1022, 1022);
    let (down, up) = (pow2(-k), pow2(k));
    let (mut squares, mut linear) = (Neumaier::default(), Neumaier::default());
    for &v in x {
        let d = (v.to_f64() - c) * down;
        squares.add(d * d);
        linear.add(d);
    }
    let mut ss = squares.value();
    if corrected {
        let l = linear.value();
        ss -= l * l / x.len() as f64;
    }
    (ss.max(0.0) / divisor).sqrt() * up
}

/// `e` with `2^e <= |x| < 2^(e+1)` for finite nonzero `x`.
fn binary_exponent(x: f64) -> i32 {
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 {
        // Subnormal: scale into the normal range first.
        binary_exponent(x * pow2(64)) - 64
    } else {
        e - 1023
    }
}

/// `2^k` for `k` in the normal exponent range [-1022, 1023].
pub(crate) fn pow2(k: i32) -> f64 {
    f64::from_bits(((k.clamp(-1022, 1023) + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_std(x: &[f64], ddof: usize) -> f64 {
        let m = x.iter().sum::<f64>() / x.len() as f64;
        (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - ddof) as f64).sqrt()
    }

    #[test]
    fn known_values() {
        assert_eq!(
            std(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0], 0).unwrap(),
            2.0
        );
        assert!(std(&[1.0], 1).is_err());
        assert_eq!(std(&[3.0, 3.0, 3.0], 0).unwrap(), 0.0);
        // median 3, |dev| = [2,1,0,1,97] → median 1.
        let mut x = [1.0, 2.0, 3.0, 4.0, 100.0];
        assert_eq!(nmad(&mut x), 1.0 / NMAD_DIVISOR);
        // Q(.25) = 2, Q(.75) = 4.
        assert_eq!(niqr(&mut x), 2.0 / NIQR_DIVISOR);
        // center 0: squares [1,4,9,16,10000], drop 1 → sqrt(30/4)
        assert_eq!(
            trimmed_std(&mut x, 0.0, 0.2).unwrap(),
            (30.0f64 / 4.0).sqrt()
        );
    }

    #[test]
    fn extreme_magnitudes_do_not_overflow_or_underflow() {
        let big = [1e200, -1e200];
        assert_eq!(std(&big, 0).unwrap(), 1e200);
        let tiny = [1e-200, -1e-200];
        assert_eq!(std(&tiny, 0).unwrap(), 1e-200);
        let sub = [1e-310, -1e-310];
        assert_eq!(std(&sub, 0).unwrap(), 1e-310);
    }

    proptest! {
        #[test]
        fn std_matches_naive_on_tame_data(
            x in proptest::collection::vec(-1e3f64..1e3, 2..200), ddof in 0usize..2,
        ) {
            let got = std(&x, ddof).unwrap();
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
            let (mut a, mut b) = (x.clone(), y.clone());
            prop_assert_eq!(nmad(&mut b), nmad(&mut a) * f);
            prop_assert_eq!(niqr(&mut b), niqr(&mut a) * f);
            prop_assert_eq!(std(&y, 0).unwrap(), std(&x, 0).unwrap() * f);
        }
    }
}
