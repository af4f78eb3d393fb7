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
//!
//! M-estimation runs the in-memory iteration ([`iterate`]) on sums reduced
//! over the cluster ([`m_iterate_reduced`]), in the in-memory fit's units:
//! every partition scales its scores by the same power of two 2^-e
//! (exactly, as the in-memory fit does), so each partition's sums are of
//! numbers near 1 and add up without aligning exponents, and the estimate
//! is equivariant under powers of two across the whole double range.

use crate::error::Error;
use crate::estimators::mest::{
    iterate, ldexp, unit_exponent, unscaled, weighted_deviation, MEstimate, MParams, Norm,
    StartScale, Sums,
};
use crate::numeric::float::Float;
pub use crate::numeric::float::{from_order_key, order_key};
use crate::numeric::rank::Key;
use crate::numeric::select::{midpoint, order_statistics_by, Position};
use crate::numeric::sum::{exact_product, exact_sum, ExactSum, Neumaier};
use core::cell::RefCell;

/// Most buckets of one histogram: its counts travel back from every
/// partition.
pub const MAX_BUCKETS: usize = 1 << 20;

/// What is ranked: the oriented scores, or their absolute deviations from
/// `center`.
pub fn key(center: Option<f64>, negate: bool) -> Key {
    match center {
        None => Key::Value { negate },
        Some(center) => Key::Deviation { center, negate },
    }
}

/// How many keys lie below `lo`, and the counts of `(key − lo) >> shift`
/// for the `buckets` buckets from `lo` on (keys above are not counted).
pub fn histogram<T: Float>(
    x: &[T],
    key: Key,
    lo: u64,
    shift: u32,
    buckets: usize,
) -> Result<(u64, Vec<u64>), Error> {
    if buckets > MAX_BUCKETS || shift > 63 {
        return Err(Error::invalid("buckets", "buckets <= 2^20 and shift <= 63"));
    }
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
    Ok((below, counts))
}

/// The keyed values whose order keys lie in `[lo, hi]`.
pub fn collect<T: Float>(x: &[T], key: Key, lo: u64, hi: u64) -> Vec<f64> {
    x.iter()
        .filter(|v| !v.is_nan())
        .map(|v| key.of(v.to_f64()))
        .filter(|&k| (lo..=hi).contains(&order_key(k)))
        .collect()
}

/// The values at the given 0-based ranks (ascending, unique, in range) of
/// `values`.
pub fn select(mut values: Vec<f64>, ranks: &[usize]) -> Result<Vec<f64>, Error> {
    if ranks.windows(2).any(|w| w[0] >= w[1]) || ranks.last().is_some_and(|&r| r >= values.len()) {
        return Err(Error::invalid(
            "ranks",
            "ranks must be ascending, unique and in range",
        ));
    }
    Ok(order_statistics_by(&mut values, ranks, |v| v))
}

/// The 0-based ranks a type-7 quantile of n values needs.
pub fn quantile_ranks(n: usize, q: f64) -> Result<Vec<usize>, Error> {
    if n == 0 || !(0.0..=1.0).contains(&q) {
        return Err(Error::invalid("q", "n >= 1 and q in [0, 1]"));
    }
    Ok(Position::new(n, q).ranks().collect())
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

/// One partition's exact sum of the oriented values below a cut-off, as
/// plain numbers (the limbs of an [`ExactSum`]) that travel back to the
/// client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SumPart {
    /// The sum is negative.
    pub negative: bool,
    /// Its limbs (see [`ExactSum::to_limbs`]).
    pub limbs: Vec<u64>,
    /// How many values it adds.
    pub count: u64,
}

/// Exact sum of the oriented values `< v` and their count.
pub fn sum_below<T: Float>(x: &[T], negate: bool, v: f64) -> SumPart {
    let sign = if negate { -1.0 } else { 1.0 };
    let kept: Vec<f64> = x
        .iter()
        .filter(|u| !u.is_nan())
        .map(|u| sign * u.to_f64())
        .filter(|&u| u < v)
        .collect();
    let (negative, limbs) = exact_sum(&kept).to_limbs().unwrap_or((false, Vec::new()));
    SumPart {
        negative,
        limbs,
        count: kept.len() as u64,
    }
}

/// `Σ parts + ties·v`, exactly: the kept sum of a trimmed mean whose
/// cut-off value `v` is shared by `ties` of the kept scores (its
/// [`ExactSum::mean`] is the in-memory trimmed mean, finite even where the
/// sum is beyond the double range).
pub fn exact_total(parts: &[SumPart], v: f64, ties: usize) -> ExactSum {
    let mut total = exact_product(v, ties);
    for p in parts {
        total.merge(&ExactSum::from_limbs(p.negative, &p.limbs));
    }
    total
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

/// One partition's sums for a step of Huber's proposal 2 at `(m, σ)`, in
/// units of 2^e: `[Σw, Σw·d, n_in, Σ_in d, Σ_in d², n_out]` with
/// `d = ±x·2^-e − m`, w the norm's weight of `d/σ`, "in" meaning
/// `|d/σ| <= c` (the scale step's inlier set when `(m, σ)` is that
/// iteration's start).
///
/// The units are the in-memory fit's (contract §3, §9): e puts the
/// starting scale in [1, 2), so every sum is of numbers near 1 — no square
/// overflows near 1e308 or underflows for subnormal scores — and the
/// rescaling is the in-memory fit's own ([`ldexp`]), exact for normal
/// results, so the partitions sum the very numbers the in-memory
/// iteration sums.
pub fn m_sums<T: Float>(
    x: &[T],
    negate: bool,
    params: &MParams,
    (m, sigma): (f64, f64),
    e: i32,
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
        let d = ldexp(sign * u.to_f64(), -e) - m;
        let r = d / sigma;
        let w = params.norm.weight(r, params.tuning);
        sw.add(w);
        swd.add(weighted_deviation(
            params.norm == Norm::Huber,
            w,
            d,
            r,
            params.tuning,
            sigma,
        ));
        if (d / sigma).abs() <= params.c {
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

/// Reduced sums by the bits of their `(m, σ)`.
type SumsCache = RefCell<Vec<((u64, u64), [f64; 6])>>;

/// The sums of [`m_sums`] reduced over a cluster by `reduce`, each `(m, σ)`
/// reduced once: the iteration asks for the sums at an iteration's start
/// twice (location step, then scale step).
struct Reduced<F, E> {
    reduce: RefCell<F>,
    /// The units' exponent.
    e: i32,
    n: usize,
    cache: SumsCache,
    error: RefCell<Option<E>>,
}

impl<F: FnMut((f64, f64), i32) -> Result<[f64; 6], E>, E> Reduced<F, E> {
    fn sums(&self, m: f64, sigma: f64) -> [f64; 6] {
        let keyed = (m.to_bits(), sigma.to_bits());
        if let Some((_, s)) = self.cache.borrow().iter().find(|(k, _)| *k == keyed) {
            return *s;
        }
        if self.error.borrow().is_some() {
            return [f64::NAN; 6];
        }
        match (self.reduce.borrow_mut())((m, sigma), self.e) {
            Ok(s) => {
                self.cache.borrow_mut().push((keyed, s));
                s
            }
            Err(e) => {
                *self.error.borrow_mut() = Some(e);
                [f64::NAN; 6]
            }
        }
    }
}

impl<F: FnMut((f64, f64), i32) -> Result<[f64; 6], E>, E> Sums for Reduced<F, E> {
    fn len(&self) -> usize {
        self.n
    }
    fn location(&self, _p: &MParams, m: f64, sigma: f64) -> (f64, f64) {
        let s = self.sums(m, sigma);
        (s[0], s[1])
    }
    fn scale(&self, _c: f64, mu: f64, sigma: f64, nmu: f64) -> (f64, usize) {
        // The inlier set is that of (μ_t, σ_t), whose sums the iteration's
        // first location step already brought: Σ_I (s − ν)² from the
        // moments about μ_t, ν = μ_{t+1}.
        let s = self.sums(mu, sigma);
        let delta = nmu - mu;
        let ss = (s[4] - 2.0 * delta * s[3] + s[2] * delta * delta) / (sigma * sigma);
        (ss.max(0.0), s[5] as usize)
    }
}

/// Huber's proposal 2 on `n` scores spread over a cluster, from
/// `(mu0, sigma0)` (the median and the nMAD or its fallback, `sigma0 > 0`)
/// with `largest` the largest |score|: every sum is the [`m_sums`] of each
/// partition added up by `reduce((m, σ), e)`. The first error of `reduce`
/// stops the iteration and is returned.
///
/// The iteration runs in the in-memory fit's units (`mest`): the scores
/// times 2^-e with σ₀·2^-e in [1, 2), e raised so the largest stays below
/// 2^1021; `(m, σ)` handed to `reduce` are in those units. The estimate
/// is therefore equivariant under scaling the scores by a power of two,
/// as the in-memory one, across the whole double range; a σ₀ or a final
/// scale beyond the double range is refused with the in-memory message
/// (contract §5).
pub fn m_iterate_reduced<E: From<Error>>(
    reduce: impl FnMut((f64, f64), i32) -> Result<[f64; 6], E>,
    params: &MParams,
    n: usize,
    (mu0, sigma0): (f64, f64),
    largest: f64,
) -> Result<MEstimate, E> {
    params.check()?;
    if !sigma0.is_finite() {
        return Err(Error::beyond_range("scale", "the starting scale of M-estimation").into());
    }
    let e = unit_exponent(sigma0, largest, 1023);
    let reduced = Reduced {
        reduce: RefCell::new(reduce),
        e,
        n,
        cache: RefCell::new(Vec::new()),
        error: RefCell::new(None),
    };
    let est = iterate(
        &reduced,
        params,
        ldexp(mu0, -e),
        ldexp(sigma0, -e),
        StartScale::Nmad,
    );
    if let Some(err) = reduced.error.into_inner() {
        return Err(err);
    }
    Ok(unscaled(est, e, params.norm)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimators::mest::{m_estimate, Norm};
    use crate::sample::{NanPolicy, Sample};

    #[test]
    fn keys_round_trip_and_order() {
        let v = [-f64::MAX, -1.0, -0.0, 0.0, 5e-324, 1.0, f64::MAX];
        for w in v.windows(2) {
            assert!(order_key(w[0]) < order_key(w[1]));
        }
        for &x in &v {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
        let (below, h) =
            histogram(&[1.0, 2.0, f64::NAN, 3.0], Key::VALUE, order_key(2.0), 0, 1).unwrap();
        assert_eq!((below, h), (1, vec![1]));
        assert_eq!(quantile_value(4, 0.25, &[2.0, 3.0]), 2.75);
        assert_eq!(median_value(&[1.0, 2.0]), 1.5);
    }

    #[test]
    fn refuses_what_it_cannot_do() {
        assert!(histogram(&[1.0], Key::VALUE, 0, 64, 1).is_err());
        assert!(histogram(&[1.0], Key::VALUE, 0, 0, MAX_BUCKETS + 1).is_err());
        assert!(select(vec![1.0, 2.0], &[1, 0]).is_err());
        assert!(select(vec![1.0, 2.0], &[2]).is_err());
        assert_eq!(
            select(vec![3.0, 1.0, 2.0], &[0, 2]).unwrap(),
            vec![1.0, 3.0]
        );
        assert!(quantile_ranks(0, 0.5).is_err());
        assert!(quantile_ranks(3, 1.5).is_err());
    }

    #[test]
    fn partial_sums_add_up_exactly() {
        let x = [1e16, 1.0, -1e16, 3.0, 0.5];
        let halves = [
            sum_below(&x[..2], false, 2.0),
            sum_below(&x[2..], false, 2.0),
        ];
        // Kept: 1, −1e16, 0.5 (and no tie): the exact sum, rounded once.
        assert_eq!(halves.iter().map(|p| p.count).sum::<u64>(), 3);
        assert_eq!(exact_total(&halves, 2.0, 1).value(), -1e16 + 3.5);
    }

    #[test]
    fn reduced_iteration_is_the_in_memory_one() {
        let x: Vec<f64> = (0..200)
            .map(|i| f64::from(i % 17) + f64::from(i) * 0.01)
            .collect();
        let p = MParams::new(Norm::Huber);
        let local = m_estimate(&Sample::new(&x, NanPolicy::Omit, false).unwrap(), &p).unwrap();
        let (a, b) = x.split_at(77);
        let sample = Sample::new(&x, NanPolicy::Omit, false).unwrap();
        let start = (
            crate::estimators::location::median(&sample),
            crate::estimators::scale::nmad(&sample),
        );
        let remote = m_iterate_reduced::<Error>(
            |ms, e| {
                let (u, v) = (m_sums(a, false, &p, ms, e), m_sums(b, false, &p, ms, e));
                Ok(core::array::from_fn(|i| u[i] + v[i]))
            },
            &p,
            x.len(),
            start,
            16.0 + 1.99,
        )
        .unwrap();
        assert!((remote.location - local.location).abs() <= 1e-12 * local.location.abs());
        assert!((remote.scale - local.scale).abs() <= 1e-12 * local.scale);
        let failed = m_iterate_reduced(|_, _| Err(Error::NoProbabilities), &p, 3, (0.0, 1.0), 1.0);
        assert_eq!(failed, Err(Error::NoProbabilities));
    }
}
