//! AVX-512 F/DQ/VL implementation of the erf polynomials and the Gaussian
//! kernels' three passes (see the module docs of [`super`], "Vectorisation":
//! eight lanes, each lane's coefficients picked by `vpermt2pd`, the `z`
//! that need erf packed densely by permutation tables). Every `unsafe fn`
//! here requires those CPU features; the helpers are `#[inline(always)]`
//! into the `#[target_feature]` entry points. The same fused
//! multiply-adds in the same order as the scalar path: results are
//! bit-identical to it.
//!
//! The AVX-512 intrinsics and target features are stable since Rust 1.89,
//! above the workspace's declared `rust-version`; building this crate needs
//! rustc ≥ 1.89.

use core::arch::x86_64::{
    __m512d, __m512i, _mm512_abs_pd, _mm512_and_pd, _mm512_castsi512_pd, _mm512_cmp_pd_mask,
    _mm512_cmpeq_epi64_mask, _mm512_cvtepu8_epi64, _mm512_cvttpd_epi64, _mm512_div_pd,
    _mm512_fmadd_pd, _mm512_fmsub_pd, _mm512_fpclass_pd_mask, _mm512_load_pd, _mm512_loadu_pd,
    _mm512_mask_cmp_pd_mask, _mm512_mask_mov_pd, _mm512_mask_permutexvar_pd, _mm512_mask_storeu_pd,
    _mm512_maskz_loadu_pd, _mm512_maskz_min_pd, _mm512_min_pd, _mm512_mul_pd, _mm512_or_pd,
    _mm512_permutex2var_pd, _mm512_permutexvar_pd, _mm512_set1_epi64, _mm512_set1_pd,
    _mm512_setzero_pd, _mm512_setzero_si512, _mm512_store_pd, _mm512_storeu_pd, _mm512_sub_pd,
    _mm_cvtsi64_si128, _mm_sfence, _CMP_GT_OQ, _CMP_LT_OQ, _CMP_NLT_UQ,
};

use super::{Elem, Params, Table, BLOCK, CENTER, COEF, CUT, INV_WIDTH, NCOEF, STREAM_BYTES};

/// Each lane's entry of `tab` for the piece indices in `idx` (low 4 bits).
#[inline(always)]
unsafe fn select(tab: &Table, idx: __m512i) -> __m512d {
    let p = tab.0.as_ptr();
    // SAFETY: `Table` is 64-byte aligned and holds 16 doubles.
    _mm512_permutex2var_pd(_mm512_load_pd(p), idx, _mm512_load_pd(p.add(8)))
}

/// erf of each lane with `0 ≤ z < CUT`, exactly as `super::erf_poly`
/// (same operations, same order). Other lanes get meaningless values.
#[inline(always)]
unsafe fn poly(z: __m512d) -> __m512d {
    let idx = _mm512_cvttpd_epi64(_mm512_mul_pd(z, _mm512_set1_pd(INV_WIDTH)));
    let t = _mm512_sub_pd(z, select(&CENTER, idx));
    let mut q = select(&COEF[NCOEF - 1], idx);
    let mut k = NCOEF - 2;
    while k >= 1 {
        q = _mm512_fmadd_pd(q, t, select(&COEF[k], idx));
        k -= 1;
    }
    let piece0 = _mm512_cmpeq_epi64_mask(idx, _mm512_setzero_si512());
    let b = _mm512_mask_mov_pd(select(&COEF[0], idx), piece0, z);
    _mm512_fmadd_pd(q, t, b)
}

/// erf of every lane (as `super::erf_any`).
#[inline(always)]
unsafe fn erf8(x: __m512d) -> __m512d {
    let a = _mm512_abs_pd(x);
    let small = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, _mm512_set1_pd(CUT));
    // |x| ≥ CUT → 1; NaN → NaN (min returns its second operand on NaN).
    let big = _mm512_min_pd(_mm512_set1_pd(1.0), a);
    let r = _mm512_mask_mov_pd(big, small, poly(a));
    let sign = _mm512_and_pd(x, _mm512_castsi512_pd(_mm512_set1_epi64(i64::MIN)));
    _mm512_or_pd(r, sign)
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
pub(super) unsafe fn erf_slice(x: &[f64], out: &mut [f64]) {
    let n = x.len().min(out.len());
    let xp = x.as_ptr();
    let op = out.as_mut_ptr();
    let mut i = 0;
    // SAFETY (loads/stores below): i + 8 ≤ n, or the mask covers only
    // the n − i < 8 remaining elements.
    while i + 8 <= n {
        _mm512_storeu_pd(op.add(i), erf8(_mm512_loadu_pd(xp.add(i))));
        i += 8;
    }
    if i < n {
        let m = (1u8 << (n - i)) - 1;
        let v = erf8(_mm512_maskz_loadu_pd(m, xp.add(i)));
        _mm512_mask_storeu_pd(op.add(i), m, v);
    }
}

/// 64-byte aligned scratch.
#[repr(C, align(64))]
struct Buf<const N: usize>([f64; N]);

/// For each 8-lane mask, 8 permute indices (one byte each).
#[repr(C, align(64))]
struct Lut([[u8; 8]; 256]);

/// Compression by `vpermpd`: the selected lanes first, in order (on
/// Zen 4 this is about 3× cheaper than `vcompresspd`).
static COMPRESS: Lut = {
    let mut t = [[0u8; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let mut k = 0;
        let mut i = 0;
        while i < 8 {
            if (m >> i) & 1 == 1 {
                t[m][k] = i as u8;
                k += 1;
            }
            i += 1;
        }
        m += 1;
    }
    Lut(t)
};

/// Expansion by masked `vpermpd`: selected lane `i` takes element
/// `rank(i)`, the number of selected lanes below `i`.
static EXPAND: Lut = {
    let mut t = [[0u8; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let mut r = 0;
        let mut i = 0;
        while i < 8 {
            t[m][i] = r;
            if (m >> i) & 1 == 1 {
                r += 1;
            }
            i += 1;
        }
        m += 1;
    }
    Lut(t)
};

/// The 8 permute indices of mask `m`, widened to 64-bit lanes.
#[inline(always)]
unsafe fn lut_index(lut: &Lut, m: u8) -> __m512i {
    let row = i64::from_le_bytes(lut.0[usize::from(m)]);
    _mm512_cvtepu8_epi64(_mm_cvtsi64_si128(row))
}

/// The Gaussian transform in blocks of `BLOCK` scores:
/// 1. z, the trivial results (into `triv`), the mask of lanes that need
///    erf (into `masks`) and those lanes' z packed densely into `zbuf`;
/// 2. erf over whole vectors of `zbuf` (the ≤ 7 spare lanes of the last
///    vector hold finite leftovers and are never read back);
/// 3. the erf values expanded into their lanes over `triv`, stored.
#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
pub(super) unsafe fn gaussian<T: Elem, const DIV: bool>(src: &[T], dst: &mut [T], p: Params) {
    let n = src.len().min(dst.len());
    // 8 spare slots: full-vector loads and stores at any count ≤ BLOCK
    // stay inside.
    let mut zbuf = Buf([0.0f64; BLOCK + 8]);
    let mut triv = Buf([0.0f64; BLOCK]);
    let mut masks = [0u8; BLOCK / 8];
    let zb = zbuf.0.as_mut_ptr();
    let tb = triv.0.as_mut_ptr();
    let sign = _mm512_set1_pd(p.sign);
    let center = _mm512_set1_pd(p.center);
    let k = _mm512_set1_pd(p.k);
    let cut = _mm512_set1_pd(CUT);
    let one = _mm512_set1_pd(1.0);
    let zero = _mm512_setzero_pd();
    // Large outputs bypass the caches (they would be evicted before
    // use anyway), saving the read-for-ownership of every line: the
    // kernel then moves as many bytes as a copy.
    let width = 8 * core::mem::size_of::<T>();
    let stream = n * core::mem::size_of::<T>() >= STREAM_BYTES;
    // The first block is shortened so that the later ones start on a
    // 64-byte boundary of `dst`; each store checks its alignment anyway.
    let first = BLOCK - (dst.as_ptr() as usize % 64) / core::mem::size_of::<T>();
    let mut start = 0;
    while start < n {
        let len = (n - start).min(if start == 0 { first } else { BLOCK });
        // SAFETY: start + len ≤ n ≤ both lengths; every access below is
        // at j + 8 ≤ len, or masked to the len − j < 8 remaining ones.
        let sp = src.as_ptr().add(start);
        let dp = dst.as_mut_ptr().add(start);
        let nvec = len.div_ceil(8);
        // Pass 1.
        let mut cnt = 0usize;
        for v in 0..nvec {
            let j = 8 * v;
            let rem = len - j;
            let (x, lm) = if rem >= 8 {
                (T::load8(sp.add(j)), 0xff)
            } else {
                let m = (1u8 << rem) - 1;
                (T::load8_masked(sp.add(j), m), m)
            };
            // sign·x − μ with one rounding: fl(s' − μ), as the reference.
            let d = _mm512_fmsub_pd(sign, x, center);
            let z = if DIV {
                let s = _mm512_mul_pd(sign, x);
                // ±inf scores stay ±inf (σ√2 may be inf).
                let inf = _mm512_fpclass_pd_mask::<0x18>(s);
                _mm512_mask_mov_pd(_mm512_div_pd(d, k), inf, s)
            } else {
                _mm512_mul_pd(d, k)
            };
            // z ≥ CUT → 1, NaN → NaN (min returns z on NaN), else +0.0.
            let big = _mm512_cmp_pd_mask::<_CMP_NLT_UQ>(z, cut);
            _mm512_store_pd(tb.add(j), _mm512_maskz_min_pd(big, one, z));
            let act = _mm512_mask_cmp_pd_mask::<_CMP_GT_OQ>(!big & lm, z, zero);
            masks[v & (BLOCK / 8 - 1)] = act;
            // cnt ≤ j ≤ BLOCK − 8: the store stays inside zbuf.
            let packed = _mm512_permutexvar_pd(lut_index(&COMPRESS, act), z);
            _mm512_storeu_pd(zb.add(cnt), packed);
            cnt += act.count_ones() as usize;
        }
        // Pass 2: j < cnt ≤ BLOCK, so j + 8 ≤ BLOCK + 8.
        let mut j = 0;
        while j < cnt {
            _mm512_storeu_pd(zb.add(j), poly(_mm512_loadu_pd(zb.add(j))));
            j += 8;
        }
        // Pass 3: pos ≤ cnt ≤ BLOCK.
        let mut pos = 0usize;
        for v in 0..nvec {
            let j = 8 * v;
            let m = masks[v & (BLOCK / 8 - 1)];
            let r = _mm512_mask_permutexvar_pd(
                _mm512_load_pd(tb.add(j)),
                m,
                lut_index(&EXPAND, m),
                _mm512_loadu_pd(zb.add(pos)),
            );
            pos += m.count_ones() as usize;
            let rem = len - j;
            if rem >= 8 {
                if stream && (dp.add(j) as usize).is_multiple_of(width) {
                    T::stream8(dp.add(j), r);
                } else {
                    T::store8(dp.add(j), r);
                }
            } else {
                T::store8_masked(dp.add(j), (1u8 << rem) - 1, r);
            }
        }
        start += len;
    }
    if stream {
        // Order the non-temporal stores before anything after the call.
        _mm_sfence();
    }
}
