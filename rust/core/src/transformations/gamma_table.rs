//! Fast evaluation of a fitted gamma scaling (contract §10): for one shape
//! k, `h(x) = −ln(Q(k, x)/Q(k, k))` on `[k, x_max]` is tabulated once
//! as piecewise polynomials (Chebyshev-fitted at 12 nodes, evaluated as
//! monomials in the piece's local variable by Horner's rule), so that a
//! score costs a subtraction, a multiplication, a few bit operations and 12
//! multiply-adds and `p = −expm1(−h)` instead of a continued fraction
//! (40–80 steps near `x ≈ 1` for small k). Tabulating `h` rather than `p`
//! keeps `1 − p` relatively accurate (and monotone) in the upper tail.
//!
//! Pieces: for `x_max/k >= 2`, 16 per octave of `x/k`, found from the bits
//! of `x/k` (the exponent and the top 4 bits of the significand; the rest
//! is the local variable) — near small k the map varies on the scale of
//! `x` itself; otherwise (large k, the map an erf-like step of width ~√k)
//! 128 equal pieces of `[k, x_max]`. Beyond `x_max`, where
//! `Q/Q(k, k) < 2⁻⁵⁶`, p rounds to 1. The tests check the table against the
//! exact map for k from 1e-2 to 1e9.

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
        let mut coef = Vec::with_capacity(pieces);
        for j in 0..pieces {
            let values: Vec<f64> = nodes.iter().map(|&z| h(x_at(j, z))).collect();
            let mut c = [0.0; NODES];
            for (m, cm) in c.iter_mut().enumerate() {
                let mut s = 0.0;
                for (i, v) in values.iter().enumerate() {
                    s += v
                        * (core::f64::consts::PI * m as f64 * (i as f64 + 0.5) / NODES as f64)
                            .cos();
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
        let g = &self.gamma;
        if self.exact {
            return g.probability(s);
        }
        if s.is_nan() {
            return s;
        }
        let t = s + g.offset;
        if t <= g.mean {
            return 0.0;
        }
        if t >= self.t_max {
            return 1.0;
        }
        let (j, z) = if self.octaves {
            // x/k = t/m in [1, 2^octaves): exponent and top bits pick the
            // piece, the remaining significand bits are the local variable.
            let bits = (t * self.inv_mean).max(1.0).to_bits();
            let e = ((bits >> 52) - 1023) as usize;
            let shift = 52 - SUB_BITS;
            let sub = ((bits >> shift) & ((1 << SUB_BITS) - 1)) as usize;
            let frac = (bits & ((1u64 << shift) - 1)) as f64 / (1u64 << shift) as f64;
            ((e << SUB_BITS) + sub, 2.0 * frac - 1.0)
        } else {
            let pos = ((t - g.mean) * self.per_t).max(0.0);
            let j = (pos as usize).min(UNIFORM_PIECES - 1);
            (j, 2.0 * (pos - j as f64) - 1.0)
        };
        let Some(c) = self.coef.get(j) else {
            return 1.0;
        };
        let mut h = 0.0;
        for &cm in c.iter().rev() {
            h = h * z + cm;
        }
        (-(-h.max(0.0)).exp_m1()).clamp(0.0, 1.0)
    }
}

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
        for (drow, srow) in d_rows.chunks_exact_mut(k).zip(s_rows.chunks_exact(k)) {
            for ((d, &s), t) in drow.iter_mut().zip(srow).zip(tables) {
                *d = T::from_f64(t.probability(sign * s.to_f64()));
            }
        }
    });
    Ok(())
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
