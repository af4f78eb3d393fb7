//! Huber's weights outside its window, summed over the sorted scores' two
//! tails: `Σ 1/|s − m|` (the weight is `t/|r| = tσ/|s − m|`).
//!
//! Reading the tails at every step made them most of a Huber fit on sorted
//! scores (a fifth of the scores, ~150 times). The sums are instead
//! expanded about a reference location `m₀` at which inverse-power sums
//! `R_k = Σ 1/(s − m₀)^(k+1)` of each tail were read once:
//! `1/(s − m) = Σ_k (m − m₀)^k / (s − m₀)^(k+1)`, a series whose ratio is
//! at most `|m − m₀|/d` with d the tail's nearest distance to `m₀` (about
//! tσ). It is used while that ratio is at most 1/32, where [`TERMS`] terms
//! leave an error below 1e-18 of the sum; scores that crossed a window edge
//! since `m₀` are added or removed one by one. The iteration's location
//! moves ever less as it converges, so one read serves most of a fit.

use core::cell::Cell;

/// Terms of the series: (1/32)^12 < 1e-18.
const TERMS: usize = 12;
/// Largest `|m − m₀|/d` the series is used at.
const RATIO: f64 = 1.0 / 32.0;
/// Most scores crossing the edges handled one by one before re-reading.
const MOVED_MAX: usize = 256;

/// The inverse-power sums of the tails `[0, lo)` and `[hi, N)` at `m₀`.
#[derive(Clone, Copy)]
struct Expansion {
    m0: f64,
    lo: usize,
    hi: usize,
    /// `Σ_{i<lo} 1/(m₀ − s_i)^(k+1)`.
    left: [f64; TERMS],
    /// `Σ_{i>=hi} 1/(s_i − m₀)^(k+1)`.
    right: [f64; TERMS],
    /// The nearest tail score's distance to `m₀` (∞ without tails).
    reach: f64,
}

/// The tails' sums of one fit, with the expansion they were last read into.
#[derive(Default)]
pub(super) struct Tails {
    last: Cell<Option<Expansion>>,
}

impl Tails {
    /// `Σ_{i<lo or i>=hi} 1/|s_i − m|` over sorted `s`.
    pub(super) fn reciprocal_sum(&self, s: &[f64], m: f64, lo: usize, hi: usize) -> f64 {
        if let Some(e) = self.last.get() {
            // Past MOVED_MAX crossings (the scale changed) the tails are read
            // again: cheaper than handling the crossings one by one, and as
            // cheap as moving the sums to the new edges.
            let near = e.lo.abs_diff(lo) + e.hi.abs_diff(hi) <= MOVED_MAX;
            if near && (m - e.m0).abs() <= RATIO * e.reach {
                return e.evaluate(s, m, lo, hi);
            }
        }
        let e = Expansion::read(s, m, lo, hi);
        self.last.set(Some(e));
        e.evaluate(s, m, lo, hi)
    }
}

impl Expansion {
    fn read(s: &[f64], m0: f64, lo: usize, hi: usize) -> Self {
        let left = inverse_power_sums(&s[..lo], m0, -1.0);
        let right = inverse_power_sums(&s[hi..], m0, 1.0);
        let near_left = s[..lo].last().map_or(f64::INFINITY, |&v| m0 - v);
        let near_right = s[hi..].first().map_or(f64::INFINITY, |&v| v - m0);
        Expansion {
            m0,
            lo,
            hi,
            left,
            right,
            reach: near_left.min(near_right),
        }
    }

    fn evaluate(&self, s: &[f64], m: f64, lo: usize, hi: usize) -> f64 {
        let delta = m - self.m0;
        // Right tail: 1/(s − m) = Σ δ^k/(s − m₀)^(k+1); left: (−δ)^k.
        let series =
            |sums: &[f64; TERMS], x: f64| sums.iter().rev().fold(0.0, |acc, &r| acc * x + r);
        let mut total = series(&self.left, -delta) + series(&self.right, delta);
        let direct = |v: f64| 1.0 / (v - m).abs();
        // Scores that left or joined a tail since m₀.
        for &v in s.get(lo..self.lo).unwrap_or(&[]) {
            total -= direct(v);
        }
        for &v in s.get(self.lo..lo).unwrap_or(&[]) {
            total += direct(v);
        }
        for &v in s.get(self.hi..hi).unwrap_or(&[]) {
            total -= direct(v);
        }
        for &v in s.get(hi..self.hi).unwrap_or(&[]) {
            total += direct(v);
        }
        total
    }
}

/// [`inverse_powers::sums`](super::inverse_powers::sums) of the [`TERMS`] the series takes.
fn inverse_power_sums(s: &[f64], m0: f64, sign: f64) -> [f64; TERMS] {
    let mut out = [0.0; TERMS];
    super::inverse_powers::sums(s, m0, sign, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::sum::exact_sum;

    /// Heavy tails on both sides of the bulk (the unit tests' kind 1).
    fn sorted_scores(n: usize) -> Vec<f64> {
        let mut s = super::super::tests::synthetic(n, 1, 11);
        s.sort_by(f64::total_cmp);
        s
    }

    /// The tails' sum for the window `|s − m| <= half` against the exactly
    /// rounded sum of `1/|s − m|` over the scores outside it.
    fn assert_tail_sum(tails: &Tails, s: &[f64], m: f64, half: f64) {
        let lo = s.partition_point(|&v| v < m - half);
        let hi = s.partition_point(|&v| v <= m + half);
        let terms: Vec<f64> = s[..lo]
            .iter()
            .chain(&s[hi..])
            .map(|&v| 1.0 / (v - m).abs())
            .collect();
        let want = exact_sum(&terms).value();
        let got = tails.reciprocal_sum(s, m, lo, hi);
        assert!(
            (got - want).abs() <= 1e-14 * want,
            "{m} {half}: {got} {want}"
        );
    }

    /// Along a sequence of locations and windows like an iteration's: small
    /// moves (the expansion, edge crossings one by one) and large ones
    /// (re-reads).
    #[test]
    fn tail_sums_equal_direct_sums() {
        let s = sorted_scores(3000);
        let tails = Tails::default();
        let moves = [
            0.0, 0.3, 0.31, 0.305, 0.3051, 0.30505, -0.4, -0.39, -0.3901, 1.1,
        ];
        for (step, &m) in moves.iter().enumerate() {
            assert_tail_sum(&tails, &s, m, 1.345 * (1.0 + 0.01 * step as f64));
        }
    }

    /// Windows that widen and narrow by hundreds of scores at a fixed
    /// location (the tails read again past `MOVED_MAX` crossings, the
    /// crossings handled one by one below it).
    #[test]
    fn widened_and_narrowed_tail_sums_equal_direct_sums() {
        let s = sorted_scores(3000);
        let tails = Tails::default();
        for half in [1.0, 1.6, 2.5, 4.0, 2.0, 0.8, 30.0] {
            assert_tail_sum(&tails, &s, 0.2, half);
        }
    }

    #[test]
    fn empty_tails_sum_to_zero() {
        let s = sorted_scores(50);
        let tails = Tails::default();
        assert_eq!(tails.reciprocal_sum(&s, 0.0, 0, s.len()), 0.0);
        assert_eq!(tails.reciprocal_sum(&s, 1e-3, 0, s.len()), 0.0);
    }
}
