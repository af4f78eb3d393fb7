//! The bulk of a fit's scores: those so near the starting location μ₀ that
//! every window of the M-estimation holds them.
//!
//! A window's sums over the bulk are its power sums, taken once in one
//! read that vectorises; only the other scores are sorted (fits on sorted
//! scores) or put in buckets with their moments (bucketed fits), each a
//! few times the cost of that read per score. For Huber's t = 1.345 a bulk
//! of 0.8·t·σ₀ about μ₀ holds about 60% of a Gaussian sample.
//!
//! The bulk is a closed range of order-preserving keys (`numeric::float`),
//! so a bucketed fit can make it a whole number of buckets: a score is in
//! it exactly when its bucket is. Whether a window holds the bulk is decided
//! by the bulk's extremes with the window's own predicate (monotone in the
//! score), so the sums equal those of a direct read; where a window does
//! not hold it, the caller reads the bulk's scores instead.

use crate::numeric::float::order_key;
use crate::numeric::sum::TwoSum;

/// Scores per chunk of the sums: each chunk is summed in eight lanes (two
/// AVX2 vectors) folded pairwise, the chunks joined by TwoSum.
pub const CHUNK: usize = 64;
/// Lanes of a chunk's sums.
const LANES: usize = 8;
/// Most powers summed (Tukey's weights need six).
pub const MAX_POWERS: usize = 6;

/// The scores whose keys are in `[first, last]` and their power sums
/// `Σ ((y − center)·inv)^k`, `k < powers`.
#[derive(Debug, Clone, Copy)]
pub struct Bulk {
    /// Keys of the smallest and largest score the bulk may hold.
    first: u64,
    last: u64,
    /// The frame of the power sums.
    pub center: f64,
    pub inv: f64,
    /// Powers summed: 3 or 6.
    powers: usize,
    /// Smallest and largest score held (+∞, −∞ when none is).
    pub lo: f64,
    pub hi: f64,
    /// Scores held.
    pub count: usize,
    /// The power sums (zeros beyond `powers`).
    pub sums: [TwoSum; MAX_POWERS],
}

impl Bulk {
    /// An empty bulk for the scores in `[from, to]` (closed; doubles,
    /// neither NaN), with `powers` (3 or 6) power sums about `center` in
    /// units of `1/inv`.
    pub fn new(from: f64, to: f64, center: f64, inv: f64, powers: usize) -> Bulk {
        assert!(powers == 3 || powers == 6, "3 or 6 powers");
        Bulk {
            first: order_key(from),
            last: order_key(to),
            center,
            inv,
            powers,
            lo: f64::INFINITY,
            hi: f64::NEG_INFINITY,
            count: 0,
            sums: [TwoSum::default(); MAX_POWERS],
        }
    }

    /// The bulk of no score.
    pub fn none() -> Bulk {
        Bulk {
            first: 1,
            last: 0,
            ..Bulk::new(0.0, 0.0, 0.0, 1.0, 3)
        }
    }

    /// Whether the bulk holds no double.
    pub fn is_none(&self) -> bool {
        self.first > self.last
    }

    /// Whether `y` belongs to the bulk (never NaN: its keys lie beyond
    /// those of ±∞).
    #[inline(always)]
    pub fn holds(&self, y: f64) -> bool {
        !self.is_none()
            && order_key(y).wrapping_sub(self.first) <= self.last.wrapping_sub(self.first)
    }

    /// Adds the scores of `ys` the bulk holds to its sums and writes the
    /// others but NaN to the front of `rest` (at least as long as `ys`),
    /// in their order; returns how many. The sums are those of chunks of
    /// [`CHUNK`] scores from the start of `ys`, the same bits on every CPU.
    pub fn split(&mut self, ys: &[f64], rest: &mut [f64]) -> usize {
        assert!(rest.len() >= ys.len(), "rest shorter than the scores");
        if self.is_none() {
            return keep_numbers(ys, rest);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::numeric::simd::has_avx2() && !ablated!("bulk_avx2") {
            // SAFETY: the CPU supports AVX2; `rest` is as long as `ys`.
            return unsafe {
                if self.powers == 3 {
                    avx2::split::<3>(self, ys, rest)
                } else {
                    avx2::split::<6>(self, ys, rest)
                }
            };
        }
        if self.powers == 3 {
            self.split_scalar::<3>(ys, rest)
        } else {
            self.split_scalar::<6>(ys, rest)
        }
    }

    /// [`Bulk::split`] in plain Rust: the definition the AVX2 kernel
    /// follows lane by lane.
    fn split_scalar<const P: usize>(&mut self, ys: &[f64], rest: &mut [f64]) -> usize {
        let mut len = 0;
        for chunk in ys.chunks(CHUNK) {
            let mut lanes = [[0.0; LANES]; P];
            for (i, &y) in chunk.iter().enumerate() {
                let held = self.holds(y);
                // Outside the bulk the power is of 0, so that outliers'
                // powers (which may overflow) are never formed.
                let d = if held {
                    (y - self.center) * self.inv
                } else {
                    0.0
                };
                let mut pw = if held { 1.0 } else { 0.0 };
                for lane in &mut lanes {
                    lane[i % LANES] += pw;
                    pw *= d;
                }
                if held {
                    self.count += 1;
                    self.lo = self.lo.min(y);
                    self.hi = self.hi.max(y);
                } else if !y.is_nan() {
                    rest[len] = y;
                    len += 1;
                }
            }
            self.add_lanes(&lanes);
        }
        len
    }

    /// Adds one chunk's lane sums, folded as NumPy's pairwise sum folds
    /// its eight accumulators.
    #[inline(always)]
    fn add_lanes<const P: usize>(&mut self, lanes: &[[f64; LANES]; P]) {
        for (s, l) in self.sums.iter_mut().zip(lanes) {
            s.add(((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7])));
        }
    }

    /// Adds the sums of `other`, a bulk of the same range and frame (of
    /// the scores after this one's: chunks joined in order give the same
    /// sums on any number of threads).
    pub fn merge(&mut self, other: &Bulk) {
        for (s, o) in self.sums.iter_mut().zip(&other.sums) {
            s.add(o.sum);
            s.add(o.comp);
        }
        self.count += other.count;
        self.lo = self.lo.min(other.lo);
        self.hi = self.hi.max(other.hi);
    }

    /// Whether the window `below(s)` false, `within(s)` true holds every
    /// score of the bulk (both predicates monotone in `s`).
    pub fn held_by(&self, below: impl Fn(f64) -> bool, within: impl Fn(f64) -> bool) -> bool {
        self.count == 0 || (!below(self.lo) && within(self.hi))
    }
}

/// Copies the scores of `ys` but NaN to the front of `rest`.
fn keep_numbers(ys: &[f64], rest: &mut [f64]) -> usize {
    let mut len = 0;
    for &y in ys {
        rest[len] = y;
        len += usize::from(!y.is_nan());
    }
    len
}

/// The bulk `[center − radius, center + radius]` of NaN-free `scores` with
/// its power sums `Σ (y − center)^k`, `k < powers` (3 or 6), and the other
/// scores in their order.
pub fn split(scores: &[f64], center: f64, radius: f64, powers: usize) -> (Bulk, Vec<f64>) {
    let mut bulk = Bulk::new(center - radius, center + radius, center, 1.0, powers);
    let mut rest = vec![0.0; scores.len()];
    let len = bulk.split(scores, &mut rest);
    rest.truncate(len);
    (bulk, rest)
}

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::sum::exact_sum;

    #[test]
    fn split_keeps_the_other_scores_in_order_and_sums_the_bulk() {
        let scores: Vec<f64> = (0..1000)
            .map(|i| f64::from((i * 7919) % 1000) / 100.0)
            .collect();
        for powers in [3, 6] {
            let (bulk, rest) = split(&scores, 5.0, 2.0, powers);
            let held = |v: f64| (3.0..=7.0).contains(&v);
            let inside: Vec<f64> = scores.iter().copied().filter(|&v| held(v)).collect();
            let outside: Vec<f64> = scores.iter().copied().filter(|&v| !held(v)).collect();
            assert_eq!(rest, outside);
            assert_eq!((bulk.lo, bulk.hi, bulk.count), (3.0, 7.0, inside.len()));
            for k in 0..MAX_POWERS {
                let terms: Vec<f64> = inside.iter().map(|v| (v - 5.0).powi(k as i32)).collect();
                let want = if k < powers {
                    exact_sum(&terms).value()
                } else {
                    0.0
                };
                let got = bulk.sums[k].value();
                assert!(
                    (got - want).abs() <= 1e-13 * want.abs().max(1.0),
                    "{k}: {got} {want}"
                );
            }
            assert!(bulk.held_by(|v| v < 3.0, |v| v <= 7.0));
            assert!(!bulk.held_by(|v| v < 3.5, |v| v <= 7.0));
            assert!(!bulk.held_by(|v| v < 3.0, |v| v <= 6.5));
        }
    }

    /// NaN is neither held nor kept; ±∞ and ±0 are placed by their keys.
    #[test]
    fn splits_drop_nan_and_place_signed_zeros_by_key() {
        let mut bulk = Bulk::new(0.0, 1.0, 0.5, 2.0, 3);
        let ys = [f64::NAN, -0.0, 0.0, 1.0, f64::INFINITY, -f64::NAN, 0.25];
        let mut rest = [9.0; 7];
        let len = bulk.split(&ys, &mut rest);
        assert_eq!(&rest[..len], &[-0.0, f64::INFINITY]);
        assert!(rest[0].is_sign_negative());
        assert_eq!((bulk.count, bulk.lo, bulk.hi), (3, 0.0, 1.0));
        // (0 − 0.5)·2, (1 − 0.5)·2, (0.25 − 0.5)·2: Σ = −0.5, Σ² = 2.25.
        let sums: Vec<f64> = bulk.sums.iter().map(|s| s.value()).collect();
        assert_eq!(&sums[..3], &[3.0, -0.5, 2.25]);
    }

    /// The dispatched split (AVX2 where the CPU has it) equals the scalar
    /// definition bit for bit, at lengths around the chunk and vector
    /// sizes, with NaN, ±0, ±∞ and outliers among the scores.
    #[test]
    fn kernels_agree_to_the_bit() {
        let mut next = crate::numeric::testing::uniforms(3);
        for n in [0, 1, 3, 4, 63, 64, 65, 130, 1000, 4099] {
            let ys: Vec<f64> = (0..n)
                .map(|i| match i % 41 {
                    0 => f64::NAN,
                    1 => -0.0,
                    2 => 0.0,
                    3 => f64::INFINITY,
                    4 => -1e300,
                    _ => (next() - 0.4) * 6.0,
                })
                .collect();
            for powers in [3, 6] {
                let fresh = Bulk::new(-1.0, 2.5, 0.7, 0.5, powers);
                let (mut a, mut b) = (fresh, fresh);
                let (mut ra, mut rb) = (vec![0.0; n], vec![0.0; n]);
                let la = a.split(&ys, &mut ra);
                let lb = if powers == 3 {
                    b.split_scalar::<3>(&ys, &mut rb)
                } else {
                    b.split_scalar::<6>(&ys, &mut rb)
                };
                assert_eq!(la, lb);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&ra[..la]), bits(&rb[..lb]));
                assert_eq!((a.count, a.lo, a.hi), (b.count, b.lo, b.hi));
                for (x, y) in a.sums.iter().zip(&b.sums) {
                    assert_eq!(
                        (x.sum.to_bits(), x.comp.to_bits()),
                        (y.sum.to_bits(), y.comp.to_bits())
                    );
                }
            }
        }
    }

    #[test]
    fn merged_chunks_equal_one_read() {
        let scores: Vec<f64> = (0..777)
            .map(|i| (f64::from(i) * 0.37).sin() * 3.0)
            .collect();
        let (whole, _) = split(&scores, 0.2, 1.5, 6);
        let (a, _) = split(&scores[..320], 0.2, 1.5, 6);
        let (b, _) = split(&scores[320..], 0.2, 1.5, 6);
        let mut merged = a;
        merged.merge(&b);
        assert_eq!(
            (merged.count, merged.lo, merged.hi),
            (whole.count, whole.lo, whole.hi)
        );
        for (m, w) in merged.sums.iter().zip(&whole.sums) {
            assert!((m.value() - w.value()).abs() <= 1e-13 * w.value().abs().max(1.0));
        }
    }

    #[test]
    fn an_empty_bulk_is_held_by_every_window() {
        let (bulk, rest) = split(&[1.0, 9.0], 5.0, 1.0, 3);
        assert_eq!(rest, vec![1.0, 9.0]);
        assert_eq!(bulk.sums[0].value(), 0.0);
        assert!(bulk.held_by(|_| true, |_| false));
        assert!(!Bulk::none().holds(0.0));
    }
}
