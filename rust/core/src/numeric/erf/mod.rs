//! Fast, accurate, vectorised `erf` and the Gaussian-scaling kernels of
//! contract §4: `p = max(0, erf((s − μ)/(σ√2)))` over whole buffers.
//!
//! # The approximation
//!
//! Only `0 < z < CUT` needs work (`CUT` = 5.921587195794507, the smallest
//! double whose erf rounds to 1.0; erf is odd). That range is cut into 16
//! pieces of width `W = 3/8`; piece `i = trunc(z · 8/3)` uses a degree-13
//! polynomial around a centre `c_i`:
//!
//! ```text
//! t = z − c_i                                  (exact: Sterbenz)
//! Q = C1[i] + t·(C2[i] + t·(… + t·C13[i]))     (Horner, FMA)
//! erf(z) ≈ t·Q + B,     B = C0[i] (i ≥ 1),   B = z (i = 0, c_0 = 0)
//! ```
//!
//! Piece 0 is `z + z·Q(z)` with `Q ≈ erf(z)/z − 1`, so erf keeps its full
//! relative accuracy down to the subnormals; the centres of the other pieces
//! are doubles at which erf and erf' are within a tiny fraction of an ulp of
//! doubles, so `C0`, `C1` carry no rounding error worth the name. The tables
//! come from `rust/core/tools/erf_coefficients.py` (mpmath, 60 digits,
//! Chebyshev interpolation, coefficients rounded to double and re-checked).
//! Approximation error ≤ 0.14 ulp; with the evaluation rounding the bound is
//! below 1 ulp, and the tests measure ≤ 1 ulp against correctly rounded
//! values.
//!
//! Every code path evaluates the same formula with the same fused
//! multiply-adds in the same order, so the scalar [`erf`], [`erf_slice`] and
//! the kernels return bit-identical results on every CPU and dispatch path
//! (`f64::mul_add` is a true FMA everywhere: an instruction where the CPU has
//! one, a correctly rounded library call otherwise).
//!
//! # Vectorisation
//!
//! With AVX-512 (F, DQ, VL) the 16 coefficients of one power of `t` fill two
//! zmm registers and `vpermt2pd` picks each lane's coefficient: one permute
//! per coefficient, no gathers, no per-lane branches. The Gaussian kernels
//! work in blocks of 512 scores: pass 1 computes `z`, keeps the trivial
//! results (+0.0 for `z ≤ 0`, 1 for `z ≥ CUT`, NaN for NaN) and packs the
//! `z` that need erf densely into a buffer; pass 2 evaluates erf on whole
//! vectors of that buffer only; pass 3 moves the results back into their
//! lanes and stores. Packing and unpacking are `vpermpd` with indices from
//! 256-entry tables (on Zen 4 about three times cheaper than
//! `vcompresspd`/`vexpandpd`). Outputs of 16 MiB or more are written with
//! non-temporal stores, so the kernel moves as many bytes as a copy. Without
//! AVX-512 the same three passes run on scalar code (branch-free
//! compaction), compiled with AVX2+FMA where the CPU has them. The path is
//! chosen at run time ([`Kernel::best`]).
//!
//! The AVX-512 intrinsics are stable since Rust 1.89, newer than the
//! workspace's declared `rust-version` (1.80): this module needs rustc ≥
//! 1.89.

use core::f64::consts::SQRT_2;

use crate::numeric::float::Float;

/// Smallest double whose erf rounds to 1.0 (`erfc(CUT) ≤ 2⁻⁵⁴`, ties to even
/// go to 1.0; the double below it has `erfc > 2⁻⁵⁴`). `|x| ≥ CUT` → ±1.
pub const CUT: f64 = 5.921_587_195_794_507;

/// Number of polynomial pieces on `[0, CUT)`.
const PIECES: usize = 16;
/// Coefficients per piece (degree 13).
const NCOEF: usize = 14;
/// `1/W` rounded (`W = 3/8`, the piece width); `trunc(z · INV_WIDTH)` is
/// the piece index. Boundary cases may land one piece off by an ulp; every
/// piece is fitted on an interval widened by a relative 1e-9 to cover that.
const INV_WIDTH: f64 = 8.0 / 3.0;

mod normal_tail;
mod tables;
pub use normal_tail::normal_sf;
use tables::{Table, CENTER, COEF};

// ---------------------------------------------------------------------------
// Scalar evaluation (also the portable kernels' inner step)
// ---------------------------------------------------------------------------

/// Piece index of `0 ≤ z < CUT` (saturating conversion; `min` only keeps the
/// table lookups in bounds for inputs outside that range, which never occur).
#[inline(always)]
fn piece(z: f64) -> usize {
    ((z * INV_WIDTH) as usize).min(PIECES - 1)
}

/// erf(z) for `0 ≤ z < CUT` (any other `z` gives a meaningless finite or
/// non-finite value, never a panic).
#[inline(always)]
fn erf_poly(z: f64) -> f64 {
    let i = piece(z);
    let t = z - CENTER.0[i];
    let mut q = COEF[NCOEF - 1].0[i];
    let mut k = NCOEF - 2;
    while k >= 1 {
        q = q.mul_add(t, COEF[k].0[i]);
        k -= 1;
    }
    let b = if i == 0 { z } else { COEF[0].0[i] };
    q.mul_add(t, b)
}

/// erf(x) for any x (odd; ±inf → ±1; NaN → NaN).
#[inline(always)]
fn erf_any(x: f64) -> f64 {
    let a = x.abs();
    if a < CUT {
        erf_poly(a).copysign(x)
    } else if a.is_nan() {
        x
    } else {
        1.0f64.copysign(x)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn erf_fma(x: f64) -> f64 {
    erf_any(x)
}

/// The error function, accurate to 1 ulp (measured ≤ 1 ulp against
/// correctly rounded values; designed bound < 1 ulp).
///
/// Odd (`erf(−x) = −erf(x)`, `erf(−0.0) = −0.0`), `erf(±inf) = ±1`,
/// `erf(NaN)` is NaN, subnormal `x` keep full relative accuracy, and
/// `|x| ≥ CUT` gives exactly ±1. Bit-identical to [`erf_slice`] and to the
/// values the Gaussian kernels use.
#[inline]
pub fn erf(x: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports FMA.
            return unsafe { erf_fma(x) };
        }
    }
    erf_any(x)
}

// ---------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------

/// An implementation of the vector kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// AVX-512 F/DQ/VL intrinsics: permute-selected coefficients,
    /// compress/expand of the lanes that need erf.
    Avx512,
    /// The portable three-pass code compiled with AVX2 and FMA enabled.
    Avx2Fma,
    /// The portable three-pass code for the baseline target.
    Portable,
}

impl Kernel {
    /// The fastest kernel this CPU runs.
    pub fn best() -> Self {
        [Self::Avx512, Self::Avx2Fma]
            .into_iter()
            .find(|k| k.is_available())
            .unwrap_or(Self::Portable)
    }

    /// Whether this CPU runs the kernel.
    pub fn is_available(self) -> bool {
        match self {
            Self::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("popcnt")
            }
            #[cfg(target_arch = "x86_64")]
            Self::Avx2Fma => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Self::Avx512 | Self::Avx2Fma => false,
        }
    }

    /// Short name (`"avx512"`, `"avx2+fma"`, `"portable"`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Avx512 => "avx512",
            Self::Avx2Fma => "avx2+fma",
            Self::Portable => "portable",
        }
    }

    /// `self` if available, else [`Kernel::Portable`].
    fn or_portable(self) -> Self {
        if self.is_available() {
            self
        } else {
            Self::Portable
        }
    }
}

// ---------------------------------------------------------------------------
// erf over a slice
// ---------------------------------------------------------------------------

/// `out[i] = erf(x[i])` with the vector kernel ([`Kernel::best`]); the same
/// values as [`erf`], bit for bit.
///
/// The caller passes slices of equal length; with unequal lengths only the
/// common prefix is written (no panic).
pub fn erf_slice(x: &[f64], out: &mut [f64]) {
    erf_slice_with(Kernel::best(), x, out);
}

/// [`erf_slice`] on a chosen kernel (falls back to [`Kernel::Portable`] if
/// the CPU does not run it). For tests and benchmarks.
pub fn erf_slice_with(kernel: Kernel, x: &[f64], out: &mut [f64]) {
    match kernel.or_portable() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `or_portable` checked the CPU features.
        Kernel::Avx512 => unsafe { avx512::erf_slice(x, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Kernel::Avx2Fma => unsafe { erf_slice_avx2(x, out) },
        _ => erf_slice_portable(x, out),
    }
}

#[inline(always)]
fn erf_slice_portable(x: &[f64], out: &mut [f64]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = erf_any(v);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn erf_slice_avx2(x: &[f64], out: &mut [f64]) {
    erf_slice_portable(x, out);
}

// ---------------------------------------------------------------------------
// Gaussian scaling kernels
// ---------------------------------------------------------------------------

/// Scores per block of the three-pass kernels (stack buffers of ~8 KiB).
const BLOCK: usize = 512;

/// Outputs of at least this many bytes are written with non-temporal stores
/// by the AVX-512 kernel (as `memcpy` does for large copies).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const STREAM_BYTES: usize = 16 << 20;

/// Per-call constants: `z = (sign·x − center)·k`, or `/ k` when `DIV`.
#[derive(Clone, Copy)]
struct Params {
    sign: f64,
    center: f64,
    /// `1/(σ√2)` (multiply), or `σ√2` itself (divide).
    k: f64,
}

impl Params {
    #[inline(always)]
    fn z<const DIV: bool>(self, x: f64) -> f64 {
        // sign·x is exact, so this is fl(s' − μ) exactly as the reference.
        let s = self.sign * x;
        let d = s - self.center;
        if DIV {
            let z = d / self.k;
            // σ√2 = inf (σ > 1.27e308): keep ±inf scores at ±inf (→ 1, 0)
            // instead of inf/inf = NaN.
            if s.is_infinite() {
                s
            } else {
                z
            }
        } else {
            d * self.k
        }
    }
}

/// Probability for a `z` that needs no erf: `z ≥ CUT` → 1, NaN → NaN,
/// otherwise (`z ≤ 0`) +0.0. Meaningless for `0 < z < CUT`.
#[inline(always)]
fn trivial(z: f64) -> f64 {
    if z >= CUT {
        1.0
    } else if z.is_nan() {
        z
    } else {
        0.0
    }
}

/// Element types of the kernels: the f64 value of a score and the rounding
/// of a probability back to the element type.
trait Elem: Float {
    #[cfg(target_arch = "x86_64")]
    /// Loads 8 elements as f64 lanes.
    unsafe fn load8(p: *const Self) -> core::arch::x86_64::__m512d;
    #[cfg(target_arch = "x86_64")]
    /// Loads the elements selected by `m` (others read as 0, never touched).
    unsafe fn load8_masked(p: *const Self, m: u8) -> core::arch::x86_64::__m512d;
    #[cfg(target_arch = "x86_64")]
    /// Stores 8 lanes, rounded to `Self`.
    unsafe fn store8(p: *mut Self, v: core::arch::x86_64::__m512d);
    #[cfg(target_arch = "x86_64")]
    /// Stores 8 lanes, rounded to `Self`, with a non-temporal store; `p`
    /// must be aligned to the stored width (64 bytes f64, 32 bytes f32).
    unsafe fn stream8(p: *mut Self, v: core::arch::x86_64::__m512d);
    #[cfg(target_arch = "x86_64")]
    /// Stores the lanes selected by `m`, rounded to `Self`.
    unsafe fn store8_masked(p: *mut Self, m: u8, v: core::arch::x86_64::__m512d);
}

/// `dst[i] = max(0, erf((s' − center)/(scale·√2)))` with `s' = −src[i]` if
/// `negate` else `src[i]`, on the fastest kernel of this CPU.
///
/// Per element: NaN → NaN; +inf → 1; −inf → 0; every `z ≤ 0` (including
/// `s' = center` and `z = −0.0`) → exactly +0.0; `z ≥ CUT` → exactly 1.
/// `scale == 0` is the σ → 0 limit: 1 where `s' > center`, else 0 (NaN
/// stays NaN). `z` is `(s' − center) · k` with `k = 1/(scale·√2)` rounded
/// (within 1 ulp of the division), or the division itself where `k` is not
/// a finite normal number (huge or tiny `scale`; a `scale·√2` that overflows
/// keeps ±inf scores at 1 and 0). Parameters that `Gaussian::check` rejects
/// (non-finite `center`, negative, NaN or infinite `scale`) are accepted:
/// the output is then exactly `Scaling::probability` of
/// [`crate::transformations::scaling::Gaussian`] with this module's erf.
///
/// The results equal [`erf`] of that `z` bit for bit, whichever kernel runs.
/// The caller passes slices of equal length; otherwise only the common
/// prefix is written (never a panic).
pub fn gaussian_probabilities_f64(
    src: &[f64],
    dst: &mut [f64],
    center: f64,
    scale: f64,
    negate: bool,
) {
    gaussian_with(Kernel::best(), src, dst, center, scale, negate);
}

/// The float32 version of [`gaussian_probabilities_f64`]: each score is
/// widened to f64 (exact), `z` and erf are computed in f64 and the
/// probability is rounded once to f32 — the f64 result correctly rounded.
pub fn gaussian_probabilities_f32(
    src: &[f32],
    dst: &mut [f32],
    center: f64,
    scale: f64,
    negate: bool,
) {
    gaussian_with(Kernel::best(), src, dst, center, scale, negate);
}

/// [`gaussian_probabilities_f64`] on a chosen kernel (falls back to
/// [`Kernel::Portable`] if the CPU does not run it). For tests and
/// benchmarks.
pub fn gaussian_probabilities_f64_with(
    kernel: Kernel,
    src: &[f64],
    dst: &mut [f64],
    center: f64,
    scale: f64,
    negate: bool,
) {
    gaussian_with(kernel, src, dst, center, scale, negate);
}

/// [`gaussian_probabilities_f32`] on a chosen kernel (falls back to
/// [`Kernel::Portable`] if the CPU does not run it). For tests and
/// benchmarks.
pub fn gaussian_probabilities_f32_with(
    kernel: Kernel,
    src: &[f32],
    dst: &mut [f32],
    center: f64,
    scale: f64,
    negate: bool,
) {
    gaussian_with(kernel, src, dst, center, scale, negate);
}

/// Above this σ, scores, μ and σ are scaled by [`PRE_SCALE`] first.
const PRE_SCALE_ABOVE: f64 = 1.071_508_607_186_267_3e301; // 2^1000
/// 2^-4: exact, and keeps `s − μ` (|s|, |μ| <= MAX/16) and `σ√2` finite
/// for every finite σ.
const PRE_SCALE: f64 = 0.0625;

/// `(sign, μ, σ)` of the map, all times 2^-4 when σ > 2^1000 (contract §5:
/// no overflow at the ends of the float range). z = (s − μ)/(σ√2) is
/// unchanged by a common power-of-two factor, but unscaled `s − μ` overflows
/// when s and μ sit near opposite ends of the range and `σ√2` overflows for
/// σ > 1.27e308. Below 2^1000 an overflowing `s − μ` means |z| > 2^23: the
/// probability is 0 or 1 either way.
#[inline]
fn pre_scaled(sign: f64, center: f64, scale: f64) -> (f64, f64, f64) {
    if scale > PRE_SCALE_ABOVE {
        (sign * PRE_SCALE, center * PRE_SCALE, scale * PRE_SCALE)
    } else {
        (sign, center, scale)
    }
}

/// One probability of the Gaussian scaling, bit-identical to what the
/// kernels write for that score (same `z`, same erf), for callers that map
/// scores one at a time.
pub fn gaussian_probability(s: f64, center: f64, scale: f64) -> f64 {
    if !(center.is_finite() && scale.is_finite() && scale > 0.0) {
        let mut out = [0.0];
        gaussian_with(Kernel::Portable, &[s], &mut out, center, scale, false);
        return out[0];
    }
    let (sign, center, scale) = pre_scaled(1.0, center, scale);
    let den = scale * SQRT_2;
    let k = 1.0 / den;
    let z = if k.is_normal() && scale <= PRE_SCALE_ABOVE * PRE_SCALE {
        Params { sign, center, k }.z::<false>(s)
    } else {
        Params {
            sign,
            center,
            k: den,
        }
        .z::<true>(s)
    };
    if z > 0.0 && z < CUT {
        erf(z)
    } else {
        trivial(z)
    }
}

fn gaussian_with<T: Elem>(
    kernel: Kernel,
    src: &[T],
    dst: &mut [T],
    center: f64,
    scale: f64,
    negate: bool,
) {
    let sign = if negate { -1.0 } else { 1.0 };
    if !(center.is_finite() && scale.is_finite() && scale >= 0.0) {
        // Invalid parameters: mirror `Gaussian::probability` exactly.
        for (d, &s) in dst.iter_mut().zip(src) {
            let s = sign * s.to_f64();
            let p = if s.is_nan() {
                s
            } else if scale > 0.0 {
                let p = erf((s - center) / (scale * SQRT_2));
                if p > 0.0 {
                    p
                } else {
                    0.0
                }
            } else if s > center {
                1.0
            } else {
                0.0
            };
            *d = T::from_f64(p);
        }
        return;
    }
    if scale == 0.0 {
        for (d, &s) in dst.iter_mut().zip(src) {
            let s = sign * s.to_f64();
            let p = if s > center {
                1.0
            } else if s.is_nan() {
                s
            } else {
                0.0
            };
            *d = T::from_f64(p);
        }
        return;
    }
    let (sign, center, scale) = pre_scaled(sign, center, scale);
    let den = scale * SQRT_2;
    let k = 1.0 / den;
    let kernel = kernel.or_portable();
    // Pre-scaled (large σ): divide, as the unscaled map did, so that z is
    // fl((s − μ)/(σ√2)) whenever that has no overflow.
    if k.is_normal() && scale <= PRE_SCALE_ABOVE * PRE_SCALE {
        let p = Params { sign, center, k };
        run::<T, false>(kernel, src, dst, p);
    } else {
        let p = Params {
            sign,
            center,
            k: den,
        };
        run::<T, true>(kernel, src, dst, p);
    }
}

#[inline(always)]
fn run<T: Elem, const DIV: bool>(kernel: Kernel, src: &[T], dst: &mut [T], p: Params) {
    match kernel {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the caller checked the CPU features (`or_portable`).
        Kernel::Avx512 => unsafe { avx512::gaussian::<T, DIV>(src, dst, p) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Kernel::Avx2Fma => unsafe { gaussian_avx2::<T, DIV>(src, dst, p) },
        _ => gaussian_portable::<T, DIV>(src, dst, p),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gaussian_avx2<T: Elem, const DIV: bool>(src: &[T], dst: &mut [T], p: Params) {
    gaussian_portable::<T, DIV>(src, dst, p);
}

/// The three passes on scalar code, per block: z and trivial results with
/// branch-free compaction of the lanes that need erf, erf on the compacted
/// values, scatter back.
#[inline(always)]
fn gaussian_portable<T: Elem, const DIV: bool>(src: &[T], dst: &mut [T], p: Params) {
    let mut zb = [0.0f64; BLOCK];
    let mut ix = [0u16; BLOCK];
    for (sc, dc) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
        let mut n = 0usize;
        for (j, (&x, o)) in sc.iter().zip(dc.iter_mut()).enumerate() {
            let z = p.z::<DIV>(x.to_f64());
            *o = T::from_f64(trivial(z));
            // n ≤ j < BLOCK here, so the mask changes nothing.
            zb[n & (BLOCK - 1)] = z;
            ix[n & (BLOCK - 1)] = j as u16;
            n += usize::from(z > 0.0 && z < CUT);
        }
        let n = n.min(BLOCK);
        for v in &mut zb[..n] {
            *v = erf_poly(*v);
        }
        for (&v, &j) in zb[..n].iter().zip(&ix[..n]) {
            if let Some(o) = dc.get_mut(usize::from(j)) {
                *o = T::from_f64(v);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// AVX-512
// ---------------------------------------------------------------------------

#[cfg(target_arch = "x86_64")]
#[allow(clippy::incompatible_msrv)] // AVX-512 intrinsics: Rust ≥ 1.89
impl Elem for f64 {
    #[inline(always)]
    unsafe fn load8(p: *const Self) -> core::arch::x86_64::__m512d {
        core::arch::x86_64::_mm512_loadu_pd(p)
    }
    #[inline(always)]
    unsafe fn load8_masked(p: *const Self, m: u8) -> core::arch::x86_64::__m512d {
        core::arch::x86_64::_mm512_maskz_loadu_pd(m, p)
    }
    #[inline(always)]
    unsafe fn store8(p: *mut Self, v: core::arch::x86_64::__m512d) {
        core::arch::x86_64::_mm512_storeu_pd(p, v);
    }
    #[inline(always)]
    unsafe fn store8_masked(p: *mut Self, m: u8, v: core::arch::x86_64::__m512d) {
        core::arch::x86_64::_mm512_mask_storeu_pd(p, m, v);
    }
    #[inline(always)]
    unsafe fn stream8(p: *mut Self, v: core::arch::x86_64::__m512d) {
        core::arch::x86_64::_mm512_stream_pd(p, v);
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::incompatible_msrv)] // AVX-512 intrinsics: Rust ≥ 1.89
impl Elem for f32 {
    #[inline(always)]
    unsafe fn load8(p: *const Self) -> core::arch::x86_64::__m512d {
        use core::arch::x86_64::{_mm256_loadu_ps, _mm512_cvtps_pd};
        _mm512_cvtps_pd(_mm256_loadu_ps(p))
    }
    #[inline(always)]
    unsafe fn load8_masked(p: *const Self, m: u8) -> core::arch::x86_64::__m512d {
        use core::arch::x86_64::{_mm256_maskz_loadu_ps, _mm512_cvtps_pd};
        _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, p))
    }
    #[inline(always)]
    unsafe fn store8(p: *mut Self, v: core::arch::x86_64::__m512d) {
        use core::arch::x86_64::{_mm256_storeu_ps, _mm512_cvtpd_ps};
        _mm256_storeu_ps(p, _mm512_cvtpd_ps(v));
    }
    #[inline(always)]
    unsafe fn store8_masked(p: *mut Self, m: u8, v: core::arch::x86_64::__m512d) {
        use core::arch::x86_64::{_mm256_mask_storeu_ps, _mm512_cvtpd_ps};
        _mm256_mask_storeu_ps(p, m, _mm512_cvtpd_ps(v));
    }
    #[inline(always)]
    unsafe fn stream8(p: *mut Self, v: core::arch::x86_64::__m512d) {
        use core::arch::x86_64::{_mm256_stream_ps, _mm512_cvtpd_ps};
        _mm256_stream_ps(p, _mm512_cvtpd_ps(v));
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Elem for f64 {}
#[cfg(not(target_arch = "x86_64"))]
impl Elem for f32 {}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::incompatible_msrv)]
mod avx512;

#[cfg(test)]
mod tests;
