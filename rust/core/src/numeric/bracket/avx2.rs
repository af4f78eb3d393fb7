//! The AVX2 kernel of the bracket read (see [`super`]): per bracket, the
//! keys below it, the keys at its ends and the keys strictly inside, for
//! sixteen keys a group, with compares and counts in registers and the
//! kept keys packed by a permutation table ([`crate::numeric::simd`]'s
//! `PACK_F64`).
//!
//! Used by the one-pass selection of [`crate::numeric::rank`] (Floyd and
//! Rivest, *CACM* 18(3), 1975: a sample brackets each wanted rank) when the
//! CPU has AVX2: the read is the selection's whole cost on large inputs.
//!
//! Trade-offs: one monomorphised loop per bracket count (up to four), key
//! (plain or affine) and census (taken or not), so that no branch on them
//! runs per key; f32 and f64 input only (loaded and widened four at a
//! time). The counts and the kept keys equal the scalar read's exactly
//! (the keys are formed with the same operations), so the selection does
//! not depend on the CPU.

use super::{Affine, Bracket, Tally};
use crate::numeric::float::Float;
use crate::numeric::simd::PACK_F64;
use core::any::TypeId;
use std::arch::x86_64::{
    __m256d, __m256i, _mm256_and_pd, _mm256_andnot_pd, _mm256_castpd_si256, _mm256_castsi256_pd,
    _mm256_cmp_pd, _mm256_cvtps_pd, _mm256_loadu_pd, _mm256_loadu_si256, _mm256_movemask_pd,
    _mm256_mul_pd, _mm256_or_pd, _mm256_permutevar8x32_epi32, _mm256_set1_epi64x, _mm256_set1_pd,
    _mm256_setzero_pd, _mm256_setzero_si256, _mm256_storeu_si256, _mm256_sub_epi64, _mm256_sub_pd,
    _mm256_testz_si256, _mm_loadu_ps, _CMP_LE_OQ, _CMP_LT_OQ,
};

const G: usize = 16;

/// The kernel loads `T` as `f32` or `f64`: only those two.
pub(super) fn loads<T: 'static>() -> bool {
    TypeId::of::<T>() == TypeId::of::<f32>() || TypeId::of::<T>() == TypeId::of::<f64>()
}

/// Four raw scores from `src[..4]`, as doubles.
#[inline(always)]
unsafe fn load4<T: Float>(src: *const T) -> __m256d {
    if TypeId::of::<T>() == TypeId::of::<f32>() {
        _mm256_cvtps_pd(_mm_loadu_ps(src.cast::<f32>()))
    } else {
        _mm256_loadu_pd(src.cast::<f64>())
    }
}

/// The keys of four raw scores.
#[inline(always)]
unsafe fn keys4<const PLAIN: bool>(
    v: __m256d,
    sign: __m256d,
    center: __m256d,
    abs: __m256d,
) -> __m256d {
    if PLAIN {
        return v;
    }
    _mm256_and_pd(_mm256_sub_pd(_mm256_mul_pd(sign, v), center), abs)
}

/// [`tally_groups`] for any bracket count (at most four) and key,
/// without the census.
pub(super) unsafe fn tally_any<T: Float>(
    chunk: &[T],
    key: Affine,
    b: &[Bracket],
    t: &mut [Tally],
) -> (usize, bool) {
    match (b.len(), key.is_identity()) {
        (1, true) => tally_groups::<T, 1, true, false>(chunk, key, b, t),
        (1, false) => tally_groups::<T, 1, false, false>(chunk, key, b, t),
        (2, true) => tally_groups::<T, 2, true, false>(chunk, key, b, t),
        (2, false) => tally_groups::<T, 2, false, false>(chunk, key, b, t),
        (3, true) => tally_groups::<T, 3, true, false>(chunk, key, b, t),
        (3, false) => tally_groups::<T, 3, false, false>(chunk, key, b, t),
        (_, true) => tally_groups::<T, 4, true, false>(chunk, key, b, t),
        (_, false) => tally_groups::<T, 4, false, false>(chunk, key, b, t),
    }
}

/// Tallies the whole groups of sixteen of `chunk`; returns how many
/// elements that covered and, with `CENSUS`, whether all their raw
/// scores were finite (`|v| <= MAX`, false for NaN and ±inf). Keys and
/// comparisons are those of [`Affine::of`] and the scalar path, lane by
/// lane.
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn tally_groups<
    T: Float,
    const B: usize,
    const PLAIN: bool,
    const CENSUS: bool,
>(
    chunk: &[T],
    key: Affine,
    brackets: &[Bracket],
    t: &mut [Tally],
) -> (usize, bool) {
    debug_assert!(brackets.len() == B && t.len() == B);
    debug_assert!(
        TypeId::of::<T>() == TypeId::of::<f32>() || TypeId::of::<T>() == TypeId::of::<f64>()
    );
    let sign = _mm256_set1_pd(key.sign);
    let center = _mm256_set1_pd(key.center);
    // All ones, or all but the sign bit: `and` with it is `abs`.
    let abs = _mm256_castsi256_pd(_mm256_set1_epi64x(if key.abs { i64::MAX } else { -1 }));
    let mut not_finite = _mm256_setzero_pd();
    let groups = chunk.len() / G;
    let lo: [__m256d; B] = core::array::from_fn(|i| _mm256_set1_pd(brackets[i].lo));
    let hi: [__m256d; B] = core::array::from_fn(|i| _mm256_set1_pd(brackets[i].hi));
    // Per bracket, lanes counting k < lo, k <= lo and k <= hi (an
    // all-ones compare lane is −1); the ties with each end follow from
    // them and the count filed inside. Counters in registers, not in
    // `t`: the stores into `inner` could alias a field of it, which
    // kept every count in memory.
    let zero = _mm256_setzero_si256();
    let (mut below, mut le_lo, mut le_hi) = ([zero; B], [zero; B], [zero; B]);
    let mut filed = [0usize; B];
    for g in 0..groups {
        let p = chunk.as_ptr().add(g * G);
        // The keys with lo < k < hi are packed into `inner` (NaN never
        // are). Filing takes no branch: a branch on "any key inside" is
        // mispredicted for a large share of the groups at the usual
        // bracket widths.
        let dst: [*mut f64; B] = core::array::from_fn(|i| {
            let inner = &mut t[i].inner;
            inner.reserve(G);
            inner.as_mut_ptr().add(inner.len())
        });
        let mut stored = [0usize; B];
        // One vector at a time, loaded, checked and filed: loading the
        // group first kept more registers live than AVX2 has, and the
        // spill's reload stalled (by how much depended on the stack's
        // alignment, up to threefold).
        for j in 0..G / 4 {
            let v = load4(p.add(4 * j));
            if CENSUS {
                // v − v is +0 for finite v, NaN for NaN and ±inf.
                not_finite = _mm256_or_pd(not_finite, _mm256_sub_pd(v, v));
            }
            let k = keys4::<PLAIN>(v, sign, center, abs);
            for i in 0..B {
                let lt = _mm256_cmp_pd::<_CMP_LT_OQ>(k, lo[i]);
                let le = _mm256_cmp_pd::<_CMP_LE_OQ>(k, lo[i]);
                let below_hi = _mm256_cmp_pd::<_CMP_LT_OQ>(k, hi[i]);
                below[i] = _mm256_sub_epi64(below[i], _mm256_castpd_si256(lt));
                le_lo[i] = _mm256_sub_epi64(le_lo[i], _mm256_castpd_si256(le));
                le_hi[i] = _mm256_sub_epi64(
                    le_hi[i],
                    _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_LE_OQ>(k, hi[i])),
                );
                let strict = _mm256_movemask_pd(_mm256_andnot_pd(le, below_hi));
                let idx = _mm256_loadu_si256(PACK_F64[strict as usize & 15].as_ptr().cast());
                let packed = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(k), idx);
                // Within the G reserved slots: stored <= 4·j.
                _mm256_storeu_si256(dst[i].add(stored[i]).cast(), packed);
                stored[i] += (strict as u32).count_ones() as usize;
            }
        }
        for i in 0..B {
            let inner = &mut t[i].inner;
            inner.set_len(inner.len() + stored[i]);
            filed[i] += stored[i];
        }
    }
    let total = |c: __m256i| {
        let mut lanes = [0u64; 4];
        _mm256_storeu_si256(lanes.as_mut_ptr().cast(), c);
        lanes.iter().sum::<u64>() as usize
    };
    for i in 0..B {
        let (lt, le, le_hi) = (total(below[i]), total(le_lo[i]), total(le_hi[i]));
        // #(k <= hi) = #(k <= lo) + inside + ties with hi; with lo = hi
        // nothing is inside and the ties are all at `lo`, as in
        // `classify`.
        t[i].below += lt;
        t[i].at_lo += le - lt;
        t[i].at_hi += le_hi - le - filed[i];
    }
    let not_finite = _mm256_castpd_si256(not_finite);
    (groups * G, _mm256_testz_si256(not_finite, not_finite) == 1)
}
