//! One read that sorts every key into brackets: per bracket, how many keys
//! fall below it, how many equal its ends, and the keys strictly inside.
//! The selection of [`crate::numeric::rank`] reads its input with this.

use crate::numeric::float::Float;
use crate::numeric::par::map_chunks;

/// A bracket of keys: `(lo, hi)` with `lo <= hi`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bracket {
    pub lo: f64,
    pub hi: f64,
}

/// What one read learned about one bracket.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub below: usize,
    pub at_lo: usize,
    pub at_hi: usize,
    pub inner: Vec<f64>,
}

/// The key of a raw score `v`: `|sign·v − center|` if `abs`, else
/// `sign·v − center` (`sign` is ±1, so `sign·v` is exact).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Affine {
    pub sign: f64,
    pub center: f64,
    pub abs: bool,
}

impl Affine {
    /// `v` itself (`1·v − 0` is `v`, also for −0).
    fn is_identity(self) -> bool {
        self.sign == 1.0 && self.center == 0.0 && !self.abs
    }

    #[inline(always)]
    fn of(self, v: f64) -> f64 {
        let d = self.sign * v - self.center;
        if self.abs {
            d.abs()
        } else {
            d
        }
    }
}

/// One read of `x`: the tally of every bracket (ties at the ends are
/// counted, never stored, so heavily tied data keeps the brackets small).
/// NaN keys fall in no bracket and below none.
pub(crate) fn tally<T: Float>(x: &[T], key: Affine, brackets: &[Bracket]) -> Vec<Tally> {
    let parts = map_chunks(x, |_, chunk| {
        let mut t: Vec<Tally> = brackets.iter().map(|_| Tally::default()).collect();
        tally_chunk(chunk, key, brackets, &mut t);
        t
    });
    let mut total: Vec<Tally> = brackets.iter().map(|_| Tally::default()).collect();
    for part in parts {
        for (acc, p) in total.iter_mut().zip(part) {
            acc.below += p.below;
            acc.at_lo += p.at_lo;
            acc.at_hi += p.at_hi;
            acc.inner.extend(p.inner);
        }
    }
    total
}

/// Files a key inside a bracket: a tie with an end is counted, the rest
/// stored.
#[inline(always)]
fn classify(k: f64, b: Bracket, t: &mut Tally) {
    if k == b.lo {
        t.at_lo += 1;
    } else if k == b.hi {
        t.at_hi += 1;
    } else {
        t.inner.push(k);
    }
}

/// Tallies one chunk: with AVX2 sixteen keys at a time (the work is all
/// compares and counts), else element by element.
fn tally_chunk<T: Float>(chunk: &[T], key: Affine, brackets: &[Bracket], t: &mut [Tally]) {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if crate::numeric::simd::has_avx2() && avx2::loads::<T>() {
        // Up to four brackets per read of the chunk, their bounds in
        // registers.
        for (b, tb) in brackets.chunks(4).zip(t.chunks_mut(4)) {
            // SAFETY: the CPU supports AVX2 (and with it POPCNT).
            done = unsafe {
                match (b.len(), key.is_identity()) {
                    (1, true) => avx2::tally_groups::<T, 1, true>(chunk, key, b, tb),
                    (1, false) => avx2::tally_groups::<T, 1, false>(chunk, key, b, tb),
                    (2, true) => avx2::tally_groups::<T, 2, true>(chunk, key, b, tb),
                    (2, false) => avx2::tally_groups::<T, 2, false>(chunk, key, b, tb),
                    (3, true) => avx2::tally_groups::<T, 3, true>(chunk, key, b, tb),
                    (3, false) => avx2::tally_groups::<T, 3, false>(chunk, key, b, tb),
                    (_, true) => avx2::tally_groups::<T, 4, true>(chunk, key, b, tb),
                    (_, false) => avx2::tally_groups::<T, 4, false>(chunk, key, b, tb),
                }
            };
        }
    }
    for &v in &chunk[done..] {
        let k = key.of(v.to_f64());
        for (b, tb) in brackets.iter().zip(t.iter_mut()) {
            tb.below += usize::from(k < b.lo);
            if k >= b.lo && k <= b.hi {
                classify(k, *b, tb);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Affine, Bracket, Tally};
    use crate::numeric::float::Float;
    use core::any::TypeId;
    use std::arch::x86_64::{
        __m256d, _mm256_and_pd, _mm256_andnot_pd, _mm256_castpd_si256, _mm256_castsi256_pd,
        _mm256_cmp_pd, _mm256_cvtps_pd, _mm256_loadu_pd, _mm256_loadu_si256, _mm256_movemask_pd,
        _mm256_mul_pd, _mm256_or_pd, _mm256_permutevar8x32_epi32, _mm256_set1_epi64x,
        _mm256_set1_pd, _mm256_setzero_si256, _mm256_storeu_si256, _mm256_sub_epi64, _mm256_sub_pd,
        _mm_loadu_ps, _CMP_EQ_OQ, _CMP_LE_OQ, _CMP_LT_OQ,
    };

    const G: usize = 16;

    /// The kernel loads `T` as `f32` or `f64`: only those two.
    pub(super) fn loads<T: 'static>() -> bool {
        TypeId::of::<T>() == TypeId::of::<f32>() || TypeId::of::<T>() == TypeId::of::<f64>()
    }

    /// For each 4-bit mask, the 32-bit lane indices that move the chosen
    /// doubles of a vector to its front, in order.
    const PACK: [[i32; 8]; 16] = {
        let mut t = [[0i32; 8]; 16];
        let mut m = 0;
        while m < 16 {
            let (mut d, mut out) = (0i32, 0usize);
            while d < 4 {
                if m >> d & 1 == 1 {
                    t[m][2 * out] = 2 * d;
                    t[m][2 * out + 1] = 2 * d + 1;
                    out += 1;
                }
                d += 1;
            }
            m += 1;
        }
        t
    };

    /// Four keys from `src[..4]`.
    #[inline(always)]
    unsafe fn keys4<T: Float, const PLAIN: bool>(
        src: *const T,
        sign: __m256d,
        center: __m256d,
        abs: __m256d,
    ) -> __m256d {
        let v = if TypeId::of::<T>() == TypeId::of::<f32>() {
            _mm256_cvtps_pd(_mm_loadu_ps(src.cast::<f32>()))
        } else {
            _mm256_loadu_pd(src.cast::<f64>())
        };
        if PLAIN {
            return v;
        }
        _mm256_and_pd(_mm256_sub_pd(_mm256_mul_pd(sign, v), center), abs)
    }

    /// Tallies the whole groups of sixteen of `chunk`; returns how many
    /// elements that covered. Keys and comparisons are those of
    /// [`Affine::of`] and the scalar path, lane by lane.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn tally_groups<T: Float, const B: usize, const PLAIN: bool>(
        chunk: &[T],
        key: Affine,
        brackets: &[Bracket],
        t: &mut [Tally],
    ) -> usize {
        debug_assert!(brackets.len() == B && t.len() == B);
        debug_assert!(
            TypeId::of::<T>() == TypeId::of::<f32>() || TypeId::of::<T>() == TypeId::of::<f64>()
        );
        let sign = _mm256_set1_pd(key.sign);
        let center = _mm256_set1_pd(key.center);
        // All ones, or all but the sign bit: `and` with it is `abs`.
        let abs = _mm256_castsi256_pd(_mm256_set1_epi64x(if key.abs { i64::MAX } else { -1 }));
        let groups = chunk.len() / G;
        let lo: [__m256d; B] = core::array::from_fn(|i| _mm256_set1_pd(brackets[i].lo));
        let hi: [__m256d; B] = core::array::from_fn(|i| _mm256_set1_pd(brackets[i].hi));
        let mut below = [_mm256_setzero_si256(); B];
        for g in 0..groups {
            let p = chunk.as_ptr().add(g * G);
            let k = [
                keys4::<T, PLAIN>(p, sign, center, abs),
                keys4::<T, PLAIN>(p.add(4), sign, center, abs),
                keys4::<T, PLAIN>(p.add(8), sign, center, abs),
                keys4::<T, PLAIN>(p.add(12), sign, center, abs),
            ];
            for i in 0..B {
                // k < lo counts into `below` (all-ones lanes are −1); the
                // keys with lo <= k <= hi, as (k <= hi) and not (k < lo),
                // are filed (NaN is neither). Filing takes no branch: a
                // branch on "any key inside" is mispredicted for a large
                // share of the groups at the usual bracket widths. Ties
                // with an end are counted (a key equal to both is at `lo`,
                // as in `classify`); the keys strictly inside are packed
                // into `inner`.
                let tb = &mut t[i];
                tb.inner.reserve(G);
                let len = tb.inner.len();
                let dst = tb.inner.as_mut_ptr().add(len);
                let mut stored = 0usize;
                for &kj in &k {
                    let lt = _mm256_cmp_pd::<_CMP_LT_OQ>(kj, lo[i]);
                    below[i] = _mm256_sub_epi64(below[i], _mm256_castpd_si256(lt));
                    let inside = _mm256_andnot_pd(lt, _mm256_cmp_pd::<_CMP_LE_OQ>(kj, hi[i]));
                    let eq_lo = _mm256_cmp_pd::<_CMP_EQ_OQ>(kj, lo[i]);
                    let eq_hi = _mm256_andnot_pd(eq_lo, _mm256_cmp_pd::<_CMP_EQ_OQ>(kj, hi[i]));
                    tb.at_lo += (_mm256_movemask_pd(eq_lo) as u32).count_ones() as usize;
                    tb.at_hi += (_mm256_movemask_pd(eq_hi) as u32).count_ones() as usize;
                    let strict =
                        _mm256_movemask_pd(_mm256_andnot_pd(_mm256_or_pd(eq_lo, eq_hi), inside));
                    let idx = _mm256_loadu_si256(PACK[strict as usize & 15].as_ptr().cast());
                    let packed = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(kj), idx);
                    // Within the G reserved slots: stored <= 4·j.
                    _mm256_storeu_si256(dst.add(stored).cast(), packed);
                    stored += (strict as u32).count_ones() as usize;
                }
                tb.inner.set_len(len + stored);
            }
        }
        for (tb, b) in t.iter_mut().zip(below) {
            let mut lanes = [0u64; 4];
            _mm256_storeu_si256(lanes.as_mut_ptr().cast(), b);
            tb.below += lanes.iter().sum::<u64>() as usize;
        }
        groups * G
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The tally by definition, one key at a time.
    fn by_definition(x: &[f64], key: Affine, b: Bracket) -> (usize, usize, usize, Vec<f64>) {
        let keys: Vec<f64> = x.iter().map(|&v| key.of(v)).collect();
        let mut inner: Vec<f64> = keys
            .iter()
            .copied()
            .filter(|&k| k > b.lo && k < b.hi)
            .collect();
        inner.sort_by(f64::total_cmp);
        (
            keys.iter().filter(|&&k| k < b.lo).count(),
            keys.iter().filter(|&&k| k == b.lo).count(),
            keys.iter().filter(|&&k| k == b.hi && b.hi != b.lo).count(),
            inner,
        )
    }

    proptest! {
        #[test]
        fn tally_counts_every_key_once(
            x in proptest::collection::vec(prop_oneof![-10.0f64..10.0, Just(1.0), Just(-0.0), Just(f64::NAN)], 0..300),
            ends in proptest::collection::vec((-12.0f64..12.0, 0.0f64..6.0), 1..4),
            sign in prop_oneof![Just(1.0), Just(-1.0)],
            center in prop_oneof![Just(0.0), -3.0f64..3.0],
            abs in any::<bool>(),
            as_f32 in any::<bool>(),
        ) {
            let key = Affine { sign, center, abs };
            let brackets: Vec<Bracket> = ends.iter().map(|&(lo, w)| Bracket { lo, hi: lo + w }).collect();
            let (x, got) = if as_f32 {
                let y: Vec<f32> = x.iter().map(|&v| v as f32).collect();
                (y.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(), tally(&y, key, &brackets))
            } else {
                let t = tally(&x, key, &brackets);
                (x, t)
            };
            for (b, mut t) in brackets.iter().zip(got) {
                t.inner.sort_by(f64::total_cmp);
                prop_assert_eq!((t.below, t.at_lo, t.at_hi, t.inner), by_definition(&x, key, *b));
            }
        }
    }
}
