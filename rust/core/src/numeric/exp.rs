//! `e^(−h)`, `1 − e^(−h)` and `ln(1 + e)` without a library call:
//! branch-free straight-line code that LLVM vectorises when a kernel calls
//! them on a group of lanes (inside `numeric::simd::multiversion!`), where
//! libm's scalar `exp`, `expm1` and `log1p` cost a call each and stop the
//! loop from vectorising.
//!
//! * `e^x`, `x ≤ 0`: `x = k·ln 2 + r`, `|r| ≤ ln 2/2` (Cody–Waite with
//!   fdlibm's split of ln 2, k found by the 1.5·2⁵² rounding trick, whose
//!   bits also give `2^k`), and `expm1(r)` by its Taylor series to r¹³
//!   (truncation below 2⁻⁵⁶ relative on that interval). `1 − e^x` is then
//!   `(1 − 2^k) − 2^k·expm1(r)`: relative accuracy near 0 as `expm1`'s.
//! * `ln(1 + e)`, `0 ≤ e ≤ 1`: `w = 1 + e` with its exact rounding error
//!   (Fast2Sum), fdlibm's `log` kernel on `w` (the reduction to
//!   `[√2/2, √2]` and its degree-14 odd polynomial in `s = f/(2 + f)`), and
//!   the error term `c/w` (to a quarter ulp, without a second division).
//!
//! Within 2 ulp of libm (tests below). The fused multiply-adds are explicit
//! (`mul_add`): the same bits in every build (the baseline's is libm's
//! `fma`, slow, on CPUs without FMA).

/// `1.5·2⁵²`: adding it rounds a value below 2⁵¹ in magnitude to an
/// integer, held in the low bits of the sum.
const ROUND: f64 = 6_755_399_441_055_744.0;
/// fdlibm's ln 2 split: `k·LN2_HI` is exact for |k| < 2²⁰.
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
/// Beyond this `h`, `e^(−h)` is below the normal range: 0 is returned.
const H_MAX: f64 = 708.0;

/// `1/n!` for n = 2 … 13.
const TAYLOR: [f64; 12] = [
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5_040.0,
    1.0 / 40_320.0,
    1.0 / 362_880.0,
    1.0 / 3_628_800.0,
    1.0 / 39_916_800.0,
    1.0 / 479_001_600.0,
    1.0 / 6_227_020_800.0,
];

/// `(2^k, expm1(r))` with `e^x = 2^k·(1 + expm1(r))`, for `−708 ≤ x ≤ 0`.
#[inline(always)]
fn reduce(x: f64) -> (f64, f64) {
    let biased = x * core::f64::consts::LOG2_E + ROUND;
    let k = biased - ROUND;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    // The low bits of `biased` hold k (two's complement, |k| ≤ 1022); only
    // the low 11 bits of k + 1023 reach the exponent field.
    let two = f64::from_bits(biased.to_bits().wrapping_add(1023) << 52);
    // expm1(r) = r + r²·q(r), q(r) = 1/2! + r/3! + … + r¹¹/13!, by
    // Estrin's scheme with fused multiply-adds: a dependency chain of 5
    // instead of Horner's 11 (the lanes of a group wait on it).
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let p = |i: usize| TAYLOR[i + 1].mul_add(r, TAYLOR[i]);
    let q0 = p(2).mul_add(r2, p(0));
    let q1 = p(6).mul_add(r2, p(4));
    let q2 = p(10).mul_add(r2, p(8));
    let q = q2.mul_add(r8, q1.mul_add(r4, q0));
    (two, q.mul_add(r2, r))
}

/// `e^(−h)` for `h ≥ 0` (0 for `h > 708`, and NaN for NaN).
#[inline(always)]
pub fn exp_neg(h: f64) -> f64 {
    let (two, em) = reduce(-h.min(H_MAX));
    let e = two + two * em;
    if h > H_MAX {
        0.0
    } else if h.is_nan() {
        h
    } else {
        e
    }
}

/// `1 − e^(−h) = −expm1(−h)` for `h ≥ 0` (1 for `h > 708`, NaN for NaN).
#[inline(always)]
pub fn neg_expm1(h: f64) -> f64 {
    let (two, em) = reduce(-h.min(H_MAX));
    let p = (1.0 - two) - two * em;
    if h > H_MAX {
        1.0
    } else if h.is_nan() {
        h
    } else {
        p
    }
}

/// `ln(1 + e)` for `0 ≤ e ≤ 1`.
#[inline(always)]
pub fn ln_1p_unit(e: f64) -> f64 {
    // fdlibm's e_log.c Lg1 … Lg7.
    const LG: [f64; 7] = [
        f64::from_bits(0x3FE5_5555_5555_5593),
        f64::from_bits(0x3FD9_9999_9997_FA04),
        f64::from_bits(0x3FD2_4924_9422_9359),
        f64::from_bits(0x3FCC_71C5_1D8E_78AF),
        f64::from_bits(0x3FC7_4664_96CB_03DE),
        f64::from_bits(0x3FC3_9A09_D078_C69F),
        f64::from_bits(0x3FC2_F112_DF3E_5244),
    ];
    let w = 1.0 + e;
    // Fast2Sum (1 ≥ e): w + c = 1 + e exactly.
    let c = e - (w - 1.0);
    let big = w > core::f64::consts::SQRT_2;
    let m = if big { 0.5 * w } else { w };
    let k = if big { 1.0 } else { 0.0 };
    let f = m - 1.0; // exact: m in [√2/2, √2]
    let s = f / (2.0 + f);
    let z = s * s;
    let z2 = z * z;
    let t1 = z2 * (LG[1] + z2 * (LG[3] + z2 * LG[5]));
    let t2 = z * (LG[0] + z2 * (LG[2] + z2 * (LG[4] + z2 * LG[6])));
    let hfsq = 0.5 * f * f;
    let ln_w = k * LN2_HI - ((hfsq - (s * (hfsq + (t1 + t2)) + k * LN2_LO)) - f);
    // c/w without a division: |c| ≤ ulp(w)/2 and ln w ≥ (w − 1)·ln 2, so
    // the error of 1 − (w − 1)/2 for 1/w (at most (w − 1)/2) costs at most
    // a quarter ulp of the result.
    ln_w + c * (1.0 - 0.5 * (w - 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ulps(a: f64, b: f64) -> f64 {
        if a == b {
            return 0.0;
        }
        let unit = f64::EPSILON * b.abs().max(f64::MIN_POSITIVE);
        (a - b).abs() / unit
    }

    #[test]
    fn edges() {
        assert_eq!(exp_neg(0.0), 1.0);
        assert_eq!(neg_expm1(0.0), 0.0);
        assert_eq!(exp_neg(709.0), 0.0);
        assert_eq!(exp_neg(f64::INFINITY), 0.0);
        assert_eq!(neg_expm1(f64::INFINITY), 1.0);
        assert!(exp_neg(f64::NAN).is_nan() && neg_expm1(f64::NAN).is_nan());
        assert_eq!(ln_1p_unit(0.0), 0.0);
        assert!(ulps(ln_1p_unit(1.0), core::f64::consts::LN_2) <= 1.0);
        assert_eq!(ln_1p_unit(1e-300), 1e-300);
    }

    #[test]
    fn dense_grid_within_two_ulp_of_libm() {
        for i in 0..200_000 {
            let h = f64::from(i) * 3.5e-3; // 0 … 700
            assert!(ulps(exp_neg(h), (-h).exp()) <= 2.0, "exp_neg({h})");
            assert!(ulps(neg_expm1(h), -(-h).exp_m1()) <= 2.0, "neg_expm1({h})");
            let e = f64::from(i) / 200_000.0;
            assert!(ulps(ln_1p_unit(e), e.ln_1p()) <= 2.0, "ln_1p_unit({e})");
        }
    }

    proptest! {
        #[test]
        fn close_to_libm(lh in -300.0f64..2.85, le in -300.0f64..0.0) {
            let h = 10f64.powf(lh);
            prop_assert!(ulps(exp_neg(h), (-h).exp()) <= 2.0);
            prop_assert!(ulps(neg_expm1(h), -(-h).exp_m1()) <= 2.0);
            let e = 10f64.powf(le);
            prop_assert!(ulps(ln_1p_unit(e), e.ln_1p()) <= 2.0);
        }
    }
}
