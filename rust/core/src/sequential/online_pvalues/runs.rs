//! A counted multiset of u64 keys as a few sorted runs (contract §12,
//! online p-values): a batch of keys gets, for each key in arrival order,
//! how many keys stored before it — earlier batches and earlier in its
//! own batch — are greater and how many equal, and is then stored.
//!
//! The layout of a log-structured merge tree (O'Neil et al., *The
//! log-structured merge-tree*, Acta Informatica 1996): each batch becomes
//! a sorted run of its distinct keys, and a run is merged into the one
//! before it while that one is at most [`GROWTH`] times longer, so run
//! lengths grow geometrically and there are O(log n) of them. Every insert
//! is part of a sequential merge; a query is answered per run:
//!
//! * the batch's distinct keys are sorted once and walked in order against
//!   each run — a merge walk when the run is short, else through two
//!   samples of the run, every [`STEP`]-th key and every [`STEP`]-th of
//!   those: a galloping search of the coarse one (small, mostly cached)
//!   from the previous key's place gives a group of [`STEP`] sample
//!   entries, which gives a bucket of [`STEP`] keys; groups and buckets
//!   are fetched a few keys ahead, so that the misses of a large run (out
//!   of cache) overlap instead of being waited for one by one;
//! * the batch against itself: a Fenwick tree over the ranks of its
//!   distinct keys, filled in arrival order.
//!
//! Against a counted B+ tree (one descent per key) the trade is O(log n)
//! runs to search per key instead of one path, for inserts without random
//! writes and queries without dependent cache misses. The counts are
//! integers, exact in any layout: the p-values do not depend on it.

/// A run is merged into the one before it while that one is at most this
/// many times longer.
const GROWTH: usize = 4;
/// Keys per bucket of a run's sample.
const STEP: usize = 8;
/// A run at most this many times longer than the batch is merge-walked,
/// not searched through its sample.
const WALK: usize = 8;
/// Keys ahead whose bucket is prefetched.
const AHEAD: usize = 16;

/// Distinct keys, ascending, with their counts.
#[derive(Debug, Clone)]
struct Run {
    keys: Vec<u64>,
    /// `below[i]`: the count of `keys[..i]`, `keys.len() + 1` entries; None
    /// when every count is 1 (then `below[i] = i`), as in a stream of
    /// distinct scores.
    below: Option<Vec<u64>>,
    /// `keys[STEP·j]` for each j.
    sample: Vec<u64>,
    /// `sample[STEP·j]` for each j.
    coarse: Vec<u64>,
}

impl Run {
    fn new(keys: Vec<u64>, below: Option<Vec<u64>>) -> Self {
        let sample: Vec<u64> = keys.iter().step_by(STEP).copied().collect();
        let coarse = sample.iter().step_by(STEP).copied().collect();
        Run {
            keys,
            below,
            sample,
            coarse,
        }
    }

    #[inline(always)]
    fn below(&self, i: usize) -> u64 {
        match &self.below {
            None => i as u64,
            Some(b) => b[i],
        }
    }

    #[inline(always)]
    fn count(&self, i: usize) -> u64 {
        match &self.below {
            None => 1,
            Some(b) => b[i + 1] - b[i],
        }
    }

    /// (count of keys < u, count of keys == u) given `at`, the number of
    /// keys < u.
    #[inline(always)]
    fn counts_at(&self, at: usize, u: u64) -> (u64, u64) {
        let equal = if at < self.keys.len() && self.keys[at] == u {
            self.count(at)
        } else {
            0
        };
        (self.below(at), equal)
    }

    /// Adds, for each of the ascending distinct `us`, the count of this
    /// run's keys below it to `lt` and of those equal to `eq`.
    fn count_into(&self, us: &[u64], lt: &mut [u64], eq: &mut [u64]) {
        let r = self.keys.len();
        if r <= WALK * us.len() {
            let mut at = 0usize;
            for (t, &u) in us.iter().enumerate() {
                while at < r && self.keys[at] < u {
                    at += 1;
                }
                let (l, e) = self.counts_at(at, u);
                lt[t] += l;
                eq[t] += e;
            }
            return;
        }
        // Per key, in a pipeline: the sample entries ≤ u among one group
        // of the coarse sample (mostly cached, galloped as the keys
        // ascend) gives its group of the sample, which gives its bucket of
        // keys; each group and bucket is asked for a few keys before it is
        // read, so that the misses of a large run overlap.
        let (sample, coarse) = (&self.sample, &self.coarse);
        let mut group = Vec::with_capacity(us.len());
        let mut from = 0usize;
        for &u in us {
            from = gallop(coarse, from, u);
            group.push(from);
        }
        let group_range = |g: usize| (g - 1) * STEP..(g * STEP).min(sample.len());
        let bucket_range = |c: usize| (c - 1) * STEP..(c * STEP).min(r);
        // The bucket of key t: the sample entries ≤ u (0 when none is).
        let bucket_of = |t: usize| match group[t] {
            0 => 0,
            g => {
                let range = group_range(g);
                range.start
                    + sample[range]
                        .iter()
                        .map(|&k| usize::from(k <= us[t]))
                        .sum::<usize>()
            }
        };
        let ask_bucket = |c: usize| {
            if c > 0 {
                let range = bucket_range(c);
                prefetch(&self.keys[range.clone()]);
                if let Some(b) = &self.below {
                    prefetch(&b[range.start..=range.end]);
                }
            }
        };
        let mut bucket = vec![0usize; us.len()];
        for t in 0..AHEAD.min(us.len()) {
            bucket[t] = bucket_of(t);
            ask_bucket(bucket[t]);
        }
        for t in 0..us.len() {
            if let Some(&g) = group.get(t + 2 * AHEAD) {
                if g > 0 {
                    prefetch(&sample[group_range(g)]);
                }
            }
            if t + AHEAD < us.len() {
                bucket[t + AHEAD] = bucket_of(t + AHEAD);
                ask_bucket(bucket[t + AHEAD]);
            }
            let (u, c) = (us[t], bucket[t]);
            // No sample entry ≤ u: every key is greater. Else the keys
            // below u are those before the bucket and some of its own.
            let at = match c {
                0 => 0,
                c => {
                    let range = bucket_range(c);
                    range.start + count_below(&self.keys[range], u)
                }
            };
            let (l, e) = self.counts_at(at, u);
            lt[t] += l;
            eq[t] += e;
        }
    }

    /// The run of both runs' keys, counts of equal keys added.
    fn merge(a: &Run, b: &Run) -> Run {
        let (n, m) = (a.keys.len(), b.keys.len());
        let mut keys = Vec::with_capacity(n + m);
        let ones = a.below.is_none() && b.below.is_none();
        let mut below: Vec<u64> = Vec::new();
        let (mut i, mut j, mut total) = (0usize, 0usize, 0u64);
        if ones {
            // Distinct keys in both: only an equal pair needs counts.
            while i < n && j < m {
                let (x, y) = (a.keys[i], b.keys[j]);
                if x == y {
                    break;
                }
                keys.push(x.min(y));
                i += usize::from(x < y);
                j += usize::from(y < x);
            }
            if i == n || j == m {
                keys.extend_from_slice(&a.keys[i..]);
                keys.extend_from_slice(&b.keys[j..]);
                return Run::new(keys, None);
            }
            below = (0..=keys.len() as u64).collect();
            below.pop();
            total = keys.len() as u64;
        }
        below.reserve(n + m + 1 - below.len());
        let mut push = |k: u64, c: u64| {
            keys.push(k);
            below.push(total);
            total += c;
        };
        while i < n && j < m {
            let (x, y) = (a.keys[i], b.keys[j]);
            match x.cmp(&y) {
                std::cmp::Ordering::Less => {
                    push(x, a.count(i));
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    push(y, b.count(j));
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    push(x, a.count(i) + b.count(j));
                    i += 1;
                    j += 1;
                }
            }
        }
        for i in i..n {
            push(a.keys[i], a.count(i));
        }
        for j in j..m {
            push(b.keys[j], b.count(j));
        }
        below.push(total);
        Run::new(keys, Some(below))
    }
}

/// The first index ≥ `from` with `xs[index] > u` (xs ascending), by
/// doubling steps then halving.
#[inline(always)]
fn gallop(xs: &[u64], from: usize, u: u64) -> usize {
    let n = xs.len();
    if from >= n || xs[from] > u {
        return from;
    }
    // xs[lo] ≤ u; find hi with xs[hi] > u (or n).
    let (mut lo, mut step) = (from, 1usize);
    let mut hi = loop {
        let probe = lo + step;
        if probe >= n {
            break n;
        }
        if xs[probe] > u {
            break probe;
        }
        lo = probe;
        step *= 2;
    };
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if xs[mid] > u {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The count of `xs` below `u`, without branches: the loads do not wait
/// on each other.
#[inline(always)]
fn count_below(xs: &[u64], u: u64) -> usize {
    xs.iter().map(|&k| usize::from(k < u)).sum()
}

/// Prefetches the cache lines of `xs` (a no-op off x86-64).
#[inline(always)]
fn prefetch(xs: &[u64]) {
    #[cfg(target_arch = "x86_64")]
    for chunk in xs.chunks(8) {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint; it neither reads nor faults
        // architecturally, and SSE is part of every x86-64.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(chunk.as_ptr().cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = xs;
}

/// A multiset of u64 keys, counted, as sorted runs.
#[derive(Debug, Clone, Default)]
pub struct Runs {
    /// Longest first.
    runs: Vec<Run>,
    len: u64,
}

impl Runs {
    /// Keys stored (with multiplicity).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Fills `greater[j]`, `equal[j]` with the count of stored keys and of
    /// `keys[..j]` greater than, and equal to, `keys[j]`, and stores `keys`
    /// — what adding the keys one by one in arrival order would count.
    pub fn insert_batch(&mut self, keys: &[u64], greater: &mut [u64], equal: &mut [u64]) {
        assert!(greater.len() == keys.len() && equal.len() == keys.len());
        let (us, counts, rank) = distinct(keys);
        // Against the runs: (count below, count equal) per distinct key.
        let (mut lt, mut eq) = (vec![0u64; us.len()], vec![0u64; us.len()]);
        for run in &self.runs {
            run.count_into(&us, &mut lt, &mut eq);
        }
        // Against the batch: a Fenwick tree over ranks 1..=us.len().
        let mut fenwick = vec![0u32; us.len() + 1];
        let prefix = |f: &[u32], mut r: usize| {
            let mut s = 0u64;
            while r > 0 {
                s += u64::from(f[r]);
                r &= r - 1;
            }
            s
        };
        for (j, &r) in rank.iter().enumerate() {
            let r = r as usize;
            let (at_most, below) = (prefix(&fenwick, r + 1), prefix(&fenwick, r));
            greater[j] = (self.len - lt[r] - eq[r]) + (j as u64 - at_most);
            equal[j] = eq[r] + (at_most - below);
            let mut x = r + 1;
            while x < fenwick.len() {
                fenwick[x] += 1;
                x += x & x.wrapping_neg();
            }
        }
        self.push(us, &counts);
    }

    /// Stores `keys` without counting.
    pub fn insert_all(&mut self, keys: &[u64]) {
        let (us, counts, _) = distinct(keys);
        self.push(us, &counts);
    }

    /// Adds the run of ascending distinct `us` with `counts`, then merges
    /// while the run before the last is at most GROWTH times longer.
    fn push(&mut self, us: Vec<u64>, counts: &[u64]) {
        if us.is_empty() {
            return;
        }
        let total: u64 = counts.iter().sum();
        let below = if total == us.len() as u64 {
            None
        } else {
            let mut b = Vec::with_capacity(us.len() + 1);
            let mut s = 0u64;
            for &c in counts {
                b.push(s);
                s += c;
            }
            b.push(s);
            Some(b)
        };
        self.len += total;
        self.runs.push(Run::new(us, below));
        while let [.., a, b] = &self.runs[..] {
            if a.keys.len() > GROWTH * b.keys.len() {
                break;
            }
            let merged = Run::merge(a, b);
            self.runs.pop();
            *self.runs.last_mut().expect("two runs") = merged;
        }
    }

    /// Each distinct key and its count, ascending.
    pub fn for_each(&self, mut f: impl FnMut(u64, u64)) {
        let all = self
            .runs
            .iter()
            .fold(Run::new(Vec::new(), None), |acc, r| Run::merge(&acc, r));
        for (i, &k) in all.keys.iter().enumerate() {
            f(k, all.count(i));
        }
    }

    /// The multiset of strictly increasing `keys` with `counts` (≥ 1,
    /// equal lengths; the caller checks).
    pub fn from_sorted(keys: &[u64], counts: &[u64]) -> Self {
        let mut r = Runs::default();
        r.push(keys.to_vec(), counts);
        r
    }
}

/// The distinct keys of `keys` ascending, their counts, and the rank of
/// each key among them (arrival order).
fn distinct(keys: &[u64]) -> (Vec<u64>, Vec<u64>, Vec<u32>) {
    let mut order: Vec<(u64, u32)> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i as u32))
        .collect();
    order.sort_unstable();
    let (mut us, mut counts) = (Vec::new(), Vec::new());
    let mut rank = vec![0u32; keys.len()];
    for &(k, i) in &order {
        if us.last() != Some(&k) {
            us.push(k);
            counts.push(0);
        }
        *counts.last_mut().expect("pushed") += 1;
        rank[i as usize] = (us.len() - 1) as u32;
    }
    (us, counts, rank)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Batch by batch, the counts of a scan of every earlier key (one
        /// insert per key in arrival order), and the same multiset.
        #[test]
        fn equals_a_scan(
            batches in prop::collection::vec(prop::collection::vec(0u64..60, 0..300), 0..40),
            start in prop::collection::vec(0u64..60, 0..200),
        ) {
            let mut seen = start.clone();
            seen.sort_unstable();
            let mut distinct = seen.clone();
            distinct.dedup();
            let counts: Vec<u64> = distinct
                .iter()
                .map(|d| seen.iter().filter(|&&k| k == *d).count() as u64)
                .collect();
            let mut runs = Runs::from_sorted(&distinct, &counts);
            for batch in &batches {
                let want: Vec<(u64, u64)> = batch
                    .iter()
                    .map(|&k| {
                        let c = (
                            seen.iter().filter(|&&s| s > k).count() as u64,
                            seen.iter().filter(|&&s| s == k).count() as u64,
                        );
                        seen.push(k);
                        c
                    })
                    .collect();
                let (mut g, mut e) = (vec![0; batch.len()], vec![0; batch.len()]);
                runs.insert_batch(batch, &mut g, &mut e);
                let got: Vec<(u64, u64)> = g.into_iter().zip(e).collect();
                prop_assert_eq!(got, want);
                prop_assert_eq!(runs.len(), seen.len() as u64);
            }
            let mut listed = Vec::new();
            runs.for_each(|k, c| listed.extend(std::iter::repeat_n(k, c as usize)));
            seen.sort_unstable();
            prop_assert_eq!(listed, seen);
        }
    }

    /// Large runs (searched through their samples, not walked) against a
    /// scan, with distinct keys and with ties.
    #[test]
    fn large_runs_equal_a_scan() {
        for modulus in [u64::MAX, 5000] {
            let keys: Vec<u64> = (0..60_000u64)
                .map(|j| (j.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 7) % modulus)
                .collect();
            let mut runs = Runs::default();
            runs.insert_all(&keys[..50_000]);
            let mut keys = keys;
            keys[50_010] = 0;
            keys[50_020] = u64::MAX;
            keys[50_030] = u64::MAX;
            keys[50_040] = keys[123];
            let batch = &keys[50_000..50_100];
            let (mut g, mut e) = (vec![0; batch.len()], vec![0; batch.len()]);
            runs.insert_batch(batch, &mut g, &mut e);
            for (j, &k) in batch.iter().enumerate() {
                let seen = &keys[..50_000 + j];
                let want = (
                    seen.iter().filter(|&&s| s > k).count() as u64,
                    seen.iter().filter(|&&s| s == k).count() as u64,
                );
                assert_eq!((g[j], e[j]), want, "key {j}");
            }
        }
    }

    #[test]
    fn gallop_finds_the_first_greater() {
        let xs = [1u64, 3, 3, 5, 8, 13, 21];
        for from in 0..=xs.len() {
            for u in 0..25 {
                let want = from + xs[from..].partition_point(|&x| x <= u);
                assert_eq!(gallop(&xs, from, u), want.max(from));
            }
        }
    }
}
