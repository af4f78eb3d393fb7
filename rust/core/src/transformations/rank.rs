//! Rank-based scalings (contract §10): ELKI's `RankingPseudoOutlierScaling`
//! ("rank"), `LogRankingPseudoOutlierScaling` ("log_rank") and
//! `TopKOutlierScaling` ("top_k").
//!
//! Rank scalings keep the fitted scores: a sorted `f64` copy of the non-NaN
//! (oriented) scores, 8 bytes per fitted score and column, and map a score by
//! a count of the fitted scores below it, `#{x < s}`. A fitted map counts
//! through a [`SearchIndex`] (one 64-byte line per bucket of about four
//! fitted scores, about 16 more bytes per fitted score, built with the map
//! and never stored), a group of scores at a time so that their reads
//! overlap: one cache line and a few compares per score instead of the
//! ~log₂ n dependent, scattered cache lines of a binary search over a
//! table beyond the caches.

use crate::error::Error;
use crate::limits::TOP_K;
use crate::numeric::float::{
    from_order_key, from_order_key_f32, order_key, order_key_f32, Buffers, Float,
};
use crate::numeric::radix::{radix_sort, RadixItem};
use crate::numeric::scratch::zeroed;
use crate::numeric::search_index::{SearchIndex, GROUP};
use crate::sample::{NanPolicy, Sample};
use crate::transformations::scaling::Scaling;

/// The sorted, oriented, NaN-free fitted scores (the state of "rank" and
/// "log_rank").
pub fn fit_sorted<T: Float>(
    x: &[T],
    nan_policy: NanPolicy,
    negate: bool,
) -> Result<Vec<f64>, Error> {
    let s = Sample::new(x, nan_policy, negate)?;
    // + 0.0: −0.0 and +0.0 are one score (their keys would differ).
    let mut keys = zeroed::<u64>(s.len());
    let oriented = s.x.iter().filter(|v| !v.is_nan());
    for (k, &v) in keys.iter_mut().zip(oriented) {
        *k = order_key(s.orient(v.to_f64()) + 0.0);
    }
    keys.sort_unstable();
    // The keys' buffer becomes the values' (same size, no second one).
    Ok(keys.into_iter().map(from_order_key).collect())
}

/// Fits rank scaling on `x` and maps `x` itself into `dst` with one sort of
/// the scores' order keys (integers: compared without `total_cmp`'s bit
/// work) carrying their positions, and a
/// walk over the tie groups — the same values as [`fit_sorted`] then
/// [`Rank::probability`] (the same formula on the same counts), without a
/// search per score. Returns the sorted scores.
pub fn fit_transform_rank<T: Float>(
    x: &[T],
    dst: &mut [T],
    nan_policy: NanPolicy,
    negate: bool,
    log: bool,
) -> Result<Vec<f64>, Error> {
    if x.len() != dst.len() {
        return Err(Error::ShapeMismatch(format!(
            "scores ({}) and output ({}) differ in length",
            x.len(),
            dst.len()
        )));
    }
    let s = Sample::new(x, nan_policy, negate)?;
    if u32::try_from(x.len()).is_err() {
        return Ok(fit_transform_rank_by_pairs(&s, dst, log));
    }
    Ok(match T::buffers(x, dst) {
        Buffers::F64(x, dst) => {
            let mut items = zeroed::<Keyed<u64>>(s.len());
            let mut j = 0;
            for (i, (&v, d)) in x.iter().zip(dst.iter_mut()).enumerate() {
                if v.is_nan() {
                    *d = f64::NAN;
                } else {
                    // + 0.0: −0.0 and +0.0 are one score.
                    let key = order_key(s.orient(v) + 0.0);
                    items[j] = Keyed { key, pos: i as u32 };
                    j += 1;
                }
            }
            // pdqsort: a radix sort of 16-byte items, or of 8-byte words of
            // the key's high bits above the position (which then reads
            // every score again at a scattered position), was not faster.
            items.sort_unstable_by_key(|e| e.key);
            walk_ties(&items, dst, log, from_order_key)
        }
        Buffers::F32(x, dst) => {
            let mut items = zeroed::<Keyed<u32>>(s.len());
            let mut j = 0;
            for (i, (&v, d)) in x.iter().zip(dst.iter_mut()).enumerate() {
                if v.is_nan() {
                    *d = f32::NAN;
                } else {
                    // Negation is exact in f32: the f32 order is the f64 order.
                    let o = if negate { -v } else { v };
                    items[j] = Keyed {
                        key: order_key_f32(o + 0.0),
                        pos: i as u32,
                    };
                    j += 1;
                }
            }
            // 8-byte items: an LSD radix sort of three passes.
            let items = radix_sort(items);
            walk_ties(&items, dst, log, |k| f64::from(from_order_key_f32(k)))
        }
    })
}

/// A score's order key and its position in the input.
#[derive(Debug, Clone, Copy, Default)]
struct Keyed<K> {
    key: K,
    pos: u32,
}

impl RadixItem for Keyed<u32> {
    const KEY_BITS: u32 = 32;
    #[inline(always)]
    fn radix_key(&self) -> u64 {
        u64::from(self.key)
    }
}

/// The mid-rank of each tie group of the sorted `items` written to their
/// positions in `dst` (`log`: `log1p(r)/ln 2`); returns the sorted values.
#[allow(clippy::cast_precision_loss)]
fn walk_ties<K: Copy + PartialEq, T: Float>(
    items: &[Keyed<K>],
    dst: &mut [T],
    log: bool,
    value: impl Fn(K) -> f64,
) -> Vec<f64> {
    let n = items.len();
    let mut sorted = zeroed::<f64>(n);
    let mut lo = 0;
    while lo < n {
        let key = items[lo].key;
        let mut hi = lo + 1;
        while hi < n && items[hi].key == key {
            hi += 1;
        }
        let p = T::from_f64(tie_probability(lo, hi, n, log));
        let v = value(key);
        for e in &items[lo..hi] {
            dst[e.pos as usize] = p;
        }
        sorted[lo..hi].fill(v);
        lo = hi;
    }
    sorted
}

/// The probability of the tie group at sorted positions `lo..hi` of `n`.
#[inline]
#[allow(clippy::cast_precision_loss)]
fn tie_probability(lo: usize, hi: usize, n: usize, log: bool) -> f64 {
    let r = if n == 1 {
        0.5
    } else {
        ((lo as f64 + hi as f64 - 1.0) / (2.0 * (n as f64 - 1.0))).clamp(0.0, 1.0)
    };
    if log && r < 1.0 {
        r.ln_1p() / core::f64::consts::LN_2
    } else {
        r
    }
}

/// [`fit_transform_rank`] by a comparison sort of (score, position) pairs:
/// for inputs beyond u32 positions, and the reference of the keyed sort.
pub fn fit_transform_rank_by_pairs<T: Float>(
    s: &Sample<'_, T>,
    dst: &mut [T],
    log: bool,
) -> Vec<f64> {
    let mut pairs: Vec<(f64, usize)> = Vec::with_capacity(s.len());
    for (i, v) in s.x.iter().enumerate() {
        if v.is_nan() {
            dst[i] = T::NAN;
        } else {
            // + 0.0: −0.0 and +0.0 are one score.
            pairs.push((s.orient(v.to_f64()) + 0.0, i));
        }
    }
    pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let n = pairs.len();
    let mut lo = 0;
    while lo < n {
        let value = pairs[lo].0;
        let mut hi = lo + 1;
        while hi < n && pairs[hi].0 == value {
            hi += 1;
        }
        let p = T::from_f64(tie_probability(lo, hi, n, log));
        for &(_, i) in &pairs[lo..hi] {
            dst[i] = p;
        }
        lo = hi;
    }
    pairs.into_iter().map(|(v, _)| v).collect()
}

/// Mid-rank pseudo-probability over sorted fitted scores `x_(0) ≤ … ≤ x_(n−1)`:
/// with `lo = #{x < s}` and `hi = #{x ≤ s}`,
/// `r = clip((lo + hi − 1) / (2(n − 1)), 0, 1)`: the mean of the 0-based
/// ranks of the ties of `s`, divided by `n − 1` (ELKI's value on fitted
/// scores); between two fitted scores it is the midpoint of their values.
/// `n = 1`: 0 below, ½ at, 1 above the fitted score. `log`: `log1p(r) / ln 2`.
#[derive(Debug, Clone, Copy)]
pub struct Rank<'a> {
    /// Sorted ascending, NaN-free, non-empty.
    pub sorted: &'a [f64],
    /// `log1p(r)/ln 2` instead of `r`.
    pub log: bool,
}

impl Rank<'_> {
    /// The mid-rank `r` of one score, counted by a binary search (the
    /// reference for [`IndexedRank`], which fitted maps use).
    #[inline]
    pub fn mid_rank(&self, s: f64) -> f64 {
        self.mid_rank_from(s, |x, s| x.partition_point(|&v| v < s))
    }

    /// The mid-rank `r` of one score, `#{x < s}` counted by `below`.
    #[inline]
    #[allow(clippy::cast_precision_loss)]
    fn mid_rank_from(&self, s: f64, below: impl Fn(&[f64], f64) -> usize) -> f64 {
        if s.is_nan() {
            return s;
        }
        let x = self.sorted;
        let lo = below(x, s);
        // Most scores match no fitted score or one: look before searching.
        let hi = if lo == x.len() || x[lo] != s {
            lo
        } else if lo + 1 == x.len() || x[lo + 1] != s {
            lo + 1
        } else {
            lo + 1 + x[lo + 1..].partition_point(|&v| v <= s)
        };
        let n = x.len();
        if n == 1 {
            return if lo == 1 {
                1.0
            } else if hi == 1 {
                0.5
            } else {
                0.0
            };
        }
        ((lo as f64 + hi as f64 - 1.0) / (2.0 * (n as f64 - 1.0))).clamp(0.0, 1.0)
    }

    /// `r`, or `log1p(r)/ln 2` for "log_rank".
    #[inline]
    fn scaled(&self, r: f64) -> f64 {
        if self.log && r < 1.0 {
            r.ln_1p() / core::f64::consts::LN_2
        } else {
            r
        }
    }
}

/// A rank scaling searched through its [`SearchIndex`]: the same
/// probabilities as [`Rank`] (the same counts), fewer cache misses.
#[derive(Debug, Clone, Copy)]
pub struct IndexedRank<'a> {
    /// The scaling.
    pub rank: Rank<'a>,
    /// `SearchIndex::new(rank.sorted)`.
    pub index: &'a SearchIndex,
}

impl Scaling for IndexedRank<'_> {
    fn check(&self) -> Result<(), Error> {
        self.rank.check()?;
        if *self.index == SearchIndex::new(self.rank.sorted) {
            Ok(())
        } else {
            Err(Error::invalid(
                "index",
                "is not the index of the sorted scores",
            ))
        }
    }

    #[inline]
    fn probability(&self, s: f64) -> f64 {
        let r = self
            .rank
            .mid_rank_from(s, |x, s| self.index.lower_bound(x, s));
        self.rank.scaled(r)
    }

    /// [`Self::probability`] of each score, searched in groups of [`GROUP`].
    fn transform_column<T: Float>(&self, src: &[T], dst: &mut [T], negate: bool) {
        let sign = if negate { -1.0 } else { 1.0 };
        let sorted = self.rank.sorted;
        for (sg, dg) in src.chunks(GROUP).zip(dst.chunks_mut(GROUP)) {
            let mut q = [0.0; GROUP];
            let mut lo = [0usize; GROUP];
            for (v, &s) in q.iter_mut().zip(sg) {
                // NaN counts 0 and maps to NaN below.
                *v = sign * s.to_f64();
            }
            let n = sg.len();
            self.index.lower_bounds(sorted, &q[..n], &mut lo[..n]);
            for ((d, &v), &l) in dg.iter_mut().zip(&q).zip(&lo) {
                let r = self.rank.mid_rank_from(v, |_, _| l);
                *d = T::from_f64(self.rank.scaled(r));
            }
        }
    }
}

impl Scaling for Rank<'_> {
    /// Non-empty and sorted (checked in O(n); the Python layer checks
    /// restored states once, so this catches only misuse of the core).
    fn check(&self) -> Result<(), Error> {
        if self.sorted.is_empty() {
            return Err(Error::invalid("sorted", "needs at least one fitted score"));
        }
        if !self.sorted.windows(2).all(|w| w[0] <= w[1]) || self.sorted.iter().any(|v| v.is_nan()) {
            return Err(Error::invalid(
                "sorted",
                "must be sorted ascending without NaN",
            ));
        }
        Ok(())
    }

    #[inline]
    fn probability(&self, s: f64) -> f64 {
        self.scaled(self.mid_rank(s))
    }
}

/// Fitted top-k scaling: `cutoff` is the k-th largest fitted score.
/// `binary`: `p = 1` if `s ≥ cutoff`, else 0. Otherwise ELKI's linear
/// variant: `p = clip((s − g)/(max − g), 0, 1)` for `s ≥ cutoff` (1 when
/// `max ≤ g`), else 0, with `g = min(0, cutoff)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopK {
    /// The k-th largest fitted score.
    pub cutoff: f64,
    /// The largest fitted score.
    pub max: f64,
    /// 0/1 output.
    pub binary: bool,
}

impl Scaling for TopK {
    fn check(&self) -> Result<(), Error> {
        if !(self.cutoff.is_finite() && self.max.is_finite() && self.cutoff <= self.max) {
            return Err(Error::invalid(
                "cutoff/max",
                format!(
                    "need finite cutoff <= max, got {} and {}",
                    self.cutoff, self.max
                ),
            ));
        }
        Ok(())
    }

    #[inline]
    fn probability(&self, s: f64) -> f64 {
        if s.is_nan() {
            return s;
        }
        if s < self.cutoff {
            return 0.0;
        }
        let g = self.cutoff.min(0.0);
        if self.binary || self.max <= g {
            return 1.0;
        }
        // The reference's quotient where the width is finite (an overflowing
        // numerator means s > max: 1 after the clamp). Where max − g
        // overflows, halved terms; halving there cannot lose a subnormal's
        // last bit that matters, as it does when max is the smallest one.
        let width = self.max - g;
        let p = if width.is_finite() {
            (s - g) / width
        } else {
            (0.5 * s - 0.5 * g) / (0.5 * self.max - 0.5 * g)
        };
        p.clamp(0.0, 1.0)
    }
}

/// Fits top-k scaling: `k` (1 ≤ k) is capped at the number of non-NaN scores.
pub fn fit_top_k<T: Float>(
    x: &[T],
    k: usize,
    nan_policy: NanPolicy,
    negate: bool,
    binary: bool,
) -> Result<TopK, Error> {
    TOP_K.check_usize(k)?;
    let s = Sample::new(x, nan_policy, negate)?;
    let mut v: Vec<f64> = s.to_vec().into_iter().map(Float::to_f64).collect();
    let n = v.len();
    let k = k.min(n);
    let (_, &mut cutoff, _) = v.select_nth_unstable_by(n - k, f64::total_cmp);
    let max = if negate {
        -s.summary.min
    } else {
        s.summary.max
    };
    Ok(TopK {
        cutoff: cutoff + 0.0,
        max: max + 0.0,
        binary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::radix::MIN_RADIX;
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    #[test]
    fn elki_mid_ranks() {
        let x = fit_sorted(&[3.0, 1.0, 2.0, 2.0, f64::NAN], NanPolicy::Omit, false).unwrap();
        assert_eq!(x, vec![1.0, 2.0, 2.0, 3.0]);
        let r = Rank {
            sorted: &x,
            log: false,
        };
        let got: Vec<f64> = [0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 9.0, f64::INFINITY]
            .iter()
            .map(|&s| r.probability(s))
            .collect();
        assert_eq!(
            got,
            vec![0.0, 0.0, 1.0 / 6.0, 0.5, 5.0 / 6.0, 1.0, 1.0, 1.0]
        );
        assert!(r.probability(f64::NAN).is_nan());
        let l = Rank {
            sorted: &x,
            log: true,
        };
        assert_eq!(l.probability(3.0), 1.0);
        assert!((l.probability(2.0) - 1.5f64.ln() / 2f64.ln()).abs() < 1e-15);
        let one = [5.0];
        let r1 = Rank {
            sorted: &one,
            log: false,
        };
        assert_eq!(
            [
                r1.probability(4.0),
                r1.probability(5.0),
                r1.probability(6.0)
            ],
            [0.0, 0.5, 1.0]
        );
        let flat = [2.0; 4];
        assert_eq!(
            Rank {
                sorted: &flat,
                log: false
            }
            .probability(2.0),
            0.5
        );
    }

    #[test]
    fn top_k() {
        let x = [1.0f32, 5.0, 3.0, 4.0, 2.0];
        let t = fit_top_k(&x, 2, NanPolicy::Omit, false, true).unwrap();
        assert_eq!((t.cutoff, t.max), (4.0, 5.0));
        assert_eq!(
            [t.probability(3.9), t.probability(4.0), t.probability(50.0)],
            [0.0, 1.0, 1.0]
        );
        let lin = TopK { binary: false, ..t };
        assert_eq!(
            [
                lin.probability(3.0),
                lin.probability(4.0),
                lin.probability(5.0)
            ],
            [0.0, 0.8, 1.0]
        );
        // The smallest subnormal as both cutoff and max: halving it gives 0.
        let tiny = TopK {
            cutoff: 5e-324,
            max: 5e-324,
            binary: false,
        };
        assert_eq!(
            [tiny.probability(5e-324), tiny.probability(1.0)],
            [1.0, 1.0]
        );
        let wide = TopK {
            cutoff: -f64::MAX,
            max: f64::MAX,
            binary: false,
        };
        assert_eq!(
            [wide.probability(0.0), wide.probability(f64::MAX)],
            [0.5, 1.0]
        );
        let neg = fit_top_k(&x, 99, NanPolicy::Omit, true, false).unwrap();
        assert_eq!((neg.cutoff, neg.max), (-5.0, -1.0));
        assert_eq!(neg.probability(-3.0), 0.5);
        assert!(fit_top_k(&x, 0, NanPolicy::Omit, false, true).is_err());
    }

    proptest! {
        #[test]
        fn mid_rank_counts_below_and_at(
            mut xs in prop::collection::vec(-5i32..5, 0..40),
            q in -6i32..6,
        ) {
            xs.sort_unstable();
            let v: Vec<f64> = xs.iter().map(|&i| f64::from(i)).collect();
            let s = f64::from(q);
            let r = Rank { sorted: &v, log: false };
            if !v.is_empty() {
                let lo = v.partition_point(|&u| u < s) as f64;
                let hi = v.partition_point(|&u| u <= s) as f64;
                let want = if v.len() == 1 {
                    if lo == 1.0 { 1.0 } else if hi == 1.0 { 0.5 } else { 0.0 }
                } else {
                    ((lo + hi - 1.0) / (2.0 * (v.len() as f64 - 1.0))).clamp(0.0, 1.0)
                };
                prop_assert_eq!(r.mid_rank(s), want);
            }
        }

        #[test]
        fn search_index_counts_as_partition_point(
            mut xs in prop::collection::vec(-50i32..50, 1..9000),
            qs in prop::collection::vec(-51i32..51, 1..40),
        ) {
            // Up to three levels above the scores (32³ > 9000 > 32²), and
            // long tie groups across block boundaries.
            xs.sort_unstable();
            let v: Vec<f64> = xs.iter().map(|&i| f64::from(i)).collect();
            let index = SearchIndex::new(&v);
            let r = Rank { sorted: &v, log: false };
            let ir = IndexedRank { rank: r, index: &index };
            prop_assert!(ir.check().is_ok());
            let mut queries: Vec<f64> = qs.iter().map(|&q| f64::from(q) + 0.5 * f64::from(q % 2)).collect();
            queries.extend([f64::INFINITY, f64::NEG_INFINITY, v[0], v[v.len() - 1]]);
            queries.push(f64::NAN);
            for &s in &queries {
                if !s.is_nan() {
                    prop_assert_eq!(index.lower_bound(&v, s), v.partition_point(|&u| u < s));
                }
                prop_assert_eq!(ir.probability(s).to_bits(), r.probability(s).to_bits());
            }
            // The grouped column transform, with a negation and a short last group.
            let mut got = vec![0.0; queries.len()];
            ir.transform_column(&queries, &mut got, true);
            for (g, &s) in got.iter().zip(&queries) {
                prop_assert_eq!(g.to_bits(), r.probability(-s).to_bits());
            }
        }

        #[test]
        fn fit_transform_is_fit_then_transform(
            xs in prop::collection::vec(prop_oneof![Just(0.0f64), Just(-0.0), -3.0f64..3.0, Just(f64::NAN)], 1..40),
            log in any::<bool>(),
            negate in any::<bool>(),
        ) {
            let Ok(sorted) = fit_sorted(&xs, NanPolicy::Omit, negate) else {
                prop_assert!(xs.iter().all(|v| v.is_nan()));
                return Ok(());
            };
            let mut got = vec![0.0f64; xs.len()];
            let fused = fit_transform_rank(&xs, &mut got, NanPolicy::Omit, negate, log).unwrap();
            prop_assert_eq!(&fused, &sorted);
            let mut by_pairs = vec![0.0f64; xs.len()];
            let s = Sample::new(&xs, NanPolicy::Omit, negate).unwrap();
            prop_assert_eq!(&fit_transform_rank_by_pairs(&s, &mut by_pairs, log), &sorted);
            for (g, w) in got.iter().zip(&by_pairs) {
                prop_assert_eq!(g.to_bits(), w.to_bits());
            }
            let r = Rank { sorted: &sorted, log };
            for (g, &v) in got.iter().zip(&xs) {
                let want = r.probability(if negate { -v } else { v });
                prop_assert!(g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()));
            }
        }

        #[test]
        fn key_sort_is_the_pair_sort(
            xs in prop::collection::vec(prop_oneof![
                Just(0.0f64), Just(-0.0), Just(f64::NAN), Just(f64::INFINITY),
                Just(f64::NEG_INFINITY), -3.0f64..3.0, (-5i32..5).prop_map(f64::from),
                prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL,
            ], 1..1500),
            log in any::<bool>(),
            negate in any::<bool>(),
        ) {
            // f64 and f32, up to the lengths where pdqsort leaves insertion sort.
            same_as_the_pair_sort(&xs, log, negate)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Lengths that take the radix sort (float32), with scores whose
        /// keys differ in their lowest bits only.
        #[test]
        fn radix_sort_is_the_pair_sort(
            xs in prop::collection::vec(prop_oneof![
                Just(0.0f64), Just(-0.0), Just(f64::NAN), Just(f64::INFINITY),
                Just(f64::NEG_INFINITY), -3.0f64..3.0, (-5i32..5).prop_map(f64::from),
                (0u64..40_000).prop_map(|k| f64::from_bits(1.5f64.to_bits() + k)),
                (0u64..40_000).prop_map(|k| -f64::from_bits(1e-310f64.to_bits() + k)),
                prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL,
            ], MIN_RADIX..MIN_RADIX + 4000),
            log in any::<bool>(),
            negate in any::<bool>(),
        ) {
            same_as_the_pair_sort(&xs, log, negate)?;
        }
    }

    /// `fit_transform_rank` and `fit_sorted` against the pair sort, in f64 and f32: the same bits.
    fn same_as_the_pair_sort(xs: &[f64], log: bool, negate: bool) -> Result<(), TestCaseError> {
        let Ok(s) = Sample::new(xs, NanPolicy::Omit, negate) else {
            return Ok(());
        };
        let mut want = vec![0.0f64; xs.len()];
        let sorted = fit_transform_rank_by_pairs(&s, &mut want, log);
        prop_assert_eq!(&fit_sorted(xs, NanPolicy::Omit, negate).unwrap(), &sorted);
        let mut got = vec![0.0f64; xs.len()];
        prop_assert_eq!(
            &fit_transform_rank(xs, &mut got, NanPolicy::Omit, negate, log).unwrap(),
            &sorted
        );
        prop_assert!(got
            .iter()
            .zip(&want)
            .all(|(g, w)| g.to_bits() == w.to_bits()));
        let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
        // Scores beyond f32's range become ±inf: refused as in f64.
        let Ok(s32) = Sample::new(&x32, NanPolicy::Omit, negate) else {
            return Ok(());
        };
        let mut want32 = vec![0.0f32; xs.len()];
        let sorted32 = fit_transform_rank_by_pairs(&s32, &mut want32, log);
        let mut got32 = vec![0.0f32; xs.len()];
        prop_assert_eq!(
            &fit_transform_rank(&x32, &mut got32, NanPolicy::Omit, negate, log).unwrap(),
            &sorted32
        );
        prop_assert!(got32
            .iter()
            .zip(&want32)
            .all(|(g, w)| g.to_bits() == w.to_bits()));
        Ok(())
    }

    proptest! {
        #[test]
        fn rank_is_monotone_in_unit_interval(
            mut xs in prop::collection::vec(-1e6f64..1e6, 1..50),
            mut qs in prop::collection::vec(-2e6f64..2e6, 2..20),
            log in any::<bool>(),
        ) {
            xs.sort_by(f64::total_cmp);
            qs.sort_by(f64::total_cmp);
            let r = Rank { sorted: &xs, log };
            let ps: Vec<f64> = qs.iter().map(|&q| r.probability(q)).collect();
            prop_assert!(ps.iter().all(|p| (0.0..=1.0).contains(p)));
            prop_assert!(ps.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}
