//! The AVX2 kernel of [`Bulk::split`]: four scores a vector, the held
//! ones' powers summed into two vectors of lanes per power, the others
//! packed to the front of `rest` by a permutation table. Lane by lane it
//! computes what the scalar `split_scalar` does, so the sums agree to the
//! bit.

use super::{Bulk, CHUNK, LANES};
use crate::numeric::simd::PACK_F64;
use std::arch::x86_64::{
    __m256d, _mm256_add_pd, _mm256_and_pd, _mm256_andnot_pd, _mm256_blendv_pd, _mm256_castpd_si256,
    _mm256_castsi256_pd, _mm256_cmp_pd, _mm256_cmpgt_epi64, _mm256_loadu_pd, _mm256_loadu_si256,
    _mm256_max_pd, _mm256_min_pd, _mm256_movemask_pd, _mm256_mul_pd, _mm256_or_si256,
    _mm256_permutevar8x32_epi32, _mm256_set1_epi64x, _mm256_set1_pd, _mm256_setzero_pd,
    _mm256_setzero_si256, _mm256_storeu_pd, _mm256_storeu_si256, _mm256_sub_epi64, _mm256_sub_pd,
    _mm256_xor_si256, _CMP_ORD_Q,
};

/// [`Bulk::split`] with `P` powers.
///
/// # Safety
/// The CPU must support AVX2 (and with it POPCNT); `rest` must be at least
/// as long as `ys`.
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn split<const P: usize>(bulk: &mut Bulk, ys: &[f64], rest: &mut [f64]) -> usize {
    debug_assert!(rest.len() >= ys.len());
    let sign = _mm256_set1_epi64x(i64::MIN);
    let first = _mm256_set1_epi64x(bulk.first as i64);
    // k − first <= last − first, unsigned, as a signed compare of both
    // sides with the sign bit flipped.
    let span = _mm256_set1_epi64x((bulk.last.wrapping_sub(bulk.first) ^ (1 << 63)) as i64);
    let (center, inv, one) = (
        _mm256_set1_pd(bulk.center),
        _mm256_set1_pd(bulk.inv),
        _mm256_set1_pd(1.0),
    );
    let (inf, minus_inf) = (
        _mm256_set1_pd(f64::INFINITY),
        _mm256_set1_pd(f64::NEG_INFINITY),
    );
    let (mut lo, mut hi) = (inf, minus_inf);
    let zero = _mm256_setzero_si256();
    let (mut len, mut count) = (0usize, 0usize);
    let out = rest.as_mut_ptr();
    let whole = ys.len() / CHUNK * CHUNK;
    for c in (0..whole).step_by(CHUNK) {
        let mut acc: [[__m256d; 2]; P] = [[_mm256_setzero_pd(); 2]; P];
        for j in 0..CHUNK / 4 {
            let y = _mm256_loadu_pd(ys.as_ptr().add(c + 4 * j));
            let bits = _mm256_castpd_si256(y);
            // order_key: negative doubles' bits inverted, others' sign set.
            let key = _mm256_xor_si256(bits, _mm256_or_si256(_mm256_cmpgt_epi64(zero, bits), sign));
            let t = _mm256_xor_si256(_mm256_sub_epi64(key, first), sign);
            let outside = _mm256_castsi256_pd(_mm256_cmpgt_epi64(t, span));
            // Zero (not a product that may overflow) outside the bulk.
            let d = _mm256_andnot_pd(outside, _mm256_mul_pd(_mm256_sub_pd(y, center), inv));
            let mut pw = _mm256_andnot_pd(outside, one);
            // Scores 4j..4j+3 of the chunk: lanes 4(j mod 2)..+3.
            let half = j & 1;
            for a in &mut acc {
                a[half] = _mm256_add_pd(a[half], pw);
                pw = _mm256_mul_pd(pw, d);
            }
            lo = _mm256_min_pd(lo, _mm256_blendv_pd(y, inf, outside));
            hi = _mm256_max_pd(hi, _mm256_blendv_pd(y, minus_inf, outside));
            let number = _mm256_cmp_pd::<_CMP_ORD_Q>(y, y);
            let keep = _mm256_movemask_pd(_mm256_and_pd(outside, number)) as usize;
            let idx = _mm256_loadu_si256(PACK_F64[keep & 15].as_ptr().cast());
            // Within `rest`: len <= c + 4j scores were kept before.
            _mm256_storeu_si256(out.add(len).cast(), _mm256_permutevar8x32_epi32(bits, idx));
            len += keep.count_ones() as usize;
            count += 4 - _mm256_movemask_pd(outside).count_ones() as usize;
        }
        let mut lanes = [[0.0; LANES]; P];
        for (l, a) in lanes.iter_mut().zip(&acc) {
            _mm256_storeu_pd(l.as_mut_ptr(), a[0]);
            _mm256_storeu_pd(l.as_mut_ptr().add(4), a[1]);
        }
        bulk.add_lanes(&lanes);
    }
    let (mut l4, mut h4) = ([0.0; 4], [0.0; 4]);
    _mm256_storeu_pd(l4.as_mut_ptr(), lo);
    _mm256_storeu_pd(h4.as_mut_ptr(), hi);
    bulk.lo = l4.iter().fold(bulk.lo, |a, &b| a.min(b));
    bulk.hi = h4.iter().fold(bulk.hi, |a, &b| a.max(b));
    bulk.count += count;
    len + bulk.split_scalar::<P>(&ys[whole..], &mut rest[len..])
}
