//! Selection in a buffer by quickselect, and the arithmetic of contract §1:
//! NumPy's median midpoint and type-7 quantile interpolation. The
//! estimators on raw input ([`crate::numeric::rank`]) select inside their
//! brackets with these; the distributed fit and the binning of §6 use the
//! interpolation on their own order statistics.
//!
//! Source: Hoare's selection (`select_nth_unstable`, introselect in the
//! standard library), and NumPy's definitions: the median's midpoint
//! `(a + b)/2` and `numpy.quantile`'s method "linear" (Hyndman and Fan
//! type 7, *Amer. Statist.* 1996), whose `lerp` form is reproduced so that
//! quantiles equal NumPy's bit for bit.
//!
//! Trade-offs: several ranks are selected highest first, each on the
//! prefix the previous selection left, so k ranks cost less than k
//! selections of the whole buffer; the top rank of a prefix is a scan,
//! not a selection. The buffer is reordered (callers pass a scratch copy
//! or a bracket's keys, never the user's scores).

use crate::numeric::float::Float;

/// The values `key(x)` of the given 0-based order statistics (by key) of a
/// NaN-free buffer. `ranks` must be ascending, unique and `< buf.len()`.
/// Returns them in the order of `ranks`.
pub fn order_statistics_by<T: Float>(
    buf: &mut [T],
    ranks: &[usize],
    key: impl Fn(T) -> f64 + Copy,
) -> Vec<f64> {
    let mut out = vec![0.0; ranks.len()];
    // Highest rank first: each selection leaves the smaller values in the
    // prefix, so the next one works on a shrinking prefix.
    let mut end = buf.len();
    for (slot, &rank) in out.iter_mut().zip(ranks).rev() {
        debug_assert!(rank < end);
        let prefix = &mut buf[..end];
        *slot = if rank + 1 == end {
            // The largest of the prefix: a scan instead of a selection, then
            // moved to `rank` so the prefix before it holds the rest.
            let (i, v) = argmax_by(prefix, key);
            prefix.swap(i, rank);
            v
        } else {
            let (_, kth, _) =
                prefix.select_nth_unstable_by(rank, |a, b| key(*a).total_cmp(&key(*b)));
            key(*kth)
        };
        end = rank;
    }
    out
}

fn argmax_by<T: Float>(xs: &[T], key: impl Fn(T) -> f64) -> (usize, f64) {
    let mut best = (0, key(xs[0]));
    for (i, &x) in xs.iter().enumerate().skip(1) {
        let k = key(x);
        if k.total_cmp(&best.1).is_gt() {
            best = (i, k);
        }
    }
    best
}

/// NumPy's median of two middle values, `(a + b) / 2`.
pub(crate) fn midpoint(a: f64, b: f64) -> f64 {
    let s = a + b;
    if s.is_finite() {
        s / 2.0
    } else {
        // a + b overflowed (|a|, |b| near f64::MAX); halve first.
        a / 2.0 + b / 2.0
    }
}

/// Where a type-7 quantile falls: the lower order statistic and the
/// interpolation weight. `h = (N − 1)·q` as NumPy computes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Position {
    lower: usize,
    weight: f64,
}

impl Position {
    pub(crate) fn new(n: usize, q: f64) -> Self {
        let h = (n - 1) as f64 * q;
        if h >= (n - 1) as f64 {
            return Position {
                lower: n - 1,
                weight: 0.0,
            };
        }
        let lower = h.floor();
        Position {
            lower: lower as usize,
            weight: h - lower,
        }
    }

    /// The order statistics the quantile needs.
    pub(crate) fn ranks(&self) -> impl Iterator<Item = usize> {
        let upper = (self.weight > 0.0).then_some(self.lower + 1);
        core::iter::once(self.lower).chain(upper)
    }

    /// The quantile from its order statistics.
    pub(crate) fn interpolate(&self, value_of: impl Fn(usize) -> f64) -> f64 {
        if self.weight > 0.0 {
            lerp(value_of(self.lower), value_of(self.lower + 1), self.weight)
        } else {
            value_of(self.lower)
        }
    }
}

/// NumPy's `_lerp`: the §1 interpolation, evaluated from the nearer order
/// statistic (from above when the weight is at least 1/2).
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    if t == 0.0 {
        return a;
    }
    let d = b - a;
    if t >= 0.5 {
        b - d * (1.0 - t)
    } else {
        a + d * t
    }
}

/// A type-7 quantile of an already sorted, non-empty slice.
pub fn quantile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    Position::new(sorted.len(), q).interpolate(|r| sorted[r])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted(xs: &[f64]) -> Vec<f64> {
        let mut s = xs.to_vec();
        s.sort_by(f64::total_cmp);
        s
    }

    #[test]
    fn quantile_examples_match_numpy() {
        // numpy.quantile([1, 2, 3, 4], [0, .25, .5, .75, 1])
        let x = [1.0, 2.0, 3.0, 4.0];
        let q: Vec<f64> = [0.0, 0.25, 0.5, 0.75, 1.0]
            .iter()
            .map(|&q| quantile_of_sorted(&x, q))
            .collect();
        assert_eq!(q, vec![1.0, 1.75, 2.5, 3.25, 4.0]);
        // numpy.quantile([0, 10], [0.3, 0.7]) == [3.0, 7.0]
        assert_eq!(quantile_of_sorted(&[0.0, 10.0], 0.3), 3.0);
        assert_eq!(quantile_of_sorted(&[0.0, 10.0], 0.7), 7.0);
        // numpy.quantile([0.1, 7.1], 0.6) == 4.299999999999999: from above,
        // where a + (b − a)·t would give 4.3.
        assert_eq!(quantile_of_sorted(&[0.1, 7.1], 0.6), 4.299_999_999_999_999);
        assert_eq!(midpoint(f64::MAX, f64::MAX), f64::MAX);
    }

    proptest! {
        #[test]
        fn order_statistics_equal_sorting(
            xs in proptest::collection::vec(-1e6f64..1e6, 1..300),
            picks in proptest::collection::vec(0usize..300, 1..6),
        ) {
            let n = xs.len();
            let mut ranks: Vec<usize> = picks.iter().map(|p| p % n).collect();
            ranks.sort_unstable();
            ranks.dedup();
            let s = sorted(&xs);
            let mut buf = xs.clone();
            let got = order_statistics_by(&mut buf, &ranks, |v| v);
            let want: Vec<f64> = ranks.iter().map(|&r| s[r]).collect();
            prop_assert_eq!(got, want);
            // Reordered, never overwritten.
            prop_assert_eq!(sorted(&buf), s);
        }

    }
}
