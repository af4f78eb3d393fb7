//! Per-partition kernels of the exact distributed fit (contract §9): each
//! returns a small summary of one partition that adds up across
//! partitions, so a cluster computes exact order statistics and sums with
//! map/reduce steps only.
//!
//! Order statistics are found by bisecting the 64-bit order-preserving
//! integer keys of the values (or of the deviations `|±x − c|`, computed
//! exactly as the in-memory estimators compute them): a histogram of 2^B
//! buckets over the current key bracket narrows each wanted rank's bracket
//! by 2^B per pass, and once a bracket holds few values they are collected
//! and selected exactly.

use crate::estimators::mest::Norm;
use crate::numeric::float::Float;
pub use crate::numeric::float::{from_order_key, order_key};
use crate::numeric::rank::Key;
use crate::numeric::select::{midpoint, order_statistics_by, Position};
use crate::numeric::sum::{exact_sum, ExactSum, Neumaier};

/// How many keys lie below `lo`, and the counts of `(key − lo) >> shift`
/// for the `buckets` buckets from `lo` on (keys above are not counted).
pub fn histogram<T: Float>(
    x: &[T],
    key: Key,
    lo: u64,
    shift: u32,
    buckets: usize,
) -> (u64, Vec<u64>) {
    let mut counts = vec![0u64; buckets];
    let mut below = 0u64;
    for &v in x {
        if v.is_nan() {
            continue;
        }
        let k = order_key(key.of(v.to_f64()));
        if k < lo {
            below += 1;
        } else {
            let b = ((k - lo) >> shift) as usize;
            if b < buckets {
                counts[b] += 1;
            }
        }
    }
    (below, counts)
}

/// The keyed values whose order keys lie in `[lo, hi]`.
pub fn collect<T: Float>(x: &[T], key: Key, lo: u64, hi: u64) -> Vec<f64> {
    x.iter()
        .filter(|v| !v.is_nan())
        .map(|v| key.of(v.to_f64()))
        .filter(|&k| (lo..=hi).contains(&order_key(k)))
        .collect()
}

/// The values at the given 0-based ranks (ascending, unique) of `values`.
pub fn select(mut values: Vec<f64>, ranks: &[usize]) -> Vec<f64> {
    order_statistics_by(&mut values, ranks, |v| v)
}

/// The 0-based ranks a type-7 quantile of n values needs.
pub fn quantile_ranks(n: usize, q: f64) -> Vec<usize> {
    Position::new(n, q).ranks().collect()
}

/// The type-7 quantile from the order statistics of [`quantile_ranks`].
pub fn quantile_value(n: usize, q: f64, values: &[f64]) -> f64 {
    let p = Position::new(n, q);
    let first = p.ranks().next().unwrap_or(0);
    p.interpolate(|r| values[r - first])
}

/// `numpy.median` from its one or two middle order statistics.
pub fn median_value(values: &[f64]) -> f64 {
    match values {
        [a] => *a,
        [a, b] => midpoint(*a, *b),
        _ => f64::NAN,
    }
}

/// Exact sum of the oriented values `< v` and their count.
pub fn sum_below<T: Float>(x: &[T], negate: bool, v: f64) -> (ExactSum, u64) {
    let sign = if negate { -1.0 } else { 1.0 };
    let kept: Vec<f64> = x
        .iter()
        .filter(|u| !u.is_nan())
        .map(|u| sign * u.to_f64())
        .filter(|&u| u < v)
        .collect();
    (exact_sum(&kept), kept.len() as u64)
}

/// Σ((±x − c)·2^-e)² and the count over `|±x − c| < w`: the kept squares
/// of a trimmed SD (in units of 2^e, so nothing overflows).
pub fn squares_below<T: Float>(x: &[T], negate: bool, c: f64, w: f64, e: i32) -> (f64, u64) {
    let sign = if negate { -1.0 } else { 1.0 };
    let mut acc = Neumaier::default();
    let mut count = 0u64;
    for &u in x {
        if u.is_nan() {
            continue;
        }
        let d = sign * u.to_f64() - c;
        if d.abs() < w {
            let s = libm::scalbn(d, -e);
            acc.add(s * s);
            count += 1;
        }
    }
    (acc.value(), count)
}

/// One partition's sums for a step of Huber's proposal 2 at `(m, σ)`:
/// `[Σw, Σw·d, n_in, Σ_in d, Σ_in d², n_out]` with `d = ±x − m`, w the
/// norm's weight of `d/σ`, "in" meaning `|d/σ| <= c` (the scale step's
/// inlier set when `(m, σ)` is that iteration's start).
pub fn m_sums<T: Float>(
    x: &[T],
    negate: bool,
    norm: Norm,
    tuning: f64,
    c: f64,
    m: f64,
    sigma: f64,
) -> [f64; 6] {
    let sign = if negate { -1.0 } else { 1.0 };
    let (mut sw, mut swd, mut s1, mut s2) = (
        Neumaier::default(),
        Neumaier::default(),
        Neumaier::default(),
        Neumaier::default(),
    );
    let (mut n_in, mut n_out) = (0u64, 0u64);
    for &u in x {
        if u.is_nan() {
            continue;
        }
        let s = sign * u.to_f64();
        let d = s - m;
        let w = norm.weight(d / sigma, tuning);
        sw.add(w);
        swd.add(w * d);
        if (d / sigma).abs() <= c {
            n_in += 1;
            s1.add(d);
            s2.add(d * d);
        } else {
            n_out += 1;
        }
    }
    [
        sw.value(),
        swd.value(),
        n_in as f64,
        s1.value(),
        s2.value(),
        n_out as f64,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_order() {
        let v = [-f64::MAX, -1.0, -0.0, 0.0, 5e-324, 1.0, f64::MAX];
        for w in v.windows(2) {
            assert!(order_key(w[0]) < order_key(w[1]));
        }
        for &x in &v {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
        let (below, h) = histogram(&[1.0, 2.0, f64::NAN, 3.0], Key::VALUE, order_key(2.0), 0, 1);
        assert_eq!((below, h), (1, vec![1]));
        assert_eq!(quantile_value(4, 0.25, &[2.0, 3.0]), 2.75);
        assert_eq!(median_value(&[1.0, 2.0]), 1.5);
    }
}
