//! Double-double arithmetic: a value held as the unevaluated sum `hi + lo`
//! of two doubles, about 106 bits of precision (Dekker, *A floating-point
//! technique for extending the available precision*, Numer. Math. 18,
//! 1971; the error-free sum is Knuth's TwoSum, TAOCP vol. 2 §4.2.2, and
//! the error-free product an FMA).
//!
//! Used where a running sum must keep digits the final result cannot lose
//! (the shifted moments of [`crate::streaming::moments`]). Each operation
//! is a few flops and errs by a few units of 2^-106 of its operands; no
//! operation is exactly rounded, and overflow and underflow are the
//! caller's to avoid (the moments keep their sums in units of `2^k`).

use crate::numeric::sum::two_sum;

/// An unevaluated sum `hi + lo` with `|lo| <= ulp(hi)/2`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DoubleDouble {
    /// Leading part.
    pub hi: f64,
    /// Trailing part.
    pub lo: f64,
}

impl DoubleDouble {
    /// `hi + lo`, renormalised.
    pub fn new(hi: f64, lo: f64) -> DoubleDouble {
        let (h, l) = two_sum(hi, lo);
        DoubleDouble { hi: h, lo: l }
    }

    /// `self · 2^e`.
    #[must_use]
    pub fn scale(self, e: i32) -> DoubleDouble {
        DoubleDouble {
            hi: libm::scalbn(self.hi, e),
            lo: libm::scalbn(self.lo, e),
        }
    }

    /// `√self` rounded to a double (0 for `self <= 0`).
    pub fn sqrt(self) -> f64 {
        if self.hi <= 0.0 {
            return 0.0;
        }
        let s = self.hi.sqrt();
        let r = (-s).mul_add(s, self.hi) + self.lo;
        s + r / (2.0 * s)
    }
}

impl core::ops::Add for DoubleDouble {
    type Output = DoubleDouble;
    fn add(self, o: DoubleDouble) -> DoubleDouble {
        let (s, e) = two_sum(self.hi, o.hi);
        DoubleDouble::new(s, e + self.lo + o.lo)
    }
}

impl core::ops::AddAssign for DoubleDouble {
    fn add_assign(&mut self, o: DoubleDouble) {
        *self = *self + o;
    }
}

impl core::ops::Neg for DoubleDouble {
    type Output = DoubleDouble;
    fn neg(self) -> DoubleDouble {
        DoubleDouble {
            hi: -self.hi,
            lo: -self.lo,
        }
    }
}

impl core::ops::Mul for DoubleDouble {
    type Output = DoubleDouble;
    fn mul(self, o: DoubleDouble) -> DoubleDouble {
        let p = self.hi * o.hi;
        let e = self.hi.mul_add(o.hi, -p);
        DoubleDouble::new(p, e + self.hi * o.lo + self.lo * o.hi)
    }
}

impl core::ops::Mul<f64> for DoubleDouble {
    type Output = DoubleDouble;
    fn mul(self, v: f64) -> DoubleDouble {
        self * DoubleDouble { hi: v, lo: 0.0 }
    }
}

impl core::ops::Div<f64> for DoubleDouble {
    type Output = DoubleDouble;
    fn div(self, v: f64) -> DoubleDouble {
        let q1 = self.hi / v;
        let r = (-q1).mul_add(v, self.hi) + self.lo;
        DoubleDouble::new(q1, r / v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_digits_a_double_drops() {
        let tiny = 2f64.powi(-60);
        let x = DoubleDouble::new(1.0, tiny);
        assert_eq!((x.hi, x.lo), (1.0, tiny));
        // (1 + 2^-60)² = 1 + 2^-59 + 2^-120: the last term is beyond 106 bits.
        let sq = x * x;
        assert_eq!((sq.hi, sq.lo), (1.0, 2.0 * tiny));
        let back = sq + -x;
        assert_eq!(back.hi + back.lo, tiny);
        let third = DoubleDouble::new(1.0, 0.0) / 3.0;
        let one = third * 3.0;
        assert!((one.hi - 1.0 + one.lo).abs() < 1e-31);
        assert_eq!(DoubleDouble::new(4.0, 0.0).sqrt(), 2.0);
        assert_eq!(DoubleDouble::new(-1.0, 0.0).sqrt(), 0.0);
        let s = x.scale(-3);
        assert_eq!((s.hi, s.lo), (0.125, tiny / 8.0));
    }
}
