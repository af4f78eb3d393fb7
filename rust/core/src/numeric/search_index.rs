//! The search index over sorted values: `#{v < q}` — how many values lie
//! below a query — in one cache line read, instead of a binary search's
//! ~log₂ n dependent reads (each a cache miss once the values outgrow the
//! cache). One index serves every count of the library: rank scaling
//! (contract §10) counts fitted scores below a score through it, plain,
//! Label-Trim and weighted conformal p-values (§11, §13) calibration scores,
//! integrative p-values (§13) calibration scores, outlier scores and
//! fraction keys.
//!
//! Each bucket is one 64-byte line holding its start, its end and its
//! first [`INLINE`] values (the rest padded with +∞), so a query costs the
//! line's miss and a fixed number of compares; only buckets longer than
//! [`INLINE`] read the values as well, and only for a query above the
//! line's last value. Queries come in groups
//! ([`SearchIndex::lower_bounds`]) whose lines are requested together, so
//! that their misses overlap. A query's `#{v ≤ q}` lies in the same line
//! as its `#{v < q}`, so the two come from one read
//! ([`SearchIndex::lower_and_upper_bounds`]: integrative p-values need
//! both for a test score's prefix and its u₀).
//!
//! Buckets come from a two-level piecewise-linear model of the values'
//! distribution function (a recursive model index, Kraska et al., *The Case
//! for Learned Index Structures*, SIGMOD 2018, made exact): a top level of
//! one segment per about [`PER_SEGMENT`] values, equal in value or in the
//! 64-bit order key (the build takes the one whose segments are more even,
//! the smaller Σ count²: equal in value suits values spread about 0, equal
//! in key — equal in relative width — long-tailed positive scores), and
//! within segment k, `⌈cₖ/`[`PER_LINE`]`⌉` buckets equal in width. The
//! bucket of x is a non-decreasing function of x that values and queries
//! share, so every value below a query lies in its bucket or an earlier one
//! and every value in an earlier bucket lies below it: the count is the
//! bucket's start plus its values below the query, exact whatever the
//! model's fit (a poor fit — heavy ties, a few far outliers — only makes
//! buckets longer, and a long bucket is binary-searched).
//!
//! Why this design: it replaced a bucket table (the cumulative histogram of
//! distribution counting, Knuth, *TAOCP* vol. 3, §5.2, Algorithm D: a
//! bucket's two u32 starts in a table, then its values — two misses per
//! query, 4 to 8 bytes per value). Measured against it on both query
//! patterns — queries against calibration scores (conformal) and against
//! fitted long-tailed scores (rank) — with `examples/index_compare.rs`,
//! the line design answered both faster out of cache, and integrative
//! p-values too, for a build about twice the table's; in cache the table
//! kept a small lead on the rank pattern. A long bucket's overflow is read
//! only for a query above its line's last value (below it, no overflow
//! value can be below the query), and the overflows of a group are
//! requested together. The figures are in
//! `benches/results/2026-12-07-one-index-pvalue-paths-cpu-xeon-2vcpu.md`.
//!
//! Trade-offs: about 64/[`PER_LINE`] = 16 bytes per value (against the
//! table's 4 to 8) plus 4 bytes per segment — a fitted rank map holds it
//! per column beside its 8-byte sorted scores; slices longer than
//! `u32::MAX` get no lines and their queries are binary searches. Any index
//! gives the answers of `partition_point`.

use crate::numeric::float::order_key;
use crate::numeric::rank::prefetch;
use crate::numeric::scratch::zeroed;

/// Queries whose reads are requested together ([`SearchIndex::lower_bounds`]).
pub const GROUP: usize = 32;

/// Values held in a line.
pub const INLINE: usize = 7;
/// Values per bucket on average (Poisson-like counts exceed [`INLINE`]
/// for about one bucket in twenty).
const PER_LINE: usize = 4;
/// Values per top-level segment on average: the segment table (4 bytes
/// per segment) stays in the cache.
const PER_SEGMENT: usize = 32;
/// Overflows longer than this are searched, shorter ones scanned.
const SCAN: usize = 16;

/// One bucket: its values are `values[start..end]`, the first
/// [`INLINE`] of them copied, then +∞.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
struct Line {
    start: u32,
    end: u32,
    head: [f64; INLINE],
}

impl Default for Line {
    fn default() -> Self {
        Line {
            start: 0,
            end: 0,
            head: [f64::INFINITY; INLINE],
        }
    }
}

/// The top level: a non-decreasing map of x in `[min, max]` to `[0, m]`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Top {
    /// `(x − min)·scale`.
    Value { min: f64, scale: f64 },
    /// `(order_key(x) − base)·scale`.
    Key { base: u64, scale: f64 },
}

impl Top {
    #[inline(always)]
    fn of(self, x: f64) -> f64 {
        match self {
            Top::Value { min, scale } => (x - min) * scale,
            // +0: −0 and +0 share a key.
            Top::Key { base, scale } => (order_key(x + 0.0) - base) as f64 * scale,
        }
    }

    /// Σ (values per segment)² of `values` in `m` segments.
    fn unevenness(self, values: &[f64], m: usize) -> f64 {
        let mut squares = 0.0;
        let mut run = 0.0f64;
        let mut last = usize::MAX;
        for &v in values {
            let k = (self.of(v) as usize).min(m - 1);
            if k != last {
                squares += run * run;
                run = 0.0;
                last = k;
            }
            run += 1.0;
        }
        squares + run * run
    }
}

/// The line index of a sorted, finite slice.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchIndex {
    top: Top,
    /// The smallest value (+∞ for an empty slice: every query counts 0).
    min: f64,
    /// The largest value.
    max: f64,
    /// `segments[k]`: the first bucket of segment k; one more entry than
    /// segments. Empty: no lines, queries search the whole slice.
    segments: Vec<u32>,
    lines: Vec<Line>,
}

impl SearchIndex {
    /// The index of `values` (ascending and finite; −0 and +0 may both
    /// occur).
    pub fn new(values: &[f64]) -> Self {
        Self::with_lines_up_to(values, u32::MAX as usize)
    }

    /// The index, with lines only for at most `most` values (positions are
    /// u32).
    fn with_lines_up_to(values: &[f64], most: usize) -> Self {
        let n = values.len();
        let (Some(&first), Some(&last)) = (values.first(), values.last()) else {
            return SearchIndex {
                top: Top::Value {
                    min: 0.0,
                    scale: 0.0,
                },
                min: f64::INFINITY,
                max: f64::INFINITY,
                segments: Vec::new(),
                lines: Vec::new(),
            };
        };
        let (min, max) = (first + 0.0, last + 0.0);
        let m = (n / PER_SEGMENT).max(1);
        let base = order_key(min);
        let range = order_key(max) - base;
        let mut top = Top::Key {
            base,
            scale: if range == 0 {
                0.0
            } else {
                m as f64 / range as f64
            },
        };
        if n > most {
            return SearchIndex {
                top,
                min,
                max,
                segments: Vec::new(),
                lines: Vec::new(),
            };
        }
        let width = max - min;
        if width.is_finite() && width > 0.0 {
            let by_value = Top::Value {
                min,
                scale: m as f64 / width,
            };
            if by_value.unevenness(values, m) < top.unevenness(values, m) {
                top = by_value;
            }
        }
        // Buckets per segment: ⌈count / PER_LINE⌉, at least one.
        let mut counts = vec![0usize; m];
        for &v in values {
            counts[(top.of(v) as usize).min(m - 1)] += 1;
        }
        let mut segments = Vec::with_capacity(m + 1);
        let mut total = 0usize;
        segments.push(0u32);
        for c in counts {
            total += c.div_ceil(PER_LINE).max(1);
            segments.push(total as u32);
        }
        let mut index = SearchIndex {
            top,
            min,
            max,
            segments,
            lines: Vec::new(),
        };
        index.lines = index.fill(values);
        index
    }

    /// The lines of `values`, bucketed as queries will be.
    fn fill(&self, values: &[f64]) -> Vec<Line> {
        let count = self.segments[self.segments.len() - 1] as usize;
        // Huge pages where the kernel allows: the reads are random.
        let mut lines = zeroed::<Line>(count);
        let mut at = 0usize;
        for (b, line) in lines.iter_mut().enumerate() {
            let start = at;
            while at < values.len() && self.bucket(values[at]) == b {
                at += 1;
            }
            line.start = start as u32;
            line.end = at as u32;
            for (h, &v) in line.head.iter_mut().zip(&values[start..at]) {
                *h = v;
            }
        }
        debug_assert_eq!(at, values.len());
        lines
    }

    /// The bucket of x in `[min, max]`: non-decreasing in x.
    #[inline(always)]
    fn bucket(&self, x: f64) -> usize {
        let u = self.top.of(x);
        let last = self.segments.len() - 2;
        let k = (u as usize).min(last);
        let first = self.segments[k] as usize;
        let buckets = self.segments[k + 1] as usize - first;
        let within = (u - k as f64) * buckets as f64;
        first + (within as usize).min(buckets - 1)
    }

    /// The bucket of `q`, or the count itself when `q` lies outside the
    /// values' range (or is NaN: 0) or there are no lines.
    #[inline]
    fn locate(&self, values: &[f64], q: f64) -> Result<usize, usize> {
        if q.is_nan() || q <= self.min {
            // q ≤ the smallest value: none below it.
            return Err(0);
        }
        if q > self.max {
            return Err(values.len());
        }
        if self.lines.is_empty() {
            return Err(values.partition_point(|&v| v < q));
        }
        Ok(self.bucket(q))
    }

    /// The count below `q` of a line's head, from the bucket's start, and
    /// the bucket's overflow `from..end` when it must be read: only when
    /// `q` lies above the last head value (else every overflow value, at
    /// least that large, is ≥ q), so most queries into a long bucket read
    /// the line alone.
    #[inline(always)]
    fn head_count(line: &Line, q: f64) -> (usize, Option<(usize, usize)>) {
        let mut c = line.start as usize;
        for &h in &line.head {
            c += usize::from(h < q);
        }
        let (from, end) = (line.start as usize + INLINE, line.end as usize);
        let over = (end > from && line.head[INLINE - 1] < q).then_some((from, end));
        (c, over)
    }

    /// The overflow values `values[from..end]` below `q`.
    #[inline(always)]
    fn overflow_count(values: &[f64], (from, end): (usize, usize), q: f64) -> usize {
        let run = &values[from..end];
        if run.len() <= SCAN {
            run.iter().map(|&v| usize::from(v < q)).sum::<usize>()
        } else {
            run.partition_point(|&v| v < q)
        }
    }

    /// The count below `q` of a line's bucket, from its start.
    #[inline(always)]
    fn count_in(line: &Line, values: &[f64], q: f64) -> usize {
        match Self::head_count(line, q) {
            (c, None) => c,
            (c, Some(run)) => c + Self::overflow_count(values, run, q),
        }
    }

    /// `#{v in values : v < q}` for the slice the index was built on; NaN
    /// queries give 0.
    #[inline]
    pub fn lower_bound(&self, values: &[f64], q: f64) -> usize {
        match self.locate(values, q) {
            Err(count) => count,
            Ok(b) => Self::count_in(&self.lines[b], values, q),
        }
    }

    /// [`SearchIndex::lower_bound`] of up to [`GROUP`] queries into `out`:
    /// the group's lines are requested first, so that their misses overlap.
    pub fn lower_bounds(&self, values: &[f64], qs: &[f64], out: &mut [usize]) {
        debug_assert!(qs.len() <= GROUP && out.len() == qs.len());
        let mut buckets = [usize::MAX; GROUP];
        for (i, &q) in qs.iter().enumerate() {
            match self.locate(values, q) {
                Err(count) => out[i] = count,
                Ok(b) => {
                    prefetch(&self.lines[b]);
                    buckets[i] = b;
                }
            }
        }
        // Then the overflows the lines call for, requested together too.
        let mut runs = [(0usize, 0usize, 0usize); GROUP];
        let mut pending = 0;
        for (i, &q) in qs.iter().enumerate() {
            if buckets[i] != usize::MAX {
                let (c, over) = Self::head_count(&self.lines[buckets[i]], q);
                out[i] = c;
                if let Some((from, end)) = over {
                    prefetch(&values[from]);
                    runs[pending] = (i, from, end);
                    pending += 1;
                }
            }
        }
        for &(i, from, end) in &runs[..pending] {
            out[i] += Self::overflow_count(values, (from, end), qs[i]);
        }
    }
}

impl SearchIndex {
    /// `(#{v < q}, #{v ≤ q})` from one line: values equal to `q` share its
    /// bucket, and no value ≤ `q` lies in a later one.
    #[inline]
    fn both_in(line: &Line, values: &[f64], q: f64) -> (usize, usize) {
        let (mut lt, mut le) = (line.start as usize, line.start as usize);
        for &h in &line.head {
            lt += usize::from(h < q);
            le += usize::from(h <= q);
        }
        let (from, end) = (line.start as usize + INLINE, line.end as usize);
        if end > from && line.head[INLINE - 1] <= q {
            let run = &values[from..end];
            if run.len() <= SCAN {
                for &v in run {
                    lt += usize::from(v < q);
                    le += usize::from(v <= q);
                }
            } else {
                lt += run.partition_point(|&v| v < q);
                le += run.partition_point(|&v| v <= q);
            }
        }
        (lt, le)
    }

    /// `#{v < qᵢ}` into `below` and `#{v ≤ qᵢ}` into `at_most` of up to
    /// [`GROUP`] non-NaN queries, one line read for both: the two counts
    /// of [`SearchIndex::lower_bounds`] of `qᵢ` and of `next_up(qᵢ)` on
    /// finite values, for the price of one.
    pub fn lower_and_upper_bounds(
        &self,
        values: &[f64],
        qs: &[f64],
        below: &mut [usize],
        at_most: &mut [usize],
    ) {
        debug_assert!(qs.len() <= GROUP && below.len() == qs.len() && at_most.len() == qs.len());
        let mut buckets = [usize::MAX; GROUP];
        for (i, &q) in qs.iter().enumerate() {
            debug_assert!(!q.is_nan());
            if q < self.min {
                (below[i], at_most[i]) = (0, 0);
            } else if q > self.max {
                (below[i], at_most[i]) = (values.len(), values.len());
            } else if self.lines.is_empty() {
                below[i] = values.partition_point(|&v| v < q);
                at_most[i] = values.partition_point(|&v| v <= q);
            } else {
                let b = self.bucket(q);
                prefetch(&self.lines[b]);
                buckets[i] = b;
            }
        }
        for (i, &q) in qs.iter().enumerate() {
            if buckets[i] != usize::MAX {
                (below[i], at_most[i]) = Self::both_in(&self.lines[buckets[i]], values, q);
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

    #[test]
    fn ties_and_long_buckets_count_exactly() {
        // Heavy ties and a far outlier crowd most values into few buckets.
        let mut v: Vec<f64> = (0..5000).map(|i| f64::from(i % 7)).collect();
        v.push(1e300);
        v.sort_by(f64::total_cmp);
        let index = SearchIndex::new(&v);
        for q in [
            -1.0,
            0.0,
            0.5,
            1.0,
            3.0,
            6.0,
            6.5,
            1e299,
            1e300,
            f64::INFINITY,
        ] {
            assert_eq!(index.lower_bound(&v, q), v.partition_point(|&y| y < q));
        }
        // Grouped, every overflow read or skipped: queries at and between
        // the values of the long buckets.
        let qs: Vec<f64> = (0..2 * GROUP)
            .map(|i| (i % 15) as f64 * 0.5 - 0.5)
            .collect();
        for g in qs.chunks(GROUP) {
            let mut out = vec![0usize; g.len()];
            index.lower_bounds(&v, g, &mut out);
            for (&q, &c) in g.iter().zip(&out) {
                assert_eq!(c, v.partition_point(|&y| y < q), "{q}");
            }
            let (mut lt, mut le) = (vec![0usize; g.len()], vec![0usize; g.len()]);
            index.lower_and_upper_bounds(&v, g, &mut lt, &mut le);
            for ((&q, &a), &b) in g.iter().zip(&lt).zip(&le) {
                assert_eq!(a, v.partition_point(|&y| y < q), "{q}");
                assert_eq!(b, v.partition_point(|&y| y <= q), "{q}");
            }
        }
    }

    proptest! {
        #[test]
        fn counts_like_a_binary_search(
            mut v in prop::collection::vec(prop_oneof![
                -1e3f64..1e3,
                prop::num::f64::NORMAL,
                Just(0.0), Just(-0.0), Just(1.0),
            ], 1..600),
            q in prop::collection::vec(prop_oneof![
                prop::num::f64::ANY, -1e3f64..1e3, Just(0.0), Just(-0.0)
            ], 1..100),
        ) {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let index = SearchIndex::new(&v);
            let lines = index.lines.len();
            prop_assert!(lines <= v.len() / PER_LINE + v.len() / PER_SEGMENT + 2);
            for &x in q.iter().chain(&v) {
                let want = if x.is_nan() { 0 } else { v.partition_point(|&y| y < x) };
                prop_assert_eq!(index.lower_bound(&v, x), want, "{}", x);
            }
            // Both counts from one line.
            for g in q.iter().copied().filter(|x| !x.is_nan()).collect::<Vec<_>>().chunks(GROUP) {
                let (mut lt, mut le) = (vec![0usize; g.len()], vec![0usize; g.len()]);
                for idx in [&index, &SearchIndex::with_lines_up_to(&v, 0)] {
                    idx.lower_and_upper_bounds(&v, g, &mut lt, &mut le);
                    for ((&x, &a), &b) in g.iter().zip(&lt).zip(&le) {
                        prop_assert_eq!(a, v.partition_point(|&y| y < x), "{}", x);
                        prop_assert_eq!(b, v.partition_point(|&y| y <= x), "{}", x);
                    }
                }
            }
            // Without lines (the slices beyond u32 positions): the same.
            let whole = SearchIndex::with_lines_up_to(&v, 0);
            for g in q.chunks(GROUP) {
                let mut out = vec![0usize; g.len()];
                index.lower_bounds(&v, g, &mut out);
                for (&x, &c) in g.iter().zip(&out) {
                    prop_assert_eq!(c, index.lower_bound(&v, x));
                }
                whole.lower_bounds(&v, g, &mut out);
                for (&x, &c) in g.iter().zip(&out) {
                    prop_assert_eq!(c, index.lower_bound(&v, x));
                }
            }
        }

        #[test]
        fn smooth_values_fill_short_lines(n in 1000usize..5000, seed: u64) {
            // Uniform-ish values: the model fits, most lines hold their
            // bucket whole.
            let mut u = crate::numeric::testing::uniforms(seed | 1);
            let mut v: Vec<f64> = (0..n).map(|_| u()).collect();
            v.sort_by(f64::total_cmp);
            let index = SearchIndex::new(&v);
            let long = index.lines.iter().filter(|l| (l.end - l.start) as usize > INLINE).count();
            prop_assert!(long * 5 < index.lines.len(), "{} of {}", long, index.lines.len());
            for &x in &v {
                prop_assert_eq!(index.lower_bound(&v, x), v.partition_point(|&y| y < x));
            }
        }
    }
}
