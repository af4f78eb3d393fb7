//! Exact sums by error-free extraction (Rump, Ogita and Oishi, "Accurate
//! floating-point summation", part I, ExtractScalar), for the running sums
//! that must stay exact across batches.
//!
//! With `σ = 2^t` and `|p| <= σ·2^-17`, `q = fl(fl(σ + p) − σ)` is a
//! multiple of `2^(t−53)`, `p − q` is exact and `|p − q| <= 2^(t−53)`. A
//! chunk of at most 2^16 scores below `2^e` in magnitude thus splits
//! exactly into three levels of such `q` (σ = 2^(e+17), then 36 bits lower
//! each) and a remainder below `2^(e−108)`; the `q` of one level add up
//! without any rounding (their partial sums are multiples of `2^(t−53)`
//! below `σ`). When the remainder is zero — every score is a multiple of
//! `2^(e−108)`: nonzero scores within about 2^55 of the largest — the
//! chunk's exact sum is the three level sums, at the cost of a few
//! vectorised additions per score (a third of the binned sum's time);
//! otherwise it is the binned sum of [`crate::numeric::sum`].
//!
//! [`scan_with_squares`] adds to the same read the squares of the
//! deviations from a center known before the read (a running state's
//! shift), so that a streaming SD update reads each batch once, as the
//! in-memory fit's summary does; its caller decides after the read whether
//! those squares are accurate enough for the batch (its mean near the
//! center) or reads the batch once more about its own mean.

use crate::numeric::float::Float;
use crate::numeric::par::{map_chunks, CHUNK};
use crate::numeric::reduce::{binary_exponent, pow2, Squares};
use crate::numeric::simd::multiversion;
use crate::numeric::sum::{exact_sum, two_sum, ExactSum, Neumaier};

const LEVELS: usize = 3;
/// Bits each level takes: 53 less the 17 bits of headroom for 2^16 terms.
const LEVEL_BITS: i32 = 36;
const HEADROOM_BITS: i32 = 17;
/// Independent accumulators per level (the additions are latency-bound).
const LANES: usize = 8;

/// A chunk's level sums as they accumulate: `LANES` independent sums per
/// level, and the magnitude left below the last level.
struct LevelSums {
    acc: [[f64; LANES]; LEVELS],
    rest: [f64; LANES],
}

impl LevelSums {
    #[inline(always)]
    fn new() -> Self {
        LevelSums {
            acc: [[0.0; LANES]; LEVELS],
            rest: [0.0; LANES],
        }
    }

    /// Splits one group of scores (NaN already 0) over the levels σ_j = s[j].
    #[inline(always)]
    fn add_group(&mut self, s: &[f64; LEVELS], mut p: [f64; LANES]) {
        for (acc, &sj) in self.acc.iter_mut().zip(s) {
            for i in 0..LANES {
                let q = (sj + p[i]) - sj;
                p[i] -= q;
                acc[i] += q;
            }
        }
        for i in 0..LANES {
            self.rest[i] += p[i].abs();
        }
    }

    /// Splits one score of the remainder into lane `i`.
    #[inline(always)]
    fn add_one(&mut self, s: &[f64; LEVELS], i: usize, mut p: f64) {
        for (acc, &sj) in self.acc.iter_mut().zip(s) {
            let q = (sj + p) - sj;
            p -= q;
            acc[i] += q;
        }
        self.rest[i] += p.abs();
    }

    /// The level sums, and whether nothing was left below the last level.
    #[inline(always)]
    fn finish(&self) -> ([f64; LEVELS], bool) {
        let sums = self.acc.map(|lanes| lanes.iter().sum());
        (sums, self.rest.iter().all(|&r| r == 0.0))
    }
}

/// σ_j = 2^(t − 36·j), the levels' units.
#[inline(always)]
fn level_units(t: i32) -> [f64; LEVELS] {
    std::array::from_fn(|j| pow2(t - LEVEL_BITS * j as i32))
}

/// The exact sum of level sums [`levels`] proved exact.
fn total_of_levels<'a>(sums: impl IntoIterator<Item = &'a f64>) -> ExactSum {
    let mut total = ExactSum::zero();
    for &s in sums {
        if s != 0.0 {
            total.merge(&ExactSum::from(s));
        }
    }
    total
}

multiversion! {
    /// The three level sums of a chunk (NaN skipped) with σ₁ = 2^t, and
    /// whether the remainder is zero.
    fn levels<T: Float>(x: &[T], t: i32) -> ([f64; LEVELS], bool) {
        let s = level_units(t);
        let mut sums = LevelSums::new();
        let mut groups = x.chunks_exact(LANES);
        for g in &mut groups {
            let mut p = [0.0f64; LANES];
            for i in 0..LANES {
                let v = g[i].to_f64();
                p[i] = if v.is_nan() { 0.0 } else { v };
            }
            sums.add_group(&s, p);
        }
        for (i, &v) in groups.remainder().iter().enumerate() {
            let v = v.to_f64();
            sums.add_one(&s, i, if v.is_nan() { 0.0 } else { v });
        }
        sums.finish()
    }
}

/// The exact sum of a chunk of at most [`CHUNK`] scores (NaN skipped)
/// whose magnitudes are at most `bound` (finite).
fn chunk_sum<T: Float>(x: &[T], bound: f64) -> ExactSum {
    debug_assert!(x.len() <= CHUNK);
    if bound == 0.0 {
        return ExactSum::zero();
    }
    if !bound.is_finite() {
        let kept: Vec<T> = x.iter().copied().filter(|v| !v.is_nan()).collect();
        return exact_sum(&kept);
    }
    // bound < 2^e; σ₁ stays finite and the last level's ulp normal.
    let e = binary_exponent(bound) + 1;
    let t = e + HEADROOM_BITS;
    if (-900..=1006).contains(&e) {
        let (sums, exact) = levels(x, t);
        if exact {
            return total_of_levels(&sums);
        }
    }
    let kept: Vec<T> = x.iter().copied().filter(|v| !v.is_nan()).collect();
    exact_sum(&kept)
}

/// One score's share of a census read: a NaN counted, the extremes moved
/// (NaN compares false, so they skip it); the value the level sums add,
/// 0 for NaN.
#[inline(always)]
fn census(v: f64, nan: &mut usize, lo: &mut f64, hi: &mut f64) -> f64 {
    let missing = v.is_nan();
    *nan += usize::from(missing);
    *lo = if v < *lo { v } else { *lo };
    *hi = if v > *hi { v } else { *hi };
    if missing {
        0.0
    } else {
        v
    }
}

multiversion! {
    /// [`levels`] with σ₁ = 2^t, and in the same read the NaN count and the
    /// extremes of the non-NaN scores (±inf included; an infinite score
    /// makes the level sums meaningless, which its extremes show).
    fn levels_and_census<T: Float>(x: &[T], t: i32) -> ([f64; LEVELS], bool, usize, f64, f64) {
        let s = level_units(t);
        let mut sums = LevelSums::new();
        let mut nan = [0usize; LANES];
        let (mut lo, mut hi) = ([f64::INFINITY; LANES], [f64::NEG_INFINITY; LANES]);
        let mut groups = x.chunks_exact(LANES);
        for g in &mut groups {
            let mut p = [0.0f64; LANES];
            for i in 0..LANES {
                p[i] = census(g[i].to_f64(), &mut nan[i], &mut lo[i], &mut hi[i]);
            }
            sums.add_group(&s, p);
        }
        for (i, &v) in groups.remainder().iter().enumerate() {
            let v = census(v.to_f64(), &mut nan[i], &mut lo[i], &mut hi[i]);
            sums.add_one(&s, i, v);
        }
        let (sums, exact) = sums.finish();
        let min = lo.iter().fold(f64::INFINITY, |m, &v| m.min(v));
        let max = hi.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
        (sums, exact, nan.iter().sum(), min, max)
    }
}

/// A batch read once: its NaN count, the extremes of its other scores
/// (±inf included; +inf/−inf when there are none) and, when they lie
/// below the magnitude `2^e` it was read for and extraction proves it,
/// its exact sum (NaN skipped).
#[derive(Debug, Clone)]
pub struct ScannedBatch {
    pub nan: usize,
    pub min: f64,
    pub max: f64,
    pub sum: Option<ExactSum>,
}

/// [`ScannedBatch`] of `x` read for scores below `2^e` in magnitude (a
/// running state's known range): the census and the exact sum of
/// [`exact_sum_within`] in one read instead of two, when the guess holds.
pub fn scan_within_exponent<T: Float>(x: &[T], e: i32) -> ScannedBatch {
    let t = e + HEADROOM_BITS;
    let valid = (-900..=1006).contains(&e);
    let parts = map_chunks(x, |_, chunk| levels_and_census(chunk, t));
    let (mut nan, mut min, mut max, mut exact) = (0, f64::INFINITY, f64::NEG_INFINITY, valid);
    for (_, zero_rest, n, lo, hi) in &parts {
        nan += n;
        min = min.min(*lo);
        max = max.max(*hi);
        exact &= *zero_rest;
    }
    // Every term below 2^e (so below σ·2^-17 at each level) and nothing
    // left below the last level: the level sums are exact.
    let bound = min.abs().max(max.abs());
    let sum = (exact && bound < pow2(e))
        .then(|| total_of_levels(parts.iter().flat_map(|(sums, ..)| sums)));
    ScannedBatch { nan, min, max, sum }
}

/// Groups of [`LANES`] squares a lane adds plainly before the block goes
/// into its double-double sum (as the in-memory SD's read does: one long
/// plain sum of tied squares errs by up to ~100 ulp, a block by a few).
const BLOCK_SQUARES: usize = 8;

/// Σ(x·s − c·s)² and Σ(x·s − c·s) as they accumulate beside the level
/// sums, NaN counted as deviation 0.
struct SquareSums {
    hi: [f64; LANES],
    lo: [f64; LANES],
    block: [f64; LANES],
    lin: [f64; LANES],
}

impl SquareSums {
    #[inline(always)]
    fn new() -> Self {
        SquareSums {
            hi: [0.0; LANES],
            lo: [0.0; LANES],
            block: [0.0; LANES],
            lin: [0.0; LANES],
        }
    }

    #[inline(always)]
    fn add(&mut self, i: usize, d: f64) {
        self.block[i] += d * d;
        self.lin[i] += d;
    }

    /// Moves each lane's block into its double-double.
    #[inline(always)]
    fn fold(&mut self) {
        for i in 0..LANES {
            let (a, b) = two_sum(self.hi[i], self.block[i]);
            self.hi[i] = a;
            self.lo[i] += b;
            self.block[i] = 0.0;
        }
    }

    #[inline(always)]
    fn finish(mut self) -> (f64, f64) {
        self.fold();
        let (mut squares, mut lin) = (Neumaier::default(), Neumaier::default());
        for i in 0..LANES {
            squares.add(self.hi[i]);
            squares.add(self.lo[i]);
            lin.add(self.lin[i]);
        }
        (squares.value(), lin.value())
    }
}

/// What [`levels_census_squares`] reads from a chunk.
struct ChunkScan {
    sums: [f64; LEVELS],
    exact: bool,
    nan: usize,
    min: f64,
    max: f64,
    squares: f64,
    lin: f64,
}

multiversion! {
    /// [`levels_and_census`] and, in the same read, the sums of `d` and
    /// `d²` over `d = x·s − c·s` (`s` a power of two, `cs = c·s`).
    fn levels_census_squares<T: Float>(x: &[T], t: i32, s: f64, cs: f64) -> ChunkScan {
        let units = level_units(t);
        let mut sums = LevelSums::new();
        let mut sq = SquareSums::new();
        let mut nan = [0usize; LANES];
        let (mut lo, mut hi) = ([f64::INFINITY; LANES], [f64::NEG_INFINITY; LANES]);
        let mut blocks = x.chunks_exact(LANES * BLOCK_SQUARES);
        for block in &mut blocks {
            for g in block.chunks_exact(LANES) {
                let mut p = [0.0f64; LANES];
                for i in 0..LANES {
                    let v = g[i].to_f64();
                    p[i] = census(v, &mut nan[i], &mut lo[i], &mut hi[i]);
                    sq.add(i, if v.is_nan() { 0.0 } else { s * v - cs });
                }
                sums.add_group(&units, p);
            }
            sq.fold();
        }
        for (j, &v) in blocks.remainder().iter().enumerate() {
            let i = j % LANES;
            let v = v.to_f64();
            sums.add_one(&units, i, census(v, &mut nan[i], &mut lo[i], &mut hi[i]));
            sq.add(i, if v.is_nan() { 0.0 } else { s * v - cs });
        }
        let (sums, exact) = sums.finish();
        let (squares, lin) = sq.finish();
        ChunkScan {
            sums,
            exact,
            nan: nan.iter().sum(),
            min: lo.iter().fold(f64::INFINITY, |m, &v| m.min(v)),
            max: hi.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v)),
            squares,
            lin,
        }
    }
}

/// [`scan_within_exponent`] and, in the same read, the sums of the
/// deviations `d = x − c` (NaN skipped) taken of `d·2^-k`, as
/// [`crate::numeric::reduce::squares`] gives them for `below = ∞`. The
/// squares are meaningful when the non-NaN scores are finite and neither
/// they nor `c` overflow once scaled: the caller checks that from the
/// census before using them.
pub fn scan_with_squares<T: Float>(x: &[T], e: i32, c: f64, k: i32) -> (ScannedBatch, Squares) {
    let t = e + HEADROOM_BITS;
    let valid = (-900..=1006).contains(&e);
    let s = pow2(-k);
    let parts = map_chunks(x, |_, chunk| levels_census_squares(chunk, t, s, c * s));
    let (mut nan, mut min, mut max, mut exact) = (0, f64::INFINITY, f64::NEG_INFINITY, valid);
    let (mut squares, mut lin) = (Neumaier::default(), Neumaier::default());
    for p in &parts {
        nan += p.nan;
        min = min.min(p.min);
        max = max.max(p.max);
        exact &= p.exact;
        squares.add(p.squares);
        lin.add(p.lin);
    }
    let bound = min.abs().max(max.abs());
    let sum =
        (exact && bound < pow2(e)).then(|| total_of_levels(parts.iter().flat_map(|p| &p.sums)));
    let count = x.len() - nan;
    (
        ScannedBatch { nan, min, max, sum },
        Squares {
            scaled_squares: squares.value(),
            scaled_sum: lin.value(),
            count,
            k,
        },
    )
}

/// The exact sum of `x`, NaN skipped, given `bound >= |v|` for every
/// non-NaN `v` (finite: the caller has refused ±inf).
pub fn exact_sum_within<T: Float>(x: &[T], bound: f64) -> ExactSum {
    let mut total = ExactSum::zero();
    for part in map_chunks(x, |_, chunk| chunk_sum(chunk, bound)) {
        total.merge(&part);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bound(x: &[f64]) -> f64 {
        x.iter()
            .filter(|v| !v.is_nan())
            .fold(0.0, |m, v| m.max(v.abs()))
    }

    fn binned(x: &[f64]) -> ExactSum {
        let kept: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
        exact_sum(&kept)
    }

    #[test]
    fn long_chunks_and_wide_ranges() {
        let mut u = crate::numeric::testing::uniforms(7);
        let x: Vec<f64> = (0..200_000).map(|_| (u() - 0.3) * 1e3).collect();
        assert_eq!(exact_sum_within(&x, bound(&x)), binned(&x));
        // Ties and values at the chunk's bound.
        let y = vec![1.0f64 - f64::EPSILON / 2.0; 3 * CHUNK + 5];
        assert_eq!(exact_sum_within(&y, 1.0), binned(&y));
        // A range beyond the three levels takes the binned sum.
        let z = [1e30, 1e-30, -1e30, f64::NAN, 3.0];
        assert_eq!(exact_sum_within(&z, 1e30), binned(&z));
        assert_eq!(exact_sum_within(&z, 1e30).value(), 3.0 + 1e-30);
        for w in [
            vec![f64::MAX, -f64::MAX / 3.0],
            vec![5e-324, 1e-310],
            vec![0.0, -0.0],
        ] {
            assert_eq!(exact_sum_within(&w, bound(&w)), binned(&w), "{w:?}");
        }
        let f: Vec<f32> = (0..1000).map(|i| i as f32 * 0.1).collect();
        assert_eq!(exact_sum_within(&f, 100.0), exact_sum(&f));
    }

    proptest! {
        #[test]
        fn equals_the_binned_sum(
            x in proptest::collection::vec(prop_oneof![
                -1e6f64..1e6,
                any::<f64>().prop_filter("finite", |v| v.is_finite()),
                Just(0.0),
                Just(f64::NAN),
                (-1.0f64..1.0).prop_map(|v| v * 1e-300),
                (-1.0f64..1.0).prop_map(|v| 1e12 + v),
            ], 0..400),
            slack in 0u32..4,
        ) {
            let b = bound(&x) * f64::from(1u32 << slack);
            prop_assert_eq!(exact_sum_within(&x, b), binned(&x));
        }

        /// The one-read scan for a guessed range: the census of the batch
        /// whatever the guess, and an exact sum only when it is the binned
        /// one (a guess below the scores, or scores too fine for it, give
        /// none).
        #[test]
        fn scan_for_a_guessed_range_is_the_census_and_the_exact_sum(
            x in proptest::collection::vec(prop_oneof![
                -1e6f64..1e6,
                any::<f64>().prop_filter("finite", |v| v.is_finite()),
                Just(0.0),
                Just(-0.0),
                Just(f64::NAN),
                Just(f64::INFINITY),
                (-1.0f64..1.0).prop_map(|v| v * 1e-300),
            ], 0..300),
            e in -1100i32..1100,
        ) {
            let s = scan_within_exponent(&x, e);
            prop_assert_eq!(s.nan, x.iter().filter(|v| v.is_nan()).count());
            let kept: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
            prop_assert_eq!(s.min, kept.iter().fold(f64::INFINITY, |m, &v| m.min(v)));
            prop_assert_eq!(s.max, kept.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v)));
            if let Some(sum) = s.sum {
                prop_assert!(kept.iter().all(|v| v.is_finite() && v.abs() < 2f64.powi(e)));
                let mut canonical = ExactSum::zero();
                canonical.merge(&sum);
                let mut want = ExactSum::zero();
                want.merge(&binned(&x));
                prop_assert_eq!(canonical, want);
            }
        }
    }

    proptest! {
        /// The read with squares: the same census and exact sum as the scan
        /// without, and the squares of the deviations from `c` (each formed
        /// as `x·2^-k − c·2^-k`) within a few ulp of their exact sum.
        #[test]
        fn scan_with_squares_is_the_scan_and_the_deviations_squares(
            x in proptest::collection::vec(prop_oneof![
                -1e3f64..1e3,
                (-1.0f64..1.0).prop_map(|v| 1e9 + v),
                Just(0.0),
                Just(f64::NAN),
                (-1.0f64..1.0).prop_map(|v| v * 1e-300),
            ], 0..700),
            e in -20i32..40,
            c in -1e3f64..1e3,
            k in -4i32..36,
        ) {
            let (b, q) = scan_with_squares(&x, e, c, k);
            let plain = scan_within_exponent(&x, e);
            prop_assert_eq!(b.nan, plain.nan);
            prop_assert_eq!(b.min.to_bits(), plain.min.to_bits());
            prop_assert_eq!(b.max.to_bits(), plain.max.to_bits());
            prop_assert_eq!(b.sum, plain.sum);
            let s = 2f64.powi(-k);
            let d: Vec<f64> = x.iter().filter(|v| !v.is_nan()).map(|v| v * s - c * s).collect();
            let sq: Vec<f64> = d.iter().map(|d| d * d).collect();
            prop_assert_eq!(q.count, d.len());
            prop_assert_eq!(q.k, k);
            let want = exact_sum(&sq).value();
            prop_assert!((q.scaled_squares - want).abs() <= 1e-14 * want,
                "{} vs {}", q.scaled_squares, want);
            let lin = exact_sum(&d).value();
            let scale: f64 = d.iter().map(|v| v.abs()).sum();
            prop_assert!((q.scaled_sum - lin).abs() <= 1e-13 * scale);
        }
    }

    #[test]
    fn scan_for_the_scores_range_sums_them_in_the_same_read() {
        let mut u = crate::numeric::testing::uniforms(3);
        let x: Vec<f64> = (0..100_000).map(|_| (u() - 0.5) * 7.0).collect();
        let s = scan_within_exponent(&x, 3);
        let mut got = ExactSum::zero();
        got.merge(s.sum.as_ref().expect("scores below 2^3 sum in the scan"));
        let mut want = ExactSum::zero();
        want.merge(&binned(&x));
        assert_eq!(got, want);
    }
}
