//! Sums over sorted scores without re-reading them: the sorted values are
//! cut into blocks of [`BLOCK`], and each block keeps its moments about its
//! own center, `P_k = Σ (y − c)^k`. A sum over a window of values is then
//! a sum over its blocks — power sums by the binomial theorem, reciprocal
//! sums by the far-field (multipole) series — plus the few values of the
//! two blocks the window cuts through, read directly.
//!
//! Residuals are standardised (divided by a scale) before any power is
//! formed, and block moments are kept in units of the block's radius, so
//! nothing overflows or underflows at any magnitude of the scores.
//!
//! This is what makes an M-estimation step cost O(N/BLOCK) instead of
//! O(N): the weights of Huber's T and Tukey's biweight are polynomials in
//! the residual inside a window around μ and `t/|r|` (Huber) or 0 (Tukey)
//! outside it.

use crate::float::Float;

/// Values per block.
pub const BLOCK: usize = 256;
/// Moments kept per block: enough for the far-field series below.
const K: usize = 19;
/// A block is summed by its far-field series only when its radius is at
/// most this fraction of its center's distance to the pole; the series'
/// truncation error is then below `RHO^K ≈ 1.4e-17` relative.
const RHO: f64 = 0.125;

/// Moments of one block of sorted values, `P_k = Σ ((y − c)/ρ)^k` about its
/// center c in units of its radius ρ: every term is at most 1, so no power
/// overflows or underflows whatever the magnitude of the scores.
#[derive(Debug, Clone)]
struct Moments {
    center: f64,
    radius: f64,
    p: [f64; K],
}

/// Sorted (oriented, NaN-free) scores with per-block moments.
#[derive(Debug, Clone)]
pub struct Blocks<T> {
    y: Vec<T>,
    moments: Vec<Moments>,
}

/// Binomial coefficients C(j, l) for j < 6.
const BINOMIAL: [[f64; 6]; 6] = [
    [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
    [1.0, 2.0, 1.0, 0.0, 0.0, 0.0],
    [1.0, 3.0, 3.0, 1.0, 0.0, 0.0],
    [1.0, 4.0, 6.0, 4.0, 1.0, 0.0],
    [1.0, 5.0, 10.0, 10.0, 5.0, 1.0],
];

impl<T: Float> Blocks<T> {
    /// Sorts NaN-free scores and computes the block moments.
    pub fn sorted(mut y: Vec<T>) -> Self {
        y.sort_unstable_by(T::total_cmp);
        Self::new(y)
    }

    /// Takes sorted, NaN-free scores and computes the block moments.
    pub fn new(y: Vec<T>) -> Self {
        debug_assert!(y.windows(2).all(|w| w[0] <= w[1]));
        let moments = y
            .chunks(BLOCK)
            .map(|b| {
                let (lo, hi) = (b[0].to_f64(), b[b.len() - 1].to_f64());
                let center = lo + (hi - lo) / 2.0;
                let radius = (hi - center).max(center - lo);
                let unit = if radius > 0.0 { radius } else { 1.0 };
                let mut p = [0.0; K];
                for &v in b {
                    let d = (v.to_f64() - center) / unit;
                    let mut pow = 1.0;
                    for pk in &mut p {
                        *pk += pow;
                        pow *= d;
                    }
                }
                Moments {
                    center,
                    radius: unit,
                    p,
                }
            })
            .collect();
        Blocks { y, moments }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// The sorted values.
    pub fn values(&self) -> &[T] {
        &self.y
    }

    /// The first index whose value satisfies a predicate that is false …
    /// false, true … true along the sorted values.
    pub fn first(&self, pred: impl Fn(f64) -> bool) -> usize {
        self.y.partition_point(|v| !pred(v.to_f64()))
    }

    /// `S_j = Σ_{a <= i < b} ((y_i − m)/s)^j` for `j < J <= 6`: power sums
    /// of standardised residuals.
    pub fn power_sums<const J: usize>(&self, m: f64, s: f64, a: usize, b: usize) -> [f64; J] {
        let mut out = [0.0; J];
        self.each_piece(a, b, |piece| match piece {
            Piece::Values(vals) => {
                for &v in vals {
                    let u = (v.to_f64() - m) / s;
                    let mut pow = 1.0;
                    for sj in &mut out {
                        *sj += pow;
                        pow *= u;
                    }
                }
            }
            Piece::Block(_, mo) => {
                // Σ ((y − m)/s)^j = Σ_l C(j, l) α^l P_l h^(j−l), with
                // α = ρ/s and h = (c − m)/s.
                let (alpha, h) = (mo.radius / s, (mo.center - m) / s);
                let (mut ap, mut hp) = ([1.0; 6], [1.0; 6]);
                for i in 1..J {
                    ap[i] = ap[i - 1] * alpha;
                    hp[i] = hp[i - 1] * h;
                }
                for (j, sj) in out.iter_mut().enumerate() {
                    let mut term = 0.0;
                    for l in 0..=j {
                        term += BINOMIAL[j][l] * ap[l] * mo.p[l] * hp[j - l];
                    }
                    *sj += term;
                }
            }
        });
        out
    }

    /// `Σ s/|y_i − m|` over `i < a` and `i >= b`, for a window `[a, b)`
    /// that contains every value equal to `m` (so no term is infinite):
    /// reciprocal standardised residuals.
    pub fn reciprocal_sum_outside(&self, m: f64, s: f64, a: usize, b: usize) -> f64 {
        let mut total = 0.0;
        for (lo, hi) in [(0, a), (b, self.len())] {
            self.each_piece(lo, hi, |piece| match piece {
                Piece::Values(vals) => {
                    for &v in vals {
                        total += 1.0 / ((v.to_f64() - m) / s).abs();
                    }
                }
                Piece::Block(index, mo) => {
                    let h = mo.center - m;
                    if mo.radius <= RHO * h.abs() {
                        // s/(y − m) = (s/(c − m)) Σ_k P_k (−ρ/(c − m))^k.
                        let z = -mo.radius / h;
                        let mut acc = 0.0;
                        for &pk in mo.p.iter().rev() {
                            acc = acc * z + pk;
                        }
                        total += (acc * (s / h)).abs();
                    } else {
                        let start = index * BLOCK;
                        let end = (start + BLOCK).min(self.len());
                        for &v in &self.y[start..end] {
                            total += 1.0 / ((v.to_f64() - m) / s).abs();
                        }
                    }
                }
            });
        }
        total
    }

    /// Calls `f` on the pieces of `[a, b)`: whole blocks by their moments,
    /// the parts of the blocks it cuts through by their values.
    fn each_piece(&self, a: usize, b: usize, mut f: impl FnMut(Piece<'_, T>)) {
        if a >= b {
            return;
        }
        let (first_full, last_full) = (a.div_ceil(BLOCK), b / BLOCK);
        if first_full >= last_full {
            f(Piece::Values(&self.y[a..b]));
            return;
        }
        f(Piece::Values(&self.y[a..first_full * BLOCK]));
        for (i, mo) in self.moments[first_full..last_full].iter().enumerate() {
            f(Piece::Block(first_full + i, mo));
        }
        f(Piece::Values(&self.y[last_full * BLOCK..b]));
    }
}

enum Piece<'a, T> {
    /// Values read directly.
    Values(&'a [T]),
    /// A whole block: its index and moments.
    Block(usize, &'a Moments),
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn blocks(mut y: Vec<f64>) -> Blocks<f64> {
        y.sort_by(f64::total_cmp);
        Blocks::new(y)
    }

    proptest! {
        #[test]
        fn power_sums_equal_direct_sums(
            y in proptest::collection::vec(-50.0f64..50.0, 1..3000),
            m in -20.0f64..20.0,
            cut in (0.0f64..1.0, 0.0f64..1.0),
        ) {
            let b = blocks(y);
            let n = b.len();
            let (mut a, mut e) = ((cut.0 * n as f64) as usize, (cut.1 * n as f64) as usize);
            if a > e { core::mem::swap(&mut a, &mut e); }
            let s = 7.5;
            let got = b.power_sums::<6>(m, s, a, e);
            for j in 0..6 {
                let want: f64 = b.values()[a..e].iter().map(|v| ((v - m) / s).powi(j as i32)).sum();
                let scale: f64 = b.values()[a..e].iter().map(|v| ((v - m) / s).abs().powi(j as i32)).sum();
                prop_assert!((got[j] - want).abs() <= 1e-12 * scale.max(1.0), "{j}: {} vs {want}", got[j]);
            }
        }

        #[test]
        fn reciprocal_sums_equal_direct_sums(
            y in proptest::collection::vec(prop_oneof![-5.0f64..5.0, 20.0f64..500.0, -400.0f64..-30.0], 1..5000),
            m in -2.0f64..2.0,
            halfwidth in 0.1f64..3.0,
        ) {
            let b = blocks(y);
            let a = b.first(|v| v >= m - halfwidth);
            let e = b.first(|v| v > m + halfwidth);
            let s = 0.7;
            let got = b.reciprocal_sum_outside(m, s, a, e);
            let vals = b.values();
            let want: f64 = vals[..a].iter().chain(&vals[e..]).map(|v| 1.0 / ((v - m) / s).abs()).sum();
            prop_assert!((got - want).abs() <= 1e-13 * want.max(1e-300), "{got} vs {want}");
        }
    }
}
