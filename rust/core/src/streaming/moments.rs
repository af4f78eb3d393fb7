//! Exact running state for the mean, the standard deviation and the
//! extremes, mergeable across batches and workers.
//!
//! * The sum is the exact accumulator of [`crate::numeric::sum`] (a batch
//!   summed by [`crate::numeric::extract`]): the
//!   running mean is `fl(fl(Σx)/n)`, bit for bit the in-memory mean
//!   whatever the batches.
//! * The second moment is kept about a fixed shift `c` (the first batch's
//!   mean), as double-double sums of `d = x − c` and `d²` in units of `2^K`
//!   (`K` follows the largest deviation seen) so that nothing overflows or
//!   underflows at the ends of the float range. A batch adds
//!   `Σd = Σx − n_b·c`, exact from its exact sum, and
//!   `Σd² = Σ(x − x̄_b)² + (Σd)²/n_b`, where the first term is the
//!   in-memory SD's read about the batch's own mean (deviations that small
//!   lose nothing the shift could amplify). A batch whose mean is near the
//!   shift (`(Σd)²/n_b` at most a sixteenth of `Σd²`: any stationary
//!   stream) needs no read of its own for that: `Σd²` taken in the read
//!   that extracts its exact sum is as accurate, so a later batch is read
//!   once, the first twice (census and mean, then sum and squares) — as
//!   often as the in-memory fit reads the scores. Scores beyond 2^900 and spreads
//!   below 2^-900 take the exact route instead: each `d` formed by TwoSum and
//!   squared by FMA. Then `Σ(x − x̄)² = Σd² − (Σd)²/n` is evaluated in
//!   double-double: the SD is correct to the last bit or so for any split
//!   into batches — within 1e-15 relative of the in-memory
//!   [`crate::estimators::scale::std`].
//! * min and max are exact.
//!
//! NaN and ±inf follow contract §5 per batch: a batch with ±inf (or with
//! NaN under `nan_policy = raise`) is refused whole and leaves the state
//! unchanged; NaN are otherwise skipped.

use crate::error::Error;
use crate::numeric::double_double::DoubleDouble;
use crate::numeric::extract::{exact_sum_within, scan_with_squares, scan_within_exponent};
use crate::numeric::float::Float;
use crate::numeric::par::map_chunks;
use crate::numeric::reduce::{binary_exponent, mean_of, pow2, spread_exponent, squares, Squares};
use crate::numeric::sum::{exact_product, two_sum, ExactSum};
use crate::sample::{check_batch, NanPolicy};
use crate::streaming::stored::{check_moments, MomentsParts};

/// What [`Moments::update`] reads from a batch: its non-NaN count, their
/// extremes and their exact sum.
struct Scan {
    count: usize,
    min: f64,
    max: f64,
    sum: ExactSum,
}

impl Scan {
    const EMPTY: Scan = Scan {
        count: 0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        sum: ExactSum::ZERO,
    };
}

/// Running count, exact sum, shifted moments and extremes.
#[derive(Debug, Clone, PartialEq)]
pub struct Moments {
    n: u64,
    sum: ExactSum,
    shift: f64,
    k: i32,
    /// Σ (x − shift)·2^-k.
    dsum: DoubleDouble,
    /// Σ ((x − shift)·2^-k)².
    dsq: DoubleDouble,
    min: f64,
    max: f64,
}

/// `e` with `2^(e−1) <= v < 2^e`, or `None` for zero.
fn exponent_above(v: f64) -> Option<i32> {
    (v > 0.0 && v.is_finite()).then(|| binary_exponent(v) + 1)
}

/// [`exponent_above`] of half the largest deviation `max(hi − c, c − lo)`,
/// plus one: the deviation itself where it is finite, its halves only where
/// it overflows, since halving a subnormal deviation (the smallest is
/// 2⁻¹⁰⁷⁴) rounds it to 0 and would leave the squares unscaled.
fn half_gap_exponent(lo: f64, hi: f64, c: f64) -> Option<i32> {
    let gap = (hi - c).max(c - lo);
    if gap.is_finite() {
        return exponent_above(gap);
    }
    exponent_above((hi / 2.0 - c / 2.0).max(c / 2.0 - lo / 2.0)).map(|e| e + 1)
}

/// Whether a value is so large that `a − b` of two such could overflow.
fn is_huge(v: f64) -> bool {
    v.abs() >= f64::MAX / 4.0
}

crate::numeric::simd::multiversion! {
    /// Σ d and Σ d² over d = (x − c)·2^-k (NaN skipped), double-double,
    /// with `x − c` formed exactly (pre-scaled by 2^-pre when huge).
    fn shifted_sums<T: Float>(x: &[T], c: f64, pre: i32, f1: f64, f2: f64) -> (DoubleDouble, DoubleDouble) {
        // Eight independent lanes: the TwoSum chains are latency-bound, and
        // eight hide the latency (3.4x faster than four, measured).
        const L: usize = 8;
        let (mut s_hi, mut s_lo) = ([0.0f64; L], [0.0f64; L]);
        let (mut q_hi, mut q_lo) = ([0.0f64; L], [0.0f64; L]);
        let p = if pre == 0 { 1.0 } else { 0.25 };
        let cp = c * p;
        // One score into lane i; the same steps for the full groups and
        // the remainder, so both sum the same way.
        let mut add = |i: usize, v: T| {
            let v = v.to_f64();
            let v = if v.is_nan() { c } else { v };
            let (d, e) = two_sum(v * p, -cp);
            let (d, e) = (d * f1 * f2, e * f1 * f2);
            let (a, b) = two_sum(s_hi[i], d);
            s_hi[i] = a;
            s_lo[i] += b + e;
            let sq = d * d;
            let sq_err = d.mul_add(d, -sq) + 2.0 * d * e;
            let (a, b) = two_sum(q_hi[i], sq);
            q_hi[i] = a;
            q_lo[i] += b + sq_err;
        };
        let mut groups = x.chunks_exact(L);
        for g in &mut groups {
            for (i, &v) in g.iter().enumerate() {
                add(i, v);
            }
        }
        for (i, &v) in groups.remainder().iter().enumerate() {
            add(i, v);
        }
        let (mut s, mut q) = (DoubleDouble::default(), DoubleDouble::default());
        for i in 0..L {
            s += DoubleDouble::new(s_hi[i], s_lo[i]);
            q += DoubleDouble::new(q_hi[i], q_lo[i]);
        }
        (s, q)
    }
}

/// Whether the squares of deviations from `c` may be taken at the scale
/// `2^-k` in the read of scores below `2^e`: the ranges
/// [`Moments::centered_sums`] needs, so that neither `x·2^-k` nor
/// `c·2^-k` overflows.
fn fused_scales(e: i32, c: f64, k: i32) -> bool {
    e <= 900 && e - k <= 1000 && c.abs() < pow2(900) && (-900..=900).contains(&k)
}

/// Splits `2^e` into two factors in the normal range.
fn factors(e: i32) -> (f64, f64) {
    let a = e / 2;
    let b = e - a;
    (libm::scalbn(1.0, a), libm::scalbn(1.0, b))
}

impl Default for Moments {
    fn default() -> Self {
        Moments::new()
    }
}

impl Moments {
    /// The empty state.
    pub fn new() -> Self {
        Moments {
            n: 0,
            sum: ExactSum::zero(),
            shift: 0.0,
            k: 0,
            dsum: DoubleDouble::default(),
            dsq: DoubleDouble::default(),
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    /// Scores seen (NaN excluded).
    pub fn n(&self) -> u64 {
        self.n
    }

    /// The scale exponent, if it matters: sums that are all zero (every
    /// score equal to the shift) hold in any units.
    fn scale_exponent(&self) -> Option<i32> {
        (self.dsq.hi != 0.0 || self.dsum.hi != 0.0).then_some(self.k)
    }

    /// Moves the shifted sums to units of 2^k (k at least the current
    /// exponent when that matters).
    fn rescale(&mut self, k: i32) {
        if self.scale_exponent().is_none() {
            self.k = k;
        } else if k > self.k {
            let e = self.k - k;
            self.dsum = self.dsum.scale(e);
            self.dsq = self.dsq.scale(2 * e);
            self.k = k;
        }
    }

    /// A batch's census and exact sum: in one read, for the range the
    /// scores seen so far span (a later batch of the same stream mostly
    /// stays in it), else (the first batch, a batch beyond that range, a
    /// refused batch) by the census of [`check_batch`] and a second read.
    /// Where the scales allow, the read that extracts the sum also takes
    /// the squares of the deviations from the shift (the first batch's:
    /// its mean, known from the census), for [`Moments::sums_from_squares`].
    fn scan<T: Float>(
        &self,
        x: &[T],
        nan_policy: NanPolicy,
    ) -> Result<(Scan, Option<Squares>), Error> {
        let seen = self.min.abs().max(self.max.abs());
        if let Some(e) = exponent_above(seen).filter(|_| self.n > 0) {
            let ks = self.scale_exponent().unwrap_or(e + 1);
            let (b, squares) = if fused_scales(e, self.shift, ks) {
                let (b, q) = scan_with_squares(x, e, self.shift, ks);
                (b, Some(q))
            } else {
                (scan_within_exponent(x, e), None)
            };
            let refused = b.min == f64::NEG_INFINITY
                || b.max == f64::INFINITY
                || (b.nan > 0 && nan_policy == NanPolicy::Raise);
            if !refused {
                let count = x.len() - b.nan;
                if count == 0 {
                    return Ok((Scan::EMPTY, None));
                }
                let bound = b.max.abs().max(b.min.abs());
                let sum = b.sum.unwrap_or_else(|| exact_sum_within(x, bound));
                let scan = Scan {
                    count,
                    min: b.min,
                    max: b.max,
                    sum,
                };
                return Ok((scan, squares));
            }
        }
        let summary = check_batch(x, nan_policy)?;
        if summary.count == 0 {
            return Ok((Scan::EMPTY, None));
        }
        let (min, max) = (summary.min, summary.max);
        // The exact value itself (not a certified rounding of it), so that
        // sums of batches stay exact.
        let bound = max.abs().max(min.abs());
        if self.n == 0 {
            // The shift the first batch sets is its mean.
            let c = mean_of(x, &summary);
            if let (Some(e), Some(ks)) = (exponent_above(bound), half_gap_exponent(min, max, c)) {
                if fused_scales(e, c, ks) {
                    let (b, q) = scan_with_squares(x, e, c, ks);
                    let sum = b.sum.unwrap_or_else(|| exact_sum_within(x, bound));
                    let squares = (sum.mean(summary.count) == c).then_some(q);
                    let scan = Scan {
                        count: summary.count,
                        min,
                        max,
                        sum,
                    };
                    return Ok((scan, squares));
                }
            }
        }
        Ok((
            Scan {
                count: summary.count,
                min,
                max,
                sum: exact_sum_within(x, bound),
            },
            None,
        ))
    }

    /// Adds a batch under the §5 rules; returns how many scores it added.
    pub fn update<T: Float>(&mut self, x: &[T], nan_policy: NanPolicy) -> Result<usize, Error> {
        let (
            Scan {
                count,
                min,
                max,
                sum: batch_sum,
            },
            squares,
        ) = self.scan(x, nan_policy)?;
        if count == 0 {
            return Ok(0);
        }
        let bound = max.abs().max(min.abs());
        if self.n == 0 {
            self.shift = batch_sum.mean(count);
        }
        let c = self.shift;
        if let Some(e) = half_gap_exponent(min, max, c) {
            let k = e.max(self.scale_exponent().unwrap_or(i32::MIN));
            self.rescale(k);
        }
        let (s, q) = if bound.max(c.abs()) < pow2(900) && (-900..=900).contains(&self.k) {
            squares
                .and_then(|sq| self.sums_from_squares(&sq, count, min, max, &batch_sum))
                .unwrap_or_else(|| self.centered_sums(x, count, min, max, &batch_sum))
        } else {
            let pre = if is_huge(max) || is_huge(min) || is_huge(c) {
                2
            } else {
                0
            };
            let (f1, f2) = factors(pre - self.k);
            map_chunks(x, |_, chunk| shifted_sums(chunk, c, pre, f1, f2))
                .into_iter()
                .fold(
                    (DoubleDouble::default(), DoubleDouble::default()),
                    |(s, q), (a, b)| (s + a, q + b),
                )
        };
        self.dsum += s;
        self.dsq += q;
        self.n += count as u64;
        self.sum.merge(&batch_sum);
        self.min = self.min.min(min);
        self.max = self.max.max(max);
        Ok(count)
    }

    /// A batch's Σ(x − c)·2^-k and Σ((x − c)·2^-k)² from one read: the
    /// batch's own sum of squared deviations (the in-memory SD's read, about
    /// the batch mean) plus `D²/n_b`, with `D = Σx − n_b·c` taken exactly
    /// from the batch's exact sum. The deviations about the batch mean are
    /// small, so plain sums of their squares lose nothing that the shift
    /// would amplify; the shift enters only through the exact `D`. Needs
    /// the scores and `c` below 2^900 and `k` in [-900, 900] (`D·2^-k`
    /// and back stay normal and finite).
    fn centered_sums<T: Float>(
        &self,
        x: &[T],
        count: usize,
        min: f64,
        max: f64,
        batch_sum: &ExactSum,
    ) -> (DoubleDouble, DoubleDouble) {
        let k = self.k;
        let m = batch_sum.mean(count);
        let kb = spread_exponent(min, max, m);
        let sq = squares(x, false, m, kb, f64::INFINITY);
        let n = count as f64;
        let own = (sq.scaled_squares - sq.scaled_sum * sq.scaled_sum / n).max(0.0);
        let own = DoubleDouble { hi: own, lo: 0.0 }.scale(2 * (kb - k));
        let dsum = self.exact_deviation_sum(batch_sum, count);
        (dsum, own + dsum * dsum / n)
    }

    /// `D·2^-k` with `D = Σx − n_b·c`, from the batch's exact sum: exact to
    /// a double-double.
    fn exact_deviation_sum(&self, batch_sum: &ExactSum, count: usize) -> DoubleDouble {
        let k = self.k;
        let mut d = batch_sum.clone();
        d.merge(&exact_product(-self.shift, count));
        let hi = d.scaled_value(-k);
        d.merge(&ExactSum::from(-hi * pow2(k)));
        DoubleDouble::new(hi, d.scaled_value(-k))
    }

    /// [`Moments::centered_sums`] from the squares about the shift itself,
    /// taken in the read that extracted the batch's sum, when they are as
    /// accurate: `Σ(x − c)² = Σ(x − x̄_b)² + D²/n_b`, and each square errs
    /// by a few ulp of itself, so the batch's own spread inherits the
    /// error of `Σ(x − c)²` amplified by `1 + D²/n_b / Σ(x − x̄_b)²`. With
    /// `D²/n_b` at most a sixteenth of the squares (the batch's mean near
    /// the shift, as in a stationary stream) that is at most 16/15: the
    /// accuracy of the read about the batch's own mean. The squares were
    /// taken at the scale 2^-k₀ of the state before the batch: the batch's
    /// largest deviation must be within 2^±300 of it (no square underflows
    /// to lose digits that matter, none overflows). Otherwise `None`, and
    /// the batch is read once more about its own mean.
    fn sums_from_squares(
        &self,
        sq: &Squares,
        count: usize,
        min: f64,
        max: f64,
        batch_sum: &ExactSum,
    ) -> Option<(DoubleDouble, DoubleDouble)> {
        let within = |e: i32| (-300..=300).contains(&e);
        let gap = half_gap_exponent(min, max, self.shift);
        if !within(sq.k - self.k) || gap.is_some_and(|g| !within(g - sq.k)) {
            return None;
        }
        let dsum = self.exact_deviation_sum(batch_sum, count);
        let q = DoubleDouble {
            hi: sq.scaled_squares,
            lo: 0.0,
        }
        .scale(2 * (sq.k - self.k));
        let shifted = dsum * dsum / count as f64;
        (q.hi.is_finite() && 16.0 * shifted.hi <= q.hi).then_some((dsum, q))
    }

    /// Adds everything `other` has seen.
    pub fn merge(&mut self, other: &Moments) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = other.clone();
            return;
        }
        let (c1, c2) = (self.shift, other.shift);
        let k = self
            .scale_exponent()
            .max(other.scale_exponent())
            .into_iter()
            .chain(half_gap_exponent(c2, c2, c1))
            .max()
            .unwrap_or(0);
        self.rescale(k);
        let mut o = other.clone();
        o.rescale(k);
        // δ = c2 − c1 in units of 2^k, exactly as a double-double.
        let pre = if is_huge(c1) || is_huge(c2) { 2 } else { 0 };
        let p = if pre == 0 { 1.0 } else { 0.25 };
        let (d, e) = two_sum(c2 * p, -(c1 * p));
        let delta = DoubleDouble::new(d, e).scale(pre - k);
        let n2 = o.n as f64;
        // x − c1 = (x − c2) + δ.
        let moved_sq = o.dsq + delta * o.dsum * 2.0 + delta * delta * n2;
        let moved_sum = o.dsum + delta * n2;
        self.dsum += moved_sum;
        self.dsq += moved_sq;
        self.n += o.n;
        self.sum.merge(&o.sum);
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    fn require(&self) -> Result<(), Error> {
        if self.n == 0 {
            Err(Error::Empty { len: 0 })
        } else {
            Ok(())
        }
    }

    /// `fl(fl(Σx)/n)`: the in-memory mean, bit for bit.
    pub fn mean(&self) -> Result<f64, Error> {
        self.require()?;
        Ok(self.sum.mean(self.n as usize))
    }

    /// `sqrt(Σ(x − x̄)²/(n − ddof))`.
    pub fn std(&self, ddof: usize) -> Result<f64, Error> {
        self.require()?;
        if ddof as u64 >= self.n {
            return Err(Error::InvalidParameter {
                name: "ddof",
                reason: format!(
                    "must be smaller than the number of scores ({}), got {ddof}",
                    self.n
                ),
            });
        }
        let n = self.n as f64;
        let centered = self.dsq + -(self.dsum * self.dsum / n);
        let var = centered / (self.n - ddof as u64) as f64;
        Ok(libm::scalbn(var.sqrt(), self.k))
    }

    /// Exact extremes `(min, max)`.
    pub fn extremes(&self) -> Result<(f64, f64), Error> {
        self.require()?;
        Ok((self.min, self.max))
    }

    /// The exact sum of the scores seen.
    pub fn exact_sum(&self) -> &ExactSum {
        &self.sum
    }

    /// The state as plain numbers.
    pub fn to_parts(&self) -> MomentsParts {
        let (neg, limbs) = self.sum.to_limbs().unwrap_or((false, Vec::new()));
        MomentsParts {
            n: self.n,
            sum_negative: neg,
            sum_limbs: limbs,
            shift: self.shift,
            k: self.k,
            dsum: [self.dsum.hi, self.dsum.lo],
            dsq: [self.dsq.hi, self.dsq.lo],
            min: self.min,
            max: self.max,
        }
    }

    /// Rebuilds a state from [`Moments::to_parts`]; stored parts are
    /// untrusted and checked whole first ([`check_moments`]).
    pub fn from_parts(p: &MomentsParts) -> Result<Self, Error> {
        check_moments(p)?;
        if p.n == 0 {
            return Ok(Moments::new());
        }
        Ok(Moments {
            n: p.n,
            sum: ExactSum::from_limbs(p.sum_negative, &p.sum_limbs),
            shift: p.shift,
            k: p.k,
            dsum: DoubleDouble::new(p.dsum[0], p.dsum[1]),
            dsq: DoubleDouble::new(p.dsq[0], p.dsq[1]),
            min: p.min,
            max: p.max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimators::location::mean;
    use crate::estimators::scale::std;
    use crate::sample::Sample;
    use proptest::prelude::*;

    fn in_memory(x: &[f64], ddof: usize) -> (f64, f64) {
        let s = Sample::new(x, NanPolicy::Omit, false).unwrap();
        (mean(&s), std(&s, ddof).unwrap())
    }

    fn streamed(x: &[f64], cuts: &[usize], ddof: usize, by_merge: bool) -> (f64, f64) {
        let mut bounds: Vec<usize> = cuts.iter().map(|&c| c % (x.len() + 1)).collect();
        bounds.push(0);
        bounds.push(x.len());
        bounds.sort_unstable();
        let mut total = Moments::new();
        for w in bounds.windows(2) {
            let part = &x[w[0]..w[1]];
            if by_merge {
                let mut m = Moments::new();
                m.update(part, NanPolicy::Omit).unwrap();
                total.merge(&m);
            } else {
                total.update(part, NanPolicy::Omit).unwrap();
            }
        }
        let back = Moments::from_parts(&total.to_parts()).unwrap();
        assert_eq!(back, total);
        (total.mean().unwrap(), total.std(ddof).unwrap())
    }

    fn close(a: f64, b: f64) -> bool {
        a == b || (a - b).abs() <= 1e-15 * b.abs()
    }

    #[test]
    fn extremes_of_the_float_range() {
        let cases: Vec<Vec<f64>> = vec![
            vec![1e300, -1e300, 5e299, 3e300],
            vec![f64::MAX, -f64::MAX, f64::MAX / 3.0],
            vec![f64::MAX, f64::MAX * 0.75, f64::MAX * 0.5],
            vec![1e-310, -1e-310, 3e-312, 5e-324],
            vec![1e-300, 2e-300, 1e-301],
            vec![1e15 + 1.0, 1e15 + 2.0, 1e15 + 4.0, 1e15],
            vec![7.0; 9],
            vec![1e200, 1.0, 1e-200],
            // Batches one score apart at the bottom of the range: half the
            // gap between their shifts rounds to 0.
            vec![0.0, 5e-324, 1e-323],
            vec![5e-324, 0.0, -5e-324, 1.5e-323],
        ];
        for x in &cases {
            // The in-memory SD squares deviations that may overflow at the
            // very top of the range; rescaled by an exact power of two it
            // is the oracle.
            let big = x.iter().any(|v| v.abs() > 1e300);
            let f = if big { 2f64.powi(-16) } else { 1.0 };
            let y: Vec<f64> = x.iter().map(|v| v * f).collect();
            let want = (in_memory(x, 0).0, in_memory(&y, 0).1 / f);
            for cuts in [&[][..], &[1], &[1, 2], &[2, 3], &[1, 2, 3]] {
                for merge in [false, true] {
                    let got = streamed(x, cuts, 0, merge);
                    assert_eq!(got.0.to_bits(), want.0.to_bits(), "{x:?}");
                    assert!(close(got.1, want.1), "{x:?} {cuts:?}: {got:?} vs {want:?}");
                }
            }
        }
    }

    #[test]
    fn section5_rules_per_batch() {
        let mut m = Moments::new();
        assert_eq!(m.update(&[1.0, f64::NAN, 3.0], NanPolicy::Omit).unwrap(), 2);
        let before = m.clone();
        assert!(m.update(&[1.0, f64::INFINITY], NanPolicy::Omit).is_err());
        assert!(m.update(&[f64::NAN], NanPolicy::Raise).is_err());
        assert_eq!(m, before);
        assert_eq!(m.update(&[f64::NAN], NanPolicy::Omit).unwrap(), 0);
        assert_eq!(m.mean().unwrap(), 2.0);
        assert!(Moments::new().mean().is_err());
        assert!(m.std(2).is_err());
        assert_eq!(m.extremes().unwrap(), (1.0, 3.0));
    }

    fn normals(seed: u64, n: usize) -> Vec<f64> {
        let mut u = crate::numeric::testing::uniforms(seed);
        (0..n)
            .map(|_| (-2.0 * (1.0 - u()).ln()).sqrt() * (std::f64::consts::TAU * u()).cos())
            .collect()
    }

    /// A batch whose mean is near the shift takes its squares from the
    /// read that extracted its sum, as accurate as the read about its own
    /// mean; a batch far from the shift (a drifting stream) is read again.
    #[test]
    fn squares_of_one_read_only_for_a_batch_near_the_shift() {
        let mut first = normals(11, 1000);
        first.extend([-100.0, 100.0]);
        let mut m = Moments::new();
        m.update(&first, NanPolicy::Omit).unwrap();
        let near = normals(12, 1000);
        let far: Vec<f64> = near.iter().map(|v| 30.0 + v / 10.0).collect();
        for (batch, one_read) in [(&near, true), (&far, false)] {
            let (scan, sq) = m.scan(batch, NanPolicy::Omit).unwrap();
            let sq = sq.expect("the scales allow the squares in the same read");
            // Within the range seen: the state's scale does not change.
            assert!(half_gap_exponent(scan.min, scan.max, m.shift).unwrap() <= m.k);
            let got = m.sums_from_squares(&sq, scan.count, scan.min, scan.max, &scan.sum);
            assert_eq!(got.is_some(), one_read);
            let want = m.centered_sums(batch, scan.count, scan.min, scan.max, &scan.sum);
            if let Some((dsum, q)) = got {
                assert_eq!(dsum, want.0);
                let (q, w) = (q.hi + q.lo, want.1.hi + want.1.lo);
                assert!((q - w).abs() <= 1e-15 * w, "{q} vs {w}");
            }
        }
        // Either way the stream is the in-memory fit.
        let all: Vec<f64> = [&first[..], &near[..], &far[..]].concat();
        let want = in_memory(&all, 1);
        for cuts in [&[1002, 2002][..], &[500, 1002, 1500, 2002, 2500]] {
            let got = streamed(&all, cuts, 1, false);
            assert_eq!(got.0.to_bits(), want.0.to_bits());
            assert!(close(got.1, want.1), "{got:?} vs {want:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn any_split_equals_the_in_memory_fit(
            x in proptest::collection::vec(prop_oneof![
                -1e3f64..1e3,
                (-1.0f64..1.0).prop_map(|v| 1e12 + v),
                (-1.0f64..1.0).prop_map(|v| v * 1e-300),
                (-1.0f64..1.0).prop_map(|v| v * 1e300),
                Just(3.0),
            ], 2..300),
            cuts in proptest::collection::vec(0usize..400, 0..6),
            ddof in 0usize..2,
            merge in any::<bool>(),
        ) {
            let want = in_memory(&x, ddof);
            let got = streamed(&x, &cuts, ddof, merge);
            prop_assert_eq!(got.0.to_bits(), want.0.to_bits());
            prop_assert!(close(got.1, want.1), "{:?} vs {:?}", got, want);
        }
    }
}
