//! The standard normal survival function `S(z) = 1 − Φ(z) = erfc(z/√2)/2`
//! with relative accuracy far into the upper tail (contract §11, the
//! `"gaussian"` tail of conformal p-values).
//!
//! `erfc` is fdlibm's (Sun Microsystems, 1993; the `libm` crate's port of
//! musl): rational approximations on `[0, 0.84375)`, `[0.84375, 1.25)`,
//! `[1.25, 1/0.35)` and `[1/0.35, 28)`, the last two as
//! `exp(−t² − 0.5625)·exp((t − x)(t + x) + R/S)/x` with `t` the head of `x`
//! (so `t²` is exact) — a few ulps of relative error wherever the result
//! is a normal double, against the 1 − erf of the §4 kernels, whose
//! absolute error of an ulp of 1 is all of `S` beyond z ≈ 8.
//!
//! The one error `erfc` cannot see is the rounding of `x = z/√2` itself:
//! `erfc` falls by the factor `e^{−2xδ}` over a step δ, so rounding `x` by
//! half an ulp costs `x²·2⁻⁵²` relatively — 10⁻¹³ at z = 38. It is put back:
//! `δ = z/√2 − x` to about 2⁻¹⁰⁰ relative from `1/√2` as a double-double
//! and one fused multiply-add, and `erfc(x + δ) ≈ erfc(x)(1 − 2xδ)` (the
//! hazard `2e^{−x²}/(√π erfc x)` is 2x to within `1/x`, and `δ` is below
//! 10⁻¹⁶x, so what is left is below an ulp). The accuracy is measured
//! against mpmath in `rust/core/tools/normal_tail_audit.py` and the tests
//! of contract §11.
//!
//! Why not `Q(½, z²/2)`, the incomplete gamma the gamma tails use: its
//! continued fraction runs 10–80 dependent divisions per score, an order
//! of magnitude more than two `exp` and a rational function.

use core::f64::consts::FRAC_1_SQRT_2;

/// The low part of `1/√2`: `FRAC_1_SQRT_2 + SQRT_HALF_LO` is `1/√2` to
/// about 2⁻¹⁰⁷.
const SQRT_HALF_LO: f64 = -4.833_646_656_726_457e-17;

/// `1 − Φ(z)` of the standard normal: relative error of a few ulps
/// wherever the result is a normal double (z < 37.5), subnormal results
/// to their own absolute precision, 0 beyond z ≈ 38.6; `S(−∞) = 1`,
/// `S(+∞) = 0`, NaN → NaN.
#[inline]
pub fn normal_sf(z: f64) -> f64 {
    let x = z * FRAC_1_SQRT_2;
    let tail = 0.5 * libm::erfc(x);
    if x > 1.0 && x.is_finite() {
        // The part of z/√2 the product rounded away (module doc).
        let delta = z.mul_add(FRAC_1_SQRT_2, -x) + z * SQRT_HALF_LO;
        tail * (2.0 * x).mul_add(-delta, 1.0)
    } else {
        tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_limits() {
        // 1 − Φ(z) at integers, correctly rounded (mpmath, mp.dps = 50).
        let want = [
            (0.0, 0.5),
            (1.0, 0.158_655_253_931_457_05),
            (3.0, 1.349_898_031_630_094_6e-3),
            (10.0, 7.619_853_024_160_525e-24),
            (20.0, 2.753_624_118_606_233_7e-89),
            (37.0, 5.725_571_222_524_577e-300),
            (-2.0, 0.977_249_868_051_820_8),
        ];
        for (z, s) in want {
            let got = normal_sf(z);
            assert!((got / s - 1.0).abs() < 4e-16, "{z}: {got:e} vs {s:e}");
        }
        assert_eq!(normal_sf(f64::NEG_INFINITY), 1.0);
        assert_eq!(normal_sf(f64::INFINITY), 0.0);
        assert_eq!(normal_sf(40.0), 0.0);
        assert!(normal_sf(f64::NAN).is_nan());
    }

    #[test]
    fn non_increasing() {
        let mut last = 1.0;
        let mut z = -40.0;
        while z < 40.0 {
            let s = normal_sf(z);
            assert!(s <= last, "{z}");
            last = s;
            z += 0.000_37;
        }
    }
}
