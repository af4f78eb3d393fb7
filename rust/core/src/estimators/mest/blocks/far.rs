//! The far tails of a bucketed fit: the scores beyond `far·σ₀` of μ₀ on
//! either side, which no window of the fit reaches.
//!
//! They only ever count as outside a window, and for Huber's weights add
//! `Σ σ/|y − m|`. That sum comes from a series about μ₀,
//! `Σ 1/(d − δ) = Σ_k δ^k Σ 1/d^(k+1)` (d the distance to μ₀, δ the
//! location's move towards the tail), whose inverse-power sums are taken in
//! the one read, in lanes that vectorise — instead of the dozen per-bucket
//! moment updates per score of the other scores outside the bulk. On
//! long-tailed scores the far tails hold a sixth of them, and their buckets
//! most of the tree's leaves. Where the location moves too far
//! for the series, the tail is read value by value like any cut leaf.

use crate::estimators::mest::inverse_powers;
use crate::numeric::float::order_key;

/// Terms of the series: it is used while `|δ|/d <= RATIO` for every far
/// score, where the truncation error is below `RATIO^TERMS ≈ 3e-17`
/// relative.
const TERMS: usize = 20;
const RATIO: f64 = 0.15;

/// One far tail: its count, extremes and inverse-power sums about `center`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tail {
    pub(super) count: usize,
    pub(super) lo: f64,
    pub(super) hi: f64,
    /// +1 for the right tail (d = y − center), −1 for the left.
    sign: f64,
    center: f64,
    /// `Σ 1/d^(k+1)`, `k < TERMS` (only with `reciprocal`).
    sums: [f64; TERMS],
}

impl Tail {
    fn new(sign: f64, center: f64) -> Tail {
        Tail {
            count: 0,
            lo: f64::INFINITY,
            hi: f64::NEG_INFINITY,
            sign,
            center,
            sums: [0.0; TERMS],
        }
    }

    /// Adds the scores `ys`, all in this tail.
    fn add(&mut self, ys: &[f64], reciprocal: bool) {
        self.count += ys.len();
        for &y in ys {
            self.lo = self.lo.min(y);
            self.hi = self.hi.max(y);
        }
        if reciprocal {
            inverse_powers::sums(ys, self.center, self.sign, &mut self.sums);
        }
    }

    /// `Σ σ/|y − m|` over the tail by the series, if it converges fast
    /// enough at `m`.
    pub(super) fn reciprocal_sum(&self, m: f64, sigma: f64) -> Option<f64> {
        let nearest = if self.sign > 0.0 {
            self.lo - self.center
        } else {
            self.center - self.hi
        };
        // The move towards the tail shortens every distance: d − δ.
        let delta = self.sign * (m - self.center);
        let converges = delta.abs() <= RATIO * nearest;
        if self.count == 0 || !converges {
            return None;
        }
        let sum = self.sums.iter().rev().fold(0.0, |acc, &r| acc * delta + r);
        Some(sigma * sum)
    }
}

/// The far tails a read sorts scores into: the keys at or below `left`,
/// at or above `right`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Far {
    left_key: Option<u64>,
    right_key: Option<u64>,
    reciprocal: bool,
    pub(super) left: Tail,
    pub(super) right: Tail,
}

impl Far {
    /// The tails of the scores `<= left` and `>= right` (either may be
    /// absent), about `center`.
    pub(super) fn new(left: Option<f64>, right: Option<f64>, center: f64, reciprocal: bool) -> Far {
        Far {
            left_key: left.map(order_key),
            right_key: right.map(order_key),
            reciprocal,
            left: Tail::new(-1.0, center),
            right: Tail::new(1.0, center),
        }
    }

    /// Whether there is any tail.
    pub(super) fn is_none(&self) -> bool {
        self.left_key.is_none() && self.right_key.is_none()
    }

    /// Takes the far scores out of `ys` (NaN-free) into the tails; returns
    /// how many remain at its front, in their order.
    pub(super) fn split(&mut self, ys: &mut [f64], scratch: &mut [f64]) -> usize {
        assert!(scratch.len() > ys.len(), "scratch needs a spare slot");
        // Key 0 is no double's but NaN's (never among the scores).
        let (l, r) = (
            self.left_key.unwrap_or(0),
            self.right_key.unwrap_or(u64::MAX),
        );
        let (mut kept, mut nl, mut nr) = (0, 0, scratch.len());
        // Branch-free: each score is written to the front of `ys` (kept),
        // the front of `scratch` (left tail) and its back (right tail);
        // only its own slot advances. A slot stays free between the two
        // tails (`scratch` is longer than `ys`), so both writes land in
        // free slots or the same one.
        for i in 0..ys.len() {
            let y = ys[i];
            let k = order_key(y);
            let (is_left, is_right) = (k <= l, k >= r);
            ys[kept] = y;
            kept += usize::from(!is_left && !is_right);
            scratch[nl] = y;
            nl += usize::from(is_left);
            scratch[nr - 1] = y;
            nr -= usize::from(is_right);
        }
        let reciprocal = self.reciprocal;
        self.left.add(&scratch[..nl], reciprocal);
        self.right.add(&scratch[nr..], reciprocal);
        kept
    }

    /// Adds the tails of the scores after this one's (chunks joined in
    /// order: the same sums on any number of threads).
    pub(super) fn merge(&mut self, other: &Far) {
        for (a, b) in [
            (&mut self.left, &other.left),
            (&mut self.right, &other.right),
        ] {
            a.count += b.count;
            a.lo = a.lo.min(b.lo);
            a.hi = a.hi.max(b.hi);
            for (x, y) in a.sums.iter_mut().zip(&b.sums) {
                *x += y;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::sum::exact_sum;

    #[test]
    fn tails_split_and_sum_like_a_direct_read() {
        let ys: Vec<f64> = (0..5000)
            .map(|i| (f64::from(i) * 0.7).sin() * 10.0)
            .collect();
        let mut far = Far::new(Some(-6.0), Some(7.0), 0.5, true);
        let mut kept = ys.clone();
        let mut scratch = vec![0.0; ys.len() + 1];
        let n = far.split(&mut kept, &mut scratch);
        let middle: Vec<f64> = ys
            .iter()
            .copied()
            .filter(|&y| y > -6.0 && y < 7.0)
            .collect();
        assert_eq!(&kept[..n], &middle[..]);
        let left: Vec<f64> = ys.iter().copied().filter(|&y| y <= -6.0).collect();
        let right: Vec<f64> = ys.iter().copied().filter(|&y| y >= 7.0).collect();
        assert_eq!((far.left.count, far.right.count), (left.len(), right.len()));
        let extreme =
            |v: &[f64], f: fn(f64, f64) -> f64, start: f64| v.iter().copied().fold(start, f);
        assert_eq!(
            (far.right.lo, far.left.hi),
            (
                extreme(&right, f64::min, f64::INFINITY),
                extreme(&left, f64::max, f64::NEG_INFINITY)
            )
        );
        for m in [0.5, 0.9, 0.2, 1.3] {
            for (tail, values) in [(&far.left, &left), (&far.right, &right)] {
                let terms: Vec<f64> = values.iter().map(|&y| 2.0 / (y - m).abs()).collect();
                let want = exact_sum(&terms).value();
                let got = tail.reciprocal_sum(m, 2.0).expect("converges");
                assert!((got - want).abs() <= 1e-14 * want, "{m}: {got} {want}");
            }
        }
        // A move beyond the series' reach: the tail is read instead.
        assert!(far.right.reciprocal_sum(4.0, 1.0).is_none());
    }
}
