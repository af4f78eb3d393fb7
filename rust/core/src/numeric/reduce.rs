//! One-pass reductions over raw input: the sum (correctly rounded), Σ|x|,
//! min, max and the §5 census of NaN and ±inf — the first read of every
//! fit — and the sums of squares behind the SD.
//!
//! The sum is a double-double (TwoSum per element, in 16 independent
//! lanes) with an a-priori error bound; when the bound proves that rounding
//! the double-double gives the correctly rounded sum — almost always — that
//! is the result, otherwise the exact binned sum of [`crate::numeric::sum`] is taken.
//! Before that, a sum that is not certified is read once more with the low
//! parts themselves summed by TwoSum, keeping the size of what that rounds
//! away ([`sum_below`] always does so): on float32 data it is almost always
//! zero, so the double-double is the exact sum and rounds correctly even
//! when the sum lies exactly halfway between two doubles (frequent for
//! float32, whose sums need few bits beyond 53), where no nonzero error
//! bound could decide.
//! So the result equals `math.fsum`, for any order and any thread count, at
//! the speed of a compensated sum.

use crate::numeric::float::Float;
use crate::numeric::par::{map_chunks, CHUNK};
use crate::numeric::simd::multiversion;
use crate::numeric::sum::{exact_sum, two_sum, ExactSum};

const LANES: usize = 16;
const U: f64 = f64::EPSILON / 2.0;

/// Where the first of some values sits and how many there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Census {
    /// How many.
    pub count: usize,
    /// Index of the first (meaningless when `count == 0`).
    pub first: usize,
}

impl Census {
    pub(crate) fn add(&mut self, index: usize) {
        if self.count == 0 {
            self.first = index;
        }
        self.count += 1;
    }

    pub(crate) fn merge(&mut self, other: Census) {
        if self.count == 0 {
            self.first = other.first;
        }
        self.count += other.count;
    }
}

/// What one read of the data tells: sums, extremes and the non-finite
/// census. NaN are left out of everything but their census.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Elements that are not NaN.
    pub count: usize,
    /// NaN.
    pub nan: Census,
    /// ±inf.
    pub inf: Census,
    /// Smallest and largest non-NaN value (±inf if present; +inf/−inf when
    /// there is none).
    pub min: f64,
    pub max: f64,
    hi: f64,
    lo: f64,
    abs: f64,
    /// Σ of what the additions into `lo` rounded away (in magnitude): zero
    /// when `hi + lo` is the exact sum.
    lo_err: f64,
    /// Longest chain of additions into one lane, for the error bound.
    chain: usize,
    chunks: usize,
}

/// `*acc += v` with what the addition rounded away added to `err`.
#[inline(always)]
fn add_tracked(acc: &mut f64, v: f64, err: &mut f64) {
    let (s, e) = two_sum(*acc, v);
    *acc = s;
    *err += e.abs();
}

#[derive(Clone, Copy)]
struct Lanes {
    hi: [f64; LANES],
    lo: [f64; LANES],
    abs: [f64; LANES],
    min: [f64; LANES],
    max: [f64; LANES],
}

multiversion! {
    /// The double-double sum, Σ|x|, min and max of a chunk without NaN
    /// handling (a NaN poisons `hi`, which the caller checks).
    fn chunk_fast<T: Float>(x: &[T]) -> (f64, f64, f64, f64, f64) {
        let mut l = Lanes {
            hi: [0.0; LANES],
            lo: [0.0; LANES],
            abs: [0.0; LANES],
            min: [f64::INFINITY; LANES],
            max: [f64::NEG_INFINITY; LANES],
        };
        let mut groups = x.chunks_exact(LANES);
        for g in &mut groups {
            for i in 0..LANES {
                let v = g[i].to_f64();
                let (s, e) = two_sum(l.hi[i], v);
                l.hi[i] = s;
                l.lo[i] += e;
                l.abs[i] += v.abs();
                l.min[i] = if v < l.min[i] { v } else { l.min[i] };
                l.max[i] = if v > l.max[i] { v } else { l.max[i] };
            }
        }
        for (i, &v) in groups.remainder().iter().enumerate() {
            let v = v.to_f64();
            let (s, e) = two_sum(l.hi[i], v);
            l.hi[i] = s;
            l.lo[i] += e;
            l.abs[i] += v.abs();
            l.min[i] = l.min[i].min(v);
            l.max[i] = l.max[i].max(v);
        }
        let (mut hi, mut lo, mut abs) = (0.0, 0.0, 0.0);
        let (mut mn, mut mx) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..LANES {
            let (s, e) = two_sum(hi, l.hi[i]);
            hi = s;
            lo += e + l.lo[i];
            abs += l.abs[i];
            mn = mn.min(l.min[i]);
            mx = mx.max(l.max[i]);
        }
        (hi, lo, abs, mn, mx)
    }
}

fn chunk_summary<T: Float>(offset: usize, x: &[T]) -> Summary {
    let (hi, lo, abs, min, max) = chunk_fast(x);
    let mut s = Summary {
        count: x.len(),
        nan: Census::default(),
        inf: Census::default(),
        min,
        max,
        hi,
        lo,
        abs,
        // Not tracked on this path (its bound decides): nonzero.
        lo_err: f64::INFINITY,
        chain: x.len().div_ceil(LANES) + LANES,
        chunks: 1,
    };
    if hi.is_finite() && abs.is_finite() {
        return s;
    }
    // NaN or ±inf somewhere in this chunk (or an overflow): the careful
    // scalar path counts them and leaves NaN out.
    s = Summary::empty();
    s.lo_err = f64::INFINITY;
    s.chunks = 1;
    s.chain = x.len() + LANES;
    for (i, &v) in x.iter().enumerate() {
        let v = v.to_f64();
        if v.is_nan() {
            s.nan.add(offset + i);
            continue;
        }
        if v.is_infinite() {
            s.inf.add(offset + i);
        }
        s.count += 1;
        let (t, e) = two_sum(s.hi, v);
        s.hi = t;
        s.lo += e;
        s.abs += v.abs();
        s.min = s.min.min(v);
        s.max = s.max.max(v);
    }
    s
}

impl Summary {
    fn empty() -> Self {
        Summary {
            count: 0,
            nan: Census::default(),
            inf: Census::default(),
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            hi: 0.0,
            lo: 0.0,
            abs: 0.0,
            lo_err: 0.0,
            chain: 0,
            chunks: 0,
        }
    }

    fn merge(&mut self, other: &Summary) {
        let (s, e) = two_sum(self.hi, other.hi);
        self.hi = s;
        add_tracked(&mut self.lo, e, &mut self.lo_err);
        add_tracked(&mut self.lo, other.lo, &mut self.lo_err);
        self.lo_err += other.lo_err;
        self.abs += other.abs;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.nan.merge(other.nan);
        self.inf.merge(other.inf);
        self.chain = self.chain.max(other.chain);
        self.chunks += other.chunks;
    }

    /// Adds `v·n` as two terms of the double-double, its rounded product
    /// and that product's rounding error (exact by FMA), so that the
    /// certificate of [`Summary::certified_sum`] covers the whole sum; `n
    /// = 0` adds zeros, also for an infinite `v`.
    fn add_product(&mut self, v: f64, n: usize) {
        let (product, error) = if n == 0 {
            (0.0, 0.0)
        } else {
            let product = v * n as f64;
            (product, v.mul_add(n as f64, -product))
        };
        for term in [product, error] {
            let (s, e) = two_sum(self.hi, term);
            self.hi = s;
            add_tracked(&mut self.lo, e, &mut self.lo_err);
            self.abs += term.abs();
        }
        self.chunks += 2;
    }

    /// The double-double's distance to the exact sum is at most this. Every
    /// TwoSum is exact; only the low parts are summed with rounding: a
    /// chain of k additions of terms each at most u·Σ|x| errs by at most
    /// k²u²Σ|x| (lanes, then lanes of a chunk, then chunks), doubled for
    /// safety. Zero when no addition into `lo` rounded.
    fn error_bound(&self) -> f64 {
        if self.lo_err == 0.0 {
            return 0.0;
        }
        let k = (self.chain + self.chunks + LANES) as f64;
        2.0 * k * k * U * U * self.abs
    }

    /// The correctly rounded sum of the non-NaN values when the bound
    /// proves it, else `None`.
    fn certified_sum(&self) -> Option<f64> {
        let (r, t) = two_sum(self.hi, self.lo);
        if !r.is_finite() || !self.abs.is_finite() {
            return None;
        }
        let eps = self.error_bound();
        if r == 0.0 {
            return (eps == 0.0 && t == 0.0).then_some(0.0);
        }
        if eps == 0.0 {
            // hi + lo is the exact sum and r its rounding to nearest (ties
            // to even), also when it lies exactly halfway.
            return Some(r);
        }
        let a = r.abs();
        let half_gap = (a - a.next_down()).min(a.next_up() - a) / 2.0;
        (t.abs() + eps < half_gap).then_some(r)
    }
}

/// The summary of `x` (parallel over fixed chunks above a size threshold).
pub fn summarize<T: Float>(x: &[T]) -> Summary {
    let parts = map_chunks(x, chunk_summary);
    let mut total = Summary::empty();
    for p in &parts {
        total.merge(p);
    }
    total
}

/// The exactly rounded sum of the non-NaN values of `x`, given their
/// summary.
pub fn sum_of<T: Float>(x: &[T], summary: &Summary) -> ExactSum {
    if let Some(s) = summary.certified_sum() {
        return ExactSum::from(s);
    }
    if summary.inf.count == 0 {
        // Near a rounding boundary (for float32 data often exactly on a
        // tie): one read that tracks the low part's rounding usually
        // proves the double-double exact.
        let (sum, _) = sum_below(x, false, f64::INFINITY, |_| 0);
        return sum;
    }
    if summary.nan.count == 0 {
        exact_sum(x)
    } else {
        let mut total = ExactSum::zero();
        for c in x.chunks(CHUNK) {
            let kept: Vec<T> = c.iter().copied().filter(|v| !v.is_nan()).collect();
            total.merge(&exact_sum(&kept));
        }
        total
    }
}

/// The sum `Σx + n·v` over the non-NaN values of `x` (given their summary),
/// correctly rounded as one sum: `n·v` joins the double-double as its exact
/// product and rounding error (as the ties of [`sum_below`] do), so that a
/// total far below an ulp of Σx is not lost (the mean of the scores shifted
/// by an offset that nearly cancels them). Exact when the double-double
/// cannot certify its rounding.
pub fn sum_plus<T: Float>(x: &[T], summary: &Summary, v: f64, n: usize) -> ExactSum {
    if summary.inf.count == 0 && v.is_finite() {
        let mut total = *summary;
        total.add_product(v, n);
        if let Some(sum) = total.certified_sum() {
            return ExactSum::from(sum);
        }
    }
    let mut exact = crate::numeric::sum::exact_product(v, n);
    for c in x.chunks(CHUNK) {
        let kept: Vec<T> = c.iter().copied().filter(|u| !u.is_nan()).collect();
        exact.merge(&exact_sum(&kept));
    }
    exact
}

multiversion! {
    /// Double-double sum, Σ|·| and count of `sign·x` over the elements with
    /// `sign·x < below` (NaN never are).
    fn chunk_below<T: Float>(x: &[T], sign: f64, below: f64) -> (f64, f64, f64, usize, f64) {
        let (mut hi, mut lo, mut abs) = ([0.0f64; LANES], [0.0f64; LANES], [0.0f64; LANES]);
        let mut err = [0.0f64; LANES];
        let mut count = [0usize; LANES];
        let mut groups = x.chunks_exact(LANES);
        for g in &mut groups {
            for i in 0..LANES {
                let v = sign * g[i].to_f64();
                let take = v < below;
                let t = if take { v } else { 0.0 };
                let (s, e) = two_sum(hi[i], t);
                hi[i] = s;
                add_tracked(&mut lo[i], e, &mut err[i]);
                abs[i] += t.abs();
                count[i] += usize::from(take);
            }
        }
        for (i, &v) in groups.remainder().iter().enumerate() {
            let v = sign * v.to_f64();
            if v < below {
                let (s, e) = two_sum(hi[i], v);
                hi[i] = s;
                add_tracked(&mut lo[i], e, &mut err[i]);
                abs[i] += v.abs();
                count[i] += 1;
            }
        }
        let (mut h, mut l, mut a, mut c, mut r) = (0.0, 0.0, 0.0, 0, 0.0);
        for i in 0..LANES {
            let (s, e) = two_sum(h, hi[i]);
            h = s;
            add_tracked(&mut l, e, &mut r);
            add_tracked(&mut l, lo[i], &mut r);
            r += err[i];
            a += abs[i];
            c += count[i];
        }
        (h, l, a, c, r)
    }
}

/// The exact value of `Σ_{±x < v} ±x + ties·v` (the sum of the values
/// kept by an upper trim at v, `ties` copies of v included), and how many
/// values lie below v. `ties·v` joins the double-double as its exact
/// product and rounding error, so the certificate covers the whole sum; the
/// sum is returned exact (not rounded) so that a mean of values near the top
/// of the double range is taken before anything overflows.
pub fn sum_below<T: Float>(
    x: &[T],
    negate: bool,
    v: f64,
    ties: impl FnOnce(usize) -> usize,
) -> (ExactSum, usize) {
    let sign = if negate { -1.0 } else { 1.0 };
    let mut total = summary_below(x, sign, v);
    let below = total.count;
    let n_ties = ties(below);
    total.add_product(v, n_ties);
    if let Some(sum) = total.certified_sum() {
        return (ExactSum::from(sum), below);
    }
    let mut exact = crate::numeric::sum::exact_product(v, n_ties);
    for c in x.chunks(CHUNK) {
        let kept: Vec<f64> = c
            .iter()
            .map(|u| sign * u.to_f64())
            .filter(|&u| u < v)
            .collect();
        exact.merge(&exact_sum(&kept));
    }
    (exact, below)
}

/// The double-double sum of `sign·x` over the elements with `sign·x < v`,
/// the rounding of its low part tracked.
fn summary_below<T: Float>(x: &[T], sign: f64, v: f64) -> Summary {
    let parts = map_chunks(x, |_, c| chunk_below(c, sign, v));
    let mut total = Summary::empty();
    for (hi, lo, abs, count, lo_err) in parts {
        total.merge(&Summary {
            count,
            hi,
            lo,
            abs,
            lo_err,
            chain: CHUNK / LANES + LANES,
            chunks: 1,
            ..Summary::empty()
        });
    }
    total
}

/// `math.fsum(x) / N` over the non-NaN values.
pub fn mean_of<T: Float>(x: &[T], summary: &Summary) -> f64 {
    if let Some(s) = summary.certified_sum() {
        // What `ExactSum::mean` gives for a finite sum, without building
        // one: a fit of 100 scores spent most of its time there.
        return s / summary.count as f64;
    }
    sum_of(x, summary).mean(summary.count)
}

multiversion! {
    /// Σ(d·s)², Σ d·s and the count over d·s = sign·x·s − c·s with
    /// |d·s| < `below` (NaN never are), in lanes. Scaling each term before
    /// the difference is exact (s a power of two) and keeps ±x − c from
    /// overflowing when x and c sit at opposite ends of the double range.
    /// Each lane adds its squares in blocks of [`BLOCK_SQUARES`] and the
    /// blocks as a double-double: one long plain sum errs by up to ~100
    /// ulp on tied (e.g. integer) scores, whose equal terms round alike,
    /// a block by a few ulp of itself (contract §9: the SD within 1e-15).
    fn chunk_squares<T: Float>(x: &[T], sign: f64, c: f64, s: f64, below: f64) -> (f64, f64, usize) {
        let (mut hi, mut lo) = ([0.0f64; LANES], [0.0f64; LANES]);
        let (mut sq, mut lin) = ([0.0f64; LANES], [0.0f64; LANES]);
        let mut count = [0usize; LANES];
        let cs = c * s;
        let mut fold = |sq: &mut [f64; LANES]| {
            for i in 0..LANES {
                let (a, b) = two_sum(hi[i], sq[i]);
                hi[i] = a;
                lo[i] += b;
                sq[i] = 0.0;
            }
        };
        let mut blocks = x.chunks_exact(LANES * BLOCK_SQUARES);
        for block in &mut blocks {
            for g in block.chunks_exact(LANES) {
                for i in 0..LANES {
                    let d = (sign * s) * g[i].to_f64() - cs;
                    let take = d.abs() < below;
                    let ds = if take { d } else { 0.0 };
                    sq[i] += ds * ds;
                    lin[i] += ds;
                    count[i] += usize::from(take);
                }
            }
            fold(&mut sq);
        }
        for (j, &v) in blocks.remainder().iter().enumerate() {
            let i = j % LANES;
            let d = (sign * s) * v.to_f64() - cs;
            if d.abs() < below {
                sq[i] += d * d;
                lin[i] += d;
                count[i] += 1;
            }
        }
        fold(&mut sq);
        let mut total = crate::numeric::sum::Neumaier::default();
        for i in 0..LANES {
            total.add(hi[i]);
            total.add(lo[i]);
        }
        (total.value(), pairwise(&lin), count.iter().sum())
    }
}

/// Groups of [`LANES`] squares a lane adds plainly before the block goes
/// into its double-double sum.
const BLOCK_SQUARES: usize = 8;

#[inline(always)]
fn pairwise(v: &[f64; LANES]) -> f64 {
    let mut w = *v;
    let mut n = LANES;
    while n > 1 {
        n /= 2;
        for i in 0..n {
            w[i] += w[i + n];
        }
    }
    w[0]
}

/// Sums over the deviations `d = ±x − c` with `|d| < below` (NaN
/// skipped), taken of `d·2^-k`: the rescaling is exact and keeps the
/// squares away from overflow and underflow.
#[derive(Debug, Clone, Copy)]
pub struct Squares {
    /// Σ(d·2^-k)².
    pub scaled_squares: f64,
    /// Σ d·2^-k.
    pub scaled_sum: f64,
    /// How many deviations were summed.
    pub count: usize,
    /// The scale exponent.
    pub k: i32,
}

/// `k` with `2^k` near `max(hi − c, c − lo)`, the largest deviation from
/// `c` of values in [lo, hi], computed from halves so that the difference
/// itself cannot overflow.
pub fn spread_exponent(lo: f64, hi: f64, c: f64) -> i32 {
    let half = (hi * 0.5 - c * 0.5).max(c * 0.5 - lo * 0.5);
    if half > 0.0 && half.is_finite() {
        (binary_exponent(half) + 1).clamp(-1022, 1022)
    } else {
        0
    }
}

/// The deviations' sums over one read, rescaled by `2^-k` (k from
/// [`spread_exponent`], near their largest magnitude) so that squares
/// neither overflow nor underflow; `below` bounds |d| in unscaled units.
pub fn squares<T: Float>(x: &[T], negate: bool, c: f64, k: i32, below: f64) -> Squares {
    let sign = if negate { -1.0 } else { 1.0 };
    let s = pow2(-k);
    let below = below * s;
    let parts = map_chunks(x, |_, chunk| chunk_squares(chunk, sign, c, s, below));
    let (mut ss, mut lin, mut count) = (
        crate::numeric::sum::Neumaier::default(),
        crate::numeric::sum::Neumaier::default(),
        0,
    );
    for (q, l, n) in parts {
        ss.add(q);
        lin.add(l);
        count += n;
    }
    Squares {
        scaled_squares: ss.value(),
        scaled_sum: lin.value(),
        count,
        k,
    }
}

/// `e` with `2^e <= |x| < 2^(e+1)` for finite nonzero `x`.
pub(crate) fn binary_exponent(x: f64) -> i32 {
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 {
        binary_exponent(x * pow2(64)) - 64
    } else {
        e - 1023
    }
}

/// `2^k` for `k` in the normal exponent range [-1022, 1023].
pub(crate) fn pow2(k: i32) -> f64 {
    f64::from_bits(((k.clamp(-1022, 1023) + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fsum(x: &[f64]) -> f64 {
        exact_sum(x).value()
    }

    #[test]
    fn census_and_extremes() {
        let mut x = vec![1.0; 300_000];
        x[5] = f64::NAN;
        x[70_000] = f64::NAN;
        x[200_000] = f64::NEG_INFINITY;
        x[299_999] = 7.0;
        let s = summarize(&x);
        assert_eq!(s.nan, Census { count: 2, first: 5 });
        assert_eq!(
            s.inf,
            Census {
                count: 1,
                first: 200_000
            }
        );
        assert_eq!((s.min, s.max), (f64::NEG_INFINITY, 7.0));
        assert_eq!(s.count, 299_998);
    }

    #[test]
    fn mean_skips_nan_and_is_exact() {
        let x = [1e16, f64::NAN, 1.0, -1e16];
        let s = summarize(&x);
        assert_eq!(mean_of(&x, &s), 1.0 / 3.0);
        let y = [1e150, 3e133, -1e150, -3e133, 1.0];
        assert_eq!(mean_of(&y, &summarize(&y)), 0.2);
    }

    #[test]
    fn halfway_sums_round_to_even() {
        // 1 + 2^-53 and 1 + 3·2^-53 lie halfway between doubles.
        let tiny = f32::EPSILON / (1 << 30) as f32; // 2^-53
        for (x, want) in [
            (vec![1.0f32, tiny], 1.0),
            (vec![1.0f32, tiny, tiny, tiny], 1.0 + 2.0 * f64::EPSILON),
        ] {
            assert_eq!(summary_below(&x, 1.0, 2.0).certified_sum(), Some(want));
            assert_eq!(sum_of(&x, &summarize(&x)).value(), want);
            let (sum, below) = sum_below(&x, false, 2.0, |_| 0);
            assert_eq!((sum.value(), below), (want, x.len()));
        }
    }

    proptest! {
        #[test]
        fn sum_is_correctly_rounded(
            x in proptest::collection::vec(prop_oneof![
                -1e6f64..1e6,
                any::<f64>().prop_filter("finite", |v| v.is_finite()),
                Just(0.0),
                (-1.0f64..1.0).prop_map(|v| v * 1e-300),
            ], 0..400),
        ) {
            let want = fsum(&x);
            prop_assume!(want.is_finite());
            let s = summarize(&x);
            prop_assert_eq!(sum_of(&x, &s).value().to_bits(), want.to_bits());
        }

        /// float32 sums need few bits beyond 53 and often lie exactly
        /// halfway between two doubles: still certified, rounded to even.
        #[test]
        fn float32_sums_are_certified_at_ties(
            x in proptest::collection::vec(prop_oneof![1e-3f32..1e3, -1e3f32..-1e-3], 1..3000),
        ) {
            let s = summary_below(&x, 1.0, f64::INFINITY);
            let wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
            prop_assert_eq!(s.certified_sum().map(f64::to_bits), Some(fsum(&wide).to_bits()));
            prop_assert_eq!(sum_of(&x, &summarize(&x)).value().to_bits(), fsum(&wide).to_bits());
        }

        /// Σx + n·v rounded once, however nearly n·v cancels Σx.
        #[test]
        fn sums_plus_copies_are_correctly_rounded(
            x in proptest::collection::vec(prop_oneof![
                -1e3f64..1e3,
                (-1.0f64..1.0).prop_map(|v| -205.0 + v * 1e-12),
                Just(f64::NAN),
            ], 1..300),
            v in prop_oneof![-1e3f64..1e3, Just(205.0), Just(1e300)],
        ) {
            let kept: Vec<f64> = x.iter().copied().filter(|u| !u.is_nan()).collect();
            let mut want = exact_sum(&kept);
            want.merge(&crate::numeric::sum::exact_product(v, kept.len()));
            let got = sum_plus(&x, &summarize(&x), v, kept.len());
            prop_assert_eq!(got.value().to_bits(), want.value().to_bits());
            prop_assert_eq!(got.mean(kept.len().max(1)).to_bits(), want.mean(kept.len().max(1)).to_bits());
        }

        #[test]
        fn positive_sums_are_certified(x in proptest::collection::vec(0.0f64..1e3, 1..3000)) {
            let s = summarize(&x);
            // Rarely a sum lands within the bound of a rounding boundary;
            // then the exact path decides. Either way the value is exact.
            let exact = fsum(&x);
            if let Some(v) = s.certified_sum() {
                prop_assert_eq!(v, exact);
            }
        }
    }
}
