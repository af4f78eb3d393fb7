//! The iteration's sums read from every score at every step: the
//! definition the faster representations (sorted, bucketed) are tested
//! against, and the sorted one's fallback.
//!
//! A step's terms are computed a chunk at a time in one loop that
//! vectorises, then added in eight lanes folded pairwise — NumPy's
//! `pairwise_sum` within a block, which is what the reference's `np.sum`
//! does — and the chunks' sums are joined by TwoSum. The error of a sum is
//! at most ~11ε·Σ|term|: for the location step `Δm = Σ w(s − m)/Σ w` that is
//! ≤ 11ε·tσ, eight orders below the tolerance `tol·σ`, without the one
//! dependent addition per score of a sequential compensated sum.

use super::{MParams, Norm, Sums};
use crate::numeric::simd::multiversion;
use crate::numeric::sum::TwoSum;

/// Every (scaled, oriented, NaN-free) score read at every step.
pub(super) struct Direct<'a>(pub(super) &'a [f64]);

/// Lanes of a chunk's sum: score `i` of a chunk is added in lane `i mod 8`
/// (two AVX2 vectors).
const LANES: usize = 8;

/// Scores whose terms are computed in one loop before they are added (the
/// loop vectorises; its terms stay in L1). A multiple of [`LANES`].
const CHUNK: usize = 64;

/// The sum of `terms[..len]` (the rest is overwritten with zeros): eight
/// lanes, folded as NumPy folds its eight accumulators.
#[inline(always)]
fn chunk_sum(terms: &mut [f64; CHUNK], len: usize) -> f64 {
    terms[len..].fill(0.0);
    let mut lanes = [0.0; LANES];
    for block in terms.chunks_exact(LANES) {
        for (lane, &v) in lanes.iter_mut().zip(block) {
            *lane += v;
        }
    }
    ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
        + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
}

impl Sums for Direct<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn location(&self, p: &MParams, m: f64, sigma: f64) -> (f64, f64) {
        location_sums(self.0, p.norm == Norm::Huber, p.tuning, m, sigma)
    }

    fn scale(&self, c: f64, mu: f64, sigma: f64, nmu: f64) -> (f64, usize) {
        scale_sums(self.0, c, mu, sigma, nmu)
    }
}

/// The location step's weight `w` and term `w·(s − m)` of one score, by
/// `Norm::weight`'s formulas with the divisions by σ and by Tukey's `c`
/// taken as products with reciprocals (each within an ulp; two divisions
/// per score bounded the step). Selects between values computed on both
/// sides, so that a chunk of them vectorises.
#[inline(always)]
fn location_terms<const HUBER: bool, const DIVIDE: bool>(
    v: f64,
    t: f64,
    m: f64,
    sigma: f64,
) -> (f64, f64) {
    let d = v - m;
    let r = per_sigma::<DIVIDE>(d, sigma);
    let inside = r.abs() <= t;
    let w = if HUBER {
        let far = t / r.abs();
        if inside {
            1.0
        } else {
            far
        }
    } else {
        let u = r * (1.0 / t);
        let v = 1.0 - u * u;
        if inside {
            v * v
        } else {
            0.0
        }
    };
    (w, super::weighted_deviation(HUBER, w, d, r, t, sigma))
}

/// The scale step's term: `((s − nmu)/σ)²` inside the window, else 0
/// (the division by σ a product with its reciprocal, as above).
#[inline(always)]
fn scale_term<const DIVIDE: bool>(v: f64, c: f64, mu: f64, sigma: f64, nmu: f64) -> (f64, bool) {
    let r = per_sigma::<DIVIDE>(v - nmu, sigma);
    let inside = per_sigma::<DIVIDE>(v - mu, sigma).abs() <= c;
    (if inside { r * r } else { 0.0 }, inside)
}

/// `d/σ`, as `d·(1/σ)` unless `1/σ` overflows (σ subnormal: the scores'
/// largest magnitude kept their scaling from bringing σ to [1, 2)).
#[inline(always)]
fn per_sigma<const DIVIDE: bool>(d: f64, sigma: f64) -> f64 {
    if DIVIDE {
        d / sigma
    } else {
        d * (1.0 / sigma)
    }
}

/// Whether `1/σ` overflows, so that [`per_sigma`] must divide.
pub(super) fn must_divide(sigma: f64) -> bool {
    !(1.0 / sigma).is_finite()
}

#[inline(always)]
fn location_sums_by<const HUBER: bool, const DIVIDE: bool>(
    x: &[f64],
    t: f64,
    m: f64,
    sigma: f64,
) -> (f64, f64) {
    let (mut sw, mut swd) = (TwoSum::default(), TwoSum::default());
    let (mut w, mut wd) = ([0.0; CHUNK], [0.0; CHUNK]);
    for chunk in x.chunks(CHUNK) {
        for ((&v, w), wd) in chunk.iter().zip(&mut w).zip(&mut wd) {
            (*w, *wd) = location_terms::<HUBER, DIVIDE>(v, t, m, sigma);
        }
        sw.add(chunk_sum(&mut w, chunk.len()));
        swd.add(chunk_sum(&mut wd, chunk.len()));
    }
    (sw.value(), swd.value())
}

multiversion! {
    /// `(Σ w, Σ w·(s − m))` at (m, σ).
    fn location_sums(x: &[f64], huber: bool, t: f64, m: f64, sigma: f64) -> (f64, f64) {
        match (huber, must_divide(sigma)) {
            (true, false) => location_sums_by::<true, false>(x, t, m, sigma),
            (false, false) => location_sums_by::<false, false>(x, t, m, sigma),
            (true, true) => location_sums_by::<true, true>(x, t, m, sigma),
            (false, true) => location_sums_by::<false, true>(x, t, m, sigma),
        }
    }
}

multiversion! {
    /// `(Σ_{|s − mu|/σ <= c} ((s − nmu)/σ)², #outside)`.
    fn scale_sums(x: &[f64], c: f64, mu: f64, sigma: f64, nmu: f64) -> (f64, usize) {
        if must_divide(sigma) {
            scale_sums_by::<true>(x, c, mu, sigma, nmu)
        } else {
            scale_sums_by::<false>(x, c, mu, sigma, nmu)
        }
    }
}

#[inline(always)]
fn scale_sums_by<const DIVIDE: bool>(
    x: &[f64],
    c: f64,
    mu: f64,
    sigma: f64,
    nmu: f64,
) -> (f64, usize) {
    let mut ss = TwoSum::default();
    let mut inside = 0usize;
    let mut r2 = [0.0; CHUNK];
    for chunk in x.chunks(CHUNK) {
        for (&v, r2) in chunk.iter().zip(&mut r2) {
            let (term, is_inside) = scale_term::<DIVIDE>(v, c, mu, sigma, nmu);
            *r2 = term;
            inside += usize::from(is_inside);
        }
        ss.add(chunk_sum(&mut r2, chunk.len()));
    }
    (ss.value(), x.len() - inside)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::sum::exact_sum;
    use proptest::prelude::*;

    /// `|got − Σ terms| <= 11ε·Σ|terms| + ε·|Σ terms|`, the module's bound,
    /// against the exactly rounded sum.
    fn within_bound(got: f64, terms: &[f64]) -> bool {
        let exact = exact_sum(terms).value();
        let magnitude: f64 = terms.iter().map(|v| v.abs()).sum();
        (got - exact).abs() <= 11.0 * f64::EPSILON * magnitude + f64::EPSILON * exact.abs()
    }

    fn scores() -> impl Strategy<Value = Vec<f64>> {
        // Ties, a bulk near the centre and far tails of both signs.
        let score = prop_oneof![
            Just(1.25),
            -3.0..3.0f64,
            (-1e6..1e6f64).prop_map(|v| v * 1e3),
        ];
        prop::collection::vec(score, 0..300)
    }

    proptest! {
        #[test]
        fn location_sums_are_within_the_bound(
            x in scores(), m in -2.0..2.0f64, sigma in 1.0..2.0f64, huber: bool,
        ) {
            let t = if huber { 1.345 } else { 4.685 };
            let norm = if huber { Norm::Huber } else { Norm::Tukey };
            let w: Vec<f64> = x.iter().map(|&v| norm.weight((v - m) / sigma, t)).collect();
            let wd: Vec<f64> = x.iter().zip(&w).map(|(&v, &w)| w * (v - m)).collect();
            let (sw, swd) = location_sums(&x, huber, t, m, sigma);
            // The weights are `Norm::weight`'s within an ulp or two (products
            // with reciprocals): the bound is widened by that relative error.
            let slack = 4.0 * f64::EPSILON * w.iter().map(|v| v.abs()).sum::<f64>();
            prop_assert!(within_bound(sw, &w) || (sw - exact_sum(&w).value()).abs() <= slack);
            let slack = 4.0 * f64::EPSILON * wd.iter().map(|v| v.abs()).sum::<f64>();
            prop_assert!(within_bound(swd, &wd) || (swd - exact_sum(&wd).value()).abs() <= slack);
        }

        #[test]
        fn scale_sums_count_and_sum_the_window(
            x in scores(), mu in -2.0..2.0f64, shift in -0.5..0.5f64, sigma in 1.0..2.0f64,
        ) {
            let (c, nmu) = (1.5, mu + shift);
            let inside: Vec<bool> = x.iter().map(|&v| ((v - mu) / sigma).abs() <= c).collect();
            let r2: Vec<f64> = x
                .iter()
                .zip(&inside)
                .filter(|(_, &i)| i)
                .map(|(&v, _)| ((v - nmu) / sigma).powi(2))
                .collect();
            let (ss, outside) = scale_sums(&x, c, mu, sigma, nmu);
            prop_assert_eq!(outside, inside.iter().filter(|&&i| !i).count());
            let exact = exact_sum(&r2).value();
            prop_assert!((ss - exact).abs() <= 16.0 * f64::EPSILON * exact);
        }
    }
}
