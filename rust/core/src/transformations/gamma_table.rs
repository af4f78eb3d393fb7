//! Fast evaluation of a fitted gamma scaling (contract §10): for one shape
//! k, `h(x) = −ln(Q(k, x)/Q(k, k))` on `[k, x_max]` is tabulated once
//! as piecewise polynomials (Chebyshev-fitted at 12 nodes, evaluated as
//! monomials in the piece's local variable by Horner's rule), so that a
//! score costs a subtraction, a multiplication, a few bit operations and 12
//! multiply-adds and `p = −expm1(−h)` instead of a continued fraction
//! (40–80 steps near `x ≈ 1` for small k). Tabulating `h` rather than `p`
//! keeps `1 − p` relatively accurate (and monotone) in the upper tail.
//!
//! A transform maps its scores in groups of 256, stage by stage (pieces and
//! edges, the list of scores inside the table, Horner, `expm1`), compiled
//! for AVX-512, AVX2 + FMA and the baseline: the stages vectorise, the
//! Horner chains of consecutive scores overlap, and `expm1` is
//! `numeric::exp`'s vectorisable one instead of a libm call per score.
//! Only the scores inside the table pay for the polynomial and `expm1`:
//! those at or below the mean (most of a right-skewed sample: Φ(σ/2) of
//! lognormal scores) are 0 by the edges alone. A single score
//! takes the same path (the same bits).
//!
//! Pieces: for `x_max/k >= 2`, 16 per octave of `x/k`, found from the bits
//! of `x/k` (the exponent and the top 4 bits of the significand; the rest
//! is the local variable) — near small k the map varies on the scale of
//! `x` itself; otherwise (large k, the map an erf-like step of width ~√k)
//! 128 equal pieces of `[k, x_max]`. Beyond `x_max`, where
//! `Q/Q(k, k) < 2⁻⁵⁶`, p rounds to 1. The tests check the table against the
//! exact map for k from 1e-2 to 1e9.

use crate::numeric::exp::neg_expm1;
use crate::numeric::float::Float;
use crate::numeric::gamma::Order;
use crate::numeric::par::{zip_chunks_of, CHUNK};
use crate::transformations::gamma::Gamma;
use crate::transformations::scaling::Scaling;
use crate::Error;

const DEGREE: usize = 11;
const NODES: usize = DEGREE + 1;
/// log2 of the pieces per octave.
const SUB_BITS: u32 = 4;
/// Pieces of the uniform layout.
const UNIFORM_PIECES: usize = 128;
/// `h` at which `e⁻ʰ < 2⁻⁵⁶`: p is 1 in f64 beyond.
const H_MAX: f64 = 39.0;
/// Octaves of `x/k` a table may span; beyond (a shape so small, down to
/// subnormal, that `x_max/k` overflows or the table would hold thousands
/// of pieces) the exact map is used instead.
const MAX_OCTAVES: f64 = 64.0;

/// A fitted gamma scaling with its table.
#[derive(Debug, Clone)]
pub struct GammaTable {
    gamma: Gamma,
    /// Degenerate (θ = 0) or no table: use `gamma` itself.
    exact: bool,
    /// Octave layout (else uniform).
    octaves: bool,
    /// `1/m`: `x/k = t/m`.
    inv_mean: f64,
    /// Uniform layout: pieces per unit of `t − m`.
    per_t: f64,
    /// Beyond this `t`, p = 1.
    t_max: f64,
    coef: Vec<[f64; NODES]>,
}

impl GammaTable {
    /// Tabulates `gamma` (checked first).
    pub fn new(gamma: Gamma) -> Result<Self, Error> {
        gamma.check()?;
        let mut table = GammaTable {
            gamma,
            exact: true,
            octaves: false,
            inv_mean: 0.0,
            per_t: 0.0,
            t_max: f64::INFINITY,
            coef: Vec::new(),
        };
        if gamma.scale == 0.0 {
            return Ok(table);
        }
        let k = gamma.shape();
        let order = Order::new(k);
        let q_mean = order.q(k);
        let h = |x: f64| (q_mean / order.q(x)).ln();
        // x_max: h(x_max) >= H_MAX, by growing steps (h grows at least
        // linearly beyond the mode).
        let mut x_max = k + 1.0;
        let mut step = 1.0 + k.sqrt();
        let mut guard = 0;
        // NaN counts as not yet reached.
        while h(x_max) < H_MAX || h(x_max).is_nan() {
            x_max += step;
            step *= 1.5;
            guard += 1;
            if guard > 200 || !x_max.is_finite() {
                return Ok(table); // cannot bound it: keep the exact map
            }
        }
        let nodes: Vec<f64> = (0..NODES)
            .map(|i| (core::f64::consts::PI * (i as f64 + 0.5) / NODES as f64).cos())
            .collect();
        // Piece j's x at local z ∈ [−1, 1].
        let octaves = x_max / k >= 2.0;
        let n_oct = (x_max / k).log2().ceil();
        if octaves && (n_oct.is_nan() || n_oct > MAX_OCTAVES) {
            return Ok(table);
        }
        let pieces = if octaves {
            let n_oct = n_oct as usize;
            n_oct << SUB_BITS
        } else {
            UNIFORM_PIECES
        };
        let sub = f64::from(1u32 << SUB_BITS);
        let width = (x_max - k) / UNIFORM_PIECES as f64;
        let x_at = |j: usize, z: f64| {
            let f = 0.5 * (z + 1.0);
            if octaves {
                let e = (j >> SUB_BITS) as i32;
                let s = (j & ((1 << SUB_BITS) - 1)) as f64;
                k * 2f64.powi(e) * (1.0 + (s + f) / sub)
            } else {
                k + (j as f64 + f) * width
            }
        };
        // T_m at the nodes, the same for every piece (computed once: a
        // cosine per term and piece was a third of the table's cost).
        let mut cosines = [[0.0; NODES]; NODES];
        for (m, row) in cosines.iter_mut().enumerate() {
            for (i, c) in row.iter_mut().enumerate() {
                *c = (core::f64::consts::PI * m as f64 * (i as f64 + 0.5) / NODES as f64).cos();
            }
        }
        let mut coef = Vec::with_capacity(pieces);
        for j in 0..pieces {
            let values: Vec<f64> = nodes.iter().map(|&z| h(x_at(j, z))).collect();
            let mut c = [0.0; NODES];
            for (cm, row) in c.iter_mut().zip(&cosines) {
                let mut s = 0.0;
                for (v, t) in values.iter().zip(row) {
                    s += v * t;
                }
                *cm = 2.0 * s / NODES as f64;
            }
            c[0] *= 0.5;
            coef.push(monomial(&c));
        }
        if coef.iter().flatten().any(|v| !v.is_finite()) {
            return Ok(table);
        }
        // The table reads x/k as t·(1/m), or (uniform) the piece as
        // (t − m)·1/(width·θ): a subnormal m or width·θ (scores a few
        // subnormals apart) would make the reciprocal overflow, or carry
        // fewer bits than the exact map's t/θ. Keep the exact map there.
        let unit = if octaves {
            gamma.mean
        } else {
            width * gamma.scale
        };
        if unit.is_nan() || unit < f64::MIN_POSITIVE {
            return Ok(table);
        }
        table.exact = false;
        table.octaves = octaves;
        table.inv_mean = 1.0 / gamma.mean;
        table.per_t = 1.0 / (width * gamma.scale);
        table.t_max = if octaves {
            gamma.mean * 2f64.powi((pieces >> SUB_BITS) as i32)
        } else {
            x_max * gamma.scale
        };
        table.coef = coef;
        Ok(table)
    }

    /// The probability of one (oriented) score.
    #[inline]
    pub fn probability(&self, s: f64) -> f64 {
        if self.exact {
            return self.gamma.probability(s);
        }
        let mut p = [s];
        self.tabled(&mut p);
        p[0]
    }

    /// The probabilities of a group of oriented scores, in place, in
    /// stages (so that LLVM vectorises them): the piece, local variable
    /// and edge value of every score, the positions of the scores inside
    /// the table, then for those alone the Horner chains (independent
    /// across scores; a single chain waits on 11 dependent multiply-adds)
    /// and `1 − e^(−h)` by [`neg_expm1`] (the same bits for a group and
    /// for a single score). Needs a table (`!self.exact`).
    #[inline(always)]
    fn tabled(&self, v: &mut [f64]) {
        let g = &self.gamma;
        let n = v.len().min(GROUP);
        let v = &mut v[..n];
        let mut z = [0.0f64; GROUP];
        let mut row = [0u32; GROUP];
        // The lanes inside the table, packed to the front: the others'
        // probability is decided by the edges alone (NaN, at or below the
        // mean — most scores of a right-skewed sample — or past the
        // table's end), so only these pay for the polynomial and `expm1`.
        let mut inside = [false; GROUP];
        let pieces = self.coef.len();
        if self.octaves {
            for (i, s) in v.iter_mut().enumerate() {
                // x/k = t/m in [1, 2^octaves): the exponent and the top
                // SUB_BITS significand bits pick the piece, the remaining
                // bits (as the significand of a number in [1, 2)) are the
                // local variable. Where `t·(1/m)` rounds up to the table's
                // end, p = 1, as beyond it.
                let t = *s + g.offset;
                let bits = (t * self.inv_mean).max(1.0).to_bits();
                let j = (bits >> (52 - SUB_BITS)) - (1023 << SUB_BITS);
                let local = f64::from_bits(((bits << SUB_BITS) & SIGNIFICAND) | ONE);
                inside[i] = t > g.mean && t < self.t_max && j < pieces as u64;
                row[i] = j.min(pieces as u64 - 1) as u32;
                z[i] = 2.0 * local - 3.0;
                *s = edge(*s, t, g.mean);
            }
        } else {
            for (i, s) in v.iter_mut().enumerate() {
                let t = *s + g.offset;
                let pos = ((t - g.mean) * self.per_t).max(0.0);
                let j = (pos as usize).min(UNIFORM_PIECES - 1);
                inside[i] = t > g.mean && t < self.t_max;
                row[i] = j as u32;
                z[i] = 2.0 * (pos - j as f64) - 1.0;
                *s = edge(*s, t, g.mean);
            }
        }
        // The inside lanes' positions, eight lanes at a time without a
        // branch: their bit mask picks the list of its set bits' positions
        // from a table, stored whole, and the count advances by its size.
        let mut live = [0u8; GROUP + 8];
        let mut count = 0;
        for (b, eight) in inside.chunks_exact(8).enumerate().take(n.div_ceil(8)) {
            let bytes = u64::from_le_bytes(core::array::from_fn(|i| u8::from(eight[i])));
            let mask = pack_bools(bytes) as usize;
            let lanes = SET_BITS[mask] + 0x0808_0808_0808_0808 * b as u64;
            live[count..count + 8].copy_from_slice(&lanes.to_le_bytes());
            count += mask.count_ones() as usize;
        }
        // Horner per score: the chains of consecutive scores are
        // independent and overlap in the out-of-order core (measured faster
        // than a coefficient at a time across the group, whose reads
        // gather).
        let mut h = [0.0f64; GROUP];
        for (hi, &i) in h[..count].iter_mut().zip(&live) {
            let (r, zi) = (row[usize::from(i)], z[usize::from(i)]);
            let c = &self.coef[r as usize];
            let mut acc = c[DEGREE];
            for &cm in c[..DEGREE].iter().rev() {
                acc = acc.mul_add(zi, cm);
            }
            *hi = acc;
        }
        for hi in &mut h[..count] {
            *hi = neg_expm1(hi.max(0.0)).clamp(0.0, 1.0);
        }
        for (&p, &i) in h[..count].iter().zip(&live) {
            v[usize::from(i)] = p;
        }
    }
}

/// The probability of a score outside the table's inside: NaN stays NaN,
/// `t <= mean` maps to 0, anything else (past the table's end) to 1 — the
/// lanes inside are overwritten.
#[inline(always)]
fn edge(s: f64, t: f64, mean: f64) -> f64 {
    if s.is_nan() {
        s
    } else if t <= mean {
        0.0
    } else {
        1.0
    }
}

/// The eight bytes of `bytes`, each 0 or 1, as the low eight bits (byte i
/// to bit i): one multiplication gathers each byte's bit into the top byte.
#[inline(always)]
fn pack_bools(bytes: u64) -> u64 {
    bytes.wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// For each 8-bit mask, the positions of its set bits, ascending, one a
/// byte (the low bytes first).
const SET_BITS: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut lanes, mut at, mut bit) = (0u64, 0, 0);
        while bit < 8 {
            if mask & (1 << bit) != 0 {
                lanes |= (bit as u64) << (8 * at);
                at += 1;
            }
            bit += 1;
        }
        table[mask] = lanes;
        mask += 1;
    }
    table
};

/// Scores per group of [`GammaTable::tabled`].
const GROUP: usize = 256;
/// The significand field of an f64, and the bits of 1.0.
const SIGNIFICAND: u64 = (1 << 52) - 1;
const ONE: u64 = 0x3FF0_0000_0000_0000;

/// The monomial coefficients in `z` of `Σ c_m T_m(z)` (degree 11 on
/// [−1, 1]: the conversion loses at most a few bits).
fn monomial(c: &[f64; NODES]) -> [f64; NODES] {
    let mut out = [0.0; NODES];
    let (mut prev, mut cur) = ([0.0; NODES], [0.0; NODES]);
    prev[0] = 1.0; // T_0
    cur[1] = 1.0; // T_1
    for (i, v) in prev.iter().enumerate() {
        out[i] += c[0] * v;
    }
    for (i, v) in cur.iter().enumerate() {
        out[i] += c[1] * v;
    }
    for cm in &c[2..] {
        let mut next = [0.0; NODES];
        for i in 0..NODES {
            next[i] = -prev[i] + if i > 0 { 2.0 * cur[i - 1] } else { 0.0 };
        }
        for (o, v) in out.iter_mut().zip(&next) {
            *o += cm * v;
        }
        prev = cur;
        cur = next;
    }
    out
}

/// `dst[i, j] = tables[j].probability(±src[i, j])` for row-major `src`.
pub fn transform_tabled<T: Float>(
    src: &[T],
    dst: &mut [T],
    tables: &[GammaTable],
    negate: bool,
) -> Result<(), Error> {
    let k = tables.len();
    if k == 0 || src.len() != dst.len() || !src.len().is_multiple_of(k) {
        return Err(Error::ShapeMismatch(format!(
            "scores ({} values), output ({} values) and fitted columns ({k}) do not fit together",
            src.len(),
            dst.len()
        )));
    }
    let sign = if negate { -1.0 } else { 1.0 };
    let rows = (CHUNK / k).max(1) * k;
    zip_chunks_of(src, dst, rows, |s_rows, d_rows| {
        for (j, t) in tables.iter().enumerate() {
            if t.exact {
                for (d, &s) in d_rows
                    .iter_mut()
                    .skip(j)
                    .step_by(k)
                    .zip(s_rows.iter().skip(j).step_by(k))
                {
                    *d = T::from_f64(t.gamma.probability(sign * s.to_f64()));
                }
            } else {
                tabled_column(s_rows, d_rows, t, sign, j, k);
            }
        }
    });
    Ok(())
}

crate::numeric::simd::multiversion_wide! {
    /// `dst[i·k + j] = table.probability(sign·src[i·k + j])` for every row
    /// i, [`GROUP`] scores at a time (`table` has a table).
    fn tabled_column<T: Float>(
        src: &[T],
        dst: &mut [T],
        table: &GammaTable,
        sign: f64,
        j: usize,
        k: usize,
    ) -> () {
        let n = src.len() / k;
        let mut v = [0.0f64; GROUP];
        let mut i = 0;
        while i < n {
            let m = GROUP.min(n - i);
            if k == 1 {
                for (vl, s) in v.iter_mut().zip(&src[i..i + m]) {
                    *vl = sign * s.to_f64();
                }
            } else {
                for (l, vl) in v.iter_mut().enumerate().take(m) {
                    *vl = sign * src[(i + l) * k + j].to_f64();
                }
            }
            table.tabled(&mut v[..m]);
            if k == 1 {
                for (d, &vl) in dst[i..i + m].iter_mut().zip(&v) {
                    *d = T::from_f64(vl);
                }
            } else {
                for (l, &vl) in v.iter().enumerate().take(m) {
                    dst[(i + l) * k + j] = T::from_f64(vl);
                }
            }
            i += m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn worst(k: f64, theta: f64) -> f64 {
        let g = Gamma::new(0.0, k * theta, theta);
        let t = GammaTable::new(g).unwrap();
        assert!(!t.exact, "k = {k}");
        // The map's own condition: dp/d(ln x) ~ √k, times the rounding of x.
        let mut worst: f64 = 0.0;
        let n = 4000;
        for i in 0..=n {
            // From the mean to past x_max, denser near the mean.
            let f = (f64::from(i) / f64::from(n)).powi(2);
            let x = k + f * (t.t_max / theta * 1.2 - k);
            let s = x * theta;
            worst = worst.max((t.probability(s) - g.probability(s)).abs());
        }
        worst
    }

    #[test]
    fn table_matches_the_exact_map() {
        for &k in &[
            0.01, 0.05, 0.21, 0.5, 1.0, 3.75, 9.9, 10.1, 49.0, 51.0, 300.0, 1e4, 1e6, 1e9,
        ] {
            let w = worst(k, 0.7);
            assert!(w < 1e-14 * k.sqrt().max(1.0), "k = {k}: {w}");
        }
    }

    #[test]
    fn packs_bytes_and_lists_set_bits() {
        for mask in 0..256u64 {
            let bytes = (0..8).fold(0u64, |b, i| b | (((mask >> i) & 1) << (8 * i)));
            assert_eq!(pack_bools(bytes), mask);
            let lanes = SET_BITS[mask as usize].to_le_bytes();
            let want: Vec<u8> = (0..8u8).filter(|&i| mask & (1 << i) != 0).collect();
            assert_eq!(&lanes[..want.len()], &want[..], "{mask:#x}");
        }
    }

    #[test]
    fn edges() {
        let t = GammaTable::new(Gamma::new(1.0, 2.0, 0.5)).unwrap();
        assert_eq!(t.probability(1.0), 0.0);
        assert_eq!(t.probability(f64::INFINITY), 1.0);
        assert_eq!(t.probability(f64::NEG_INFINITY), 0.0);
        assert!(t.probability(f64::NAN).is_nan());
        let flat = GammaTable::new(Gamma::new(0.0, 2.0, 0.0)).unwrap();
        assert_eq!([flat.probability(2.0), flat.probability(2.5)], [0.0, 1.0]);
        assert!(GammaTable::new(Gamma::new(0.0, -1.0, 1.0)).is_err());
    }

    #[test]
    fn a_tiny_or_subnormal_shape_keeps_the_exact_map() {
        // x_max/k overflows or spans more octaves than a table holds.
        for k in [1e-30, 1e-155, 1e-300, 5e-324] {
            let g = Gamma::new(0.0, k, 1.0);
            let t = GammaTable::new(g).unwrap();
            assert!(t.exact, "k = {k}");
            for s in [0.0, k, 2.0 * k, 1e-3, 1.0, 40.0] {
                assert_eq!(t.probability(s).to_bits(), g.probability(s).to_bits());
            }
        }
    }

    #[test]
    fn a_subnormal_mean_keeps_the_exact_map() {
        // The quartile fit of [2.22507386e-313, 0]: k ≈ 2.1 with m and θ
        // subnormal; 1/m overflowed and every score above m mapped to 1.
        let g = Gamma::new(0.0, 1.313_099_235_5e-313, 6.221_870_77e-314);
        let t = GammaTable::new(g).unwrap();
        assert!(t.exact);
        let p = t.probability(2.225_073_86e-313);
        assert_eq!(p.to_bits(), g.probability(2.225_073_86e-313).to_bits());
        assert!(p > 0.6 && p < 0.7, "{p}");
        // Uniform layout (large k) with width·θ subnormal.
        let g = Gamma::new(0.0, 1e6 * 1e-316, 1e-316);
        let t = GammaTable::new(g).unwrap();
        assert!(t.exact);
        // And the smallest normal mean still gets its table.
        let g = Gamma::new(0.0, f64::MIN_POSITIVE, f64::MIN_POSITIVE / 2.0);
        assert!(!GammaTable::new(g).unwrap().exact);
    }

    proptest! {
        /// A group gives each score the bits of its single-score map, and
        /// both stay within the table's tolerance of the exact map (every
        /// edge: NaN, ±inf, at and below the mean, beyond the table, f32).
        #[test]
        fn groups_equal_single_scores_and_the_exact_map(
            lk in -2.0f64..9.0,
            theta in 0.01f64..100.0,
            offset in 0.0f64..2.0,
            fs in prop::collection::vec(-0.5f64..60.0, 1..700),
            negate: bool,
        ) {
            let k = 10f64.powf(lk);
            let g = Gamma::new(offset, k * theta, theta);
            let tables = [GammaTable::new(g).unwrap()];
            let sign = if negate { -1.0 } else { 1.0 };
            let mut src: Vec<f64> = fs
                .iter()
                .map(|&f| sign * ((k + f * (1.0 + k.sqrt())) * theta - offset))
                .collect();
            src.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, sign * (k * theta - offset)]);
            let mut dst = vec![0.0; src.len()];
            transform_tabled(&src, &mut dst, &tables, negate).unwrap();
            let tol = 1e-14 * k.sqrt().max(1.0);
            for (&s, &p) in src.iter().zip(&dst) {
                let single = tables[0].probability(sign * s);
                prop_assert_eq!(p.to_bits(), single.to_bits());
                let exact = g.probability(sign * s);
                let same = p == exact || (p.is_nan() && exact.is_nan());
                prop_assert!(same || (p - exact).abs() < tol, "{} {} {}", s, p, exact);
            }
            let src32: Vec<f32> = src.iter().map(|&v| v as f32).collect();
            let mut dst32 = vec![0.0f32; src.len()];
            transform_tabled(&src32, &mut dst32, &tables, negate).unwrap();
            for (&s, &p) in src32.iter().zip(&dst32) {
                let single = tables[0].probability(sign * f64::from(s)) as f32;
                prop_assert_eq!(p.to_bits(), single.to_bits());
            }
        }

        #[test]
        fn table_is_close_and_monotone(lk in -2.0f64..7.0, theta in 0.01f64..100.0) {
            let k = 10f64.powf(lk);
            let g = Gamma::new(0.0, k * theta, theta);
            let t = GammaTable::new(g).unwrap();
            let mut last = 0.0;
            for i in 0..400 {
                let x = k * (1.0 + f64::from(i) * 0.01 * (1.0 + 3.0 / k.sqrt()));
                let p = t.probability(x * theta);
                let tol = 1e-14 * k.sqrt().max(1.0);
                prop_assert!((p - g.probability(x * theta)).abs() < tol);
                prop_assert!(p >= last - 1e-15, "{} {} {}", p, last, last - p);
                last = p;
            }
        }
    }
}
