//! Binning of outlier probabilities (contract §6): bins `[t₀, t₁], (t₁, t₂], …,
//! (t_{k−1}, t_k]` with t₀ = 0, t_k = 1, by equal width, equal frequency or
//! equal area (the paper's *equiareal* bins).
//!
//! The probabilities are sorted once ([`Sorted`]); with prefix sums of the
//! labels and of the probabilities every bin of every scheme and every `k`
//! is a pair of binary searches and two differences — no re-sorting, no
//! second pass over the data.

use crate::error::{named_enum, Error};
use crate::numeric::float::Float;
use crate::numeric::select::quantile_of_sorted;
use crate::numeric::sum::two_sum;

/// How bin edges are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Bins of equal area (width × fraction of observations), the default.
    Equiareal,
    /// `t_b = b/k`.
    EqualWidth,
    /// `t_b = Q(b/k)` of the probabilities; repeated edges merge bins.
    EqualFrequency,
}

named_enum!(
    Scheme,
    "bins",
    "expected 'equiareal', 'equal_width' or 'equal_frequency'",
    "equiareal" => Equiareal,
    "equal_width" => EqualWidth,
    "equal_frequency" => EqualFrequency,
);

/// Checks that every `p` is in [0, 1] (NaN is not).
pub fn check_probabilities<T: Float>(p: &[T]) -> Result<(), Error> {
    match p.iter().position(|v| !(0.0..=1.0).contains(&v.to_f64())) {
        Some(index) => Err(Error::InvalidProbability {
            index,
            value: p[index].to_f64(),
        }),
        None if p.is_empty() => Err(Error::NoProbabilities),
        None => Ok(()),
    }
}

/// Largest bin count accepted (contract §5): far beyond any useful
/// resolution of a reliability diagram, and small enough that the edges
/// (8 bytes each) and the O(k) work per binning are bounded before anything
/// is allocated.
pub const MAX_BINS: usize = crate::limits::BINS.max as usize;

/// Largest number of bin counts averaged over in one call: the work is the
/// sum of the counts, so both factors are bounded.
pub const MAX_BIN_COUNTS: usize = crate::limits::BIN_COUNTS.max as usize;

/// Checks `k` (bins per binning) values: each in [1, [`MAX_BINS`]], at most
/// [`MAX_BIN_COUNTS`] of them.
pub fn check_bin_counts(ks: &[usize]) -> Result<(), Error> {
    if ks.is_empty() || ks.contains(&0) {
        return Err(Error::invalid(
            "n_bins",
            "need at least one bin count, each at least 1",
        ));
    }
    if let Some(&k) = ks.iter().find(|&&k| k > MAX_BINS) {
        return Err(Error::invalid(
            "n_bins",
            format!("a bin count must be at most {MAX_BINS}, got {k}"),
        ));
    }
    if ks.len() > MAX_BIN_COUNTS {
        return Err(Error::invalid(
            "n_bins",
            format!(
                "at most {MAX_BIN_COUNTS} bin counts can be averaged over, got {}",
                ks.len()
            ),
        ));
    }
    Ok(())
}

/// Totals of one bin.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bin {
    /// Observations in the bin.
    pub count: usize,
    /// Outliers (y = 1) among them.
    pub outliers: usize,
    /// Sum of their probabilities.
    pub sum: f64,
}

/// Probabilities in ascending order with prefix sums of labels and of
/// probabilities.
#[derive(Debug, Clone)]
pub struct Sorted {
    p: Vec<f64>,
    /// `outliers[i]`: outliers among the `i` smallest probabilities.
    outliers: Vec<usize>,
    /// Σ of the `i` smallest probabilities as an unevaluated sum hi + lo
    /// (double-double): a bin's sum is a difference of two prefix sums, and
    /// the extra precision keeps that difference accurate to ~N²u² relative.
    sum_hi: Vec<f64>,
    sum_lo: Vec<f64>,
}

/// The edges of `k` bins of the probabilities `p` ([`Sorted::edges`]):
/// `k` checked first, then one sort.
pub fn bin_edges<T: Float>(p: &[T], scheme: Scheme, k: usize) -> Result<Vec<f64>, Error> {
    check_bin_counts(&[k])?;
    Sorted::new(p, None)?.edges(scheme, k)
}

impl Sorted {
    /// Sorts checked probabilities (with their labels, if any).
    pub fn new<T: Float>(p: &[T], y: Option<&[bool]>) -> Result<Self, Error> {
        check_probabilities(p)?;
        if let Some(y) = y {
            if y.len() != p.len() {
                return Err(Error::ShapeMismatch(format!(
                    "y_true has {} labels but p has {} probabilities",
                    y.len(),
                    p.len()
                )));
            }
        }
        // p in [0, 1] orders like the bits of +p; the label rides in bit 0.
        let mut keys: Vec<u64> = p
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let bits = (v.to_f64() + 0.0).to_bits(); // −0.0 → +0.0
                (bits << 1) | u64::from(y.is_some_and(|y| y[i]))
            })
            .collect();
        keys.sort_unstable();
        let n = keys.len();
        let mut sorted = Sorted {
            p: Vec::with_capacity(n),
            outliers: Vec::with_capacity(n + 1),
            sum_hi: Vec::with_capacity(n + 1),
            sum_lo: Vec::with_capacity(n + 1),
        };
        let (mut ones, mut hi, mut lo) = (0usize, 0.0f64, 0.0f64);
        sorted.outliers.push(0);
        sorted.sum_hi.push(0.0);
        sorted.sum_lo.push(0.0);
        for key in keys {
            let v = f64::from_bits(key >> 1);
            ones += (key & 1) as usize;
            let (s, e) = two_sum(hi, v);
            hi = s;
            lo += e;
            sorted.p.push(v);
            sorted.outliers.push(ones);
            sorted.sum_hi.push(hi);
            sorted.sum_lo.push(lo);
        }
        Ok(sorted)
    }

    /// Number of probabilities.
    pub fn len(&self) -> usize {
        self.p.len()
    }

    /// Whether there are none (never, once constructed).
    pub fn is_empty(&self) -> bool {
        self.p.is_empty()
    }

    /// Outliers in total.
    pub fn n_outliers(&self) -> usize {
        self.outliers[self.len()]
    }

    /// The probabilities, ascending.
    pub fn values(&self) -> &[f64] {
        &self.p
    }

    /// `#{i : p_i <= t}`.
    fn cut(&self, t: f64) -> usize {
        self.p.partition_point(|&v| v <= t)
    }

    /// Totals of the sorted range `[a, b)`.
    fn range(&self, a: usize, b: usize) -> Bin {
        let (d, e) = two_sum(self.sum_hi[b], -self.sum_hi[a]);
        Bin {
            count: b - a,
            outliers: self.outliers[b] - self.outliers[a],
            sum: d + (e + (self.sum_lo[b] - self.sum_lo[a])),
        }
    }

    /// The bins between consecutive `edges` (non-decreasing, from 0 to 1).
    pub fn bins(&self, edges: &[f64]) -> Vec<Bin> {
        let n = self.len();
        let inner = &edges[1..edges.len() - 1];
        let mut start = 0;
        let mut out = Vec::with_capacity(edges.len() - 1);
        for &t in inner {
            let end = self.cut(t).max(start);
            out.push(self.range(start, end));
            start = end;
        }
        out.push(self.range(start, n));
        out
    }

    /// Bin edges `[0, t₁, …, 1]` for `k` bins of a scheme; fewer when
    /// repeated edges merge (equal frequency) or the data cannot fill `k`
    /// bins (equiareal). `k` must pass [`check_bin_counts`].
    pub fn edges(&self, scheme: Scheme, k: usize) -> Result<Vec<f64>, Error> {
        check_bin_counts(&[k])?;
        Ok(match scheme {
            Scheme::EqualWidth => (0..=k).map(|b| b as f64 / k as f64).collect(),
            Scheme::EqualFrequency => {
                let mut edges = vec![0.0];
                for b in 1..k {
                    let t = quantile_of_sorted(&self.p, b as f64 / k as f64);
                    // t₁ = 0 is a bin of its own, [0, 0]: the exact zeros.
                    // A later repeat t_b = t_{b−1} would make the empty bin
                    // (t, t], so it merges away; NumPy's lerp is monotone
                    // only up to an ulp, hence `>` rather than `!=`.
                    if b == 1 || t > edges[edges.len() - 1] {
                        edges.push(t);
                    }
                }
                if edges[edges.len() - 1] < 1.0 || edges.len() == 1 {
                    edges.push(1.0);
                }
                edges
            }
            Scheme::Equiareal => self.equiareal_edges(k),
        })
    }

    /// contract §6: the smallest target area T for which the greedy placement
    /// yields at most `k` bins, and the edges it places. The bisection runs
    /// over the doubles in [0, 1] (their bit patterns are ordered like their
    /// values), so it reaches machine precision in at most 64 steps even
    /// when T is tiny; the bin count is non-increasing in T.
    fn equiareal_edges(&self, k: usize) -> Vec<f64> {
        // T = 0 never closes a bin; T = 1 gives the single bin [0, 1].
        let (mut lo, mut hi) = (0u64, 1f64.to_bits());
        let mut best = vec![0.0, 1.0];
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match self.greedy_edges(f64::from_bits(mid), k) {
                Some(edges) => {
                    hi = mid;
                    best = edges;
                }
                None => lo = mid,
            }
        }
        best
    }

    /// Places edges greedily from 0 for target area `area`: each next edge
    /// is the smallest `t` with `A(a, t] >= area`, until an edge would reach
    /// 1. `None` if that takes more than `k` bins.
    fn greedy_edges(&self, area: f64, k: usize) -> Option<Vec<f64>> {
        let mut edges = vec![0.0];
        let (mut a, mut start) = (0.0, 0);
        loop {
            if edges.len() > k {
                return None;
            }
            let t = self.next_edge(a, start, area);
            if t >= 1.0 {
                edges.push(1.0);
                return Some(edges);
            }
            edges.push(t);
            a = t;
            start = self.cut(t);
        }
    }

    /// The smallest `t` with `A(a, t] = (t − a)·#{i >= start : p_i <= t}/N
    /// >= area`, where `p[start..]` are the probabilities not yet binned
    /// (all above `a`, or for the first bin all of them, zeros included).
    fn next_edge(&self, a: f64, start: usize, area: f64) -> f64 {
        let n = self.len() as f64;
        let rest = &self.p[start..];
        // A at p_j with the points up to j counted is non-decreasing in j;
        // ties make it reach its full value only at a group's last member,
        // which is why the first index found is moved to its group's start.
        let first = first_index(rest.len(), |j| (rest[j] - a) * (j + 1) as f64 / n >= area);
        match first {
            Some(j) => {
                let v = rest[j];
                let group = rest.partition_point(|&u| u < v);
                if group == 0 {
                    v
                } else {
                    // In the gap below v the count is `group`.
                    let t = a + area * n / group as f64;
                    if t < v {
                        t
                    } else {
                        v
                    }
                }
            }
            None if rest.is_empty() => 1.0,
            None => a + area * n / rest.len() as f64,
        }
    }
}

/// The first `j < len` with `pred(j)`, for a predicate that is monotone
/// (false … false true … true).
fn first_index(len: usize, pred: impl Fn(usize) -> bool) -> Option<usize> {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    (lo < len).then_some(lo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted(p: &[f64]) -> Sorted {
        Sorted::new(p, None).unwrap()
    }

    /// Area of each bin: width × fraction of observations in it.
    fn areas(s: &Sorted, edges: &[f64]) -> Vec<f64> {
        let n = s.len() as f64;
        edges
            .windows(2)
            .zip(s.bins(edges))
            .map(|(w, b)| (w[1] - w[0]) * b.count as f64 / n)
            .collect()
    }

    #[test]
    fn equal_width_and_frequency() {
        let s = sorted(&[0.1, 0.2, 0.3, 0.9]);
        assert_eq!(
            s.edges(Scheme::EqualWidth, 4).unwrap(),
            vec![0.0, 0.25, 0.5, 0.75, 1.0]
        );
        let counts: Vec<usize> = s
            .bins(&[0.0, 0.25, 0.5, 0.75, 1.0])
            .iter()
            .map(|b| b.count)
            .collect();
        assert_eq!(counts, vec![2, 1, 0, 1]);
        // Q(1/2) of [0.1, 0.2, 0.3, 0.9] = 0.25.
        assert_eq!(
            s.edges(Scheme::EqualFrequency, 2).unwrap(),
            vec![0.0, 0.25, 1.0]
        );
        // Repeated quantiles merge bins; a first edge at 0 keeps the zeros
        // in a bin [0, 0] of their own.
        let t = sorted(&[0.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(
            t.edges(Scheme::EqualFrequency, 4).unwrap(),
            vec![0.0, 0.0, 1.0]
        );
        let counts: Vec<usize> = t.bins(&[0.0, 0.0, 1.0]).iter().map(|b| b.count).collect();
        assert_eq!(counts, vec![4, 1]);
        let u = sorted(&[0.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!(u.edges(Scheme::EqualFrequency, 4).unwrap(), vec![0.0, 1.0]);
    }

    #[test]
    fn closed_on_the_right_and_zero_in_the_first_bin() {
        let s = sorted(&[0.0, 0.5, 0.5, 1.0]);
        let bins = s.bins(&[0.0, 0.5, 1.0]);
        assert_eq!((bins[0].count, bins[1].count), (3, 1));
        assert_eq!((bins[0].sum, bins[1].sum), (1.0, 1.0));
    }

    #[test]
    fn equiareal_degenerate_inputs_are_defined() {
        for p in [
            vec![0.0; 7],
            vec![1.0; 7],
            vec![0.3; 7],
            vec![0.0, 1.0],
            vec![0.5],
        ] {
            let s = sorted(&p);
            for k in [1, 2, 5, 20] {
                let e = s.edges(Scheme::Equiareal, k).unwrap();
                assert_eq!(e[0], 0.0);
                assert_eq!(*e.last().unwrap(), 1.0);
                assert!(e.len() - 1 <= k.max(1), "{p:?} {k} {e:?}");
                assert!(e.windows(2).all(|w| w[0] < w[1]), "{e:?}");
                let total: usize = s.bins(&e).iter().map(|b| b.count).sum();
                assert_eq!(total, p.len());
            }
        }
    }

    #[test]
    fn equiareal_uniform_data_gives_near_equal_widths() {
        let p: Vec<f64> = (0..1000).map(|i| (f64::from(i) + 0.5) / 1000.0).collect();
        let s = sorted(&p);
        let e = s.edges(Scheme::Equiareal, 10).unwrap();
        assert_eq!(e.len(), 11);
        for a in areas(&s, &e) {
            assert!((a - 0.01).abs() < 0.001, "{a}");
        }
    }

    #[test]
    fn bin_sums_are_accurate() {
        // A tiny bin after a long run of larger prefix sums would lose its
        // digits in a plain f64 prefix difference.
        let mut p = vec![1e-12; 3];
        p.extend(std::iter::repeat_n(0.7, 10_000));
        let s = sorted(&p);
        let bins = s.bins(&[0.0, 1e-11, 1.0]);
        assert_eq!(bins[0].sum, 3e-12);
        assert_eq!(bins[1].sum, 7000.0);
    }

    #[test]
    fn errors() {
        assert_eq!(
            Sorted::new(&[0.5, 1.5], None).unwrap_err(),
            Error::InvalidProbability {
                index: 1,
                value: 1.5
            }
        );
        assert!(Sorted::new(&[f64::NAN], None).is_err());
        assert_eq!(
            Sorted::new::<f64>(&[], None).unwrap_err(),
            Error::NoProbabilities
        );
        assert!(Sorted::new(&[0.5], Some(&[true, false][..])).is_err());
        assert!("uniform".parse::<Scheme>().is_err());
    }

    #[test]
    fn bin_counts_are_bounded_before_allocating() {
        let s = sorted(&[0.1, 0.5]);
        for scheme in [
            Scheme::Equiareal,
            Scheme::EqualWidth,
            Scheme::EqualFrequency,
        ] {
            assert!(s.edges(scheme, MAX_BINS + 1).is_err());
            assert!(s.edges(scheme, usize::MAX).is_err());
            assert!(s.edges(scheme, 0).is_err());
        }
        assert_eq!(
            s.edges(Scheme::EqualWidth, MAX_BINS).unwrap().len(),
            MAX_BINS + 1
        );
        assert!(check_bin_counts(&[1; MAX_BIN_COUNTS + 1]).is_err());
        assert!(check_bin_counts(&[MAX_BINS; MAX_BIN_COUNTS]).is_ok());
    }

    proptest! {
        #[test]
        fn equiareal_bins_partition_and_have_equal_area(
            p in proptest::collection::vec(prop_oneof![0.0f64..=1.0, Just(0.0), Just(1.0)], 1..400),
            k in 1usize..25,
        ) {
            let s = sorted(&p);
            let e = s.edges(Scheme::Equiareal, k).unwrap();
            prop_assert_eq!(e[0], 0.0);
            prop_assert_eq!(*e.last().unwrap(), 1.0);
            prop_assert!(e.len() >= 2 && e.len() - 1 <= k);
            prop_assert!(e.windows(2).all(|w| w[0] < w[1]));
            let bins = s.bins(&e);
            prop_assert_eq!(bins.iter().map(|b| b.count).sum::<usize>(), p.len());
            // Every bin but the last reaches the target area T, and exceeds
            // it at most by the observations sitting on its right edge
            // (width × m/N): the discreteness of the data. The smallest of
            // those areas is at least T, so it bounds the others.
            let a = areas(&s, &e);
            let n = p.len() as f64;
            if a.len() > 1 {
                let target = a[..a.len() - 1].iter().copied().fold(f64::INFINITY, f64::min);
                for (ai, w) in a.iter().zip(e.windows(2)) {
                    let on_edge = p.iter().filter(|&&v| v == w[1]).count() as f64;
                    prop_assert!(
                        *ai <= (target + (w[1] - w[0]) * on_edge / n) * (1.0 + 1e-12),
                        "{a:?} {e:?}"
                    );
                }
            }
        }

        #[test]
        fn prefix_bin_sums_equal_direct_sums(
            p in proptest::collection::vec(0.0f64..=1.0, 1..300),
            k in 1usize..12,
        ) {
            let s = sorted(&p);
            for scheme in [Scheme::Equiareal, Scheme::EqualWidth, Scheme::EqualFrequency] {
                let e = s.edges(scheme, k).unwrap();
                let vals = s.values();
                let mut start = 0;
                for b in s.bins(&e) {
                    let direct = crate::numeric::sum::exact_sum(&vals[start..start + b.count]).value();
                    prop_assert!((b.sum - direct).abs() <= 2.0 * f64::EPSILON * direct);
                    start += b.count;
                }
            }
        }
    }
}
