//! Exact sums by error-free extraction (Rump, Ogita and Oishi, "Accurate
//! floating-point summation", part I, ExtractScalar), for the running sums
//! that must stay exact across batches.
//!
//! With `σ = 2^t` and `|p| <= σ·2^-17`, `q = fl(fl(σ + p) − σ)` is a
//! multiple of `2^(t−53)`, `p − q` is exact and `|p − q| <= 2^(t−53)`. A
//! chunk of at most 2^16 scores below `2^e` in magnitude thus splits
//! exactly into three levels of such `q` (σ = 2^(e+17), then 36 bits lower
//! each) and a remainder below `2^(e−108)`; the `q` of one level add up
//! without any rounding (their partial sums are multiples of `2^(t−53)`
//! below `σ`). When the remainder is zero — every score is a multiple of
//! `2^(e−108)`: nonzero scores within about 2^55 of the largest — the
//! chunk's exact sum is the three level sums, at the cost of a few
//! vectorised additions per score (a third of the binned sum's time);
//! otherwise it is the binned sum of [`crate::numeric::sum`].

use crate::numeric::float::Float;
use crate::numeric::par::{map_chunks, CHUNK};
use crate::numeric::reduce::{binary_exponent, pow2};
use crate::numeric::simd::multiversion;
use crate::numeric::sum::{exact_sum, ExactSum};

const LEVELS: usize = 3;
/// Bits each level takes: 53 less the 17 bits of headroom for 2^16 terms.
const LEVEL_BITS: i32 = 36;
const HEADROOM_BITS: i32 = 17;
/// Independent accumulators per level (the additions are latency-bound).
const LANES: usize = 8;

multiversion! {
    /// The three level sums of a chunk (NaN skipped) with σ₁ = 2^t, and
    /// whether the remainder is zero.
    fn levels<T: Float>(x: &[T], t: i32) -> ([f64; LEVELS], bool) {
        let s: [f64; LEVELS] = std::array::from_fn(|j| pow2(t - LEVEL_BITS * j as i32));
        let (mut a0, mut a1, mut a2) = ([0.0f64; LANES], [0.0f64; LANES], [0.0f64; LANES]);
        let mut rest = [0.0f64; LANES];
        let mut groups = x.chunks_exact(LANES);
        for g in &mut groups {
            let mut p = [0.0f64; LANES];
            for i in 0..LANES {
                let v = g[i].to_f64();
                p[i] = if v.is_nan() { 0.0 } else { v };
            }
            for (acc, &sj) in [&mut a0, &mut a1, &mut a2].into_iter().zip(&s) {
                for i in 0..LANES {
                    let q = (sj + p[i]) - sj;
                    p[i] -= q;
                    acc[i] += q;
                }
            }
            for i in 0..LANES {
                rest[i] += p[i].abs();
            }
        }
        for (i, &v) in groups.remainder().iter().enumerate() {
            let v = v.to_f64();
            let mut p = if v.is_nan() { 0.0 } else { v };
            for (j, acc) in [&mut a0, &mut a1, &mut a2].into_iter().enumerate() {
                let q = (s[j] + p) - s[j];
                p -= q;
                acc[i] += q;
            }
            rest[i] += p.abs();
        }
        let sums = [a0, a1, a2].map(|lanes| lanes.iter().sum());
        (sums, rest.iter().all(|&r| r == 0.0))
    }
}

/// The exact sum of a chunk of at most [`CHUNK`] scores (NaN skipped)
/// whose magnitudes are at most `bound` (finite).
fn chunk_sum<T: Float>(x: &[T], bound: f64) -> ExactSum {
    debug_assert!(x.len() <= CHUNK);
    if bound == 0.0 {
        return ExactSum::zero();
    }
    if !bound.is_finite() {
        let kept: Vec<T> = x.iter().copied().filter(|v| !v.is_nan()).collect();
        return exact_sum(&kept);
    }
    // bound < 2^e; σ₁ stays finite and the last level's ulp normal.
    let e = binary_exponent(bound) + 1;
    let t = e + HEADROOM_BITS;
    if (-900..=1006).contains(&e) {
        let (sums, exact) = levels(x, t);
        if exact {
            let mut total = ExactSum::from(sums[0]);
            for &s in &sums[1..] {
                if s != 0.0 {
                    total.merge(&ExactSum::from(s));
                }
            }
            return total;
        }
    }
    let kept: Vec<T> = x.iter().copied().filter(|v| !v.is_nan()).collect();
    exact_sum(&kept)
}

/// The exact sum of `x`, NaN skipped, given `bound >= |v|` for every
/// non-NaN `v` (finite: the caller has refused ±inf).
pub fn exact_sum_within<T: Float>(x: &[T], bound: f64) -> ExactSum {
    let mut total = ExactSum::zero();
    for part in map_chunks(x, |_, chunk| chunk_sum(chunk, bound)) {
        total.merge(&part);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bound(x: &[f64]) -> f64 {
        x.iter()
            .filter(|v| !v.is_nan())
            .fold(0.0, |m, v| m.max(v.abs()))
    }

    fn binned(x: &[f64]) -> ExactSum {
        let kept: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
        exact_sum(&kept)
    }

    #[test]
    fn long_chunks_and_wide_ranges() {
        let mut u = crate::numeric::testing::uniforms(7);
        let x: Vec<f64> = (0..200_000).map(|_| (u() - 0.3) * 1e3).collect();
        assert_eq!(exact_sum_within(&x, bound(&x)), binned(&x));
        // Ties and values at the chunk's bound.
        let y = vec![1.0f64 - f64::EPSILON / 2.0; 3 * CHUNK + 5];
        assert_eq!(exact_sum_within(&y, 1.0), binned(&y));
        // A range beyond the three levels takes the binned sum.
        let z = [1e30, 1e-30, -1e30, f64::NAN, 3.0];
        assert_eq!(exact_sum_within(&z, 1e30), binned(&z));
        assert_eq!(exact_sum_within(&z, 1e30).value(), 3.0 + 1e-30);
        for w in [
            vec![f64::MAX, -f64::MAX / 3.0],
            vec![5e-324, 1e-310],
            vec![0.0, -0.0],
        ] {
            assert_eq!(exact_sum_within(&w, bound(&w)), binned(&w), "{w:?}");
        }
        let f: Vec<f32> = (0..1000).map(|i| i as f32 * 0.1).collect();
        assert_eq!(exact_sum_within(&f, 100.0), exact_sum(&f));
    }

    proptest! {
        #[test]
        fn equals_the_binned_sum(
            x in proptest::collection::vec(prop_oneof![
                -1e6f64..1e6,
                any::<f64>().prop_filter("finite", |v| v.is_finite()),
                Just(0.0),
                Just(f64::NAN),
                (-1.0f64..1.0).prop_map(|v| v * 1e-300),
                (-1.0f64..1.0).prop_map(|v| 1e12 + v),
            ], 0..400),
            slack in 0u32..4,
        ) {
            let b = bound(&x) * f64::from(1u32 << slack);
            prop_assert_eq!(exact_sum_within(&x, b), binned(&x));
        }
    }
}
