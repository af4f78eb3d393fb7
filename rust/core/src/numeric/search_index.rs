//! A search index over sorted values: `#{v < q}` — how many values lie
//! below a query — in one table read and a short scan, instead of a binary
//! search's ~log₂ n dependent reads (each a cache miss once the values
//! outgrow the cache). Rank scaling (contract §10) counts fitted scores
//! below a score through it, conformal p-values (§11) calibration scores.
//!
//! The table is the cumulative histogram of distribution counting (Knuth,
//! *TAOCP* vol. 3, §5.2, Algorithm D) over about as many buckets as there
//! are values: for each bucket, how many values lie in the buckets before
//! it. A query reads its bucket's two table entries and counts the values
//! of the bucket below it — by a scan when the bucket is short, by a
//! binary search when the values crowd into it (then the cost is that of a
//! search over the bucket only). Buckets are equal in value (good for
//! values spread evenly, e.g. around 0) or in the 64-bit order key (equal
//! in relative width: good for long-tailed positive scores); the build
//! takes the one whose buckets are shorter for the values themselves (the
//! smaller Σ count² / n). Queries come in groups ([`SearchIndex::lower_bounds`])
//! whose table and value reads are requested together, so that their
//! cache misses overlap.
//!
//! Trade-offs: the table costs 4 to 8 bytes per value (u32 positions, up
//! to twice as many buckets as values) and two O(n) passes to build, where
//! a static search tree over every 32nd value costs n/4 bytes but a read
//! per level; values crowded into a few buckets (heavy ties, a few far
//! outliers stretching the range) fall back to binary searches within a
//! bucket. Slices longer than `u32::MAX` get no table: their queries are
//! binary searches. The counts are exact either way: any index gives the
//! same answers as `partition_point`.

use crate::numeric::float::order_key;
use crate::numeric::rank::prefetch;
use crate::numeric::scratch::zeroed;

/// Queries whose reads are requested together ([`SearchIndex::lower_bounds`]).
pub const GROUP: usize = 32;

/// About `2^SPREAD` values per bucket.
const SPREAD: u32 = 0;

/// Buckets longer than this are searched, shorter ones scanned.
const SCAN: usize = 16;
/// Buckets up to this long are counted without a loop.
const SHORT: usize = 4;

/// How a score in `[min, max]` finds its bucket (monotone non-decreasing).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Buckets {
    /// `(order_key(v) − base) >> shift`.
    Key { base: u64, shift: u32 },
    /// `⌊(v − min)·scale⌋`.
    Value { min: f64, scale: f64 },
}

impl Buckets {
    #[inline(always)]
    fn of(self, v: f64) -> usize {
        match self {
            Buckets::Key { base, shift } => ((order_key(v + 0.0) - base) >> shift) as usize,
            Buckets::Value { min, scale } => ((v - min) * scale) as usize,
        }
    }
}

/// The bucket table of a sorted, finite slice.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchIndex {
    buckets: Buckets,
    /// The smallest value (+inf for an empty slice: every query counts 0).
    min: f64,
    /// The largest value.
    max: f64,
    /// `starts[b]` = values in buckets before b; one more entry than
    /// buckets. Empty: no table, queries search the whole slice.
    starts: Vec<u32>,
}

/// `starts` of `values` in `count` buckets, and Σ (bucket size)².
fn table(values: &[f64], buckets: Buckets, count: usize) -> (Vec<u32>, f64) {
    // Huge pages where the kernel allows: the reads are random, and with
    // 4 KiB pages most would miss the TLB as well as the cache.
    let mut starts = zeroed::<u32>(count + 1);
    let mut at = 0usize;
    let mut squares = 0.0f64;
    for (b, s) in starts.iter_mut().enumerate() {
        let from = at;
        while at < values.len() && buckets.of(values[at]).min(count - 1) < b {
            at += 1;
        }
        let c = (at - from) as f64;
        squares += c * c;
        *s = at as u32;
    }
    (starts, squares)
}

impl SearchIndex {
    /// The index of `values` (ascending and finite; −0 and +0 may both
    /// occur).
    pub fn new(values: &[f64]) -> Self {
        Self::with_table_up_to(values, u32::MAX as usize, SPREAD)
    }

    /// The index with about `2^spread` values per bucket (for measuring
    /// the trade-off between the table's size and the scans).
    pub fn with_spread(values: &[f64], spread: u32) -> Self {
        Self::with_table_up_to(values, u32::MAX as usize, spread)
    }

    /// The index, with a table only for at most `most` values (positions
    /// are u32), about `2^spread` values per bucket.
    fn with_table_up_to(values: &[f64], most: usize, spread: u32) -> Self {
        let n = values.len();
        let (Some(&first), Some(&last)) = (values.first(), values.last()) else {
            return SearchIndex {
                buckets: Buckets::Value {
                    min: 0.0,
                    scale: 0.0,
                },
                min: f64::INFINITY,
                max: f64::INFINITY,
                starts: Vec::new(),
            };
        };
        let (min, max) = (first + 0.0, last + 0.0);
        if n > most {
            return SearchIndex {
                buckets: Buckets::Value { min, scale: 0.0 },
                min,
                max,
                starts: Vec::new(),
            };
        }
        // At least 2: the shift below then stays under 64.
        let target = (n.next_power_of_two() as u64 >> spread).max(2);
        let base = order_key(min);
        let range = order_key(max) - base;
        let mut shift = 0u32;
        while shift < 64 && (range >> shift) >= target {
            shift += 1;
        }
        let by_key = Buckets::Key { base, shift };
        let (mut starts, cost) = table(values, by_key, ((range >> shift) + 1) as usize);
        let mut buckets = by_key;
        let width = max - min;
        if width.is_finite() && width > 0.0 {
            let by_value = Buckets::Value {
                min,
                scale: target as f64 / width,
            };
            let (other, other_cost) = table(values, by_value, target as usize + 1);
            if other_cost < cost {
                starts = other;
                buckets = by_value;
            }
        }
        SearchIndex {
            buckets,
            min,
            max,
            starts,
        }
    }

    /// The bucket of `q`, or the count itself when `q` lies outside the
    /// values' range (or is NaN: 0) or there is no table.
    #[inline]
    fn bucket(&self, values: &[f64], q: f64) -> Result<usize, usize> {
        if q.is_nan() || q <= self.min {
            // q ≤ the smallest value: none below it.
            return Err(0);
        }
        if q > self.max {
            return Err(values.len());
        }
        if self.starts.is_empty() {
            return Err(values.partition_point(|&v| v < q));
        }
        Ok(self.buckets.of(q).min(self.starts.len() - 2))
    }

    #[inline]
    fn count_in(values: &[f64], lo: usize, hi: usize, q: f64) -> usize {
        let len = hi - lo;
        if len <= SHORT {
            // Most buckets: a fixed number of compares without a branch on
            // the bucket's length (which would mispredict at random).
            let mut c = 0usize;
            for j in 0..SHORT {
                let v = values.get(lo + j).copied().unwrap_or(f64::INFINITY);
                c += usize::from(j < len && v < q);
            }
            return lo + c;
        }
        let run = &values[lo..hi];
        lo + if len <= SCAN {
            run.iter().map(|&v| usize::from(v < q)).sum::<usize>()
        } else {
            run.partition_point(|&v| v < q)
        }
    }

    /// `#{v in values : v < q}` for the slice the index was built on; NaN
    /// queries give 0.
    #[inline]
    pub fn lower_bound(&self, values: &[f64], q: f64) -> usize {
        match self.bucket(values, q) {
            Err(count) => count,
            Ok(b) => Self::count_in(
                values,
                self.starts[b] as usize,
                self.starts[b + 1] as usize,
                q,
            ),
        }
    }

    /// [`SearchIndex::lower_bound`] of up to [`GROUP`] queries into `out`: the
    /// table reads of the whole group are requested first, then its score
    /// reads, so that their cache misses overlap.
    pub fn lower_bounds(&self, values: &[f64], qs: &[f64], out: &mut [usize]) {
        debug_assert!(qs.len() <= GROUP && out.len() == qs.len());
        let mut buckets = [usize::MAX; GROUP];
        for (i, &q) in qs.iter().enumerate() {
            match self.bucket(values, q) {
                Err(count) => out[i] = count,
                Ok(b) => {
                    prefetch(&self.starts[b]);
                    buckets[i] = b;
                }
            }
        }
        let mut ranges = [(0usize, 0usize); GROUP];
        for (i, &b) in buckets.iter().enumerate().take(qs.len()) {
            if b != usize::MAX {
                let (lo, hi) = (self.starts[b] as usize, self.starts[b + 1] as usize);
                if lo < hi {
                    prefetch(&values[lo]);
                }
                ranges[i] = (lo, hi);
            }
        }
        for (i, &q) in qs.iter().enumerate() {
            if buckets[i] != usize::MAX {
                out[i] = Self::count_in(values, ranges[i].0, ranges[i].1, q);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_counts_nothing() {
        let index = SearchIndex::new(&[]);
        for q in [f64::NEG_INFINITY, 0.0, 1e300, f64::INFINITY, f64::NAN] {
            assert_eq!(index.lower_bound(&[], q), 0);
        }
    }

    proptest! {
        #[test]
        fn counts_like_a_binary_search(
            mut v in prop::collection::vec(prop_oneof![
                -1e3f64..1e3,
                prop::num::f64::NORMAL,
                Just(0.0), Just(-0.0), Just(1.0),
            ], 1..300),
            q in prop::collection::vec(prop_oneof![
                prop::num::f64::ANY, -1e3f64..1e3, Just(0.0), Just(-0.0)
            ], 1..100),
        ) {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let index = SearchIndex::new(&v);
            for &x in &q {
                let want = if x.is_nan() { 0 } else { v.partition_point(|&y| y < x) };
                prop_assert_eq!(index.lower_bound(&v, x), want, "{}", x);
            }
            for &x in &v {
                prop_assert_eq!(index.lower_bound(&v, x), v.partition_point(|&y| y < x));
            }
            // Without a table (the slices beyond u32 positions): the same.
            let whole = SearchIndex::with_table_up_to(&v, 0, SPREAD);
            let sparse = SearchIndex::with_spread(&v, 3);
            for &x in &q {
                prop_assert_eq!(sparse.lower_bound(&v, x), index.lower_bound(&v, x));
            }
            for group in q.chunks(GROUP) {
                let mut out = vec![0usize; group.len()];
                index.lower_bounds(&v, group, &mut out);
                for (&x, &c) in group.iter().zip(&out) {
                    prop_assert_eq!(c, index.lower_bound(&v, x));
                }
                whole.lower_bounds(&v, group, &mut out);
                for (&x, &c) in group.iter().zip(&out) {
                    prop_assert_eq!(c, index.lower_bound(&v, x));
                }
            }
        }
    }
}
