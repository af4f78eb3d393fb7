//! The two score types the library computes on natively: `f32` and `f64`.
//!
//! Every estimator reads `T` from the caller's buffer and accumulates in `f64`
//! (exactly representable for both types), so float32 input needs no
//! conversion copy and loses no accuracy before the final rounding.

use core::cmp::Ordering;
use core::fmt::Debug;

/// Order-preserving unsigned key of a non-NaN double (−0 < +0): integer
/// comparisons and radix buckets of the keys order the doubles.
#[inline(always)]
pub fn order_key(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// The double of an [`order_key`].
#[inline(always)]
pub fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// [`order_key`] of a float32: unsigned order is the float order
/// (−0 before +0, NaN beyond ±inf).
#[inline(always)]
pub fn order_key_f32(v: f32) -> u32 {
    let b = v.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | (1 << 31)
    }
}

/// The float32 of an [`order_key_f32`].
#[inline(always)]
pub fn from_order_key_f32(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & !(1 << 31) } else { !k })
}

/// Sorts non-NaN doubles ascending (−0 before +0) as their [`order_key`]s:
/// an integer sort, 1.5–2× as fast as comparing the doubles or their keys.
pub fn sort_by_order_key(s: &mut [f64]) {
    let mut keys: Vec<u64> = s.iter().map(|&v| order_key(v)).collect();
    keys.sort_unstable();
    for (v, k) in s.iter_mut().zip(keys) {
        *v = from_order_key(k);
    }
}

/// A score element: `f32` or `f64`.
pub trait Float: Copy + PartialOrd + Debug + Default + Send + Sync + 'static {
    /// Not-a-number of this type.
    const NAN: Self;
    /// Number of significand bits (including the implicit bit).
    const MANTISSA_DIGITS: u32;
    /// Exact widening to `f64`.
    fn to_f64(self) -> f64;
    /// Rounding (to nearest, ties to even) from `f64`.
    fn from_f64(v: f64) -> Self;
    /// `self` is NaN.
    fn is_nan(self) -> bool;
    /// `self` is neither NaN nor infinite.
    fn is_finite(self) -> bool;
    /// IEEE 754 total order; on NaN-free data it is the numeric order with
    /// `-0.0 < +0.0`.
    fn total_cmp(&self, other: &Self) -> Ordering;
    /// Exact negation.
    #[must_use]
    fn neg(self) -> Self;
    /// A source and a destination buffer of this type as their concrete
    /// type, for kernels written per type.
    fn buffers<'a>(src: &'a [Self], dst: &'a mut [Self]) -> Buffers<'a>;
}

/// A source and a destination buffer of one of the two float types.
pub enum Buffers<'a> {
    /// float64.
    F64(&'a [f64], &'a mut [f64]),
    /// float32.
    F32(&'a [f32], &'a mut [f32]),
}

macro_rules! impl_float {
    ($t:ty, $buffers:ident) => {
        impl Float for $t {
            const NAN: Self = <$t>::NAN;
            const MANTISSA_DIGITS: u32 = <$t>::MANTISSA_DIGITS;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            #[inline(always)]
            #[allow(clippy::cast_lossless, clippy::unnecessary_cast)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn total_cmp(&self, other: &Self) -> Ordering {
                <$t>::total_cmp(self, other)
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn buffers<'a>(src: &'a [Self], dst: &'a mut [Self]) -> Buffers<'a> {
                Buffers::$buffers(src, dst)
            }
        }
    };
}

impl_float!(f32, F32);
impl_float!(f64, F64);
